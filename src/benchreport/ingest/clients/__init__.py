"""Benchmark-client result files of every common client, read into one shape (`base.Point`).

`read_points(path, shown)` decodes a file once (JSON, JSON Lines or CSV), asks each client
module in `MODULES` whether it recognises the content (`sniff`), and lets the first that does
`parse` it. The file name is never needed to recognise a format; it only helps messages.

A client module provides::

    def sniff(doc: Doc) -> str | None      # the client name from base.CLIENTS, or None
    def parse(doc: Doc) -> list[Point]     # raise ParseError (path + line) on bad content
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from ...core.errors import ParseError
from ...core.files import looks_binary
from .base import CLIENTS, Doc, Point  # noqa: F401 (re-exported)

# Order matters only where two formats could both match; the more specific goes first.
MODULES = ("offline", "vllm", "sglang", "guidellm", "aiperf", "genai_bench", "llmperf")


def _modules():
    for name in MODULES:
        try:
            yield importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """What is wrong with ``text`` as JSON, saying so plainly when it was cut off."""
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return (f"the JSON stops before the record is complete (after {len(text.rstrip())} "
                "characters; the file looks cut off)")
    return f"not valid JSON at column {exc.colno} ({exc.msg})"


def decode(data: bytes, shown: str) -> Doc:
    """The content of a result file as a `Doc`; a ParseError names what is wrong."""
    name = Path(shown).name
    if not data.strip():
        raise ParseError("empty file, expected a benchmark result (JSON or JSON Lines)",
                         path=shown)
    if looks_binary(data[:65536]):
        raise ParseError("binary content, expected a benchmark result (JSON or JSON Lines)",
                         path=shown)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"byte 0x{data[exc.start]:02x} is not UTF-8 text", path=shown,
                         line=data[: exc.start].count(b"\n") + 1) from None
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            return Doc(shown, name, "json", json.loads(text), text)
        except json.JSONDecodeError as whole:
            rows, bad = [], []
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    rows.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    bad.append((number, _json_problem(exc, line)))
            if not rows or (len(rows) == 1 and bad) or not all(
                    ln.lstrip().startswith("{") for ln in text.splitlines() if ln.strip()):
                # one JSON document over several lines (vLLM writes it indented)
                raise ParseError(f"{_json_problem(whole, text)}; expected a benchmark result",
                                 path=shown, line=whole.lineno) from None
            doc = Doc(shown, name, "jsonl", rows, text)
            doc.bad_lines = bad                                # type: ignore[attr-defined]
            return doc
    if "," in stripped.split("\n", 1)[0]:
        return Doc(shown, name, "csv", text.replace("\r\n", "\n").replace("\r", "\n"), text)
    return Doc(shown, name, "text", text, text)


def sniff(doc: Doc) -> str | None:
    """The client that wrote ``doc``, or None."""
    for module in _modules():
        client = module.sniff(doc)
        if client:
            return client
    return None


def read_points(data: bytes, shown: str) -> list[Point]:
    """Every benchmark point of one result file."""
    doc = decode(data, shown)
    for module in _modules():
        if module.sniff(doc):
            points = module.parse(doc)
            for n, msg in getattr(doc, "bad_lines", []):
                for p in points[:1]:
                    p.warnings.append(f"{shown}:{n}: {msg}; this line is skipped, the file's "
                                      "other records are used")
            return points
    first = doc.value[0][0] if doc.kind == "jsonl" else 1 + (
        text_before(doc.text).count("\n") if doc.kind == "json" else 0)
    raise ParseError(
        f"{'JSON' if doc.kind in ('json', 'jsonl') else 'the content'} is not a benchmark "
        "result (expected the output of vllm bench serve, sglang.bench_serving, GuideLLM, "
        "AIPerf, GenAI-Perf, genai-bench or llmperf, e.g. the keys 'duration', 'completed')",
        path=shown, line=first)


def text_before(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]
