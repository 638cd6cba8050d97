"""What a campaign shows: load curves, the knee, the Pareto frontier, capacity within the
run's latency objectives (SLO), goodput, cost and engine comparisons with their noise.

Everything here is computed from the ``points`` and ``requests`` tables (one row per
benchmark point and per request) and registered as figures:

- A **series** is one engine (and variant: a sweep parameter, or the client when an engine
  has several) over the loads of one workload. At each load, each metric is the mean over
  the repeats kept, with ``stats.summarize``'s n, standard deviation, coefficient of
  variation and 95% interval in the figure's context. The interval is taken on the log
  scale (delta method: mean × exp(∓ t · cv ÷ √n)), so a latency or a throughput never gets
  a bound at or below zero, however few and spread the repeats. Invalid points
  (``validity``) are left out of every curve and comparison, and listed; saturated points
  (the server could not keep up) and points whose cause the files cannot tell stay in,
  marked (context ``saturated``, ``cannot_tell``).
- The **knee** of a series is the first load after which output throughput rises by no
  more than ``KNEE_GAIN`` (or twice the load's own coefficient of variation, when larger)
  at any later load while median E2E latency at the last load exceeds the knee's by more
  than ``KNEE_LATENCY``: throughput stops rising while latency keeps rising. Saturated
  points are kept for it: they are the ones that show where throughput peaks.
- The **Pareto frontier** of a series is its loads that no other load of the same series
  beats on both interactivity (tok/s per user, 1000 ÷ median TPOT in ms) and output
  throughput per GPU. Two frontiers are compared on the interactivity range they share,
  each drawn as straight lines between its points: the ranges where one gives more
  throughput, and the interactivity where they cross.
- **Capacity at the SLO**: the highest load whose statistic (``slo.percentile``) of every
  objective metric is within its limit, interpolated linearly between the last load that
  meets them and the first that does not. Its interval comes from doing the same with the
  repeat intervals' bounds. **Goodput** per point: successful requests whose own TTFT,
  TPOT ((E2E − TTFT) ÷ (output − 1)) and E2E latency meet the objectives, per second of
  the point's duration; ITL objectives are not checked per request (no per-request ITL).
- **Cost**: USD per million output tokens = price per GPU-hour × GPUs ÷ 3600 ÷ output
  tokens per second × 10⁶.
- **Comparisons**: at each load two series of different engines share (same variant), the
  ratio of their means with ``stats.ratio_interval``; the verdict is a tie when the
  interval holds 1. Requests of one batch are not independent samples, so intervals come
  from repeats only: without repeats a ratio has no interval and its verdict is unknown.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said, statistic
from ..core.records import Ingested, Run
from ..core.verdicts import (
    BELOW,
    CANNOT_TELL,
    INTERPOLATED,
    NO,
    NONE,
    NOT_REACHED,
    SATURATED,
    UNVERIFIED,
    VALID,
    YES,
)
from . import stats
from .validity import (
    FLAGGED,
    INVALID,
    ORDER,
    Validity,
    cancelled_count,
    check_points,
    load_value,
)

__all__ = ["COMPARED", "Campaign", "FRONTIER_GAIN", "KNEE_FALL_PCT", "KNEE_GAIN", "KNEE_LATENCY",
           "LATENCIES", "Level", "METRICS", "REPEAT_SPREAD", "STAT_OF_PERCENTILE", "Series",
           "TTFT_GROWTH", "build_series", "campaign_figures", "campaign_workloads", "capacity",
           "compare_frontiers", "frontier", "goodput", "knee", "load_x", "meets_slo", "objectives",
           "request_tpot_ms", "setting_figures", "tables", "ttft_within", "usd_per_mtok",
           "validity_figures", "validity_table"]

KNEE_GAIN = 0.05          # throughput gains below 5% are "not rising"
KNEE_LATENCY = 0.10       # and latency must still grow by more than 10% beyond the knee
KNEE_FALL_PCT = 10.0      # a fall beyond the knee of more than this is stated as a fall
# Median TTFT at the heaviest load 1.5 times the lightest's or more is growth worth a
# sentence: within it, batching the same prompts explains the difference.
TTFT_GROWTH = 1.5
# Repeats of one load whose output throughputs differ by more than this factor (highest ÷
# lowest) are said to differ: one run's figures then do not stand for the setting.
REPEAT_SPREAD = 1.2
STAT_OF_PERCENTILE = {50: "median", 90: "p90", 99: "p99"}
LATENCIES = tuple(f"{stat}_{metric}_ms" for metric in ("ttft", "tpot", "itl", "e2el")
                  for stat in ("median", "p90", "p99"))
# metric -> (unit, decimals, what one repeat's value is)
METRICS: dict[str, tuple[str, int, str]] = {
    "output_throughput": ("tok/s", 1, "output tokens per second as the client recorded it"),
    "output_throughput_per_gpu": ("tok/s/GPU", 1, "output tokens per second ÷ the run's GPUs"),
    "request_throughput": ("req/s", 3, "successful requests per second as the client "
                                       "recorded it"),
    "goodput": ("req/s", 3, "requests meeting every objective of the SLO per second"),
    "interactivity": ("tok/s/user", 1, "1000 ÷ median TPOT in ms: output tokens per second "
                                       "one user sees"),
    **{name: ("ms", 1, name.replace("_ms", "").replace("_", " ") + " as the client "
              "recorded it") for name in LATENCIES},
}
# capacity status (context "status" of slo.<w>.<s>.capacity)


def _what(metric: str) -> Any:
    """What one repeat's value of ``metric`` is, as a method sentence (METRICS' words)."""
    if metric in LATENCIES:
        stat, name = metric.removesuffix("_ms").split("_", 1)
        return said("curves.what_latency", stat=statistic(stat), metric=name)
    return said("curves.what_" + metric, thousand=1000)


@dataclass
class Level:
    """One load of one series: its valid points and each metric's summary over them."""

    load: str
    x: float                      # concurrency, or request rate (inf: unbounded)
    points: list[dict[str, Any]]
    excluded: list[str]           # invalid points of this load, left out
    saturated: list[str] = field(default_factory=list)     # kept points that are saturated
    cannot_tell: list[str] = field(default_factory=list)   # kept points of unknown cause
    values: dict[str, list[float]] = field(default_factory=dict)     # metric -> per repeat
    summary: dict[str, stats.Summary] = field(default_factory=dict)


