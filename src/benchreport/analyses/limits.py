"""What one run cannot tell, computed from its files: how many runs there were, whether the
engines were warm, how many requests a percentile rests on, the time runtime events cost,
the KV capacity each engine had, and whether speculative decoding could pay off.

Each limit is a figure (with its inputs) and, where it applies, a row of the caveats table.
The rows carry codes and parameters; the report words them from its catalogues.
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.records import Ingested, Run
from ..core.tables import input_checksum
from ..core.verdicts import NO, YES

# Fewer requests than this and p99 (linear interpolation) lies between the two largest.
P99_MIN_REQUESTS = 100
# Accepted length (bonus token included) below this: drafts almost never accepted, so the
# draft and verify work of every step buys next to nothing.
SPEC_USELESS_BELOW = 1.1
ACTIVITY = ("engine_stats", "prefill_batch", "decode_batch")


@dataclass
class Limit:
    """One row of the caveats table about what the run cannot tell."""

    id: str                                   # catalogue key: limit.<id> / why.<id>
    params: dict[str, Any] = field(default_factory=dict)   # figure ids by placeholder
    workload: str | None = None
    engine: str | None = None
    evidence: list[str] = field(default_factory=list)


def repeats(run: Run, ing: Ingested) -> tuple[list[Figure], list[Limit]]:
    """Runs per engine, workload and load: the fewest any of them has (one when the run
    declares no repeats and each has one result). A limit only when that is one."""
    path = run.paths.data / "run.yaml"
    src = Source(path=run.paths.rel(path), sha256=input_checksum(run, path), key="workloads")
    count: dict[tuple, int] = {}
    for p in ing.points:
        key = (p["engine"], p["workload"], p.get("variant") or "", p["load"])
        count[key] = count.get(key, 0) + 1
    fewest = min(count.values(), default=1)
    sources = (src,) + tuple(Source(path=p["file"], sha256=p["sha256"], key=p.get("where"))
                             for p in ing.points)
    fig = figure(ids.REPEATS, fewest, "count", said("limits.repeats"),
                 sources=sources, decimals=0)
    # a run of server files only ran no benchmark: it has no runs to count
    single = fewest == 1 and not run.meta.server_only
    return [fig], ([Limit("single_run", {"n": fig.id})] if single else [])


def warmup(run: Run, ing: Ingested) -> tuple[list[Figure], list[Limit]]:
    """Engine activity between the server start in effect and the first benchmark."""
    figures, rows = [], []
    for e in run.meta.engines:
        mine = sorted((w for w in ing.windows + ing.point_windows if w.engine == e.id),
                      key=lambda w: w.start)
        starts = sorted((r for r in ing.records.get("server_args", []) if r["engine"] == e.id
                         and r.get("ts") and mine and r["ts"] <= mine[0].start),
                        key=lambda r: r["ts"])
        if not mine or not starts:
            continue
        start, first = starts[-1], mine[0]
        before = [(start["ts"], first.start), ("", first.start)]     # the ends: inclusive
        busy = [r for k in ACTIVITY for r in ing.rows(k, engine=e.id, window=before[0])
                if r["ts"] < first.start and _active(r)]
        last = max((r for k in ACTIVITY for r in ing.rows(k, engine=e.id, window=before[1])
                    if r["ts"] < first.start), key=lambda r: r["line"], default=start)
        fid = ids.limits_engine(e.id, "warmup_records")
        figures.append(figure(
            fid, len(busy), "count",
            said("limits.warmup", start=start["line"], workload=first.workload,
                 at=first.start[11:], last=last["line"]),
            sources=(Source(path=start["file"], sha256=start["sha256"],
                            lines=(int(start["line"]), int(last["line"]))),), decimals=0,
            engine=e.id, first_workload=first.workload))
        if not busy:
            rows.append(Limit("no_warmup", {"n": fid}, engine=e.id,
                              evidence=[f"{start['file']}:{start['line']}"]))
    return figures, rows


def _active(r: dict) -> bool:
    if r["kind"] == "engine_stats":
        return float(r.get("prompt_tps") or 0) > 0 or float(r.get("gen_tps") or 0) > 0
    return True


def few_requests(run: Run, ing: Ingested) -> tuple[list[Figure], list[Limit]]:
    """How many requests each percentile rests on (the counts are the latency notebook's
    ``latency.<w>.<e>.requests``)."""
    small = [e for e in ing.results if e.completed < P99_MIN_REQUESTS]
    if not small:
        return [], []
    first = small[0]
    n_id = ids.latency_run(first.workload, first.engine, "requests")
    return [], [Limit("p99_is_max", {"n": n_id},
                      evidence=[f"{e.file.rel}:{e.line}" for e in small[:2]])]


def prompt_steps(n: int, input_len: int, budget: int, per_running: int) -> list[int] | None:
    """The engine step (counted from 1) that completes each of ``n`` equal prompts, served
    first come first served in chunks of a ``budget`` of tokens per step, from which every
    request already past its prompt takes ``per_running`` tokens (vLLM V1 schedules running
    requests' decode tokens, speculative drafts included, before waiting prefills; SGLang's
    chunked prefill runs before decode resumes: 0). None when no prefill token fits a step.

    >>> prompt_steps(3, 65536, 32768, 8)      # the second prompt spills into a third step
    [2, 5, 7]
    >>> prompt_steps(3, 65536, 32768, 0)
    [2, 4, 6]
    """
    done: list[int] = []
    left, step = input_len, 0
    while len(done) < n:
        step += 1
        room = budget - per_running * len(done)
        if room <= 0:
            return None
        while room > 0 and len(done) < n:
            take = min(room, left)
            room, left = room - take, left - take
            if left == 0:
                done.append(step)
                left = input_len
    return done


@dataclass(frozen=True)
class Stall:
    """What the first tokens say about the time runtime events cost (``stall_estimate``)."""

    hit: int              # gaps between successive first tokens that overlap the events
    hit_steps: int        # engine steps those gaps span
    typical_gap: float    # median of the other gaps
    step_s: float         # median time per engine step over the other gaps
    lost: float           # the overlapping gaps' time beyond their steps at ``step_s``


def stall_estimate(ttfts: list[float], lo: float, hi: float,
                   steps: list[int] | None) -> Stall | None:
    """The time events from ``lo`` to ``hi`` seconds into the run cost, from the sorted
    first-token times ``ttfts`` of requests all sent at the start.

    Each gap between successive first tokens spans the engine steps ``steps`` says (the
    step completing each prompt, ``prompt_steps``); without them, one step per gap. The
    gaps that overlap the events are set against the time the same steps take in the other
    gaps (median per step): a prompt that decode tokens pushed into one more step of the
    budget costs that step, and the step is the scheduler's, not the events'."""
    if steps is None or len(steps) != len(ttfts):
        steps = list(range(1, len(ttfts) + 1))
    bounds = [0.0] + list(ttfts)
    counts = [b - a for a, b in zip([0] + steps, steps, strict=False)]
    gaps = list(zip(bounds, bounds[1:], counts, strict=False))
    hit = [g for g in gaps if g[0] <= hi and g[1] >= lo]
    rest = [g for g in gaps if not (g[0] <= hi and g[1] >= lo)]
    per_step = [(b - a) / s for a, b, s in rest if s > 0]
    if not hit or len(rest) < 2 or not per_step:
        return None
    step_s = statistics.median(per_step)
    lost = sum((b - a) - s * step_s for a, b, s in hit)
    return Stall(hit=len(hit), hit_steps=sum(s for _, _, s in hit),
                 typical_gap=statistics.median(b - a for a, b, _ in rest), step_s=step_s,
                 lost=max(0.0, lost))


def _budget(ing: Ingested, engine: str) -> tuple[int, int, dict] | None:
    """The engine's token budget per step and what each running request takes from it, with
    the record that says so: vLLM's max_num_batched_tokens, which running requests' decode
    tokens (one plus the drafts) share; SGLang's chunked_prefill_size, for prefill alone."""
    from .spec import draft_tokens

    for rec in reversed(ing.records.get("server_args", [])):
        if rec["engine"] != engine:
            continue
        args = rec.get("args") or {}
        if args.get("max_num_batched_tokens"):
            drafts = draft_tokens(ing, engine)
            return int(args["max_num_batched_tokens"]), 1 + (drafts[0] if drafts else 0), rec
        if args.get("chunked_prefill_size"):
            return int(args["chunked_prefill_size"]), 0, rec
    return None


