"""Pure computations on parsed values: no files, no globals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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
