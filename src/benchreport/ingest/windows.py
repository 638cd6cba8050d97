"""Where each benchmark sits in its engine's server logs, and whether the logs and /metrics
dumps of a run belong to its results at all.

A benchmark's window comes from run.yaml's ``windows:``, from the time its result file
records (``Point.date``: vLLM's end time, AIPerf's and GuideLLM's start time), shifted by the
whole, half or quarter hour that puts it inside the log's activity when the two clocks differ
(a client in UTC, a server log in local time), or, for a result with no time, from the burst
of log activity whose prefilled tokens match the result's input tokens.

Every log, launch configuration and /metrics dump is also checked against the results:
another model than the results record stops the build (one line naming both values and both
files); a log whose time span holds no benchmark, and a window in which the log saw another
number of requests than the result counts, are warnings ("file: message") that reach
``make check`` and the report.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from ..core.errors import ReportError
from ..core.records import BenchWindow, Ingested, Run
from ..core.recordset import Records
from .countplace import METHOD as COUNT_METHOD
from .countplace import count_windows
from .parsers.access import scan_access

BURST_GAP_S = 30.0       # idle seconds that separate two benchmarks in one log
MARGIN_S = 12.0          # a stats line printed up to one interval after the end still counts
ACTIVITY = ("engine_stats", "prefill_batch", "decode_batch")
# clients whose Point.date is the end of the benchmark (the others record its start)
DATE_AT_END = ("vllm-bench-serve", "llmperf")
OFFSET_STEP_MIN = 15     # clock offsets tried: every quarter hour …
OFFSET_MAX_H = 14        # … up to the widest time-zone difference
COVERED = 0.5            # share of a benchmark's span the log's activity must cover
TOKEN_MISS = 0.10        # a burst's prefilled tokens within 10% of the result's input tokens
COUNT_TOLERANCE = 0.10   # requests the log saw against the result's count
READ_BLOCK = 8 << 20     # bytes of a log read at a time when its access lines are counted
# uvicorn access lines of a generation request (vLLM, SGLang)
_ACCESS = re.compile(
    rb'^(?:\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[^\]\n]*\] )?[^\n]*?"POST /(?:v1/)?'
    rb'(?:chat/completions|completions|generate|responses)[ ?][^\n]*$', re.MULTILINE)


# --- times -----------------------------------------------------------------------------
def _iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def _ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _span_text(a: dt.datetime, b: dt.datetime) -> str:
    """'2025-03-01 10:00–10:40' (the second date only when it differs)."""
    end = f"{b:%H:%M}" if a.date() == b.date() else f"{b:%Y-%m-%d %H:%M}"
    return f"{a:%Y-%m-%d %H:%M}–{end}"


def _offset_text(offset: dt.timedelta) -> str:
    """'+9 h', '-5 h 30 min'."""
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    h, m = divmod(abs(minutes), 60)
    return f"{sign}{h} h" + (f" {m} min" if m else "")


def span_seconds(point) -> float | None:
    """How long the benchmark ran: the file's duration, or the span its own per-request
    timings cover (each request's send time plus its E2E) when that is longer. A file that
    understates its duration (a client bug, an edit) is warned elsewhere; the window must
    still hold every request, or the log's events of the run fall outside it."""
    duration = point.fields.get("duration")
    covered = [(r.get("start_s") or 0.0) + r["e2el_ms"] / 1000
               for r in getattr(point, "requests", ())
               if r.get("e2el_ms") and not r.get("error")]
    spans = ([float(duration)] if duration else []) + covered
    return max(spans) if duration and spans else None


def point_span(point) -> tuple[dt.datetime, dt.datetime] | None:
    """The benchmark's (start, end) on the client's clock, naive (an aware time in UTC),
    from ``Point.date`` and how long it ran (`span_seconds`); None when the file records no
    time of day."""
    date, duration = point.date, span_seconds(point)
    if not isinstance(date, str) or "T" not in date or not duration:
        return None
    try:
        t = _ts(date)
    except ValueError:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(dt.UTC).replace(tzinfo=None)
    t = t.replace(microsecond=0)
    if point.client in DATE_AT_END:
        return t - dt.timedelta(seconds=float(duration) + 1), t
    return t - dt.timedelta(seconds=1), t + dt.timedelta(seconds=float(duration))


def _aware(point) -> bool:
    try:
        return _ts(point.date).tzinfo is not None
    except (TypeError, ValueError):
        return False


# --- the log's activity ------------------------------------------------------------------
def _active(r: dict[str, Any]) -> bool:
    """A stats line of an idle engine is no activity; a batch line always is."""
    if r["kind"] != "engine_stats":
        return True
    return bool(r.get("prompt_tps") or r.get("gen_tps") or r.get("running")
                or r.get("waiting"))


class _Burst:
    """A run of activity lines with no gap longer than BURST_GAP_S: its first and last
    line, and the tokens it prefilled (vLLM: the prompt throughput over each stats
    interval, the first taken as 10 s; SGLang: #new-token + #cached-token of its Prefill
    lines). Built line by line: a burst never holds its lines."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.first = self.last = row
        self.prev: dt.datetime | None = None
        self.stats_tokens, self.batch_tokens = 0.0, 0

    def add(self, row: dict[str, Any], t: dt.datetime) -> None:
        if self.first["kind"] == "engine_stats":
            self.stats_tokens += row["prompt_tps"] * (
                (t - self.prev).total_seconds() if self.prev else 10.0)
        elif row["kind"] == "prefill_batch":
            self.batch_tokens += (row.get("new_token") or 0) + (row.get("cached_token") or 0)
        self.prev, self.last = t, row

    @property
    def tokens(self) -> float:
        return self.stats_tokens if self.first["kind"] == "engine_stats" \
            else float(self.batch_tokens)


# what ``_active`` and ``_Burst`` read of a row
_BURST_COLUMNS = ("engine", "file", "line", "ts", "kind", "prompt_tps", "gen_tps", "running",
                  "waiting", "new_token", "cached_token")


def _bursts(records, engine: str) -> list[_Burst]:
    """The engine's bursts of activity (``_active`` stats and batch lines), in time order."""
    bursts: list[_Burst] = []
    last = None
    for r in Records.of(records).sorted_rows(ACTIVITY, engine, _BURST_COLUMNS):
        if not _active(r):
            continue
        t = _ts(r["ts"])
        if last is None or (t - last).total_seconds() > BURST_GAP_S:
            bursts.append(_Burst(r))
        bursts[-1].add(r, t)
        last = t
    return bursts


def _burst_spans(bursts: list[_Burst]) -> list[tuple[dt.datetime, dt.datetime]]:
    """Each burst's time span; a stats line reports the interval before it."""
    out = []
    for b in bursts:
        pad = 10.0 if b.first["kind"] == "engine_stats" else 2.0
        out.append((_ts(b.first["ts"]) - dt.timedelta(seconds=pad),
                    _ts(b.last["ts"]) + dt.timedelta(seconds=2)))
    return out


def _covered(start: dt.datetime, end: dt.datetime, spans) -> float:
    """The share of [start, end] that the log's activity covers."""
    inside = sum(max(0.0, (min(end, b) - max(start, a)).total_seconds()) for a, b in spans)
    return inside / max(1.0, (end - start).total_seconds())


def clock_offset(spans: list[tuple[dt.datetime, dt.datetime]],
                 activity: list[tuple[dt.datetime, dt.datetime]]) -> dt.timedelta:
    """The shift from the clients' clock to the log's: none when the benchmarks sit in the
    log's activity as they are (or there is no activity); else the smallest quarter-hour
    shift that puts every one of them in it; none again when no shift does."""
    zero = dt.timedelta(0)
    if not spans or not activity:
        return zero

    def hits(offset: dt.timedelta) -> int:
        return sum(_covered(a + offset, b + offset, activity) >= COVERED for a, b in spans)

    if hits(zero):
        return zero
    best = (0.0, zero)
    for k in range(1, OFFSET_MAX_H * 60 // OFFSET_STEP_MIN + 1):
        for sign in (1, -1):
            offset = dt.timedelta(minutes=sign * k * OFFSET_STEP_MIN)
            if hits(offset) < len(spans):
                continue
            cover = sum(_covered(a + offset, b + offset, activity) for a, b in spans)
            if cover > best[0]:                   # the most covered; the smallest on a tie
                best = (cover, offset)
    return best[1]


# --- windows -----------------------------------------------------------------------------
def single_points(run: Run, points: list) -> list:
    """The points that are alone in their (engine, workload) of a workload that is no sweep:
    each gets a window of its own, whatever its client."""
    count = Counter((e.engine, e.workload) for e in points)
    sweeps = {w.id for w in run.meta.workloads if w.is_sweep}
    return [e for e in points
            if e.workload not in sweeps and count[(e.engine, e.workload)] == 1]


def _date_window(entry, span, offset: dt.timedelta) -> BenchWindow:
    start, end = span
    what = "result date" if entry.point.client in DATE_AT_END else "result start time"
    if offset:
        what += f", shifted by {_offset_text(offset)} to the log's clock"
    return BenchWindow(entry.engine, entry.workload, _iso(start + offset),
                       _iso(end + offset + dt.timedelta(seconds=MARGIN_S)), what,
                       method="client timestamps", point=entry.id)


def _burst_window(entry, bursts, used: set[int]) -> BenchWindow | None:
    want = entry.point.fields.get("total_input_tokens") or 0
    best = None
    for i, burst in enumerate(bursts):
        if i in used or not want:
            continue
        miss = abs(burst.tokens - want) / want
        if miss <= TOKEN_MISS and (best is None or miss < best[0]):
            best = (miss, i)
    if best is None:
        return None           # no log for this benchmark: sections that need one say so
    used.add(best[1])
    burst = bursts[best[1]]
    start = _ts(burst.first["ts"]) - dt.timedelta(seconds=2)
    end = _ts(burst.last["ts"]) + dt.timedelta(seconds=2)
    return BenchWindow(entry.engine, entry.workload, _iso(start), _iso(end), "activity burst",
                       method="request bursts", point=entry.id)


# ``_active`` as a condition on a table's columns
_ACTIVE_SQL = {"engine_stats": " OR ".join(f"coalesce({c}, 0) <> 0" for c in
                                           ("prompt_tps", "gen_tps", "running", "waiting"))}


def _activity_files(records, engine: str) -> list[str]:
    """The logs of ``engine`` that show activity (``_active`` stats or batch lines), sorted."""
    recs = Records.of(records)
    return sorted(set().union(*(recs.files(kind, engine, _active, _ACTIVE_SQL.get(kind, "true"))
                                for kind in ACTIVITY)))


def engine_offsets(run: Run, records, points) -> dict[str, dt.timedelta]:
    """Per engine, the shift from its clients' clock to its logs' clock."""
    out = {}
    for engine in run.meta.engines:
        spans = [s for e in points if e.engine == engine.id
                 for s in [point_span(e.point)] if s]
        out[engine.id] = clock_offset(spans, _burst_spans(_bursts(records, engine.id)))
    return out


def find_windows(run: Run, records: dict[str, list[dict[str, Any]]], points: list,
                 notes: list[str] | None = None,
                 warmup: int | None = None) -> list[BenchWindow]:
    """Each single-point benchmark's window in its engine's logs; ``notes`` gets the
    warnings about logs and dumps that hold no benchmark or another request count. A log,
    launch configuration or dump of another model than the results is a ReportError.

    ``warmup``: the requests a declared client sends before its first point (run.yaml's
    ``client: warmup_requests``); given, an engine whose points record no time but count
    their requests is placed by request count (``count_placements``); None keeps the
    time- and burst-based placement only. Points of sweeps placed by request count follow
    the workload windows, each a window of its own with ``level="point"`` (ingest keeps them
    apart: the single-point analyses read the workload windows only)."""
    check_models(run, records, points, notes)
    offsets = engine_offsets(run, records, points)
    out = []
    alone = single_points(run, points)
    placed = [] if warmup is None else count_placements(run, records, points, warmup, notes)
    counted = {w.point: w for w in placed}
    for engine in run.meta.engines:
        bursts = _bursts(records, engine.id)
        used: set[int] = set()
        for entry in sorted((e for e in alone if e.engine == engine.id),
                            key=lambda e: e.workload):
            explicit = run.meta.windows.get(engine.id, {}).get(entry.workload)
            span = point_span(entry.point)
            if explicit:
                out.append(BenchWindow(engine.id, entry.workload, explicit["start"],
                                       explicit["end"], "run.yaml", method="run.yaml",
                                       point=entry.id))
            elif entry.id in counted:
                out.append(counted[entry.id])
            elif span:
                out.append(_date_window(entry, span, offsets[engine.id]))
            else:
                found = _burst_window(entry, bursts, used)
                if found:
                    out.append(found)
    out = _clipped(out)
    if notes is not None:
        notes.extend(unused_logs(run, records, points, out, offsets))
        notes.extend(count_notes(run, records, alone, out))
    alone_ids = {e.id for e in alone}
    return out + [dataclasses.replace(w, level="point") for w in placed
                  if w.point not in alone_ids]


def _timeless(run: Run, entries: list) -> bool:
    """Whether an engine's points are for count placement: none has a time of day or a
    run.yaml window, and each counts its requests."""
    stated = run.meta.windows
    return bool(entries) and all(
        point_span(e.point) is None and e.point.fields.get("completed") is not None
        and not stated.get(e.engine, {}).get(e.workload) for e in entries)


def count_placements(run: Run, records, points, warmup: int = 0,
                     notes: list[str] | None = None) -> list[BenchWindow]:
    """Every point's window found by request count (``countplace``), sweeps and repeats
    included, for each engine whose points record no time (``_timeless``) and that has
    one log with client requests; ``notes`` gets the points not placed and the requests
    after the last point's. The engine's points are taken in their files' order (by
    name), then by record line or ``where`` index."""
    out: list[BenchWindow] = []
    for engine in run.meta.engines:
        mine = [e for e in points if e.engine == engine.id]
        if not _timeless(run, mine):
            continue
        logs = _activity_files(records, engine.id)
        if len(logs) != 1:
            continue
        file = logs[0]
        recs = Records.of(records)
        rows = [r for kind in recs for r in recs.rows(kind, file=file)]
        found, said = count_windows(file, scan_access(run.paths.root / file), rows, mine,
                                    warmup)
        by_id = {e.id: e for e in mine}
        out += [BenchWindow(engine.id, by_id[w.key].workload, w.start, w.end, COUNT_METHOD,
                            method=COUNT_METHOD, file=w.file, first_line=w.first_line,
                            last_line=w.last_line, point=w.key) for w in found]
        if notes is not None:
            notes.extend(said)
    return out


def _clipped(windows: list[BenchWindow]) -> list[BenchWindow]:
    """A window found from a result's date keeps a margin after its end for a late stats
    line; where the engine's next benchmark starts inside that margin, the window ends the
    second before, so no record of the next benchmark is counted in this one. Windows that
    run.yaml states are kept as stated."""
    out = []
    for w in windows:
        later = [x.start for x in windows if x.engine == w.engine and x.start > w.start]
        if later and w.source not in ("run.yaml", COUNT_METHOD) and min(later) <= w.end:
            cut = _ts(min(later)) - dt.timedelta(seconds=1)
            w = dataclasses.replace(w, end=max(w.start, _iso(cut)))
        out.append(w)
    return out


def check_windows(run: Run, ing: Ingested) -> None:
    """A benchmark whose engine has a log but no window found is worth stopping for."""
    sweeps = {w.id for w in run.meta.workloads if w.is_sweep}
    count = Counter((p["engine"], p["workload"]) for p in ing.points)
    for engine in run.meta.engines:
        recs = Records.of(ing.records)
        has_log = any(True for k in ("engine_stats", "prefill_batch")
                      for _ in recs.rows(k, engine=engine.id))
        if not has_log:
            continue
        for p in ing.points:
            if p["engine"] != engine.id or p["workload"] in sweeps or \
                    count[(p["engine"], p["workload"])] != 1:
                continue
            if not any(w.engine == engine.id and w.workload == p["workload"]
                       for w in ing.windows):
                raise ReportError(
                    f"cannot find the {p['workload']} benchmark in {engine.id}'s log",
                    path=p["file"],
                    hint=f"give its time span in run.yaml: windows: {{{engine.id}: "
                         f"{{{p['workload']}: {{start: ..., end: ...}}}}}}")


# --- which model ----------------------------------------------------------------------
_SPLIT = re.compile(r"[-_.\s]+")


def _tokens(name: str) -> list[str]:
    last = name.strip().rstrip("/").replace("\\", "/").rsplit("/", 1)[-1]
    return [t for t in _SPLIT.split(last.lower()) if t]


def same_model(a: str, b: str) -> bool:
    """Two names of one model, leniently: case, a path's or ``org/name``'s last part, and
    separators do not count, and a name may be the start of the other ("tiny" is
    "Tiny-MoE"); "Qwen3-8B" and "Qwen3-32B" differ.

    >>> same_model("/models/Qwen3-32B", "Qwen/qwen3-32b"), same_model("Qwen3-8B", "Qwen3-32B")
    (True, False)
    """
    x, y = _tokens(a), _tokens(b)
    if not x or not y:
        return True
    n = min(len(x), len(y))
    return x[:n] == y[:n]


def _names(value: Any) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return []


def served_names(rec: dict[str, Any]) -> list[str]:
    """The model names a server_args, launch_config or metric record says it serves."""
    if rec["kind"] == "metric":
        labels = rec.get("labels")
        labels = json.loads(labels) if isinstance(labels, str) else (labels or {})
        return _names(labels.get("model_name"))
    table = rec.get("args") if rec["kind"] == "server_args" else rec.get("flags")
    if not isinstance(table, dict):
        return []
    out = [n for key in ("served_model_name", "model", "model_tag", "model_path")
           for n in _names(table.get(key))]
    positional = table.get("_positional") or []
    if positional[:1] == ["serve"] and len(positional) > 1:
        out.append(str(positional[1]))
    return out


_WHAT = {"server_args": "this log", "launch_config": "this launch configuration",
         "metric": "this /metrics dump"}


def check_models(run: Run, records, points, notes: list[str] | None = None) -> None:
    """Each log, launch configuration and /metrics dump serves the model the results of
    its engine record; another one stops the build with both names and both files. Where
    run.yaml states the engine's benchmark windows, the user has said which spans of its
    logs are the benchmarks': then it is a warning."""
    for engine in run.meta.engines:
        clients = [(name.strip(), e.file.rel) for e in points
                   if e.engine == engine.id and e.point.model
                   for name in e.point.model.split(", ") if name.strip()]
        if not clients:
            continue
        served: dict[tuple[str, str], list[str]] = {}
        for kind in _WHAT:
            for r in Records.of(records).rows(kind, engine=engine.id):
                served.setdefault((r["file"], kind), []).extend(served_names(r))
        for (file, kind), names in sorted(served.items()):
            if not names or any(same_model(s, c) for s in names for c, _ in clients):
                continue
            name, where = clients[0]
            message = (f"{_WHAT[kind]} serves {names[0]}, but the results record {name} "
                       f"({where})")
            if run.meta.windows.get(engine.id) and notes is not None:
                notes.append(f"{file}: {message}; run.yaml states {engine.id}'s benchmark "
                             "windows, so its records inside them are used")
                continue
            hint = f"move it out of raw/{engine.id}/ if it belongs to another run"
            if kind != "metric":
                hint += ("; if it is this run's server under another name, state each "
                         f"benchmark's span in it in run.yaml (windows: {{{engine.id}: "
                         "{<workload>: {start: …, end: …}}})")
            raise ReportError(message, path=file, hint=hint)


# --- logs of another time ----------------------------------------------------------------
def _file_spans(records, engine: str) -> dict[str, tuple[dt.datetime, dt.datetime]]:
    """Each log's and dump's first and last time."""
    spans: dict[str, tuple[str, str]] = {}
    recs = Records.of(records)
    for kind in recs:
        if kind == "launch_config":
            continue
        for file, (first, last) in recs.ts_range_by_file(kind, engine).items():
            a, b = spans.get(file, (first, last))
            spans[file] = (min(a, first), max(b, last))
    return {f: (_ts(a), _ts(b)) for f, (a, b) in spans.items()}


def unused_logs(run: Run, records, points, windows: list[BenchWindow],
                offsets: dict[str, dt.timedelta]) -> list[str]:
    """A warning for every log and dump whose time span holds no benchmark's time."""
    notes = []
    for engine in run.meta.engines:
        bench = {(_ts(w.start), _ts(w.end)) for w in windows if w.engine == engine.id}
        off = offsets.get(engine.id, dt.timedelta(0))
        placed = {w.workload for w in windows if w.engine == engine.id}
        # the points without a window of their own (sweeps, repeats): their recorded times
        bench |= {(a + off, b + off) for e in points
                  if e.engine == engine.id and e.workload not in placed
                  for a, b in [point_span(e.point) or (None, None)] if a}
        if not bench:
            continue          # no benchmark time to compare with
        bench = sorted(bench)
        for file, (first, last) in sorted(_file_spans(records, engine.id).items()):
            if any(a <= last and b >= first for a, b in bench):
                continue
            shown = ", ".join(_span_text(a, b) for a, b in bench[:3]) + \
                (", …" if len(bench) > 3 else "")
            notes.append(f"{file}: its lines span {_span_text(first, last)}, no benchmark's "
                         f"time ({shown}) lies in it; its runtime records are not used for "
                         "any benchmark")
    return notes


# --- request counts ----------------------------------------------------------------------
def access_lines(path, known: Iterable[tuple[int, str]]) -> list[str]:
    """The time of every generation request's access line in a log: its own time stamp
    (SGLang), else that of the next record of the file (vLLM's lines carry none; the last
    record's after the last one). ``known``: (line, ts) of the file's records that have a
    time stamp, ascending; taken as it is needed."""
    out: list[str | int] = []

    def scan(whole: bytes, number: int) -> int:
        at = 0
        for m in _ACCESS.finditer(whole):
            number += whole.count(b"\n", at, m.start())
            at = m.start()
            out.append(m[1].decode().replace(" ", "T") if m[1] else number)
        return number + whole.count(b"\n", at)

    number, carry = 1, b""
    with open(path, "rb") as fh:
        while data := fh.read(READ_BLOCK):
            data = carry + data
            cut = data.rfind(b"\n") + 1
            number = scan(data[:cut], number)
            carry = data[cut:]
    scan(carry, number)
    return _stamped(out, iter(known))


def _stamped(out: list[str | int], known: Iterator[tuple[int, str]]) -> list[str]:
    """``out`` with each line number (ascending) replaced by the time stamp of the first
    known line at or after it, else the last known one; dropped when none is known.
    ``known`` is not read when every line has its own time."""
    if all(isinstance(item, str) for item in out):
        return out
    current = next(known, None)
    for i, item in enumerate(out):
        if isinstance(item, int):
            while current is not None and current[0] < item:
                ahead = next(known, None)
                if ahead is None:
                    break
                current = ahead
            out[i] = current[1] if current is not None else None
    return [t for t in out if t is not None]


def _prefill_requests(rows) -> tuple[int, int] | None:
    """SGLang's Prefill lines: the sum of #new-seq counts a request once per chunk, so it
    is the most; a full batch may hold one unfinished chunk, so the least is that sum less
    the full batches."""
    if not rows:
        return None
    most = sum(r.get("new_seq") or 0 for r in rows)
    full = max(r.get("new_token") or 0 for r in rows)
    least = most - sum(1 for r in rows if full and (r.get("new_token") or 0) >= full)
    return max(least, 0), most


def _requests_seen(w: BenchWindow, access: list[str], prefill) -> tuple[int, int, str] | None:
    """What the log saw in the window: access lines, else ``prefill(start, end)``'s rows."""
    if access:
        n = sum(1 for t in access if w.start <= t <= w.end)
        return n, n, "access lines"
    found = _prefill_requests(prefill(w.start, w.end))
    return (*found, "#new-seq of the Prefill lines") if found else None


def count_notes(run: Run, records, alone: list, windows: list[BenchWindow]) -> list[str]:
    """A warning where the requests a log saw in a window differ from the result's count
    (completed + failed) by more than the tolerance; the log may see up to the
    concurrency more (requests still running when a timed benchmark ends)."""
    notes = []
    for engine in run.meta.engines:
        recs = Records.of(records)
        for file in _activity_files(recs, engine.id):
            access = access_lines(run.paths.root / file, recs.lines_of(file))

            def prefill(start: str, end: str, file: str = file) -> list[dict[str, Any]]:
                return list(recs.rows("prefill_batch", file=file, window=(start, end)))
            for w in (w for w in windows if w.engine == engine.id
                      and w.method != COUNT_METHOD):      # counted: exact by construction
                entry = next((e for e in alone if e.engine == engine.id
                              and e.workload == w.workload), None)
                note = _count_note(file, w, entry, _requests_seen(w, access, prefill))
                if note:
                    notes.append(note)
    return notes


def _count_note(file: str, w: BenchWindow, entry, seen) -> str | None:
    if entry is None or seen is None:
        return None
    fields = entry.point.fields
    done = fields.get("completed")
    if done is None:
        return None
    n = int(done) + int(fields.get("failed") or 0)
    least, most, what = seen
    if most == 0:
        return None           # nothing of this log in the window: another log holds it
    conc = fields.get("max_concurrency") or entry.load.max_concurrency or 0
    slack = max(2.0, COUNT_TOLERANCE * n)
    if most >= n - slack and least <= n + slack + conc:
        return None
    saw = f"{least}" if least == most else f"{least}–{most}"
    return (f"{file}: the log saw {saw} requests ({what}) in the {w.workload} benchmark's "
            f"window {w.start}–{w.end}, but the result records {n} (completed + failed) "
            f"({entry.file.rel})")


def attach_notes(summaries: list[dict[str, Any]], notes: list[str]) -> None:
    """Each note to the summary of the file it names (so it reaches ``make check`` and the
    report's warnings)."""
    for note in notes:
        file = note.split(": ", 1)[0]
        host = next((s for s in summaries if s["file"] == file), None)
        if host is not None and note not in host["warnings"]:
            host["warnings"].append(note)
