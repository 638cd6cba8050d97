"""Where each request's time went: one row per request, from the client's per-request rows
and what the engine's log says about prefill.

Per request (times in s, from the request's arrival at the client):

- arrival at the client: the client's send time (``start_s``); when the file has none and
  the client sent every prompt at once (num_prompts ≤ concurrency), 0 with that basis; else
  not measured, and the row's times are from its own send only;
- arrival at the engine: neither engine's log has a per-request arrival line, so it is
  unplaced;
- own prefill: SGLang, from the request's prefill batches (``prefill.chunk_sequences``: its
  tokens in each batch ÷ the batch's logged throughput, so a shared batch counts its share);
  vLLM, whose log has only interval lines, the request's input tokens ÷ the engine's full
  prefill speed (the highest interval prompt throughput in the window), an estimate; else
  unplaced. Time before own prefill = TTFT − own prefill (at least 0): a residual that holds
  the engine's queue, the time before the request reached the engine and, for vLLM's
  estimate, any difference between the request's actual prefill and the fastest interval
  average (which can err either way);
- first token: TTFT; a stall before token 2: the first gap between chunks when it exceeds
  ``STALL_FACTOR`` × the request's median gap; decode: to the finish, which is E2E latency,
  or TTFT + Σ gaps where the file has no E2E (SGLang's JSON Lines);
- prefill-overlapping gaps: gaps after token 2 above the same threshold that began while
  another request had not yet received its first token (its prompt was waiting or
  prefilling); a first gap that does so is the request's stall, counted there.

The client's mean TPOT is decomposed per request, TPOT_i = Σ gaps_i ÷ (n_i − 1) = (stall +
prefill-overlapping gaps + the other gaps) ÷ (n_i − 1), each part's mean over the requests in ms
per token, set against the steady decode time per token (``decode.steady_phase``); the rest
is acceptance and other effects. The parts add up to the client's recorded mean TPOT: the
closure is a figure of its own.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass
from functools import partial

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import Said, said
from ..core.records import Ingested, PointResult, RawFile, Run
from ..core.verdicts import (
    CLIENT_TIMES,
    FOUND,
    NOT_MEASURED,
    PHASE_UNPLACED,
    PREFILL_CHUNKS,
    PREFILL_ESTIMATE,
    SENT_AT_ONCE,
    STALL_FACTOR,
)

E2EL, SUMMED = "e2el", "ttft + sum of gaps"
COLUMNS = ["engine", "workload", "point", "index", "arrival_s", "arrival_basis",
           "engine_arrival_s", "wait_s", "prefill_s", "prefill_basis", "first_token_s",
           "stall_s", "second_token_s", "decode_s", "finish_s", "finish_basis",
           "shared_gaps", "shared_s", "shared_at_s", "shared_len_s", "output_tokens",
           "tpot_ms", "unplaced"]


@dataclass(frozen=True)
class Prefill:
    """What the log says about each request's own prefill: seconds by request index (in the
    file's order), how, and the log lines it rests on."""

    seconds: dict[int, float]
    basis: str
    sources: tuple[Source, ...] = ()
    how: Said | None = None
    substituted: int = 0     # SGLang batches timed at the prefill-only speed (their logged
                             # interval held decode or idle time)


NO_PREFILL = Prefill({}, PHASE_UNPLACED, (), said("timeline.no_prefill"))
SHARED_WINDOW = Prefill({}, PHASE_UNPLACED, (), said("timeline.shared_window"))


# --- which points ---------------------------------------------------------------------

@dataclass(frozen=True)
class TimelinePoint:
    """A point with per-request rows: its result, the file holding the rows, its row of the
    ``points`` table, and whether it is its engine and workload's only point (a sweep's or
    repeats' point is placed in the ids by ``at`` and reads no workload-wide log window)."""

    entry: PointResult
    rows: RawFile
    point: dict
    single: bool
    order: int = 0          # the point's place among the run's points

    @property
    def at(self) -> str | None:
        return None if self.single else ids.point_place(self.entry.point, self.entry.engine,
                                                        self.entry.workload)