@dataclass
class Series:
    workload: str
    engine: str
    variant: str
    kind: str                     # "concurrency" or "rate"
    levels: list[Level]           # loads with at least one valid point, by load
    dropped: list[str] = field(default_factory=list)    # loads whose every point is invalid
    excluded: list[str] = field(default_factory=list)   # the points of those loads

    @property
    def key(self) -> str:
        return ids.series(self.engine, self.variant)

    def mean(self, metric: str) -> list[float | None]:
        return [lv.summary[metric].mean if metric in lv.summary else None
                for lv in self.levels]


@dataclass
class Campaign:
    series: list[Series]
    validity: dict[str, Validity]
    figures: list[Figure]
    frontiers: dict[tuple[str, str], list[tuple[float, float, str]]]   # (w, s) -> (x, y, load)


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    x = float(value)
    return None if math.isnan(x) else x


def load_x(p: dict[str, Any]) -> tuple[str, float]:
    """(kind, numeric load) of a point: its concurrency target, else its rate target."""
    conc = _num(p.get("max_concurrency_target"))
    if conc is not None:
        return "concurrency", conc
    rate = _num(p.get("request_rate_target"))
    return "rate", math.inf if rate is None else rate


def _finite(x: float | None) -> float | None:
    """A load for a figure's context (JSON has no infinity: an unbounded load is None)."""
    return None if x is None or math.isinf(x) else x


def request_tpot_ms(r: dict[str, Any]) -> float | None:
    ttft, e2el, out = _num(r.get("ttft_ms")), _num(r.get("e2el_ms")), _num(r.get("output_tokens"))
    if ttft is None or e2el is None or out is None or out < 2:
        return None
    return (e2el - ttft) / (out - 1)


def goodput(p: dict[str, Any], requests: list[dict[str, Any]], run: Run) -> float | None:
    """Successful requests meeting every per-request objective, per second; None without an
    SLO, per-request rows or a duration."""
    slo = run.meta.slo
    duration = _num(p.get("duration"))
    if slo is None or not requests or not duration:
        return None
    good = 0
    for r in requests:
        if r.get("error"):
            continue
        own = {"ttft": _num(r.get("ttft_ms")), "e2el": _num(r.get("e2el_ms")),
               "tpot": request_tpot_ms(r)}
        if all(own.get(m) is None or own[m] <= limit for m, limit in slo.objectives
               if m in own):
            good += 1
    return good / duration


def _point_source(p: dict[str, Any], key: str) -> Source:
    line = _num(p.get("line"))
    sources = p.get("sources") or {}
    return Source(path=p["file"], sha256=p["sha256"], key=sources.get(key, key),
                  lines=(int(line),) if line is not None else ())


def build_series(run: Run, ing: Ingested, validity: dict[str, Validity],
                 good: dict[str, float]) -> list[Series]:
    gpus = run.meta.gpus
    grouped: dict[tuple[str, str, str], dict[str, list[dict]]] = defaultdict(dict)
    kinds: dict[tuple[str, str, str], str] = {}
    for p in ing.points:
        key = (p["workload"], p["engine"], p.get("variant") or "")
        grouped[key].setdefault(p["load"], []).append(p)
        kinds[key] = load_x(p)[0]
    out = []
    for (w, e, variant), by_load in grouped.items():
        levels = []
        for load, pts in by_load.items():
            pts = sorted(pts, key=lambda p: int(p["repeat"]))
            keep = [p for p in pts if validity[p["point"]].verdict != INVALID]
            lv = Level(load=load, x=load_x(pts[0])[1], points=keep,
                       excluded=[p["point"] for p in pts if p not in keep],
                       saturated=[p["point"] for p in keep
                                  if validity[p["point"]].verdict == SATURATED],
                       cannot_tell=[p["point"] for p in keep
                                    if validity[p["point"]].verdict == CANNOT_TELL])
            for metric in METRICS:
                vals = []
                for p in keep:
                    if metric == "output_throughput_per_gpu":
                        v = _num(p.get("output_throughput"))
                        v = None if v is None or gpus is None else v / gpus
                    elif metric == "interactivity":
                        v = _num(p.get("median_tpot_ms"))
                        v = 1000.0 / v if v else None
                    elif metric == "goodput":
                        v = good.get(p["point"])
                    else:
                        v = _num(p.get(metric))
                    if v is not None:
                        vals.append(v)
                if vals:
                    lv.values[metric] = vals
                    lv.summary[metric] = stats.summarize(vals)
            levels.append(lv)
        levels.sort(key=lambda lv: lv.x)
        dropped = [lv for lv in levels if not lv.points]       # every repeat invalid
        levels = [lv for lv in levels if lv.points]
        if levels:
            out.append(Series(workload=w, engine=e, variant=variant,
                              kind=kinds[(w, e, variant)], levels=levels,
                              dropped=[lv.load for lv in dropped],
                              excluded=[pid for lv in dropped for pid in lv.excluded]))
    order = {e.id: i for i, e in enumerate(run.meta.engines)}
    wl_order = {wl.id: i for i, wl in enumerate(run.meta.workloads)}
    out.sort(key=lambda s: (wl_order.get(s.workload, 0), order.get(s.engine, 0), s.variant))
    return out


