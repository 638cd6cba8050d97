"""Validity checks of benchmark points: each rule fires on a constructed point with the
value and limit it reports, and stays quiet just inside its threshold; a rule whose inputs
are missing is "not evaluable", never passed; saturation is a finding, not a client fault;
and the verdicts of real files (sglang rate sweep, genai-bench) are what their numbers say."""

from __future__ import annotations

import math

import pytest

from benchreport.analyses.validity import (
    ALL_FAILED,
    CANCELLED,
    CANNOT_TELL,
    DERIVED,
    FAILED,
    FEW_FOR_P90,
    FEW_FOR_P99,
    FLAGGED,
    INVALID,
    LOAD,
    LOAD_NOT_DRIVEN,
    LOAD_UNCLEAR,
    NOT_EVALUABLE,
    NOTE,
    ONE_BURST,
    ONE_WAVE,
    ORDER,
    OUTPUT_UNCLEAR,
    PASSED,
    QUEUED,
    RANGE_CLIENTS,
    RATE_SATURATED,
    RECORDED,
    SATURATED,
    SENT_ALL,
    SENT_DURATION,
    SHORT_OUTPUT,
    SHORT_RUN,
    SHORT_RUN_SLOTS,
    SLOTS_IDLE,
    VALID,
    WARMUP,
    Check,
    Thresholds,
    Validity,
    achieved_concurrency,
    check_point,
    check_points,
    expected_output,
)
from benchreport.core.verdicts import NOT_APPLICABLE, UNVERIFIED
from benchreport.ingest.clients import read_points
from benchreport.ingest.clients.sglang import CLIENT as SGLANG

from .conftest import REAL_SAMPLES, needs_samples

ASKED = 128   # output tokens the scenario asks per request


def point(**changes) -> dict:
    """A clean closed-loop point at concurrency 16: 1000 requests in 120 s, 1.9 s each,
    so Little's law gives 1000 × 1.9 ÷ 120 = 15.83 requests in flight (limit 14.19)."""
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
    """All requests at once, no cap: one wave, no load target to hold it to."""
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
    """The codes of the checks that found something."""
    return tuple(c.code for c in v.found)


def only(v: Validity, code: str) -> Check:
    assert codes(v) == (code,), v
    return v.found[0]


def rule(v: Validity, name: str) -> Check:
    return next(c for c in v.checks if c.rule == name)


# --- clean points, states and Little's law ---------------------------------------------------


def test_clean_point_is_valid_and_says_which_checks_could_not_run():
    v = check_point(point())
    assert (v.point, v.verdict, codes(v)) == ("vllm.chat.c16.r1", VALID, ())
    # every rule ran or says why not: no requests asked, no lower load to hold its wait
    # (E2E latency: it has no TTFT) to, no per-request rows
    assert [c.rule for c in v.checks] == list(ORDER[1:])
    assert [(c.rule, c.missing) for c in v.not_evaluable] == [
        (SENT_ALL, ("requests_asked",)), (QUEUED, ("lower_load",)), (WARMUP, ("rows",))]
    assert {c.rule for c in v.checks if c.severity == PASSED} == {
        FAILED, LOAD, FEW_FOR_P99, SHORT_OUTPUT, SHORT_RUN}


def test_missing_inputs_are_not_evaluable_never_passed():
    bare = {"point": "x", "completed": 500}
    v = check_point(bare)
    assert v.verdict == VALID and codes(v) == ()
    states = {c.rule: (c.severity, c.missing) for c in v.checks}
    assert states == {
        FAILED: (NOT_EVALUABLE, ("failed",)), SENT_ALL: (NOT_EVALUABLE, ("requests_asked",)),
        LOAD: (NOT_EVALUABLE, ("load_target",)), QUEUED: (NOT_EVALUABLE, ("ttft",)),
        FEW_FOR_P99: (PASSED, ()), SHORT_OUTPUT: (NOT_EVALUABLE, ("output_tokens",)),
        SHORT_RUN: (NOT_EVALUABLE, ("duration",)), WARMUP: (NOT_EVALUABLE, ("rows",))}
    assert len(v.not_evaluable) == 7
    # a TTFT but no lower load to hold it to
    assert rule(check_point(point(median_ttft_ms=300.0)), QUEUED).missing == ("lower_load",)
    # output asked unknown
    assert rule(check_point(point(scenario_output_tokens=None)), SHORT_OUTPUT).missing == \
        ("output_asked",)
    # a rate target without any latency: a short send rate cannot be judged
    blind = point(max_concurrency_target=None, request_rate_target=4.0, duration=71.0,
                  completed=200, mean_e2el_ms=None, median_e2el_ms=None)
    assert rule(check_point(blind), LOAD).missing == ("latency",)