def timeline_points(run: Run, ing: Ingested) -> list[TimelinePoint]:
    """Every point whose file has per-request rows with a TTFT, of any client: a workload's
    one point, and each point of a sweep or of repeats; with the file holding those rows."""
    by_point: dict[str, list[dict]] = {}
    for r in ing.requests:
        by_point.setdefault(r["point"], []).append(r)
    count: dict[tuple[str, str], int] = {}
    for p in ing.points:
        count[(p["engine"], p["workload"])] = count.get((p["engine"], p["workload"]), 0) + 1
    sweeps = {w.id for w in run.meta.workloads if w.is_sweep}
    out = []
    for order, p in enumerate(ing.points):
        if p.get("duration") is None or p.get("completed") is None:
            continue
        file = RawFile(path=run.paths.root / p["file"], rel=p["file"], sha256=p["sha256"])
        entry = PointResult.from_rows(p, by_point.get(p["point"], []), file)
        if entry.values("ttft_ms"):
            single = p["workload"] not in sweeps and count[(p["engine"], p["workload"])] == 1
            out.append(TimelinePoint(entry, requests_file(run, p), p, single, order))
    return out


def requests_file(run: Run, p: dict) -> RawFile:
    """The file holding a point's per-request rows: the result file itself (vLLM, SGLang),
    or, for a client that writes them apart (AIPerf's ``profile_export.jsonl``), the JSON
    Lines file among the other views of the same run."""
    rel = next((f for f in (p.get("also") or []) if str(f).endswith(".jsonl")), None)
    if rel is None or str(p["file"]).endswith(".jsonl"):
        return RawFile(path=run.paths.root / p["file"], rel=p["file"], sha256=p["sha256"])
    from ..core.tables import input_checksum

    path = run.paths.root / rel
    return RawFile(path=path, rel=rel, sha256=input_checksum(run, path))


def _prompts_and_concurrency(tp: TimelinePoint, workload) -> tuple[int | None, int | None]:
    """How many prompts the point sent and how many could be in flight: the workload's for
    its one point, the point's own (its requests, its load's concurrency) in a sweep."""
    if tp.single:
        return workload.num_prompts, workload.concurrency
    sent = tp.entry.completed + (tp.entry.failed or 0)
    return sent, tp.point.get("max_concurrency_target")


def arrivals(tp: TimelinePoint, workload) -> tuple[list[float | None], str]:
    """Each successful request's arrival at the client (s) and its basis."""
    ok = tp.entry.ok
    starts = [r.get("start_s") for r in ok]
    if starts and all(s is not None for s in starts):
        return [float(s) for s in starts], CLIENT_TIMES
    prompts, concurrency = _prompts_and_concurrency(tp, workload)
    if prompts is not None and concurrency is not None and prompts <= concurrency:
        return [0.0] * len(ok), SENT_AT_ONCE
    return [None] * len(ok), NOT_MEASURED


# --- own prefill ------------------------------------------------------------------------

def chunk_prefill(ing: Ingested, entry: PointResult, workload,
                  order: list[int]) -> Prefill | None:
    """SGLang: each request's tokens in each of its prefill batches ÷ the batch's logged
    throughput, summed; requests taken in admission order = ``order`` (file indexes by
    arrival). None when the engine logs no prefill batches."""
    from .prefill import chunk_sequences

    ok = entry.ok
    lengths = [int(ok[i].get("input_tokens") or workload.input_tokens or 0) for i in order]
    seqs = chunk_sequences(ing, entry.engine, entry.workload, lengths or None,
                           workload.input_tokens)
    if not seqs:
        return None
    speeds = prefill_speeds(seqs)
    seconds, lines, file, timed = {}, [], None, 0
    for c in (c for c in seqs if c.request <= len(order)):
        parts = _own_batches(c, speeds)
        if parts:
            seconds[order[c.request - 1]] = sum(x for x, _, _ in parts)
            lines += [b.line for _, b, _ in parts]
            timed += sum(1 for _, _, swapped in parts if swapped)
            file = parts[0][1]
    if file is None:
        return None
    exact = all(c.exact for c in seqs)
    return Prefill(seconds, PREFILL_CHUNKS, (Source(path=file.file, sha256=file.sha256,
                                            lines=tuple(sorted(set(lines)))),),
                   said("timeline.prefill_chunks", timed=timed,
                        approx="" if exact else said("timeline.approx")),
                   timed)


