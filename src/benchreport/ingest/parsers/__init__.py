"""Parsers: one per input format. They take open file objects and never open files.
Benchmark clients' result files are read by ``ingest.clients`` into points instead."""