def test_achieved_concurrency_is_littles_law():
    assert achieved_concurrency(point()) == pytest.approx(1000 * 1.9 / 120)
    # the median stands in for a missing mean
    assert achieved_concurrency(point(mean_e2el_ms=None)) == pytest.approx(1000 * 1.85 / 120)
    # no duration: the recorded throughput is completed ÷ duration
    assert achieved_concurrency(point(duration=None, request_throughput=8.0)) == \
        pytest.approx(8.0 * 1.9)
    assert achieved_concurrency(point(mean_e2el_ms=None, median_e2el_ms=None)) is None


# --- the load: closed loops ---------------------------------------------------------------------


def test_concurrency_slots_left_idle_is_invalid():
    # a client keeping 16 slots busy over 1000 requests of 1.7 s averages
    # 1700 ÷ (1700 ÷ 16 + 15/16 × 1.7) = 15.76 in flight; 1000 × 1.7 ÷ 120 = 14.17 is
    # under 0.9 × 15.76 = 14.19
    check = only(check_point(point(mean_e2el_ms=1700.0)), SLOTS_IDLE)
    assert (check.severity, check.rule, check.unit) == (INVALID, LOAD, "req")
    assert check.value == pytest.approx(1000 * 1.7 / 120)
    assert check.limit == pytest.approx(0.9 * 1700 / (1700 / 16 + 15 / 16 * 1.7))
    # 1000 × 1.72 ÷ 120 = 14.33: just inside
    inside = check_point(point(mean_e2el_ms=1720.0))
    assert inside.verdict == VALID and rule(inside, LOAD).severity == PASSED


def test_the_drain_of_the_last_requests_is_not_an_undriven_load():
    # 300 requests on 128 workers: even a perfect client averages
    # 300 ÷ (300/128 + 127/128) = 89.9 in flight, not 128; 102.6 is driven
    p = point(max_concurrency_target=128, completed=300, duration=30.0,
              mean_e2el_ms=10_260.0, requests=300)
    assert SLOTS_IDLE not in codes(check_point(p))
    slow = check_point({**p, "mean_e2el_ms": 8_000.0}).found[0]
    assert slow.code == SLOTS_IDLE
    assert slow.value == pytest.approx(80.0)
    assert slow.limit == pytest.approx(0.9 * 300 / (300 / 128 + 127 / 128))
    # the longest request (p99 here) drains alone: 64 requests of 3.3 s mean, one of 4.3 s,
    # on 16 slots in 15.1 s (genai-bench c16) average 14.1 in flight, within the limit
    waves = point(max_concurrency_target=16, completed=64, duration=15.1,
                  mean_e2el_ms=3326.0, p99_e2el_ms=4286.0, requests=64)
    load = rule(check_point(waves), LOAD)
    assert load.severity == PASSED
    assert load.limit == pytest.approx(0.9 * 64 * 3.326 / (64 * 3.326 / 16 + 15 / 16 * 4.286))


def test_one_wave_is_a_note_not_a_littles_law_failure():
    # 8 requests at concurrency 16 (or 64 at 64): all in flight at once, one burst
    few = point(completed=8, duration=100.0, mean_e2el_ms=40_000.0, requests=8)
    v = check_point(few)
    wave = rule(v, LOAD)
    assert (wave.code, wave.severity, wave.value, wave.limit) == (ONE_WAVE, NOTE, 8.0, 16.0)
    assert codes(v) == (ONE_WAVE, FEW_FOR_P90, SHORT_RUN_SLOTS)
    assert v.verdict == FLAGGED            # the note takes nothing away; the flags do
    c64 = point(max_concurrency_target=64, completed=64, duration=20.0,
                mean_e2el_ms=9_000.0, requests=64)
    assert rule(check_point(c64), LOAD).code == ONE_WAVE
    # an unbounded rate without a cap sends everything at once too
    assert rule(check_point(open_point(mean_e2el_ms=1.0)), LOAD).code == ONE_BURST
    assert check_point(open_point(mean_e2el_ms=1.0)).verdict == VALID


