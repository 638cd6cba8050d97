"""Stream a server log of any size into records, at close to grep's speed.

The file is read in blocks. Lines are counted with ``bytes.count``; lines that may be
records are found with ``bytes.find`` on each engine's literal markers, so only those few
lines reach Python's regexes. Memory stays flat: one block at a time.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from ...core.errors import ParseError
from . import sglang_log, tracebacks, vllm_log
from .prefix import Prefix, clean, split_sglang, split_vllm
from .vllm_log import FieldError

BLOCK = 8 << 20
HUGE_LINE = 64 << 20
LONG_LINE = 1 << 20      # a line this long that crosses a read block is worth a warning
CLOCK_SLACK_S = 60       # processes print a little out of order; more than this is news
TB_WINDOW = 1 << 20      # how far after an error record a large log is searched for tracebacks
# Kinds whose markers are specific: a line carrying one that yields no record is counted
# as "unrecognised" (a line we should have read and could not).
_MUST_PARSE = {
    "vllm": (b"Avg prompt throughput", b"SpecDecoding metrics", b"Speculative metrics"),
    "sglang": (b"Prefill batch", b"Decode batch"),
}
_ENGINES = {"vllm": (vllm_log, split_vllm), "sglang": (sglang_log, split_sglang)}
# Each begins with a line end, and is searched for in the text after one: a pattern that
# begins with one byte is found by a quick search for that byte, where "(?:^|\n)" was tried
# at every byte (a tenth as fast: 30 ms over a MiB, before any helper process could start).
_DETECT = {
    "vllm": re.compile(rb"\n(?:\S+Z |\[[\d :-]+\] )?(?:\x1b\[[\d;]*m)?(?:\([\w ]+?(?: rank=\d+)? pid=\d+\)(?:\x1b\[[\d;]*m)? )?"
                       rb"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"),
    "sglang": re.compile(rb"\n(?:\S+Z )?\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:\.\d{3})?(?: [A-Z_]+\d+)*\] "
                         rb"(?:Prefill batch|Decode batch|server_args|Load weight|KV Cache|"
                         rb"The server|max_total|INFO: )"),
}
# Weaker evidence, looked at only when no line above is found: a log excerpt holding one
# kind of event, or lines of an older era. Line shapes first; then, for a bare pasted
# traceback, the package its frames run in.
_VLLM_PROCS = (rb"(?:APIServer|ApiServer_\d+|EngineCore(?:_DP\d+|_\d+)?|Worker(?:_[A-Z]+\d+)*|"
               rb"VllmWorker(?: TP\d+| PP\d+_TP\d+| rank=\d+)?|VllmWorkerProcess|DPSupervisor)")
_DETECT_WEAK = {
    # vLLM's process prefix (engine-formats.md 1.1), also on the lines of a traceback
    "vllm": re.compile(rb"(?:^|\n)(?:\S+Z )?(?:\x1b\[[\d;]*m)?\(" + _VLLM_PROCS + rb" pid=\d+\)"),
    # SGLang <= 0.1.x lines without a prefix (3.2, 3.3); any SGLang record after its prefix
    # (retractions, out-of-memory, startup: the scanner's own message starts, except a bare
    # traceback header, which any program behind a time-stamping wrapper prints alike)
    "sglang": re.compile(rb"(?:^|\n)(?:new fill batch\. #seq: \d|#running-req: \d+, #token: \d+, "
                         rb"token usage: )|(?:^|\n)(?:\S+Z )?\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d"
                         rb"(?:\.\d{3})?(?: [A-Z_]+\d+)*\] (?:"
                         + b"|".join(re.escape(w) for w in sglang_log.RARE if w != b"Traceback")
                         + rb")"),
}
_DETECT_FRAMES = {name: re.compile(rb'File "[^"\n]*/' + name.encode() + rb'/')
                  for name in ("vllm", "sglang")}


@dataclass
class Summary:
    """What a scan read: lines, records per kind, lines it could not read, warnings."""

    file: str
    engine: str
    lines: int = 0
    unrecognised: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[tuple[int, str]] = field(default_factory=list)   # (line, message)
    # warnings a client parser wrote whole, naming the file and line itself
    told: list[str] = field(default_factory=list)
    max_warnings: int = 50

    def warn(self, line: int, message: str) -> None:
        if len(self.notes) <= self.max_warnings:
            self.notes.append((line, message))

    @property
    def warnings(self) -> list[str]:
        out = [f"{self.file}:{line}: {msg}" for line, msg in self.notes[: self.max_warnings]]
        if len(self.notes) > self.max_warnings:
            out.append(f"{self.file}: more warnings not shown")
        return out + self.told

    def merge(self, part: Summary, line_offset: int) -> None:
        """Add a later part of the same file (its lines start after ``line_offset``)."""
        self.lines += part.lines
        self.unrecognised += part.unrecognised
        for kind, n in part.counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n
        self.notes += [(line + line_offset, msg) for line, msg in part.notes]

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "engine": self.engine, "lines": self.lines,
                "unrecognised": self.unrecognised, "counts": dict(sorted(self.counts.items())),
                "warnings": self.warnings}


def detect_engine(head: bytes, path: str) -> str:
    """'vllm' or 'sglang' from the first block's line prefixes; failing those, from weaker
    evidence (older eras, one kind of event, a pasted traceback)."""
    if not head.strip():
        raise ParseError("empty file, expected a vLLM or SGLang server log", path=path)
    if b"\x00" in head[:65536]:
        raise ParseError("binary content, expected a vLLM or SGLang server log", path=path)
    for window in (1 << 20, 4 << 20):       # most logs tell within their first MiB
        text = b"\n" + head[:window]
        hits = {name: len(rx.findall(text)) for name, rx in _DETECT.items()}
        best = max(hits, key=hits.get)
        if hits[best] or len(head) <= window:
            break
    if hits[best]:
        return best
    part = head[: 4 << 20]
    for detectors in (_DETECT_WEAK, _DETECT_FRAMES):
        hits = {name: len(rx.findall(part)) for name, rx in detectors.items()}
        best = max(hits, key=hits.get)
        if hits[best] and list(hits.values()).count(hits[best]) == 1:
            return best
    tb = part.find(tracebacks.MARKER)
    if tb != -1:
        raise ParseError("a Python traceback, but no line in it shows whether vLLM or SGLang "
                         "wrote it (no process prefix, no frame in a vllm/ or sglang/ "
                         "package)", path=path, line=part.count(b"\n", 0, tb) + 1,
                         hint="name the engine: benchreport parse FILE --engine vllm (or sglang)")
    raise ParseError("no vLLM or SGLang log lines found (expected lines such as "
                     "'INFO 11-29 07:14:57 [loggers.py:271] …' or "
                     "'[2026-11-29 07:14:57 TP0] Prefill batch, …')", path=path, line=1)


class _Clock:
    """Full timestamps from prefixes; vLLM's year-less stamps get ``year``, rolling over
    when the month steps back (a log that crosses New Year). With ``rollover=False`` (a part
    of a file scanned on its own) the year stays put and ``roll_years`` fixes it later."""

    def __init__(self, year: int | None, rollover: bool = True) -> None:
        self.year = year
        self.rollover = rollover
        self.last_month = None

    def stamp(self, p: Prefix) -> str | None:
        return self.stamp_of(p.date, p.mmdd, p.time)

    def stamp_of(self, date: str | None, mmdd: str | None, time: str | None) -> str | None:
        """``stamp`` from a prefix's parts (the fast path has no Prefix)."""
        if time is None:
            return None
        if mmdd is not None:
            month = int(mmdd[:2])
            if date:                         # an outer Docker/wrapper date knows the year
                self.year = int(date[:4])
            elif self.year is None:
                return None
            elif self.rollover and self.last_month is not None and month < self.last_month \
                    and self.last_month - month > 6:
                self.year += 1
            self.last_month = month
            return f"{self.year:04d}-{mmdd}T{time}"
        if date:
            return f"{date}T{time}"
        return None