def knee(s: Series) -> int | None:
    """Index of the knee level (see the module docstring), or None when throughput is still
    rising at the last load (or the series has fewer than three loads)."""
    thr, lat = s.mean("output_throughput"), s.mean("median_e2el_ms")
    if len(s.levels) < 3 or any(v is None for v in thr) or any(v is None for v in lat):
        return None
    for k in range(len(thr) - 1):
        cv = s.levels[k].summary["output_throughput"].cv or 0.0
        tol = max(KNEE_GAIN, 2 * cv)
        flat = all(t <= thr[k] * (1 + tol) for t in thr[k + 1:])
        if flat and lat[-1] > lat[k] * (1 + KNEE_LATENCY):
            return k
    return None


FRONTIER_GAIN = 0.01     # a lower-interactivity load joins the frontier only for >1% more


def frontier(s: Series, y_metric: str, within: set[str] | None = None
             ) -> list[tuple[float, float, str]]:
    """The series' Pareto-optimal (interactivity, y, load) points, by interactivity: from the
    most interactive load down, a load joins only when it gives more than FRONTIER_GAIN
    more throughput than every load already on it. (Beyond an engine's batch limit, loads
    differ only by queueing: same TPOT, same throughput, and noise alone would order them.)
    ``within``: only these loads (those that meet the SLO's TTFT objective)."""
    pts = [(lv.summary["interactivity"].mean, lv.summary[y_metric].mean, lv.load)
           for lv in s.levels if "interactivity" in lv.summary and y_metric in lv.summary
           and (within is None or lv.load in within)]
    keep, best = [], -math.inf
    for p in sorted(pts, key=lambda p: (-p[0], -p[1])):
        if best == -math.inf or p[1] > best * (1 + FRONTIER_GAIN):
            keep.append(p)
            best = p[1]
    return sorted(keep)


def ttft_within(s: Series, run: Run) -> set[str] | None:
    """The loads whose TTFT statistic meets the SLO's TTFT objective (None: no such
    objective). Interactivity comes from TPOT alone, so without this a load where requests
    queue for seconds would look as interactive as one where they do not."""
    slo = run.meta.slo
    if slo is None or slo.limit("ttft") is None:
        return None
    name = f"{STAT_OF_PERCENTILE[slo.percentile]}_ttft_ms"
    return {lv.load for lv in s.levels if name in lv.summary
            and lv.summary[name].mean <= slo.limit("ttft")}


def _at(line: list[tuple[float, float, str]], x: float) -> float:
    """The frontier drawn as straight lines between its points, at interactivity x."""
    for (x0, y0, _), (x1, y1, _) in zip(line, line[1:], strict=False):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return line[0][1] if x <= line[0][0] else line[-1][1]


def compare_frontiers(a: list, b: list) -> tuple[list[float], list[tuple[str, float, float]]]:
    """Crossings (interactivity) and segments (leader "a"/"b", from, to) over the range
    both frontiers cover; empty when they share none."""
    if len(a) < 2 or len(b) < 2:
        return [], []
    lo, hi = max(a[0][0], b[0][0]), min(a[-1][0], b[-1][0])
    if lo >= hi:
        return [], []
    grid = sorted({lo, hi} | {p[0] for p in a + b if lo < p[0] < hi})
    diff = [_at(a, x) - _at(b, x) for x in grid]
    crossings: list[float] = []
    segments: list[tuple[str, float, float]] = []
    start, lead = grid[0], None
    for i, (x, d) in enumerate(zip(grid, diff, strict=True)):
        side = "a" if d > 0 else "b" if d < 0 else lead
        if lead is None:
            lead = side
        elif side != lead:
            x0, d0 = grid[i - 1], diff[i - 1]
            cross = x0 + (x - x0) * d0 / (d0 - d) if d0 != d else x
            crossings.append(cross)
            segments.append((lead, start, cross))
            start, lead = cross, side
    if lead is not None:
        segments.append((lead, start, grid[-1]))
    return crossings, segments


def objectives(run: Run) -> list[tuple[str, float]] | None:
    """(curve metric, limit in ms) of each SLO objective, e.g. ("p99_ttft_ms", 2000.0);
    None without an SLO."""
    slo = run.meta.slo
    if slo is None:
        return None
    stat = STAT_OF_PERCENTILE[slo.percentile]
    return [(ids.latency_field(stat, m), limit) for m, limit in slo.objectives]


def capacity(s: Series, run: Run) -> dict[str, Any] | None:
    """The SLO capacity of a series (see the module docstring), or None without an SLO."""
    names = objectives(run)
    if names is None:
        return None
    if not all(any(n in lv.summary for lv in s.levels) for n, _ in names):
        return {"status": NONE, "missing": [n for n, _ in names
                                             if not any(n in lv.summary for lv in s.levels)]}

    def find(bound: str) -> tuple[str, float | None, int]:
        def value(lv: Level, n: str) -> float | None:
            sm = lv.summary.get(n)
            if sm is None:
                return None
            v = getattr(sm, bound)
            return sm.mean if v is None else v
        for i, lv in enumerate(s.levels):
            failing = [(n, lim) for n, lim in names
                       if value(lv, n) is not None and value(lv, n) > lim]
            if not failing:
                continue
            if i == 0:
                return BELOW, None, i
            prev = s.levels[i - 1]
            if math.isinf(lv.x):
                return NOT_REACHED, prev.x, i
            best = math.inf
            for n, lim in failing:
                v0, v1 = value(prev, n), value(lv, n)
                x = prev.x if v0 is None or v1 == v0 else \
                    prev.x + (lim - v0) / (v1 - v0) * (lv.x - prev.x)
                best = min(best, min(max(x, prev.x), lv.x))
            return INTERPOLATED, best, i
        finite = [lv.x for lv in s.levels if not math.isinf(lv.x)]
        return NOT_REACHED, max(finite) if finite else None, len(s.levels)

    status, cap, first_fail = find("mean")
    _, optimistic, _ = find("low")        # latencies at their interval's low end
    _, pessimistic, _ = find("high")
    limiting = None
    if status == INTERPOLATED:
        lv, prev = s.levels[first_fail], s.levels[first_fail - 1]
        limiting = min(((n, lim) for n, lim in names
                        if n in lv.summary and lv.summary[n].mean > lim),
                       key=lambda nl: _cross_x(prev, lv, *nl))[0]
    return {"status": status, "value": cap, "low": pessimistic, "high": optimistic,
            "limiting": limiting, "percentile": run.meta.slo.percentile,
            "between": [s.levels[first_fail - 1].load, s.levels[first_fail].load]
            if status == INTERPOLATED else []}


