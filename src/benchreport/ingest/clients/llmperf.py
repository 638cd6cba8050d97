"""ray-project llmperf ``token_benchmark_ray.py`` results (client "llmperf").

Read from content (seen in real files of llmperf ``version`` "2023-08-31", as republished by
llmperf-leaderboard with the extra keys ``framework`` and ``timestamp``):

- ``<model>_<in>_<out>_summary.json``: one flat object, ``results_<metric>_quantiles_pNN``,
  ``results_<metric>_mean`` / ``_min`` / ``_max`` / ``_stddev`` for ``ttft_s``,
  ``inter_token_latency_s``, ``end_to_end_latency_s`` … (seconds), plus
  ``results_num_completed_requests``, ``results_number_errors``, ``results_error_rate``,
  ``results_num_completed_requests_per_min``, ``results_mean_output_throughput_token_per_s``
  and ``num_concurrent_requests`` → one point. llmperf computes the statistics over the
  requests without an error; ``num_completed_requests`` counts those requests.
- ``<…>_individual_responses.json``: a list of per-request dicts (``ttft_s``,
  ``end_to_end_latency_s``, ``number_input_tokens``, ``number_output_tokens``,
  ``error_code``, ``error_msg``) → a point with role "requests". Error records keep their
  latencies in the rows but carry ``error`` and count as failed.

llmperf's inter-token latency is not a gap between chunks: per request it is the sum of the
streamed chunks' gaps *including the first one (TTFT)* divided by the output tokens, i.e.
about E2E ÷ output tokens (checked on the real per-request file); see `DEFINITIONS`.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import ParseError
from .base import Doc, Point, epoch_iso, finite, redact

CLIENT = "llmperf"

DEFINITIONS = {
    "itl.llmperf": (
        "llmperf inter_token_latency_s: per request, the sum of the gaps between streamed "
        "chunks counting the first token's wait (TTFT) as the first gap, divided by the "
        "output tokens (≈ E2E ÷ output tokens); then mean / quantiles over requests"),
}

_LATENCIES = {"ttft": "ttft_s", "itl": "inter_token_latency_s", "e2el": "end_to_end_latency_s"}
_CODES = {"ttft": "ttft.first-token", "itl": "itl.llmperf", "e2el": "e2el.request"}
_STATS = (("mean", "mean"), ("median", "quantiles_p50"), ("p90", "quantiles_p90"),
          ("p99", "quantiles_p99"), ("std", "stddev"))
_SUMMARY_KEYS = ("results_ttft_s_mean", "results_end_to_end_latency_s_mean",
                 "results_num_completed_requests", "results_ttft_s_quantiles_p50")


def sniff(doc: Doc) -> str | None:
    """"llmperf" for a summary object or a list of llmperf per-request dicts."""
    d = doc.value
    if doc.kind != "json":
        return None
    if isinstance(d, dict):
        return CLIENT if any(k in d for k in _SUMMARY_KEYS) else None
    if isinstance(d, list) and d and isinstance(d[0], dict):
        first = d[0]
        if "end_to_end_latency_s" in first or ("error_code" in first and any(
                k in first for k in ("ttft_s", "number_input_tokens", "error_msg"))):
            return CLIENT
    return None


def parse(doc: Doc) -> list[Point]:
    """The summary point, or the per-request point of an individual-responses list."""
    if isinstance(doc.value, list):
        return [_requests_point(doc)]
    return [_summary_point(doc, doc.value)]


def _summary_point(doc: Doc, d: dict) -> Point:
    p = Point(client=CLIENT, file=doc.path, where="summary", line=None, fields={})

    def put(name: str, key: str, scale: float = 1.0, cast=float) -> bool:
        x = finite(d.get(key))
        if x is None:
            return False
        p.fields[name] = cast(x * scale)
        p.sources[name] = key
        return True

    put("completed", "results_num_completed_requests", cast=int)
    if not put("failed", "results_number_errors", cast=int):
        rate, started = finite(d.get("results_error_rate")), finite(
            d.get("results_num_requests_started"))
        if rate is not None and started is not None:
            p.fields["failed"] = int(round(rate * started))
            p.sources["failed"] = "results_error_rate × results_num_requests_started"
    done = p.fields.get("completed")
    if done is None and "failed" in p.fields:
        started = finite(d.get("results_num_requests_started"))
        if started is not None:
            p.fields["completed"] = int(started) - p.fields["failed"]
            p.sources["completed"] = "results_num_requests_started − failed"
            done = p.fields["completed"]
    per_min = finite(d.get("results_num_completed_requests_per_min"))
    if per_min is not None:
        p.fields["request_throughput"] = per_min / 60.0
        p.sources["request_throughput"] = "results_num_completed_requests_per_min ÷ 60"
        if done and per_min > 0:
            # llmperf divides the completed requests by the run's wall time
            p.fields["duration"] = done / per_min * 60.0
            p.sources["duration"] = ("results_num_completed_requests ÷ "
                                     "results_num_completed_requests_per_min × 60")
    put("output_throughput", "results_mean_output_throughput_token_per_s")
    if done is not None:
        # the means are over the requests without an error, whose count is `completed`
        for name, key in (("total_input_tokens", "results_number_input_tokens_mean"),
                          ("total_output_tokens", "results_number_output_tokens_mean")):
            mean = finite(d.get(key))
            if mean is not None:
                p.fields[name] = int(round(mean * done))
                p.sources[name] = f"{key} × results_num_completed_requests"

    if done != 0:                                 # no statistics when nothing succeeded
        for metric, key in _LATENCIES.items():
            for stat, suffix in _STATS:
                if put(f"{stat}_{metric}_ms", f"results_{key}_{suffix}", 1000.0):
                    p.definitions[metric] = _CODES[metric]

    conc = finite(d.get("num_concurrent_requests"))
    if conc:
        p.load = {"kind": "concurrency", "max_concurrency": int(conc), "request_rate": None,
                  "arrival": None}
        p.fields["max_concurrency"] = int(conc)
        p.sources["max_concurrency"] = "num_concurrent_requests"
    for name, key in (("input_tokens", "mean_input_tokens"),
                      ("output_tokens", "mean_output_tokens")):
        x = finite(d.get(key))
        if x:
            p.scenario[name] = int(x) if x.is_integer() else x
    if isinstance(d.get("framework"), str):           # llmperf-leaderboard: the provider
        p.params["framework"] = redact(d["framework"])
    if isinstance(d.get("model"), str):
        p.model = d["model"]
    p.date = epoch_iso(finite(d.get("timestamp"))) or p.date
    return p


def _requests_point(doc: Doc) -> Point:
    p = Point(client=CLIENT, file=doc.path, where="individual responses", line=None,
              fields={}, role="requests")
    for i, item in enumerate(doc.value):
        if not isinstance(item, dict):
            raise ParseError(f"[{i}] is a {type(item).__name__}; expected an llmperf "
                             "per-request object (ttft_s, end_to_end_latency_s, …)",
                             path=doc.path)
        row: dict[str, Any] = {}
        for name, key in (("ttft_ms", "ttft_s"), ("e2el_ms", "end_to_end_latency_s")):
            x = finite(item.get(key))
            if x is not None:
                row[name] = x * 1000.0
        for name, key in (("input_tokens", "number_input_tokens"),
                          ("output_tokens", "number_output_tokens")):
            x = finite(item.get(key))
            if x is not None:
                row[name] = int(x)
        code, message = item.get("error_code"), item.get("error_msg")
        if code is not None or message:
            text = " ".join(str(x) for x in (code, message) if x not in (None, ""))
            row["error"] = redact(text or "error")[:500]
        p.requests.append(row)
    failed = sum(1 for r in p.requests if r.get("error"))
    p.fields["completed"] = len(p.requests) - failed
    p.fields["failed"] = failed
    p.sources["completed"] = "[].error_code (entries where it is null and error_msg empty)"
    p.sources["failed"] = "[].error_code (entries where it or error_msg is set)"
    return p
