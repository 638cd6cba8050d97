"""Validity of benchmark points, in the spirit of MLPerf's submission checker.

A point is one benchmark run of one engine at one load (a concurrency cap or a request rate)
and one repeat: a row of the ``points`` table (see ``core.tables``), optionally with its
per-request rows. Every rule below runs on every point (single-point runs included) and
returns one ``Check`` with a state:

- ``passed``: it ran and found nothing;
- ``not evaluable``: an input it needs is missing (``missing`` names it); never counted as
  passed, and the point's verdict carries how many checks could not run;
- ``note``: something the reader should know that takes nothing away (a one-wave run,
  requests cancelled as asked);
- ``not applicable``: the question does not arise for the point (no request count was
  asked of a run bound by a duration); neither passed nor lacking an input;
- ``flagged``: the figure measures what its label says, with a caveat the report shows;
- ``saturated``: the server could not keep up with the load asked. A finding, not a fault:
  the point stays on the curves, marked, and is where the knee and the capacity come from;
- ``cannot tell``: the load asked was not reached and the files cannot tell a client that
  fell behind from a server that queued;
- ``invalid``: the figure does not measure what its label says (only a real client failure
  or a broken sample: all requests failed, too many failed, requests never sent, a client
  that left the server idle, output shorter than asked).

A point's verdict is the worst state of its checks in the order valid < flagged <
saturated < cannot tell < invalid (passed, notes, not evaluable and not applicable leave
it valid), except that a point none of whose checks could run (every one not evaluable or
not applicable) is ``unverified``: nothing confirms it and nothing faults it, so it stays
on the curves like a valid point, and is counted apart. Checks
carry short codes; the report's label catalogues hold the words.

Rules, in the order they are reported:

``all_failed`` (invalid)
    completed == 0 while requests failed or per-request rows exist. A point where every
    request failed is reported as failed, never as fast (it has no latency at all). It is
    the only check of such a point: every other rule judges measurements it does not have.
``failed`` (flagged; invalid above ``failed_invalid_share``)
    failed > 0 (from the file's count, else the per-request rows' errors), less the
    cancellations asked (below). value: those failures ÷ (completed + those failures) in
    %, limit: ``failed_invalid_share`` in %. Failures are rarely random (time-outs are the
    slow requests), so the survivors' latencies are biased low.
``cancelled`` (a note; only where a cancellation rate was asked)
    A client asked to cancel a share of its requests (AIPerf ``--request-cancellation-rate``,
    the point's ``cancellation_rate`` in %) counts them among its failed requests; the
    point's ``cancelled`` says how many. They are the setting, not a fault: value: how
    many, limit: of how many sent (completed + failed), asked: the rate.
``sent_all`` (invalid)
    completed + failed under ``sent_share`` × the requests asked (run.yaml's
    ``num_prompts``, the point's ``num_prompts_target``, else the count the file says was
    asked, ``requests_asked``): the client stopped early. A run bound by a duration
    (``duration_asked``) with no request count asked: ``sent_duration`` (not applicable).
``load`` (one code per outcome)
    A finite request-rate target: the send rate is (completed + failed) ÷ (duration − the
    highest E2E latency statistic the file holds, the time after the last send; at most
    half the duration). At or above ``load_share`` × the target: passed. Below it, the
    requests' wait decides: median TTFT (else mean; where the file holds no TTFT, the
    median or mean E2E latency, which also holds decode time) at least ``queue_ratio`` ×
    the lowest load's, on the same basis, of the same series (engine, workload, variant):
    ``rate_saturated`` (saturated: requests were sent and queued; the server could not
    keep up). At most
    ``no_queue_ratio`` × it: ``load_not_driven`` (invalid: the server was not queueing,
    so the requests were not sent at that rate). In between, or with no lower load or no
    TTFT to compare: ``load_unclear`` (cannot tell). These outcomes are judged on the
    derived send rate but quote the file's own ``request_throughput`` where it has one
    under the limit (basis ``recorded``; else the derived rate, basis ``derived``), so the
    row shows the figure the points table shows. With no latency at all, a send rate
    under the target cannot be told from a queue: not evaluable.
    A concurrency target: with n = completed + failed ≤ the target, every request was in
    flight at once: ``one_wave`` (a note: no slot was ever refilled, so whether the client
    kept its slots busy cannot be checked).
    Otherwise the achieved concurrency (Little's law, ``achieved_concurrency``: completed
    × mean E2E ÷ duration) is held to ``load_share`` × what a client that keeps every slot
    busy averages even when its last requests drain: with work W = n × mean latency on c
    slots, list scheduling ends by W ÷ c + (1 − 1 ÷ c) × the longest request (the highest
    latency statistic the file holds stands in for it), so it averages W ÷ that. Below:
    ``slots_idle`` (invalid: in a closed loop a slow server keeps its slots busy, so
    idle slots are the client's). An unbounded rate with no cap sends everything at once:
    ``one_burst`` (a note). When a finite rate and a cap are both set, the rate drives the load and
    the cap is a ceiling, so only the rate is held to its target.
``queued`` (saturated)
    median TTFT (else mean) at least ``queue_ratio`` × the lowest load's of the same
    series: requests waited for the server (value: the ratio). Not evaluable at the lowest
    load itself, in a single-point series, or without TTFT.
``few_for_p99`` (flagged)
    completed < ``p99_min_requests``: p99 then rests on one or two requests (read p90);
    under ``p90_min_requests`` p90 does too: ``few_for_p90`` (read the median).
``short_output`` (invalid; cannot tell)
    mean output tokens per completed request (total_output_tokens ÷ completed, else the
    per-request rows' mean) held against the mean the client was asked to draw: with a
    range ratio r (sglang ``random_range_ratio``: lengths uniform on the integers
    [max(⌊r·L⌋, 1), L], L the maximum asked), (max(⌊r·L⌋, 1) + L) ÷ 2; else L. Below
    ``output_share`` × that mean, less ``output_z`` standard errors of a uniform draw's
    mean ((L − low) ÷ √(12 n)): invalid (the engine did less decode work than the label
    says). With r unknown for a client whose random lengths are drawn from such a range
    (sglang.bench_serving), a mean under L cannot be told from a drawn range: cannot tell.
``short_run`` (flagged)
    duration < ``min_duration_s`` (value/limit in s), else completed <
    ``min_requests_per_slot`` × the concurrency target: ``short_run_slots`` (value/limit in
    req). One check per point; the duration is reported when both hold.
``warmup`` (flagged, per-request rows only)
    From successful requests with at least 2 output tokens, the decode time per token
    tpot = (e2el − ttft) ÷ (output_tokens − 1), in send order. (In a closed loop the first
    batch's TTFT follows its queue position, so TTFT would flag every run.) The median of
    the first k = max(``warmup_min_k``, ceil(``warmup_share`` × n)) requests is held
    against the median of the rest; flagged when it exceeds it by more than ``warmup_z``
    robust standard errors of the rest (1.4826 × MAD ÷ √k) and by more than
    ``warmup_min_rel`` of it. value: first median ÷ rest median, limit: that ratio at the
    threshold. Not evaluable without per-request rows, with fewer than 2k usable ones, or
    in a one-wave run (every request in flight at once: the first in send order decode
    beside the rest, so no later, warmed-up requests exist to compare them with).

Where run.yaml declares neither a concurrency nor a rate target, the client's own recorded
``max_concurrency`` and ``request_rate`` stand in for them. NaN is treated as missing.
Standard library only: pure functions of plain dicts.
"""