class Found(NamedTuple):
    """The candidate lines of a range: their starts (sorted), how many line ends come
    before each in the range, how many the range holds, and the starts of error lines."""

    starts: list[int]
    before: list[int]
    newlines: int
    triggers: list[int]


def _candidates(block: bytes, lo: int, hi: int, frequent: tuple[bytes, ...],
                rare: re.Pattern, ancient: tuple[bytes, ...] = (),
                errors: frozenset[bytes] = frozenset(),
                anchors: dict[bytes, int] | None = None) -> Found:
    """The lines in ``block[lo:hi]`` that may hold a record, and those whose rare marker is
    one of ``errors`` (after which tracebacks are looked for). ``anchors``: see ``_anchors``.

    The range is read window by window (``_windows``): every search, and the count of line
    ends, reads a window while it is in the processor's cache, where passes over the whole
    range would each read it from memory (a third of their time)."""
    starts: list[int] = []
    before: list[int] = []
    triggers: list[int] = []
    seen: set[bytes] = set()
    inline = tuple(m for m in frequent if b"\n" not in m)
    counted = 0
    for a, b in _windows(block, lo, hi):
        here = _window_starts(block, a, b, inline, rare, errors, anchors, triggers, seen)
        numbers, ends = _newlines(block, a, b, here)
        starts += here
        before += [counted + n for n in numbers] if counted else numbers
        counted += ends
    starts, before = _with_extra(block, lo, starts, before,
                                 _late_starts(block, lo, hi, frequent, ancient, seen))
    return Found(starts, before, counted, triggers)


