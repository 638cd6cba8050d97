"""Statistics of benchmark repeats: t quantiles against published tables and closed forms,
summaries, ratio and difference intervals worked out by hand, verdicts, and the coverage of
the ratio interval by simulation."""

from __future__ import annotations

import math
import random

import pytest

from benchreport.analyses.stats import (
    HIGHER,
    LOG_T,
    LOG_WELCH,
    LOWER,
    SINGLE,
    T_METHOD,
    TIE,
    TOO_FEW,
    UNKNOWN,
    WELCH,
    Summary,
    difference_interval,
    ratio_interval,
    summarize,
    t_critical,
    t_quantile,
    verdict,
)

# 95% two-sided critical values as printed in t tables.
TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 30: 2.042,
         math.inf: 1.960}


@pytest.mark.parametrize("df, expected", TABLE.items())
def test_t_critical_matches_the_table(df, expected):
    assert t_critical(df) == pytest.approx(expected, abs=1e-3)


def test_fractional_df_lies_between_its_neighbours():
    assert t_critical(4) > t_critical(4.5) > t_critical(5)
    assert t_critical(1) > t_critical(1.2) > t_critical(2)


@pytest.mark.parametrize("p", [1e-6, 0.01, 0.3, 0.6, 0.975, 0.9999])
def test_t_quantile_closed_forms(p):
    # df = 1 is the Cauchy distribution, df = 2 has a closed form too.
    assert t_quantile(p, 1) == pytest.approx(-1 / math.tan(math.pi * p), rel=1e-10)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-10)


@pytest.mark.parametrize("df", [1.5, 3698 / 841, 7.3])
def test_t_quantile_at_fractional_df_against_an_integral_of_the_density(df):
    # The probability between 0 and the 0.975 quantile is 0.475; Simpson's rule on the density.
    t = t_quantile(0.975, df)
    c = math.gamma((df + 1) / 2) / (math.gamma(df / 2) * math.sqrt(df * math.pi))
    steps = 2000
    h = t / steps
    ys = [c * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2) for i in range(steps + 1)]
    area = h / 3 * (ys[0] + ys[-1] + 4 * sum(ys[1:-1:2]) + 2 * sum(ys[2:-1:2]))
    assert area == pytest.approx(0.475, abs=1e-9)


@pytest.mark.parametrize("df", [1, 2.5, 4, 30, math.inf])
def test_t_quantile_median_and_symmetry(df):
    assert t_quantile(0.5, df) == 0
    for p in (0.001, 0.1, 0.4):
        assert t_quantile(p, df) == pytest.approx(-t_quantile(1 - p, df), rel=1e-12)
        assert t_quantile(p, df) < 0


def test_t_quantile_rejects_bad_arguments():
    for p, df in ((0, 3), (1, 3), (0.5, 0), (0.5, -1)):
        with pytest.raises(ValueError):
            t_quantile(p, df)


def test_summarize_three_repeats():
    # mean 12; deviations -2, 0, 2 -> variance (4 + 0 + 4) / 2 = 4, std 2, cv 1/6.
    s = summarize([10, 12, 14])
    assert (s.n, s.mean, s.std, s.method) == (3, 12, 2, LOG_T)
    assert s.cv == pytest.approx(1 / 6)
    # on the log scale: 12 · exp(∓ t(0.975, 2) · (1/6) ÷ √3) = 12 · exp(∓ 0.41402)
    half = 4.302653 * (1 / 6) / math.sqrt(3)
    assert (s.low, s.high) == pytest.approx((12 * math.exp(-half), 12 * math.exp(half)),
                                            rel=1e-6)
    assert (s.low, s.high) == pytest.approx((7.9318, 18.1547), abs=1e-4)
    # the plain t interval, for quantities that may be negative
    t = summarize([10, 12, 14], log=False)
    half = 4.302653 * 2 / math.sqrt(3)  # t(0.975, 2) * std / sqrt(n) = 4.9682...
    assert t.method == T_METHOD
    assert t.low == pytest.approx(12 - half, rel=1e-6)
    assert t.high == pytest.approx(12 + half, rel=1e-6)
    assert (t.low, t.high) == pytest.approx((7.0317, 16.9683), abs=1e-4)


