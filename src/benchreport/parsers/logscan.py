"""Stream a server log of any size into records, at close to grep's speed.

The file is read in blocks. Lines are counted with ``bytes.count``; lines that may be
records are found with ``bytes.find`` on each engine's literal markers, so only those few
lines reach Python's regexes. Memory stays flat: one block at a time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from ..errors import ParseError
from . import sglang_log, vllm_log
from .prefix import Prefix, clean, split_sglang, split_vllm
from .vllm_log import FieldError

BLOCK = 8 << 20
# Kinds whose markers are specific: a line carrying one that yields no record is counted
# as "unrecognised" (a line we should have read and could not).
_MUST_PARSE = {
    "vllm": (b"Avg prompt throughput", b"SpecDecoding metrics", b"Speculative metrics"),
    "sglang": (b"Prefill batch", b"Decode batch"),
}
_ENGINES = {"vllm": (vllm_log, split_vllm), "sglang": (sglang_log, split_sglang)}
_DETECT = {
    "vllm": re.compile(rb"(?:^|\n)(?:\S+Z |\[[\d :-]+\] )?(?:\x1b\[[\d;]*m)?(?:\([\w ]+?(?: rank=\d+)? pid=\d+\)(?:\x1b\[[\d;]*m)? )?"
                       rb"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"),
    "sglang": re.compile(rb"(?:^|\n)(?:\S+Z )?\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:\.\d{3})?(?: [A-Z_]+\d+)*\] "
                         rb"(?:Prefill batch|Decode batch|server_args|Load weight|KV Cache|"
                         rb"The server|max_total|INFO: )"),
}
HTTP_ACCESS = b'HTTP/1.1" '


@dataclass
class Summary:
    """What a scan read: lines, records per kind, lines it could not read, warnings."""

    file: str
    engine: str
    lines: int = 0
    unrecognised: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    max_warnings: int = 50

    def warn(self, line: int, message: str) -> None:
        if len(self.warnings) < self.max_warnings:
            self.warnings.append(f"{self.file}:{line}: {message}")
        elif len(self.warnings) == self.max_warnings:
            self.warnings.append(f"{self.file}: more warnings not shown")

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "engine": self.engine, "lines": self.lines,
                "unrecognised": self.unrecognised, "counts": dict(sorted(self.counts.items())),
                "warnings": list(self.warnings)}


def detect_engine(head: bytes, path: str) -> str:
    """'vllm' or 'sglang' from the first block's line prefixes."""
    if not head.strip():
        raise ParseError("empty file, expected a vLLM or SGLang server log", path=path)
    if b"\x00" in head[:65536]:
        raise ParseError("binary content, expected a vLLM or SGLang server log", path=path)
    hits = {name: len(rx.findall(head[: 4 << 20])) for name, rx in _DETECT.items()}
    best = max(hits, key=hits.get)
    if hits[best] == 0:
        raise ParseError("no vLLM or SGLang log lines found (expected lines such as "
                         "'INFO 11-29 07:14:57 [loggers.py:271] …' or "
                         "'[2026-11-29 07:14:57 TP0] Prefill batch, …')", path=path, line=1)
    return best


class _Clock:
    """Full timestamps from prefixes; vLLM's year-less stamps get ``year``, rolling over
    when the month steps back (a log that crosses New Year)."""

    def __init__(self, year: int | None) -> None:
        self.year = year
        self.last_month = None

    def stamp(self, p: Prefix) -> str | None:
        if p.time is None:
            return None
        if p.mmdd is not None:
            month = int(p.mmdd[:2])
            if p.date:                       # an outer Docker/wrapper date knows the year
                self.year = int(p.date[:4])
            elif self.year is None:
                return None
            elif self.last_month is not None and month < self.last_month and \
                    self.last_month - month > 6:
                self.year += 1
            self.last_month = month
            return f"{self.year:04d}-{p.mmdd}T{p.time}"
        if p.date:
            return f"{p.date}T{p.time}"
        return None


def _candidates(block: bytes, markers: tuple[bytes, ...]) -> list[int]:
    """Start offsets of the lines in ``block`` that hold any marker, sorted."""
    starts = set()
    for marker in markers:
        pos = block.find(marker)
        while pos != -1:
            start = block.rfind(b"\n", 0, pos) + 1
            starts.add(start)
            end = block.find(b"\n", pos)
            pos = block.find(marker, end if end != -1 else len(block))
    return sorted(starts)


def scan(fp: BinaryIO, path: str, engine: str = "auto", year: int | None = None,
         summary: Summary | None = None) -> Iterator[dict[str, Any]]:
    """Yield one dict per record: kind, line, ts, proc/pid or rank, level, parsed fields.

    ``summary`` (filled while iterating) counts lines, records per kind and unread lines.
    Raises ParseError for a file that is not a server log.
    """
    head = fp.read(BLOCK)
    if engine == "auto":
        engine = detect_engine(head, path)
    elif not head.strip():
        raise ParseError("empty file, expected a server log", path=path)
    module, split = _ENGINES[engine]
    markers = module.MARKERS
    must = _MUST_PARSE[engine]
    summary = summary if summary is not None else Summary(file=path, engine=engine)
    summary.engine = engine
    clock = _Clock(year)
    line_base = 1
    carry = b""
    block = head
    while True:
        data = carry + block
        more = bool(block)
        if more:
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                cut = len(data) if len(data) > (64 << 20) else 0   # a huge single line
            data, carry = data[:cut], data[cut:]
        else:
            carry = b""
        if data:
            summary.counts["http_access"] = summary.counts.get("http_access", 0) + \
                data.count(HTTP_ACCESS)
            counted, at = 0, 0
            for start in _candidates(data, markers):
                counted += data.count(b"\n", at, start)
                at = start
                end = data.find(b"\n", start)
                raw = data[start: end if end != -1 else len(data)]
                yield from _records(raw, line_base + counted, engine, split, module, must,
                                    clock, summary)
            newlines = data.count(b"\n")
            summary.lines += newlines + (0 if data.endswith(b"\n") else 1)
            line_base += newlines
        if not more:
            break
        block = fp.read(BLOCK)


def _records(raw: bytes, line: int, engine: str, split, module, must, clock: _Clock,
             summary: Summary) -> Iterator[dict[str, Any]]:
    text = raw.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        summary.warn(line, "bytes that are not UTF-8 were replaced")
    produced = False
    for prefix, message in split(clean(text)):
        try:
            parsed = module.parse_message(message, prefix.level if prefix else None)
        except FieldError as exc:
            summary.unrecognised += 1
            summary.warn(line, f"{exc} (line skipped)")
            produced = True
            continue
        if parsed is None:
            continue
        kind, fields = parsed
        produced = True
        record: dict[str, Any] = {"kind": kind, "line": line}
        if prefix is not None:
            record["ts"] = clock.stamp(prefix)
            if prefix.proc:
                record["proc"], record["pid"] = prefix.proc, prefix.pid
            if prefix.ranks:
                record["rank"] = prefix.ranks
            if prefix.level and kind != "memory_event":
                record["level"] = prefix.level
        else:
            record["ts"] = None
        record.update(fields)
        summary.counts[kind] = summary.counts.get(kind, 0) + 1
        yield record
    if not produced and any(m in raw for m in must):
        summary.unrecognised += 1
        summary.warn(line, "looks like a stats line but could not be read (line skipped)")