def _cross_x(prev: Level, lv: Level, n: str, lim: float) -> float:
    v0, v1 = prev.summary[n].mean, lv.summary[n].mean
    return prev.x if v1 == v0 else prev.x + (lim - v0) / (v1 - v0) * (lv.x - prev.x)


def meets_slo(lv: Level, run: Run) -> bool | None:
    """Whether a load's objective statistics (means over repeats) are all within the SLO;
    None without an SLO or when the files do not report one of them."""
    names = objectives(run)
    if names is None or not all(n in lv.summary for n, _ in names):
        return None
    return all(lv.summary[n].mean <= lim for n, lim in names)


def _interp(s: Series, x: float, metric: str) -> float | None:
    pts = [(lv.x, lv.summary[metric].mean) for lv in s.levels if metric in lv.summary
           and not math.isinf(lv.x)]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    for x0, y0 in pts:
        if x0 == x:
            return y0
    return None


def usd_per_mtok(price: float, gpus: int, tok_s: float) -> float:
    return price * gpus / 3600.0 / tok_s * 1e6


def setting_figures(run: Run, run_yaml: Source) -> list[Figure]:
    """The SLO, prices and GPU count as run.yaml declares them, so the page can cite them.
    ``run_yaml`` is the Source of run.yaml (path and sha256); keys are added here."""
    def src(key: str) -> tuple[Source, ...]:
        return (replace(run_yaml, key=key),)

    out = []
    slo = run.meta.slo
    if slo is not None:
        out.append(figure(id=ids.campaign("slo.percentile"), value=slo.percentile, unit="count",
                          decimals=0, sources=src("slo.percentile"),
                          method=said("curves.slo_percentile")))
        for metric, limit in slo.objectives:
            out.append(figure(id=ids.campaign(f"slo.{metric}_ms"), value=limit, unit="ms",
                              decimals=0, sources=src(f"slo.{metric}_ms"),
                              method=said("curves.objective", metric=metric.upper())))
    if run.meta.cost is not None and run.meta.gpus:
        out.append(figure(id=ids.campaign("cost.gpus"), value=run.meta.gpus, unit="count",
                          decimals=0, sources=src("hardware.gpus"),
                          method=said("curves.gpus")))
        for e in run.meta.engines:
            price = run.meta.cost.price(e.id)
            if price is not None:
                key = f"cost.engines.{e.id}" if e.id in dict(run.meta.cost.engines) \
                    else "cost.gpu_hour_usd"
                out.append(figure(id=ids.campaign(f"cost.{e.id}"), value=price,
                                  unit="USD/GPU-h", decimals=2, sources=src(key),
                                  context={"engine": e.id},
                                  method=said("curves.price")))
    return out


def _asked(run: Run, p: dict[str, Any]) -> dict[str, Any]:
    """The point with the requests its workload asks for (run.yaml's num_prompts), for the
    check that every request was sent."""
    try:
        asked = run.meta.workload(p["workload"]).num_prompts
    except KeyError:
        asked = None
    return {**p, "num_prompts_target": asked}


def validity_figures(run: Run, ing: Ingested) -> tuple[dict[str, Validity], list[Figure]]:
    """Every point's checks (``analyses.validity``), single-point runs included: the
    verdicts by point id, and one figure ``point.<p>.validity`` per point whose context
    lists every check with its state (found, passed or not evaluable, and what it lacked)."""
    checks = check_points([_asked(run, p) for p in ing.points], ing.requests)
    validity = {v.point: v for v in checks}
    figures = []
    for p in ing.points:
        pid = p["point"]
        v = validity[pid]
        figures.append(figure(
            id=ids.point(pid, "validity"), value=v.verdict, unit="verdict",
            sources=(_point_source(p, "completed"),),
            depends_on=tuple(ids.point(pid, n) for n in (
                "completed", "failed", "duration", "cancelled", "cancellation_rate",
                "requests_asked", "duration_asked") if _num(p.get(n)) is not None),
            context={"engine": p["engine"], "workload": p["workload"], "load": p["load"],
                     "variant": p.get("variant") or "",
                     "repeat": int(p["repeat"]), "not_evaluable": len(v.not_evaluable),
                     "x": _finite(load_value(p)),
                     "checks": [{"code": c.code, "rule": c.rule, "severity": c.severity,
                                 "value": c.value, "limit": c.limit, "unit": c.unit,
                                 "missing": list(c.missing), "asked": c.asked,
                                 "basis": c.basis}
                                for c in v.checks]},
            method=said("curves.validity", checks=list(ORDER), cancelled="cancelled",
                        order="valid < flagged < saturated < cannot tell < invalid",
                        unverified="unverified")))
        share = _failed_share(p)
        if share is not None:
            figures.append(figure(
                id=ids.point(pid, "failed_share"), value=share, unit="%", decimals=1,
                depends_on=tuple(ids.point(pid, n) for n in ("completed", "failed", "cancelled")
                                 if _num(p.get(n)) is not None),
                context={"engine": p["engine"], "workload": p["workload"],
                         "load": p["load"], "variant": p.get("variant") or "",
                         "repeat": int(p["repeat"])},
                method=said("curves.failed_share", hundred=100)))
    return validity, figures


def _failed_share(p: dict[str, Any]) -> float | None:
    """The share of a point's requests that failed, the cancellations asked left out (of
    the requests not cancelled), in %: None without both counts or with no such failure
    (a share of 0 is said by the failed count itself)."""
    completed, failed = _num(p.get("completed")), _num(p.get("failed"))
    if completed is None or failed is None:
        return None
    failed -= cancelled_count(p)
    if failed <= 0:
        return None
    return failed / (completed + failed) * 100.0


