"""One verdict per matched point and metric, shared by the comparison report and the gate.

``judge`` decides whether a change from a base run to a new run is beyond the noise, from the
first of these that is available (the *noise source*):

- ``same data``: both runs read the same result file (same sha256): nothing changed;
- ``repeats``: both runs have two or more repeats of the point: the ratio's 95% interval by
  Welch's t on the log scale (``stats.ratio_interval``); an interval that holds 1 but
  reaches beyond ×1.5 or ÷1.5 (``UNINFORMATIVE``) tells nothing, and the next source
  decides (a floor, the history, else "cannot tell");
- ``floor``: a relative noise the user declared for the metric (the new run's run.yaml
  ``gate:`` block, or a gate file): the interval is the ratio ± the floor, so a change within
  the floor is within the noise;
- ``history``: a relative noise estimated from earlier runs of the same configuration
  (``Noise.history``: a function of the base run's point group and the metric; the gate
  passes ``pipeline.gate.history_noise``, the half-width that the store's history before the
  new run gives a ratio of two single runs, ``analyses.history``);
- ``requests``: one repeat each, for the per-request means, the requests resampled in pairs
  (``compare.bootstrap_ratio``). It sees how consistently the requests changed, not
  run-to-run noise, so the gate does not use it (``Noise.requests`` False);
- ``none``: no interval: the verdict is ``cannot tell``, never a pass.

A verdict is ``improved`` or ``regressed`` when the whole interval lies on one side of 1
(by the metric's direction), ``within noise`` (``tie``) when it holds 1. ``GATE_WORDS`` gives
the gate's words for them: better, worse, within noise, cannot tell, same data.

``gate_result`` reads a comparison (``compare.compare_runs``) and gives the gate's outcome:
every gated metric of every point matched against the base (a metric that either run did not
measure, or that their clients define differently, is listed apart and changes nothing), and
``FAIL`` when any is worse,
``PASS`` when every one was judged and none is worse, ``INCONCLUSIVE`` when none is worse but
some could not be judged (the exit code says fail or not; ``--strict`` makes inconclusive a
failure), ``NOTHING`` when no point matched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..core.verdicts import (
    GATE_WORDS,
    IMPROVED,
    NO_INTERVAL,
    REGRESSED,
    SAME_DATA,
    TIE_IN_NOISE,
)
from .stats import ratio_interval, verdict

__all__ = ["FAIL", "FLOOR", "GATE_WORDS", "HISTORY", "INCONCLUSIVE", "NONE", "NOTHING", "PASS",
           "REPEATS", "REQUESTS", "SAME", "SOURCES", "GateResult", "Judgement", "Noise",
           "effect", "gate_result", "judge"]

SAME, REPEATS, FLOOR, HISTORY, REQUESTS, NONE = (
    "same data", "repeats", "floor", "history", "requests", "none")
SOURCES = (SAME, REPEATS, FLOOR, HISTORY, REQUESTS, NONE)
PASS, FAIL, INCONCLUSIVE, NOTHING = "pass", "fail", "inconclusive", "nothing matched"

# a relative noise of one metric at one point, from the history of its configuration:
# (the base run's matching.Group: run id, engine, model, load, lengths; metric) -> fraction
# (0.05: 5%) or None when the history cannot say
HistoryNoise = Callable[[Any, str], "float | None"]


@dataclass(frozen=True)
class Noise:
    """Where a comparison may take its noise from besides the repeats."""

    floors: dict[str, float] = field(default_factory=dict)   # metric -> relative (0.05: 5%)
    history: HistoryNoise | None = None                      # see the module docstring
    requests: bool = True              # resample paired requests (the report; not the gate)


# an interval of repeats that reaches beyond ×1.5 or ÷1.5 cannot tell a large change from
# none (two repeats apart by half give such an interval): it is no "within noise"
UNINFORMATIVE = 1.5


def informative(low: float, high: float) -> bool:
    """Whether a ratio's interval is narrow enough for "within noise" to mean something."""
    return low >= 1 / UNINFORMATIVE and high <= UNINFORMATIVE


