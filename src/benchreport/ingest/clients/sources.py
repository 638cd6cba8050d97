"""Check that every key a Point's ``sources`` cites is in the file it came from.

A source is what the audit trail prints beside a figure. The client modules write it as:

- a key path from the top of the document, or from the point's own record (a vLLM/SGLang
  result object, a nightly row): ``duration``, ``records.ttft.p99``,
  ``benchmarks[0].metrics.request_totals.successful``; ``[]`` stands for "an element of the
  list" (``error_summary[].count``; ``lines[]`` are the lines of a JSON Lines file), and an
  empty list is cited whole;
- a CSV cell: ``line 10: Time to First Token (ms) [p50]``;
- an arithmetic of those and numbers, terms joined by `` + ``, `` - ``, `` − ``, `` × ``,
  `` ÷ `` (``num_prompts - completed``, ``results_num_completed_requests_per_min ÷ 60``);
- any of these followed by notes in parentheses, which name no key
  (``lines[].error (the records where it is empty)``).

`missing(doc, point)` lists the cited keys that the decoded file does not hold.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from .base import Doc, Point

_TERMS = re.compile(r"\s+[-−+×÷]\s+")
_NOTE = re.compile(r"\s+\([^()]*\)$")
_CSV_CELL = re.compile(r"^line (\d+): (.+) \[([^\]]+)\]$")
_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d*)\]")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def missing(doc: Doc, p: Point) -> list[str]:
    """``"field: key"`` for every key cited in ``p.sources`` that ``doc`` does not hold."""
    roots = _roots(doc, p)
    out = []
    for name, source in sorted(p.sources.items()):
        if any(_has(root, [source]) for root in roots):
            continue                             # a key with spaces: "TTFT (ms)"
        for term in terms(source):
            if not _resolves(doc, roots, term):
                out.append(f"{name}: {term}")
    return out


def terms(source: str) -> list[str]:
    """The key paths, CSV cells and numbers a source is made of, notes removed.

    >>> terms("num_prompts - completed"), terms("lines[].error (where it is empty)")
    (['num_prompts', 'completed'], ['lines[].error'])
    >>> terms("line 10: Time to First Token (ms) [p50]")
    ['line 10: Time to First Token (ms) [p50]']
    """
    out = []
    for term in _TERMS.split(source.strip()):
        term = term.strip()
        while _NOTE.search(term) and not _CSV_CELL.match(term):
            term = _NOTE.sub("", term).strip()
        if term:
            out.append(term)
    return out


def _roots(doc: Doc, p: Point) -> list[Any]:
    """Where key paths may start: the document (JSON Lines as ``{"lines": [...]}``) and the
    point's own record."""
    from .vllm import nightly_rows, records

    if doc.kind == "jsonl":
        objs = [obj for _, obj in doc.value]
        roots: list[Any] = [{"lines": objs}, objs]
    elif doc.kind == "json":
        roots = [doc.value]
    else:
        return []
    roots += [rec for where, _, rec in records(doc) if where == p.where]
    if doc.kind == "json":
        roots += [row for where, _, row in nightly_rows(doc.value) if where == p.where]
    return roots


def _resolves(doc: Doc, roots: list[Any], term: str) -> bool:
    if _NUMBER.match(term):
        return True
    cell = _CSV_CELL.match(term)
    if cell:
        return doc.kind == "csv" and _csv_has(doc.value, int(cell.group(1)), cell.group(2),
                                              cell.group(3))
    tokens = [m.group(1) if m.group(1) is not None else f"[{m.group(2)}]"
              for m in _TOKEN.finditer(term)]
    return any(_has(root, tokens) for root in roots)


def _has(node: Any, tokens: list[str]) -> bool:
    if not tokens:
        return True
    head, rest = tokens[0], tokens[1:]
    if head == "[]":                  # an empty list is cited whole (a sum over nothing)
        return isinstance(node, list) and (not node or any(_has(x, rest) for x in node))
    if head.startswith("[") and head[1:-1].isdigit():
        i = int(head[1:-1])
        return isinstance(node, list) and i < len(node) and _has(node[i], rest)
    return isinstance(node, dict) and head in node and _has(node[head], rest)


def _csv_has(text: str, line: int, label: str, column: str) -> bool:
    """Whether CSV line ``line`` is the row ``label`` of a block that has ``column``."""
    rows = list(csv.reader(io.StringIO(text)))
    if not 0 < line <= len(rows) or not rows[line - 1] \
            or rows[line - 1][0].strip() != label:
        return False
    for row in reversed(rows[: line - 1]):
        if row and row[0].strip().lower() == "metric":
            return column.lower() in (c.strip().lower() for c in row[1:])
    return False
