"""Benchmark windows from request counts: for a client that records no time stamps.

A client that runs its points one after the other, each a known number of requests,
leaves its order in the server's access lines: after the declared warm-up requests, the
first point's requests are the next ``ok + failed`` client request lines, the second
point's the ones after them, and so on. A point's window runs from its first request line
to the next point's first request line; the last point's to the log's last sign of
activity after its last request (vLLM's next idle ``Engine 000`` line, SGLang's last
``Decode batch`` line). Uvicorn writes an access line when the response starts, at once
for a streamed one, so the line marks the request's start.

Times: a line's own time stamp (SGLang's access lines have one); else a window's start is
the last time stamp at or before its first line and its end the first time stamp at or
after its last line, so the window never claims less than it covers (consecutive vLLM
windows then share up to one stats interval).

``place_by_count`` is a pure function of simple values; ``count_windows`` adapts a log's
access lines and records and the engine's points to it.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .parsers.access import Access, AccessLog, Marker

METHOD = "request count"
# the API paths a benchmark client sends generation requests to
CLIENT_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/generate",
                "/v1/generate")
_INDEX = re.compile(r"\[(\d+)\]\s*$")


# --- the pure placement ----------------------------------------------------------------
@dataclass(frozen=True)
class Placed:
    """One point's requests: their line numbers, and the window's first and last line."""

    key: str
    lines: tuple[int, ...]
    start_line: int
    end_line: int


@dataclass
class Placement:
    """What ``place_by_count`` found: the points placed (in order), a one-line reason for
    each point not placed, the warm-up lines, and the client request lines after the last
    point's (allowed, reported in ``notes``)."""

    placed: list[Placed] = field(default_factory=list)
    not_placed: dict[str, str] = field(default_factory=dict)
    warmup: tuple[int, ...] = ()
    extra: tuple[int, ...] = ()


def _chunk_error(key: str, ok: int, failed: int, chunk: Sequence[tuple[int, int]],
                 file: str) -> str | None:
    """Why ``chunk`` cannot be the point's requests: more error lines than it failed."""
    bad = [(n, s) for n, s in chunk if not 200 <= s < 300]
    if len(bad) <= failed:
        return None
    n, s = bad[failed]
    return (f"{file} line {n} is a {s} response where the results expect "
            f"{ok} successful and {failed} failed requests for {key}")


def _take(expects: Sequence[tuple[str, int, int]], rest: Sequence[tuple[int, int]],
          file: str, out: Placement) -> tuple[list[tuple[str, list[tuple[int, int]]]], int,
                                              bool]:
    """Each point's lines, in order, until the counts stop adding up (``out.not_placed``
    gets that point and every later one); returns the chunks, the lines they used and
    whether the counts stopped adding up."""
    want = sum(ok + failed for _, ok, failed in expects)
    at, reason = 0, None
    chunks: list[tuple[str, list[tuple[int, int]]]] = []
    for key, ok, failed in expects:
        chunk = list(rest[at:at + ok + failed])
        if reason is None and not ok + failed:
            out.not_placed[key] = f"the results record no request for {key}"
            continue
        if reason is None and len(chunk) < ok + failed:
            reason = (f"{file} has {len(rest)} client requests after the warm-up, "
                      f"the results expect {want}")
        reason = reason or _chunk_error(key, ok, failed, chunk, file)
        if reason:
            out.not_placed[key] = reason
            continue
        chunks.append((key, chunk))
        at += ok + failed
    return chunks, at, reason is not None


def place_by_count(expects: Sequence[tuple[str, int, int]],
                   requests: Sequence[tuple[int, int]], warmup: int = 0,
                   end_after: Callable[[int], int] | None = None,
                   file: str = "the log") -> Placement:
    """Assign consecutive client request lines to points.

    ``expects``: (key, expected_ok, expected_failed) per point, in the client's order.
    ``requests``: (line, HTTP status) of every client request line, in file order.
    ``warmup``: the client's requests before its first point.
    ``end_after(line)``: the line of the log's last activity after ``line`` (the last
    placed point's window ends there); the line itself when not given.

    A point takes the next ``ok + failed`` lines; where too few are left, or the lines hold
    more error responses than the point failed, it and every later point are not placed,
    each with a one-line reason (a point that expects no request is not placed alone).
    Lines after the last point are ``extra`` (only when the counts added up). A window
    ends at the next placed point's first line; the last placed one at the first line of
    the first point not placed, or at ``end_after``.
    """
    out = Placement(warmup=tuple(n for n, _ in requests[:warmup]))
    rest = list(requests[warmup:])
    chunks, at, stopped = _take(expects, rest, file, out)
    if not stopped:
        out.extra = tuple(n for n, _ in rest[at:])
    starts = [chunk[0][0] for _, chunk in chunks[1:]]
    if stopped and at < len(rest):
        starts.append(rest[at][0])       # the requests of the first point not placed begin
    for i, (key, chunk) in enumerate(chunks):
        lines = tuple(n for n, _ in chunk)
        if i < len(starts):
            end = starts[i]
        else:
            end = end_after(lines[-1]) if end_after else lines[-1]
        out.placed.append(Placed(key, lines, lines[0], max(end, lines[-1])))
    return out


