"""What the server's own metrics (Prometheus /metrics scrapes) say about each benchmark.

For every benchmark window with scrapes of its engine around it, from the ``metric``
records ingest read (``records_metric``):

- counters differenced from the last scrape at or before the window's start to the first at
  or after its end: prompt and generation tokens (so server-side throughput over that
  interval), preemptions, prefix-cache queries and hits, finished requests, speculative
  drafts and accepted tokens (per position where exposed). A counter that went down between
  any two scrapes of the interval was reset (a restart): it is never differenced across;
- gauges over the scrapes inside the window: KV-cache usage, running and waiting requests
  (min, mean, max);
- latency histograms differenced the same way and turned into quantiles: **bucket
  estimates** (linear inside a bucket), not the clients' exact percentiles.

SGLang's acceptance gauges (``spec_accept_length``/``rate``) describe the server's recent
past, not the run: they are reported as such. Figures are ``server.<w>.<e>.<name>``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import Said, given, said, statistic
from ..core.metrics import histogram_quantile
from ..core.records import BenchWindow, Ingested, Run

# Older exposed names that newer releases keep beside their replacement for a while: where
# both are in one scrape, the newer one is read.
DEPRECATED = ("vllm:gpu_cache_usage_perc", "vllm:gpu_prefix_cache_queries_total",
              "vllm:gpu_prefix_cache_hits_total", "vllm:time_per_output_token_seconds_bucket",
              "vllm:time_per_output_token_seconds_sum",
              "vllm:time_per_output_token_seconds_count", "sglang:num_requests_running",
              "sglang:queue_req")
COUNTERS = {"prompt_tokens_total": "prompt_tokens", "generation_tokens_total": "generation_tokens",
            "preemptions_total": "preemptions", "request_success_total": "requests_finished",
            "prefix_cache_queries_total": "prefix_queries",
            "prefix_cache_hits_total": "prefix_hits", "spec_drafts_total": "spec_drafts",
            "spec_draft_tokens_total": "spec_draft_tokens",
            "spec_accepted_tokens_total": "spec_accepted_tokens"}
GAUGES = {"kv_cache_usage": "kv_usage", "requests_running": "running",
          "requests_waiting": "waiting"}
HISTOGRAMS = {"ttft_seconds": "ttft", "itl_seconds": "itl", "e2e_latency_seconds": "e2el"}


@dataclass
class Scrape:
    file: str
    sha256: str
    index: int
    ts: str
    first_line: int
    last_line: int
    # canonical sample name -> {labels JSON: (value, exposed name)}
    series: dict[str, dict[str, tuple[float, str]]] = field(default_factory=dict)

    def source(self) -> Source:
        return Source(path=self.file, sha256=self.sha256,
                      lines=tuple(sorted({self.first_line, self.last_line})))


def scrapes(ing: Ingested, engine: str) -> list[Scrape]:
    """The engine's scrapes with a time, in time order."""
    found: dict[tuple[str, int], Scrape] = {}
    for r in ing.records.get("metric", []):
        if r["engine"] != engine or not r.get("ts") or not r.get("canonical"):
            continue
        key = (r["file"], int(r["scrape"]))
        sc = found.get(key)
        if sc is None:
            sc = found[key] = Scrape(r["file"], r["sha256"], int(r["scrape"]), r["ts"],
                                     int(r["line"]), int(r["line"]))
        sc.first_line, sc.last_line = min(sc.first_line, int(r["line"])), \
            max(sc.last_line, int(r["line"]))
        labels = r["labels"] if isinstance(r["labels"], str) else json.dumps(r["labels"],
                                                                            sort_keys=True)
        mine = sc.series.setdefault(r["canonical"], {})
        old = mine.get(labels)
        if old is None or old[1] in DEPRECATED:
            mine[labels] = (float(r["value"]), r["name"])
    return sorted(found.values(), key=lambda s: (s.ts, s.file, s.index))


def _total(sc: Scrape, name: str, where=None) -> float | None:
    values = [v for lab, (v, _) in sc.series.get(name, {}).items()
              if where is None or where(json.loads(lab))]
    return sum(values) if values else None


def _reset(chain: list[Scrape], name: str) -> Scrape | None:
    """The first scrape of ``chain`` where a series of ``name`` went down, else None."""
    for a, b in zip(chain, chain[1:], strict=False):
        for lab, (v, _) in b.series.get(name, {}).items():
            if lab in a.series.get(name, {}) and v < a.series[name][lab][0]:
                return b
    return None