def test_client_settings_stand_in_when_run_yaml_declares_no_load():
    undeclared = point(max_concurrency_target=None, request_rate_target=None,
                       max_concurrency=16, request_rate=math.inf, mean_e2el_ms=1700.0)
    assert codes(check_point(undeclared)) == (SLOTS_IDLE,)
    # a declared rate target wins over a cap the client recorded
    declared = point(max_concurrency_target=None, request_rate_target=4.0, duration=250.0,
                     max_concurrency=256)
    assert check_point(declared).verdict == VALID


# --- the load: request rates, the client against the server -----------------------------------

RATE = {"max_concurrency_target": None, "request_rate_target": 4.0}


def test_a_rate_reached_passes():
    # 1000 over 279 − 1.9 s: 3.609 req/s ≥ 0.9 × 4
    v = check_point(point(**RATE, duration=279.0))
    assert v.verdict == VALID and rule(v, LOAD).value == pytest.approx(1000 / 277.1)
    # a long latency is not a slow sender: 100 requests at 4 req/s with 10 s latency end
    # after 25 + 10 s; 100 ÷ 35 = 2.9 req/s would look short, 100 ÷ 25 does not
    long = point(**RATE, duration=35.0, completed=100, mean_e2el_ms=10_000.0)
    assert rule(check_point(long), LOAD).severity == PASSED
    # failed requests were sent too: 960 + 40 in 270 s (only the failures show)
    assert codes(check_point(point(**RATE, duration=270.0, completed=960, failed=40))) == \
        (FAILED,)
    # a cap is a ceiling: 7.6 in flight under a cap of 16 is right at 4 req/s
    capped = point(max_concurrency_target=16, request_rate_target=4.0, duration=250.0)
    assert check_point(capped).verdict == VALID


def test_a_rate_not_reached_with_requests_queueing_is_saturated():
    # 1000 requests over 280 − 1.9 s: 3.596 < 3.6; TTFT 4× the lowest load's
    short = point(**RATE, duration=280.0, median_ttft_ms=400.0)
    v = check_point(short, baseline_ttft=100.0)
    assert v.verdict == SATURATED
    assert codes(v) == (RATE_SATURATED, QUEUED)
    load = rule(v, LOAD)
    assert (load.severity, load.unit) == (SATURATED, "req/s")
    # judged on the derived send rate, quoted as the file's own request throughput
    # (1000 ÷ 280 = 3.571, what the points table shows)
    assert load.value == pytest.approx(1000 / 280.0) and load.limit == pytest.approx(3.6)
    assert load.basis == RECORDED
    queued = rule(v, QUEUED)
    assert (queued.severity, queued.value, queued.limit) == (SATURATED, 4.0, 3.0)
    # without a request throughput in the file the derived send rate is quoted; the p99
    # comes off the duration when the file has it (1000 over 282 − 4 s)
    p99 = check_point(point(**RATE, duration=282.0, p99_e2el_ms=4000.0, median_ttft_ms=400.0,
                            request_throughput=None), baseline_ttft=100.0)
    assert rule(p99, LOAD).value == pytest.approx(1000 / 278.0)
    assert rule(p99, LOAD).basis == DERIVED
    derived = rule(check_point({**short, "request_throughput": None}, baseline_ttft=100.0),
                   LOAD)
    assert derived.value == pytest.approx(1000 / 278.1) and derived.basis == DERIVED
    # a recorded throughput at or above the limit is not quoted for a rate "under" it
    odd = rule(check_point({**short, "request_throughput": 3.7}, baseline_ttft=100.0), LOAD)
    assert odd.basis == DERIVED and odd.value == pytest.approx(1000 / 278.1)