@dataclass(frozen=True)
class Judgement:
    ratio: float | None        # mean(new) ÷ mean(base)
    low: float | None          # the ratio's interval, None without one
    high: float | None
    outcome: str               # IMPROVED, REGRESSED, TIE_IN_NOISE, NO_INTERVAL or SAME_DATA
    source: str                # one of SOURCES
    noise: float | None = None  # the relative noise a floor or the history gave


def effect(direction: str, higher_is_better: bool) -> str:
    """A ratio's verdict (``stats.verdict``) as a change for the better or the worse."""
    from ..core.verdicts import HIGHER, LOWER

    if direction in (HIGHER, LOWER):
        return IMPROVED if (direction == HIGHER) == higher_is_better else REGRESSED
    return TIE_IN_NOISE if direction == TIE_IN_NOISE else NO_INTERVAL


def _relative(ratio: float | None, noise: float, source: str,
              higher_is_better: bool) -> Judgement:
    if ratio is None:
        return Judgement(None, None, None, NO_INTERVAL, NONE)
    low, high = ratio - noise, ratio + noise
    return Judgement(ratio, low, high, effect(verdict(low, high, 1.0), higher_is_better),
                     source, noise)


def judge(base: Iterable[float], new: Iterable[float], higher_is_better: bool, *,
          floor: float | None = None, history: float | None = None,
          pairs: Callable[[], tuple[float, float] | None] | None = None,
          same: bool = False) -> Judgement:
    """The verdict of ``new`` against ``base`` (one value per repeat each), from the first
    noise source available (module docstring). ``pairs``: a function giving the interval
    of the paired requests' resampling, or None when there are none (called only when no
    other source applies)."""
    r = ratio_interval(list(new), list(base))
    if same:
        return Judgement(r.value, None, None, SAME_DATA, SAME)
    if r.low is not None:
        outcome = effect(verdict(r.low, r.high, 1.0), higher_is_better)
        if outcome != TIE_IN_NOISE or informative(r.low, r.high):
            return Judgement(r.value, r.low, r.high, outcome, REPEATS)
    if floor is not None:
        return _relative(r.value, floor, FLOOR, higher_is_better)
    if history is not None:
        return _relative(r.value, history, HISTORY, higher_is_better)
    interval = pairs() if pairs is not None and r.value is not None else None
    if interval is not None:
        low, high = interval
        return Judgement(r.value, low, high, effect(verdict(low, high, 1.0),
                                                    higher_is_better), REQUESTS)
    return Judgement(r.value, None, None, NO_INTERVAL, NONE)


@dataclass
class GateResult:
    base: str
    runs: list[str]                          # the runs gated against the base
    gated: list[str]                         # the metrics gated
    rows: list[dict[str, Any]]               # one per matched point × gated metric
    matching: list[Any]                      # a matching.Matching per run
    outcome: str = PASS
    skipped: list[dict[str, Any]] = field(default_factory=list)  # gated, not measured
    floors: dict[str, str] = field(default_factory=dict)   # run -> where its floors came from
    tolerance: float | None = None                          # the matching's length tolerance

    @property
    def worse(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["verdict"] == REGRESSED]

    @property
    def untold(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["verdict"] == NO_INTERVAL]

    def exit_code(self, strict: bool = False) -> int:
        """1 when a gated metric is worse (or, ``strict``, could not be judged), 2 when no
        point matched (nothing was gated), else 0."""
        if self.outcome == NOTHING:
            return 2
        if self.outcome == FAIL or (strict and self.outcome == INCONCLUSIVE):
            return 1
        return 0


def gate_result(comp: Any, gated: list[str]) -> GateResult:
    """The gate's view of a comparison: every gated metric of each point matched between
    the base (``comp.runs[0]``) and another run."""
    base = comp.runs[0].id
    others = [r.id for r in comp.runs[1:]]
    rows = [r for r in comp.matched if r["base"] == base and r["metric"] in gated]
    matching = [m for m in comp.matchings if m.base_run == base]
    result = GateResult(base=base, runs=others, gated=list(gated), rows=rows,
                        matching=matching,
                        skipped=[r for r in comp.skipped
                                 if r["base"] == base and r["metric"] in gated])
    if not any(m.matched for m in matching):
        result.outcome = NOTHING
    elif result.worse:
        result.outcome = FAIL
    elif result.untold or not rows:
        result.outcome = INCONCLUSIVE
    return result
