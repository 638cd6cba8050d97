"""Validity checks of benchmark points: each rule fires on a constructed point with the
value and limit it reports, and stays quiet just inside its threshold."""

from __future__ import annotations

import math

import pytest

from benchreport.analyses.validity import (
    ALL_FAILED,
    FAILED,
    FEW_FOR_P99,
    FLAGGED,
    INVALID,
    LOAD_NOT_DRIVEN,
    ORDER,
    SHORT_OUTPUT,
    SHORT_RUN,
    VALID,
    WARMUP,
    Check,
    Thresholds,
    Validity,
    achieved_concurrency,
    check_point,
    check_points,
)

ASKED = 128   # output tokens the scenario asks per request


def point(**changes) -> dict:
    """A clean closed-loop point at concurrency 16: 1000 requests in 120 s, 1.9 s each,
    so Little's law gives 1000 × 1.9 ÷ 120 = 15.83 requests in flight (limit 14.4)."""
    p = {"point": "vllm.chat.c16.r1", "max_concurrency_target": 16,
         "request_rate_target": None, "duration": 120.0, "completed": 1000, "failed": 0,
         "scenario_output_tokens": float(ASKED), "max_concurrency": 16,
         "request_rate": math.inf, "mean_e2el_ms": 1900.0, "median_e2el_ms": 1850.0,
         "requests": 1000}
    p.update(changes)
    if "total_output_tokens" not in p:
        p["total_output_tokens"] = p["completed"] * ASKED
    if "request_throughput" not in p:
        p["request_throughput"] = p["completed"] / p["duration"]
    return p


def open_point(**changes) -> dict:
    """All requests at once, no cap: no load target, so no load check."""
    base = {"point": "vllm.chat.rinf.r1", "max_concurrency_target": None,
            "request_rate_target": math.inf, "max_concurrency": None}
    return point(**{**base, **changes})


def rows(tpots: list[float], name: str = "p", ttft: float = 100.0,
         tokens: int = 101) -> list[dict]:
    """Per-request rows in send order whose decode time per token is the given one (ms)."""
    return [{"point": name, "index": i, "ttft_ms": ttft, "e2el_ms": ttft + t * (tokens - 1),
             "input_tokens": 512, "output_tokens": tokens, "error": None}
            for i, t in enumerate(tpots)]


def steady(n: int, spread: float = 0.4) -> list[float]:
    """n TPOTs around 20 ms with a deterministic jitter of -spread … +spread."""
    cycle = [-spread, -spread / 2, 0.0, spread / 2, spread]
    return [20.0 + cycle[i % 5] for i in range(n)]


def codes(v: Validity) -> tuple[str, ...]:
    return tuple(c.code for c in v.checks)


def only(v: Validity, code: str) -> Check:
    assert codes(v) == (code,), v
    return v.checks[0]


# --- clean points and Little's law ----------------------------------------------------------


def test_clean_point_is_valid_with_no_checks():
    v = check_point(point())
    assert v == Validity("vllm.chat.c16.r1", VALID, ())


def test_achieved_concurrency_is_littles_law():
    assert achieved_concurrency(point()) == pytest.approx(1000 * 1.9 / 120)
    # the median stands in for a missing mean
    assert achieved_concurrency(point(mean_e2el_ms=None)) == pytest.approx(1000 * 1.85 / 120)
    # no duration: the recorded throughput is completed ÷ duration
    assert achieved_concurrency(point(duration=None, request_throughput=8.0)) == \
        pytest.approx(8.0 * 1.9)
    assert achieved_concurrency(point(mean_e2el_ms=None, median_e2el_ms=None)) is None


# --- load not driven --------------------------------------------------------------------------


def test_concurrency_not_driven_below_90_percent_of_target():
    # 1000 requests on 16 workers: 63 waves, so a perfect client averages 1000 ÷ 63 = 15.87
    # in flight; 1000 × 1.7 ÷ 120 = 14.17 < 0.9 × 15.87 = 14.29
    check = only(check_point(point(mean_e2el_ms=1700.0)), LOAD_NOT_DRIVEN)
    assert check.severity == INVALID
    assert check.value == pytest.approx(1000 * 1.7 / 120)
    assert check.limit == pytest.approx(0.9 * 1000 / 63)
    assert check.unit == "req"
    # 1000 × 1.72 ÷ 120 = 14.33: just inside
    assert check_point(point(mean_e2el_ms=1720.0)).verdict == VALID