def test_a_rate_not_reached_without_queueing_is_the_clients_fault():
    # TTFT 1.2× the lowest load's: nothing waited, so the requests were not sent
    v = check_point(point(**RATE, duration=280.0, median_ttft_ms=120.0), baseline_ttft=100.0)
    check = only(v, LOAD_NOT_DRIVEN)
    assert (check.severity, check.rule) == (INVALID, LOAD)
    assert v.verdict == INVALID


def test_a_rate_not_reached_that_the_files_cannot_explain_is_cannot_tell():
    short = point(**RATE, duration=280.0, median_ttft_ms=200.0)
    # TTFT 2× the lowest load's: some wait, not clearly a queue
    assert only(check_point(short, baseline_ttft=100.0), LOAD_UNCLEAR).severity == CANNOT_TELL
    # no lower load to compare with (a single point): never invalid
    v = check_point(short)
    assert v.verdict == CANNOT_TELL and codes(v) == (LOAD_UNCLEAR,)


def test_a_client_that_sent_half_its_requests_is_invalid():
    half = point(num_prompts_target=2000)
    check = only(check_point(half), SENT_ALL)
    assert (check.severity, check.value, check.limit) == (INVALID, 1000.0, 2000.0)
    assert rule(check_point(point(num_prompts_target=1000)), SENT_ALL).severity == PASSED
    # failures count as sent
    assert rule(check_point(point(completed=950, failed=50, num_prompts_target=1000)),
                SENT_ALL).severity == PASSED


def test_check_points_compares_each_series_with_its_lowest_load():
    def at(pid, rate, ttft, engine="a", duration=280.0):
        return point(point=pid, engine=engine, workload="w", max_concurrency_target=None,
                     request_rate_target=rate, duration=duration if rate > 1 else 1100.0,
                     median_ttft_ms=ttft)
    low1, low2 = at("a.r1.1", 1.0, 90.0), at("a.r1.2", 1.0, 110.0)   # baseline: 100 ms
    queued, idle = at("a.r4.1", 4.0, 500.0), at("a.r4.2", 4.0, 105.0)
    other = at("b.r4.1", 4.0, 500.0, engine="b")                      # a series of its own
    out = {v.point: v for v in check_points([low1, low2, queued, idle, other], None)}
    assert out["a.r1.1"].verdict == VALID
    assert rule(out["a.r1.1"], QUEUED).missing == ("lower_load",)
    assert out["a.r4.1"].verdict == SATURATED
    assert rule(out["a.r4.1"], QUEUED).value == pytest.approx(5.0)
    assert out["a.r4.2"].verdict == INVALID and codes(out["a.r4.2"]) == (LOAD_NOT_DRIVEN,)
    assert out["b.r4.1"].verdict == CANNOT_TELL


def test_queueing_marks_a_concurrency_point_saturated():
    lo = point(point="c1", engine="e", workload="w", max_concurrency_target=1, completed=100,
               duration=190.0, median_ttft_ms=50.0)
    hi = point(point="c64", engine="e", workload="w", median_ttft_ms=400.0)
    out = {v.point: v for v in check_points([lo, hi], None)}
    assert out["c64"].verdict == SATURATED and codes(out["c64"]) == (QUEUED,)
    assert rule(out["c64"], QUEUED).value == pytest.approx(8.0)


# --- counts, failures, output -----------------------------------------------------------------


def test_few_requests_for_p99():
    # (an open point is one wave: that note is listed too)
    v = check_point(open_point(completed=99))
    assert codes(v) == (ONE_BURST, FEW_FOR_P99)
    check = rule(v, FEW_FOR_P99)
    assert check == Check(FEW_FOR_P99, FLAGGED, 99.0, 100.0, "req")
    assert check_point(open_point(completed=100)).verdict == VALID
    # under 20 successes p90 rests on one or two requests as well: read the median
    assert rule(check_point(open_point(completed=19)), FEW_FOR_P99) == Check(
        FEW_FOR_P90, FLAGGED, 19.0, 100.0, "req", FEW_FOR_P99)
    assert rule(check_point(open_point(completed=20)), FEW_FOR_P99).code == FEW_FOR_P99
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
    # no failed count: the per-request rows' errors stand in; without them, not evaluable
    errors = [dict(r, error="timeout" if r["index"] < 6 else None) for r in rows(steady(100))]
    from_rows = rule(check_point(point(failed=None, completed=94), errors), FAILED)
    assert from_rows.value == pytest.approx(6 / 100 * 100) and from_rows.severity == INVALID
    assert rule(check_point(point(failed=None)), FAILED).severity == NOT_EVALUABLE


