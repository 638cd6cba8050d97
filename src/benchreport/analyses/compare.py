"""Comparisons across runs, read from the results store: what changed, and what it did.

Three parts, each as registered figures:

- **What changed** between the base run and each other run: hardware, model, each engine's
  release (version, image, the version its log printed), each engine's launch settings and
  the benchmark clients (a workload id is a name, not a factor). Items are grouped into
  factors (one engine's release, one engine's settings, the hardware, …); a comparison
  whose runs differ in more than one
  factor cannot put a change down to any one of them, and the report says so first.
- **Per matched point**: points of two runs are paired by what they measured (the same
  engine, model, variant and load, input and output lengths within a tolerance;
  ``analyses.matching``), not by their workload ids; repeats pooled. Each metric's change
  as a ratio (other ÷ base) with an interval and a verdict, from ``analyses.gate.judge``
  (the gate's own): the interval comes from repeats when both runs have two or more
  (log-scale Welch t, as in a campaign), else from a relative noise floor declared for the
  metric, else, for the per-request metrics (TTFT, TPOT, E2E latency means), from
  resampling each run's requests (a percentile bootstrap; it treats the requests of a run
  as independent samples, so it does not see run-to-run variance and can understate the
  noise). No interval, no verdict: a change inside the noise is never called an
  improvement or a regression.
- **Trends** when three or more runs are compared: each metric of a matched point over the
  runs in date order, each step with the verdict of its change.
- **Load curves**: per engine and workload, each run's output throughput, p99 TTFT and mean
  TPOT at each of its loads (``Comparison.curves``), which the report overlays, one colour
  per run.
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import ids
from ..core.errors import ReportError
from ..core.figures import Figure, Source, figure
from ..core.methods import Said, said
from ..core.store import connect, rows_of, stored_runs
from ..core.verdicts import (
    IMPROVED,
    INTERVAL_LEVEL,
    INVALID,
    NO_INTERVAL,
    REGRESSED,
    SAME_DATA,
    TIE_IN_NOISE,
)
from .gate import FLOOR, HISTORY, REPEATS, REQUESTS, SAME, Judgement, Noise, judge
from .matching import (
    DEFAULT_TOLERANCE,
    Group,
    GroupKey,
    Match,
    Matching,
    groups_of,
    match_groups,
)

__all__ = ["CURVE_METRICS", "Comparison", "DEFINED_AS", "IGNORED_SETTINGS", "METRICS", "RESAMPLES",
           "StoredRun", "TREND_METRICS", "VERDICT_NAMES", "bootstrap_ratio", "change_figures",
           "changes", "compare_runs", "delta_figures", "judge_metric", "load_stored",
           "paired_requests", "point_source", "record", "slug", "tables", "trend_figures"]

# metric -> (unit, decimals, higher is better)
METRICS = {
    "duration": ("s", 1, False),
    "output_throughput": ("tok/s", 1, True),
    "request_throughput": ("req/s", 3, True),
    "mean_ttft_ms": ("ms", 1, False),
    "p99_ttft_ms": ("ms", 1, False),
    "mean_tpot_ms": ("ms", 2, False),
    "mean_itl_ms": ("ms", 2, False),
    "mean_e2el_ms": ("ms", 1, False),
}
# the latency a metric measures, to check that both runs' clients define it alike
DEFINED_AS = {"mean_ttft_ms": "ttft", "p99_ttft_ms": "ttft", "mean_tpot_ms": "tpot",
              "mean_itl_ms": "itl", "mean_e2el_ms": "e2el",
              # only a client the user declares defines its throughputs (no code elsewhere)
              "output_throughput": "output_throughput",
              "request_throughput": "request_throughput"}
RESAMPLES = 2000
# launch settings that say where a server listens or what it calls the model, not how it
# runs: a difference in them is not a factor of a comparison
IGNORED_SETTINGS = {"host", "port", "served_model_name", "api_key", "uvicorn_log_level",
                    "log_level", "disable_log_requests", "enable_log_requests"}
TREND_METRICS = ("duration", "output_throughput", "p99_ttft_ms", "mean_tpot_ms")
VERDICT_NAMES = {IMPROVED: "improved", REGRESSED: "regressed", TIE_IN_NOISE: "within_noise",
                 NO_INTERVAL: "no_interval", SAME_DATA: "same_data"}


@dataclass
class StoredRun:
    """One run as the store holds it."""

    id: str
    row: dict[str, Any]
    points: list[dict[str, Any]]
    requests: dict[str, list[dict[str, Any]]]
    settings: list[dict[str, Any]]
    inputs: list[dict[str, Any]]
    invalid: set[str]

    @property
    def key(self) -> str:
        return ids.run_key(self.id)

    def run_yaml(self) -> Source | None:
        for row in self.inputs:
            if row["role"] == "run":
                return Source(path=row["path"], sha256=row["sha256"])
        return None


@dataclass
class Comparison:
    runs: list[StoredRun]                 # base first, then the others in the given order
    ordered: list[StoredRun]              # by date (for trends)
    figures: list[Figure] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    matched: list[dict[str, Any]] = field(default_factory=list)
    only: list[dict[str, Any]] = field(default_factory=list)
    trends: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # matched, metric not judged
    matchings: list[Matching] = field(default_factory=list)     # one per pair of runs
    curves: list[dict[str, Any]] = field(default_factory=list)  # per engine and workload


def load_stored(store: Path, run_ids: list[str]) -> list[StoredRun]:
    have = set(stored_runs(store))
    missing = [r for r in run_ids if r not in have]
    if missing:
        raise ReportError(f"run {missing[0]} is not in the results store",
                          path=store.as_posix(),
                          hint=f"build it first: make report RUN={missing[0]}")
    out = []
    con = connect(store)
    tables = {name for (name,) in con.execute("SELECT view_name FROM duckdb_views() "
                                              "WHERE NOT internal").fetchall()}
    for run_id in run_ids:
        def q(table: str, order: str, run_id: str = run_id) -> list[dict[str, Any]]:
            if table not in tables:
                return []
            # a literal, not a parameter: DuckDB then reads only that run's partition
            literal = "'" + run_id.replace("'", "''") + "'"
            return rows_of(con, f"SELECT * EXCLUDE (run_id) FROM {table} WHERE run_id = "
                                f"{literal} ORDER BY {order}")
        requests: dict[str, list[dict[str, Any]]] = {}
        for r in q("requests", "point, \"index\""):
            requests.setdefault(r["point"], []).append(r)
        invalid = {r["id"] for r in q("figures", "id")
                   if r["id"].endswith(".validity") and r["value_text"] == INVALID}
        out.append(StoredRun(id=run_id, row=q("runs", "date")[0],
                             points=q("points", "point"),
                             requests=requests, settings=q("settings", "engine, file, line, key"),
                             inputs=q("inputs", "path"), invalid=invalid))
    return out


def slug(text: str) -> str:
    """``text`` as a figure-id part: runs of anything but letters, digits, _ and - as _."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(text)).strip("_") or "_"