def prefill_speeds(seqs) -> dict[int | None, float]:
    """The median logged throughput of the batches whose interval was prefill only, holding
    one request's tokens, by that request's context before the batch (None: over all)."""
    by: dict[int | None, list[float]] = {}
    for c in seqs:
        for b in c.batches:
            s = b.share(c.request)
            if s is not None and b.tps and b.prefill_only and len(b.shares) == 1:
                by.setdefault(s.cached, []).append(float(b.tps))
                by.setdefault(None, []).append(float(b.tps))
    return {k: statistics.median(v) for k, v in by.items()}


def _own_batches(c, speeds: dict) -> list[tuple[float, object, bool]]:
    """(seconds, batch, timed at a substitute speed) of each prefill batch holding the
    request's tokens: its share of the batch's tokens ÷ the batch's logged throughput, or,
    where that throughput's interval held decode or idle time, ÷ the prefill-only speed at
    the same context."""
    out = []
    for b in c.batches:
        s = b.share(c.request)
        if s is None or not b.tps:
            continue
        speed = None if b.prefill_only else speeds.get(s.cached, speeds.get(None))
        out.append((s.tokens / float(speed or b.tps), b, speed is not None))
    return out


def rate_prefill(ing: Ingested, entry: PointResult) -> Prefill | None:
    """vLLM: input tokens ÷ the highest interval prompt throughput in the window (the
    engine's full prefill speed): an estimate, the log having no per-request lines."""
    stats = [r for r in ing.in_window("engine_stats", entry.engine, entry.workload)
             if r.get("prompt_tps") not in (None, "") and float(r["prompt_tps"]) > 0]
    if not stats:
        return None
    top = max(stats, key=lambda r: (float(r["prompt_tps"]), -int(r["line"])))
    rate = float(top["prompt_tps"])
    seconds = {i: float(r["input_tokens"]) / rate for i, r in enumerate(entry.ok)
               if r.get("input_tokens")}
    return Prefill(seconds, PREFILL_ESTIMATE, (Source(path=top["file"], sha256=top["sha256"],
                                              lines=(int(top["line"]),)),),
                   said("timeline.prefill_estimate", rate=f"{rate:,.1f}", line=top["line"]))


def own_prefill(ing: Ingested, tp: TimelinePoint, workload,
                starts: list[float | None]) -> Prefill:
    if not tp.single:
        return SHARED_WINDOW
    entry = tp.entry
    order = sorted(range(len(entry.ok)), key=lambda i: (starts[i] or 0.0, i))
    return (chunk_prefill(ing, entry, workload, order) or rate_prefill(ing, entry)
            or NO_PREFILL)


# --- one request ----------------------------------------------------------------------

def pending_spans(rows: list[dict]) -> list[tuple[float, float]]:
    """When each request's prompt was waiting or prefilling: from its arrival to its first
    token (placed requests only)."""
    return [(r["arrival_s"], r["first_token_s"]) for r in rows if r["arrival_s"] is not None]


def _overlaps(a: float, b: float, spans: list[tuple[float, float]]) -> bool:
    return any(lo < b and a < hi for lo, hi in spans)


