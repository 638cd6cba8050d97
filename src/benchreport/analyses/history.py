"""Run histories in the results store: one point's metric over many dated runs, and the runs
from which its level changed.

A **series** is one point measured again and again (nightly runs of one configuration): the
runs of the store in date order (then by run id), and in each the mean over the valid repeats
of a point that measured the same thing. Points match by what they measured (``PointKey``):
the engine, the model, the dataset, the load as numbers (concurrency cap and request rate, as
run.yaml declares them; the load id only where neither is known), the variant, and input and
output lengths within ``LENGTH_TOLERANCE`` (relative) of the series' first run; a workload id
may differ from run to run. ``--point <engine>.<workload>.<load>`` picks series by a point id
instead (``ids.point_stem``). Points the validity check found invalid are left out, as in a
comparison; so are values that are missing or not positive (a log needs them positive).

**The change-point test** (``change_points``), on the log values ``y`` (a change is a
ratio; noise is taken as relative):

1. For each split ``k`` with at least ``MIN_SEGMENT`` runs on either side, the within-level
   sum of squares ``S1(k)`` of the two levels; the statistic is the likelihood ratio of one
   shift in the mean against none under normal noise, ``n · ln(S0 / min_k S1(k))``, where
   ``S0`` is the sum of squares about the overall mean. The best ``k`` is the first run of
   the new level.
2. Its significance by permutation: the same statistic (maximised over ``k`` again) on
   ``PERMUTATIONS`` shufflings of the runs, ``p = (1 + #{shuffled ≥ observed}) / (1 +
   PERMUTATIONS)``. Shuffling is what "no change" means for independent runs of one
   configuration, so the test needs no normality of its own and its maximum over ``k``
   pays for having looked at every split. The generator is seeded (``SEED``, the segment's
   bounds): the same values give the same answer.
3. A change with ``p < ALPHA`` is kept and each side is tested again in the same way
   (binary segmentation), while a side holds ``MIN_RUNS`` runs or more, at the level
   ``ALPHA`` × its share of the series' runs: the segments of one round of splitting share
   ``ALPHA`` between them, so the levels of a series with real changes do not gain false
   alarms for being tested again.

Each change is then stated against the levels either side of it (up to the neighbouring
changes): the ratio of their arithmetic means (after ÷ before) with the 95% interval of
``stats.ratio_interval`` (log-scale Welch t), the number of runs before and the noise of
those runs (``noise``).

What it assumes and cannot see: runs are independent and exchangeable within a level (one
configuration; a drift in the machine or a warm cache that carries from run to run breaks
this); levels are constant between changes, so a slow drift shows as a step somewhere in it
or as nothing; a change needs ``MIN_SEGMENT`` runs at its new level, so a shift in the newest
one or two runs is not a level change yet (``compare --gate`` judges the newest run against
``history_noise``); a single outlier run is not reported as a level change: with it in the
data, a shuffle puts it in an end segment about ``2 · MIN_SEGMENT / n`` of the time, which
keeps its p-value far above ``ALPHA``. The interval is computed after the split was chosen
from the same data, so it is somewhat narrower than an interval for a split fixed in advance.
With fewer than ``MIN_RUNS`` runs the test is not run: the levels either side would rest on
a few runs each, and the distinct shufflings are few (6 runs split three and three only 20
ways, so no p-value falls below 0.05): the answer is ``CANNOT_TELL``, never "no change".
On a history with no change, a series is flagged with probability about ``ALPHA`` (1%):
among 100 series and metrics, about one false alarm is expected (in 200 simulated flat
histories of 25 runs with 2% noise, 3 were flagged). Sensitivity in the same setting, 100
histories each, a step 5 runs from the end (13 runs from it): 3% found 33 times (60), 5%
92 (99), 8% and more every time; the run of a 8% step exactly 93 times (91), of an 18% step
every time.

**Noise** (``noise``): the relative run-to-run spread of one level, the standard deviation
of the log values (0.02 is 2%), leaving out any run more than ``OUTLIER_SIGMAS`` (5) robust
deviations from the median (1.4826 × the median absolute deviation, which estimates σ of
normal noise): one outlier run does not set it, and the runs that stay count with the
efficiency of a standard deviation. With 20 runs of a true 2%, 95% of estimates fall in
about 1.3–2.6%. Over a series whose level changed, ``pooled_noise`` measures each run from
its own level. ``history_noise`` (or, for many look-ups, ``NoiseModel``) is what a
regression gate calls.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core import ids
from ..core.errors import ReportError
from ..core.figures import Figure, figure
from ..core.methods import said
from ..core.provenance import MEASURED, MODEL, reason
from ..core.store import connect, rows_of, stored_runs
from ..core.tables import POINT_TYPES
from ..core.verdicts import CANNOT_TELL, INTERVAL_LEVEL, INVALID, LEVEL_CHANGED, NO_LEVEL_CHANGE
from .compare import METRICS, point_source, slug
from .matching import load_columns, model_name, point_lengths
from .stats import ratio_interval, t_critical, verdict

__all__ = ["ALPHA", "DEFAULT_METRICS", "GATE_LEVEL", "LENGTH_TOLERANCE", "MIN_NOISE_RUNS",
           "MIN_RUNS", "MIN_SEGMENT", "PERMUTATIONS", "SEED", "ChangePoint", "NoiseModel",
           "PointKey", "RunValue", "Series", "Trend", "change_points", "gate_noise", "history",
           "history_figures", "history_noise", "method_record", "metric_columns", "noise",
           "noise_interval", "pooled_noise", "read_series", "record", "trend"]

ALPHA = 0.01             # a level change is kept when its permutation p-value is below this
PERMUTATIONS = 999       # shufflings per test: the smallest p-value is 1 / 1000
SEED = 20261205
MIN_SEGMENT = 3          # runs on either side of a split, at least
MIN_RUNS = 12            # a series (or a level, for a further change) needs this many runs
MIN_NOISE_RUNS = 6       # runs of one level for a noise estimate
# A gate tests many points × metrics against the history's noise at once: each at this level,
# so that, together, a few dozen of them raise a false alarm about once in twenty gates
# (Bonferroni: 0.05 / 50 = 0.001)
GATE_LEVEL = 0.999
LENGTH_TOLERANCE = 0.10  # input and output lengths of one series agree within 10%
MAD_TO_SIGMA = 1.4826    # MAD × this estimates σ of normal noise
OUTLIER_SIGMAS = 5.0     # a run this many robust σ from its level's median is no noise
_BATCH_VALUES = 1_000_000   # values shuffled at once in a permutation test
DEFAULT_METRICS = ("output_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms")
_POINT_COLUMNS = ("point", "engine", "workload", "load", "variant", "model",
                  "scenario_dataset", "max_concurrency_target", "request_rate_target",
                  "scenario_input_tokens", "scenario_output_tokens", "total_input_tokens",
                  "total_output_tokens", "completed", "file", "sha256", "line")


def metric_columns() -> dict[str, tuple[str, bool]]:
    """The metric columns of the ``points`` table a history can follow: name -> (unit,
    higher is better)."""
    out: dict[str, tuple[str, bool]] = {"duration": ("s", False)}
    for name, kind in POINT_TYPES.items():
        if kind != "DOUBLE":
            continue
        if name.endswith("_ms"):
            out[name] = ("ms", False)
        elif name.endswith("_throughput"):
            out[name] = ("req/s" if name.startswith("request") else "tok/s", True)
    return out


# --- which points are one series ---------------------------------------------------------

def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else float(value)


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


@dataclass(frozen=True)
class PointKey:
    """What a benchmark point measured, for matching it across runs (``PointKey.of`` a row
    of the store's ``points`` table)."""

    engine: str
    model: str | None
    dataset: str | None
    concurrency: float | None      # max_concurrency_target
    rate: float | None             # request_rate_target (inf: unbounded)
    load: str                      # the load id, kept only when neither number is known
    variant: str
    input_tokens: float | None     # per request: the scenario's, else total ÷ completed
    output_tokens: float | None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> PointKey:
        # the load, the lengths and the model as the gate's matching reads them (one rule)
        concurrency, rate = load_columns(dict(row))
        inp, out = point_lengths(dict(row))
        return cls(engine=row["engine"],
                   model=model_name(row.get("model") or row.get("run_model")),
                   dataset=row.get("scenario_dataset"), concurrency=concurrency, rate=rate,
                   load="" if concurrency is not None or rate is not None
                   else str(row.get("load") or ""),
                   variant=row.get("variant") or "", input_tokens=inp, output_tokens=out)

    @property
    def order(self) -> tuple:
        """How series are listed: engine, model, dataset, then the load as numbers (``r1, r4,
        r16, rinf``), variant and lengths."""
        big = math.inf
        return (self.engine, self.model or "", self.dataset or "",
                self.concurrency if self.concurrency is not None else big,
                self.rate if self.rate is not None else big, self.load, self.variant,
                self.input_tokens or 0.0, self.output_tokens or 0.0)

    @property
    def exact(self) -> tuple:
        """The parts that must be equal (lengths are compared within a tolerance)."""
        return (self.engine, self.model, self.dataset, self.concurrency, self.rate, self.load,
                self.variant)

    def matches(self, other: PointKey, tolerance: float = LENGTH_TOLERANCE) -> bool:
        return self.exact == other.exact and \
            _close(self.input_tokens, other.input_tokens, tolerance) and \
            _close(self.output_tokens, other.output_tokens, tolerance)

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "model": self.model, "dataset": self.dataset,
                "concurrency": self.concurrency, "rate": self.rate, "load": self.load or None,
                "variant": self.variant or None, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens}


