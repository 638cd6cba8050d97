"""Offline benchmark outputs, recognised so that they are refused with a message naming the tool.

benchreport compares serving runs: a client sending requests to a running server. The
engines also ship offline benchmarks that drive the model in-process and report a latency
or a throughput of their own kind; their files sit in the same folders and are easy to mix
up with serving results, so this module recognises them and says what they are instead of
"not a benchmark result".

Recognised (from the content only):

* vLLM ``benchmark_latency.py`` / ``vllm bench latency --output-json``: ``avg_latency`` with
  ``latencies`` and/or ``percentiles``.
* vLLM ``benchmark_throughput.py`` / ``vllm bench throughput --output-json``: ``elapsed_time``
  and ``requests_per_second`` with ``tokens_per_second`` / ``total_num_tokens`` /
  ``num_requests``.
* SGLang ``bench_one_batch`` (``--result-filename``, JSON Lines): ``prefill_latency`` with
  ``batch_size`` or ``median_decode_latency``.
* SGLang ``bench_offline_throughput`` (``--result-filename``, JSON Lines): ``total_latency``
  with ``last_gen_throughput`` (or ``successful_requests``) and none of a serving result's
  ``duration`` / ``completed``.
* vLLM's PyTorch-benchmark-format copy (``*.pytorch.json``, written beside a result when
  ``SAVE_TO_PYTORCH_BENCHMARK_FORMAT`` is set): a list of ``{benchmark, model, metric}``.
  It is not offline, but it is not the result either; the message points to the result.

>>> tool({"avg_latency": 1.5, "latencies": [1.4, 1.6], "percentiles": {"50": 1.5}})
'vLLM `benchmark_latency`'
>>> tool({"duration": 3.0, "completed": 8}) is None
True
"""

from __future__ import annotations

from typing import Any

from ...core.errors import ParseError
from .base import Doc

SERVING = ("benchreport compares serving runs (vllm bench serve, sglang.bench_serving, "
           "GuideLLM, AIPerf, genai-bench, llmperf …)")
_PYTORCH = "vLLM's PyTorch-benchmark-format copy (`*.pytorch.json`)"


def tool(obj: Any) -> str | None:
    """The offline tool that wrote ``obj`` (one JSON object), or None."""
    if not isinstance(obj, dict):
        return None
    keys = set(obj)
    if "avg_latency" in keys and keys & {"latencies", "percentiles"}:
        return "vLLM `benchmark_latency`"
    if {"elapsed_time", "requests_per_second"} <= keys and keys & {
            "tokens_per_second", "total_num_tokens", "num_requests"}:
        return "vLLM `benchmark_throughput`"
    if "prefill_latency" in keys and keys & {"batch_size", "median_decode_latency"}:
        return "SGLang `bench_one_batch`"
    if "total_latency" in keys and keys & {"last_gen_throughput", "successful_requests"} \
            and not keys & {"duration", "completed", "benchmark_duration_s"}:
        return "SGLang `bench_offline_throughput`"
    return None


def _pytorch_format(value: Any) -> bool:
    return (isinstance(value, list) and bool(value) and all(
        isinstance(x, dict) and isinstance(x.get("benchmark"), dict)
        and isinstance(x.get("metric"), dict) and "benchmark_values" in x["metric"]
        for x in value))


def _found(doc: Doc) -> tuple[str, int | None] | None:
    """(the tool, the line of its first record) when ``doc`` is an offline output."""
    if doc.kind == "json":
        if _pytorch_format(doc.value):
            return _PYTORCH, None
        name = tool(doc.value)
        if name is None and isinstance(doc.value, list) and doc.value:
            names = {tool(x) for x in doc.value}
            name = names.pop() if len(names) == 1 else None
        return (name, 1 + doc.text[: len(doc.text) - len(doc.text.lstrip())].count("\n")) \
            if name else None
    if doc.kind == "jsonl":
        named = [(tool(obj), line) for line, obj in doc.value]
        # every record, or at least most of them (a stray serving record does not rescue it)
        hits = [(n, ln) for n, ln in named if n]
        if hits and len(hits) * 2 > len(named):
            return hits[0]
    return None


def sniff(doc: Doc) -> str | None:
    """"offline" for an offline benchmark's output (refused by `parse`), else None."""
    return "offline" if _found(doc) else None


def parse(doc: Doc) -> list:
    """Always raises: the one-line message names the tool that wrote the file."""
    found = _found(doc)
    if found is None:
        raise ParseError("expected the output of an offline benchmark (vLLM benchmark_latency "
                         "or benchmark_throughput, SGLang bench_one_batch or "
                         "bench_offline_throughput)", path=doc.path)
    name, line = found
    if name == _PYTORCH:
        raise ParseError(f"this is {name}, not the benchmark result itself; use the "
                         "`--save-result` JSON written beside it", path=doc.path, line=line)
    raise ParseError(f"this is a {name} (offline) result, not a serving benchmark; {SERVING}",
                     path=doc.path, line=line)