def campaign_figures(run: Run, ing: Ingested, run_yaml: Source | None = None,
                     validity: dict[str, Validity] | None = None) -> Campaign:
    """Every figure of the campaign sections (see the module docstring); ``run_yaml`` (the
    Source of run.yaml) lets the SLO, prices and GPU count be cited. ``validity``: the
    points' checks as ``validity_figures`` made them (their figures registered there);
    without it they are made and registered here."""
    figures: list[Figure] = setting_figures(run, run_yaml) if run_yaml else []
    if not ing.points:
        return Campaign(series=[], validity=validity or {}, figures=[], frontiers={})
    by_point: dict[str, list[dict]] = defaultdict(list)
    for r in ing.requests:
        by_point[r["point"]].append(r)
    if validity is None:
        validity, made = validity_figures(run, ing)
        figures += made
    checks = [validity[p["point"]] for p in ing.points]
    good: dict[str, float] = {}
    for p in ing.points:
        pid = p["point"]
        g = goodput(p, by_point.get(pid, []), run)
        if g is not None:
            good[pid] = g
            figures.append(figure(
                id=ids.point(pid, "goodput"), value=g, unit="req/s", decimals=3,
                sources=(_point_source(p, "requests"),),
                context={"engine": p["engine"], "workload": p["workload"],
                         "load": p["load"], "repeat": int(p["repeat"])},
                method=said("curves.goodput")))
    series = build_series(run, ing, validity, good)
    repeats = max((len(lv.points) for s in series for lv in s.levels), default=0)
    excluded = sorted(v.point for v in checks if v.verdict == INVALID)
    every = tuple(_point_source(p, "completed") for p in ing.points)
    verdicts = [v.verdict for v in checks]
    figures += [
        figure(id=ids.campaign("points"), value=len(ing.points), unit="count", decimals=0,
               sources=every, method=said("curves.points")),
        figure(id=ids.campaign("valid"), value=verdicts.count(VALID), unit="count",
               decimals=0, depends_on=tuple(ids.point(v.point, "validity") for v in checks),
               method=said("curves.valid")),
        figure(id=ids.campaign("unverified"), value=verdicts.count(UNVERIFIED), unit="count",
               decimals=0, depends_on=tuple(ids.point(v.point, "validity") for v in checks),
               context={"points": sorted(v.point for v in checks if v.verdict == UNVERIFIED)},
               method=said("curves.unverified")),
        figure(id=ids.campaign("flagged"), value=verdicts.count(FLAGGED), unit="count",
               decimals=0, depends_on=tuple(ids.point(v.point, "validity") for v in checks),
               method=said("curves.flagged")),
        figure(id=ids.campaign("saturated"), value=verdicts.count(SATURATED), unit="count",
               decimals=0, depends_on=tuple(ids.point(v.point, "validity") for v in checks),
               context={"points": sorted(v.point for v in checks if v.verdict == SATURATED)},
               method=said("curves.saturated")),
        figure(id=ids.campaign("cannot_tell"), value=verdicts.count(CANNOT_TELL),
               unit="count", decimals=0,
               depends_on=tuple(ids.point(v.point, "validity") for v in checks),
               context={"points": sorted(v.point for v in checks
                                         if v.verdict == CANNOT_TELL)},
               method=said("curves.cannot_tell")),
        figure(id=ids.campaign("not_evaluable"),
               value=sum(len(v.not_evaluable) for v in checks), unit="count", decimals=0,
               depends_on=tuple(ids.point(v.point, "validity") for v in checks),
               method=said("curves.not_evaluable")),
        figure(id=ids.campaign("series"), value=len(series), unit="count", decimals=0,
               sources=every, method=said("curves.series")),
        figure(id=ids.campaign("repeats"), value=repeats, unit="count", decimals=0,
               sources=every, method=said("curves.repeats")),
        figure(id=ids.campaign("excluded"), value=len(excluded), unit="count", decimals=0,
               context={"points": excluded},
               depends_on=tuple(ids.point(v.point, "validity") for v in checks),
               method=said("curves.excluded")),
    ]
    frontiers: dict[tuple[str, str], list] = {}
    for s in series:
        figures += _series_figures(run, s)
        y = "output_throughput_per_gpu" if run.meta.gpus else "output_throughput"
        within = ttft_within(s, run)
        line = frontier(s, y, within)
        frontiers[(s.workload, s.key)] = line
        figures.append(figure(
            id=ids.pareto(s.workload, s.key, None, "frontier"), value=len(line),
            unit="points", decimals=0,
            depends_on=tuple(ids.curve(s.workload, s.key, load, m) for _, _, load in line
                             for m in ("interactivity", y)),
            context={"engine": s.engine, "variant": s.variant, "y": y,
                     "loads": [load for _, _, load in line],
                     "ttft_filtered": within is not None,
                     "left_out": sorted(lv.load for lv in s.levels
                                        if within is not None and lv.load not in within)},
            method=said("curves.frontier", gain=f"{FRONTIER_GAIN:.0%}", y=y,
                        within=said("curves.within_ttft") if within is not None else "")))
        if line:
            top = max(line, key=lambda p: p[1])
            deps = (ids.pareto(s.workload, s.key, None, "frontier"),)
            figures += [
                figure(id=ids.pareto(s.workload, s.key, None, "top"), value=top[1],
                       unit=METRICS[y][0], decimals=1, depends_on=deps,
                       context={"engine": s.engine, "variant": s.variant, "load": top[2]},
                       method=said("curves.top", y=y)),
                figure(id=ids.pareto(s.workload, s.key, None, "top_x"), value=top[0],
                       unit="tok/s/user", decimals=1, depends_on=deps,
                       context={"engine": s.engine, "variant": s.variant, "load": top[2]},
                       method=said("curves.top_x"))]
    figures += _comparisons(run, series, frontiers)
    return Campaign(series=series, validity=validity, figures=figures, frontiers=frontiers)