def test_the_drain_of_the_last_wave_is_not_an_undriven_load():
    # 300 requests on 128 workers run in 3 waves: a perfect client averages 100 in flight,
    # not 128; 102.6 (what a simulated closed loop gives) is driven
    p = point(max_concurrency_target=128, completed=300, duration=30.0,
              mean_e2el_ms=10_260.0, requests=300)
    assert LOAD_NOT_DRIVEN not in codes(check_point(p))
    # and 80 in flight is not: under 0.9 × 100
    slow = check_point({**p, "mean_e2el_ms": 8_000.0}).checks[0]
    assert slow.code == LOAD_NOT_DRIVEN
    assert (slow.value, slow.limit) == (pytest.approx(80.0), pytest.approx(90.0))


def test_fewer_requests_than_slots_is_held_to_the_requests_not_the_slots():
    # 8 requests at concurrency 16: at most 8 in flight. 8 × 95 ÷ 100 = 7.6 ≥ 0.9 × 8
    few = point(completed=8, duration=100.0, mean_e2el_ms=95_000.0, requests=8)
    v = check_point(few)
    assert LOAD_NOT_DRIVEN not in codes(v)
    assert codes(v) == (FEW_FOR_P99, SHORT_RUN)
    assert v.verdict == FLAGGED
    short = v.checks[1]
    assert (short.severity, short.value, short.limit, short.unit) == (FLAGGED, 8.0, 160.0, "req")
    # and the limit is 0.9 × 8, not 0.9 × 16: 8 × 85 ÷ 100 = 6.8 < 7.2
    slow = check_point(point(completed=8, duration=100.0, mean_e2el_ms=85_000.0, requests=8))
    check = slow.checks[0]
    assert check.code == LOAD_NOT_DRIVEN
    assert check.value == pytest.approx(6.8)
    assert check.limit == pytest.approx(7.2)


def test_rate_not_driven_below_90_percent_of_target():
    rate = {"max_concurrency_target": None, "request_rate_target": 4.0}
    # 1000 requests sent over 280 − 1.9 s (the last one's latency follows the last send):
    # 3.596 req/s < 0.9 × 4 = 3.6
    check = only(check_point(point(**rate, duration=280.0)), LOAD_NOT_DRIVEN)
    assert check.severity == INVALID
    assert check.value == pytest.approx(1000 / 278.1)
    assert check.limit == pytest.approx(3.6)
    assert check.unit == "req/s"
    # 1000 over 279 − 1.9 s: 3.609 req/s
    assert check_point(point(**rate, duration=279.0)).verdict == VALID
    # the slowest requests are the last ones under load: p99 comes off when the file has it
    # (1000 over 282 − 4 s = 3.597 < 3.6; with the mean it would be 3.571)
    p99 = only(check_point(point(**rate, duration=282.0, p99_e2el_ms=4000.0)), LOAD_NOT_DRIVEN)
    assert p99.value == pytest.approx(1000 / 278.0)
    # a long latency is not a slow sender: 100 requests at 4 req/s with 10 s latency end
    # after 25 + 10 s; 100 ÷ 35 = 2.9 req/s would look undriven, 100 ÷ 25 does not
    long = point(**rate, duration=35.0, completed=100, mean_e2el_ms=10_000.0,
                 total_output_tokens=100 * ASKED)
    assert LOAD_NOT_DRIVEN not in codes(check_point(long))
    # no latency at all: a queueing server and a slow client look alike, so no verdict
    blind = point(**rate, duration=71.0, completed=200, mean_e2el_ms=None,
                  median_e2el_ms=None, total_output_tokens=200 * ASKED)
    assert LOAD_NOT_DRIVEN not in codes(check_point(blind))
    # failed requests were sent too: 960 + 40 in 270 s is driven (only the failures show)
    v = check_point(point(**rate, duration=270.0, completed=960, failed=40))
    assert codes(v) == (FAILED,)


def test_a_rate_with_a_cap_is_held_to_the_rate():
    # at 4 req/s × 1.9 s about 7.6 requests are in flight: far under the cap of 16, and
    # that is right, the cap is a ceiling
    capped = point(max_concurrency_target=16, request_rate_target=4.0, duration=250.0)
    assert check_point(capped).verdict == VALID


def test_unbounded_rate_without_a_cap_has_no_load_check():
    assert check_point(open_point(mean_e2el_ms=1.0)).verdict == VALID


def test_client_settings_stand_in_when_run_yaml_declares_no_load():
    undeclared = point(max_concurrency_target=None, request_rate_target=None,
                       max_concurrency=16, request_rate=math.inf, mean_e2el_ms=1700.0)
    assert codes(check_point(undeclared)) == (LOAD_NOT_DRIVEN,)
    # a declared rate target wins over a cap the client recorded
    declared = point(max_concurrency_target=None, request_rate_target=4.0, duration=250.0,
                     max_concurrency=256)
    assert check_point(declared).verdict == VALID


