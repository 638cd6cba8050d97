"""Decode scalability: the steady phase in which every request of a workload decodes.

Steady, from the engines' own lines inside the benchmark's window:
- vLLM stats line: Running = concurrency, Waiting = 0, prompt throughput 0 (no prefill in
  the interval);
- SGLang Decode line: #running-req = concurrency, #queue-req = 0, and no Prefill line since
  the previous Decode line (the interval the throughput covers).

What one record covers decides what "the mean over the run" is. A vLLM stats line covers a
fixed time (10 s by default), so the arithmetic mean of the records' throughputs is total
tokens over total time. An SGLang Decode line covers a fixed number of decode steps
(``--decode-log-interval``, default 40), not a fixed time: a fast line covers less time than
a slow one. Total tokens over total time is then the token-weighted harmonic mean,
Σw ÷ Σ(w ÷ rate), with w ∝ tokens per line = steps × running requests × accept len (1 when
speculative decoding is not logged).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.records import Ingested, Run
from ..core.verdicts import FOUND, NO_LOG, NONE

TIME, STEPS = "time", "steps"      # what one record covers: a fixed time or fixed steps


def time_weighted_mean(values: tuple[float, ...] | list[float],
                       weights: tuple[float, ...] | list[float] = (),
                       basis: str = TIME) -> float:
    """Total tokens over total time from per-record throughputs.

    ``TIME`` (records of equal duration): the arithmetic mean. ``STEPS`` (records of equal
    step count): the harmonic mean weighted by each record's tokens (``weights``, up to a
    constant factor), Σw ÷ Σ(w ÷ rate).
    """
    if basis == TIME:
        return statistics.fmean(values)
    w = list(weights) if weights else [1.0] * len(values)
    if len(w) != len(values):
        raise ValueError("one weight per record is needed")
    return sum(w) / sum(wi / v for wi, v in zip(w, values, strict=True))


@dataclass(frozen=True)
class Steady:
    engine: str
    workload: str
    concurrency: int
    verdict: str                     # FOUND, NONE or NO_LOG
    values: tuple[float, ...] = ()   # total decode throughput per steady record, tok/s
    lines: tuple[int, ...] = ()
    file: str = ""
    sha256: str = ""
    start: str = ""
    end: str = ""
    window_records: int = 0
    notes: list[str] = field(default_factory=list)
    weights: tuple[float, ...] = ()  # tokens per record up to a constant (fixed-step records)
    basis: str = TIME                # TIME: records cover a fixed time; STEPS: fixed steps

    @property
    def mean(self) -> float:
        """Time-weighted mean: total tokens over total time of the steady records."""
        return time_weighted_mean(self.values, self.weights, self.basis)

    @property
    def mean_of_lines(self) -> float:
        """Plain arithmetic mean of the records (time-weighted only for fixed-time records)."""
        return statistics.fmean(self.values)


def steady_phase(ing: Ingested, engine: str, workload: str, concurrency: int) -> Steady:
    stats = ing.in_window("engine_stats", engine, workload)
    if stats:
        rows = sorted(stats, key=lambda r: r["line"])
        keep = [r for r in rows if int(r["running"]) == concurrency
                and int(r["waiting"]) == 0 and float(r["prompt_tps"]) == 0.0]
        values = [float(r["gen_tps"]) for r in keep]
        weights: list[float] = []
        basis = TIME
    else:
        rows = sorted(ing.in_window("decode_batch", engine, workload)
                      + ing.in_window("prefill_batch", engine, workload),
                      key=lambda r: r["line"])
        keep, prefill_since = [], True
        for r in rows:
            if r["kind"] == "prefill_batch":
                prefill_since = True
                continue
            # a line over fixed steps of all requests decoding cannot have generated nothing
            if int(r["running_req"]) == concurrency and int(r.get("queue_req", 0)) == 0 \
                    and not prefill_since and float(r["gen_tps"]) > 0:
                keep.append(r)
            prefill_since = False
        values = [float(r["gen_tps"]) for r in keep]
        weights = [int(r["running_req"]) * float(r.get("accept_len") or 1.0) for r in keep]
        basis = STEPS
    if not rows:
        return Steady(engine, workload, concurrency, NO_LOG)
    if not keep:
        return Steady(engine, workload, concurrency, NONE, window_records=len(rows))
    return Steady(engine, workload, concurrency, FOUND, tuple(values),
                  tuple(int(r["line"]) for r in keep), keep[0]["file"], keep[0]["sha256"],
                  keep[0].get("ts") or "", keep[-1].get("ts") or "", len(rows),
                  weights=tuple(weights), basis=basis)


_MEAN_METHOD = {TIME: said("decode.mean_time"), STEPS: said("decode.mean_steps", one=1)}


def _src(s: Steady) -> tuple[Source, ...]:
    return (Source(path=s.file, sha256=s.sha256, lines=s.lines),) if s.lines else ()


def decode_figures(run: Run, ing: Ingested) -> tuple[list[Figure], list[Steady]]:
    """Per engine and workload: the steady phase's decode throughput and per-request speed;
    per engine: degradation from the shortest to the longest context on two bases."""
    figures: list[Figure] = []
    phases = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            if not ing.has_benchmark(e.id, w.id) or w.concurrency is None:
                continue
            n = min(w.concurrency, w.num_prompts or w.concurrency)
            s = steady_phase(ing, e.id, w.id, n)
            phases.append(s)
            ctx = {"engine": e.id, "workload": w.id}
            why = {FOUND: said("decode.why_found", records=len(s.values), n=n),
                   NONE: said("decode.why_none", records=s.window_records, n=n),
                   NO_LOG: said("decode.why_no_log")}[s.verdict]
            figures.append(figure(id=ids.decode(w.id, e.id, "steady"), value=s.verdict,
                                  unit="verdict",
                                  method=said("decode.steady", why=why), sources=_src(s),
                                  context={**ctx, "requests": n,
                                           "window_records": s.window_records}))
            if s.verdict != FOUND:
                continue
            src = _src(s)
            mean, peak = s.mean, max(s.values)
            add = [
                ("min", min(s.values), "tok/s", 1, said("decode.min")),
                ("max", peak, "tok/s", 1, said("decode.max")),
                ("mean", mean, "tok/s", 1, _MEAN_METHOD[s.basis]),
                ("median", statistics.median(s.values), "tok/s", 1, said("decode.median")),
                ("records", len(s.values), "records", 0, said("decode.records")),
                ("per_request", mean / n, "tok/s", 1, said("decode.per_request", n=n)),
                ("per_request_peak", peak / n, "tok/s", 1, said("decode.per_request_peak", n=n)),
                ("ms_per_token", 1000 * n / mean, "ms", 1,
                 said("decode.ms_per_token", thousand=1000)),
                ("ms_per_token_peak", 1000 * n / peak, "ms", 1,
                 said("decode.ms_per_token_peak", thousand=1000)),
            ]
            if s.basis == STEPS:
                lines = s.mean_of_lines
                add.insert(3, ("mean_of_lines", lines, "tok/s", 1, said("decode.mean_of_lines")))
                add += [("per_request_of_lines", lines / n, "tok/s", 1,
                         said("decode.per_request_of_lines", n=n)),
                        ("ms_per_token_of_lines", 1000 * n / lines, "ms", 1,
                         said("decode.ms_per_token_of_lines", thousand=1000))]
            peak_of = (ids.decode(w.id, e.id, "max"),)     # what the peak figures divide
            for name, value, unit, dec, how in add:
                figures.append(figure(id=ids.decode(w.id, e.id, name), value=value, unit=unit,
                                      method=how, sources=src, decimals=dec, context=ctx,
                                      depends_on=peak_of if name.endswith("_peak") else ()))
            figures.append(figure(id=ids.decode(w.id, e.id, "window"), value=f"{s.start} – {s.end}",
                                  unit="time", method=said("decode.window"),
                                  sources=src, context={**ctx, "start": s.start,
                                                        "end": s.end}))
    figures += _degradation(run, phases)
    return figures, phases


def _degradation(run: Run, phases: list[Steady]) -> list[Figure]:
    out = []
    order = {w.id: i for i, w in enumerate(run.meta.workloads)}
    for e in run.meta.engines:
        mine = sorted((p for p in phases if p.engine == e.id and p.verdict == FOUND),
                      key=lambda p: order[p.workload])
        if len(mine) < 2:
            continue
        short, long_ = mine[0], mine[-1]
        ws, wl = run.meta.workload(short.workload), run.meta.workload(long_.workload)
        dep = (ids.decode(ws.id, e.id, "mean"), ids.decode(wl.id, e.id, "mean"))
        ctx = {"engine": e.id, "from": ws.id, "to": wl.id}
        out += [
            figure(id=ids.degradation(e.id, "mean_over_mean"),
                   value=short.mean / long_.mean, unit="x", decimals=2, context=ctx,
                   method=said("decode.mean_over_mean", short=ws.label, long=wl.label),
                   depends_on=dep),
            figure(id=ids.degradation(e.id, "peak_over_mean"),
                   value=max(short.values) / long_.mean, unit="x", decimals=2, context=ctx,
                   method=said("decode.peak_over_mean", short=ws.label, long=wl.label),
                   depends_on=(ids.decode(ws.id, e.id, "max"), dep[1])),
            # the mean lies between the least and the most of its records: with the peak
            # over the mean, bounds of the like-for-like ratio from extremes alone
            figure(id=ids.degradation(e.id, "min_over_mean"),
                   value=min(short.values) / long_.mean, unit="x", decimals=2, context=ctx,
                   method=said("decode.min_over_mean", short=ws.label, long=wl.label),
                   depends_on=(ids.decode(ws.id, e.id, "min"), dep[1])),
            figure(id=ids.context_ratio(e.id), value=wl.input_tokens / ws.input_tokens,
                   unit="x", decimals=2, context=ctx,
                   method=said("decode.context_ratio", short=ws.label, long=wl.label),
                   depends_on=(ids.workload(wl.id, "input_tokens"),
                               ids.workload(ws.id, "input_tokens"))),
        ]
        if short.basis == STEPS and long_.basis == STEPS:
            out.append(figure(
                id=ids.degradation(e.id, "lines_over_lines"),
                value=short.mean_of_lines / long_.mean_of_lines, unit="x", decimals=2,
                context=ctx, method=said("decode.lines_over_lines", short=ws.label,
                                         long=wl.label),
                depends_on=(ids.decode(ws.id, e.id, "mean_of_lines"),
                            ids.decode(wl.id, e.id, "mean_of_lines"))))
    return out