def event_stall(run: Run, ing: Ingested, event_windows: dict[tuple[str, str], tuple[str, str]]
                ) -> tuple[list[Figure], list[Limit]]:
    """Time the first requests lost while runtime events ran, from the gaps between
    successive first tokens that overlap the events, against the time the same engine steps
    take in the other gaps (``stall_estimate``).

    ``event_windows`` maps (engine, workload) to the first and last event's timestamp.
    Only workloads whose requests were all sent at the start are measured (the gaps are
    then the engine's, not the client's)."""
    figures, rows = [], []
    for (engine, workload), (first_ts, last_ts) in sorted(event_windows.items()):
        entry = next((r for r in ing.results if r.engine == engine and r.workload == workload),
                     None)
        window = next((w for w in ing.windows if w.engine == engine and w.workload == workload),
                      None)
        w = run.meta.workload(workload)
        ttfts = sorted(entry.seconds("ttft_ms")) if entry else []       # successes only
        if not window or len(ttfts) < 4 or w.num_prompts > w.concurrency:
            continue
        t0 = dt.datetime.fromisoformat(window.start)
        lo = (dt.datetime.fromisoformat(first_ts) - t0).total_seconds()
        hi = (dt.datetime.fromisoformat(last_ts) - t0).total_seconds()
        budget = _budget(ing, engine)
        steps = prompt_steps(len(ttfts), w.input_tokens, *budget[:2]) if budget else None
        est = stall_estimate(ttfts, lo, hi, steps)
        if est is None:
            continue
        figures += _stall_figures(entry, budget, steps, est, lo, hi, ttfts,
                                  {"engine": engine, "workload": workload})
        stall = partial(ids.limits_stall, workload, engine)
        rows.append(Limit("event_stall", {"first": stall("first_ttft_s"),
                                          "second": stall("second_gap_s"),
                                          "typical": stall("typical_gap_s"),
                                          "gaps": stall("stall_gaps"),
                                          "steps": stall("stall_steps"),
                                          "step": stall("step_s"),
                                          "lost": stall("stall_s")},
                          workload=workload, engine=engine,
                          evidence=[f"{entry.file.rel}:{entry.line}"]))
    return figures, rows


