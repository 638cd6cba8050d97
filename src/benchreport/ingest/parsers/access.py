"""A server log's HTTP access lines and its wrapper's phase markers, in one pass.

logscan reads the engines' own records (stats, batches, settings) and records no access
line: uvicorn's ``INFO:     127.0.0.1:35570 - "POST /v1/chat/completions HTTP/1.1" 200 OK``
carries no time stamp behind vLLM's process prefix, and SGLang's only its own
``[2026-08-02 00:02:18]``. Placing benchmarks by request count needs every such line with
its line number, method, path and status, so this scanner reads them, and the lines like
``START 23:19:49 INT4`` a wrapper script writes where a server run begins (no date: it
comes from the neighbouring time-stamped lines).

The file is read in blocks; C-speed searches for the literal ``HTTP/1.x" NNN`` and
``START `` find the candidate lines, lines are counted with ``bytes.count`` between them,
and only those lines (and, for a time-less access line, the few lines around it up to
the nearest time stamp) reach the regular expressions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BLOCK = 8 << 20
# the literals every candidate line holds: found with C-speed searches, so only those
# lines reach the regular expressions below
_HIT = re.compile(rb'HTTP/[\d.]+" \d{3}')
_MARK = b"START "
_ACCESS = re.compile(
    rb'(?:\S+Z )?(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[^\]\n]*\] )?[^\n"]*'
    rb'"(?P<method>[A-Z]+) (?P<path>/[^ "\n?]*)[^ "\n]* HTTP/[\d.]+" (?P<status>\d{3})')
_MARKER = re.compile(rb'START (?P<clock>\d\d:\d\d:\d\d)\b(?P<label>[^\n]*)')
# a line's own time stamp, as vLLM (``INFO 08-01 23:30:50``, no year) or SGLang
# (``[2026-08-02 00:02:18]``) print it; looked for only around a time-less access line
_STAMP = re.compile(rb'[^\n]{0,80}?(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) '
                    rb'(\d\d-\d\d \d\d:\d\d:\d\d)|\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d))')
NEAR = 200               # how many lines around a time-less access line are looked at


@dataclass(frozen=True)
class Access:
    """One access line: 1-based line, its own time stamp (ISO) or None, method, path
    (no query string), HTTP status."""

    line: int
    ts: str | None
    method: str
    path: str
    status: int
    # a time-less line's nearest time-stamped lines before and after it, as (line, stamp as
    # printed: "08-01 23:30:43" without a year, or "2026-08-02 00:02:18"); within NEAR
    # lines and the same read block
    before: tuple[int, str] | None = None
    after: tuple[int, str] | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True)
class Marker:
    """A wrapper's phase marker: ``START 23:19:49 INT4`` at ``line`` (time of day only)."""

    line: int
    clock: str
    label: str


@dataclass(frozen=True)
class AccessLog:
    accesses: tuple[Access, ...]
    markers: tuple[Marker, ...]
    lines: int


def _stamp(m: re.Match) -> str:
    return (m[1] or m[2]).decode()


def _before(block: bytes, start: int, number: int) -> tuple[int, str] | None:
    """The nearest time-stamped line before the line at ``start`` (numbered ``number``)."""
    end = start - 1                      # the newline that ends the line before
    for k in range(1, NEAR + 1):
        if end < 0:
            return None
        begin = block.rfind(b"\n", 0, end) + 1
        m = _STAMP.match(block, begin, end)
        if m:
            return number - k, _stamp(m)
        end = begin - 1
    return None


def _after(block: bytes, end: int, number: int) -> tuple[int, str] | None:
    """The nearest time-stamped line after the line ending at ``end``."""
    begin = end + 1
    for k in range(1, NEAR + 1):
        if begin >= len(block):
            return None
        stop = block.find(b"\n", begin)
        stop = len(block) if stop < 0 else stop
        m = _STAMP.match(block, begin, stop)
        if m:
            return number + k, _stamp(m)
        begin = stop + 1
    return None


def _line_at(block: bytes, pos: int) -> tuple[int, int]:
    start = block.rfind(b"\n", 0, pos) + 1
    end = block.find(b"\n", pos)
    return start, len(block) if end < 0 else end


def _found(block: bytes, start: int, end: int, number: int) -> Access | Marker | None:
    m = _MARKER.fullmatch(block, start, end)
    if m:
        return Marker(number, m["clock"].decode(), m["label"].decode().strip())
    m = _ACCESS.match(block, start, end)
    if m is None:
        return None
    method, path, status = m["method"].decode(), m["path"].decode(), int(m["status"])
    if m["ts"]:
        return Access(number, m["ts"].decode().replace(" ", "T"), method, path, status)
    return Access(number, None, method, path, status, _before(block, start, number),
                  _after(block, end, number))


def _starts(block: bytes) -> list[int]:
    """The start of every candidate line: an access line's, a marker's, in order."""
    out = {_line_at(block, m.start())[0] for m in _HIT.finditer(block)}
    at = block.find(_MARK)
    while at >= 0:
        if at == 0 or block[at - 1] == 10:          # at a line's start
            out.add(at)
        at = block.find(_MARK, at + 1)
    return sorted(out)


def _scan(block: bytes, number: int, out: list) -> int:
    """The access lines and markers of ``block`` (whole lines), the first numbered
    ``number``; returns the number of the line after the block."""
    at = 0
    for start in _starts(block):
        number += block.count(b"\n", at, start)
        at = start
        found = _found(block, start, _line_at(block, start)[1], number)
        if found is not None:
            out.append(found)
    return number + block.count(b"\n", at)


def scan_access(path: str | Path) -> AccessLog:
    """Every access line and phase marker of the log at ``path``, in file order."""
    found: list[Access | Marker] = []
    number, carry = 1, b""
    with open(path, "rb") as fh:
        while data := fh.read(BLOCK):
            data = carry + data
            cut = data.rfind(b"\n") + 1
            number = _scan(data[:cut], number, found)
            carry = data[cut:]
    end = _scan(carry, number, found)
    lines = end - 1 + (1 if carry else 0)
    return AccessLog(tuple(x for x in found if isinstance(x, Access)),
                     tuple(x for x in found if isinstance(x, Marker)), lines)
