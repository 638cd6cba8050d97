"""Latency and throughput per engine and workload, from the benchmark clients' results.

One definition per metric, the same for every engine, except ITL:

- TTFT: time to the first token of each request.
- TPOT: (latency − TTFT) ÷ (output tokens − 1) per request, so the first token is left out.
- ITL: the entries of the client's per-request ``itls``, pooled over requests. Those are the
  client's own: vLLM's are gaps between streamed chunks (under speculative decoding a chunk
  carries several tokens, so per chunk, not per token); sglang.bench_serving's native
  backend divides each chunk's gap over the tokens it brought (per token). The definition
  travels with each point (``definitions``), and two engines are compared on ITL only when
  their definitions agree.
- E2E: request latency, as the client timed it.

Per metric and engine the statistics are recomputed from the file's per-request lists only
where the file has that metric's own list (TTFT: ``ttfts``; ITL: ``itls``; E2E:
``latencies``; TPOT needs ``latencies``, ``ttfts`` and ``output_lens``). Otherwise the
client's own statistic is used as recorded (``mean_e2e_latency_ms`` and so on), and a
statistic the client did not record gets no figure. E2E is never rebuilt as TTFT + ΣITL:
that sum misses the time between the last chunk and the end of the request (about 0.65 s in
the reference run's vLLM files) and would be a different definition. A failed request (an
error, or no time where the others have one) is in no statistic: failures are never fast.

A run holds one batch of requests that share a queue, so they are not independent samples:
the spread of the requests within the run is reported (min and max), not a confidence
interval.
"""

from __future__ import annotations

import numpy as np

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.metrics import compare_lower_is_better
from ..core.records import SGLANG_CLIENT, PointResult, Run
from ..core.verdicts import NO, YES

METRICS = ("ttft", "tpot", "itl", "e2el")
# the definition codes (clients.base.DEFINITIONS) of what this module recomputes per request
RECOMPUTED = {"ttft": "ttft.first-token", "tpot": "tpot.excl-first", "e2el": "e2el.request"}
STATS = ("mean", "median", "p90", "p99")
# Below this many requests, p99 is (close to) the largest value: see _p99_method.
P99_MIN_REQUESTS = 100

# The per-request lists each metric is recomputed from.
_LISTS = {"ttft": ("ttfts",), "itl": ("itls",), "e2el": ("latencies",),
          "tpot": ("latencies", "ttfts", "output_lens")}
# SGLang's bench_serving spells E2E 'e2e_latency' in its keys (mean_e2e_latency_ms); vLLM 'e2el'.
_SGLANG_SPELLING = {"e2el": "e2e_latency"}
_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2E latency"}
# What the file lacks when a metric falls back to the client's statistics.
_LACKS = {"ttft": "per-request TTFTs ('ttfts')", "itl": "per-request chunk gaps ('itls')",
          "e2el": "per-request latencies",
          "tpot": "per-request latencies, so TPOT cannot be recomputed per request"}


def per_request(entry: PointResult) -> dict[str, list[float]]:
    """Per-request values in ms, for each metric whose per-request list the file holds.

    Keys: a subset of METRICS (ITL: each request's mean chunk gap) and ``itl_pooled`` (every
    chunk gap of every request) when ``itls`` is present. Failed requests (an error, or no
    time where the others have one: ``records.failed_request``) are left out, as the clients
    leave them out of their statistics.
    """
    ok = entry.ok
    out: dict[str, list[float]] = {}
    if entry.has("ttft_ms"):
        out["ttft"] = entry.values("ttft_ms")
    if entry.has("itl_ms"):
        rows = [r.get("itl_ms") or [] for r in ok]
        out["itl"] = [sum(x) / len(x) for x in rows if x]
        out["itl_pooled"] = [g for row in rows for g in row]
    if entry.has("e2el_ms"):
        out["e2el"] = entry.values("e2el_ms")
        if entry.has("ttft_ms") and entry.has("output_tokens"):
            out["tpot"] = [(r["e2el_ms"] - r["ttft_ms"]) / (n - 1) for r in ok
                           if (n := r.get("output_tokens") or 0) > 1]
    return {k: v for k, v in out.items() if v}


def _stat(values: list[float], stat: str) -> float:
    arr = np.asarray(values, dtype=float)
    if stat == "mean":
        return float(arr.mean())
    if stat == "median":
        return float(np.median(arr))
    return float(np.percentile(arr, float(stat[1:])))


def _client_key(client: str, metric: str, stat: str) -> str:
    spelled = _SGLANG_SPELLING.get(metric, metric) if client == SGLANG_CLIENT else metric
    return f"{stat}_{spelled}_ms"