@dataclass
class Window:
    """The scrapes around and inside one benchmark window."""

    engine: str
    workload: str
    before: Scrape | None
    after: Scrape | None
    inside: list[Scrape]
    # how long the token counters grew around it (growth_span), when growth was seen
    grown: tuple[float, float, list[Scrape]] | None = None

    @property
    def chain(self) -> list[Scrape]:
        return [s for s in [self.before, *self.inside, self.after] if s is not None]

    @property
    def interval(self) -> float | None:
        if not self.before or not self.after:
            return None
        return (dt.datetime.fromisoformat(self.after.ts)
                - dt.datetime.fromisoformat(self.before.ts)).total_seconds()


def span(ing: Ingested, w: BenchWindow) -> tuple[str, str]:
    """The benchmark's own span: the window's start and, where the client's duration is
    known, that start plus the duration and a second (a log window keeps a margin after the
    end for a late stats line, which a scrape must not be matched by)."""
    entry = next((e for e in ing.results if e.engine == w.engine
                  and e.workload == w.workload), None)
    if entry is None or not entry.duration:
        return w.start, w.end
    # the window starts a second before the client's start (its time is to the second); the
    # end may lie up to two seconds after start + duration for the same reason
    start = dt.datetime.fromisoformat(w.start)
    end = start + dt.timedelta(seconds=math.ceil(entry.duration) + 3)
    return w.start, min(end.isoformat(timespec="seconds"), w.end)


def window_scrapes(ing: Ingested, w: BenchWindow,
                   mine: list[Scrape] | None = None) -> Window:
    """The scrapes the counters are differenced between: the last before the server's token
    counters started growing for this benchmark and the first after they stopped (see
    ``growth_span``); without growth seen, the last scrape at or before the window's start
    and the first at or after the benchmark's end. ``mine``: the engine's scrapes, when the
    caller has them already."""
    mine = scrapes(ing, w.engine) if mine is None else mine
    grown = growth_span(ing, w, mine)
    if grown is not None:
        first, last = grown[2]
        return Window(w.engine, w.workload, first, last,
                      [s for s in mine if first.ts < s.ts < last.ts], grown)
    start, end = span(ing, w)
    before = [s for s in mine if s.ts <= start]
    after = [s for s in mine if s.ts >= end]
    inside = [s for s in mine if start < s.ts < end]
    return Window(w.engine, w.workload, before[-1] if before else None,
                  after[0] if after else None, inside)


NEIGHBOURHOOD_S = 60.0     # how far beyond its window a benchmark's counter growth is sought


def growth_span(ing: Ingested, w: BenchWindow, mine: list[Scrape]
                ) -> tuple[float, float, list[Scrape]] | None:
    """When the server's token counters grew around this benchmark, as bounds on how long it
    worked: (shortest, longest, the scrapes that bound it), or None without growth seen
    between two scrapes. Sought from the end of the engine's previous benchmark window to
    the start of its next one (at most NEIGHBOURHOOD_S beyond this window), so it does not
    rest on the client's own times.

    The first scrape that shows growth came after work began, and the one before it came
    before; likewise at the end. So the work lasted at least from the first growth scrape to
    the scrape before the last growth scrape, and at most from the scrape before the first
    growth to the last growth scrape. ``mine``: the engine's scrapes (``scrapes``)."""
    others = [x for x in ing.windows if x.engine == w.engine and x != w]
    # the neighbours' own spans (a log window keeps a margin that may reach the next one)
    lo = max([span(ing, x)[1] for x in others if x.start < w.start]
             + [_shift(w.start, -NEIGHBOURHOOD_S)])
    hi = min([x.start for x in others if x.start > w.start]
             + [_shift(span(ing, w)[1], NEIGHBOURHOOD_S)])
    near = [sc for sc in mine if lo <= sc.ts <= hi]

    def tokens(sc: Scrape) -> float | None:
        parts = [_total(sc, n) for n in ("prompt_tokens_total", "generation_tokens_total")]
        return None if parts[0] is None and parts[1] is None else sum(p or 0 for p in parts)

    grew = [i for i in range(1, len(near))
            if None not in (tokens(near[i]), tokens(near[i - 1]))
            and tokens(near[i]) > tokens(near[i - 1])]
    if not grew:
        return None
    first, last = grew[0], grew[-1]

    def t(i: int) -> dt.datetime:
        return dt.datetime.fromisoformat(near[i].ts)

    longest = (t(last) - t(first - 1)).total_seconds()
    shortest = max(0.0, (t(last - 1) - t(first)).total_seconds())
    return shortest, longest, [near[first - 1], near[last]]


def _shift(ts: str, seconds: float) -> str:
    return (dt.datetime.fromisoformat(ts) + dt.timedelta(seconds=seconds)).isoformat(
        timespec="seconds")


def counter_deltas(win: Window) -> dict[str, tuple[float | None, Said | str]]:
    """name -> (delta or None, why not)."""
    out: dict[str, tuple[float | None, Said | str]] = {}
    if not win.before or not win.after:
        return out
    for canonical, name in COUNTERS.items():
        a, b = _total(win.before, canonical), _total(win.after, canonical)
        if a is None or b is None:
            continue
        reset = _reset(win.chain, canonical)
        if reset is not None:
            out[name] = (None, said("server.reset", ts=reset.ts, file=reset.file))
            continue
        out[name] = (b - a, "")
    return out