# --- counts, failures, output -----------------------------------------------------------------


def test_few_requests_for_p99():
    check = only(check_point(open_point(completed=99)), FEW_FOR_P99)
    assert check == Check(FEW_FOR_P99, FLAGGED, 99.0, 100.0, "req")
    assert check_point(open_point(completed=100)).verdict == VALID
    assert check_point(open_point(completed=99), limits=Thresholds(p99_min_requests=50)) \
        .verdict == VALID


def test_failed_share_flags_then_invalidates_above_5_percent():
    at_limit = only(check_point(point(completed=950, failed=50)), FAILED)
    assert at_limit == Check(FAILED, FLAGGED, 5.0, 5.0, "%")
    over = only(check_point(point(completed=949, failed=51)), FAILED)
    assert over.severity == INVALID
    assert over.value == pytest.approx(5.1)
    assert over.limit == pytest.approx(5.0)
    assert check_point(point(completed=949, failed=51)).verdict == INVALID


def test_short_output_below_95_percent_of_the_tokens_asked():
    # 121.5 tokens per request < 0.95 × 128 = 121.6
    check = only(check_point(point(total_output_tokens=121_500)), SHORT_OUTPUT)
    assert check.severity == INVALID
    assert check.value == pytest.approx(121.5)
    assert check.limit == pytest.approx(121.6)
    assert check.unit == "tok"
    assert check_point(point(total_output_tokens=121_700)).verdict == VALID
    # nothing asked: nothing to hold it to
    assert check_point(point(total_output_tokens=10, scenario_output_tokens=None)).verdict \
        == VALID


def test_short_run_by_duration():
    check = only(check_point(open_point(duration=59.9)), SHORT_RUN)
    assert check == Check(SHORT_RUN, FLAGGED, 59.9, 60.0, "s")
    assert check_point(open_point(duration=60.0)).verdict == VALID


def test_short_run_by_requests_per_slot():
    # 159 requests at 12 s each in 120 s: 15.9 in flight, but under 10 per slot
    check = only(check_point(point(completed=159, mean_e2el_ms=12_000.0)), SHORT_RUN)
    assert check == Check(SHORT_RUN, FLAGGED, 159.0, 160.0, "req")
    assert check_point(point(completed=160, mean_e2el_ms=12_000.0)).verdict == VALID


def test_all_failed_is_invalid_and_nothing_else_is_judged():
    dead = point(completed=0, failed=1000, total_output_tokens=0, request_throughput=0.0,
                 mean_e2el_ms=None, median_e2el_ms=None)
    v = check_point(dead, rows(steady(20)))
    assert v == Validity("vllm.chat.c16.r1", INVALID,
                         (Check(ALL_FAILED, INVALID, 1000.0, None, "req"),))
    # NaN latencies, no failed count: the per-request rows say there were requests
    failed_rows = [dict(r, error="timeout") for r in rows(steady(12))]
    nan = point(completed=0, failed=math.nan, mean_e2el_ms=math.nan,
                median_e2el_ms=math.nan, requests=math.nan, total_output_tokens=math.nan)
    assert check_point(nan, failed_rows).checks == (Check(ALL_FAILED, INVALID, 12.0, None,
                                                          "req"),)
    # nothing sent at all is not "all failed" (and has nothing to take a p99 of)
    empty = open_point(completed=0, failed=0, requests=0)
    assert codes(check_point(empty)) == (FEW_FOR_P99,)


# --- warm-up from per-request rows ------------------------------------------------------------


def test_slow_start_is_flagged_as_warmup():
    slow = rows([30.0] * 10 + steady(90))
    # rest: median 20, MAD 0.2, so 3 × 1.4826 × 0.2 ÷ √10 = 0.28 ms < 5% of 20 = 1 ms
    check = only(check_point(point(), slow), WARMUP)
    assert check.severity == FLAGGED
    assert check.value == pytest.approx(1.5)
    assert check.limit == pytest.approx(1.05)
    assert check.unit == ""
    # row order does not matter: the index is the send order
    assert check_point(point(), list(reversed(slow))).checks == (check,)
    # clients that write "" for "no error" are successes too
    assert check_point(point(), [dict(r, error="") for r in slow]).checks == (check,)
    # the same rows without the slow start
    assert check_point(point(), rows(steady(100))).verdict == VALID


