"""Validity of benchmark points, in the spirit of MLPerf's submission checker.

A point is one benchmark run of one engine at one load (a concurrency cap or a request rate)
and one repeat: a row of the ``points`` table (see ``core.tables``), optionally with its
per-request rows. Each rule below is one small function that returns a ``Check`` or None; a
point's verdict is the worst of its checks: ``invalid`` (the figure does not measure what its
label says), ``flagged`` (it does, with a caveat the report shows) or ``valid`` (no check
fired). Checks carry short codes; the report's label catalogues hold the words.

Rules, in the order they are reported:

``all_failed`` (invalid)
    completed == 0 while requests failed or per-request rows exist. A point where every
    request failed is reported as failed, never as fast (it has no latency at all). It is
    the only check of such a point: every other rule judges measurements it does not have.
``failed`` (flagged; invalid above ``failed_invalid_share``)
    failed > 0. value: failed ÷ (completed + failed) in %, limit: ``failed_invalid_share``
    in %. Failures are rarely random (time-outs are the slow requests), so the survivors'
    latencies are biased low.
``load_not_driven`` (invalid)
    A finite request-rate target: achieved rate (completed + failed) ÷ (duration − the
    highest E2E latency statistic the file holds, the time after the last send; at most
    half the duration) below ``load_share`` × target (req/s); no verdict when the file
    holds no latency. Otherwise a concurrency target: the achieved concurrency (Little's
    law, ``achieved_concurrency``) below ``load_share`` × n ÷ ceil(n ÷ target), n =
    completed + failed: a closed loop of n requests runs in ceil(n ÷ target) waves and its
    last one drains, so that is what a client that drives the load perfectly averages in
    flight (the target itself when n is a multiple of it). An unbounded rate with no cap:
    no check. When a finite rate and a cap are both set, the rate drives the load and the
    cap is a ceiling, so only the rate is held to its target.
``few_for_p99`` (flagged)
    completed < ``p99_min_requests``: p99 then rests on one or two requests (show p90).
``short_output`` (invalid)
    mean output tokens per completed request (total_output_tokens ÷ completed) below
    ``output_share`` × the tokens the scenario asked: the engine did less decode work than
    the label says.
``short_run`` (flagged)
    duration < ``min_duration_s`` (value/limit in s), else completed <
    ``min_requests_per_slot`` × the concurrency target (value/limit in req). One check per
    point; the duration is reported when both hold.
``warmup`` (flagged, per-request rows only)
    From successful requests with at least 2 output tokens, the decode time per token
    tpot = (e2el − ttft) ÷ (output_tokens − 1), in send order. (In a closed loop the first
    batch's TTFT follows its queue position, so TTFT would flag every run.) The median of
    the first k = max(``warmup_min_k``, ceil(``warmup_share`` × n)) requests is held
    against the median of the rest; flagged when it exceeds it by more than ``warmup_z``
    robust standard errors of the rest (1.4826 × MAD ÷ √k) and by more than
    ``warmup_min_rel`` of it. value: first median ÷ rest median, limit: that ratio at the
    threshold. Skipped with fewer than 2k usable requests.

Where run.yaml declares neither a concurrency nor a rate target, the client's own recorded
``max_concurrency`` and ``request_rate`` stand in for them. NaN is treated as missing; a rule
whose inputs are missing does not fire. A missing ``failed`` counts as 0 in totals.
Standard library only: pure functions of plain dicts.
"""

from __future__ import annotations

import math
import numbers
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.verdicts import FLAGGED, INVALID, VALID