@pytest.mark.parametrize("values, expected", [
    # three repeats of a latency, 1,000, 5,000 and 3,000 ms: the t interval would be
    # 3000 ± 4.3027 · 2000 ÷ √3 = −1,968 … 7,968 ms; on the log scale:
    # 3000 · exp(∓ 4.3027 · 0.66667 ÷ √3) = 572.65 … 15,716.4 ms
    ([1000.0, 5000.0, 3000.0], (572.6506, 15_716.39)),
    # three repeats, 100, 900 and 200 ms: cv 1.0897, 400 · exp(∓ 4.3027 · 1.0897 ÷ √3)
    ([100.0, 900.0, 200.0], (26.694, 5993.86)),
])
def test_few_repeats_of_a_positive_quantity_never_get_a_bound_at_or_below_zero(values,
                                                                                expected):
    s = summarize(values)
    plain = summarize(values, log=False)
    assert plain.low < 0 < s.low                 # the t interval goes negative, this does not
    assert (s.low, s.high) == pytest.approx(expected, rel=1e-4)
    # it is centred on the mean on the log scale: low · high = mean²
    assert s.low * s.high == pytest.approx(s.mean ** 2, rel=1e-9)


def test_no_log_interval_for_a_sample_that_is_not_positive():
    s = summarize([0.0, 0.0, 0.0])
    assert (s.low, s.high) == (0.0, 0.0)        # no spread: the value itself
    assert summarize([-1.0, 3.0, 1.0]).low is None


def test_two_repeats_give_no_interval_three_give_the_log_scale_one():
    # "TTFT p99 410.0 (0.0–22,704,766.0)": two repeats have 1 df (t = 12.71), and their
    # interval spans orders of magnitude; none is given, the mean, std and cv are
    for log in (True, False):
        two = summarize([400.0, 420.0], log=log)
        assert (two.n, two.mean, two.low, two.high) == (2, 410.0, None, None)
        assert two.std == pytest.approx(14.142136) and two.cv == pytest.approx(0.0344930)
        assert two.method == TOO_FEW == "n too small for an interval"
    assert summarize([400.0, 420.0, None, math.nan]).method == TOO_FEW
    assert summarize([5.0, 5.0]).low is None           # no spread is still two repeats
    three = summarize([400.0, 420.0, 410.0])
    assert three.method == LOG_T and three.n == 3
    # 410 · exp(∓ t(2) · cv ÷ √3), t(2) = 4.3027, cv = 10 ÷ 410
    half = 4.302653 * (10.0 / 410.0) / math.sqrt(3)
    assert (three.low, three.high) == pytest.approx((410 * math.exp(-half),
                                                     410 * math.exp(half)), rel=1e-6)


def test_summarize_single_and_empty():
    assert summarize([7.5]) == Summary(1, 7.5, None, None, None, None, SINGLE)
    assert summarize([]) == Summary(0, None, None, None, None, None, SINGLE)
    assert summarize([None, math.nan]) == Summary(0, None, None, None, None, None, SINGLE)


def test_summarize_ignores_none_and_nan():
    assert summarize([10, None, 12, math.nan, 14]) == summarize([10, 12, 14])


def test_summarize_zero_mean_has_no_cv():
    s = summarize([-1, 0, 1], log=False)
    assert s.std == 1 and s.cv is None and s.low is not None
    assert summarize([-1, 0, 1]).low is None


def test_ratio_interval_by_hand():
    a, b = [10, 12, 14], [4, 5, 6, 5]
    # a: mean 12, variance 4, n 3 -> term 4 / (3 * 12²) = 1/108
    # b: mean 5, variance (1 + 0 + 1 + 0) / 3 = 2/3, n 4 -> term (2/3) / (4 * 5²) = 1/150
    va, vb = 1 / 108, 1 / 150
    se = math.sqrt(va + vb)  # sqrt(43/2700)
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 3)  # = 3698/841 = 4.3971...
    assert df == pytest.approx(3698 / 841)
    half = t_critical(df) * se
    r = ratio_interval(a, b)
    assert r.value == pytest.approx(2.4)
    assert r.df == pytest.approx(df)
    assert r.low == pytest.approx(2.4 * math.exp(-half))
    assert r.high == pytest.approx(2.4 * math.exp(half))
    assert (r.n_a, r.n_b, r.method) == (3, 4, LOG_WELCH)
    # t(0.975, 4.397) = 2.6803, half = 2.6803 * 0.126198 = 0.33825, exp(0.33825) = 1.40249
    assert (r.low, r.high) == pytest.approx((2.4 / 1.40249, 2.4 * 1.40249), abs=1e-4)
    assert verdict(r.low, r.high, 1) == HIGHER