def _shared_marks(start: float, gaps: list[float], limit: float,
                  spans: list[tuple[float, float]] | None) -> list[bool]:
    """Which gaps (s, from the first token at ``start``) exceed ``limit`` and began while
    another request's prompt was pending (none when the requests cannot be placed)."""
    if spans is None:
        return [False] * len(gaps)
    marks, t = [], start
    for g in gaps:
        marks.append(g > limit and _overlaps(t, t + g, spans))
        t += g
    return marks


def overlap_runs(start: float, gaps: list[float], marks: list[bool],
                 per_token: bool) -> list[tuple[float, float]]:
    """(start s, length s) of each prefill-overlapping gap after token 2. A client that
    divides a chunk's gap evenly over its tokens (``itl.per-token``) writes a chunk of k
    tokens as k equal entries: consecutive marked entries of one value are one chunk's gap.

    >>> overlap_runs(1.0, [10.0, 1525.0, 1525.0, 10.0], [False, True, True, False], True)
    [(1.01, 3.05)]
    >>> len(overlap_runs(1.0, [10.0, 1525.0, 1525.0], [False, True, True], False))
    2
    """
    ends = list(itertools.accumulate((g / 1000 for g in gaps), initial=start))
    out: list[tuple[float, float]] = []
    for i in range(1, len(gaps)):
        if not marks[i]:
            continue
        if per_token and marks[i - 1] and i > 1 and gaps[i] == gaps[i - 1] and out:
            out[-1] = (out[-1][0], round(out[-1][1] + gaps[i] / 1000, 9))
        else:
            out.append((round(ends[i], 9), round(gaps[i] / 1000, 9)))
    return out


def gap_split(row: dict, gaps: list[float], spans: list[tuple[float, float]] | None
              ) -> dict:
    """The request's stall before token 2, its prefill-overlapping gaps after token 2 and the
    rest (s)."""
    typical = statistics.median(gaps) / 1000 if gaps else 0.0
    limit = STALL_FACTOR * typical
    first = gaps[0] / 1000 if gaps else 0.0
    stall = first if gaps and first > limit else 0.0
    marks = _shared_marks(row["first_token_s"], [g / 1000 for g in gaps], limit, spans)
    shared = sum(g / 1000 for g, hit in zip(gaps[1:], marks[1:], strict=True) if hit)
    at = overlap_runs(row["first_token_s"], gaps, marks, row.get("per_token", False))
    return {"stall_s": stall, "shared_s": shared if spans is not None else None,
            "shared_gaps": len(at) if spans is not None else None,
            "first_shared": bool(marks and marks[0]), "shared_marks": marks,
            "shared_at_s": [a for a, _ in at], "shared_len_s": [n for _, n in at],
            "steady_s": sum(gaps) / 1000 - stall - shared,
            "typical_s": typical, "gap_s": [g / 1000 for g in gaps]}


def request_row(entry: PointResult, i: int, r: dict, arrival: float | None, basis: str,
                prefill: Prefill) -> dict:
    """The request's phases, before the gaps are split (``gap_split``)."""
    ttft = r["ttft_ms"] / 1000
    gaps = list(r.get("itl_ms") or [])
    own = prefill.seconds.get(i)
    finish = (r["e2el_ms"] / 1000, E2EL) if r.get("e2el_ms") is not None else \
        (ttft + sum(gaps) / 1000, SUMMED) if gaps else (None, NOT_MEASURED)
    base = arrival or 0.0
    unplaced = ["engine arrival"] \
        + (["own prefill", "time before own prefill"] if own is None else []) \
        + (["arrival"] if basis == NOT_MEASURED else []) \
        + (["finish"] if finish[0] is None else [])
    return {"engine": entry.engine, "workload": entry.workload, "point": entry.point,
            "index": int(r["index"]), "arrival_s": arrival, "arrival_basis": basis,
            "engine_arrival_s": None, "prefill_s": own,
            "wait_s": None if own is None else max(0.0, ttft - own),
            "prefill_basis": prefill.basis if own is not None else PHASE_UNPLACED,
            "first_token_s": base + ttft, "ttft_s": ttft,
            "finish_s": None if finish[0] is None else base + finish[0],
            "finish_basis": finish[1], "output_tokens": r.get("output_tokens"),
            "gaps_ms": gaps, "unplaced": ", ".join(unplaced),
            "per_token": entry.definitions.get("itl") == "itl.per-token"}