def _series_figures(run: Run, s: Series) -> list[Figure]:
    out = []
    ctx = {"engine": s.engine, "variant": s.variant, "workload": s.workload, "kind": s.kind}
    for lv in s.levels:
        for metric, sm in lv.summary.items():
            unit, decimals, what = METRICS[metric]
            base = {"interactivity": "median_tpot_ms",
                    "output_throughput_per_gpu": "output_throughput"}.get(metric, metric)
            deps = tuple(ids.point(p["point"], base) for p in lv.points
                         if metric == "goodput" or _num(p.get(base)) is not None)
            out.append(figure(
                id=ids.curve(s.workload, s.key, lv.load, metric), value=sm.mean, unit=unit,
                decimals=decimals, depends_on=deps,
                context={**ctx, "load": lv.load, "x": _finite(lv.x), "metric": metric, "n": sm.n,
                         "std": sm.std, "cv": sm.cv, "low": sm.low, "high": sm.high,
                         "method": sm.method, "excluded": lv.excluded,
                         "saturated": lv.saturated, "cannot_tell": lv.cannot_tell},
                method=said("curves.mean", what=_what(metric), n="n ≥ 3", level="95%",
                            formula="mean × exp(∓ t(n − 1) · cv ÷ √n)")))
    k = knee(s)
    out.append(figure(
        id=ids.curve_series(s.workload, s.key, "knee"),
        value=s.levels[k].load if k is not None else NONE, unit="verdict",
        depends_on=tuple(ids.curve(s.workload, s.key, lv.load, m) for lv in s.levels
                         for m in ("output_throughput", "median_e2el_ms")
                         if m in lv.summary),
        context={**ctx, "x": _finite(s.levels[k].x) if k is not None else None,
                 "gain": KNEE_GAIN, "latency": KNEE_LATENCY,
                 "saturated": [lv.load for lv in s.levels if lv.saturated]},
        method=said("curves.knee", gain=f"{KNEE_GAIN:.0%}", latency=f"{KNEE_LATENCY:.0%}")))
    if k is not None:
        thr = s.mean("output_throughput")
        out.append(figure(
            id=ids.curve_series(s.workload, s.key, "fall_pct"),
            value=(thr[k] - thr[-1]) / thr[k] * 100, unit="%", decimals=0,
            depends_on=(ids.curve(s.workload, s.key, s.levels[k].load, "output_throughput"),
                        ids.curve(s.workload, s.key, s.levels[-1].load,
                                  "output_throughput")),
            context={**ctx, "knee": s.levels[k].load, "last": s.levels[-1].load,
                     "falls": (thr[k] - thr[-1]) / thr[k] * 100 > KNEE_FALL_PCT},
            method=said("curves.fall", hundred=100)))
    out += _peak_and_growth(s, ctx)
    out += _spreads(s, ctx)
    out += _slo_and_cost(run, s)
    return out


def _spreads(s: Series, ctx: dict[str, Any]) -> list[Figure]:
    """Per load with two valid repeats or more: how far apart their output throughputs
    are (highest ÷ lowest), and whether that is more than REPEAT_SPREAD."""
    out = []
    for lv in s.levels:
        vals = lv.values.get("output_throughput", [])
        if len(vals) < 2 or min(vals) <= 0:
            continue
        lo, hi = min(vals), max(vals)
        out.append(figure(
            id=ids.curve(s.workload, s.key, lv.load, "spread"), value=hi / lo, unit="x",
            decimals=2,
            depends_on=tuple(ids.point(p["point"], "output_throughput") for p in lv.points
                             if _num(p.get("output_throughput")) is not None),
            context={**ctx, "load": lv.load, "x": _finite(lv.x), "of": "output_throughput",
                     "n": len(vals), "lowest": lo, "highest": hi,
                     "differs": hi / lo > REPEAT_SPREAD, "within": REPEAT_SPREAD},
            method=said("curves.spread", within=REPEAT_SPREAD)))
    return out


def _measured(s: Series, metric: str) -> list[tuple[int, float]]:
    """(level index, mean) of the levels of ``s`` that measured ``metric``, lightest first."""
    return [(i, v) for i, v in enumerate(s.mean(metric)) if v is not None]


def _peak_and_growth(s: Series, ctx: dict[str, Any]) -> list[Figure]:
    """Where output throughput peaks (``peak``: the load, and whether it is the heaviest
    measured) and how median TTFT grows from the lightest load to the heaviest
    (``ttft_growth``): figures for the headline of a sweep."""
    out = []
    thr = _measured(s, "output_throughput")
    if len(thr) >= 2:
        best, _ = max(thr, key=lambda iv: iv[1])       # the first of equal maxima
        last = thr[-1][0]
        out.append(figure(
            id=ids.curve_series(s.workload, s.key, "peak"), value=s.levels[best].load,
            unit="verdict",
            depends_on=tuple(ids.curve(s.workload, s.key, s.levels[i].load,
                                       "output_throughput") for i, _ in thr),
            context={**ctx, "x": _finite(s.levels[best].x), "at_heaviest": best == last,
                     "best": ids.curve(s.workload, s.key, s.levels[best].load,
                                       "output_throughput"),
                     "heaviest": ids.curve(s.workload, s.key, s.levels[last].load,
                                           "output_throughput"),
                     "heaviest_load": s.levels[last].load,
                     "heaviest_x": _finite(s.levels[last].x)},
            method=said("curves.peak")))
    ttft = _measured(s, "median_ttft_ms")
    if len(ttft) >= 2 and ttft[0][1] > 0:
        (lo, first), (hi, last_v) = ttft[0], ttft[-1]
        ratio = last_v / first
        out.append(figure(
            id=ids.curve_series(s.workload, s.key, "ttft_growth"), value=ratio, unit="x",
            decimals=1,
            depends_on=tuple(ids.curve(s.workload, s.key, s.levels[i].load,
                                       "median_ttft_ms") for i in (lo, hi)),
            context={**ctx, "from": ids.curve(s.workload, s.key, s.levels[lo].load,
                                              "median_ttft_ms"),
                     "to": ids.curve(s.workload, s.key, s.levels[hi].load,
                                     "median_ttft_ms"),
                     "from_load": s.levels[lo].load, "from_x": _finite(s.levels[lo].x),
                     "to_load": s.levels[hi].load, "to_x": _finite(s.levels[hi].x),
                     "grows": ratio >= TTFT_GROWTH, "threshold": TTFT_GROWTH},
            method=said("curves.ttft_growth")))
    return out


