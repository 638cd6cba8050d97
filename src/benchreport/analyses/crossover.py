"""Where two engines' decode speeds cross, labelled for what it rests on.

Per engine, the time per output token of one request in the steady phase (ms, from the
time-weighted mean) is taken as a straight line of the input length: t = a + b × context.
Two lines cross at context = (a2 − a1) ÷ (b1 − b2).

- With two context lengths an engine's "line" is just the interpolation between its two
  points: two points always fit a line exactly, so nothing about the straight-line form is
  tested, and no intercept or slope is reported as if it were a fitted model.
- With three or more, the line is a least-squares fit; its intercept, slope and the largest
  relative residual are reported, as a model with N points.

Where the lines cross depends on what is taken as straight. The point estimate takes the
time per output token as linear in the context (above); the same points taken as linear in
per-request speed (tok/s, ``tok_per_s``) or the time per token as linear in the logarithm of
the context (``log_context``) cross elsewhere. Each is a figure of its own, and the band
(``rounded``) covers all three that cross, rounded outward to whole 10,000-token steps (what
a handful of points supports; not an interval), with the number of context lengths it rests
on and whether the point estimate lies outside the measured range (extrapolated).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..core import ids
from ..core.figures import Figure, figure
from ..core.methods import Said, said
from ..core.records import Run
from ..core.verdicts import NO, NO_CROSSING, YES
from .decode import FOUND, Steady

STEP = 10_000   # tokens: the crossover is rounded outward to whole steps of this size


# The interpolations, the point estimate's first: how a point's (context, ms/token) is
# mapped before the straight line, and how a crossing x of the mapped context maps back.
POINT_ESTIMATE = "ms_per_token"
INTERPOLATIONS = {
    "ms_per_token": (lambda x, ms: (x, ms), lambda u: u),
    "tok_per_s": (lambda x, ms: (x, 1000 / ms), lambda u: u),
    "log_context": (lambda x, ms: (math.log(x), ms), math.exp),
}
_WORDS = {k: said("crossover.words_" + k) for k in ("ms_per_token", "tok_per_s", "log_context")}


def _fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    b, a = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(a), float(b)


def rounded(x: float, step: int = STEP) -> str:
    """The whole ``step``-token bracket around ``x``, e.g. 103,788 → "100K–110K"."""
    return band([x], step)


def band(xs: list[float], step: int = STEP) -> str:
    """The whole ``step``-token steps covering every ``xs``: 90,600 and 147,000 →
    "90K–150K"; one value (or values within one step) gives its one step."""
    low, high = round(min(xs), 6), round(max(xs), 6)     # 19,999.999… is 20,000
    lo = math.floor(low / step) * step
    hi = max(lo + step, math.ceil(high / step) * step)
    return f"{lo // 1000:,}K–{hi // 1000:,}K"


def crossings(p1: list[tuple[int, float, str]], p2: list[tuple[int, float, str]]
              ) -> dict[str, float | None]:
    """Per interpolation: the context at which the two engines' lines (each a straight line
    through, or fitted to, its points once mapped) cross; None where they do not cross at a
    positive context."""
    out: dict[str, float | None] = {}
    for name, (fwd, back) in INTERPOLATIONS.items():
        lines = []
        for pts in (p1, p2):
            mapped = [fwd(x, ms) for x, ms, _ in pts]
            lines.append(_fit([u for u, _ in mapped], [v for _, v in mapped]))
        out[name] = _back(name, back, *lines)
    return out


def _back(name: str, back, l1: tuple[float, float], l2: tuple[float, float]) -> float | None:
    """Where two mapped lines cross, as a context length; None if nowhere positive (or, in
    log context, beyond any length a float holds)."""
    (a1, b1), (a2, b2) = l1, l2
    if b1 == b2:
        return None
    u = (a2 - a1) / (b1 - b2)
    if name != "log_context":
        return back(u) if u > 0 else None
    return back(u) if u < 700 else None


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
        out += [figure(id=ids.model_decode(e, "intercept_ms"), value=a, unit="ms", decimals=2,
                       context=ctx, depends_on=deps,
                       method=said("crossover.intercept", n=len(pts))),
                figure(id=ids.model_decode(e, "slope_ms_per_1k"), value=1000 * b, unit="ms",
                       decimals=3, context=ctx, depends_on=deps,
                       method=said("crossover.slope", n=len(pts), per="1,000")),
                figure(id=ids.model_decode(e, "max_residual_pct"), value=100 * resid, unit="%",
                       decimals=1, context=ctx, depends_on=deps,
                       method=said("crossover.residual", n=len(pts)))]
    for e1, e2 in itertools.combinations(sorted(engines), 2):
        out += _pair_figures((e1, e2), (points[e1], points[e2]), lengths)
    return out


def _how(e1: str, e2: str, lengths: dict[str, int]) -> Said:
    """What the engines' lines are: interpolations between two lengths, or fitted."""
    n = min(lengths[e1], lengths[e2])
    few = [e for e in (e1, e2) if lengths[e] < 3]
    if len(few) == 2:
        return said("crossover.how_two")
    if few:
        other = e2 if few[0] == e1 else e1
        return said("crossover.how_mixed", few=few[0], other=other, n=lengths[other])
    return said("crossover.how_fitted", n=n)