def complete(row: dict, split: dict) -> dict:
    """The row with its stall, token 2, decode and TPOT."""
    n = row["output_tokens"]
    second = row["first_token_s"] + split["stall_s"] if split["stall_s"] else None
    start_decode = second or row["first_token_s"]
    tpot = sum(split["gap_s"]) * 1000 / (n - 1) if n and n > 1 and split["gap_s"] else None
    return {**row, **split, "second_token_s": second, "tpot_ms": tpot,
            "decode_s": None if row["finish_s"] is None else row["finish_s"] - start_decode}


def point_rows(ing: Ingested, tp: TimelinePoint, workload) -> tuple[list[dict], Prefill]:
    starts, basis = arrivals(tp, workload)
    prefill = own_prefill(ing, tp, workload, starts)
    rows = [request_row(tp.entry, i, r, starts[i], basis, prefill)
            for i, r in enumerate(tp.entry.ok)]
    spans = pending_spans(rows) if basis != NOT_MEASURED else None
    return [complete(row, gap_split(row, row["gaps_ms"], spans)) for row in rows], prefill


# --- figures ----------------------------------------------------------------------------

def _result_source(entry: PointResult, rows: RawFile, key: str) -> Source:
    """Where a point's per-request list ``key`` (vLLM's name) is: its key in the result file,
    or the records of the JSON Lines file that holds the rows (``rows``)."""
    if rows.rel != entry.file.rel:
        return Source(path=rows.rel, sha256=rows.sha256, key="per-request records")
    return Source(path=entry.file.rel, sha256=entry.file.sha256, key=entry.key(key),
                  lines=(entry.line,) if entry.line else ())


def client_tpot(entry: PointResult) -> tuple[float, Source] | None:
    """The client's own mean TPOT: its mean TPOT, else its mean ITL where that is defined per
    request as (E2E − TTFT) ÷ (output tokens − 1) (AIPerf), with where it is."""
    for metric, code in (("tpot", None), ("itl", "itl.excl-first")):
        value = entry.stat(metric, "mean")
        if value is not None and (code is None or entry.definitions.get(metric) == code):
            key = entry.key(f"mean_{metric}_ms")
            return value, Source(path=entry.file.rel, sha256=entry.file.sha256, key=key,
                                 lines=(entry.line,) if entry.line else ())
    return None


def wait_figures(fid, ctx: dict, src_of, rows: list[dict],
                 prefill: Prefill) -> list[Figure]:
    placed = [r for r in rows if r["wait_s"] is not None and r["ttft_s"] > 0]
    res = src_of("ttfts")
    src = (res, *prefill.sources)
    out = [figure(id=fid("prefill_basis"), value=prefill.basis, unit="verdict",
                  sources=src, context=ctx, method=said("timeline.prefill_basis",
                                                        how=prefill.how))]
    if prefill.basis == PREFILL_CHUNKS:
        out.append(figure(id=fid("prefill_substituted"), value=prefill.substituted,
                          unit="count", decimals=0, sources=prefill.sources, context=ctx,
                          method=said("timeline.substituted")))
    if not placed:
        return out
    top = max(placed, key=lambda r: (r["wait_s"], -r["index"]))
    how = said("timeline.wait_how", zero=0, prefill=prefill.how)
    share = statistics.fmean(r["wait_s"] / r["ttft_s"] for r in placed)
    return out + [
        figure(id=fid("wait_share"), value=share, unit="fraction", decimals=3, sources=src,
               context=ctx, method=said("timeline.wait_share", n=len(placed), how=how)),
        figure(id=fid("longest_wait_s"), value=top["wait_s"], unit="s", decimals=1,
               sources=src, context={**ctx, "index": top["index"]},
               method=said("timeline.longest_wait", request=top["index"] + 1,
                           ttft=f"{top['ttft_s']:.3f}", how=how)),
        figure(id=fid("longest_wait_prefill_s"), value=top["prefill_s"], unit="s",
               decimals=2, sources=src, context={**ctx, "index": top["index"]},
               method=said("timeline.longest_wait_prefill", request=top["index"] + 1,
                           how=prefill.how)),
        figure(id=fid("longest_wait_request"), value=top["index"] + 1, unit="count",
               decimals=0, sources=(res,), context=ctx,
               method=said("timeline.longest_wait_request", base="1-based")),
    ]