def _buckets(sc: Scrape, name: str) -> dict[float, float]:
    out: dict[float, float] = defaultdict(float)
    for lab, (v, _) in sc.series.get(name + "_bucket", {}).items():
        le = json.loads(lab).get("le")
        if le is not None:
            out[float(le)] += v
    return dict(out)


FEW_OBSERVATIONS = 20     # below this many, a quantile is shown as its bucket


def rank_bucket(buckets: dict[float, float], q: float) -> tuple[float, float]:
    """The bounds (lower, upper; seconds) of the bucket where quantile ``q``'s rank falls, in
    cumulative ``le`` buckets; the +Inf bucket gives its finite lower bound twice."""
    points = sorted(buckets.items())
    total = points[-1][1]
    lower = 0.0
    for le, count in points:
        if count >= q * total:
            return (lower, le) if not math.isinf(le) else (lower, lower)
        lower = le
    return lower, lower


def server_figures(run: Run, ing: Ingested) -> tuple[list[Figure], list[dict[str, Any]]]:
    """Figures per benchmark window with scrapes, and the gauge series over time (for the
    chart: engine, workload, ts, kv_usage, running, waiting)."""
    figures: list[Figure] = []
    series: list[dict[str, Any]] = []
    if not ing.records.get("metric"):
        return figures, series
    by_engine = {e: scrapes(ing, e) for e in sorted({w.engine for w in ing.windows})}
    for w in ing.windows:
        win = window_scrapes(ing, w, by_engine[w.engine])
        if not win.chain:
            continue
        figures += window_figures(w, win)
        series += _gauge_series(w, win.inside or [])
    return figures, series


def window_figures(w: BenchWindow, win: Window) -> list[Figure]:
    """The figures of one benchmark window with scrapes ``win`` around it."""
    ends = [s.source() for s in (win.before, win.after) if s]
    deltas, out = _counter_figures(w, win, ends)
    out += _ratio_figures(w, win.interval, deltas, ends)
    out += _gauge_figures(w, win.inside or [])
    if win.before and win.after and _reset(win.chain, "ttft_seconds_bucket") is None:
        for canonical, name in HISTOGRAMS.items():
            out += _histogram_figures(w, win.before, win.after, canonical, name, ends)
    return out + _accept_gauge_figures(w, win.chain)


def _id(w: BenchWindow, name: str) -> str:
    return ids.server(w.workload, w.engine, name)


def _ctx(w: BenchWindow) -> dict[str, Any]:
    return {"engine": w.engine, "workload": w.workload}


def _counter_figures(w: BenchWindow, win: Window, ends: list[Source]
                     ) -> tuple[dict[str, float], list[Figure]]:
    """The scrapes inside, the counter interval and each counter differenced over it; with
    the deltas that were differenced (name -> delta)."""
    out = [figure(_id(w, "scrapes"), len(win.inside), "count",
                  said("server.scrapes"),
                  sources=[s.source() for s in win.inside] or ends, decimals=0,
                  context=_ctx(w))]
    if win.interval is not None:
        out.append(figure(
            _id(w, "interval_s"), win.interval, "s",
            said("server.interval"),
            sources=ends, decimals=1, context=_ctx(w)))
    counted = counter_deltas(win)
    for name, (delta, why) in counted.items():
        unit = "tokens" if "tokens" in name else "count"
        if delta is None:
            out.append(figure(_id(w, name), None, unit, said("server.not_differenced", why=why),
                              sources=ends, decimals=0, context=_ctx(w), status="reset"))
            continue
        out.append(figure(
            _id(w, name), delta, unit,
            said("server.counter", name=given(en=name.replace("_", " "), ko=name)),
            sources=ends, decimals=0, context=_ctx(w)))
    return {k: v for k, (v, _) in counted.items() if v is not None}, out


