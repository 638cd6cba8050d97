"""Values no benchmark can produce: left out with a warning that names the file and key.

A result file is a user's own, sometimes hand-edited, truncated or written by a client with
a bug. A statistic that is not a finite, non-negative number (NaN, ``inf``, ``-3``), or
percentiles out of order (a p99 below the median), cannot be a measurement: the report
says "not measured" rather than draw a headline from it. A count the file contradicts
itself on (more requests completed than it was asked to send) is warned and kept.
"""

from __future__ import annotations

import math
from typing import Any

from .base import METRICS, UNSTATED, Point

# a request rate of inf is how clients write "unbounded"
MAY_BE_INFINITE = frozenset({"request_rate"})
ORDERED = ("median", "p90", "p99")
RELATIVE_SLACK = 1e-6       # rounding in the file's own decimals is not disorder


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _impossible(key: str, value: float) -> str | None:
    if math.isnan(value):
        return "not a number"
    if math.isinf(value) and key not in MAY_BE_INFINITE:
        return "infinite"
    if value < 0:
        return "negative"
    return None


def _drop(p: Point, key: str) -> str:
    p.fields.pop(key, None)
    return p.sources.pop(key, key)


def _finite_and_positive(p: Point, here: str) -> None:
    for key, value in list(p.fields.items()):
        problem = _impossible(key, float(value)) if _number(value) else None
        if problem:
            src = _drop(p, key)
            p.warnings.append(f"{here}: {src} is {value} ({problem}), which no benchmark "
                              "measures; left out")


def _out_of_order(p: Point, metric: str) -> tuple[str, str] | None:
    present = [(s, p.fields[f"{s}_{metric}_ms"]) for s in ORDERED
               if _number(p.fields.get(f"{s}_{metric}_ms"))]
    for (lo, a), (hi, b) in zip(present, present[1:]):
        if b < a - RELATIVE_SLACK * max(abs(a), 1.0):
            return lo, hi
    return None


def _percentiles_in_order(p: Point, here: str) -> None:
    for metric in METRICS:
        pair = _out_of_order(p, metric)
        if pair is None:
            continue
        lo, hi = pair
        shown = {s: p.fields.get(f"{s}_{metric}_ms") for s in pair}
        for stat in ORDERED:
            if f"{stat}_{metric}_ms" in p.fields:
                _drop(p, f"{stat}_{metric}_ms")
        p.warnings.append(f"{here}: the {hi} of {metric.upper()} ({shown[hi]} ms) is below "
                          f"its {lo} ({shown[lo]} ms); percentiles cannot be out of order, so "
                          f"the file's {metric.upper()} percentiles are left out")


def _completed_within_asked(p: Point, here: str) -> None:
    done, asked = p.fields.get("completed"), p.fields.get("requests_asked")
    if _number(done) and _number(asked) and done > asked:
        p.warnings.append(f"{here}: {p.sources.get('completed', 'completed')} is {done}, more "
                          f"than the {asked} requests the client was asked to send")


def _request_values(p: Point, here: str) -> None:
    bad = 0
    for row in p.requests:
        for key, value in row.items():
            if _number(value) and _impossible(key, float(value)):
                row[key] = None
                bad += 1
    if bad:
        p.warnings.append(f"{here}: {bad} per-request value{'s' if bad != 1 else ''} not a "
                          "finite, non-negative number (NaN, inf or negative); left out")


def _load_problem(key: str, value: Any) -> str | None:
    if not _number(value):
        return None
    problem = _impossible(key, float(value))
    return problem if problem or value > 0 else "zero"


def _sound_load(p: Point, here: str) -> None:
    """A concurrency or a request rate that is NaN, negative or zero, or a concurrency that
    is infinite, is no load a client ran at: the point's load is then not stated."""
    load = p.load or {}
    bad = [f"{key} is {load[key]} ({problem})" for key in ("max_concurrency", "request_rate")
           if (problem := _load_problem(key, load.get(key)))]
    if bad:
        p.load = dict(UNSTATED)
        p.warnings.append(f"{here}: the load's {' and '.join(bad)}, which no client runs at; "
                          "the load is not stated")


def _sound_lengths(p: Point, here: str) -> None:
    """Token lengths the point was configured with, or that its totals give per request, that
    are NaN, infinite or negative: left out, as the file's other impossible values are."""
    for key in ("input_tokens", "output_tokens"):
        value = p.scenario.get(key)
        if _number(value) and _impossible(key, float(value)):
            p.scenario.pop(key)
            how = p.scenario.pop(f"{key}_from", "target")
            p.warnings.append(f"{here}: the {how} of {key.replace('_', ' ')} is {value}, "
                              "which no benchmark sends; left out")


def check(p: Point, here: str) -> None:
    """Leave out, with a warning each, the values of ``p`` no benchmark can produce."""
    _sound_load(p, here)
    _sound_lengths(p, here)
    _finite_and_positive(p, here)
    _percentiles_in_order(p, here)
    _completed_within_asked(p, here)
    _request_values(p, here)