def _window_starts(block: bytes, a: int, b: int, inline: tuple[bytes, ...], rare: re.Pattern,
                   errors: frozenset[bytes], anchors: dict[bytes, int] | None,
                   triggers: list[int], seen: set[bytes]) -> list[int]:
    """Sorted starts of the candidate lines in one window; the starts of error lines go to
    ``triggers``, the markers found to ``seen``."""
    starts: list[int] = []
    for marker in inline:
        found = _occurrences(block, marker, a, b, anchors.get(marker, -1) if anchors else -1)
        if found:
            seen.add(marker)
            _add_lines(starts, block, a, found)
    for m in rare.finditer(block, a, b):
        start = max(a, block.rfind(b"\n", a, m.start()) + 1)
        starts.append(start)
        if m.group()[2:] in errors:
            triggers.append(start)
    return sorted(set(starts)) if starts else starts


def _late_starts(block: bytes, lo: int, hi: int, frequent: tuple[bytes, ...],
                 ancient: tuple[bytes, ...], seen: set[bytes]) -> list[int]:
    """Candidate lines found over the whole range, not by window: those of markers that
    begin with a line end (which may be a window's last byte), those of an ancient log's
    other line shapes once its first marker is ``seen``, and a first line that continues
    an ancient batch line."""
    later = [m for m in frequent if b"\n" in m]
    if ancient and ancient[0] in seen:
        later += ancient[1:]             # an ancient log: look for its other line shapes too
    starts: list[int] = []
    for marker in later:
        _add_lines(starts, block, lo, _occurrences(block, marker, lo, hi))
    if block.startswith((b"new fill batch", b"#running-req: "), lo):
        starts.append(lo)
    return starts


def _with_extra(block: bytes, lo: int, starts: list[int], before: list[int],
                extra: list[int] | set[int]) -> tuple[list[int], list[int]]:
    """``starts`` and ``before`` with the line starts ``extra`` merged in, their line ends
    counted from the candidate line before each (extra lines are few: tracebacks, ancient
    shapes)."""
    extra = sorted(set(extra).difference(starts)) if extra else ()
    if not extra:
        return starts, before
    out, numbers = [], []
    k, at, counted = 0, lo, 0
    for start in extra:
        while k < len(starts) and starts[k] < start:
            at, counted = starts[k], before[k]
            out.append(at)
            numbers.append(counted)
            k += 1
        counted += block.count(b"\n", at, start)
        at = start
        out.append(at)
        numbers.append(counted)
    return out + starts[k:], numbers + before[k:]


WINDOW = 64 << 10       # bytes searched by all passes in turn (see _candidates)


