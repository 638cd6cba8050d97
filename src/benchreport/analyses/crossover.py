"""Where two engines' decode speeds cross, labelled for what it rests on.

Per engine, the time per output token of one request in the steady phase (ms, from the
time-weighted mean) is taken as a straight line of the input length: t = a + b × context.
Two lines cross at context = (a2 − a1) ÷ (b1 − b2).

- With two context lengths an engine's "line" is just the interpolation between its two
  points: two points always fit a line exactly, so nothing about the straight-line form is
  tested, and no intercept or slope is reported as if it were a fitted model.
- With three or more, the line is a least-squares fit; its intercept, slope and the largest
  relative residual are reported, as a model with N points.

The crossover is also given rounded outward to whole 10,000-token steps (what a handful of
points supports; not an interval), with the number of context lengths it rests on and
whether it lies outside the measured range (extrapolated).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..core import ids
from ..core.figures import Figure
from ..core.records import Run
from ..core.verdicts import NO, NO_CROSSING, YES
from .decode import FOUND, Steady

STEP = 10_000   # tokens: the crossover is rounded outward to whole steps of this size


def _fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    b, a = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(a), float(b)


def _cross(l1: tuple[float, float], l2: tuple[float, float]) -> float | None:
    (a1, b1), (a2, b2) = l1, l2
    if b1 == b2:
        return None
    x = (a2 - a1) / (b1 - b2)
    return x if x > 0 else None


def rounded(x: float, step: int = STEP) -> str:
    """The whole ``step``-token bracket around ``x``, e.g. 103,788 → "100K–110K"."""
    lo = math.floor(x / step) * step
    hi = lo + step
    return f"{lo // 1000:,}K–{hi // 1000:,}K"


def crossover_figures(run: Run, phases: list[Steady]) -> list[Figure]:
    points: dict[str, list[tuple[int, float, str]]] = {}
    for p in phases:
        if p.verdict != FOUND:
            continue
        w = run.meta.workload(p.workload)
        points.setdefault(p.engine, []).append((w.input_tokens, 1000 * p.concurrency / p.mean,
                                                w.id))
    for pts in points.values():
        pts.sort()
    lengths = {e: len({pt[0] for pt in pts}) for e, pts in points.items()}
    engines = [e for e in points if lengths[e] >= 2]      # a line needs two lengths
    out: list[Figure] = []
    lines: dict[str, tuple[float, float]] = {}
    for e in engines:
        pts = points[e]
        xs, ys = [pt[0] for pt in pts], [pt[1] for pt in pts]
        lines[e] = a, b = _fit(xs, ys)
        if lengths[e] < 3:
            continue
        deps = tuple(ids.decode(pt[2], e, "ms_per_token") for pt in pts)
        ctx = {"engine": e, "points": len(pts)}
        resid = max(abs(y - (a + b * x)) / y for x, y in zip(xs, ys, strict=True))
        out += [Figure(id=ids.model_decode(e, "intercept_ms"), value=a, unit="ms", decimals=2,
                       context=ctx, depends_on=deps,
                       method=f"fitted model with {len(pts)} points: per-token decode time at "
                              "zero context (least-squares straight line of ms/token against "
                              "input tokens; an extrapolation below the shortest length)"),
                Figure(id=ids.model_decode(e, "slope_ms_per_1k"), value=1000 * b, unit="ms",
                       decimals=3, context=ctx, depends_on=deps,
                       method=f"fitted model with {len(pts)} points: extra ms per output "
                              "token for every 1,000 input tokens (least-squares slope)"),
                Figure(id=ids.model_decode(e, "max_residual_pct"), value=100 * resid, unit="%",
                       decimals=1, context=ctx, depends_on=deps,
                       method=f"fitted model with {len(pts)} points: largest |measured − "
                              "fitted| ÷ measured ms/token over the points (how far the "
                              "straight line misses them)")]
    for e1, e2 in itertools.combinations(sorted(engines), 2):
        p1, p2 = points[e1], points[e2]
        n = min(lengths[e1], lengths[e2])
        key = ids.crossover(e1, e2)
        ctx = {"engines": [e1, e2]}
        deps = tuple(ids.decode(pt[2], e, "ms_per_token") for e, pts in ((e1, p1), (e2, p2))
                     for pt in pts)
        few = [e for e in (e1, e2) if lengths[e] < 3]
        if len(few) == 2:
            how = ("by linear interpolation between two context lengths per engine (two "
                   "points always lie on a straight line, so the straight-line form is "
                   "unvalidated)")
        elif few:
            other = e2 if few[0] == e1 else e1
            how = (f"with {few[0]}'s line by linear interpolation between two context lengths "
                   "(the straight-line form is unvalidated with two points) and "
                   f"{other}'s a least-squares fit to {lengths[other]} context lengths")
        else:
            how = (f"from least-squares straight lines fitted to at least {n} context lengths "
                   "per engine (a fitted model)")
        x = _cross(lines[e1], lines[e2])
        out.append(Figure(id=ids.crossover(e1, e2, "lengths"), value=n, unit="count", decimals=0,
                          depends_on=deps, context=ctx,
                          method="number of context lengths the crossover rests on (the "
                                 "fewer of the two engines')"))
        if x is None:
            out.append(Figure(id=key, value=NO_CROSSING, unit="verdict", depends_on=deps,
                              context=ctx, method="the two engines' per-token decode times, "
                                                  f"taken {how}, are not equal at any "
                                                  "positive context length"))
            continue
        out.append(Figure(id=key, value=x, unit="tokens", decimals=0, depends_on=deps,
                          context=ctx, method="input length at which the two engines' "
                                              f"per-token decode times are equal, {how}"))
        out.append(Figure(id=ids.crossover(e1, e2, "rounded"), value=rounded(x), unit="tokens",
                          depends_on=(key,), context=ctx,
                          method=f"the crossover rounded outward to {STEP:,} tokens: the "
                                 f"precision {n} context lengths support; not an interval"))
        lo = max(p1[0][0], p2[0][0])
        hi = min(p1[-1][0], p2[-1][0])
        out.append(Figure(id=ids.crossover(e1, e2, "beyond"),
                          value=YES if not lo <= x <= hi else NO,
                          unit="verdict", depends_on=(key,), context=ctx,
                          method=f"whether the crossover lies outside the context range "
                                 f"measured for both engines ({lo:,}–{hi:,} tokens), i.e. is "
                                 "extrapolated"))
    return out