def test_cancellations_asked_are_a_note_not_failures():
    # 1000 sent, 100 of them failed: 10% failures make the point invalid ...
    failing = check_point(point(completed=900, failed=100))
    assert failing.verdict == INVALID and rule(failing, FAILED).value == pytest.approx(10.0)
    # ... but when the client was asked to cancel 10% and those 100 were its cancellations,
    # they are a note (100 of 1000, at 10%), and no failure is left
    asked = check_point(point(completed=900, failed=100, cancelled=100,
                              cancellation_rate=10.0))
    assert asked.verdict == VALID
    assert rule(asked, FAILED) == Check(FAILED, PASSED, 0.0, 5.0, "%")
    assert rule(asked, CANCELLED) == Check(CANCELLED, NOTE, 100.0, 1000.0, "count",
                                           asked=10.0)
    assert codes(asked) == (CANCELLED,)
    # other failures still count, as a share of the requests not cancelled: 20 of 920
    mixed = check_point(point(completed=900, failed=100, cancelled=80,
                              cancellation_rate=8.0))
    assert rule(mixed, FAILED).severity == FLAGGED
    assert rule(mixed, FAILED).value == pytest.approx(20 / 920 * 100)
    assert rule(mixed, CANCELLED).value == 80.0
    # a cancelled count without a cancellation rate asked is not an excuse for failures
    unasked = check_point(point(completed=900, failed=100, cancelled=100))
    assert unasked.verdict == INVALID and CANCELLED not in [c.rule for c in unasked.checks]
    # never more cancellations than failures
    over = check_point(point(completed=990, failed=10, cancelled=50, cancellation_rate=5.0))
    assert rule(over, CANCELLED).value == 10.0


def test_a_point_no_check_could_run_is_unverified_not_valid():
    bare = check_point({"point": "p"})
    assert all(c.severity == NOT_EVALUABLE for c in bare.checks)
    assert bare.verdict == UNVERIFIED
    # a duration-bound run with nothing else: not applicable and not evaluable, unverified
    assert check_point({"point": "p", "duration_asked": 60.0}).verdict == UNVERIFIED
    # one check that ran is enough to be valid (what it found decides)
    assert check_point({"point": "p", "completed": 200, "failed": 0}).verdict == VALID
    # and the unverified verdict does not outrank a finding
    assert check_point({"point": "p", "completed": 10, "failed": 0}).verdict == FLAGGED


def test_a_duration_bound_run_asked_no_request_count():
    # run.yaml asks no count, the client ran for 120 s: "sent all" is not applicable
    timed = check_point(point(duration_asked=120.0))
    check = rule(timed, SENT_ALL)
    assert (check.code, check.severity, check.value, check.unit) == (
        SENT_DURATION, NOT_APPLICABLE, 120.0, "s")
    assert check not in timed.found and check not in timed.not_evaluable
    assert timed.verdict == VALID
    # even where run.yaml states a count (a duration bound the run, not the count)
    assert rule(check_point(point(duration_asked=120.0, num_prompts_target=5000)),
                SENT_ALL).severity == NOT_APPLICABLE
    # the file's own request count stands in for run.yaml's, and is held to
    counted = check_point(point(requests_asked=2000))
    assert rule(counted, SENT_ALL) == Check(SENT_ALL, INVALID, 1000.0, 2000.0, "req")
    assert rule(check_point(point(requests_asked=1000)), SENT_ALL).severity == PASSED
    # a count asked beside a duration: the count is checked
    assert rule(check_point(point(requests_asked=2000, duration_asked=120.0)),
                SENT_ALL).severity == INVALID