LOAD_NOT_DRIVEN = "load_not_driven"
FEW_FOR_P99 = "few_for_p99"
FAILED = "failed"
ALL_FAILED = "all_failed"
SHORT_OUTPUT = "short_output"
SHORT_RUN = "short_run"
WARMUP = "warmup"
# the order checks are reported in (and the rules are run in)
ORDER = (ALL_FAILED, FAILED, LOAD_NOT_DRIVEN, FEW_FOR_P99, SHORT_OUTPUT, SHORT_RUN, WARMUP)
_RANK = {VALID: 0, FLAGGED: 1, INVALID: 2}
# 1.4826 × MAD estimates the standard deviation of normal data, robust to outliers
_MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class Thresholds:
    """The limits each rule holds a point against."""

    # A driver that keeps fewer than 90% of its slots busy (or sends under 90% of its rate)
    # measured a lighter load than its label; 10% leaves room for ramp-up and drain.
    load_share: float = 0.90
    # p99 of fewer than 100 values is interpolated between the largest one or two: it is
    # one request's outcome, not a percentile (p90 still rests on ten).
    p99_min_requests: int = 100
    # Any failure is shown; above 5% the survivors are a selected sample (failures tend to
    # be the slow requests), so latency and throughput are no longer the load's.
    failed_invalid_share: float = 0.05
    # Requests that stop well short of the tokens asked (EOS not ignored, length caps) do
    # less decode work; 5% leaves room for re-tokenisation and stop-token accounting.
    output_share: float = 0.95
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
    code: str
    severity: str            # FLAGGED or INVALID
    value: float | None      # what was measured (e.g. achieved concurrency, failed share)
    limit: float | None      # what it was held against
    unit: str                # "", "req", "s", "%", "req/s", "tok" ... of value and limit


@dataclass(frozen=True)
class Validity:
    point: str
    verdict: str             # VALID, FLAGGED or INVALID (the worst of its checks)
    checks: tuple[Check, ...]