def _slo_and_cost(run: Run, s: Series) -> list[Figure]:
    out = []
    ctx = {"engine": s.engine, "variant": s.variant, "workload": s.workload, "kind": s.kind}
    unit = "concurrency" if s.kind == "concurrency" else "req/s"
    cap = capacity(s, run)
    names = objectives(run) or []
    for lv in s.levels:
        meets = meets_slo(lv, run)
        if meets is not None:
            out.append(figure(
                id=ids.slo(s.workload, s.key, f"{lv.load}.meets"), value=YES if meets else NO,
                unit="verdict", context={**ctx, "load": lv.load},
                depends_on=tuple(ids.curve(s.workload, s.key, lv.load, n) for n, _ in names),
                method=said("curves.meets")))
    if cap is not None:
        out.append(figure(
            id=ids.slo(s.workload, s.key, "capacity"), value=cap.get("value"), unit=unit,
            decimals=1, context={**ctx, **cap},
            depends_on=tuple(f.id for f in out if f.unit == "verdict"),
            method=said("curves.capacity")))
        if cap["status"] == INTERPOLATED or (cap["status"] == NOT_REACHED and cap.get("value")):
            tok = _interp(s, cap["value"], "output_throughput")
            ends = [None if x is None else _interp(s, x, "output_throughput")
                    for x in (cap.get("low"), cap.get("high"))]
            if tok is not None:
                out.append(figure(
                    id=ids.slo(s.workload, s.key, "capacity_output"), value=tok,
                    unit="tok/s", decimals=1,
                    context={**ctx, "status": cap["status"],
                             "low": min(ends) if None not in ends else None,
                             "high": max(ends) if None not in ends else None},
                    depends_on=(ids.slo(s.workload, s.key, "capacity"),),
                    method=said("curves.capacity_output")))
    price = run.meta.cost.price(s.engine) if run.meta.cost else None
    gpus = run.meta.gpus
    if price is not None and gpus:
        for lv in s.levels:
            sm = lv.summary.get("output_throughput")
            if sm is None or not sm.mean:
                continue
            lo = usd_per_mtok(price, gpus, sm.high) if sm.high else None
            hi = usd_per_mtok(price, gpus, sm.low) if sm.low and sm.low > 0 else None
            out.append(figure(
                id=ids.cost(s.workload, s.key, lv.load),
                value=usd_per_mtok(price, gpus, sm.mean), unit="USD/Mtok", decimals=2,
                context={**ctx, "load": lv.load, "low": lo, "high": hi, "price": price,
                         "gpus": gpus},
                depends_on=(ids.curve(s.workload, s.key, lv.load, "output_throughput"),),
                method=said("curves.cost", price=f"{price:g}", gpus=gpus, hour=3600,
                            million="10⁶")))
        cap_fid = ids.slo(s.workload, s.key, "capacity_output")
        tok = next((f.value for f in out if f.id == cap_fid), None)
        if tok:
            out.append(figure(
                id=ids.cost(s.workload, s.key, "at_capacity"),
                value=usd_per_mtok(price, gpus, tok), unit="USD/Mtok", decimals=2,
                context={**ctx, "price": price, "gpus": gpus}, depends_on=(cap_fid,),
                method=said("curves.cost_capacity")))
    return out


COMPARED = {"output_throughput": "higher is better", "median_e2el_ms": "lower is better",
            "median_ttft_ms": "lower is better"}


def _comparisons(run: Run, series: list[Series], frontiers: dict) -> list[Figure]:
    out = []
    for i, a in enumerate(series):
        for b in series[i + 1:]:
            if (a.workload, a.variant) != (b.workload, b.variant) or a.engine == b.engine:
                continue
            w = a.workload
            ctx = {"workload": w, "a": a.key, "b": b.key, "engine_a": a.engine,
                   "engine_b": b.engine, "variant": a.variant}
            loads_b = {lv.load: lv for lv in b.levels}
            for metric in COMPARED:
                counts = {stats.HIGHER: 0, stats.LOWER: 0, stats.TIE: 0, stats.UNKNOWN: 0}
                for la in a.levels:
                    lb = loads_b.get(la.load)
                    if lb is None or metric not in la.values or metric not in lb.values:
                        continue
                    r = stats.ratio_interval(la.values[metric], lb.values[metric])
                    order = len(out)
                    both = (meets_slo(la, run), meets_slo(lb, run))
                    within = None if None in both else all(both)
                    verdict = stats.verdict(r.low, r.high, 1.0)
                    counts[verdict] += 1
                    fid = ids.compare(w, a.key, b.key, la.load, metric)
                    deps = (ids.curve(w, a.key, la.load, metric),
                            ids.curve(w, b.key, la.load, metric))
                    out.append(figure(
                        id=fid, value=r.value, unit="x", decimals=2, depends_on=deps,
                        context={**ctx, "load": la.load, "order": order, "metric": metric,
                                 "within_slo": within,
                                 "low": r.low,
                                 "high": r.high, "n_a": r.n_a, "n_b": r.n_b, "df": r.df,
                                 "method": r.method, "verdict": verdict},
                        method=said("curves.ratio", a=a.key, b=b.key, level="95%",
                                    n="n ≥ 2")))
                    out.append(figure(
                        id=ids.compare(w, a.key, b.key, la.load, metric, "verdict"),
                        value=verdict, unit="verdict", depends_on=(fid,),
                        context={**ctx, "load": la.load, "metric": metric},
                        method=said("curves.ratio_verdict", one=1)))
                verdict_ids = tuple(f.id for f in out if f.unit == "verdict"
                                    and f.context.get("metric") == metric
                                    and f.context.get("a") == a.key
                                    and f.context.get("b") == b.key)
                for verdict, count in (counts.items() if verdict_ids else ()):
                    out.append(figure(
                        id=ids.compare_count(w, a.key, b.key, metric, verdict), value=count,
                        unit="count", decimals=0, context={**ctx, "metric": metric},
                        depends_on=verdict_ids,
                        method=said("curves.loads_verdict", metric=metric)))
            out += _pareto_pair(w, a, b, frontiers, ctx)
    return out