# --- what changed ----------------------------------------------------------------------

def _engine_map(run: StoredRun) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in run.row.get("engines") or []}


def _settings_map(run: StoredRun) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(engine, field, key) -> the setting row (the last launch file wins, as ingest reads)."""
    return {(s["engine"], s["field"], s["key"]): s for s in run.settings}


def _shown(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "–"
    return str(value)


def changes(base: StoredRun, other: StoredRun) -> list[dict[str, Any]]:
    """Every item that differs between two runs: group (the factor), item, key, from, to and
    the sources of both values."""
    out: list[dict[str, Any]] = []
    ya, yb = base.run_yaml(), other.run_yaml()

    def add(group: str, item: str, key: str, a: Any, b: Any, src_a: Source | None,
            src_b: Source | None) -> None:
        if _shown(a) != _shown(b):
            out.append({"group": group, "item": item, "key": key, "from": _shown(a),
                        "to": _shown(b), "source_from": src_a, "source_to": src_b})

    def yaml_src(src: Source | None, key: str) -> Source | None:
        return Source(path=src.path, sha256=src.sha256, key=key) if src else None

    for key in ("servers", "gpus", "gpu_model"):
        add("hardware", key, f"hardware.{key}", base.row.get(key), other.row.get(key),
            yaml_src(ya, f"hardware.{key}"), yaml_src(yb, f"hardware.{key}"))
    for key in ("model", "quantization", "draft_model"):
        where = "model." + ("name" if key == "model" else key)       # the run.yaml key
        add("model", key, where, base.row.get(key), other.row.get(key),
            yaml_src(ya, where), yaml_src(yb, where))
    ea, eb = _engine_map(base), _engine_map(other)
    for engine in sorted(set(ea) | set(eb)):
        a, b = ea.get(engine, {}), eb.get(engine, {})
        if not a or not b:
            add(f"engine-{engine}", "present", f"engines[{engine}]", "yes" if a else "no",
                "yes" if b else "no", yaml_src(ya, f"engines[{engine}]"),
                yaml_src(yb, f"engines[{engine}]"))
            continue
        for key in ("version", "image"):
            add(f"release-{engine}", key, f"engines[{engine}].{key}", a.get(key), b.get(key),
                yaml_src(ya, f"engines[{engine}].{key}"),
                yaml_src(yb, f"engines[{engine}].{key}"))
        add(f"release-{engine}", "logged_version", f"{engine} log: version",
            a.get("logged_version"), b.get("logged_version"),
            _log_source(base, engine), _log_source(other, engine))
    sa, sb = _settings_map(base), _settings_map(other)
    for engine, fld, key in sorted(set(sa) | set(sb)):
        if fld == "flag_lines" or key in IGNORED_SETTINGS:
            continue
        ra, rb = sa.get((engine, fld, key)), sb.get((engine, fld, key))
        va = json.loads(ra["value"]) if ra else None
        vb = json.loads(rb["value"]) if rb else None
        add(f"settings-{engine}", f"{fld}-{key}", f"{engine} {fld}: {key}", va, vb,
            _setting_source(ra), _setting_source(rb))
    add("client", "clients", "points.client", base.row.get("clients"),
        other.row.get("clients"), None, None)
    # Workload ids are not a factor: they are names in run.yaml, points are matched by
    # what they measured (``matching``: load and lengths), and a point that differs in
    # those is listed as unmatched, with the reason.
    # a reconstruction's generator input: its results are set by construction
    sa, sb = (next((r for r in run.inputs if r["role"] == "scenario"), None)
              for run in (base, other))
    if sa or sb:
        add("scenario", "scenario", "scenario (sha256)", sa and sa["sha256"][:12],
            sb and sb["sha256"][:12], sa and Source(path=sa["path"], sha256=sa["sha256"]),
            sb and Source(path=sb["path"], sha256=sb["sha256"]))
    return out


def _log_source(run: StoredRun, engine: str) -> Source | None:
    for row in run.inputs:
        if row["role"] == "log" and f"/raw/{engine}/" in row["path"]:
            return Source(path=row["path"], sha256=row["sha256"])
    return None


def _setting_source(row: dict[str, Any] | None) -> Source | None:
    if not row:
        return None
    line = row.get("value_line") or row.get("line")
    return Source(path=row["file"], sha256=row["sha256"], key=row["key"],
                  lines=(int(line),) if line else ())


def change_figures(base: StoredRun, other: StoredRun,
                   items: list[dict[str, Any]]) -> list[Figure]:
    rk = other.key
    groups = sorted({c["group"] for c in items})
    method = said("compare.changed_items", base=base.id, run=other.id)
    srcs = tuple(s for s in (base.run_yaml(), other.run_yaml()) if s)
    figs = [figure(id=ids.diff(rk, "count"), value=len(items), unit="count", method=method,
                   sources=srcs, context={"base": base.id, "run": other.id}),
            figure(id=ids.diff(rk, "groups"), value=len(groups), unit="count",
                   method=said("compare.factors", groups=groups) if groups
                   else said("compare.factors_none"),
                   sources=srcs, depends_on=(ids.diff(rk, "count"),),
                   context={"base": base.id, "run": other.id, "groups": groups})]
    for c in items:
        item = slug(f"{c['group']}-{c['item']}")
        ctx = {"base": base.id, "run": other.id, "group": c["group"], "key": c["key"]}
        for part, run in (("from", base), ("to", other)):
            src = c[f"source_{part}"]
            figs.append(figure(id=ids.diff(rk, item, part), value=c[part], unit="text",
                               method=said("compare.item_in", key=c["key"], run=run.id),
                               sources=(src,) if src else (), context=ctx))
    return figs


# --- per matched point -----------------------------------------------------------------

def _groups(run: StoredRun) -> dict[GroupKey, Group]:
    """The run's points by engine, workload, load and variant (repeats pooled), invalid
    points left out."""
    engines = {e["id"]: e["name"] for e in run.row.get("engines") or []}
    skip = {p["point"] for p in run.points if ids.point(p["point"], "validity") in run.invalid}
    return groups_of(run.id, run.points, engines, run.row.get("model"), skip)


def _request_value(r: dict[str, Any], metric: str) -> float | None:
    if r.get("error"):
        return None
    if metric == "mean_ttft_ms":
        return r.get("ttft_ms")
    if metric == "mean_e2el_ms":
        return r.get("e2el_ms")
    if metric == "mean_tpot_ms" and None not in (r.get("e2el_ms"), r.get("ttft_ms")) \
            and (r.get("output_tokens") or 0) > 1:
        return (r["e2el_ms"] - r["ttft_ms"]) / (r["output_tokens"] - 1)
    return None


def paired_requests(a: StoredRun, pa: list[dict[str, Any]], b: StoredRun,
                    pb: list[dict[str, Any]], metric: str) -> list[tuple[float, float]]:
    """(value in a, value in b) for each request index, when both runs of one point sent the
    same requests (same count, same input and output tokens at every index); else []."""
    if len(pa) != 1 or len(pb) != 1:
        return []
    ra, rb = a.requests.get(pa[0]["point"], []), b.requests.get(pb[0]["point"], [])
    if len(ra) != len(rb) or any((x.get("input_tokens"), x.get("output_tokens")) !=
                                 (y.get("input_tokens"), y.get("output_tokens"))
                                 for x, y in zip(ra, rb, strict=True)):
        return []
    pairs = [(_request_value(x, metric), _request_value(y, metric))
             for x, y in zip(ra, rb, strict=True)]
    return [(x, y) for x, y in pairs if x is not None and y is not None]


def bootstrap_ratio(pairs: list[tuple[float, float]], seed: int,
                    resamples: int = RESAMPLES) -> tuple[float, float]:
    """Percentile interval of mean(b) / mean(a) over request pairs (a, b) resampled together
    with replacement: a request keeps its place in the queue in both runs, so the spread
    between early and late requests is not taken for noise."""
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        sample = rng.choices(pairs, k=len(pairs))
        ma = statistics.fmean(x for x, _ in sample)
        if ma > 0:
            ratios.append(statistics.fmean(y for _, y in sample) / ma)
    ratios.sort()
    tail = (1 - INTERVAL_LEVEL) / 2
    lo = ratios[int(tail * (len(ratios) - 1))]
    hi = ratios[int(round((1 - tail) * (len(ratios) - 1)))]
    return lo, hi


def point_source(p: dict[str, Any], metric: str) -> Source:
    """Where a stored point's ``metric`` came from: its result file, and the key (or the
    metric's name) and line it was read at."""
    sources = p.get("sources") or {}
    key = sources.get(metric) if isinstance(sources, dict) else None
    return Source(path=p["file"], sha256=p["sha256"], key=key or metric,
                  lines=(int(p["line"]),) if p.get("line") else ())