# --- times -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Clock:
    """A log's time-stamped lines: (line, ISO time) in line order."""

    stamps: tuple[tuple[int, str], ...]

    @functools.cached_property
    def _lines(self) -> list[int]:
        return [n for n, _ in self.stamps]

    def at_or_before(self, line: int) -> str | None:
        i = bisect.bisect_right(self._lines, line)
        return self.stamps[i - 1][1] if i else None

    def at_or_after(self, line: int) -> str | None:
        i = bisect.bisect_left(self._lines, line)
        return self.stamps[i][1] if i < len(self.stamps) else None


def _with_year(stamp: str, near: str | None) -> str | None:
    """An ISO time from a stamp as printed; a year-less one ("08-01 23:30:43") takes the
    year of ``near`` (the file's nearest record time), across a New Year when the months
    say so."""
    if len(stamp) > len("08-01 23:30:43"):
        return stamp.replace(" ", "T")
    if near is None:
        return None
    year, month = int(near[:4]), int(near[5:7])
    mine = int(stamp[:2])
    year += (month == 12 and mine == 1) - (month == 1 and mine == 12)
    return f"{year:04d}-{stamp.replace(' ', 'T')}"


def make_clock(records: Sequence[dict[str, Any]], accesses: Sequence[Access]) -> Clock:
    """Every line of the file known to have a time: its records', its access lines' own,
    and the time-stamped lines next to its time-less access lines."""
    stamps = {r["line"]: r["ts"] for r in records if r.get("ts")}
    known = Clock(tuple(sorted(stamps.items())))
    for a in accesses:
        if a.ts:
            stamps[a.line] = a.ts
        for near in (a.before, a.after):
            if near and near[0] not in stamps:
                ref = known.at_or_before(near[0]) or known.at_or_after(near[0])
                ts = _with_year(near[1], ref)
                if ts:
                    stamps[near[0]] = ts
    return Clock(tuple(sorted(stamps.items())))


def window_times(clock: Clock, start_line: int, end_line: int) -> tuple[str, str] | None:
    """(start, end): the last time at or before the first line (the line's own, when it
    has one), the first time at or after the last; falls back to the other side at the
    file's ends. None when the file has no time at all."""
    start = clock.at_or_before(start_line) or clock.at_or_after(start_line)
    end = clock.at_or_after(end_line) or clock.at_or_before(end_line)
    if start is None or end is None:
        return None
    return start, max(start, end)


def marker_time(clock: Clock, marker: Marker) -> str | None:
    """A phase marker's ISO time: its time of day on the date of the first time-stamped
    line after it (the day before, when that line's time of day is earlier: the run
    crossed midnight in between), else of the last one before it."""
    after = clock.at_or_after(marker.line)
    near = after or clock.at_or_before(marker.line)
    if near is None:
        return None
    day = dt.date.fromisoformat(near[:10])
    if after and marker.clock > near[11:19]:
        day -= dt.timedelta(days=1)
    elif not after and marker.clock < near[11:19]:
        day += dt.timedelta(days=1)
    return f"{day.isoformat()}T{marker.clock}"


# --- the log's side ------------------------------------------------------------------------
def client_requests(log: AccessLog, ready_lines: Sequence[int] = (),
                    paths: Sequence[str] = CLIENT_PATHS) -> list[Access]:
    """The client's generation requests: POST lines to ``paths`` of the last server run
    of the file (after its last ``START`` marker) and after that run's "ready" line, so
    an engine's own start-up warm-up (SGLang's ``POST /generate``) is not one; no GET."""
    begin = max((m.line for m in log.markers), default=0)
    ready = [n for n in ready_lines if n > begin]
    begin = max(ready[:1] or [begin])
    return [a for a in log.accesses
            if a.method == "POST" and a.path in paths and a.line > begin]


def _idle(r: dict[str, Any]) -> bool:
    """A vLLM stats line of an engine that did nothing in its interval: Running: 0,
    Waiting: 0 and no throughput (a line with Running: 0 that still reports prompt
    throughput follows a request that arrived after the engine's last step)."""
    return not any(r.get(k) for k in ("running", "waiting", "prompt_tps", "gen_tps"))