def test_warmup_relative_floor():
    assert check_point(point(), rows([20.9] * 10 + steady(90))).verdict == VALID
    check = only(check_point(point(), rows([21.1] * 10 + steady(90))), WARMUP)
    assert check.value == pytest.approx(21.1 / 20)
    assert check.limit == pytest.approx(1.05)


def test_warmup_noise_floor():
    # rest jitters by ±4 ms: MAD 2, so the margin is 3 × 1.4826 × 2 ÷ √10 = 2.81 ms (> 1 ms)
    limit = 1 + 3 * 1.4826 * 2 / math.sqrt(10) / 20
    assert check_point(point(), rows([22.7] * 10 + steady(90, 4.0))).verdict == VALID
    check = only(check_point(point(), rows([23.0] * 10 + steady(90, 4.0))), WARMUP)
    assert check.value == pytest.approx(1.15)
    assert check.limit == pytest.approx(limit)


def test_warmup_uses_successful_multi_token_requests_only():
    junk = [{"point": "p", "index": i, "ttft_ms": 100.0, "e2el_ms": 90_000.0,
             "input_tokens": 512, "output_tokens": 101, "error": "timeout"} for i in range(10)]
    junk += [{"point": "p", "index": 10 + i, "ttft_ms": 100.0, "e2el_ms": 90_000.0,
              "input_tokens": 512, "output_tokens": 1, "error": None} for i in range(10)]
    clean = [dict(r, index=r["index"] + 20, error="") for r in rows(steady(100))]
    assert check_point(point(), junk + clean).verdict == VALID


def test_warmup_needs_twice_k_requests():
    # k = 5 at least: 10 usable requests are enough, 9 are not
    assert codes(check_point(point(), rows([30.0] * 5 + [20.0] * 5))) == (WARMUP,)
    assert check_point(point(), rows([30.0] * 5 + [20.0] * 4)).verdict == VALID


def test_warmup_first_group_is_the_ceiling_of_its_share():
    # 7% of 100 requests: k = 7 (0.07 × 100 is 7.000000000000001 in floats, not 8). With
    # the last 3 of the first 7 fast, the median of 7 is 30; of 8 it would be 25.
    check = only(check_point(point(), rows([30.0] * 4 + [20.0] * 96),
                             Thresholds(warmup_share=0.07)), WARMUP)
    assert check.value == pytest.approx(1.5)


# --- missing values, ordering, grouping -------------------------------------------------------


def test_nan_fields_behave_as_none():
    fields = ("failed", "request_rate_target", "scenario_output_tokens", "mean_e2el_ms",
              "request_throughput", "requests")
    with_nan = check_point(point(**dict.fromkeys(fields, math.nan)),
                           [dict(r, error=math.nan) for r in rows(steady(100))])
    with_none = check_point(point(**dict.fromkeys(fields)), rows(steady(100)))
    assert with_nan == with_none == Validity("vllm.chat.c16.r1", VALID, ())
    # a NaN latency still lets the median through; both NaN: no load check, no crash
    assert achieved_concurrency(point(mean_e2el_ms=math.nan)) == pytest.approx(1000 * 1.85 / 120)
    gone = point(mean_e2el_ms=math.nan, median_e2el_ms=math.nan, completed=math.nan,
                 total_output_tokens=math.nan)
    assert check_point(gone).verdict == VALID


def test_checks_come_in_a_fixed_order_and_the_worst_wins():
    # 90 + 10 failed at c16 in 30 s, 1 s each (3 in flight), 100 tokens of 128, slow start
    bad = point(completed=90, failed=10, duration=30.0, mean_e2el_ms=1000.0,
                total_output_tokens=9000)
    v = check_point(bad, rows([30.0] * 9 + steady(81)))
    assert codes(v) == ORDER[1:]
    assert v.verdict == INVALID
    assert [c.severity for c in v.checks] == [INVALID, INVALID, FLAGGED, INVALID, FLAGGED,
                                              FLAGGED]


def test_check_points_groups_requests_by_point():
    a, b, c = point(point="a"), point(point="b"), point(point="c")
    slow_a = rows([30.0] * 10 + steady(90), name="a")
    steady_b = rows(steady(100), name="b")
    stray = rows([99.0] * 20, name="zz")
    mixed = [r for pair in zip(slow_a, steady_b, strict=True) for r in pair] + stray
    out = check_points([a, b, c], mixed)
    assert [v.point for v in out] == ["a", "b", "c"]
    assert codes(out[0]) == (WARMUP,)
    assert out[1] == Validity("b", VALID, ())
    assert out[2] == Validity("c", VALID, ())
    assert check_points([a], None) == [Validity("a", VALID, ())]