def _how(j: Judgement, n_a: int, n_b: int, n_pairs: int) -> Said:
    """How the verdict's interval was found, for the figure's method."""
    level = f"{INTERVAL_LEVEL:.0%}"
    if j.source == SAME:
        return said("compare.same_file", hash="sha256")
    if j.source == REPEATS:
        return said("compare.repeats", n_run=n_b, n_base=n_a, level=level)
    if j.source in (FLOOR, HISTORY):
        where = said("compare.floor_declared" if j.source == FLOOR else "compare.floor_history")
        return said("compare.floor", noise=f"{j.noise:g}", where=where)
    if j.source == REQUESTS:
        return said("compare.requests", level=level, resamples=RESAMPLES, n=n_pairs)
    return said("compare.no_interval")


@dataclass(frozen=True)
class _Pair:
    """One matched point of two runs, as the figures name it (the base's key, canonical)."""

    a: StoredRun
    b: StoredRun
    match: Match
    key: GroupKey

    def fid(self, metric: str, part: str | None = None) -> str:
        return ids.delta(self.a.key, self.b.key, *self.key, metric, part)

    def context(self, metric: str) -> dict[str, Any]:
        engine, workload, load = self.key
        return {"engine": engine, "workload": workload, "load": load, "metric": metric,
                "base": self.a.id, "run": self.b.id,
                "other_workload": self.match.other.key[1], "other_load": self.match.other.key[2]}


