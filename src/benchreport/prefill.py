"""Prefill: total prefill throughput while prefilling, and per-request chunk decay.

vLLM logs prompt throughput per 10-s interval: only the phase's throughput is derivable
(the first and last intervals of the phase are partial and left out). SGLang logs every
prefill batch, so each request's chunks can be followed: a request starts at a Prefill line
with #new-seq >= 1 and continues on the #new-seq: 0 lines after it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from .figures import Figure, Source
from .ingest import Ingested
from .io import Run


@dataclass(frozen=True)
class Chunks:
    """One request's prefill chunks: throughput and the context cached before each."""

    request: int                       # 1-based, in order of arrival in the log
    tps: tuple[float, ...]
    cached: tuple[int, ...]
    lines: tuple[int, ...]
    next_first: float | None           # the next request's first chunk, if any
    next_line: int | None


def phase_values(ing: Ingested, engine: str, workload: str) -> tuple[list[float], list[dict]]:
    """Prefill throughput values while prefilling runs back to back, and their records."""
    stats = sorted(ing.in_window("engine_stats", engine, workload), key=lambda r: r["line"])
    if stats:
        busy = [r for r in stats if float(r["prompt_tps"]) > 0]
        interior = busy[1:-1] if len(busy) >= 3 else busy
        return [float(r["prompt_tps"]) for r in interior], interior
    rows = sorted(ing.in_window("prefill_batch", engine, workload)
                  + ing.in_window("decode_batch", engine, workload), key=lambda r: r["line"])
    keep = [b for a, b in zip(rows, rows[1:], strict=False)
            if a["kind"] == "prefill_batch" and b["kind"] == "prefill_batch"
            and "input_tps" in b]
    return [float(r["input_tps"]) for r in keep], keep


def chunk_sequences(ing: Ingested, engine: str, workload: str) -> list[Chunks]:
    rows = sorted(ing.in_window("prefill_batch", engine, workload), key=lambda r: r["line"])
    rows = [r for r in rows if "input_tps" in r]
    starts = [i for i, r in enumerate(rows) if int(r.get("new_seq", 0)) >= 1]
    out = []
    for k, i in enumerate(starts):
        j = starts[k + 1] if k + 1 < len(starts) else len(rows)
        part = rows[i:j]
        cached, total = [], 0
        for r in part:
            cached.append(total)
            total += int(r["new_token"])
        nxt = rows[j] if j < len(rows) else None
        out.append(Chunks(request=k + 1, tps=tuple(float(r["input_tps"]) for r in part),
                          cached=tuple(cached), lines=tuple(int(r["line"]) for r in part),
                          next_first=float(nxt["input_tps"]) if nxt else None,
                          next_line=int(nxt["line"]) if nxt else None))
    return out


def prefill_figures(run: Run, ing: Ingested) -> tuple[list[Figure], dict]:
    figures: list[Figure] = []
    sequences: dict[tuple[str, str], list[Chunks]] = {}
    all_values: list[tuple[float, Source]] = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            if not any(r.engine == e.id and r.workload == w.id for r in ing.results):
                continue
            base, ctx = f"prefill.{w.id}.{e.id}", {"engine": e.id, "workload": w.id}
            values, recs = phase_values(ing, e.id, w.id)
            if not values:
                figures.append(Figure(id=f"{base}.phase", value="no log", unit="verdict",
                                      method="no prefill records in the benchmark window",
                                      context=ctx))
                continue
            src = (Source(path=recs[0]["file"], sha256=recs[0]["sha256"],
                          lines=tuple(int(r["line"]) for r in recs)),)
            all_values += [(v, src[0]) for v in values]
            how = ("10-s stats intervals while prefilling, first and last (partial) left out"
                   if recs[0]["kind"] == "engine_stats" else
                   "Prefill lines that directly follow another Prefill line (the time "
                   "each covers is prefill only)")
            for name, value in (("min", min(values)), ("max", max(values)),
                                ("mean", statistics.fmean(values))):
                figures.append(Figure(id=f"{base}.{name}", value=value, unit="tok/s",
                                      decimals=0, sources=src, context=ctx,
                                      method=f"{name} total prefill throughput: {how}"))
            seqs = chunk_sequences(ing, e.id, w.id)
            sequences[(e.id, w.id)] = seqs
            if not seqs:
                figures.append(Figure(id=f"{base}.chunks", value="not logged per chunk",
                                      unit="verdict", context=ctx, sources=src,
                                      method="the engine logs aggregate prompt throughput per "
                                             "interval, not per prefill chunk"))
                continue
            figures += _chunk_figures(base, ctx, seqs, e.id, recs[0])
    if all_values:
        lo = min(all_values, key=lambda x: x[0])
        hi = max(all_values, key=lambda x: x[0])
        figures += [
            Figure(id="prefill.range.min", value=lo[0], unit="tok/s", decimals=0,
                   sources=(lo[1],), method="lowest prefill-phase throughput of any engine "
                                            "and workload"),
            Figure(id="prefill.range.max", value=hi[0], unit="tok/s", decimals=0,
                   sources=(hi[1],), method="highest prefill-phase throughput of any engine "
                                            "and workload")]
    return figures, sequences


def _chunk_figures(base, ctx, seqs: list[Chunks], engine: str, rec: dict) -> list[Figure]:
    out = []
    for c in seqs:
        if len(c.tps) < 2:
            continue
        rid = f"{base}.r{c.request}"
        lines = c.lines + ((c.next_line,) if c.next_line else ())
        src = (Source(path=rec["file"], sha256=rec["sha256"], lines=lines),)
        seq = " → ".join(f"{v:,.0f}" for v in c.tps)
        out += [
            Figure(id=f"{rid}.sequence", value=seq, unit="tok/s", sources=src, context=ctx,
                   method=f"input throughput of request {c.request}'s prefill chunks, in order "
                          f"(cached context before each: "
                          f"{', '.join(f'{x:,}' for x in c.cached)} tokens)"),
            Figure(id=f"{rid}.decay", value=c.tps[0] / c.tps[-1], unit="x", decimals=2,
                   sources=src, context=ctx,
                   method="first chunk's throughput / last chunk's throughput"),
            Figure(id=f"{rid}.decay_pct", value=100 * (1 - c.tps[-1] / c.tps[0]), unit="%",
                   decimals=1, sources=src, context=ctx,
                   method="100 × (1 − last chunk / first chunk)"),
        ]
        if c.next_first is not None:
            out.append(Figure(id=f"{rid}.recovery", value=c.next_first, unit="tok/s",
                              decimals=0, sources=src, context=ctx,
                              method="throughput of the next Prefill line, where the next "
                                     "request starts"))
    return out