def _ratio_figures(w: BenchWindow, interval: float | None, deltas: dict[str, float],
                   ends: list[Source]) -> list[Figure]:
    """Server-side throughput, prefix-cache hit rate and speculative acceptance, from the
    counters differenced over the interval."""
    out = []
    if interval and "generation_tokens" in deltas:
        out.append(figure(
            _id(w, "throughput"), deltas["generation_tokens"] / interval, "tok/s",
            said("server.throughput"), sources=ends, decimals=1, context=_ctx(w),
            depends_on=(_id(w, "generation_tokens"), _id(w, "interval_s"))))
    if deltas.get("prefix_queries"):
        out.append(figure(
            _id(w, "prefix_hit_pct"),
            100 * deltas.get("prefix_hits", 0) / deltas["prefix_queries"], "%",
            said("server.prefix_hits"),
            sources=ends, decimals=1, context=_ctx(w),
            depends_on=(_id(w, "prefix_queries"),)))
    if deltas.get("spec_draft_tokens"):
        out.append(figure(
            _id(w, "spec_acceptance_pct"),
            100 * deltas.get("spec_accepted_tokens", 0) / deltas["spec_draft_tokens"], "%",
            said("server.spec_acceptance"),
            sources=ends, decimals=1, context=_ctx(w)))
    if deltas.get("spec_drafts"):
        out.append(figure(
            _id(w, "spec_accept_len"),
            1 + deltas.get("spec_accepted_tokens", 0) / deltas["spec_drafts"], "tokens",
            said("server.spec_accept_len", one=1), sources=ends, decimals=2,
            context=_ctx(w)))
    return out


def _gauge_figures(w: BenchWindow, inside: list[Scrape]) -> list[Figure]:
    """Min, mean and max of each gauge over the scrapes inside the window."""
    out = []
    for canonical, name in GAUGES.items():
        values = [v for s in inside for v in [_total(s, canonical)] if v is not None]
        if not values:
            continue
        scale, unit = (100.0, "%") if canonical == "kv_cache_usage" else (1.0, "count")
        if canonical == "kv_cache_usage" and w.engine and max(values) > 1.0:
            scale = 1.0           # exposed as a percentage already
        src = [s.source() for s in inside]
        for stat, value in (("min", min(values)), ("mean", statistics.fmean(values)),
                            ("max", max(values))):
            out.append(figure(
                _id(w, f"{name}_{stat}"), value * scale, unit,
                said("server.gauge", stat=statistic(stat), n=len(values), gauge=canonical),
                sources=src,
                decimals=2 if unit == "%" else 1 if stat == "mean" else 0, context=_ctx(w)))
    return out


def _gauge_series(w: BenchWindow, inside: list[Scrape]) -> list[dict[str, Any]]:
    """The gauges at each scrape inside the window, for the chart."""
    return [{"engine": w.engine, "workload": w.workload, "ts": s.ts,
             "kv_usage": _total(s, "kv_cache_usage"),
             "running": _total(s, "requests_running"),
             "waiting": _total(s, "requests_waiting")} for s in inside]


def _histogram_figures(w: BenchWindow, before: Scrape, after: Scrape, canonical: str,
                       name: str, ends: list[Source]) -> list[Figure]:
    """The p50 and p99 of latency histogram ``canonical`` differenced over the interval."""
    a, b = _buckets(before, canonical), _buckets(after, canonical)
    if not b:
        return []
    delta = {le: b[le] - a.get(le, 0.0) for le in b}
    observed = max(delta.values(), default=0.0)      # the +Inf bucket: all
    out = []
    for q in (0.5, 0.99):
        value = histogram_quantile(delta, q)
        if value is None:
            continue
        label = f"p{round(q * 100)}"
        if observed < FEW_OBSERVATIONS:
            out.append(_bucket_figure(w, delta, q, canonical, name, observed, ends))
            continue
        out.append(figure(
            _id(w, f"{name}_{label}_ms"), 1000 * value, "ms",
            said("server.histogram", label=label, histogram=canonical),
            sources=ends, decimals=0, context=_ctx(w)))
    return out


def _bucket_figure(w: BenchWindow, delta: dict[float, float], q: float, canonical: str,
                   name: str, observed: float, ends: list[Source]) -> Figure:
    """Too few requests to interpolate: the bucket quantile ``q``'s rank falls in, as text
    (a range of milliseconds, or ``> N`` for the +Inf bucket)."""
    label = f"p{round(q * 100)}"
    low, high = rank_bucket(delta, q)
    shown = f"{1000 * low:,.0f}–{1000 * high:,.0f}" if high > low \
        else f"> {1000 * low:,.0f}"          # the +Inf bucket
    return figure(
        _id(w, f"{name}_{label}_ms"), shown, "ms",
        said("server.bucket", histogram=canonical, label=label, observed=f"{observed:.0f}",
             few=FEW_OBSERVATIONS), sources=ends, context=_ctx(w))


def _accept_gauge_figures(w: BenchWindow, chain: list[Scrape]) -> list[Figure]:
    """SGLang's spec_accept_length gauge at the last scrape that has it (not scoped to the
    benchmark)."""
    gauges = [s for s in chain if "spec_accept_length" in s.series]
    if not gauges:
        return []
    last = gauges[-1]
    return [figure(
        _id(w, "spec_accept_len_gauge"), _total(last, "spec_accept_length"), "tokens",
        said("server.accept_gauge"), sources=[last.source()], decimals=2,
        context=_ctx(w), scoped="no")]