def judge_metric(pair: _Pair, metric: str, noise: Noise) -> tuple[Judgement, Said] | str:
    """The verdict of one metric of a matched point and how its interval was found (a method
    sentence, core.methods), or why it has none at all (not measured in both runs, or
    defined differently)."""
    pa, pb = list(pair.match.base.points), list(pair.match.other.points)
    va = [p[metric] for p in pa if p.get(metric) is not None]
    vb = [p[metric] for p in pb if p.get(metric) is not None]
    if not va or not vb:
        return "not measured in both runs"
    defined = DEFINED_AS.get(metric)
    if defined and _definition(pa, defined) != _definition(pb, defined):
        return "the two runs' clients define it differently"
    found: list[tuple[float, float]] = []

    def resample() -> tuple[float, float] | None:
        if not noise.requests or metric not in ("mean_ttft_ms", "mean_e2el_ms",
                                                "mean_tpot_ms"):
            return None
        found.extend(paired_requests(pair.a, pa, pair.b, pb, metric))
        return bootstrap_ratio(found, zlib.crc32(pair.fid(metric).encode())) \
            if len(found) >= 2 else None

    history = noise.history(pair.match.base, metric) if noise.history else None
    j = judge(va, vb, METRICS[metric][2], floor=noise.floors.get(metric), history=history,
              pairs=resample, same={p["sha256"] for p in pa} == {p["sha256"] for p in pb})
    return j, _how(j, len(va), len(vb), len(found))


