"""Decode scalability: the steady phase in which every request of a workload decodes.

Steady, from the engines' own lines inside the benchmark's window:
- vLLM stats line: Running = concurrency, Waiting = 0, prompt throughput 0 (no prefill in
  the interval);
- SGLang Decode line: #running-req = concurrency, #queue-req = 0, and no Prefill line since
  the previous Decode line (the interval the throughput covers).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from .figures import Figure, Source
from .ingest import Ingested
from .io import Run

FOUND, NONE, NO_LOG = "found", "none", "no log"


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

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)


def steady_phase(ing: Ingested, engine: str, workload: str, concurrency: int) -> Steady:
    stats = ing.in_window("engine_stats", engine, workload)
    if stats:
        rows = sorted(stats, key=lambda r: r["line"])
        keep = [r for r in rows if int(r["running"]) == concurrency
                and int(r["waiting"]) == 0 and float(r["prompt_tps"]) == 0.0]
        values = [float(r["gen_tps"]) for r in keep]
    else:
        rows = sorted(ing.in_window("decode_batch", engine, workload)
                      + ing.in_window("prefill_batch", engine, workload),
                      key=lambda r: r["line"])
        keep, prefill_since = [], True
        for r in rows:
            if r["kind"] == "prefill_batch":
                prefill_since = True
                continue
            if int(r["running_req"]) == concurrency and int(r.get("queue_req", 0)) == 0 \
                    and not prefill_since:
                keep.append(r)
            prefill_since = False
        values = [float(r["gen_tps"]) for r in keep]
    if not rows:
        return Steady(engine, workload, concurrency, NO_LOG)
    if not keep:
        return Steady(engine, workload, concurrency, NONE, window_records=len(rows))
    return Steady(engine, workload, concurrency, FOUND, tuple(values),
                  tuple(int(r["line"]) for r in keep), keep[0]["file"], keep[0]["sha256"],
                  keep[0].get("ts") or "", keep[-1].get("ts") or "", len(rows))


def _src(s: Steady) -> tuple[Source, ...]:
    return (Source(path=s.file, sha256=s.sha256, lines=s.lines),) if s.lines else ()


def decode_figures(run: Run, ing: Ingested) -> tuple[list[Figure], list[Steady]]:
    """Per engine and workload: the steady phase's decode throughput and per-request speed;
    per engine: degradation from the shortest to the longest context on two bases."""
    figures: list[Figure] = []
    phases = []
    for w in run.meta.workloads:
        n = min(w.concurrency, w.num_prompts)
        for e in run.meta.engines:
            if not any(r.engine == e.id and r.workload == w.id for r in ing.results):
                continue
            s = steady_phase(ing, e.id, w.id, n)
            phases.append(s)
            base = f"decode.{w.id}.{e.id}"
            ctx = {"engine": e.id, "workload": w.id}
            why = {FOUND: f"{len(s.values)} log records in which all {n} requests decode, "
                          "none wait and no prefill runs",
                   NONE: f"no log record in the benchmark window ({s.window_records} records) "
                         f"shows all {n} requests decoding with none waiting and no prefill",
                   NO_LOG: "no engine log covers this benchmark"}[s.verdict]
            figures.append(Figure(id=f"{base}.steady", value=s.verdict, unit="verdict",
                                  method=f"steady decode phase: {why}", sources=_src(s),
                                  context={**ctx, "requests": n,
                                           "window_records": s.window_records}))
            if s.verdict != FOUND:
                continue
            src = _src(s)
            mean, peak = s.mean, max(s.values)
            add = [
                ("min", min(s.values), "tok/s", 1, "lowest total decode throughput in the "
                 "steady phase (all requests together)"),
                ("max", peak, "tok/s", 1, "highest total decode throughput in the steady "
                 "phase (the peak)"),
                ("mean", mean, "tok/s", 1, "mean of the steady records' total decode "
                 "throughput (each record covers one logging interval)"),
                ("median", statistics.median(s.values), "tok/s", 1, "median of the steady "
                 "records' total decode throughput"),
                ("records", len(s.values), "records", 0, "number of steady log records"),
                ("per_request", mean / n, "tok/s", 1, f"mean total decode throughput / {n} "
                 "requests"),
                ("per_request_peak", peak / n, "tok/s", 1, f"peak total decode throughput / "
                 f"{n} requests"),
                ("ms_per_token", 1000 * n / mean, "ms", 1, "1000 / per-request mean "
                 "throughput: time per output token of one request"),
                ("ms_per_token_peak", 1000 * n / peak, "ms", 1, "1000 / per-request peak "
                 "throughput"),
            ]
            for name, value, unit, dec, how in add:
                figures.append(Figure(id=f"{base}.{name}", value=value, unit=unit, method=how,
                                      sources=src, decimals=dec, context=ctx))
            figures.append(Figure(id=f"{base}.window", value=f"{s.start} – {s.end}",
                                  unit="time", method="first and last steady record",
                                  sources=src, context=ctx))
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
        dep = (f"decode.{ws.id}.{e.id}.mean", f"decode.{wl.id}.{e.id}.mean")
        ctx = {"engine": e.id, "from": ws.id, "to": wl.id}
        out += [
            Figure(id=f"decode.degradation.{e.id}.mean_over_mean",
                   value=short.mean / long_.mean, unit="x", decimals=2, context=ctx,
                   method=f"steady mean decode throughput at {ws.label} / steady mean at "
                          f"{wl.label} (one basis on both sides)", depends_on=dep),
            Figure(id=f"decode.degradation.{e.id}.peak_over_mean",
                   value=max(short.values) / long_.mean, unit="x", decimals=2, context=ctx,
                   method=f"steady peak at {ws.label} / steady mean at {wl.label} (mixed "
                          "bases: shown because a published ratio uses it)",
                   depends_on=(f"decode.{ws.id}.{e.id}.max", dep[1])),
            Figure(id=f"decode.context_ratio.{e.id}", value=wl.input_tokens / ws.input_tokens,
                   unit="x", decimals=2, context=ctx,
                   method=f"input tokens at {wl.label} / input tokens at {ws.label}",
                   depends_on=(f"workload.{wl.id}.input_tokens",
                               f"workload.{ws.id}.input_tokens")),
        ]
    return out
