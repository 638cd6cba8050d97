"""Python tracebacks inside a server log: one record per traceback, read from its lines.

A traceback is many physical lines; the one that matters is the exception line at its end
(``torch.OutOfMemoryError: CUDA out of memory. …``). Shapes met in logs:

* vLLM ``logger.exception``: every line carries the record's full prefix again
  (``(EngineCore pid=1) ERROR 11-20 10:12:05 [core.py:700] Traceback …``, then
  ``… [core.py:700]   File …``), in every era.
* vLLM 0.10-0.30 uncaught exceptions: the stdout/stderr wrapper glues only the process
  prefix onto each line (``(EngineCore_DP0 pid=2429) Traceback …``); 0.31+ and other
  programs print them bare.
* SGLang ``Scheduler hit an exception: Traceback …``: the header ends a prefixed message and
  the rest follows unprefixed.

So the lines that continue a traceback are those with the same prefix shape as its header
(time stamps may differ); lines of other processes in between are skipped. The header is
found by the scanner (see logscan); a ``Walk`` then reads the lines after it.
"""

from __future__ import annotations

import re
from typing import Any

from .prefix import Prefix

MARKER = b"Traceback (most recent call last)"
TEXT_MARKER = MARKER.decode()
MAX_LINES = 2000          # lines looked at after a header before giving up

# Any log prefix a traceback line can carry, in parts: an outer Docker stamp (dropped), a
# bracketed stamp (SGLang, or a wrapper's), a process prefix, a vLLM level/time/file part.
_LINE = re.compile(
    r"(?:\d{4}-\d\d-\d\dT[\d:.]+Z )?"
    r"(?P<bracket>\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:\.\d+)?(?: [A-Z_]+\d+)*\] )?"
    r"(?P<proc>\([A-Za-z_][\w ]*?(?: rank=\d+)? pid=\d+\) )?"
    r"(?P<level>(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"\[?[\w./-]+:\d+\] ?)?")
_OUTER = re.compile(r"(?:\d{4}-\d\d-\d\dT[\d:.]+Z )?(?:\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d"
                    r"(?:\.\d+)?\] )?")
_PROC = re.compile(r"\((?P<name>[A-Za-z_][\w ]*?(?: rank=\d+)?) pid=(?P<pid>\d+)\) ")
_STAMP = re.compile(r"\d{4}-\d\d-\d\d|\d\d-\d\d(?= \d\d:)|\d\d:\d\d:\d\d(?:\.\d+)?")
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
_EXC_TYPE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::(?:\s|$)|$)")
_PACKAGES = re.compile(r"^.*/(?:site|dist)-packages/")


def split_line(text: str) -> tuple[str, str, str, str]:
    """(shape key of the line's prefix, of its process part alone, of its bracketed stamp
    alone, the message); the key keeps names, pids and file:line, not time stamps."""
    m = _LINE.match(text)
    bracket, proc, level = m["bracket"] or "", m["proc"] or "", m["level"] or ""
    key = _STAMP.sub("#", bracket + proc + level)
    return key, proc, bracket and _STAMP.sub("#", bracket), text[m.end():]


def process_of(text: str) -> Prefix | None:
    """The process named by a line's ``(name pid=N)`` prefix (0.10-0.30 output wrapper)."""
    m = _PROC.match(text, _OUTER.match(text).end())
    return Prefix(proc=m["name"], pid=int(m["pid"])) if m else None


def header(text: str) -> tuple[tuple[str, ...], str] | None:
    """For a traceback's first line: (the prefix keys its continuation lines may carry, the
    message before the traceback or ""). None for a line that only mentions the words, and
    for a nested (indented) header, as in the ``  | Traceback …`` parts of an exception
    group."""
    key, proc, bracket, body = split_line(text)
    body = body.rstrip()
    if not body.endswith(TEXT_MARKER + ":") or body[:1] in (" ", "\t"):
        return None
    if body == TEXT_MARKER + ":":
        # vLLM repeats a record's whole prefix on each line; a bracketed stamp alone may be
        # a wrapper's (repeated on each line) or SGLang's (the rest follows unprefixed)
        return ((key, "") if key and key == bracket else (key,)), ""
    # "Scheduler hit an exception: Traceback …": the rest of the message follows unprefixed
    # (but a process wrapper still prefixes every line it passes on).
    return (proc,), body[: -len(TEXT_MARKER) - 1].rstrip().rstrip(":")


class Walk:
    """Reads the lines after a header until its exception line."""

    def __init__(self, line: int, keys: tuple[str, ...], record: dict[str, Any]) -> None:
        self.start, self.keys, self.record = line, keys, record
        self.frames = 0
        self.where: str | None = None
        self.seen = 0

    def feed(self, text: str, line: int) -> dict[str, Any] | None:
        """Look at one later line; the finished record once the exception line is read,
        or a record with ``exception`` None when another header or the limit comes first."""
        self.seen += 1
        key, _, _, body = split_line(text)
        if key not in self.keys:
            return self.finish(None, line) if self.seen >= MAX_LINES else None
        if body.startswith(TEXT_MARKER) or (self.seen >= MAX_LINES):
            return self.finish(None, line)           # a new traceback: this one was cut
        if not body.strip():
            return None
        if body[:1] in (" ", "\t"):
            frame = _FRAME.match(body)
            if frame:
                self.frames += 1
                path = _PACKAGES.sub("", frame["path"])
                func = f" in {frame['func'].strip()}" if frame["func"] else ""
                self.where = f"{path}:{frame['line']}{func}"
            return None
        return self.finish(body.strip(), line)

    def finish(self, exception: str | None, line: int) -> dict[str, Any]:
        """The record: ``line`` is the exception line (the header's when there is none) and
        the traceback holds lines ``line - span_lines + 1`` to ``line`` (relative, so a file
        read in parts needs only ``line`` moved)."""
        rec = self.record
        rec["line"] = line if exception is not None else self.start
        rec["span_lines"] = rec["line"] - self.start + 1
        typed = _EXC_TYPE.match(exception) if exception else None
        rec["exception_type"] = typed["type"] if typed else None
        rec["exception"] = exception[:300] if exception else None
        rec["frames"] = self.frames
        rec["where"] = self.where
        return rec