# The file's per-request list behind each requests column (vLLM and SGLang name them alike).
_LIST_OF = {"ttft_ms": "ttfts", "e2el_ms": "latencies", "itl_ms": "itls"}


def _request_count(entry: PointResult) -> tuple[int, str, str]:
    """How many requests the statistics cover, the key it comes from, and how it was counted."""
    for name, key in _LIST_OF.items():
        if entry.has(name):
            n = len(entry.ok)
            return n, key, (f"requests with per-request data in the file (entries of '{key}', "
                            "failed requests left out)")
    return entry.completed, "completed", \
        "the client's own 'completed' (the file has no per-request lists)"


def _p99_method(n: int) -> str:
    rank = 0.99 * (n - 1)
    if n < 2:
        where = f"here n = {n}: p99 is the one value itself"
    elif n <= P99_MIN_REQUESTS:
        where = (f"here n = {n}: p99 is {rank - int(rank):.0%} of the way from the second "
                 "largest value to the largest, so it says little more than the slowest request")
    else:
        where = f"here n = {n}, so p99 reflects more than the two slowest requests"
    return (f"'yes' when the run has fewer than {P99_MIN_REQUESTS} requests. p99 by linear "
            "interpolation sits at rank 0.99 × (n − 1) of the sorted values, which for "
            f"n ≤ 100 lies between the two largest values ({where}). Applies to the "
            "per-request metrics (TTFT, TPOT, E2E); ITL pools the chunk gaps of all requests")


Mean = tuple[float, str, str | None]     # value (ms), how it was found, definition code


def _engine_figures(entry: PointResult) -> tuple[list[Figure], dict[str, Mean]]:
    """Throughput and latency figures of one engine and workload, and each metric's mean with
    a phrase naming its source (for the ratios)."""
    r, eng, w = entry, entry.engine, entry.workload
    ctx = {"engine": eng, "workload": w}
    row = Source(path=entry.file.rel, sha256=entry.file.sha256, lines=(r.line,))

    def src(key: str) -> tuple[Source, ...]:
        return (Source(**{**row.__dict__, "key": key}),)

    figures = [figure(id=ids.throughput(w, eng, "requests"), value=r.completed / r.duration,
                      unit="req/s", decimals=3, context=ctx, sources=src("completed, duration"),
                      method="completed requests / benchmark duration")]
    if r.total_output_tokens:
        figures.append(figure(
            id=ids.throughput(w, eng, "output"), unit="tok/s", decimals=1,
            value=r.total_output_tokens / r.duration, context=ctx,
            sources=src("total_output_tokens, duration"),
            method="output tokens / benchmark duration"))

    pr = per_request(entry)
    n, n_key, n_how = _request_count(entry)
    figures.append(figure(id=ids.latency_run(w, eng, "requests"), value=n, unit="req",
                          decimals=0, context=ctx,
                          sources=src(n_key), method=n_how))
    if n > 0:
        figures.append(figure(id=ids.latency_run(w, eng, "p99_is_max"), unit="verdict", context=ctx,
                              value=YES if n < P99_MIN_REQUESTS else NO,
                              depends_on=(ids.latency_run(w, eng, "requests"),),
                              method=_p99_method(n)))

    means: dict[str, Mean] = {}
    for metric in METRICS:
        name = _NAMES[metric]
        # recomputed here, a metric has this module's definition; ITL stays the client's
        # (its `itls` entries), and so does a statistic taken from the file
        code = RECOMPUTED.get(metric) if metric in pr else entry.definitions.get(metric)
        code = entry.definitions.get("itl") if metric == "itl" else code
        mctx = {**ctx, "definition": code} if code else ctx
        if metric in pr:
            keys = ", ".join(_LISTS[metric])
            data = pr["itl_pooled"] if metric == "itl" else pr[metric]
            k = len(pr[metric])
            over = (f"the {len(data)} {_gaps(entry)} pooled over the {k} requests"
                    if metric == "itl" else f"the {k} requests' {name} values")
            if metric == "tpot":
                over += ", each (latency − TTFT) ÷ (output tokens − 1)"
            for stat in STATS:
                figures.append(figure(
                    id=ids.latency(w, eng, metric, stat), value=_stat(data, stat), unit="ms",
                    decimals=1, context=mctx, sources=src(keys),
                    method=f"{stat} of {over}, recomputed from the file's per-request "
                           + ", ".join(f"'{x}'" for x in _LISTS[metric])))
            if metric == "itl" and data:
                figures += _tail_figures(w, eng, mctx, src(keys), data, over)
            means[metric] = (_stat(data, "mean"),
                             "recomputed from its file's per-request "
                             + ", ".join(f"'{x}'" for x in _LISTS[metric]),
                             code)
            each = f"requests' mean {_gaps(entry)}" if metric == "itl" \
                else f"requests' {name} values"
            for stat, fn in (("min", min), ("max", max)):
                figures.append(figure(
                    id=ids.latency(w, eng, metric, stat), value=fn(pr[metric]), unit="ms",
                    decimals=1, context={**mctx, "requests": k}, sources=src(keys),
                    method=f"{'smallest' if stat == 'min' else 'largest'} of the {k} {each}: "
                           f"spread of the {k} requests within this one run; not a confidence "
                           "interval (the requests share one queue and are not independent)"))
        else:
            for stat in STATS:
                key = r.sources.get(f"{stat}_{metric}_ms") or _client_key(r.client, metric,
                                                                           stat)
                value = r.stat(metric, stat)
                if value is None:
                    continue      # not recorded: no figure rather than another definition
                figures.append(figure(
                    id=ids.latency(w, eng, metric, stat), value=value, unit="ms", decimals=1,
                    context=mctx, sources=src(key),
                    method=f"the client's own '{key}'; the file has no {_LACKS[metric]}"))
                if stat == "mean":
                    lacks = _LACKS[metric].split(",")[0]
                    means[metric] = (value, f"the client's own '{key}', as its file has no "
                                            f"{lacks}", code)
    return figures, means