def _metric_figures(pair: _Pair, metric: str, j: Judgement, how: Said) -> list[Figure]:
    unit, decimals, higher_better = METRICS[metric]
    pa, pb = pair.match.base.points, pair.match.other.points
    ctx = {**pair.context(metric), "noise_source": j.source}
    src = tuple(point_source(p, metric) for p in pb + pa)
    label = " ".join(pair.key)
    figures = [
        figure(id=pair.fid(metric, part), unit=unit, decimals=decimals, context=ctx,
               value=statistics.fmean(p[metric] for p in pts if p.get(metric) is not None),
               method=said("compare.point_mean", metric=metric, run=run.id,
                           point=" ".join(g.key), label=label,
                           n=sum(p.get(metric) is not None for p in pts)),
               sources=tuple(point_source(p, metric) for p in pts))
        for part, run, pts, g in (("from", pair.a, pa, pair.match.base),
                                  ("to", pair.b, pb, pair.match.other))]
    fid = pair.fid(metric)
    figures.append(figure(id=fid, value=j.ratio, unit="x", decimals=3, context=ctx, sources=src,
                          method=said("compare.ratio", run=pair.b.id, base=pair.a.id, how=how),
                          depends_on=(pair.fid(metric, "from"), pair.fid(metric, "to"))))
    if j.low is not None:
        figures += [figure(id=pair.fid(metric, part), value=bound, unit="x", decimals=3,
                           context=ctx, depends_on=(fid,), sources=src,
                           method=said("compare.bound_" + part, how=how))
                    for part, bound in (("low", j.low), ("high", j.high))]
    figures.append(figure(
        id=pair.fid(metric, "verdict"), value=j.outcome, unit="verdict", context=ctx,
        depends_on=(fid,),
        method=said("compare.verdict", one=1, code="analyses.gate.judge",
                    better=said("compare.higher" if higher_better else "compare.lower"))))
    return figures