@dataclass
class RunValue:
    """One run of a series: the metric's mean over the point's valid repeats in it."""

    run: str
    date: str | None
    value: float
    points: list[dict[str, Any]]         # the points rows it averages
    reconstruction: bool = False


@dataclass
class Series:
    key: PointKey
    metric: str
    runs: list[RunValue] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)   # runs with no usable value

    @property
    def values(self) -> list[float]:
        return [r.value for r in self.runs]

    @property
    def run_ids(self) -> list[str]:
        return [r.run for r in self.runs]

    @property
    def workload(self) -> str:
        """The workload id of the newest run (ids may differ from run to run)."""
        return self.runs[-1].points[0]["workload"] if self.runs else ""

    @property
    def load(self) -> str:
        """The newest run's load id, with its variant: the id part of the series' figures."""
        if not self.runs:
            return self.key.load
        p = self.runs[-1].points[0]
        return p["load"] + (f"-{slug(p['variant'])}" if p.get("variant") else "")


def _order(date: Any, run_id: str) -> tuple:
    """Runs in date order, then by id; a run without a date after every dated run."""
    return (date is None, "" if date is None else str(date), run_id)


# --- reading the store -------------------------------------------------------------------

def _views(con) -> set[str]:
    return {name for (name,) in con.execute("SELECT view_name FROM duckdb_views() "
                                            "WHERE NOT internal").fetchall()}