def test_short_output_below_95_percent_of_the_tokens_asked():
    # 121.5 tokens per request < 0.95 × 128 = 121.6
    check = only(check_point(point(total_output_tokens=121_500)), SHORT_OUTPUT)
    assert check.severity == INVALID
    assert check.value == pytest.approx(121.5)
    assert check.limit == pytest.approx(121.6)
    assert check.unit == "tok"
    assert check_point(point(total_output_tokens=121_700)).verdict == VALID
    # the per-request rows' mean stands in for missing totals
    per_request = rows(steady(100), tokens=101)
    got = rule(check_point(point(total_output_tokens=None), per_request),
               SHORT_OUTPUT)
    assert got.value == pytest.approx(101.0) and got.severity == INVALID


def test_lengths_drawn_from_a_range_are_held_to_the_mean_asked():
    assert RANGE_CLIENTS == (SGLANG,)          # the id the sglang reader gives its points
    # sglang random_range_ratio r: lengths uniform on [max(⌊r·L⌋, 1), L]
    assert expected_output(1024, 0.0) == (512.5, 1.0)
    assert expected_output(128, 0.5) == (96.0, 64.0)
    assert expected_output(128, 1.0) == (128, 128)
    assert expected_output(128, None) == (128, 128)
    drawn = {"client": SGLANG, "scenario_output_tokens": 1024.0, "completed": 973,
             "scenario_range_ratio": 0.0}
    # 534 of 1024 per request is what r = 0 asks (a mean of 512.5), not "short"
    v = check_point(point(**drawn, total_output_tokens=534 * 973))
    assert rule(v, SHORT_OUTPUT).severity == PASSED
    limit = 0.95 * 512.5 - 3 * 1023 / math.sqrt(12 * 973)
    assert rule(v, SHORT_OUTPUT).limit == pytest.approx(limit)
    # well under that mean is short all the same
    assert rule(check_point(point(**drawn, total_output_tokens=300 * 973)),
                SHORT_OUTPUT).severity == INVALID
    # r unknown: a mean under the maximum cannot be told from a drawn range
    unknown = {**drawn, "scenario_range_ratio": None}
    check = rule(check_point(point(**unknown, total_output_tokens=534 * 973)), SHORT_OUTPUT)
    assert (check.code, check.severity, check.limit) == (OUTPUT_UNCLEAR, CANNOT_TELL, 1024.0)
    # a client with fixed lengths (vLLM's random range is centred on the length asked)
    fixed = {**unknown, "client": "vllm-bench-serve"}
    assert rule(check_point(point(**fixed, total_output_tokens=534 * 973)),
                SHORT_OUTPUT).severity == INVALID


def test_short_run_by_duration():
    check = rule(check_point(open_point(duration=59.9)), SHORT_RUN)
    assert check == Check(SHORT_RUN, FLAGGED, 59.9, 60.0, "s")
    assert check_point(open_point(duration=60.0)).verdict == VALID


def test_short_run_by_requests_per_slot():
    # 159 requests at 12 s each in 120 s: 15.9 in flight, but under 10 per slot
    check = only(check_point(point(completed=159, mean_e2el_ms=12_000.0)), SHORT_RUN_SLOTS)
    assert check == Check(SHORT_RUN_SLOTS, FLAGGED, 159.0, 160.0, "req", SHORT_RUN)
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
    v = check_point(empty)
    assert codes(v) == (FEW_FOR_P90,)
    assert rule(v, LOAD).missing == ("completed",)


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
    assert check_point(point(), list(reversed(slow))).found == (check,)
    # clients that write "" for "no error" are successes too
    assert check_point(point(), [dict(r, error="") for r in slow]).found == (check,)
    # the same rows without the slow start
    steady_v = check_point(point(), rows(steady(100)))
    assert steady_v.verdict == VALID and rule(steady_v, WARMUP).severity == PASSED


