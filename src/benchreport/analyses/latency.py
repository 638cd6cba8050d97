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
from ..core.methods import Said, said, statistic
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
_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": said("latency.e2el_name")}
# What the file lacks when a metric falls back to the client's statistics: the sentence
# latency.lacks_<metric>; in a ratio's note, the first part of it (_LACKS_SHORT).
_LACKS_SHORT = {"ttft": "ttft", "itl": "itl", "e2el": "e2el", "tpot": "e2el"}


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
            return n, key, said("latency.requests_listed", key=key)
    return entry.completed, "completed", said("latency.requests_completed")


def _p99_method(n: int) -> Said:
    rank = 0.99 * (n - 1)
    if n < 2:
        where = said("latency.p99_one", n=n, pct="p99")
    elif n <= P99_MIN_REQUESTS:
        where = said("latency.p99_few", n=n, pct="p99", share=f"{rank - int(rank):.0%}")
    else:
        where = said("latency.p99_many", n=n, pct="p99")
    return said("latency.p99_is_max", limit=P99_MIN_REQUESTS, pct="p99",
                rank="0.99 × (n − 1)", where=where)


Mean = tuple[float, Said, str | None]    # value (ms), how it was found, definition code


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
                      method=said("latency.request_throughput"))]
    if r.total_output_tokens:
        figures.append(figure(
            id=ids.throughput(w, eng, "output"), unit="tok/s", decimals=1,
            value=r.total_output_tokens / r.duration, context=ctx,
            sources=src("total_output_tokens, duration"),
            method=said("latency.output_throughput")))

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
            over = (said("latency.over_pooled", n=len(data), gaps=_gaps(entry), k=k)
                    if metric == "itl" else said("latency.over_requests", k=k, name=name))
            if metric == "tpot":
                over = said("latency.over_tpot", over=over, one=1)
            lists = [f"'{x}'" for x in _LISTS[metric]]
            for stat in STATS:
                figures.append(figure(
                    id=ids.latency(w, eng, metric, stat), value=_stat(data, stat), unit="ms",
                    decimals=1, context=mctx, sources=src(keys),
                    method=said("latency.recomputed", stat=statistic(stat), over=over,
                                keys=lists)))
            if metric == "itl" and data:
                figures += _tail_figures(w, eng, mctx, src(keys), data, over)
            means[metric] = (_stat(data, "mean"), said("latency.whence_recomputed", keys=lists),
                             code)
            each = said("latency.each_itl", gaps=_gaps(entry)) if metric == "itl" \
                else said("latency.each_values", name=name)
            for stat, fn in (("min", min), ("max", max)):
                figures.append(figure(
                    id=ids.latency(w, eng, metric, stat), value=fn(pr[metric]), unit="ms",
                    decimals=1, context={**mctx, "requests": k}, sources=src(keys),
                    method=said("latency.spread", k=k, each=each,
                                which=said("latency.smallest" if stat == "min"
                                           else "latency.largest"))))
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
                    method=said("latency.client_own", key=key,
                                lacks=said("latency.lacks_" + metric))))
                if stat == "mean":
                    lacks = said("latency.lacks_" + _LACKS_SHORT[metric])
                    means[metric] = (value, said("latency.whence_client", key=key, lacks=lacks),
                                     code)
    return figures, means


def _gaps(entry: PointResult) -> Said:
    """What one entry of the file's ``itls`` is, by the client's definition."""
    if entry.definitions.get("itl") == "itl.per-token":
        return said("latency.gaps_per_token")
    return said("latency.gaps_chunk")


def _tail_figures(w: str, eng: str, ctx: dict, sources, gaps: list[float],
                  over: Said) -> list[Figure]:
    """The longest chunk gap and the share of all gap time in gaps above the p99: what a
    mean above the p99 comes from (a few gaps long enough to outweigh the rest)."""
    p99 = _stat(gaps, "p99")
    total = sum(gaps)
    return [
        figure(id=ids.latency(w, eng, "itl", "longest"), value=max(gaps), unit="ms",
               decimals=1, context=ctx, sources=sources,
               method=said("latency.longest", over=over)),
        figure(id=ids.latency(w, eng, "itl", "tail_share"), unit="%", decimals=0,
               value=100 * sum(g for g in gaps if g > p99) / total if total else 0.0,
               context=ctx, sources=sources, depends_on=(ids.latency(w, eng, "itl", "p99"),),
               method=said("latency.tail_share", over=over, pct="p99")),
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
    return figures + _output_declines(run, entries)


def _output_declines(run: Run, entries) -> list[Figure]:
    """Per engine: its output throughput at the shortest input over that at the longest.
    Where both produced the same output tokens, that is the longer duration over the
    shorter, and rests on the durations alone."""
    out = []
    if len(run.meta.workloads) < 2:
        return out
    short, long_ = run.meta.workloads[0].id, run.meta.workloads[-1].id
    for e in run.meta.engines:
        pair = [[x for x in entries if x.engine == e.id and x.workload == w] for w in
                (short, long_)]
        if any(len(p) != 1 or not p[0].total_output_tokens or p[0].duration <= 0
               for p in pair):
            continue
        s, lg = pair[0][0], pair[1][0]
        same = s.total_output_tokens == lg.total_output_tokens
        value = (s.total_output_tokens / s.duration) / (lg.total_output_tokens / lg.duration)
        deps = tuple(ids.e2e(x.workload, e.id, "duration") for x in (s, lg)) if same else \
            tuple(ids.throughput(x.workload, e.id, "output") for x in (s, lg))
        out.append(figure(id=ids.throughput_decline(e.id), value=value, unit="x", decimals=2,
                          depends_on=deps, context={"engine": e.id, "from": short,
                                                    "to": long_},
                          method=said("latency.output_decline_same" if same
                                      else "latency.output_decline")))
    return out


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
        first, second = (said("latency.engine_mean", engine=e, how=have[e][1]) for e in pair)
        whence = said("latency.whence_pair", first=first, second=second)
        out += [
            figure(id=ids.latency_compare(w.id, metric, "faster"), value=c.faster, unit="engine",
                   depends_on=means_of, context=ctx,
                   method=said("latency.faster", metric=metric, whence=whence)),
            figure(id=ids.latency_compare(w.id, metric, "ratio"), value=c.ratio, unit="x",
                   decimals=2,
                   depends_on=means_of, context=ctx,
                   method=said("latency.ratio", metric=metric, whence=whence)),
        ]
    return out