def activity_end(records: Sequence[dict[str, Any]]) -> Callable[[int], int]:
    """``end_after(line)``: the first idle vLLM stats line after ``line``, else SGLang's
    last Decode (or Prefill) line after it, else the line itself."""
    stats = sorted(r["line"] for r in records if r["kind"] == "engine_stats" and _idle(r))
    decode = sorted(r["line"] for r in records
                    if r["kind"] in ("decode_batch", "prefill_batch"))

    def end_after(line: int) -> int:
        i = bisect.bisect_right(stats, line)
        if i < len(stats):
            return stats[i]
        return decode[-1] if decode and decode[-1] > line else line
    return end_after


# --- the points' side -------------------------------------------------------------------------
def client_order(entries: Sequence[Any], files: Sequence[str] | None = None) -> list[Any]:
    """The points in the order the client ran them: by file (``files`` when given, else
    by name), then the record's line, then the index its ``where`` ends in
    (``laeufe[3]``)."""
    rank = {f: i for i, f in enumerate(files or [])}

    def key(e: Any) -> tuple:
        m = _INDEX.search(e.point.where or "")
        return (rank.get(e.file.rel, len(rank)), e.file.rel, e.point.line or 0,
                int(m[1]) if m else 0)
    return sorted(entries, key=key)


def expected(entry: Any) -> tuple[str, int, int] | None:
    """(key, ok, failed) of a point whose file counts its requests, else None."""
    done = entry.point.fields.get("completed")
    if done is None:
        return None
    return entry.id, int(done), int(entry.point.fields.get("failed") or 0)


@dataclass(frozen=True)
class CountWindow:
    """A point's window found by count: times, and the lines it rests on."""

    key: str
    start: str
    end: str
    file: str
    first_line: int
    last_line: int
    requests: tuple[int, ...]


def first_token_starts(found: Placement, records: Sequence[dict[str, Any]]) -> list[Placed]:
    """Windows of a log whose access lines come at each request's first token.

    SGLang writes a streamed request's access line only once its first token is out, so
    the request's prefill (``Prefill batch`` lines) comes before it. Each point's window
    then starts at the first prefill line after the previous point's last request line
    (the warm-up's for the first point), and the previous window ends there. A log with no
    prefill lines (vLLM, whose access line comes as the request starts) is left as found.
    """
    fills = sorted(int(r["line"]) for r in records if r.get("kind") == "prefill_batch")
    if not fills:
        return list(found.placed)
    before = found.warmup[-1] if found.warmup else 0
    starts = []
    for p in found.placed:
        i = bisect.bisect_right(fills, before)
        starts.append(fills[i] if i < len(fills) and fills[i] < p.start_line else p.start_line)
        before = p.lines[-1]
    out = []
    for k, p in enumerate(found.placed):
        nxt = found.placed[k + 1] if k + 1 < len(found.placed) else None
        end = starts[k + 1] if nxt is not None and p.end_line == nxt.start_line else p.end_line
        out.append(Placed(p.key, p.lines, starts[k], end))
    return out


def count_windows(file: str, log: AccessLog, records: Sequence[dict[str, Any]],
                  entries: Sequence[Any], warmup: int = 0,
                  files: Sequence[str] | None = None
                  ) -> tuple[list[CountWindow], list[str]]:
    """The adapter: one engine's log and points to ``place_by_count``.

    ``file``: the log's repo-relative path (named in the notes); ``log``: its
    ``scan_access``; ``records``: its logscan records (times, "ready", stats and decode
    lines); ``entries``: the engine's PointEntry objects (``.id``, ``.file.rel``,
    ``.point.line``/``.point.where`` for the order, ``.point.fields["completed"]`` and
    ``["failed"]`` for the counts); ``warmup``: the client's requests before its first
    point (run.yaml's ``client: warmup_requests``); ``files``: the order the client wrote
    its result files in, when not by name. Returns the windows placed and the notes
    ("file: message"): one per point not placed, one for trailing extra requests.
    """
    wanted = [x for e in client_order(entries, files) for x in [expected(e)] if x]
    ready = [r["line"] for r in records if r["kind"] == "ready"]
    reqs = client_requests(log, ready)
    found = place_by_count(wanted, [(a.line, a.status) for a in reqs], warmup,
                           activity_end(records), file.rsplit("/", 1)[-1])
    clock = make_clock(records, log.accesses)
    out = []
    for p in first_token_starts(found, records):
        times = window_times(clock, p.start_line, p.end_line)
        if times:
            out.append(CountWindow(p.key, *times, file, p.start_line, p.end_line, p.lines))
    notes = [f"{file}: {key} not placed by request count: {why}"
             for key, why in found.not_placed.items()]
    if found.extra:
        status = {a.line: a.status for a in reqs}
        shown = ", ".join(f"line {n} ({status[n]})" for n in found.extra)
        notes.append(f"{file}: {len(found.extra)} client requests after the last "
                     f"benchmark's, which no result records: {shown}")
    return out, notes