def _pareto_pair(w: str, a: Series, b: Series, frontiers: dict, ctx: dict) -> list[Figure]:
    fa, fb = frontiers[(w, a.key)], frontiers[(w, b.key)]
    crossings, segments = compare_frontiers(fa, fb)
    deps = (ids.pareto(w, a.key, None, "frontier"), ids.pareto(w, b.key, None, "frontier"))
    out = [figure(id=ids.pareto(w, a.key, b.key, "crossings"), value=len(crossings),
                  unit="crossings", decimals=0, depends_on=deps,
                  context={**ctx, "segments": len(segments)},
                  method=said("curves.crossings"))]
    for i, x in enumerate(crossings, 1):
        out.append(figure(id=ids.pareto(w, a.key, b.key, f"cross{i}"), value=x,
                          unit="tok/s/user", decimals=1, depends_on=deps, context=ctx,
                          method=said("curves.cross")))
    for i, (lead, x0, x1) in enumerate(segments, 1):
        leader = a if lead == "a" else b
        seg = f"seg{i}"
        out += [
            figure(id=ids.pareto(w, a.key, b.key, f"{seg}.leader"), value=leader.engine,
                   unit="verdict", depends_on=deps, context={**ctx, "series": leader.key},
                   method=said("curves.leader")),
            figure(id=ids.pareto(w, a.key, b.key, f"{seg}.from"), value=x0,
                   unit="tok/s/user", decimals=1, depends_on=deps, context=ctx,
                   method=said("curves.range_from")),
            figure(id=ids.pareto(w, a.key, b.key, f"{seg}.to"), value=x1,
                   unit="tok/s/user", decimals=1, depends_on=deps, context=ctx,
                   method=said("curves.range_to")),
        ]
    return out


def campaign_workloads(ing: Ingested) -> Ingested:
    """``ing`` with only the workloads measured at several loads or with repeats: the
    single-point workloads (one result per engine) are the other notebooks' subject."""
    count: dict[tuple[str, str, str], int] = defaultdict(int)
    for p in ing.points:
        count[(p["workload"], p["engine"], p.get("variant") or "")] += 1
    many = {w for (w, _, _), n in count.items() if n > 1}
    points = [p for p in ing.points if p["workload"] in many]
    keep = {p["point"] for p in points}
    return replace(ing, points=points, requests=[r for r in ing.requests if r["point"] in keep])


def validity_table(validity: dict[str, Validity]):
    """One row per point: its verdict, what the checks found, which could not run (and
    what they lacked) and which passed."""
    import pandas as pd

    return pd.DataFrame(
        [{"point": v.point, "verdict": v.verdict,
          "found": ", ".join(f"{k.code} ({k.severity})" for k in v.found),
          "not_evaluable": ", ".join(f"{k.rule} (no {'/'.join(k.missing)})"
                                     for k in v.not_evaluable),
          "passed": ", ".join(k.rule for k in v.checks if k not in v.found
                              and k not in v.not_evaluable)}
         for v in validity.values()],
        columns=["point", "verdict", "found", "not_evaluable", "passed"])


def tables(c: Campaign) -> dict[str, Any]:
    """The notebook's views of a campaign: validity per point, curves, series, comparisons."""
    import pandas as pd

    validity = validity_table(c.validity)
    curves, series, compare = [], [], []
    by_id = {f.id: f for f in c.figures}
    for s in c.series:
        for lv in s.levels:
            row = {"workload": s.workload, "series": s.key, "load": lv.load, "n": len(lv.points),
                   "excluded": len(lv.excluded)}
            for metric in ("output_throughput", "interactivity", "median_ttft_ms",
                           "p99_ttft_ms", "median_tpot_ms", "goodput"):
                sm = lv.summary.get(metric)
                row[metric] = None if sm is None else sm.mean
                if metric == "output_throughput" and sm is not None:
                    row.update(output_throughput_std=sm.std, output_throughput_cv=sm.cv,
                               output_throughput_low=sm.low, output_throughput_high=sm.high,
                               method=sm.method)
            curves.append(row)
        get = by_id.get
        knee_fig = get(ids.curve_series(s.workload, s.key, "knee"))
        cap = get(ids.slo(s.workload, s.key, "capacity"))
        cost = get(ids.cost(s.workload, s.key, "at_capacity"))
        series.append({"workload": s.workload, "series": s.key,
                       "knee": knee_fig.value if knee_fig else None,
                       "slo_capacity": cap.value if cap else None,
                       "capacity_status": cap.context.get("status") if cap else None,
                       "usd_per_mtok_at_capacity": cost.value if cost else None})
    for f in c.figures:
        if f.id.startswith("compare.") and "verdict" in f.context and f.unit == "×":
            compare.append({"workload": f.context["workload"], "a": f.context["a"],
                            "b": f.context["b"], "load": f.context["load"],
                            "metric": f.context["metric"], "ratio": f.value,
                            "low": f.context["low"], "high": f.context["high"],
                            "n_a": f.context["n_a"], "n_b": f.context["n_b"],
                            "verdict": f.context["verdict"]})
    return {"validity": validity, "curves": pd.DataFrame(curves),
            "series": pd.DataFrame(series), "compare": pd.DataFrame(compare)}