def delta_figures(a: StoredRun, b: StoredRun, noise: Noise | None = None,
                  canon: dict[GroupKey, GroupKey] | None = None,
                  tolerance: float = DEFAULT_TOLERANCE) -> tuple[list[Figure], list[dict],
                                                                 list[dict], Matching]:
    """Figures, table rows, unmatched points and the matching of run ``b`` against run
    ``a``. ``canon`` names a group of ``a`` in the figure ids (default: its own key)."""
    noise = noise or Noise()
    matching = match_groups(_groups(a), _groups(b), tolerance)
    figures: list[Figure] = []
    rows: list[dict[str, Any]] = []
    counts = {name: 0 for name in VERDICT_NAMES.values()}
    for m in matching.matched:
        pair = _Pair(a, b, m, (canon or {}).get(m.base.key, m.base.key))
        for metric in METRICS:
            found = judge_metric(pair, metric, noise)
            engine, workload, load = pair.key
            if isinstance(found, str):
                rows.append({"engine": engine, "workload": workload, "load": load,
                             "metric": metric, "verdict": None, "why": found})
                continue
            j, how = found
            counts[VERDICT_NAMES[j.outcome]] += 1
            figures += _metric_figures(pair, metric, j, how)
            rows.append({"engine": engine, "workload": workload, "load": load,
                         "metric": metric, "decimals": METRICS[metric][1],
                         "from": _mean_of(m.base.points, metric),
                         "to": _mean_of(m.other.points, metric), "ratio": j.ratio,
                         "low": j.low, "high": j.high, "verdict": j.outcome,
                         "source": j.source, "noise": j.noise, "id": pair.fid(metric),
                         "other": m.other.label, "notes": list(m.notes)})
    only = [{"run": g.run, "engine": g.key[0], "workload": g.key[1], "load": g.key[2],
             "why": why} for g, why in matching.unmatched]
    figures += _count_figures(a, b, len(matching.matched), counts, only)
    return figures, rows, only, matching


def _mean_of(points: tuple[dict[str, Any], ...], metric: str) -> float:
    return statistics.fmean(p[metric] for p in points if p.get(metric) is not None)


def _count_figures(a: StoredRun, b: StoredRun, matched: int, counts: dict[str, int],
                   only: list[dict[str, Any]]) -> list[Figure]:
    method = said("compare.matched", run=b.id, base=a.id, code="analyses.matching")
    figures = [figure(id=ids.delta_count(a.key, b.key, "matched"), value=matched,
                      unit="count", method=method)]
    for name, n in counts.items():
        figures.append(figure(id=ids.delta_count(a.key, b.key, name), value=n, unit="count",
                              method=said("compare.verdict_count",
                                          verdict=said("compare.verdict_" + name))))
    for run in (a, b):
        n = sum(1 for o in only if o["run"] == run.id)
        figures.append(figure(id=ids.delta_count(a.key, b.key, "only_" + run.key), value=n,
                              unit="count", method=said("compare.only_in", run=run.id)))
    return figures


def _definition(points: list[dict[str, Any]], metric: str) -> str | None:
    defs = points[0].get("definitions") or {}
    return defs.get(metric) if isinstance(defs, dict) else None


# --- the whole comparison --------------------------------------------------------------

def _date_order(runs: list[StoredRun]) -> list[StoredRun]:
    dates = [r.row.get("date") for r in runs]
    if any(d is None for d in dates):
        return list(runs)
    return sorted(runs, key=lambda r: (r.row["date"], runs.index(r)))


def _checked_order(run_ids: list[str], base: str | None) -> list[str]:
    if len(run_ids) < 2:
        raise ReportError("a comparison needs two or more runs")
    if len(set(run_ids)) != len(run_ids):
        raise ReportError("a run is named twice: " + " ".join(run_ids))
    base = base or run_ids[0]
    if base not in run_ids:
        raise ReportError(f"the base run {base} is not one of the compared runs")
    return [base] + [r for r in run_ids if r != base]