def _num(value: Any) -> float | None:
    """A number as float, or None for missing, NaN and anything not a number (bools and
    text included: a table column holding them is broken, not a count)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    out = float(value)
    return None if math.isnan(out) else out


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


def _achieved_rate(point: Mapping[str, Any]) -> float | None:
    """Requests sent per second: (completed + failed) ÷ the span they were sent over, or
    None when that span cannot be told. The duration also holds the time the last
    requests took after the last send; under load those are the slowest, so the highest
    latency statistic the file holds (p99, else p90, mean or median) is taken off (up to
    half the duration). A file with no latency at all cannot tell a client that fell
    behind from a server that queued, so it gets no verdict."""
    attempted = _attempted(point)
    duration = _num(point.get("duration"))
    if attempted is None or duration is None or duration <= 0:
        return None
    for key in ("p99_e2el_ms", "p90_e2el_ms", "mean_e2el_ms", "median_e2el_ms"):
        latency_ms = _num(point.get(key))
        if latency_ms is not None:
            return attempted / (duration - min(latency_ms / 1000.0, duration / 2))
    return None


# --- the rules: each returns a Check or None ------------------------------------------------


def _all_failed(point: Mapping[str, Any], rows: list[dict] | None) -> Check | None:
    completed = _num(point.get("completed"))
    failed = _num(point.get("failed")) or 0.0
    declared = _num(point.get("requests")) or 0.0
    if completed != 0 or not (failed > 0 or declared > 0 or rows):
        return None
    # value: how many requests there were (all of them failed)
    count = failed if failed > 0 else float(len(rows) if rows else declared)
    return Check(ALL_FAILED, INVALID, count, None, "req")


def _failed(point: Mapping[str, Any], limits: Thresholds) -> Check | None:
    failed = _num(point.get("failed"))
    if failed is None or failed <= 0:
        return None
    attempted = _attempted(point)
    limit = limits.failed_invalid_share * 100.0
    if attempted is None or attempted <= 0:
        return Check(FAILED, FLAGGED, None, limit, "%")
    share = failed / attempted
    severity = INVALID if share > limits.failed_invalid_share else FLAGGED
    return Check(FAILED, severity, share * 100.0, limit, "%")


def _load_not_driven(point: Mapping[str, Any], limits: Thresholds) -> Check | None:
    conc, rate = _targets(point)
    if rate is not None and math.isfinite(rate) and rate > 0:
        achieved = _achieved_rate(point)
        limit = limits.load_share * rate
        if achieved is not None and achieved < limit:
            return Check(LOAD_NOT_DRIVEN, INVALID, achieved, limit, "req/s")
        return None
    if conc is None:
        return None   # unbounded rate, no cap: nothing to hold it to
    achieved = achieved_concurrency(point)
    attempted = _attempted(point)
    if achieved is None:
        return None
    # A closed loop of n requests on c workers runs ceil(n / c) waves, and its last wave
    # drains: even a perfect client averages n / ceil(n / c) in flight (never more than c,
    # nor more than it has requests).
    slots = conc if attempted is None or attempted <= 0 else \
        min(conc, attempted / math.ceil(attempted / conc))
    limit = limits.load_share * slots
    if achieved < limit:
        return Check(LOAD_NOT_DRIVEN, INVALID, achieved, limit, "req")
    return None


def _few_for_p99(point: Mapping[str, Any], limits: Thresholds) -> Check | None:
    completed = _num(point.get("completed"))
    if completed is not None and completed < limits.p99_min_requests:
        return Check(FEW_FOR_P99, FLAGGED, completed, float(limits.p99_min_requests), "req")
    return None


def _short_output(point: Mapping[str, Any], limits: Thresholds) -> Check | None:
    total = _num(point.get("total_output_tokens"))
    completed = _num(point.get("completed"))
    asked = _num(point.get("scenario_output_tokens"))
    if total is None or asked is None or completed is None or completed <= 0:
        return None
    mean = total / completed
    limit = limits.output_share * asked
    if mean < limit:
        return Check(SHORT_OUTPUT, INVALID, mean, limit, "tok")
    return None


def _short_run(point: Mapping[str, Any], limits: Thresholds) -> Check | None:
    duration = _num(point.get("duration"))
    if duration is not None and duration < limits.min_duration_s:
        return Check(SHORT_RUN, FLAGGED, duration, limits.min_duration_s, "s")
    conc, _ = _targets(point)
    completed = _num(point.get("completed"))
    if conc is not None and completed is not None:
        needed = limits.min_requests_per_slot * conc
        if completed < needed:
            return Check(SHORT_RUN, FLAGGED, completed, needed, "req")
    return None


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


def _warmup(rows: list[dict] | None, limits: Thresholds) -> Check | None:
    if not rows:
        return None
    tpots = _tpots(rows)
    n = len(tpots)
    # the small epsilon keeps float noise (0.07 × 100 = 7.000000000000001) from adding one
    k = max(limits.warmup_min_k, math.ceil(limits.warmup_share * n - 1e-9))
    if n < 2 * k:
        return None
    first, rest = tpots[:k], tpots[k:]
    first_median, rest_median = statistics.median(first), statistics.median(rest)
    if rest_median <= 0:
        return None
    mad = statistics.median(abs(x - rest_median) for x in rest)
    standard_error = _MAD_TO_SD * mad / math.sqrt(k)
    margin = max(limits.warmup_z * standard_error, limits.warmup_min_rel * rest_median)
    if first_median - rest_median > margin:
        return Check(WARMUP, FLAGGED, first_median / rest_median,
                     1.0 + margin / rest_median, "")
    return None


# --- verdicts ---------------------------------------------------------------------------------


def _verdict(checks: Iterable[Check]) -> str:
    return max((c.severity for c in checks), key=_RANK.__getitem__, default=VALID)


def check_point(point: dict, requests: list[dict] | None = None,
                limits: Thresholds = Thresholds()) -> Validity:
    """Every rule on one point (and its per-request rows, in any order)."""
    pid = point.get("point")
    pid = "" if pid is None else str(pid)
    everything_failed = _all_failed(point, requests)
    if everything_failed is not None:
        return Validity(pid, INVALID, (everything_failed,))
    found = (_failed(point, limits), _load_not_driven(point, limits),
             _few_for_p99(point, limits), _short_output(point, limits),
             _short_run(point, limits), _warmup(requests, limits))
    checks = tuple(c for c in found if c is not None)
    return Validity(pid, _verdict(checks), checks)


def check_points(points: list[dict], requests: list[dict] | None,
                 limits: Thresholds = Thresholds()) -> list[Validity]:
    """requests: all per-request rows of the run (each has `point`); grouped by point here.

    One Validity per point, in the order of ``points``; rows of unknown points are ignored.
    """
    grouped: dict[Any, list[dict]] = {}
    for row in requests or ():
        grouped.setdefault(row.get("point"), []).append(row)
    return [check_point(p, grouped.get(p.get("point")), limits) for p in points]