def test_warmup_is_not_judged_in_one_wave():
    # 100 requests at concurrency 100 were all in flight at once: the first in send order
    # decode beside the rest, so a slow start there is not a server warming up
    slow = rows([30.0] * 10 + steady(90))
    wave = point(max_concurrency_target=100, completed=100, requests=100)
    check = rule(check_point(wave, slow), WARMUP)
    assert (check.severity, check.missing) == (NOT_EVALUABLE, ("later_waves",))
    # with more requests than slots the same rows are a warm-up
    assert rule(check_point(point(), slow), WARMUP).severity == FLAGGED


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
    assert codes(check_point(point(failed=None), junk + clean)) == (FAILED,)


def test_warmup_needs_twice_k_requests():
    # k = 5 at least: 10 usable requests are enough, 9 are not (then: not evaluable)
    assert WARMUP in codes(check_point(point(), rows([30.0] * 5 + [20.0] * 5)))
    few = rule(check_point(point(), rows([30.0] * 5 + [20.0] * 4)), WARMUP)
    assert (few.severity, few.value, few.limit, few.missing) == \
        (NOT_EVALUABLE, 9.0, 10.0, ("usable_rows",))


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
    assert with_nan == with_none
    assert with_nan.verdict == VALID and codes(with_nan) == ()
    # a NaN latency still lets the median through; both NaN: no load verdict, no crash
    assert achieved_concurrency(point(mean_e2el_ms=math.nan)) == pytest.approx(1000 * 1.85 / 120)
    gone = point(mean_e2el_ms=math.nan, median_e2el_ms=math.nan, completed=math.nan,
                 total_output_tokens=math.nan)
    v = check_point(gone)
    assert v.verdict == VALID and rule(v, LOAD).severity == NOT_EVALUABLE