def _stall_figures(entry, budget, steps, est: Stall, lo: float, hi: float,
                   ttfts: list[float], ctx: dict) -> list[Figure]:
    stall = partial(ids.limits_stall, ctx["workload"], ctx["engine"])
    src = (Source(path=entry.file.rel, sha256=entry.file.sha256, key="ttfts",
                  lines=(entry.line,)),)
    if steps is not None and budget is not None:
        rec = budget[2]
        how_steps = said("limits.stall_steps", budget=budget[0], decode=budget[1])
        step_src = src + (Source(path=rec["file"], sha256=rec["sha256"],
                                 lines=(int(rec["line"]),)),)
    else:
        how_steps = said("limits.stall_steps_unknown")
        step_src = src
    return [
        figure(stall("first_ttft_s"), ttfts[0], "s", said("limits.first_ttft"), sources=src,
               decimals=1, **ctx),
        figure(stall("second_gap_s"), ttfts[1] - ttfts[0], "s", said("limits.second_gap"),
               sources=src, decimals=1, **ctx),
        figure(stall("typical_gap_s"), est.typical_gap, "s", said("limits.typical_gap"),
               sources=src, decimals=1, **ctx),
        figure(stall("stall_gaps"), est.hit, "count", said("limits.stall_gaps"), sources=src,
               decimals=0, **ctx),
        figure(stall("stall_steps"), est.hit_steps, "count", how_steps, sources=step_src,
               decimals=0, **ctx),
        figure(stall("step_s"), est.step_s, "s", said("limits.step"),
               sources=step_src, decimals=2, **ctx),
        figure(stall("stall_s"), est.lost, "s",
               said("limits.stall", gaps=est.hit, lo=f"{max(lo, 0):.0f}", hi=f"{hi:.0f}",
                    steps=est.hit_steps),
               sources=src, decimals=1,
               depends_on=(stall("step_s"), stall("stall_steps"), stall("stall_gaps")), **ctx),
    ]