def compare_runs(store: Path, run_ids: list[str], base: str | None = None, *,
                 noise: dict[str, Noise] | None = None,
                 tolerance: float = DEFAULT_TOLERANCE) -> Comparison:
    """Compare runs of the store: ``base`` (default the first) against each other run, and,
    for three or more, each run against the one before it in date order. Points are paired
    by what they measured (``analyses.matching``, lengths within ``tolerance``); ``noise``
    gives, per run, the noise its changes are judged with besides its repeats (a run not
    named: ``Noise()``, no floor, paired requests resampled)."""
    runs = load_stored(store, _checked_order(run_ids, base))
    ordered = _date_order(runs)
    comp = Comparison(runs=runs, ordered=ordered)
    pairs = [(runs[0], other) for other in runs[1:]]
    if len(runs) >= 3:
        pairs += [(x, y) for x, y in zip(ordered, ordered[1:], strict=False)
                  if (x, y) not in pairs]
    for other in runs[1:]:
        items = changes(runs[0], other)
        comp.changes += [{**c, "run": other.id} for c in items]
        comp.figures += change_figures(runs[0], other, items)
    # a point of another run is named by its match in the base run, in every figure id
    canon: dict[str, dict[GroupKey, GroupKey]] = {r.id: {} for r in runs}
    for a, b in pairs:                # each pair once (pairs holds no duplicate)
        figs, rows, only, matching = delta_figures(a, b, (noise or {}).get(b.id),
                                                   canon[a.id], tolerance)
        if a is runs[0]:
            canon[b.id] = {m.other.key: m.base.key for m in matching.matched}
        comp.figures += figs
        comp.matched += [{**r, "base": a.id, "run": b.id} for r in rows if r["verdict"]]
        comp.skipped += [{**r, "base": a.id, "run": b.id} for r in rows if not r["verdict"]]
        comp.only += [{**o, "base": a.id, "other": b.id} for o in only]
        comp.matchings.append(matching)
    comp.figures += trend_figures(ordered, comp, canon)
    return comp


def _x(group: Group) -> float | None:
    """A group's load as a number for a chart: the request rate (``inf`` unbounded), else
    the concurrency cap."""
    return group.rate if group.rate is not None else group.concurrency


def trend_figures(ordered: list[StoredRun], comp: Comparison,
                  canon: dict[str, dict[GroupKey, GroupKey]] | None = None) -> list[Figure]:
    """Each trend metric of each point in each run (``trend.…`` figures); ``canon`` renames
    a run's groups to their match in the base run. With three runs or more, the trends
    table (``comp.trends``: points in two runs or more); always, each run's load curve per
    engine and workload (``comp.curves``), for the chart that overlays the runs."""
    figures = []
    groups = [{(canon or {}).get(r.id, {}).get(k, k): g for k, g in _groups(r).items()}
              for r in ordered]
    found: dict[tuple[GroupKey, str, str], str] = {}     # (key, metric, run) -> figure id
    for run, mine in zip(ordered, groups, strict=True):
        for key, group in mine.items():
            for metric in TREND_METRICS:
                fig = _trend_figure(run, key, group.points, metric)
                if fig is not None:
                    figures.append(fig)
                    found[(key, metric, run.id)] = fig.id
    for key in sorted(set().union(*groups), key=lambda k: _numeric_order(k, groups)):
        for metric in TREND_METRICS:
            values = [(r.id, found[(key, metric, r.id)]) for r in ordered
                      if (key, metric, r.id) in found]
            if len(ordered) >= 3 and len(values) >= 2:
                comp.trends.append({"engine": key[0], "workload": key[1], "load": key[2],
                                    "metric": metric, "values": values})
    comp.curves = _curves(ordered, groups, found)
    return figures


def _numeric_order(key: GroupKey, groups: list[dict[GroupKey, Any]]) -> tuple:
    """Engine, workload, then the load as numbers (``r1, r4, r16, rinf``, not as text)."""
    group = next(g[key] for g in groups if key in g)
    big = float("inf")
    return (key[0], key[1], group.concurrency if group.concurrency is not None else big,
            group.rate if group.rate is not None else big, key[2])