from __future__ import annotations

import math
import numbers
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.verdicts import (
    CANNOT_TELL,
    FLAGGED,
    INVALID,
    NOT_APPLICABLE,
    NOT_EVALUABLE,
    NOTE,
    PASSED,
    SATURATED,
    UNVERIFIED,
    VALID,
)

# rules (the ``rule`` of a Check; also its code when it passed or could not run)
ALL_FAILED = "all_failed"
FAILED = "failed"
CANCELLED = "cancelled"
SENT_ALL = "sent_all"
LOAD = "load"
QUEUED = "queued"
QUEUED_E2E = "queued_e2e"     # the same finding, read from E2E latency (no TTFT measured)
FEW_FOR_P99 = "few_for_p99"
SHORT_OUTPUT = "short_output"
SHORT_RUN = "short_run"
WARMUP = "warmup"
# the outcomes of the load rule that are worth a sentence, and of short_output
LOAD_NOT_DRIVEN = "load_not_driven"
SLOTS_IDLE = "slots_idle"
RATE_SATURATED = "rate_saturated"
LOAD_UNCLEAR = "load_unclear"
ONE_WAVE = "one_wave"
ONE_BURST = "one_burst"
FEW_FOR_P90 = "few_for_p90"
SHORT_RUN_SLOTS = "short_run_slots"
OUTPUT_UNCLEAR = "output_unclear"
SENT_DURATION = "sent_duration"
# the basis of a rate an outcome quotes (catalogue: validity.basis.<basis>)
RECORDED, DERIVED = "recorded", "derived"
# the order checks are reported in (and the rules are run in)
ORDER = (ALL_FAILED, FAILED, SENT_ALL, LOAD, QUEUED, FEW_FOR_P99, SHORT_OUTPUT, SHORT_RUN,
         WARMUP)