def stall_figures(fid, ctx: dict, src_of, rows: list[dict]) -> list[Figure]:
    stalled = [r for r in rows if r["stall_s"]]
    src = (src_of("itls"), src_of("ttfts"))
    rule = said("timeline.stall_rule", factor=f"{STALL_FACTOR:g}")
    out = [figure(id=fid("stalls"), value=len(stalled), unit="count", decimals=0,
                  sources=src, context=ctx, method=said("timeline.stalls", rule=rule, two=2))]
    if not stalled:
        return out
    top = max(stalled, key=lambda r: (r["stall_s"], -r["index"]))
    at = top["second_token_s"] - (top["arrival_s"] or 0.0)
    c = {**ctx, "index": top["index"]}
    return out + [
        figure(id=fid("longest_stall_s"), value=top["stall_s"], unit="s", decimals=1,
               sources=src, context=c, method=said("timeline.longest_stall", two=2,
                                                   request=top["index"] + 1, rule=rule)),
        figure(id=fid("longest_stall_token2_s"), value=at, unit="s", decimals=1,
               sources=src, context=c, method=said("timeline.token2", two=2)),
    ]


def shared_figures(fid, ctx: dict, src_of, rows: list[dict]) -> list[Figure]:
    if any(r["shared_gaps"] is None for r in rows):
        return []
    gaps = [n for r in rows for n in r["shared_len_s"]]
    firsts = sum(1 for r in rows if r["first_shared"])
    src = (src_of("itls"), src_of("ttfts"))
    how = said("timeline.shared", two=2, factor=f"{STALL_FACTOR:g}", firsts=firsts)
    out = [figure(id=fid("shared_gaps"), value=len(gaps), unit="count", decimals=0,
                  sources=src, context={**ctx, "first_gaps": firsts}, method=how)]
    if gaps:
        out += [figure(id=fid("shared_gap_min_s"), value=min(gaps), unit="s", decimals=1,
                       sources=src, context=ctx, method=said("timeline.shortest", how=how)),
                figure(id=fid("shared_gap_max_s"), value=max(gaps), unit="s", decimals=1,
                       sources=src, context=ctx, method=said("timeline.longest", how=how))]
    return out