def test_ratio_of_identical_samples_is_a_tie():
    r = ratio_interval([10, 11, 12], [10, 11, 12])
    assert r.value == 1
    assert r.low < 1 < r.high
    assert r.low == pytest.approx(1 / r.high)
    assert verdict(r.low, r.high, 1) == TIE


def test_separated_samples_and_their_swap():
    fast, slow = [110, 112, 114, 111], [100, 101, 102]
    r = ratio_interval(fast, slow)
    assert 1 < r.low < r.value < r.high
    assert verdict(r.low, r.high, 1) == HIGHER
    s = ratio_interval(slow, fast)
    assert verdict(s.low, s.high, 1) == LOWER
    assert s.value == pytest.approx(1 / r.value)
    assert s.low == pytest.approx(1 / r.high)
    assert s.high == pytest.approx(1 / r.low)
    assert (s.n_a, s.n_b, s.df) == (3, 4, r.df)


def test_ratio_with_a_single_repeat_is_unknown():
    r = ratio_interval([10], [9, 10, 11])
    assert (r.value, r.low, r.high, r.df, r.method) == (1, None, None, None, SINGLE)
    assert (r.n_a, r.n_b) == (1, 3)
    assert verdict(r.low, r.high, 1) == UNKNOWN
    assert ratio_interval([], [1, 2]).value is None


def test_ratio_needs_positive_means():
    r = ratio_interval([-1, -2, -3], [1, 2, 3])
    assert r.value == -1 and r.low is None and r.high is None
    assert verdict(r.low, r.high, 1) == UNKNOWN
    assert ratio_interval([1, 2, 3], [0, 0, 0]).value is None


def test_ratio_without_spread_is_a_point():
    r = ratio_interval([2, 2, 2], [1, 1])
    assert r.value == r.low == r.high == 2
    assert verdict(r.low, r.high, 1) == HIGHER


def test_difference_interval_by_hand():
    a, b = [10, 12, 14], [4, 5, 6, 5]
    # terms: 4/3 (variance 4 over n 3) and (2/3)/4 = 1/6; se² = 3/2
    # df = (3/2)² / ((4/3)²/2 + (1/6)²/3) = 2.25 / (8/9 + 1/108) = 243/97 = 2.505...
    df = 243 / 97
    half = t_critical(df) * math.sqrt(1.5)
    d = difference_interval(a, b)
    assert d.value == 7
    assert d.df == pytest.approx(df)
    assert d.low == pytest.approx(7 - half)
    assert d.high == pytest.approx(7 + half)
    assert (d.n_a, d.n_b, d.method) == (3, 4, WELCH)
    assert verdict(d.low, d.high, 0) == HIGHER
    swapped = difference_interval(b, a)
    assert (swapped.low, swapped.high) == pytest.approx((-d.high, -d.low))
    assert verdict(swapped.low, swapped.high, 0) == LOWER


def test_difference_single_and_point():
    d = difference_interval([3], [1, 2])
    assert (d.value, d.low, d.high, d.method) == (1.5, None, None, SINGLE)
    p = difference_interval([3, 3], [1, 1, None])
    assert (p.value, p.low, p.high, p.method) == (2, 2, 2, WELCH)


def test_verdict_bounds_are_inclusive():
    assert verdict(1.0, 1.3, 1) == TIE
    assert verdict(0.7, 1.0, 1) == TIE
    assert verdict(1.01, 1.3, 1) == HIGHER
    assert verdict(-0.5, -0.1, 0) == LOWER
    assert verdict(None, 2.0, 1) == UNKNOWN
    assert verdict(0.5, None, 1) == UNKNOWN


def test_ratio_interval_coverage_by_simulation():
    # Equal true means, three repeats per side, unequal noise (5% and 10%). With equal noise
    # Welch at n = 3 is known to be conservative (about 96.5%), still inside the band.
    rng = random.Random(20240611)
    trials = 4000
    hits = 0
    for _ in range(trials):
        a = [rng.gauss(100, 5) for _ in range(3)]
        b = [rng.gauss(100, 10) for _ in range(3)]
        r = ratio_interval(a, b)
        hits += r.low <= 1 <= r.high
    assert 0.93 <= hits / trials <= 0.97
