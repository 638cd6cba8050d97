"""Pure computations on parsed values: no files, no globals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

TIE = "tie"


@dataclass(frozen=True)
class Comparison:
    """How the engines ranked on one workload by a lower-is-better quantity."""

    ranking: tuple[str, ...]     # engine ids, best first
    faster: str                  # best engine id, or TIE when best and runner-up round equal
    slower: str                  # runner-up engine id
    ratio: float                 # runner-up value / best value (>= 1)


def compare_lower_is_better(values: Mapping[str, float], decimals: int = 2) -> Comparison:
    """Rank engines by ``values`` (e.g. durations in s), best first.

    The ratio is runner-up / best, so ``ratio`` x means "the best engine was ratio x faster".
    When the ratio rounds to 1 at ``decimals`` the comparison is a tie.

    >>> c = compare_lower_is_better({"a": 20.0, "b": 30.0})
    >>> c.faster, c.slower, round(c.ratio, 2)
    ('a', 'b', 1.5)
    """
    if len(values) < 2:
        raise ValueError("a comparison needs at least two engines")
    for engine, value in values.items():
        if not value > 0:
            raise ValueError(f"{engine}: value must be > 0, got {value!r}")
    ranking = tuple(sorted(values, key=lambda e: (values[e], e)))
    best, runner_up = ranking[0], ranking[1]
    ratio = values[runner_up] / values[best]
    faster = TIE if round(ratio, decimals) == 1.0 else best
    return Comparison(ranking=ranking, faster=faster, slower=runner_up, ratio=ratio)


def histogram_quantile(buckets: Mapping[Any, float] | Iterable[tuple[Any, float]],
                       q: float) -> float | None:
    """A **bucket estimate** of quantile ``q`` (0..1) from cumulative buckets (``le`` ->
    count, ``le`` a number or "+Inf"), as Prometheus estimates it: find the bucket where
    the rank ``q * total`` falls and interpolate linearly between its bounds (the first
    bucket starts at 0). A rank in the ``+Inf`` bucket gives the highest finite bound.
    None without a ``+Inf`` bucket, a finite one, or observations."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} is outside 0..1")
    items = buckets.items() if isinstance(buckets, Mapping) else buckets
    points = sorted((float(le), float(count)) for le, count in items)
    if len(points) < 2 or not math.isinf(points[-1][0]):
        return None
    running = 0.0
    cumulative = []
    for le, count in points:               # cumulative counts never fall; tolerate noise
        running = max(running, count)
        cumulative.append((le, running))
    total = cumulative[-1][1]
    if total <= 0:
        return None
    rank = q * total
    for i, (upper, count) in enumerate(cumulative):
        if count < rank:
            continue
        if math.isinf(upper):
            return cumulative[-2][0]
        if i == 0 and upper <= 0:
            return upper
        lower, below = cumulative[i - 1] if i else (0.0, 0.0)
        if count == below:
            return lower
        return lower + (upper - lower) * (rank - below) / (count - below)
    return cumulative[-2][0]