# ... and the one check made only where its setting was asked, reported after FAILED
ONLY_WHERE_ASKED = (CANCELLED,)
# what a check that could not run was missing (catalogue: validity.missing.<code>)
MISSING = ("completed", "failed", "requests_asked", "duration", "latency", "load_target",
           "ttft", "lower_load", "output_tokens", "output_asked", "rows", "usable_rows",
           "later_waves")
_RANK = {VALID: 0, UNVERIFIED: 0, PASSED: 0, NOTE: 0, NOT_EVALUABLE: 0, NOT_APPLICABLE: 0,
         FLAGGED: 1, SATURATED: 2,
         CANNOT_TELL: 3, INVALID: 4}
# 1.4826 × MAD estimates the standard deviation of normal data, robust to outliers
_MAD_TO_SD = 1.4826
# clients whose random lengths are drawn from a range below the length asked, by their id in
# the points table (ingest.clients.sglang.CLIENT; analyses do not import the readers)
RANGE_CLIENTS = ("sglang-bench-serving",)
_LATENCY_HIGH = ("p99_e2el_ms", "p90_e2el_ms", "mean_e2el_ms", "median_e2el_ms")


@dataclass(frozen=True)
class Thresholds:
    """The limits each rule holds a point against."""

    # A driver that keeps fewer than 90% of its slots busy (or sends under 90% of its rate)
    # measured a lighter load than its label; 10% leaves room for ramp-up and drain.
    load_share: float = 0.90
    # A client that sent under 90% of the requests asked stopped early, not by rounding.
    sent_share: float = 0.90
    # Queueing: a median TTFT three times the lowest load's is far beyond what batching the
    # same prompts costs (a prefill batch of a few requests); requests waited for the server.
    queue_ratio: float = 3.0
    # ... and within 1.5 times it nothing waited: a rate not reached is then the client's.
    no_queue_ratio: float = 1.5
    # p99 of fewer than 100 values is interpolated between the largest one or two: it is
    # one request's outcome, not a percentile (p90 still rests on ten).
    p99_min_requests: int = 100
    # ... and under 20 values p90 rests on one or two as well: only the median is read.
    p90_min_requests: int = 20
    # Any failure is shown; above 5% the survivors are a selected sample (failures tend to
    # be the slow requests), so latency and throughput are no longer the load's.
    failed_invalid_share: float = 0.05
    # Requests that stop well short of the tokens asked (EOS not ignored, length caps) do
    # less decode work; 5% leaves room for re-tokenisation and stop-token accounting.
    output_share: float = 0.95
    # lengths drawn from a range: a sample mean 3 standard errors low is not bad luck
    output_z: float = 3.0
    # Under a minute, start-up effects (caches, compilation, the first batches) weigh on
    # the averages and few scheduler cycles are sampled.
    min_duration_s: float = 60.0
    # Filling and draining the slots each take about one request's time; with 10 requests
    # per slot they are about a tenth of the run, not most of it.
    min_requests_per_slot: int = 10
    # The first 10% of requests (at least warmup_min_k) against the rest: enough for a
    # median, early enough to catch caches and graphs still warming.
    warmup_share: float = 0.10
    warmup_min_k: int = 5
    # 3 robust standard errors: about 1 false alarm in 700 under normal noise.
    warmup_z: float = 3.0
    # With very steady TPOT a tiny difference is "significant"; under 5% it changes no
    # comparison the report makes.
    warmup_min_rel: float = 0.05


@dataclass(frozen=True)
class Check:
    code: str                # the outcome's code (the rule's own when passed / not evaluable)
    severity: str            # PASSED, NOT_EVALUABLE, NOTE, FLAGGED, SATURATED, CANNOT_TELL
    #                          or INVALID
    value: float | None      # what was measured (e.g. achieved concurrency, failed share)
    limit: float | None      # what it was held against
    unit: str                # "", "req", "s", "%", "req/s", "tok", "x" ... of value and limit
    rule: str = ""           # the rule that made it (defaults to the code)
    missing: tuple[str, ...] = ()   # what a check that could not run lacked (MISSING)
    asked: float | None = None      # a setting the outcome quotes (the cancellation rate, %)
    basis: str = ""                 # what value is: RECORDED (the file's own figure) or
    #                                 DERIVED (computed here from the file's counts)

    def __post_init__(self) -> None:
        if not self.rule:
            object.__setattr__(self, "rule", self.code)