def _other(e1: str, e2: str, name: str, x: float | None, deps: tuple[str, ...],
           how: Said) -> Figure:
    """The crossover under interpolation ``name`` (not the point estimate's)."""
    return figure(id=ids.crossover(e1, e2, name), value=NO_CROSSING if x is None else x,
                  unit="verdict" if x is None else "tokens", decimals=None if x is None else 0,
                  depends_on=deps, context={"engines": [e1, e2], "interpolation": name},
                  method=said("crossover.other", words=_WORDS[name], how=how))


def _pair_figures(pair: tuple[str, str], pts: tuple[list, list],
                  lengths: dict[str, int]) -> list[Figure]:
    """The crossover of two engines under each interpolation, the band over them, how many
    lengths it rests on and whether the point estimate is extrapolated."""
    (e1, e2), (p1, p2) = pair, pts
    n = min(lengths[e1], lengths[e2])
    key = ids.crossover(e1, e2)
    deps = tuple(ids.decode(pt[2], e, "ms_per_token") for e, ps in ((e1, p1), (e2, p2))
                 for pt in ps)
    how = _how(e1, e2, lengths)
    xs = crossings(p1, p2)
    x = xs[POINT_ESTIMATE]
    others = [k for k in INTERPOLATIONS if k != POINT_ESTIMATE]
    ctx = {"engines": [e1, e2]}
    out = [figure(id=ids.crossover(e1, e2, "lengths"), value=n, unit="count", decimals=0,
                  depends_on=deps, context=ctx,
                  method=said("crossover.lengths"))]
    if x is None:
        out.append(figure(id=key, value=NO_CROSSING, unit="verdict", depends_on=deps,
                          context={**ctx, "interpolation": POINT_ESTIMATE},
                          method=said("crossover.none", how=how)))
        return out
    shown = [said("crossover.gives", words=_WORDS[k],
                  value=f"{xs[k]:,.0f}" if xs[k] else said("crossover.no_crossing"))
             for k in others]
    out.append(figure(id=key, value=x, unit="tokens", decimals=0, depends_on=deps,
                      context={**ctx, "interpolation": POINT_ESTIMATE,
                               "others": {k: xs[k] for k in others}},
                      method=said("crossover.point", how=how, words=_WORDS[POINT_ESTIMATE],
                                  shown=shown)))
    out += [_other(e1, e2, k, xs[k], deps, how) for k in others]
    crossed = [v for v in xs.values() if v is not None]
    out.append(figure(id=ids.crossover(e1, e2, "rounded"), value=band(crossed), unit="tokens",
                      depends_on=(key, *(ids.crossover(e1, e2, k) for k in others)),
                      context={**ctx, "low": min(crossed), "high": max(crossed),
                               "interpolations": [k for k, v in xs.items() if v is not None]},
                      method=said("crossover.band", which=[_WORDS[k] for k, v in xs.items() if v],
                                  low=f"{min(crossed):,.0f}", high=f"{max(crossed):,.0f}",
                                  step=f"{STEP:,}", n=n)))
    lo = max(p1[0][0], p2[0][0])
    hi = min(p1[-1][0], p2[-1][0])
    out.append(figure(id=ids.crossover(e1, e2, "beyond"), value=YES if not lo <= x <= hi else NO,
                      unit="verdict", depends_on=(key,), context=ctx,
                      method=said("crossover.beyond", low=f"{lo:,}", high=f"{hi:,}")))
    return out