def _windows(block: bytes, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """``block[lo:hi]`` as ranges of about WINDOW bytes, each ending after a line end (or at
    ``hi``): a marker that holds no line end never crosses from one to the next."""
    while hi - lo > WINDOW:
        end = block.find(b"\n", lo + WINDOW - 1, hi)
        if end == -1:
            break
        yield lo, end + 1
        lo = end + 1
    if lo < hi:
        yield lo, hi


def _add_lines(starts: list[int], block: bytes, lo: int, found: list[int]) -> None:
    """Add the starts (not before ``lo``) of the lines that hold the offsets ``found``."""
    for pos in found:
        starts.append(max(lo, block.rfind(b"\n", lo, pos) + 1))


ANCHOR_SPACING = 4096   # an anchor byte met more often than once in this many bytes is common


def _anchors(sample: bytes, markers: tuple[bytes, ...]) -> dict[bytes, int]:
    """For each marker, the index of its byte that is rarest in ``sample`` (the start of
    the file), when that byte is rare enough to search for on its own.

    bytes.find looks for a single byte with memchr, several times as fast as for a
    string; so a marker whose rarest byte is rare (the "j" of "flashinfer.jit: ") is found
    from the hits of that byte, each checked, at close to the speed of the bytes."""
    sample = sample[: 1 << 18]
    out = {}
    for marker in markers:
        if b"\n" in marker or not sample:
            continue
        k = min(range(len(marker)), key=lambda i: sample.count(marker[i:i + 1]))
        if sample.count(marker[k:k + 1]) * ANCHOR_SPACING * 4 <= len(sample):
            out[marker] = k
    return out


def _occurrences(block: bytes, marker: bytes, lo: int, hi: int, anchor: int = -1) -> list[int]:
    """Where ``marker`` is in block[lo:hi] (past the line end that a marker may begin with),
    found with bytes.find, or from the hits of its byte ``anchor`` (an index into it)."""
    if anchor >= 0:
        return _anchored(block, marker, lo, hi, anchor)
    out = []
    pos = block.find(marker, lo, hi)
    step = len(marker)
    while pos != -1:
        if marker[:1] == b"\n":
            pos += 1                  # a marker that must start a line
        out.append(pos)
        pos = block.find(marker, pos + step, hi)
    return out


def _anchored(block: bytes, marker: bytes, lo: int, hi: int, k: int) -> list[int]:
    """``_occurrences`` from the hits of the byte ``marker[k]``. After more hits than one
    in ANCHOR_SPACING bytes, the byte is not rare here after all, and bytes.find looks for
    the rest."""
    byte, last = marker[k:k + 1], hi - len(marker)
    out = []
    pos = block.find(byte, lo + k, hi)
    for _ in range(16 + (hi - lo) // ANCHOR_SPACING):
        if pos == -1:
            return out
        if pos - k <= last and block.startswith(marker, pos - k):
            out.append(pos - k)
        pos = block.find(byte, pos + 1, hi)
    return out if pos == -1 else out + _occurrences(block, marker, pos - k, hi)


def _traceback_heads(block: bytes, lo: int, hi: int, triggers: list[int], left: int,
                     everywhere: bool) -> tuple[set[int], int]:
    """Line starts of traceback headers in ``block[lo:hi]``, and the bytes of search window
    still owed to the next range.

    A header without the "] " of a log prefix (``(EngineCore pid=1) Traceback …``, or bare)
    is no candidate line, and one more search of every block would slow the scan of a large
    log by a tenth. So headers are searched for ``everywhere`` only in a file read in one
    block; in a larger one, within TB_WINDOW bytes after an error record (a ``triggers``
    line) or after another header, since a process that dies logs an error first."""
    heads: set[int] = set()
    limit = hi if everywhere else lo + left
    pos, k = lo, 0
    while pos < hi:
        while k < len(triggers) and triggers[k] < limit:
            limit = max(limit, triggers[k] + TB_WINDOW)
            k += 1
        if pos >= limit:
            if k == len(triggers):
                break
            pos, limit = triggers[k], triggers[k] + TB_WINDOW
            k += 1
            continue
        end = min(limit, hi)
        found = block.find(tracebacks.MARKER, pos, end)
        if found == -1:
            pos = end
            continue
        heads.add(max(lo, block.rfind(b"\n", lo, found) + 1))
        if not everywhere:
            limit = max(limit, found + TB_WINDOW)
        pos = found + len(tracebacks.MARKER)
    return heads, 0 if everywhere else max(0, limit - hi)


class YearRoll:
    """New Year rollover re-applied over the records of a file scanned in parts, fed in
    file order. Only year-less stamps (marked ``_yearless`` by ``scan(rollover=False)``)
    move; the mark is removed."""

    def __init__(self, year: int | None) -> None:
        self.year, self.last, self.shift = year, None, 0

    def __call__(self, rec: dict[str, Any]) -> dict[str, Any]:
        if not rec.pop("_yearless", False) or not rec.get("ts") or self.year is None:
            return rec
        month = int(rec["ts"][5:7])
        if self.last is not None and month < self.last and self.last - month > 6:
            self.shift += 1
        self.last = month
        if self.shift:
            rec["ts"] = f"{self.year + self.shift:04d}{rec['ts'][4:]}"
        return rec


def roll_years(records: list[dict[str, Any]], year: int) -> None:
    """Re-apply New Year rollover over records of a file scanned in parts (in file order)."""
    roll = YearRoll(year)
    for rec in records:
        roll(rec)


def scan(fp: BinaryIO, path: str, engine: str = "auto", year: int | None = None,
         summary: Summary | None = None, rollover: bool = True) -> Iterator[dict[str, Any]]:
    """Yield one dict per record: kind, line, ts, proc/pid or rank, level, parsed fields.

    ``summary`` (filled while iterating) counts lines, records per kind and unread lines.
    Raises ParseError for a file that is not a server log.
    """
    head = fp.read(BLOCK)
    engine = _engine_of(head, engine, path)
    summary = summary if summary is not None else Summary(file=path, engine=engine)
    summary.engine = engine
    scanner = _Scanner(engine, summary, _Clock(year, rollover), head)
    for data, lo, hi in scanner.pieces(fp, head):
        yield from scanner.chunk(data, lo, hi)
    yield from scanner.close()


def _engine_of(head: bytes, engine: str, path: str) -> str:
    """The engine asked for, or the one the first block shows; ParseError for an empty file."""
    if engine == "auto":
        return detect_engine(head, path)
    if not head.strip():
        raise ParseError("empty file, expected a server log", path=path)
    return engine


class _Scanner:
    """One scan's state from block to block: the line number reached, the tracebacks being
    read, the search window for traceback headers still owed to the next block.

    ``pieces`` cuts the file into runs of whole lines; ``chunk`` reads one run. Only the
    candidate lines (``_candidates``) and the lines of a traceback being read are looked at
    in Python; the others are only counted, at C speed."""

    def __init__(self, engine: str, summary: Summary, clock: _Clock, head: bytes) -> None:
        self.engine, self.summary, self.clock = engine, summary, clock
        self.module, self.split = _ENGINES[engine]
        self.must = _MUST_PARSE[engine]
        self.errors = getattr(self.module, "ERRORS", frozenset())
        ancient = getattr(self.module, "ANCIENT", ())
        # A file read in one block (an excerpt, a short run) is searched for every line
        # shape everywhere: the cost is nil, and a paste need not hold the line that would
        # trigger it.
        self.everywhere = everywhere = len(head) < BLOCK
        if everywhere:
            self.frequent, self.ancient = self.module.FREQUENT + ancient[1:], ()
        else:
            self.frequent, self.ancient = self.module.FREQUENT, ancient
        self.anchors = _anchors(head, self.frequent + self.ancient)
        self.walks: list[tracebacks.Walk] = []   # tracebacks whose exception line is ahead
        self.tb_left = 0
        self.line_base = 1                       # the number of the next line to count

    def pieces(self, fp: BinaryIO, block: bytes) -> Iterator[tuple[bytes, int, int]]:
        """``(data, lo, hi)``: the file as runs of whole lines, in order. Blocks are read in
        place (bounds, not slices); only a line cut by a block's end is copied, joined with
        the start of the next block. A line longer than HUGE_LINE goes in pieces, to keep
        memory flat."""
        carry = b""
        while block:
            start = 0
            if carry:
                nl = block.find(b"\n")
                if nl == -1:
                    carry += block
                    if len(carry) > HUGE_LINE:
                        self.summary.warn(self.line_base, f"a line longer than {HUGE_LINE >> 20} "
                                                          "MiB was read in pieces")
                        yield carry, 0, len(carry)
                        carry = b""
                    block = fp.read(BLOCK)
                    continue
                yield self._joined(carry + block[: nl + 1])
                carry, start = b"", nl + 1
            last = block.rfind(b"\n")
            if last >= start:
                yield block, start, last + 1
            carry = block[max(start, last + 1):]
            block = fp.read(BLOCK)
        if carry:
            self.summary.warn(self.line_base, "the last line has no line end: the file looks "
                                              "cut off here (read as it is)")
            yield carry, 0, len(carry)

    def _joined(self, line: bytes) -> tuple[bytes, int, int]:
        """A line that crossed a block's end, warned about when it is long."""
        if len(line) > LONG_LINE:
            self.summary.warn(self.line_base, f"a line of {len(line) / (1 << 20):.1f} MiB (no "
                                              "log record is that long; read as one line)")
        return line, 0, len(line)

    def chunk(self, data: bytes, lo: int, hi: int) -> Iterator[dict[str, Any]]:
        """Records of the whole lines in data[lo:hi]; advances the line count."""
        found, check = self._starts(data, lo, hi)
        base = self.line_base
        walked, walked_line = lo, base           # the walks have seen the lines before this
        for start, counted in zip(found.starts, found.before, strict=True):
            line = base + counted
            end = data.find(b"\n", start, hi)
            stop = end if end != -1 else hi
            if self.walks:
                yield from self._follow(data, walked, stop + 1, walked_line)
            raw = data[start:stop]
            yield from _records(raw, line, self.engine, self.split, self.module, self.must,
                                self.clock, self.summary, mark_yearless=not self.clock.rollover)
            if start in check and tracebacks.MARKER in raw:
                self._begin(raw, line)
            walked, walked_line = stop + 1, line + 1
        if self.walks:
            yield from self._follow(data, walked, hi, walked_line)
        newlines = found.newlines
        self.summary.lines += newlines + (0 if hi == lo or data[hi - 1:hi] == b"\n" else 1)
        self.line_base = base + newlines

    def _starts(self, data: bytes, lo: int, hi: int) -> tuple[Found, set[int] | tuple]:
        """The lines to read in data[lo:hi] (``Found``); and the starts of those where a
        traceback may begin (error records and traceback headers)."""
        found = _candidates(data, lo, hi, self.frequent, self.module.RARE_RE, self.ancient,
                            self.errors, self.anchors)
        heads, self.tb_left = _traceback_heads(data, lo, hi, found.triggers, self.tb_left,
                                               self.everywhere)
        if heads:
            starts, before = _with_extra(data, lo, found.starts, found.before, heads)
            found = found._replace(starts=starts, before=before)
        return found, (heads.union(found.triggers) if heads or found.triggers else ())

    def _finished(self, rec: dict[str, Any]) -> dict[str, Any]:
        """Count a traceback. One without its exception line keeps its header's line number
        but comes out where the reading gave up, so it can follow records of later lines."""
        self.summary.counts["traceback"] = self.summary.counts.get("traceback", 0) + 1
        if rec["exception"] is None:
            self.summary.warn(rec["line"], "a traceback without its exception line (cut off, "
                                           "or mixed with other output)")
        return rec

    def _follow(self, data: bytes, pos: int, limit: int, line: int) -> Iterator[dict[str, Any]]:
        """Feed the lines in data[pos:limit] (the first is number ``line``) to the walks."""
        walks = self.walks
        while pos < limit and walks:
            end = data.find(b"\n", pos, limit)
            text = clean(data[pos: end if end != -1 else limit].decode("utf-8", "replace"))
            for walk in list(walks):
                rec = walk.feed(text, line)
                if rec is not None:
                    walks.remove(walk)
                    yield self._finished(rec)
            pos, line = (end + 1 if end != -1 else limit), line + 1

    def _begin(self, raw: bytes, line: int) -> None:
        """Start reading a traceback at its header line, if this is one."""
        text = clean(raw.decode("utf-8", "replace"))
        got = tracebacks.header(text)
        if got is None:
            return
        keys, message = got
        rec: dict[str, Any] = {"kind": "traceback", "line": line, "ts": None}
        prefix = next((p for p, msg in self.split(text) if tracebacks.TEXT_MARKER in msg), None)
        if prefix is None:
            prefix = tracebacks.process_of(text)
        if prefix is not None:
            rec["ts"] = self.clock.stamp(prefix)
            if not self.clock.rollover and prefix.mmdd is not None and not prefix.date:
                rec["_yearless"] = True
            for name in ("proc", "pid", "ranks", "level"):
                if getattr(prefix, name):
                    rec["rank" if name == "ranks" else name] = getattr(prefix, name)
        if message:
            rec["message"] = message[:300]
        self.walks.append(tracebacks.Walk(line, keys, rec))

    def close(self) -> Iterator[dict[str, Any]]:
        """The tracebacks the text ended inside of."""
        for walk in self.walks:
            yield self._finished(walk.finish(None, walk.start))


def _newlines(data: bytes, lo: int, hi: int, starts: list[int]) -> tuple[list[int], int]:
    """How many line ends come before each of ``starts`` (sorted, in [lo, hi)) in
    data[lo:hi], and how many it holds."""
    before, counted, at = [], 0, lo
    for start in starts:
        counted += _count_lines(data, at, start)
        at = start
        before.append(counted)
    return before, counted + _count_lines(data, at, hi)


SHORT = 512             # below this many bytes, line ends are counted with bytes.count
COUNT_PIECE = 1 << 20   # the copies _count_lines makes are at most this long


def _count_lines(data: bytes, a: int, b: int) -> int:
    """Line ends in data[a:b].

    Counting line ends is the one pass over every byte that cannot be skipped, and
    bytes.count is slow at it: it checks a limit at each byte, so it is not vectorised.
    bytes.replace of one byte by nothing finds each with memchr, which is; so on a stretch
    of log lines, deleting the line ends and comparing lengths is twice as fast, the copies
    included (and numpy, as fast, costs a tenth of a second to import in each process)."""
    if b - a < SHORT:
        return data.count(b"\n", a, b)
    n = 0
    for x in range(a, b, COUNT_PIECE):
        y = min(b, x + COUNT_PIECE)
        n += (y - x) - len(data[x:y].replace(b"\n", b""))
    return n


class FileChecks:
    """Warnings about a whole log, from its records fed in file order: a server that starts
    again (naming the settings that changed), and a clock that goes back. ``finish`` adds
    them to the summary, the restarts first."""

    def __init__(self, summary: Summary) -> None:
        self.summary = summary
        self.starts: list[dict[str, Any]] = []
        self.back: list[tuple[int, str]] = []
        self.last: tuple[str, int] | None = None

    def __call__(self, rec: dict[str, Any]) -> dict[str, Any]:
        if rec["kind"] == "server_args":
            self.starts.append(rec)
        ts = rec.get("ts")
        if ts:
            if self.last is not None and ts < self.last[0]:
                self._went_back(rec, ts)
            self.last = (ts, rec["line"])
        return rec

    def _went_back(self, rec: dict[str, Any], ts: str) -> None:
        back = (dt.datetime.fromisoformat(self.last[0]) -
                dt.datetime.fromisoformat(ts)).total_seconds()
        if back > CLOCK_SLACK_S and len(self.back) <= self.summary.max_warnings:
            self.back.append((rec["line"], f"the clock goes back {back:.0f} s here (from "
                                           f"{self.last[0]} at line {self.last[1]} to {ts}); "
                                           "records are placed by their own time stamps"))

    def finish(self) -> None:
        for before, again in zip(self.starts, self.starts[1:], strict=False):
            a, b = before.get("args") or {}, again.get("args") or {}
            changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            self.summary.warn(again["line"], f"the server starts again here (previous start "
                                             f"at line {before['line']}); " +
                              (f"settings changed: {', '.join(changed)}" if changed else
                               "same settings"))
        for line, message in self.back:
            self.summary.warn(line, message)


def file_checks(records: list[dict[str, Any]], summary: Summary) -> None:
    """Warnings about a whole log, from its records in file order (``FileChecks``)."""
    checks = FileChecks(summary)
    for rec in records:
        checks(rec)
    checks.finish()


def _fast_head(m: re.Match, kind: str, line: int, clock: _Clock,
               mark_yearless: bool) -> dict[str, Any]:
    """The first keys of a record read by an engine's ``fast_line``: the same keys, in the
    same order, as the general path gives the same line, read from the match's groups (no
    Prefix, no decoding of the whole line)."""
    if "mmdd" in m.re.groupindex:                # vLLM: (proc pid=N) INFO MM-DD HH:MM:SS
        proc, pid, mmdd, hms = m.group("proc", "pid", "mmdd", "hms")
        record: dict[str, Any] = {"kind": kind, "line": line,
                                  "ts": clock.stamp_of(None, mmdd.decode(), hms.decode())}
        if mark_yearless:
            record["_yearless"] = True
        if proc:
            record["proc"], record["pid"] = proc.decode(), int(pid)
        record["level"] = "INFO"
        return record
    date, time, ranks = m.group("date", "time", "ranks")   # SGLang: [date time RANKS]
    record = {"kind": kind, "line": line,
              "ts": clock.stamp_of(date.decode(), None, time.decode())}
    ranks = ranks.decode().strip()
    if ranks:
        record["rank"] = ranks
    return record


LARGEST_COUNT = 2**63 - 1       # what a Parquet BIGINT holds
_NOT_NUMBERS = frozenset((str, bool, list, type(None)))


def _unsound(record: dict[str, Any]) -> str | None:
    """What makes a parsed line impossible: a time that is no time (hour 25, month 13), a
    number that is NaN, infinite, negative or too large to store. None: it is sound."""
    ts = record.get("ts")
    if ts is not None and not _time_exists(ts):
        return f"the time {ts.replace('T', ' ')} does not exist"
    for key, value in record.items():
        kind = type(value)
        if kind in _NOT_NUMBERS:                 # most values: one set lookup
            continue
        if kind is float or (kind is not int and isinstance(value, float)):
            if not 0.0 <= value < math.inf:
                return f"{key} is {value}"
        elif (kind is int or (kind is not bool and isinstance(value, int))) and \
                key != "line" and not 0 <= value <= LARGEST_COUNT:
            return f"{key} is {value}"
    return None


@functools.lru_cache(maxsize=4096)
def _time_exists(ts: str) -> bool:
    """Whether an ISO time stamp is a time there is (a log prints the same one for a
    second's lines: remembered)."""
    try:
        dt.datetime.fromisoformat(ts)
    except ValueError:
        return False
    return True


def _skipped_unsound(record: dict[str, Any], line: int, summary: Summary) -> bool:
    problem = _unsound(record)
    if problem is None:
        return False
    summary.unrecognised += 1
    summary.warn(line, f"{problem}, which no engine prints (line skipped)")
    return True


# int() refuses more digits than this (Python's guard against slow conversions): a line that
# holds such a number is skipped before any parser tries it.
INT_DIGITS = sys.get_int_max_str_digits() or 1 << 30
_LONG_DIGITS = re.compile(rb"\d{%d}" % (INT_DIGITS + 1))


def _skipped_long_number(raw: bytes, line: int, summary: Summary) -> bool:
    if len(raw) <= INT_DIGITS or not _LONG_DIGITS.search(raw):
        return False
    summary.unrecognised += 1
    summary.warn(line, "a number of more digits than Python reads (line skipped)")
    return True


def _records(raw: bytes, line: int, engine: str, split, module, must, clock: _Clock,
             summary: Summary, mark_yearless: bool = False) -> list[dict[str, Any]]:
    """The records of one candidate line, counted in ``summary``; a line that cannot be
    read is counted and warned about instead. The common, current-era line is read by one
    regex (``module.fast_line``); any other takes the general, part-by-part reader."""
    if _skipped_long_number(raw, line, summary):
        return []
    try:
        fast = module.fast_line(raw)
    except ValueError:                  # a field the regex took that is no number: below
        fast = None
    if fast is None:
        return _general_records(raw, line, split, module, must, clock, summary, mark_yearless)
    m, kind, fields = fast
    record = _fast_head(m, kind, line, clock, mark_yearless)
    record.update(fields)
    if _skipped_unsound(record, line, summary):
        return []
    summary.counts[kind] = summary.counts.get(kind, 0) + 1
    return [record]


def _general_records(raw: bytes, line: int, split, module, must, clock: _Clock,
                     summary: Summary, mark_yearless: bool) -> list[dict[str, Any]]:
    """Records of a line in any era's shape: decoded, split where records are glued, each
    message given to the engine's parser."""
    text = raw.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        summary.warn(line, "bytes that are not UTF-8 were replaced")
    out: list[dict[str, Any]] = []
    produced = False
    for prefix, message in split(clean(text)):
        try:
            parsed = module.parse_message(message, prefix.level if prefix else None)
        except FieldError as exc:
            summary.unrecognised += 1
            summary.warn(line, f"{exc} (line skipped)")
            produced = True
            continue
        except ValueError as exc:       # "1.2.3" where a number belongs
            summary.unrecognised += 1
            summary.warn(line, f"{_not_a_number(exc)} is not a number (line skipped)")
            produced = True
            continue
        if parsed is None:
            continue
        produced = True
        record = _general_record(parsed, prefix, line, clock, mark_yearless)
        if not _skipped_unsound(record, line, summary):
            summary.counts[record["kind"]] = summary.counts.get(record["kind"], 0) + 1
            out.append(record)
    if not produced and any(m in raw for m in must):
        summary.unrecognised += 1
        summary.warn(line, "looks like a stats line but could not be read (line skipped)")
    return out


def _not_a_number(exc: ValueError) -> str:
    """The offending text of a failed int() or float(), as Python's message quotes it."""
    text = str(exc)
    return text[text.index(":") + 2:] if ":" in text else text


def _general_record(parsed: tuple[str, dict[str, Any]], prefix: Prefix | None, line: int,
                    clock: _Clock, mark_yearless: bool) -> dict[str, Any]:
    """One parsed message as a record: kind, line, then what its prefix tells (time stamp,
    process, rank, level), then its fields."""
    kind, fields = parsed
    record: dict[str, Any] = {"kind": kind, "line": line}
    if prefix is not None:
        record["ts"] = clock.stamp(prefix)
        if mark_yearless and prefix.mmdd is not None and not prefix.date:
            record["_yearless"] = True
        if prefix.proc:
            record["proc"], record["pid"] = prefix.proc, prefix.pid
        if prefix.ranks:
            record["rank"] = prefix.ranks
        if prefix.level and kind != "memory_event":
            record["level"] = prefix.level
    else:
        record["ts"] = None
    record.update(fields)
    return record