@dataclass(frozen=True)
class Validity:
    point: str
    verdict: str             # VALID, UNVERIFIED, FLAGGED, SATURATED, CANNOT_TELL or INVALID
    checks: tuple[Check, ...]   # every rule's outcome, in ORDER

    @property
    def found(self) -> tuple[Check, ...]:
        """The checks that found something (notes included), in order."""
        return tuple(c for c in self.checks
                     if c.severity not in (PASSED, NOT_EVALUABLE, NOT_APPLICABLE))

    @property
    def not_evaluable(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.severity == NOT_EVALUABLE)


def _num(value: Any) -> float | None:
    """A number as float, or None for missing, NaN and anything not a number (bools and
    text included: a table column holding them is broken, not a count)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    out = float(value)
    return None if math.isnan(out) else out


def _passed(rule: str, value: float | None = None, limit: float | None = None,
            unit: str = "") -> Check:
    return Check(rule, PASSED, value, limit, unit, rule)


def _cannot_run(rule: str, *missing: str) -> Check:
    return Check(rule, NOT_EVALUABLE, None, None, "", rule, tuple(missing))


def _attempted(point: Mapping[str, Any]) -> float | None:
    """completed + failed (a missing failed count as 0); None when completed is missing."""
    completed = _num(point.get("completed"))
    if completed is None:
        return None
    return completed + (_num(point.get("failed")) or 0.0)


def _targets(point: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(concurrency target, rate target): run.yaml's, else the client's own settings."""
    conc = _num(point.get("max_concurrency_target"))
    rate = _num(point.get("request_rate_target"))
    if conc is None and rate is None:
        # run.yaml declared no load: what the client was told to do is the load
        conc = _num(point.get("max_concurrency"))
        rate = _num(point.get("request_rate"))
    if conc is not None and conc <= 0:
        conc = None
    return conc, rate


def load_value(point: Mapping[str, Any]) -> float | None:
    """The numeric load of a point, to order the loads of a series: the finite rate target
    when there is one (the rate drives the load), else the concurrency target, else None
    (an unbounded rate with no cap: the heaviest load)."""
    conc, rate = _targets(point)
    if rate is not None and math.isfinite(rate) and rate > 0:
        return rate
    return conc if conc is not None else math.inf


def achieved_concurrency(point: Mapping[str, Any]) -> float | None:
    """Little's law: completed × mean E2E latency (s) ÷ duration (median when mean missing).

    Without a duration, the recorded request throughput (completed ÷ duration) stands in.
    None when any input is missing.
    """
    latency_ms = _num(point.get("mean_e2el_ms"))
    if latency_ms is None:
        latency_ms = _num(point.get("median_e2el_ms"))
    if latency_ms is None:
        return None
    completed = _num(point.get("completed"))
    duration = _num(point.get("duration"))
    if completed is not None and duration is not None and duration > 0:
        return completed * latency_ms / 1000.0 / duration
    throughput = _num(point.get("request_throughput"))
    if throughput is not None:
        return throughput * latency_ms / 1000.0
    return None


def _highest_latency_s(point: Mapping[str, Any]) -> float | None:
    """The highest E2E latency statistic the file holds (p99, else p90, mean, median), s."""
    for key in _LATENCY_HIGH:
        latency_ms = _num(point.get(key))
        if latency_ms is not None:
            return latency_ms / 1000.0
    return None


def _achieved_rate(point: Mapping[str, Any]) -> float | None:
    """Requests sent per second: (completed + failed) ÷ the span they were sent over, or
    None when that span cannot be told. The duration also holds the time the last
    requests took after the last send; under load those are the slowest, so the highest
    latency statistic the file holds is taken off (up to half the duration)."""
    attempted = _attempted(point)
    duration = _num(point.get("duration"))
    latency = _highest_latency_s(point)
    if attempted is None or duration is None or duration <= 0 or latency is None:
        return None
    return attempted / (duration - min(latency, duration / 2))


def ttft_of(point: Mapping[str, Any]) -> float | None:
    """The TTFT the queue rules compare: the median, else the mean (ms)."""
    for key in ("median_ttft_ms", "mean_ttft_ms"):
        value = _num(point.get(key))
        if value is not None and value > 0:
            return value
    return None


