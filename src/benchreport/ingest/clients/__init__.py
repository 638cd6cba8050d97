"""Benchmark-client result files of every common client, read into one shape (`base.Point`).

`read_points(data, shown)` takes a file's bytes and the path to name in messages, decodes
them once (`decode`: a `Doc` of kind json, jsonl, csv or text), asks each client module in
`MODULES` whether it recognises the content (`sniff`), and lets the first that does `parse`
it; what no client measured is then blanked in every point (`honest`). The file name is
never needed to recognise a format; it only helps messages. `read_declared(data, shown,
entry)` reads a file that an entry of run.yaml's ``client:`` maps (`declared.parse`), with
no sniffing.

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
from ...core.jsontext import deepest, loads, too_deep
from . import plausible
from .base import CLIENTS, UNSTATED, Doc, Point  # noqa: F401 (re-exported)

__all__ = ["CLIENTS", "Doc", "MODULES", "Point", "UNSTATED", "decode", "honest", "read_declared",
           "read_points", "sniff", "text_before"]

# Order matters only where two formats could both match; the more specific goes first.
MODULES = ("offline", "vllm", "sglang", "guidellm", "aiperf", "genai_bench", "llmperf")


def _modules():
    for name in MODULES:
        try:
            yield importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise


def _json_problem(exc: json.JSONDecodeError | RecursionError, text: str) -> str:
    """What is wrong with ``text`` as JSON, saying so plainly when it was cut off."""
    if isinstance(exc, RecursionError):
        return too_deep(text)
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
        return _json_doc(text, shown, name)
    if "," in stripped.split("\n", 1)[0]:
        return Doc(shown, name, "csv", text.replace("\r\n", "\n").replace("\r", "\n"), text)
    return Doc(shown, name, "text", text, text)


def _json_doc(text: str, shown: str, name: str) -> Doc:
    """One JSON document, or JSON Lines (one object a line, unreadable lines noted)."""
    try:
        twice: list[str] = []
        doc = Doc(shown, name, "json", loads(text, object_pairs_hook=_pairs(twice)), text)
        doc.notes = [f"{shown}: key {key!r} appears twice in one object; the last "  # type: ignore[attr-defined]
                     "value is the one read, as JSON readers do" for key in twice[:3]]
        return doc
    except (json.JSONDecodeError, RecursionError) as whole:
        rows, bad = [], []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, loads(line)))
            except (json.JSONDecodeError, RecursionError) as exc:
                bad.append((number, _json_problem(exc, line)))
        if not rows or (len(rows) == 1 and bad) or not all(
                ln.lstrip().startswith("{") for ln in text.splitlines() if ln.strip()):
            # one JSON document over several lines (vLLM writes it indented)
            raise ParseError(f"{_json_problem(whole, text)}; expected a benchmark result",
                             path=shown, line=_json_line(whole, text)) from None
        doc = Doc(shown, name, "jsonl", rows, text)
        doc.bad_lines = bad                                # type: ignore[attr-defined]
        return doc


def _json_line(exc: json.JSONDecodeError | RecursionError, text: str) -> int:
    return deepest(text)[1] if isinstance(exc, RecursionError) else exc.lineno


def _pairs(twice: list[str]):
    """A JSON object hook that keeps the last value of a repeated key, as ``json`` does,
    and notes the key in ``twice``."""
    def hook(pairs: list[tuple[str, object]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out and key not in twice:
                twice.append(key)
            out[key] = value
        return out
    return hook


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
            for p in points:
                honest(p)
            for n, msg in getattr(doc, "bad_lines", []):
                for p in points[:1]:
                    p.warnings.append(f"{shown}:{n}: {msg}; this line is skipped, the file's "
                                      "other records are used")
            for p in points[:1]:
                p.warnings.extend(getattr(doc, "notes", []))
            return points
    first = doc.value[0][0] if doc.kind == "jsonl" else 1 + (
        text_before(doc.text).count("\n") if doc.kind == "json" else 0)
    raise ParseError(
        f"{'JSON' if doc.kind in ('json', 'jsonl') else 'the content'} is not a benchmark "
        "result (expected the output of vllm bench serve, sglang.bench_serving, GuideLLM, "
        "AIPerf, GenAI-Perf, genai-bench or llmperf, e.g. the keys 'duration', 'completed')",
        path=shown, line=first)


def read_declared(data: bytes, shown: str, entry) -> list[Point]:
    """Every point of a file that an entry of run.yaml's ``client:`` matches: read by that
    mapping (`declared.parse`), never sniffed."""
    from . import declared

    points = declared.parse(decode(data, shown), entry)
    for p in points:
        honest(p)
    return points


def honest(p: Point) -> None:
    """What no client measured is left blank, whatever the file wrote in its place: token
    counts of 0 (unknown, never "0 tokens") and a load the file does not state."""
    here = f"{p.file}:{p.line}" if p.line else f"{p.file} {p.where}"
    done = p.fields.get("completed")
    for key in ("total_input_tokens", "total_output_tokens"):
        if p.fields.get(key) == 0 and done != 0:
            del p.fields[key]
            src = p.sources.pop(key, key)
            p.warnings.append(f"{here}: {src} is 0 although "
                              + (f"{done} requests completed" if done else
                                 "the file does not say that no request completed")
                              + ": the token count is not known; left out")
    for which in ("input", "output"):
        if p.scenario.get(f"{which}_tokens") in (0, 0.0):
            p.scenario.pop(f"{which}_tokens")
            p.scenario.pop(f"{which}_tokens_from", None)
    _unknown_request_tokens(p, here)
    plausible.check(p, here)
    if p.role != "requests" and _no_load(p):
        p.load = dict(UNSTATED)
        for key in ("max_concurrency", "request_rate"):
            if p.fields.get(key) is None:
                p.fields.pop(key, None)
                p.sources.pop(key, None)
        p.warnings.append(f"{here}: the file records neither a concurrency nor a request "
                          "rate, so its load is not stated (not read as unbounded)")


def _no_load(p: Point) -> bool:
    load = p.load or {}
    if load.get("kind") in ("synchronous", "rate", "unstated"):
        return False
    return (load.get("max_concurrency") is None and load.get("request_rate") is None
            and p.fields.get("max_concurrency") is None
            and p.fields.get("request_rate") is None)


def _unknown_request_tokens(p: Point, here: str) -> None:
    """Per-request token counts of 0 are unknown (None): no prompt has 0 tokens, and a
    request that succeeded brought some. A failed request's 0 output tokens is what it
    delivered, and stays."""
    zero = {"input_tokens": 0, "output_tokens": 0}
    for row in p.requests:
        for key in zero:
            if row.get(key) == 0 and not (key == "output_tokens" and row.get("error")):
                row[key] = None
                zero[key] += 1
    for key, n in zero.items():
        if n:
            p.warnings.append(f"{here}: {n} request(s) record 0 "
                              f"{key.replace('_', ' ')}; read as not known")


def text_before(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]