def _trend_figure(run: StoredRun, key: GroupKey, points: tuple[dict[str, Any], ...],
                  metric: str) -> Figure | None:
    vals = [p[metric] for p in points if p.get(metric) is not None]
    if not vals:
        return None
    engine, workload, load = key
    unit, decimals, _ = METRICS[metric]
    return figure(
        id=ids.trend(engine, workload, load, metric, run.key), value=statistics.fmean(vals),
        unit=unit, decimals=decimals,
        method=said("compare.trend", metric=metric, engine=engine, workload=workload,
                    load=load, run=run.id, n=len(vals)),
        sources=tuple(point_source(p, metric) for p in points),
        context={"engine": engine, "workload": workload, "load": load, "metric": metric,
                 "run": run.id})


CURVE_METRICS = ("output_throughput", "p99_ttft_ms", "mean_tpot_ms")


def _curves(ordered: list[StoredRun], groups: list[dict[GroupKey, Group]],
            found: dict[tuple[GroupKey, str, str], str]) -> list[dict[str, Any]]:
    """Per engine and workload (as the base run names them), each run's points in load
    order: the load as a number and the figure ids of CURVE_METRICS."""
    series: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run, mine in zip(ordered, groups, strict=True):
        by_series: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for key, group in sorted(mine.items(), key=lambda kv: (_x(kv[1]) is None,
                                                               _x(kv[1]) or 0.0)):
            x = _x(group)
            unbounded = x is not None and math.isinf(x)
            by_series.setdefault((key[0], key[1]), []).append(
                {"load": key[2], "x": None if unbounded else x, "unbounded": unbounded,
                 **{m: found.get((key, m, run.id)) for m in CURVE_METRICS}})
        for name, points in by_series.items():
            series.setdefault(name, []).append({"run": run.id, "points": points})
    return [{"engine": e, "workload": w, "runs": runs}
            for (e, w), runs in sorted(series.items())]


# --- tables and the saved record --------------------------------------------------------

def tables(comp: Comparison):
    """What the notebook shows: the differences, the matched metrics, the trends."""
    import pandas as pd

    changes = pd.DataFrame([{k: c[k] for k in ("run", "group", "key", "from", "to")}
                            for c in comp.changes], columns=["run", "group", "key", "from", "to"])
    matched = pd.DataFrame([{k: r[k] for k in ("base", "run", "engine", "workload", "load",
                                               "metric", "from", "to", "ratio", "low", "high",
                                               "verdict")} for r in comp.matched],
                           columns=["base", "run", "engine", "workload", "load", "metric",
                                    "from", "to", "ratio", "low", "high", "verdict"])
    only = pd.DataFrame(comp.only, columns=["run", "engine", "workload", "load", "base",
                                            "other"])
    return {"changes": changes, "matched": matched, "only": only}


def record(comp: Comparison) -> dict[str, Any]:
    """What the article needs besides the figures: the runs and the rows of each table,
    by figure id (the numbers themselves are read from the registry)."""
    def run_info(r: StoredRun) -> dict[str, Any]:
        return {"id": r.id, "key": r.key, "date": str(r.row["date"]) if r.row.get("date")
                else None, "title": {"en": r.row.get("title_en"), "ko": r.row.get("title_ko")},
                "reconstruction": bool(r.row.get("reconstruction")),
                "engines": [{"id": e["id"], "name": e["name"]} for e in
                            r.row.get("engines") or []],
                "workloads": dict(zip(r.row.get("workloads") or [],
                                      r.row.get("workload_labels") or [], strict=False)),
                "inputs_sha256": r.row.get("inputs_sha256")}

    return {
        "base": comp.runs[0].id,
        "runs": [run_info(r) for r in comp.runs],
        "ordered": [r.id for r in comp.ordered],
        "changes": [{"run": c["run"], "group": c["group"], "key": c["key"],
                     "item": slug(f"{c['group']}-{c['item']}")} for c in comp.changes],
        "matched": [{k: r[k] for k in ("base", "run", "engine", "workload", "load", "metric",
                                       "id")} for r in comp.matched],
        "only": comp.only,
        "trends": [{"engine": t["engine"], "workload": t["workload"], "load": t["load"],
                    "metric": t["metric"], "values": [list(v) for v in t["values"]]}
                   for t in comp.trends],
        "curves": comp.curves,
        "matching": [line for m in comp.matchings for line in m.lines()],
        "inputs": sorted({(s.path, s.sha256) for f in comp.figures for s in f.sources}),
    }
