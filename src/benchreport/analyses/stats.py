"""Statistics of benchmark repeats: is a difference between two engines bigger than the noise?

- ``t_quantile`` / ``t_critical``: Student t quantiles for any real df > 0 (Welch df is
  fractional), from the regularized incomplete beta function; standard library only.
- ``summarize``: mean, sample std, coefficient of variation and interval of one sample. For
  the positive quantities a benchmark reports (latencies, throughputs) the interval is taken
  on the log scale (``LOG_T``): the delta method gives log(mean) a standard error of
  cv ÷ √n, so the bounds are mean × exp(∓ t_crit(n − 1) · cv ÷ √n). It is an interval
  for the arithmetic mean (the value shown), never reaches zero or below, and is the same
  method as ``ratio_interval``'s. Below ``MIN_INTERVAL_N`` (3) repeats there is none
  (``TOO_FEW``; ``SINGLE`` for one or none): with 2 (1 df, t = 12.71) the bounds span
  orders of magnitude, e.g. 0.0–22,704,766 ms around a 410 ms TTFT, which says nothing a
  reader can use and reads as a measurement. ``log=False`` gives the plain t interval
  mean ± t_crit · std ÷ √n (``T_METHOD``) for quantities that may be negative.
- ``ratio_interval``: interval of mean(a) / mean(b) for two independent samples (delta method
  on the log ratio, Welch–Satterthwaite df).
- ``difference_interval``: Welch t interval of mean(a) - mean(b).
- ``verdict``: higher, lower, tie or unknown, from an interval and its neutral value (1 for
  ratios, 0 for differences).

The unit of a sample is the repeat: one value per repeat (e.g. the mean TTFT of a run), never
one per request. Requests of one batch are not independent samples — a request's TTFT follows
its position in the queue — so treating them as n observations would make intervals far too
narrow. The t intervals assume that repeat means are roughly normally distributed; with the
few repeats a benchmark has (often 3), this cannot be checked and is an assumption.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.verdicts import HIGHER, INTERVAL_LEVEL, LOWER, NO_INTERVAL, TIE_IN_NOISE

LEVEL = INTERVAL_LEVEL
T_METHOD = "t"
LOG_T = "log-t"
SINGLE = "single"
TOO_FEW = "n too small for an interval"
MIN_INTERVAL_N = 3      # fewer repeats than this get a mean, std and cv but no interval
LOG_WELCH = "log-welch-t"
WELCH = "welch-t"
TIE, UNKNOWN = TIE_IN_NOISE, NO_INTERVAL           # HIGHER, LOWER: from core.verdicts

_TINY = 1e-300  # keeps the continued fraction away from division by zero (Lentz)


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function, modified Lentz method."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 301):
        for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _beta_inc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta function I_x(a, b); y = 1 - x, passed in because the
    caller can compute it without cancellation when x is close to 1."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(y))
    # The fraction converges fast only below this point; above it, use the symmetry.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, y) / b


def _t_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0."""
    return 0.5 * _beta_inc(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))


