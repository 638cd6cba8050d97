"""Parsers: one per input format. They take open file objects and never open files."""

from .results import SGLANG_CLIENT, VLLM_CLIENT, BenchResult, classify, parse_results

__all__ = ["BenchResult", "SGLANG_CLIENT", "VLLM_CLIENT", "classify", "parse_results"]