def kv_capacity(run: Run, ing: Ingested, dcp: dict[str, str]) -> tuple[list[Figure],
                                                                          list[Limit]]:
    """KV-cache capacity each engine logged, against what the workloads need at once."""
    figures, rows = [], []
    caps: dict[str, Figure] = {}
    for e in run.meta.engines:
        recs = [r for k in ("kv_cache", "capacity") for r in ing.records.get(k, [])
                if r["engine"] == e.id and r.get("kv_tokens") not in (None, "")]
        if not recs:
            continue
        rec = recs[-1]
        fid = ids.limits_engine(e.id, "kv_capacity_tokens")
        caps[e.id] = figure(fid, int(float(rec["kv_tokens"])), "tokens",
                            said("limits.kv_capacity"),
                            sources=(Source(path=rec["file"], sha256=rec["sha256"],
                                            lines=(int(rec["line"]),)),),
                            decimals=0, engine=e.id)
        figures.append(caps[e.id])
    single = [w for w in run.meta.workloads if None not in (w.concurrency, w.num_prompts,
                                                            w.output_tokens)]
    if not caps or not single:
        return figures, rows
    longest = max(single, key=lambda w: w.input_tokens)
    need = min(longest.concurrency, longest.num_prompts) * (longest.input_tokens
                                                             + longest.output_tokens)
    need_id = ids.limits_workload(longest.id, "kv_needed_tokens")
    figures.append(figure(need_id, need, "tokens", said("limits.kv_needed"),
                          decimals=0, depends_on=(ids.workload(longest.id, "input_tokens"),
                                                  ids.workload(longest.id, "output_tokens")),
                          workload=longest.id))
    if len(caps) >= 2:
        (a, fa), (b, fb) = sorted(caps.items(), key=lambda kv: kv[1].value)[:1] + \
            sorted(caps.items(), key=lambda kv: kv[1].value)[-1:]
        ratio_id = ids.kv_capacity_ratio(b, a)
        figures.append(figure(ratio_id, fb.value / fa.value, "x",
                              said("limits.kv_ratio"), decimals=2,
                              depends_on=(fb.id, fa.id)))
        fits = all(f.value >= need for f in caps.values())
        fits_id = ids.KV_FITS
        figures.append(figure(fits_id, YES if fits else NO, "verdict",
                              said("limits.kv_fits"),
                              depends_on=(need_id, *(f.id for f in caps.values()))))
        split = {e: v for e, v in dcp.items() if v.split(" ")[0] not in ("1", "")}
        if split and fb.value / fa.value >= 1.5:
            rows.append(Limit("kv_capacity", {"big": fb.id, "small": fa.id, "ratio": ratio_id,
                                              "need": need_id, "fits": fits_id,
                                              "big_engine": b, "small_engine": a},
                              evidence=[f"{s.path}:{s.lines[0]}" for f in (fb, fa)
                                        for s in f.sources]))
    return figures, rows


def spec_overhead(run: Run, spec: list[Figure], differing: set[str]) -> tuple[list[Figure],
                                                                              list[Limit]]:
    """Speculative decoding that accepts next to nothing is pure overhead; when the engines
    apply it differently, that confounds any attribution of the difference to one setting."""
    lens = {f.id: f for f in spec if f.id.endswith(".accept_len")
            and isinstance(f.value, int | float)}
    if not lens:
        return [], []
    worst = max(lens.values(), key=lambda f: f.value)
    fid = ids.SPEC_MAX_ACCEPT_LEN
    fig = figure(fid, worst.value, "tokens/step", said("limits.spec_max", one=1),
                 decimals=2, depends_on=tuple(sorted(lens)))
    rows = []
    if worst.value < SPEC_USELESS_BELOW:
        rows.append(Limit("spec_overhead", {"max": fid, "applied_differently":
                                            YES if differing & {"verification", "speculative",
                                                                "draft_model"} else NO}))
    return [fig], rows