def _t_pdf(t: float, df: float) -> float:
    return math.exp(math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0)
                    - 0.5 * math.log(df * math.pi) - (df + 1.0) / 2.0 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """Student t quantile (inverse CDF) for real df > 0 and p in (0, 1); df = inf gives the
    normal quantile."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if not df > 0.0:
        raise ValueError(f"df must be > 0, got {df}")
    if math.isinf(df):
        return statistics.NormalDist().inv_cdf(p)
    if p == 0.5:
        return 0.0
    # Solve for the upper tail q; 1 - p is exact for p >= 0.5, and p < 0.5 is its mirror
    # (exact symmetry, and a small p keeps its precision).
    sign, q = (1.0, 1.0 - p) if p > 0.5 else (-1.0, p)
    # Bracket the root from the normal quantile up (the t tails are heavier, so the t quantile
    # lies above it), then Newton on the tail, bisecting whenever a step leaves the bracket.
    # The tail is convex, so from the bracket's lower end Newton climbs without overshooting.
    lo, hi = 0.0, statistics.NormalDist().inv_cdf(1.0 - q)
    while _t_tail(hi, df) > q:
        lo, hi = hi, hi * 2.0
    t = lo if lo > 0.0 else hi
    for _ in range(200):
        f = _t_tail(t, df) - q
        if f == 0.0:
            break
        if f > 0.0:
            lo = t
        else:
            hi = t
        nxt = t + f / _t_pdf(t, df)
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2.0
        done = abs(nxt - t) <= 1e-13 * t
        t = nxt
        if done:
            break
    return sign * t


def t_critical(df: float, level: float = LEVEL) -> float:
    """Two-sided critical value: mean ± t_critical · se covers with probability ``level``."""
    return t_quantile((1.0 + level) / 2.0, df)


def _clean(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(v)]


def _variance(xs: list[float], mean: float) -> float:
    """Sample variance (n - 1), in floats: statistics.variance is exact but far slower, and
    these run in loops."""
    return sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)


def _welch_df(va: float, vb: float, n_a: int, n_b: int) -> float:
    """Welch–Satterthwaite df from the two variance terms of a standard error."""
    return (va + vb) ** 2 / (va * va / (n_a - 1) + vb * vb / (n_b - 1))


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float | None
    std: float | None  # sample std (n - 1); None when n < 2
    cv: float | None  # std / |mean|; None when n < 2 or mean == 0
    low: float | None  # LOG_T: mean · exp(-t_crit(n - 1) · cv / √n); T_METHOD: mean - t · se
    high: float | None  # None when n < 3 (and for LOG_T when the mean is not positive)
    method: str  # LOG_T or T_METHOD when n >= 3, TOO_FEW when n == 2, else SINGLE


def summarize(values: Iterable[float | None], level: float = LEVEL, log: bool = True
              ) -> Summary:
    """Summary of one sample (one value per repeat); None and NaN are ignored. ``log``: the
    interval on the log scale (positive quantities; see the module docstring)."""
    xs = _clean(values)
    n = len(xs)
    if n == 0:
        return Summary(0, None, None, None, None, None, SINGLE)
    mean = statistics.fmean(xs)
    if n == 1:
        return Summary(1, mean, None, None, None, None, SINGLE)
    std = math.sqrt(_variance(xs, mean))
    cv = std / abs(mean) if mean != 0 else None
    if n < MIN_INTERVAL_N:
        return Summary(n, mean, std, cv, None, None, TOO_FEW)
    t = t_critical(n - 1, level)
    if not log:
        half = t * std / math.sqrt(n)
        return Summary(n, mean, std, cv, mean - half, mean + half, T_METHOD)
    if std == 0:
        return Summary(n, mean, std, cv, mean, mean, LOG_T)
    if mean <= 0 or min(xs) < 0:
        # not a positive quantity: no log-scale interval
        return Summary(n, mean, std, cv, None, None, LOG_T)
    half = t * std / (mean * math.sqrt(n))
    return Summary(n, mean, std, cv, mean * math.exp(-half), mean * math.exp(half), LOG_T)


@dataclass(frozen=True)
class Ratio:
    value: float | None  # mean(a) / mean(b)
    low: float | None
    high: float | None
    n_a: int
    n_b: int
    df: float | None  # Welch–Satterthwaite df of the log ratio
    method: str  # LOG_WELCH, or SINGLE when either side has n < 2


def ratio_interval(a: Iterable[float | None], b: Iterable[float | None],
                   level: float = LEVEL) -> Ratio:
    """Interval of mean(a) / mean(b) for two independent samples, e.g. one engine's repeats
    against another's.

    Delta method on log(mean_a) - log(mean_b): variance s_a²/(n_a·m_a²) + s_b²/(n_b·m_b²),
    bounds exp(log ratio ± t_crit(df)·se). On the log scale the interval is symmetric, so
    swapping a and b gives the reciprocal bounds. Needs positive means for an interval.
    """
    xa, xb = _clean(a), _clean(b)
    n_a, n_b = len(xa), len(xb)
    m_a = statistics.fmean(xa) if xa else None
    m_b = statistics.fmean(xb) if xb else None
    value = m_a / m_b if m_a is not None and m_b else None
    if n_a < 2 or n_b < 2:
        return Ratio(value, None, None, n_a, n_b, None, SINGLE)
    if m_a <= 0 or m_b <= 0:
        return Ratio(value, None, None, n_a, n_b, None, LOG_WELCH)
    va = _variance(xa, m_a) / (n_a * m_a * m_a)
    vb = _variance(xb, m_b) / (n_b * m_b * m_b)
    if va + vb == 0:
        return Ratio(value, value, value, n_a, n_b, None, LOG_WELCH)
    df = _welch_df(va, vb, n_a, n_b)
    half = t_critical(df, level) * math.sqrt(va + vb)
    center = math.log(m_a) - math.log(m_b)
    return Ratio(value, math.exp(center - half), math.exp(center + half), n_a, n_b, df,
                 LOG_WELCH)


@dataclass(frozen=True)
class Difference:
    value: float | None  # mean(a) - mean(b)
    low: float | None
    high: float | None
    n_a: int
    n_b: int
    df: float | None  # Welch–Satterthwaite df
    method: str  # WELCH, or SINGLE when either side has n < 2


def difference_interval(a: Iterable[float | None], b: Iterable[float | None],
                        level: float = LEVEL) -> Difference:
    """Welch t interval of mean(a) - mean(b) for two independent samples."""
    xa, xb = _clean(a), _clean(b)
    n_a, n_b = len(xa), len(xb)
    m_a = statistics.fmean(xa) if xa else None
    m_b = statistics.fmean(xb) if xb else None
    value = m_a - m_b if m_a is not None and m_b is not None else None
    if n_a < 2 or n_b < 2:
        return Difference(value, None, None, n_a, n_b, None, SINGLE)
    va = _variance(xa, m_a) / n_a
    vb = _variance(xb, m_b) / n_b
    if va + vb == 0:
        return Difference(value, value, value, n_a, n_b, None, WELCH)
    df = _welch_df(va, vb, n_a, n_b)
    half = t_critical(df, level) * math.sqrt(va + vb)
    return Difference(value, value - half, value + half, n_a, n_b, df, WELCH)


def verdict(low: float | None, high: float | None, neutral: float) -> str:
    """HIGHER when the whole interval is above ``neutral``, LOWER when below, TIE when it
    contains ``neutral`` (bounds included), UNKNOWN without an interval."""
    if low is None or high is None:
        return UNKNOWN
    if low > neutral:
        return HIGHER
    if high < neutral:
        return LOWER
    return TIE