def test_checks_come_in_a_fixed_order_and_the_worst_wins():
    # 90 + 10 failed at c16 in 30 s, 1 s each (3 in flight), 100 tokens of 128, slow start
    bad = point(completed=90, failed=10, duration=30.0, mean_e2el_ms=1000.0,
                total_output_tokens=9000)
    v = check_point(bad, rows([30.0] * 9 + steady(81)))
    assert [c.rule for c in v.checks] == list(ORDER[1:])
    assert codes(v) == (FAILED, SLOTS_IDLE, FEW_FOR_P99, SHORT_OUTPUT, SHORT_RUN, WARMUP)
    assert v.verdict == INVALID
    assert [c.severity for c in v.found] == [INVALID, INVALID, FLAGGED, INVALID, FLAGGED,
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
    assert out[1].verdict == VALID and rule(out[1], WARMUP).severity == PASSED
    assert out[2].verdict == VALID and rule(out[2], WARMUP).missing == ("rows",)
    assert [v.verdict for v in check_points([a], None)] == [VALID]


# --- real files -------------------------------------------------------------------------------


def _rows_of(folder: str, pattern: str = "*") -> list[dict]:
    """The points of real result files as rows of the points table (no run.yaml: the
    clients' own settings are the load)."""
    out = []
    for path in sorted((REAL_SAMPLES / folder).glob(pattern)):
        for i, p in enumerate(read_points(path.read_bytes(), path.name)):
            out.append({**p.fields, "point": f"{path.name}:{i}", "engine": "e",
                        "workload": "w", "variant": "", "client": p.client,
                        "scenario_output_tokens": p.scenario.get("output_tokens"),
                        "scenario_range_ratio": p.scenario.get("random_range_ratio")})
    return out


@needs_samples
def test_the_sglang_rate_sweep_saturated_as_its_end_to_end_latency_shows():
    """Rates 2, 100 and 1000 with 100 prompts each: at 100 and 1000 req/s about 4 req/s
    went through. The responses were not streamed (the reader leaves the file's "TTFT", the
    whole response time, out), so the queue is read from the median E2E latency instead,
    4.7× to 10.6× the rate-2 points' mean (941.5 and 651.9 ms): saturated, never invalid,
    and the check says it rests on E2E latency."""
    points = _rows_of("sglang-multi")
    out = check_points(points, None)
    rates = [p["request_rate"] for p in points]
    assert rates == [2.0, 2.0, 100.0, 100.0, 1000.0, 1000.0]
    assert all(p.get("median_ttft_ms") is None for p in points)
    verdicts = [v.verdict for v in out]
    assert verdicts[2:] == [SATURATED] * 4
    assert INVALID not in verdicts and CANNOT_TELL not in verdicts
    baseline = (941.5280600078404 + 651.8575845402665) / 2
    first = rule(out[2], QUEUED)
    assert first.code == "queued_e2e"
    assert first.value == pytest.approx(3716.4609889732674 / baseline)
    load = rule(out[2], LOAD)
    assert load.code == RATE_SATURATED
    # judged on 100 requests over 22.74 − 5.16 s = 5.69 req/s (the mean latency: the file
    # has no p99), quoted as the file's own request_throughput, 4.40 req/s
    assert load.value == points[2]["request_throughput"] == pytest.approx(4.397665123901503)
    assert load.basis == RECORDED and load.value < 100 / (22.739339440944605 - 5.1584724281542)
    # the rate-2 points reached their rate: 100 over 55.87 − 3.00 s = 1.89 ≥ 1.8
    assert [rule(v, LOAD).severity for v in out[:2]] == [PASSED, PASSED]
    # output: lengths drawn with random_range_ratio 0 around a mean of 64.5 of 128; the
    # file's 254.7 per request is not short
    assert all(rule(v, SHORT_OUTPUT).severity == PASSED for v in out)


@needs_samples
def test_genai_bench_four_waves_at_c16_are_not_a_littles_law_failure():
    points = _rows_of("genai-bench", "*num_concurrency*")
    out = {p["max_concurrency"]: v for p, v in zip(points, check_points(points, None),
                                                    strict=True)}
    c16 = rule(out[16], LOAD)
    # 64 requests on 16 slots in 15.1 s: 14.1 in flight by Little's law
    assert c16.severity == PASSED
    assert c16.value == pytest.approx(64 * 3326.0328306641895 / 1000 / 15.095331992022693)
    assert out[16].verdict != INVALID and out[2].verdict != INVALID
    # c16's median TTFT is 1.6× c2's: no queue
    assert rule(out[16], QUEUED).severity == PASSED
    assert rule(out[16], QUEUED).value == pytest.approx(307.2504810988903 / 189.8169293999672)
    # 64 and 65 requests: too few for a p99, said
    assert rule(out[16], FEW_FOR_P99).severity == FLAGGED


@needs_samples
def test_the_aiperf_cancellations_asked_are_not_failures():
    """AIPerf asked to cancel 10% of 100 requests (request_cancellation_rate 10); its 11
    errors are all HTTP 499 RequestCancellationError: a note, not a failed share."""
    (p,) = _rows_of("aiperf", "aiperf-early*_aiperf.json")
    (v,) = check_points([p], None)
    assert (p["completed"], p["failed"], p["cancelled"], p["cancellation_rate"]) == (
        89, 11, 11, 10.0)
    assert rule(v, FAILED).severity == PASSED
    assert rule(v, CANCELLED) == Check(CANCELLED, NOTE, 11.0, 100.0, "count", asked=10.0)
    # its loadgen.request_count of 100 was all sent
    assert rule(v, SENT_ALL) == Check(SENT_ALL, PASSED, 100.0, 100.0, "req")
    # left: a p99 of 89 requests and a 9.3 s run, a warning, not invalid
    assert v.verdict == FLAGGED


@needs_samples
def test_genai_perf_files_without_counts_are_unverified():
    """GenAI-Perf of 2024 writes no counts and no duration: no check can run."""
    points = _rows_of("aiperf", "genai-perf*")
    assert points
    for v in check_points(points, None):
        assert all(c.severity == NOT_EVALUABLE for c in v.checks)
        assert v.verdict == UNVERIFIED


@needs_samples
def test_the_requests_asked_come_from_the_file_when_run_yaml_does_not_say():
    """vLLM's result files record num_prompts (200 for the QPS sweep): the requests-sent
    check runs on it instead of lacking the number asked."""
    points = _rows_of("vllm-sweep", "vllm-ascend*")
    assert [p["requests_asked"] for p in points] == [200] * 4
    for v in check_points(points, None):
        sent = rule(v, "sent_all")
        assert (sent.severity, sent.value, sent.limit) == (PASSED, 200.0, 200.0)