def _gaps(entry: PointResult) -> str:
    """What one entry of the file's ``itls`` is, by the client's definition."""
    if entry.definitions.get("itl") == "itl.per-token":
        return "per-token gaps (each chunk's gap divided over the tokens it brought, as the " \
               "client records them)"
    return "chunk gaps"


def _tail_figures(w: str, eng: str, ctx: dict, sources, gaps: list[float],
                  over: str) -> list[Figure]:
    """The longest chunk gap and the share of all gap time in gaps above the p99: what a
    mean above the p99 comes from (a few gaps long enough to outweigh the rest)."""
    p99 = _stat(gaps, "p99")
    total = sum(gaps)
    return [
        figure(id=ids.latency(w, eng, "itl", "longest"), value=max(gaps), unit="ms",
               decimals=1, context=ctx, sources=sources,
               method=f"largest of {over}"),
        figure(id=ids.latency(w, eng, "itl", "tail_share"), unit="%", decimals=0,
               value=100 * sum(g for g in gaps if g > p99) / total if total else 0.0,
               context=ctx, sources=sources, depends_on=(ids.latency(w, eng, "itl", "p99"),),
               method=f"time in the gaps above the p99, as a share of all time in {over}"),
    ]


def latency_figures(run: Run, ing=None) -> list[Figure]:
    figures: list[Figure] = []
    from ..core.tables import load_ingested

    entries = (ing or load_ingested(run)).results
    for w in run.meta.workloads:
        means: dict[str, dict[str, Mean]] = {}
        for entry in (e for e in entries if e.workload == w.id):
            figs, means[entry.engine] = _engine_figures(entry)
            figures += figs
        figures += _ratios(w, means)
    return figures


def _ratios(w, means: dict[str, dict[str, Mean]]) -> list[Figure]:
    """Per metric: which engine was quicker on the mean, and by how much (runner-up / quicker).

    The means are the registered ``latency.<w>.<e>.<metric>.mean`` figures; no interval, as
    one run's requests are not independent samples. Engines whose clients define the metric
    differently (SGLang's native client splits each chunk's gap over its tokens, vLLM's
    keeps one gap per chunk) are not compared on it: there is no ratio of two definitions.
    """
    out = []
    for metric in METRICS:
        have = {e: m[metric][:2] for e, m in means.items()
                if metric in m and m[metric][0] > 0}
        if len(have) < 2 or len({means[e][metric][2] for e in have}) > 1:
            continue
        c = compare_lower_is_better({e: v for e, (v, _) in have.items()})
        pair = c.ranking[:2]
        means_of = tuple(ids.latency(w.id, e, metric, "mean") for e in pair)
        ctx = {"workload": w.id, "metric": metric}
        whence = "; ".join(f"{e}'s mean is {have[e][1]}" for e in pair)
        out += [
            figure(id=ids.latency_compare(w.id, metric, "faster"), value=c.faster, unit="engine",
                   depends_on=means_of, context=ctx,
                   method=f"engine with the lower mean {metric} ({whence})"),
            figure(id=ids.latency_compare(w.id, metric, "ratio"), value=c.ratio, unit="x",
                   decimals=2,
                   depends_on=means_of, context=ctx,
                   method=f"mean {metric} of the runner-up / of the quicker engine, the same "
                          f"definition for both ({whence}); a ratio of one run each, with "
                          "no confidence interval"),
        ]
    return out