def tpot_figures(ing: Ingested, fid, ctx: dict, tp: TimelinePoint, src_of, workload,
                 rows: list[dict]) -> list[Figure]:
    """The client's mean TPOT as stall + prefill-overlapping gaps + the other gaps per token, the
    other gaps against the steady decode time per token, and the closure."""
    entry = tp.entry
    use = [r for r in rows if r["tpot_ms"] is not None]
    if not use or any(r["shared_s"] is None for r in use):
        return []

    def part(key: str) -> float:
        return statistics.fmean(r[key] * 1000 / (r["output_tokens"] - 1) for r in use)

    stall, shared, rest = part("stall_s"), part("shared_s"), part("steady_s")
    src = (src_of("itls"), src_of("output_lens"))
    def per(key: str) -> Said:
        return said(key, n=len(use), one=1, two=2)

    out = [
        figure(id=fid("tpot_stall_ms"), value=stall, unit="ms", decimals=1, sources=src,
               context=ctx, method=per("timeline.tpot_stall")),
        figure(id=fid("tpot_shared_ms"), value=shared, unit="ms", decimals=1, sources=src,
               context=ctx, method=per("timeline.tpot_shared")),
        figure(id=fid("tpot_gaps_ms"), value=rest, unit="ms", decimals=1, sources=src,
               context=ctx, method=per("timeline.tpot_gaps")),
        figure(id=fid("tpot_sum_ms"), value=stall + shared + rest, unit="ms", decimals=1,
               sources=src, context=ctx, method=per("timeline.tpot_sum")),
    ]
    client = client_tpot(entry)
    if client is not None:
        out.append(figure(
            id=fid("tpot_closure_ms"), value=client[0] - (stall + shared + rest), unit="ms",
            decimals=2, sources=(client[1], *src), context=ctx,
            depends_on=(fid("tpot_sum_ms"),),
            method=said("timeline.closure", tpot=f"{client[0]:.2f}", key=client[1].key)))
    # the steady decode phase is read per workload window: a sweep's point has none of its own
    return out + (_steady_parts(ing, fid, ctx, entry, workload, rest) if tp.single else [])


def _steady_parts(ing: Ingested, fid, ctx: dict, entry: PointResult, workload,
                  rest: float) -> list[Figure]:
    from .decode import steady_phase

    if workload.concurrency is None:
        return []
    n = min(workload.concurrency, workload.num_prompts or workload.concurrency)
    s = steady_phase(ing, entry.engine, entry.workload, n)
    if s.verdict != FOUND or not s.mean > 0:
        return []
    steady = 1000 * n / s.mean
    dep = (ids.decode(entry.workload, entry.engine, "ms_per_token"), fid("tpot_gaps_ms"))
    return [
        figure(id=fid("tpot_steady_ms"), value=steady, unit="ms", decimals=1,
               depends_on=dep[:1], context=ctx,
               method=said("timeline.steady", thousand=1000)),
        figure(id=fid("tpot_other_ms"), value=rest - steady, unit="ms", decimals=1,
               depends_on=dep, context=ctx,
               method=said("timeline.other")),
    ]


def _context(tp: TimelinePoint) -> dict:
    """The figures' context: engine and workload, and for a point of a sweep or of repeats
    what names it (its load, variant and run)."""
    ctx = {"engine": tp.entry.engine, "workload": tp.entry.workload}
    if tp.single:
        return ctx
    p = tp.point
    return {**ctx, "point": tp.entry.point, "order": tp.order, "load": p.get("load"),
            "variant": p.get("variant") or "", "repeat": int(p.get("repeat") or 1)}


def timeline(run: Run, ing: Ingested) -> tuple[list[dict], list[Figure]]:
    """Every request's timeline row, and per engine and workload the summary figures."""
    table, figures = [], []
    for tp in timeline_points(run, ing):
        entry = tp.entry
        src_of = partial(_result_source, entry, tp.rows)
        workload = run.meta.workload(entry.workload)
        rows, prefill = point_rows(ing, tp, workload)
        fid = partial(ids.timeline, entry.workload, entry.engine, at=tp.at)
        ctx = _context(tp)
        figures.append(figure(id=fid("requests"), value=len(rows), unit="count", decimals=0,
                              sources=(src_of("ttfts"),), context=ctx,
                              method=said("timeline.requests")))
        figures += wait_figures(fid, ctx, src_of, rows, prefill)
        figures += stall_figures(fid, ctx, src_of, rows)
        figures += shared_figures(fid, ctx, src_of, rows)
        figures += tpot_figures(ing, fid, ctx, tp, src_of, workload, rows)
        table += rows
    return table, figures


def table_rows(rows: list[dict]) -> list[dict]:
    """The rows as ``derived/tables/timeline.parquet`` stores them (``COLUMNS``)."""
    return [{c: r.get(c) for c in COLUMNS} for r in rows]
