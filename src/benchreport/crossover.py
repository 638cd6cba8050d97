"""A simple model of where two engines' decode speeds cross, labelled as a model.

Per engine, the time per output token of one request in the steady phase (ms) is fitted as
a straight line of the input length: t = a + b × context (least squares; two points give
the line through them). Two lines cross at context = (a2 − a1) ÷ (b1 − b2). The interval
comes from fitting the ends of each steady range (fastest and slowest records) instead of
the means.
"""

from __future__ import annotations

import itertools

import numpy as np

from .decode import FOUND, Steady
from .figures import Figure
from .io import Run


def _fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    b, a = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(a), float(b)


def _cross(l1: tuple[float, float], l2: tuple[float, float]) -> float | None:
    (a1, b1), (a2, b2) = l1, l2
    if b1 == b2:
        return None
    x = (a2 - a1) / (b1 - b2)
    return x if x > 0 else None


def crossover_figures(run: Run, phases: list[Steady]) -> list[Figure]:
    points: dict[str, list[tuple[int, float, float, float, str]]] = {}
    for p in phases:
        if p.verdict != FOUND:
            continue
        w = run.meta.workload(p.workload)
        n = p.concurrency
        points.setdefault(p.engine, []).append(
            (w.input_tokens, 1000 * n / p.mean, 1000 * n / max(p.values),
             1000 * n / min(p.values), w.id))
    engines = [e for e in points if len(points[e]) >= 2]
    out: list[Figure] = []
    for e in engines:
        xs = [pt[0] for pt in points[e]]
        a, b = _fit(xs, [pt[1] for pt in points[e]])
        out += [Figure(id=f"model.decode.{e}.intercept_ms", value=a, unit="ms", decimals=2,
                       context={"engine": e},
                       depends_on=tuple(f"decode.{pt[4]}.{e}.ms_per_token" for pt in points[e]),
                       method="model: per-token decode time at zero context (straight-line "
                              "fit of ms/token against input tokens)"),
                Figure(id=f"model.decode.{e}.slope_ms_per_1k", value=1000 * b, unit="ms",
                       decimals=3, context={"engine": e},
                       depends_on=tuple(f"decode.{pt[4]}.{e}.ms_per_token" for pt in points[e]),
                       method="model: extra ms per output token for every 1,000 input tokens")]
    for e1, e2 in itertools.combinations(sorted(engines), 2):
        x1 = [pt[0] for pt in points[e1]]
        x2 = [pt[0] for pt in points[e2]]
        mid = _cross(_fit(x1, [pt[1] for pt in points[e1]]), _fit(x2, [pt[1] for pt in points[e2]]))
        ends = []
        for c1, c2 in itertools.product((2, 3), (2, 3)):
            x = _cross(_fit(x1, [pt[c1] for pt in points[e1]]),
                       _fit(x2, [pt[c2] for pt in points[e2]]))
            if x is not None:
                ends.append(x)
        deps = tuple(f"model.decode.{e}.{k}" for e in (e1, e2)
                     for k in ("intercept_ms", "slope_ms_per_1k"))
        key = f"model.crossover.{e1}.{e2}"
        ctx = {"engines": [e1, e2]}
        if mid is None:
            out.append(Figure(id=key, value="none", unit="verdict", depends_on=deps,
                              context=ctx, method="model: the fitted lines do not cross at a "
                                                  "positive context length"))
            continue
        out.append(Figure(id=key, value=mid, unit="tokens", decimals=0, depends_on=deps,
                          context=ctx, method="model: input length at which the two fitted "
                                              "per-token decode times are equal"))
        if ends:
            out.append(Figure(id=f"{key}.range", value=f"{min(ends):,.0f}–{max(ends):,.0f}",
                              unit="tokens", depends_on=(key,), context=ctx,
                              method="model: crossover when each engine's line is fitted to "
                                     "its fastest or slowest steady records instead of means"))
    return out