def wait_of(point: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """(ms, basis) of the latency the queue rules compare: the TTFT (``ttft_of``), else,
    where the file holds none (responses not streamed), the median (else mean) end-to-end
    latency, which also holds the decode time, so its growth reads queueing less cleanly."""
    ttft = ttft_of(point)
    if ttft is not None:
        return ttft, "ttft"
    for key in ("median_e2el_ms", "mean_e2el_ms"):
        value = _num(point.get(key))
        if value is not None and value > 0:
            return value, "e2el"
    return None, None


def queue_ratio(point: Mapping[str, Any], baseline: float | None) -> float | None:
    """The point's wait (``wait_of``) ÷ the lowest load's on the same basis (None when
    either is missing)."""
    wait, _ = wait_of(point)
    if wait is None or baseline is None or baseline <= 0:
        return None
    return wait / baseline


# --- the rules: each returns one Check ------------------------------------------------------


def _all_failed(point: Mapping[str, Any], rows: list[dict] | None) -> Check | None:
    completed = _num(point.get("completed"))
    failed = _num(point.get("failed")) or 0.0
    declared = _num(point.get("requests")) or 0.0
    if completed != 0 or not (failed > 0 or declared > 0 or rows):
        return None
    # value: how many requests there were (all of them failed)
    count = failed if failed > 0 else float(len(rows) if rows else declared)
    return Check(ALL_FAILED, INVALID, count, None, "req")


def _failed_count(point: Mapping[str, Any], rows: list[dict] | None) -> float | None:
    failed = _num(point.get("failed"))
    if failed is None and rows:
        failed = float(sum(not _succeeded(r) for r in rows))
    return failed


def cancelled_count(point: Mapping[str, Any]) -> float:
    """The failed requests that were cancellations the client was asked to make (a
    cancellation rate set): never more than the failed count, 0 without one."""
    rate = _num(point.get("cancellation_rate"))
    cancelled = _num(point.get("cancelled"))
    if rate is None or rate <= 0 or cancelled is None or cancelled <= 0:
        return 0.0
    return min(cancelled, _num(point.get("failed")) or 0.0)


def _cancelled(point: Mapping[str, Any]) -> Check | None:
    """A note of the requests cancelled as asked (value: how many, limit: of how many
    sent, asked: the cancellation rate in %); None when no cancellation was asked."""
    rate = _num(point.get("cancellation_rate"))
    if rate is None or rate <= 0 or _num(point.get("cancelled")) is None:
        return None
    return Check(CANCELLED, NOTE, cancelled_count(point), _attempted(point), "count",
                 asked=rate)


def _failed(point: Mapping[str, Any], rows: list[dict] | None, limits: Thresholds) -> Check:
    """Failures other than the cancellations asked, as a share of the requests that were
    not cancelled."""
    failed = _failed_count(point, rows)
    completed = _num(point.get("completed"))
    if failed is not None:
        failed -= cancelled_count(point)
    limit = limits.failed_invalid_share * 100.0
    if failed is None:
        return _cannot_run(FAILED, "failed")
    if failed <= 0:
        return _passed(FAILED, 0.0, limit, "%")
    if completed is None or completed + failed <= 0:
        return Check(FAILED, FLAGGED, None, limit, "%", missing=("completed",))
    share = failed / (completed + failed)
    severity = INVALID if share > limits.failed_invalid_share else FLAGGED
    return Check(FAILED, severity, share * 100.0, limit, "%")


def _sent_all(point: Mapping[str, Any], limits: Thresholds) -> Check:
    asked = _num(point.get("num_prompts_target"))
    if asked is None:
        asked = _num(point.get("requests_asked"))
    attempted = _attempted(point)
    duration = _num(point.get("duration_asked"))
    if _num(point.get("requests_asked")) is None and duration is not None and duration > 0:
        # the client ran for a set time, not a request count: nothing was asked to count
        return Check(SENT_DURATION, NOT_APPLICABLE, duration, None, "s", SENT_ALL)
    if asked is None or asked <= 0:
        return _cannot_run(SENT_ALL, "requests_asked")
    if attempted is None:
        return _cannot_run(SENT_ALL, "completed")
    if attempted < limits.sent_share * asked:
        return Check(SENT_ALL, INVALID, attempted, asked, "req")
    return _passed(SENT_ALL, attempted, asked, "req")


def _rate_load(point: Mapping[str, Any], rate: float, baseline: float | None,
               limits: Thresholds) -> Check:
    attempted, duration = _attempted(point), _num(point.get("duration"))
    if attempted is None or duration is None or duration <= 0:
        return _cannot_run(LOAD, "completed" if attempted is None else "duration")
    limit = limits.load_share * rate
    if attempted / duration >= limit:      # even counting the drain as sending time
        return _passed(LOAD, attempted / duration, limit, "req/s")
    achieved = _achieved_rate(point)
    if achieved is None:
        return _cannot_run(LOAD, "latency")
    if achieved >= limit:
        return _passed(LOAD, achieved, limit, "req/s")
    ratio = queue_ratio(point, baseline)
    if ratio is not None and ratio >= limits.queue_ratio:
        code, severity = RATE_SATURATED, SATURATED
    elif ratio is not None and ratio <= limits.no_queue_ratio:
        code, severity = LOAD_NOT_DRIVEN, INVALID
    else:
        code, severity = LOAD_UNCLEAR, CANNOT_TELL
    value, basis = _quoted_rate(point, achieved, limit)
    return Check(code, severity, value, limit, "req/s", LOAD, basis=basis)


def _quoted_rate(point: Mapping[str, Any], derived: float, limit: float
                 ) -> tuple[float, str]:
    """The rate a load outcome quotes: the file's own request throughput where it records
    one under the limit (the figure the points table shows), else the send rate derived
    here, which the judgement rests on (it is never lower)."""
    recorded = _num(point.get("request_throughput"))
    if recorded is not None and 0 < recorded < limit:
        return recorded, RECORDED
    return derived, DERIVED


def closed_loop_concurrency(point: Mapping[str, Any], slots: float) -> float | None:
    """What a client that keeps every one of ``slots`` busy averages in flight over the
    point's requests, its last ones draining: n × mean latency ÷ (n × mean latency ÷ slots
    + (1 − 1 ÷ slots) × the highest latency statistic). None without latencies."""
    attempted = _attempted(point)
    mean_ms = _num(point.get("mean_e2el_ms"))
    if mean_ms is None:
        mean_ms = _num(point.get("median_e2el_ms"))
    high = _highest_latency_s(point)
    if attempted is None or mean_ms is None or high is None or attempted <= 0:
        return None
    work = attempted * mean_ms / 1000.0
    return work / (work / slots + (1.0 - 1.0 / slots) * max(high, mean_ms / 1000.0))


def _concurrency_load(point: Mapping[str, Any], conc: float, limits: Thresholds) -> Check:
    attempted = _attempted(point)
    if attempted is None:
        return _cannot_run(LOAD, "completed")
    if attempted <= conc:
        return Check(ONE_WAVE, NOTE, attempted, conc, "req", LOAD)
    achieved = achieved_concurrency(point)
    ideal = closed_loop_concurrency(point, conc)
    if achieved is None or ideal is None:
        return _cannot_run(LOAD, "latency" if _num(point.get("duration")) is not None
                           or _num(point.get("request_throughput")) is not None
                           else "duration")
    limit = limits.load_share * ideal
    if achieved < limit:
        return Check(SLOTS_IDLE, INVALID, achieved, limit, "req", LOAD)
    return _passed(LOAD, achieved, limit, "req")


def _load(point: Mapping[str, Any], baseline: float | None, limits: Thresholds) -> Check:
    attempted = _attempted(point)
    if attempted is None or attempted <= 0:
        return _cannot_run(LOAD, "completed")     # nothing sent: no load to judge
    conc, rate = _targets(point)
    if rate is not None and math.isfinite(rate) and rate > 0:
        return _rate_load(point, rate, baseline, limits)
    if conc is not None:
        return _concurrency_load(point, conc, limits)
    if rate is not None and math.isinf(rate):
        # an unbounded rate, no cap: every request is sent at once
        return Check(ONE_BURST, NOTE, attempted, None, "req", LOAD)
    return _cannot_run(LOAD, "load_target")


def _queued(point: Mapping[str, Any], baseline: float | None, limits: Thresholds) -> Check:
    wait, basis = wait_of(point)
    if wait is None:
        return _cannot_run(QUEUED, "ttft")
    ratio = queue_ratio(point, baseline)
    if ratio is None:
        return _cannot_run(QUEUED, "lower_load")
    if ratio >= limits.queue_ratio:
        return Check(QUEUED if basis == "ttft" else QUEUED_E2E, SATURATED, ratio,
                     limits.queue_ratio, "x", QUEUED)
    return _passed(QUEUED, ratio, limits.queue_ratio, "x")


def _few_for_p99(point: Mapping[str, Any], limits: Thresholds) -> Check:
    completed = _num(point.get("completed"))
    if completed is None:
        return _cannot_run(FEW_FOR_P99, "completed")
    if completed < limits.p90_min_requests:
        return Check(FEW_FOR_P90, FLAGGED, completed, float(limits.p99_min_requests), "req",
                     FEW_FOR_P99)
    if completed < limits.p99_min_requests:
        return Check(FEW_FOR_P99, FLAGGED, completed, float(limits.p99_min_requests), "req")
    return _passed(FEW_FOR_P99, completed, float(limits.p99_min_requests), "req")


def _mean_output(point: Mapping[str, Any], rows: list[dict] | None) -> tuple[float, float] | None:
    """(mean output tokens per completed request, completed): the file's totals, else the
    successful per-request rows'."""
    total = _num(point.get("total_output_tokens"))
    completed = _num(point.get("completed"))
    if total is not None and completed is not None and completed > 0:
        return total / completed, completed
    tokens = [_num(r.get("output_tokens")) for r in rows or () if _succeeded(r)]
    tokens = [t for t in tokens if t is not None]
    if tokens:
        return statistics.fmean(tokens), float(len(tokens))
    return None


def expected_output(asked: float, ratio: float | None) -> tuple[float, float]:
    """(the mean output length a client asked for, the lowest length it may draw): with a
    range ratio r, lengths uniform on the integers [max(⌊r·L⌋, 1), L]."""
    if ratio is None or ratio >= 1:
        return asked, asked
    low = max(math.floor(asked * max(ratio, 0.0)), 1.0)
    return (low + asked) / 2.0, low


def _draws_lengths(point: Mapping[str, Any]) -> bool:
    """Whether the client may draw output lengths from a range below the length asked."""
    return point.get("client") in RANGE_CLIENTS


def _short_output(point: Mapping[str, Any], rows: list[dict] | None,
                  limits: Thresholds) -> Check:
    asked = _num(point.get("scenario_output_tokens"))
    got = _mean_output(point, rows)
    if got is None:
        return _cannot_run(SHORT_OUTPUT, "output_tokens")
    if asked is None or asked <= 0:
        return _cannot_run(SHORT_OUTPUT, "output_asked")
    mean, n = got
    ratio = _num(point.get("scenario_range_ratio"))
    expected, low = expected_output(asked, ratio)
    spread = limits.output_z * (asked - low) / math.sqrt(12.0 * n)
    limit = limits.output_share * expected - spread
    if mean >= limit:
        return _passed(SHORT_OUTPUT, mean, limit, "tok")
    if ratio is None and _draws_lengths(point):
        return Check(OUTPUT_UNCLEAR, CANNOT_TELL, mean, asked, "tok", SHORT_OUTPUT)
    return Check(SHORT_OUTPUT, INVALID, mean, limit, "tok")


def _short_run(point: Mapping[str, Any], limits: Thresholds) -> Check:
    duration = _num(point.get("duration"))
    if duration is not None and duration < limits.min_duration_s:
        return Check(SHORT_RUN, FLAGGED, duration, limits.min_duration_s, "s")
    conc, _ = _targets(point)
    completed = _num(point.get("completed"))
    if conc is not None and completed is not None:
        needed = limits.min_requests_per_slot * conc
        if completed < needed:
            return Check(SHORT_RUN_SLOTS, FLAGGED, completed, needed, "req", SHORT_RUN)
    if duration is None:
        return _cannot_run(SHORT_RUN, "duration")
    return _passed(SHORT_RUN, duration, limits.min_duration_s, "s")


def _succeeded(row: Mapping[str, Any]) -> bool:
    error = row.get("error")
    if error is None or (isinstance(error, float) and math.isnan(error)):
        return True
    # some clients write "" for a request without error
    return isinstance(error, str) and not error.strip()


def _tpots(rows: Iterable[Mapping[str, Any]]) -> list[float]:
    """Decode time per token (ms) of each usable successful request, in send order."""
    usable = []
    for position, row in enumerate(rows):
        ttft, e2el = _num(row.get("ttft_ms")), _num(row.get("e2el_ms"))
        tokens = _num(row.get("output_tokens"))
        if ttft is None or e2el is None or tokens is None or tokens < 2 or not _succeeded(row):
            continue
        index = _num(row.get("index"))
        # rows without an index keep their place after the indexed ones
        key = (index is None, index if index is not None else 0.0, position)
        usable.append((key, (e2el - ttft) / (tokens - 1)))
    usable.sort(key=lambda item: item[0])
    return [tpot for _, tpot in usable]


def one_wave(point: Mapping[str, Any]) -> bool:
    """Whether every request of the point was in flight at once: no more requests than the
    concurrency cap, or an unbounded rate with no cap."""
    attempted = _attempted(point)
    conc, rate = _targets(point)
    if attempted is None or (rate is not None and math.isfinite(rate) and rate > 0):
        return False
    if conc is not None:
        return attempted <= conc
    return rate is not None and math.isinf(rate)


def _warmup(point: Mapping[str, Any], rows: list[dict] | None, limits: Thresholds) -> Check:
    if not rows:
        return _cannot_run(WARMUP, "rows")
    if one_wave(point):
        # all requests were sent together: the first in send order decode alongside the
        # rest, so there are no later requests of a warmed-up server to compare them with
        return _cannot_run(WARMUP, "later_waves")
    tpots = _tpots(rows)
    n = len(tpots)
    # the small epsilon keeps float noise (0.07 × 100 = 7.000000000000001) from adding one
    k = max(limits.warmup_min_k, math.ceil(limits.warmup_share * n - 1e-9))
    if n < 2 * k:
        return Check(WARMUP, NOT_EVALUABLE, float(n), float(2 * k), "req",
                     missing=("usable_rows",))
    first, rest = tpots[:k], tpots[k:]
    first_median, rest_median = statistics.median(first), statistics.median(rest)
    if rest_median <= 0:
        return Check(WARMUP, NOT_EVALUABLE, None, None, "", missing=("usable_rows",))
    mad = statistics.median(abs(x - rest_median) for x in rest)
    standard_error = _MAD_TO_SD * mad / math.sqrt(k)
    margin = max(limits.warmup_z * standard_error, limits.warmup_min_rel * rest_median)
    ratio, limit = first_median / rest_median, 1.0 + margin / rest_median
    if first_median - rest_median > margin:
        return Check(WARMUP, FLAGGED, ratio, limit, "")
    return _passed(WARMUP, ratio, limit, "")


# --- verdicts ---------------------------------------------------------------------------------


def _verdict(checks: Iterable[Check]) -> str:
    """The worst state of the checks; UNVERIFIED when none of them could run (each was
    not evaluable or not applicable)."""
    checks = tuple(checks)
    if checks and all(c.severity in (NOT_EVALUABLE, NOT_APPLICABLE) for c in checks):
        return UNVERIFIED
    worst = max((c.severity for c in checks), key=_RANK.__getitem__, default=VALID)
    return VALID if _RANK[worst] == 0 else worst


def check_point(point: dict, requests: list[dict] | None = None,
                limits: Thresholds = Thresholds(), baseline_ttft: float | None = None
                ) -> Validity:
    """Every rule on one point (and its per-request rows, in any order). ``baseline_ttft``:
    the TTFT (ms, as ``ttft_of``) of the lowest load of the point's series, when the point
    is at a higher load (``check_points`` finds it)."""
    pid = point.get("point")
    pid = "" if pid is None else str(pid)
    everything_failed = _all_failed(point, requests)
    if everything_failed is not None:
        return Validity(pid, INVALID, (everything_failed,))
    cancelled = _cancelled(point)
    checks = ((_failed(point, requests, limits),) + ((cancelled,) if cancelled else ())
              + (_sent_all(point, limits), _load(point, baseline_ttft, limits),
                 _queued(point, baseline_ttft, limits), _few_for_p99(point, limits),
                 _short_output(point, requests, limits), _short_run(point, limits),
                 _warmup(point, requests, limits)))
    return Validity(pid, _verdict(checks), checks)


def baselines(points: list[dict]) -> dict[Any, float]:
    """point id -> the TTFT of the lowest load of its series (engine, workload, variant),
    the mean over that load's points that have one; only for points at higher loads."""
    series: dict[tuple, list[dict]] = {}
    for p in points:
        key = (p.get("engine"), p.get("workload"), p.get("variant") or "")
        series.setdefault(key, []).append(p)
    out: dict[Any, float] = {}
    for members in series.values():
        waits = [wait_of(p) for p in members]
        timed = [(p, w) for p, w in zip(members, waits, strict=True)
                 if w[0] is not None and (_num(p.get("completed")) or 0) > 0]
        loads = sorted({load_value(p) for p, _ in timed if load_value(p) is not None})
        if len(loads) < 2:
            continue
        for p, (_, basis) in zip(members, waits, strict=True):
            if load_value(p) is None or load_value(p) <= loads[0] or basis is None:
                continue
            low = [w[0] for q, w in timed if load_value(q) == loads[0] and w[1] == basis]
            if low:
                out[p.get("point")] = statistics.fmean(low)
    return out


def check_points(points: list[dict], requests: list[dict] | None,
                 limits: Thresholds = Thresholds()) -> list[Validity]:
    """requests: all per-request rows of the run (each has `point`); grouped by point here.

    One Validity per point, in the order of ``points``; rows of unknown points are ignored.
    Points at a load above the lowest of their series are compared with it (queueing).
    """
    grouped: dict[Any, list[dict]] = {}
    for row in requests or ():
        grouped.setdefault(row.get("point"), []).append(row)
    base = baselines(points)
    return [check_point(p, grouped.get(p.get("point")), limits, base.get(p.get("point")))
            for p in points]
