"""A server log's HTTP access lines and its wrapper's phase markers, in one pass.

logscan reads the engines' own records (stats, batches, settings) and records no access
line: uvicorn's ``INFO:     127.0.0.1:35570 - "POST /v1/chat/completions HTTP/1.1" 200 OK``
carries no time stamp behind vLLM's process prefix, and SGLang's only its own
``[2026-08-02 00:02:18]``. Placing benchmarks by request count needs every such line with
its line number, method, path and status, so this scanner reads them, and the lines like
``START 23:19:49 INT4`` a wrapper script writes where a server run begins (no date: it
comes from the neighbouring time-stamped lines).

The file is read in blocks; one regular expression (C speed, anchored on the quoted
request line or ``START``) finds the candidate lines, lines are counted with
``bytes.count`` between matches. No other line reaches Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BLOCK = 8 << 20
_LINE = re.compile(
    rb'^(?:'
    rb'(?:\S+Z )?(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[^\]\n]*\] )?[^\n"]*?'
    rb'"(?P<method>[A-Z]+) (?P<path>/[^ "\n?]*)[^ "\n]* HTTP/[\d.]+" (?P<status>\d{3})[^\n]*'
    rb'|START (?P<clock>\d\d:\d\d:\d\d)\b(?P<label>[^\n]*)'
    rb')$', re.MULTILINE)
# a line's own time stamp, as vLLM (``INFO 08-01 23:30:50``, no year) or SGLang
# (``[2026-08-02 00:02:18]``) print it; looked for only around a time-less access line
_STAMP = re.compile(rb'^[^\n]{0,80}?(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) '
                    rb'(\d\d-\d\d \d\d:\d\d:\d\d)|\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d))',
                    re.MULTILINE)
NEAR = 64 << 10          # how far around a time-less access line its neighbours are looked for


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
    # bytes and the same read block
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


def _neighbours(block: bytes, m: re.Match, number: int
                ) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
    """The time-stamped lines nearest before and after the access line ``m``."""
    lo = max(0, m.start() - NEAR)
    lo = block.find(b"\n", lo) + 1 if lo else 0
    before = after = None
    for s in _STAMP.finditer(block, lo, m.start()):
        before = s
    if before is not None:
        before = (number - block.count(b"\n", before.start(), m.start()), _stamp(before))
    s = _STAMP.search(block, m.end() + 1, m.end() + NEAR)
    if s is not None:
        after = (number + block.count(b"\n", m.end(), s.start()), _stamp(s))
    return before, after


def _found(block: bytes, m: re.Match, number: int) -> Access | Marker:
    if m["clock"]:
        return Marker(number, m["clock"].decode(), m["label"].decode().strip())
    status = int(m["status"])
    if m["ts"]:
        return Access(number, m["ts"].decode().replace(" ", "T"), m["method"].decode(),
                      m["path"].decode(), status)
    return Access(number, None, m["method"].decode(), m["path"].decode(), status,
                  *_neighbours(block, m, number))


def _scan(block: bytes, number: int, out: list) -> int:
    """The access lines and markers of ``block`` (whole lines), the first numbered
    ``number``; returns the number of the line after the block."""
    at = 0
    for m in _LINE.finditer(block):
        number += block.count(b"\n", at, m.start())
        at = m.start()
        out.append(_found(block, m, number))
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
