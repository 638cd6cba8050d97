"""Latency and throughput per engine and workload, from the benchmark clients' results.

TTFT: time to the first token. TPOT: (latency − TTFT) ÷ (output tokens − 1), per request,
so it leaves the first token out. ITL: gaps between streamed chunks, pooled over requests;
under speculative decoding a chunk can carry several tokens, so ITL is per chunk, not per
token. E2E: request latency. With per-request lists in the file the statistics are
recomputed from them; otherwise the client's own statistics are used.
"""

from __future__ import annotations

import random
import zlib

import numpy as np

from .figures import Figure, Source
from .io import ResultEntry, Run, load_results
from .metrics import compare_lower_is_better

METRICS = ("ttft", "tpot", "itl", "e2el")
STATS = ("mean", "median", "p90", "p99")
BOOTSTRAP = 2000


def per_request(entry: ResultEntry) -> dict[str, list[float]] | None:
    """Per-request values in ms (ITL: each request's mean chunk gap), if the file has them."""
    pr = entry.result.per_request
    if not all(k in pr for k in ("ttfts", "itls", "output_lens")):
        return None
    ttft = [t * 1000 for t in pr["ttfts"]]
    lat = pr.get("latencies")
    if lat is None:
        lat = [t + sum(itl) for t, itl in zip(pr["ttfts"], pr["itls"], strict=True)]
    e2el = [x * 1000 for x in lat]
    tpot = [(e - t) / (n - 1) for e, t, n in zip(e2el, ttft, pr["output_lens"], strict=True)
            if n > 1]
    itl = [1000 * sum(x) / len(x) for x in pr["itls"] if x]
    return {"ttft": ttft, "tpot": tpot, "itl": itl, "e2el": e2el,
            "itl_pooled": [1000 * g for row in pr["itls"] for g in row]}


def _stat(values: list[float], stat: str) -> float:
    arr = np.asarray(values, dtype=float)
    if stat == "mean":
        return float(arr.mean())
    if stat == "median":
        return float(np.median(arr))
    return float(np.percentile(arr, float(stat[1:])))


def _bootstrap_ratio(a: list[float], b: list[float], seed: int) -> tuple[float, float]:
    """95% interval of mean(a) / mean(b), resampling requests within each engine."""
    rng = random.Random(seed)
    ratios = []
    for _ in range(BOOTSTRAP):
        ra = [a[rng.randrange(len(a))] for _ in a]
        rb = [b[rng.randrange(len(b))] for _ in b]
        ratios.append((sum(ra) / len(ra)) / (sum(rb) / len(rb)))
    ratios.sort()
    return ratios[int(0.025 * BOOTSTRAP)], ratios[int(0.975 * BOOTSTRAP) - 1]


def latency_figures(run: Run) -> list[Figure]:
    figures: list[Figure] = []
    entries = load_results(run)
    for w in run.meta.workloads:
        mine = [e for e in entries if e.workload == w.id]
        values: dict[str, dict[str, list[float]]] = {}
        for entry in mine:
            r, eng = entry.result, entry.engine
            base, ctx = f"latency.{w.id}.{eng}", {"engine": eng, "workload": w.id}
            src_row = Source(path=entry.file.rel, sha256=entry.file.sha256,
                             lines=(r.line,))
            figures += [
                Figure(id=f"throughput.{w.id}.{eng}.requests", value=r.completed / r.duration,
                       unit="req/s", decimals=3, context=ctx,
                       sources=(Source(**{**src_row.__dict__, "key": "completed, duration"}),),
                       method="completed requests / benchmark duration"),
            ]
            if r.total_output_tokens:
                figures.append(Figure(
                    id=f"throughput.{w.id}.{eng}.output", unit="tok/s", decimals=1,
                    value=r.total_output_tokens / r.duration, context=ctx,
                    sources=(Source(**{**src_row.__dict__,
                                       "key": "total_output_tokens, duration"}),),
                    method="output tokens / benchmark duration"))
            pr = per_request(entry)
            if pr is not None:
                values[eng] = pr
            for metric in METRICS:
                for stat in STATS:
                    if pr is not None:
                        data = pr["itl_pooled"] if metric == "itl" else pr[metric]
                        key = {"ttft": "ttfts", "tpot": "ttfts, itls, output_lens",
                               "itl": "itls", "e2el": "latencies"}[metric]
                        value = _stat(data, stat)
                        how = f"{stat} over the per-request values recomputed from '{key}'"
                    else:
                        value = r.stats.get(metric, {}).get(stat)
                        if value is None:
                            continue
                        key = f"{stat}_{metric}_ms"
                        how = f"the client's own '{key}'"
                    figures.append(Figure(
                        id=f"{base}.{metric}.{stat}", value=value, unit="ms", decimals=1,
                        context=ctx, method=how,
                        sources=(Source(**{**src_row.__dict__, "key": key}),)))
        figures += _ratios(w, values)
    return figures


def _ratios(w, values: dict[str, dict[str, list[float]]]) -> list[Figure]:
    """Per metric: which engine was quicker on the mean, by how much, with a 95% interval."""
    out = []
    if len(values) < 2:
        return out
    for metric in METRICS:
        means = {e: sum(v[metric]) / len(v[metric]) for e, v in values.items() if v[metric]}
        if len(means) < 2:
            continue
        c = compare_lower_is_better(means)
        lo, hi = _bootstrap_ratio(values[c.slower][metric], values[c.ranking[0]][metric],
                                  zlib.crc32(f"{w.id}/{metric}".encode()))
        ids = tuple(f"latency.{w.id}.{e}.{metric}.mean" for e in c.ranking[:2])
        n = {e: len(values[e][metric]) for e in c.ranking[:2]}
        ctx = {"workload": w.id, "metric": metric}
        out += [
            Figure(id=f"latency.{w.id}.{metric}.faster", value=c.faster, unit="engine",
                   depends_on=ids, context=ctx, method=f"engine with the lower mean {metric}"),
            Figure(id=f"latency.{w.id}.{metric}.ratio", value=c.ratio, unit="x", decimals=2,
                   depends_on=ids, context=ctx,
                   method=f"mean {metric} of the other engine / of the quicker one"),
            Figure(id=f"latency.{w.id}.{metric}.ratio_ci", unit="x", depends_on=ids,
                   value=f"{lo:.2f}–{hi:.2f}", context=ctx,
                   method=f"95% bootstrap interval of that ratio ({BOOTSTRAP} resamples of the "
                          f"requests, n = {n[c.ranking[0]]} and {n[c.slower]}, seeded)"),
        ]
    return out