def _invalid(con, views: set[str]) -> set[tuple[str, str]]:
    """(run, point) pairs whose validity verdict is invalid."""
    if "figures" not in views:
        return set()
    rows = con.execute("SELECT run_id, id FROM figures WHERE family = 'point' AND "
                       "value_text = ? AND id LIKE '%.validity'", [INVALID]).fetchall()
    return {(run, parsed[0]) for run, fid in rows if (parsed := ids.parse_point(fid))}


def _rows(store: Path, metrics: Sequence[str], engine: str | None,
          model: str | None) -> list[dict[str, Any]]:
    """The points rows of every run (with the run's date), in run order, valid ones only."""
    if not stored_runs(store):
        raise ReportError("the store is empty: no run has been built yet",
                          path=store.as_posix(), hint="make report RUN=<run-id> fills it")
    con = connect(store)
    views = _views(con)
    if "points" not in views:
        return []
    # of the sources map, only the metrics' keys (a whole MAP per row costs more to fetch
    # than every other column together)
    cols = ", ".join([f'p."{c}"' for c in (*_POINT_COLUMNS, *metrics)]
                     + [f"map_extract(p.sources, '{m}')[1] AS \"source:{m}\"" for m in metrics])
    where, params = [], []
    for column, value in (("engine", engine), ("model", model)):
        if value is not None:
            where.append(f"p.{column} = ?")
            params.append(value)
    sql = (f"SELECT p.run_id, r.date, r.model AS run_model, r.reconstruction, {cols} "
           "FROM points p JOIN runs r USING (run_id)"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY p.run_id, p.point")
    invalid = _invalid(con, views)
    rows = [r for r in rows_of(con, sql, params) if (r["run_id"], r["point"]) not in invalid]
    for r in rows:
        r["sources"] = {m: key for m in metrics if (key := r.pop(f"source:{m}"))}
    rows.sort(key=lambda r: _order(r["date"], r["run_id"]))
    return rows


def _group(rows: Iterable[dict[str, Any]], tolerance: float
           ) -> list[tuple[PointKey, list[dict[str, Any]]]]:
    """Rows grouped by what they measured: exact parts equal, lengths within ``tolerance``
    of the group's first row (the oldest run's)."""
    buckets: dict[tuple, list[tuple[PointKey, list[dict[str, Any]]]]] = {}
    order: list[tuple[PointKey, list[dict[str, Any]]]] = []
    for row in rows:
        key = PointKey.of(row)
        groups = buckets.setdefault(key.exact, [])
        found = next((g for g in groups if g[0].matches(key, tolerance)), None)
        if found is None:
            found = (key, [])
            groups.append(found)
            order.append(found)
        found[1].append(row)
    return order


def _series(key: PointKey, rows: list[dict[str, Any]], metric: str) -> Series:
    """One metric of a group's rows, a value per run (the mean over its repeats)."""
    series = Series(key=key, metric=metric)
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_run.setdefault(row["run_id"], []).append(row)
    for run, points in by_run.items():
        values = [v for p in points if (v := _number(p.get(metric))) is not None and v > 0]
        if not values:
            series.left_out.append(run)
            continue
        series.runs.append(RunValue(run=run, date=None if points[0]["date"] is None
                                    else str(points[0]["date"]),
                                    value=statistics.fmean(values), points=points,
                                    reconstruction=bool(points[0].get("reconstruction"))))
    return series


def _picked(rows: list[dict[str, Any]], workload: str | None, load: str | None,
            point: str | None) -> bool:
    """Whether a group is selected: a run's point has the workload id, load id, point id."""
    return all(want is None or any(got(r) == want for r in rows) for want, got in (
        (workload, lambda r: r["workload"]), (load, lambda r: r["load"]),
        (point, lambda r: ids.point_stem(r["point"]))))


def _check_metrics(metrics: Sequence[str]) -> None:
    known = metric_columns()
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise ReportError(f"unknown metric {unknown[0]!r}",
                          hint="one of: " + ", ".join(sorted(known)) + ", or all")


def read_series(store: Path, *, metrics: Sequence[str] = DEFAULT_METRICS,
                engine: str | None = None, model: str | None = None,
                workload: str | None = None, load: str | None = None,
                point: str | None = None,
                tolerance: float = LENGTH_TOLERANCE) -> list[Series]:
    """Every series of the store that the selection picks, one per matched point and
    metric: ``engine`` and ``model`` as the points table names them; ``workload``, ``load``
    (ids, e.g. ``1k``, ``c16``) and ``point`` (``<engine>.<workload>.<load>[.<variant>]``)
    pick a series when one of its runs has such a point."""
    _check_metrics(metrics)
    out = []
    for key, rows in sorted(_group(_rows(store, metrics, engine, model), tolerance),
                            key=lambda kv: kv[0].order):
        if _picked(rows, workload, load, point):
            out += [s for m in metrics if (s := _series(key, rows, m)).runs]
    return out


# --- the change-point test ---------------------------------------------------------------

@dataclass(frozen=True)
class ChangePoint:
    """A level change: from run ``index`` (0-based in the series) on, the metric's level is
    ``ratio`` times the level before it (means of the runs up to the neighbouring changes)."""

    index: int
    run: str | None
    ratio: float | None
    low: float | None              # the ratio's 95% interval
    high: float | None
    p_value: float                 # of the permutation test that found it
    before: int                    # runs in the level before
    after: int                     # runs in the level from it on
    noise_before: float | None     # relative noise of the runs before (``noise``)


def _split_costs(y: np.ndarray) -> np.ndarray:
    """Within-level sums of squares S1(k), k = MIN_SEGMENT .. n − MIN_SEGMENT, of each row
    of ``y`` (centred rows: the running sums lose no precision)."""
    n = y.shape[1]
    c1, c2 = np.cumsum(y, axis=1), np.cumsum(y * y, axis=1)
    k = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    left = c2[:, k - 1] - c1[:, k - 1] ** 2 / k
    r1, r2 = c1[:, -1:] - c1[:, k - 1], c2[:, -1:] - c2[:, k - 1]
    return left + r2 - r1 ** 2 / (n - k)


def _statistics(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row: the best split (index of the new level's first run) and the likelihood
    ratio statistic n · ln(S0 / S1(best)); 0 for a row with no spread at all."""
    y = y - y.mean(axis=1, keepdims=True)
    n = y.shape[1]
    s0 = (y * y).sum(axis=1)
    costs = _split_costs(y)
    best = costs.argmin(axis=1)
    s1 = np.maximum(costs[np.arange(len(y)), best], s0 * 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(s0 > 0, n * np.log(s0 / np.where(s1 > 0, s1, 1.0)), 0.0)
    return best + MIN_SEGMENT, stat


def _test(y: np.ndarray, permutations: int, seed: tuple[int, ...]) -> tuple[int, float]:
    """The best split of one segment and its permutation p-value."""
    split, stat = _statistics(y[None, :])
    rng = np.random.default_rng(list(seed))
    hits, left = 0, permutations
    batch = max(1, _BATCH_VALUES // len(y))      # shufflings at a time: bounded memory
    while left:
        shuffled = rng.permuted(np.tile(y, (min(batch, left), 1)), axis=1)
        _, null = _statistics(shuffled)
        # a shuffle that ties the observed statistic counts against it (rounding aside)
        hits += int(np.count_nonzero(null >= stat[0] * (1 - 1e-9)))
        left -= len(shuffled)
    return int(split[0]), (1 + hits) / (1 + permutations)


def _segment(y: np.ndarray, lo: int, hi: int, alpha: float, permutations: int, seed: int,
             found: list[tuple[int, float]]) -> None:
    """Binary segmentation: test y[lo:hi] at level ``alpha`` × its share of the series; on a
    change, test either side in turn."""
    if hi - lo < MIN_RUNS:
        return
    split, p = _test(y[lo:hi], permutations, (seed, lo, hi))
    if p >= alpha * (hi - lo) / len(y):
        return
    found.append((lo + split, p))
    _segment(y, lo, lo + split, alpha, permutations, seed, found)
    _segment(y, lo + split, hi, alpha, permutations, seed, found)


def _positive(values: Iterable[float]) -> list[float]:
    xs = [float(v) for v in values]
    if any(not (v > 0) or math.isinf(v) for v in xs):
        raise ValueError("a history's values must be positive and finite (they are logged)")
    return xs


def change_points(values: Sequence[float], runs: Sequence[str] | None = None, *,
                  alpha: float = ALPHA, permutations: int = PERMUTATIONS,
                  seed: int = SEED) -> list[ChangePoint] | None:
    """The level changes of a series of positive values in run order (the module docstring
    gives the test), first run first; ``runs`` names each value's run. An empty list: no
    change at level ``alpha``. None: fewer than ``MIN_RUNS`` values, too few to tell."""
    xs = _positive(values)
    if len(xs) < MIN_RUNS:
        return None
    found: list[tuple[int, float]] = []
    _segment(np.log(np.array(xs)), 0, len(xs), alpha, permutations, seed, found)
    found.sort()
    bounds = [0] + [k for k, _ in found] + [len(xs)]
    out = []
    for i, (k, p) in enumerate(found):
        before, after = xs[bounds[i]:k], xs[k:bounds[i + 2]]
        r = ratio_interval(after, before)
        out.append(ChangePoint(index=k, run=runs[k] if runs else None, ratio=r.value,
                               low=r.low, high=r.high, p_value=p, before=len(before),
                               after=len(after), noise_before=noise(before)))
    return out


def _spread(levels: list[list[float]]) -> float:
    """The robust standard deviation of log values grouped in levels (``noise``)."""
    deviations = [abs(v - statistics.median(lv)) for lv in levels for v in lv]
    # Fewer runs than a change-point test needs: no run is screened out (the median
    # deviation of a handful of runs is too erratic to call any of them an outlier).
    screen = OUTLIER_SIGMAS * MAD_TO_SIGMA * statistics.median(deviations) \
        if len(deviations) >= MIN_RUNS else math.inf
    squares, kept_runs, kept_levels = 0.0, 0, 0
    for lv in levels:
        mid = statistics.median(lv)
        kept = [v for v in lv if abs(v - mid) <= screen]
        if kept:
            mean = statistics.fmean(kept)
            squares += sum((v - mean) ** 2 for v in kept)
            kept_runs, kept_levels = kept_runs + len(kept), kept_levels + 1
    return math.sqrt(squares / (kept_runs - kept_levels)) if kept_runs > kept_levels else 0.0


def noise(values: Sequence[float]) -> float | None:
    """The relative run-to-run noise of runs at one level: the standard deviation of their
    log values (≈ the relative standard deviation; 0.02 is 2%), leaving out the runs more
    than ``OUTLIER_SIGMAS`` robust deviations (1.4826 × MAD) from the median, so one outlier
    run does not set it (with ``MIN_RUNS`` runs or more; fewer are all kept). 0 when most
    values are equal. None for fewer than
    ``MIN_NOISE_RUNS`` values."""
    xs = _positive(values)
    if len(xs) < MIN_NOISE_RUNS:
        return None
    return _spread([[math.log(v) for v in xs]])


def pooled_noise(values: Sequence[float],
                 changes: Sequence[ChangePoint] | None = None) -> float | None:
    """``noise`` of a series whose level may have changed: each run measured from its own
    level (split at ``changes``, by default the ones ``change_points`` finds; one level when
    the series is too short to test), the standard deviation pooled over the levels (one
    degree of freedom per level taken off). A past change is not taken for noise, and the
    runs of every level count. None for fewer than ``MIN_NOISE_RUNS`` values."""
    xs = _positive(values)
    if len(xs) < MIN_NOISE_RUNS:
        return None
    if changes is None:
        changes = change_points(xs) or []
    bounds = [0] + [c.index for c in changes] + [len(xs)]
    return _spread([[math.log(v) for v in xs[a:b]]
                    for a, b in zip(bounds, bounds[1:], strict=False)])


class NoiseModel:
    """The store's history read once (every run's valid points of ``metrics``, of one
    engine or all), for many ``noise`` look-ups: what a gate over many points and metrics
    builds once rather than calling ``history_noise`` for each."""

    def __init__(self, store: Path, metrics: Sequence[str] = DEFAULT_METRICS, *,
                 engine: str | None = None, tolerance: float = LENGTH_TOLERANCE) -> None:
        _check_metrics(metrics)
        self.store, self.metrics, self.tolerance = store, list(metrics), tolerance
        self.engine = engine
        self.rows = _rows(store, self.metrics, engine, None)
        con = connect(store)
        self.dates = dict(con.execute("SELECT run_id, date FROM runs").fetchall())
        self._groups: dict[str, list[tuple[PointKey, list[dict[str, Any]]]]] = {}
        self._found: dict[tuple[str, int, str], tuple[float | None, int]] = {}

    def estimate(self, key: PointKey | Mapping[str, Any], metric: str,
                 before_run: str) -> tuple[float | None, int]:
        """``(noise, runs)``: ``history_noise`` of this model's store (its docstring says
        what it is) and how many runs it rests on (for ``noise_interval``)."""
        if metric not in self.metrics:
            raise ReportError(f"metric {metric!r} was not read for this noise model",
                              hint="read: " + ", ".join(self.metrics))
        key = key if isinstance(key, PointKey) else PointKey.of(key)
        if self.engine is not None and key.engine != self.engine:
            raise ReportError(f"this noise model read engine {self.engine}'s points only, "
                              f"not {key.engine}'s")
        groups = self._earlier(before_run)
        found = next((i for i, (k, _) in enumerate(groups) if k.matches(key, self.tolerance)),
                     None)
        if found is None:
            return None, 0
        if (before_run, found, metric) not in self._found:     # repeats share a group
            values = _series(key, groups[found][1], metric).values
            self._found[(before_run, found, metric)] = (pooled_noise(values), len(values))
        return self._found[(before_run, found, metric)]

    def noise(self, key: PointKey | Mapping[str, Any], metric: str,
              before_run: str) -> float | None:
        """``history_noise`` of this model's store (its docstring says what it returns)."""
        return self.estimate(key, metric, before_run)[0]

    def _earlier(self, before_run: str) -> list[tuple[PointKey, list[dict[str, Any]]]]:
        """The groups of the runs before ``before_run`` (kept for the next look-up)."""
        if before_run not in self.dates:
            raise ReportError(f"run {before_run} is not in the results store",
                              path=self.store.as_posix(),
                              hint=f"build it first: make report RUN={before_run}")
        if before_run not in self._groups:
            limit = _order(self.dates[before_run], before_run)
            self._groups[before_run] = _group(
                [r for r in self.rows if _order(r["date"], r["run_id"]) < limit],
                self.tolerance)
        return self._groups[before_run]


def noise_interval(ratio: float, noise: float, runs: int | None = None,
                   level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """The interval around ``ratio`` (one run's value ÷ another's, of the same point and
    metric, one repeat each) that run-to-run noise alone gives: exp(ln ratio ± q · noise ·
    √2), with q the two-sided t quantile at ``level`` with ``runs`` − 1 degrees of freedom
    (``noise`` estimated from ``runs`` runs; the normal quantile when None). A change is
    beyond the noise when the interval leaves out 1 (``stats.verdict(low, high, 1.0)``)."""
    q = t_critical(runs - 1, level) if runs and runs > 1 else t_critical(1e9, level)
    half = q * noise * math.sqrt(2.0)
    return ratio * math.exp(-half), ratio * math.exp(half)


def history_noise(store: Path, key: PointKey | Mapping[str, Any], metric: str,
                  before_run: str, *, tolerance: float = LENGTH_TOLERANCE) -> float | None:
    """The relative noise of ``metric`` at the point ``key`` over the store's runs before
    ``before_run``: what a regression gate takes as its noise floor when the runs it
    compares have no repeats. (Over many points and metrics, build one ``NoiseModel`` and
    call its ``noise`` or ``estimate``: the same answer, the store read once.) With the
    number of runs it rests on, ``noise_interval`` turns it into an interval for a ratio of
    two single runs.

    ``key``: a ``PointKey``, or a row of the store's ``points`` table (a dict with engine,
    model, max_concurrency_target, request_rate_target, load, variant, scenario_dataset,
    scenario_input_tokens, scenario_output_tokens, … as ``compare.StoredRun.points`` holds
    them). Runs count when they come before ``before_run`` in (date, run id) order and have
    a valid point matching the key (lengths within ``tolerance``). Returns ``pooled_noise``
    of their values (each run against the median of its own level, so a past level change
    is not taken for noise): σ of the relative noise of one run (0.02 is 2%; the log ratio
    of two runs then has a σ of about √2 times it). None when fewer than ``MIN_NOISE_RUNS``
    runs come before: the history cannot tell, and a gate must not read None as "no
    noise". ``before_run`` must be in the store and ``metric`` a metric column
    of the points table (else ReportError)."""
    _check_metrics([metric])
    key = key if isinstance(key, PointKey) else PointKey.of(key)
    return NoiseModel(store, [metric], engine=key.engine, tolerance=tolerance).noise(
        key, metric, before_run)


# --- a trend: the series, its changes, its figures -----------------------------------------

@dataclass
class Trend:
    series: Series
    verdict: str                     # LEVEL_CHANGED, NO_LEVEL_CHANGE or CANNOT_TELL
    changes: list[ChangePoint]
    noise: float | None              # pooled_noise: the spread within the levels

    def levels(self) -> list[tuple[int, int, float]]:
        """(first index, end index, mean value) of each level, oldest first."""
        values = self.series.values
        bounds = [0] + [c.index for c in self.changes] + [len(values)]
        return [(a, b, statistics.fmean(values[a:b])) for a, b in zip(bounds, bounds[1:],
                                                                      strict=False)]


def trend(series: Series, *, alpha: float = ALPHA, permutations: int = PERMUTATIONS,
          seed: int = SEED) -> Trend:
    """The level changes of one series, with its verdict and its noise (``pooled_noise``)."""
    values = series.values
    changes = change_points(values, series.run_ids, alpha=alpha, permutations=permutations,
                            seed=seed)
    verdict = CANNOT_TELL if changes is None else \
        LEVEL_CHANGED if changes else NO_LEVEL_CHANGE
    return Trend(series=series, verdict=verdict, changes=changes or [],
                 noise=pooled_noise(values, changes or []))


def history(store: Path, *, metrics: Sequence[str] = DEFAULT_METRICS, **select: Any
            ) -> list[Trend]:
    """``trend`` of every series ``read_series(store, metrics=…, **select)`` picks."""
    return [trend(s) for s in read_series(store, metrics=metrics, **select)]



# --- figures and the record the command line prints --------------------------------------

def _provenance(series: Series, value_ids: list[str]) -> tuple[str, str]:
    """A figure computed from the series' values: measured unless a run is a
    reconstruction, whose values the generator set (as ``core.provenance.assign`` would)."""
    made = [fid for fid, r in zip(value_ids, series.runs, strict=True) if r.reconstruction]
    return (MODEL, reason("weakest", figures=", ".join(made))) if made \
        else (MEASURED, reason("measured_inputs"))


def _value_figures(series: Series, fid, ctx: dict[str, Any]) -> list[Figure]:
    unit = metric_columns()[series.metric][0]
    decimals = METRICS.get(series.metric, (unit, 2, False))[1]
    return [figure(id=fid("value", ids.run_key(r.run)), value=r.value, unit=unit,
                   decimals=decimals, context={**ctx, "run": r.run},
                   method=said("history.value", metric=series.metric, run=r.run,
                               n=len(r.points)),
                   sources=tuple(point_source(p, series.metric) for p in r.points),
                   provenance=MODEL if r.reconstruction else MEASURED)
            for r in series.runs]


def _change_figures(tr: Trend, fid, ctx: dict[str, Any], deps: tuple[str, ...],
                    prov: tuple[str, str]) -> list[Figure]:
    figs = []
    for i, c in enumerate(tr.changes, 1):
        name = ids.history_change(i)
        cctx = {**ctx, "run": c.run}
        how = said("history.change", after=c.after, run=c.run, before=c.before,
                   level=f"{INTERVAL_LEVEL:.0%}", permutations=PERMUTATIONS, seed=SEED)
        figs.append(figure(id=fid(name), value=c.ratio, unit="x", decimals=3, context=cctx,
                           method=how, depends_on=deps, provenance=prov[0],
                           provenance_why=prov[1]))
        parts = [("low", c.low, "x", 3), ("high", c.high, "x", 3),
                 ("p_value", c.p_value, "p", 3), ("run", c.run, "text", None),
                 ("before", c.before, "count", 0), ("after", c.after, "count", 0)]
        figs += [figure(id=fid(name, part), value=value, unit=unit, decimals=decimals,
                        context=cctx, method=said("history.change_part", i=i, how=how,
                                                  part=said("history.part_" + part)),
                        depends_on=(fid(name),), provenance=prov[0], provenance_why=prov[1])
                 for part, value, unit, decimals in parts if value is not None]
    return figs


# the verdicts as the method names them (their English is the verdicts' own: LEVEL_CHANGED, …)
_VERDICT_WORDS = {"changed": said("history.level_changed"),
                  "unchanged": said("history.no_level_change"),
                  "cannot": said("history.cannot_tell")}


def history_figures(tr: Trend) -> list[Figure]:
    """The figures of one trend: the metric in each run (``value.<rk>``), how many runs,
    the noise of the newest level, the verdict, and each level change with its interval,
    p-value, run and the runs either side."""
    s = tr.series
    ctx = {"engine": s.key.engine, "workload": s.workload, "load": s.load,
           "metric": s.metric, "model": s.key.model}

    def fid(name: str, part: str | None = None) -> str:
        return ids.history(s.key.engine, s.workload, s.load, s.metric, name, part)

    figs = _value_figures(s, fid, ctx)
    deps = tuple(f.id for f in figs)
    prov = _provenance(s, list(deps))
    common = {"context": ctx, "depends_on": deps, "provenance": prov[0],
              "provenance_why": prov[1]}
    figs.append(figure(id=fid("runs"), value=len(s.runs), unit="count", decimals=0,
                       method=said("history.runs"), **common))
    if tr.noise is not None:
        figs.append(figure(id=fid("noise"), value=tr.noise, unit="fraction", decimals=3,
                           method=said("history.noise", sigmas=f"{OUTLIER_SIGMAS:g}",
                                       mad=f"{MAD_TO_SIGMA}"), **common))
    figs.append(figure(id=fid("changes"), value=len(tr.changes), unit="count", decimals=0,
                       method=said("history.changes", alpha=f"{ALPHA}"),
                       **common))
    figs.append(figure(id=fid("verdict"), value=tr.verdict, unit="verdict",
                       method=said("history.verdict", min_runs=MIN_RUNS, **_VERDICT_WORDS),
                       **common))
    return figs + _change_figures(tr, fid, ctx, deps, prov)


def method_record() -> dict[str, Any]:
    """The change-point test's settings, as a record states them."""
    return {"name": "single mean shift of log values, likelihood ratio, permutation test, "
                    "binary segmentation", "alpha": ALPHA, "permutations": PERMUTATIONS,
            "seed": SEED, "min_runs": MIN_RUNS, "min_segment": MIN_SEGMENT,
            "min_noise_runs": MIN_NOISE_RUNS, "length_tolerance": LENGTH_TOLERANCE,
            "interval_level": INTERVAL_LEVEL}


def record(tr: Trend) -> dict[str, Any]:
    """One trend as plain data (JSON-ready): the point, the runs and values, the verdict,
    the noise, each level change (its effect: improved, regressed or within_noise by the
    metric's direction and the ratio's interval, as a comparison calls it) and each level."""
    from .compare import VERDICT_NAMES
    from .gate import effect

    s = tr.series
    unit, higher = metric_columns()[s.metric]
    runs = s.runs
    return {
        "metric": s.metric, "unit": unit, "higher_is_better": higher,
        "point": {**s.key.to_json(), "workload": s.workload, "load_id": s.load},
        "verdict": tr.verdict, "noise": tr.noise,
        "runs": [{"run": r.run, "date": r.date, "value": r.value, "repeats": len(r.points),
                  "reconstruction": r.reconstruction} for r in runs],
        "left_out": list(s.left_out),
        "changes": [{"run": c.run, "index": c.index, "ratio": c.ratio, "low": c.low,
                     "high": c.high, "p_value": c.p_value, "before": c.before,
                     "after": c.after, "noise_before": c.noise_before,
                     "effect": VERDICT_NAMES[effect(verdict(c.low, c.high, 1.0), higher)]}
                    for c in tr.changes],
        "levels": [{"from_run": runs[a].run, "to_run": runs[b - 1].run, "runs": b - a,
                    "mean": m} for a, b, m in tr.levels()],
    }


def gate_noise(store: Path, new_run: str, metrics: Sequence[str],
               tolerance: float = LENGTH_TOLERANCE):
    """A gate's or a comparison's noise from the store's history before ``new_run``
    (``gate.Noise.history``): for a point (a ``matching.Group`` of the base run) and a
    metric, the relative half-width of the interval that run-to-run noise gives a ratio of
    two single runs at ``GATE_LEVEL`` (``noise_interval``); None where the history is too
    short, or shows no variation at all (runs that all read the same numbers say nothing
    of noise). The store is read once, on the first look-up."""
    model: list[NoiseModel] = []

    def look_up(group, metric: str) -> float | None:
        if not group.points or metric not in metrics:
            return None
        if not model:
            model.append(NoiseModel(store, list(metrics), tolerance=tolerance))
        sigma, runs = model[0].estimate(group.points[0], metric, new_run)
        if not sigma:
            return None
        return noise_interval(1.0, sigma, runs, GATE_LEVEL)[1] - 1.0

    return look_up
