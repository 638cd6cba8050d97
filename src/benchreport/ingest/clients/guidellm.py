"""GuideLLM ``benchmarks.json`` (``guidellm benchmark --output-path …json``).

Seen in a real file: GuideLLM 0.5.0.dev0 (``metadata.version`` 1): top level ``metadata``,
``args`` and ``benchmarks``; each benchmark has ``config`` (``strategy``, ``constraints``,
``backend``), ``scheduler_state``, ``scheduler_metrics``, ``metrics``, ``requests``,
``start_time``, ``end_time`` and ``duration``. Read defensively for the other versions the
reference describes:

- before 0.5 (no ``metadata``): the strategy sits in ``benchmarks[i].args.strategy`` and the
  counts in ``benchmarks[i].request_totals`` or ``run_stats``;
- schema 2 (0.7+): the configuration moved under ``config.spec`` (only the strategy, the
  backend's model and the constraints are looked up there; this layout was not seen in a
  real file).

Every benchmark of ``benchmarks`` is one point. Each metric is split into ``successful`` /
``errored`` / ``incomplete`` / ``total``; statistics come from ``successful`` only.
``request_latency`` is in seconds, the ``*_ms`` metrics in milliseconds.

GuideLLM's latency definitions differ from vLLM's (verified against the per-request values
and metric counts of the 0.5.0.dev0 sample): see `DEFINITIONS`.
"""

from __future__ import annotations

import re
from typing import Any

from ...core.errors import ParseError
from .base import Doc, Point, dig, epoch_iso, finite, redact

CLIENT = "guidellm"

# Client-specific definitions (base.DEFINITIONS holds the shared ones).
DEFINITIONS = {
    "tpot.guidellm": (
        "GuideLLM time_per_output_token_ms: per request, (last token time − request start) "
        "÷ output tokens, so the first token's wait (TTFT) is included; the statistics are "
        "over output tokens (each request weighted by its output token count)"),
    "itl.guidellm": (
        "GuideLLM inter_token_latency_ms: per request, (last token time − first token time) "
        "÷ (output tokens − 1), TTFT excluded; the statistics weight each request by its "
        "output tokens − 1 (not a pooled per-chunk gap)"),
}

# contract metric -> (GuideLLM metric key, factor to ms)
_LATENCIES = {
    "ttft": ("time_to_first_token_ms", 1.0),
    "tpot": ("time_per_output_token_ms", 1.0),
    "itl": ("inter_token_latency_ms", 1.0),
    "e2el": ("request_latency", 1000.0),          # seconds
}
_CODES = {"ttft": "ttft.first-token", "tpot": "tpot.guidellm", "itl": "itl.guidellm",
          "e2el": "e2el.request"}
_METRIC_KEYS = ("request_latency", "time_to_first_token_ms", "requests_per_second",
                "output_token_count", "request_totals")


def sniff(doc: Doc) -> str | None:
    """"guidellm" for a GuideLLM report: ``benchmarks`` whose entries carry GuideLLM metrics."""
    value = doc.value
    if doc.kind != "json" or not isinstance(value, dict):
        return None
    benches = value.get("benchmarks")
    if not isinstance(benches, list):
        return None
    meta = value.get("metadata")
    if isinstance(meta, dict) and "guidellm_version" in meta:
        return CLIENT
    for bench in benches:
        if isinstance(bench, dict):
            metrics = bench.get("metrics")
            if isinstance(metrics, dict) and any(k in metrics for k in _METRIC_KEYS):
                return CLIENT
            if str(bench.get("type_", "")).endswith("benchmark") and "metrics" in bench:
                return CLIENT
    return None


def parse(doc: Doc) -> list[Point]:
    """One point per entry of ``benchmarks``."""
    benches = doc.value.get("benchmarks")
    if not isinstance(benches, list):
        raise ParseError("'benchmarks' is not a list; expected GuideLLM's list of benchmarks",
                         path=doc.path)
    return [_point(doc, i, bench) for i, bench in enumerate(benches)]


def _err(doc: Doc, message: str) -> ParseError:
    return ParseError(message, path=doc.path)


def _dict(doc: Doc, value: Any, where: str) -> dict[str, Any]:
    """``value`` when it is an object, {} when absent; a ParseError for anything else."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _err(doc, f"{where} is a {type(value).__name__}, expected an object")
    return value


def _point(doc: Doc, i: int, bench: Any) -> Point:
    at = f"benchmarks[{i}]"
    if not isinstance(bench, dict):
        raise _err(doc, f"{at} is a {type(bench).__name__}, expected a benchmark object")
    metrics = bench.get("metrics")
    if not isinstance(metrics, dict):
        raise _err(doc, f"{at} has no 'metrics' object; expected GuideLLM ≥ 0.2 metrics "
                        "(request_latency, time_to_first_token_ms, …)")
    top = doc.value
    p = Point(client=CLIENT, file=doc.path, where=at, line=None, fields={})

    # --- counts --------------------------------------------------------------------
    totals, totals_at = _totals(doc, bench, metrics, at)
    done = totals.get("successful")
    errored = totals.get("errored")
    incomplete = totals.get("incomplete")
    if done is not None:
        p.fields["completed"] = int(done)
        p.sources["completed"] = _status_key(totals_at, "successful")
    if errored is not None:
        # failed = errored only. GuideLLM's "incomplete" requests were still in flight when
        # the benchmark stopped (time or request limit) and were cancelled by the client, not
        # refused by the server; they are kept apart in params["incomplete"] with a warning.
        p.fields["failed"] = int(errored)
        p.sources["failed"] = _status_key(totals_at, "errored")
    if incomplete:
        p.params["incomplete"] = int(incomplete)
        p.warnings.append(f"{doc.path} {at}: {int(incomplete)} request(s) were incomplete "
                          "(cancelled when the benchmark stopped); they are counted neither "
                          "as completed nor as failed")

    duration = finite(bench.get("duration"))
    if duration is not None:
        p.fields["duration"] = duration
        p.sources["duration"] = f"{at}.duration"
    else:
        start, end = finite(bench.get("start_time")), finite(bench.get("end_time"))
        if start is not None and end is not None and end >= start:
            p.fields["duration"] = end - start
            p.sources["duration"] = f"{at}.end_time − {at}.start_time"

    # no latency statistics when no request succeeded (GuideLLM writes zeros then)
    ok = done is None or done > 0
    for name, key in (("total_input_tokens", "prompt_token_count"),
                      ("total_output_tokens", "output_token_count")):
        value = finite(dig(metrics, key, "successful", "total_sum"))
        if value is not None:
            p.fields[name] = int(round(value))
            p.sources[name] = f"{at}.metrics.{key}.successful.total_sum"
    for name, key in (("request_throughput", "requests_per_second"),
                      ("output_throughput", "output_tokens_per_second")):
        value = finite(dig(metrics, key, "successful", "mean"))
        if value is not None:
            p.fields[name] = value
            p.sources[name] = f"{at}.metrics.{key}.successful.mean"

    # --- latency statistics (successful requests only) -------------------------------
    for metric, (key, factor) in _LATENCIES.items():
        dist = _dict(doc, dig(metrics, key, "successful"), f"{at}.metrics.{key}.successful")
        if not dist or not ok or finite(dist.get("count")) == 0:
            continue
        base = f"{at}.metrics.{key}.successful"
        percentiles = _dict(doc, dist.get("percentiles"), f"{base}.percentiles")
        for stat, value, src in (
                ("mean", dist.get("mean"), "mean"),
                ("median", dist.get("median", percentiles.get("p50")),
                 "median" if "median" in dist else "percentiles.p50"),
                ("p90", percentiles.get("p90"), "percentiles.p90"),
                ("p99", percentiles.get("p99"), "percentiles.p99"),
                ("std", dist.get("std_dev"), "std_dev")):
            x = finite(value)
            if x is not None:
                p.fields[f"{stat}_{metric}_ms"] = x * factor
                p.sources[f"{stat}_{metric}_ms"] = f"{base}.{src}"
                p.definitions[metric] = _CODES[metric]

    # --- load, scenario, settings ----------------------------------------------------
    _load(doc, p, bench, at)
    _scenario(p, top, bench, metrics)
    p.model = _model(top, bench)
    start = finite(bench.get("start_time")) or finite(dig(bench, "run_stats", "start_time"))
    p.date = epoch_iso(start) or p.date

    p.requests = _requests(doc, bench, at)
    counted = sum(1 for r in p.requests if not r.get("error"))
    if done is not None and p.requests and counted != done:
        p.warnings.append(
            f"{doc.path} {at}: 'requests' lists {counted} successful request(s) but the "
            f"statistics count {int(done)} (GuideLLM samples requests and lists warm-up and "
            "cool-down ones too)")
    return p


def _totals(doc: Doc, bench: dict, metrics: dict, at: str) -> tuple[dict[str, float], str]:
    """Request counts by status and where they came from."""
    for value, where in ((metrics.get("request_totals"), f"{at}.metrics.request_totals"),
                         (bench.get("request_totals"), f"{at}.request_totals")):
        if isinstance(value, dict):
            return ({k: x for k in ("successful", "errored", "incomplete")
                     if (x := finite(value.get(k))) is not None}, where)
    # no totals: the count of each status of request_latency
    latency = metrics.get("request_latency")
    if isinstance(latency, dict):
        out = {k: x for k in ("successful", "errored", "incomplete")
               if (x := finite(dig(latency, k, "count"))) is not None}
        return out, f"{at}.metrics.request_latency.{{status}}.count"
    return {}, ""


def _status_key(totals_at: str, status: str) -> str:
    """The key of one status's count: ``….request_totals.successful`` or
    ``….request_latency.successful.count``."""
    if "{status}" in totals_at:
        return totals_at.replace("{status}", status)
    return f"{totals_at}.{status}"


def _strategy(bench: dict, at: str) -> tuple[Any, str]:
    """The benchmark's scheduling strategy and its key path."""
    for path in (("config", "strategy"), ("config", "spec", "strategy"), ("args", "strategy"),
                 ("strategy",)):
        value = dig(bench, *path)
        if value is not None:
            return value, ".".join((at,) + path)
    return None, ""


def _load(doc: Doc, p: Point, bench: dict, at: str) -> None:
    strategy, at_s = _strategy(bench, at)
    if isinstance(strategy, str):
        strategy = {"type_": strategy}
    if not isinstance(strategy, dict):
        p.warnings.append(f"{doc.path} {at}: no scheduling strategy recorded; the load is "
                          "unknown")
        return
    kind = str(strategy.get("type_") or strategy.get("type") or "").lower()
    p.params["strategy"] = kind
    src = f"{at_s}.type_"
    if kind == "synchronous":
        p.load = {"kind": "synchronous", "max_concurrency": 1, "request_rate": None,
                  "arrival": None}
        p.fields["max_concurrency"] = 1
        p.sources["max_concurrency"] = src
    elif kind == "concurrent":
        key = "streams" if "streams" in strategy else "max_concurrency"
        streams = finite(strategy.get(key))
        n = int(streams) if streams is not None else None
        p.load = {"kind": "concurrency", "max_concurrency": n, "request_rate": None,
                  "arrival": None}
        if n is not None:
            p.fields["max_concurrency"] = n
            p.sources["max_concurrency"] = f"{at_s}.{key}"
    elif kind == "throughput":
        p.load = {"kind": "unbounded", "max_concurrency": None, "request_rate": "inf",
                  "arrival": None}
        p.fields["max_concurrency"] = None
        p.fields["request_rate"] = "inf"
        p.sources["max_concurrency"] = p.sources["request_rate"] = src
    elif kind in ("constant", "poisson"):
        rate = finite(strategy.get("rate"))
        p.load = {"kind": "rate", "max_concurrency": None, "request_rate": rate,
                  "arrival": kind}
        if rate is not None:
            p.fields["request_rate"] = rate
            p.sources["request_rate"] = f"{at_s}.rate"
        p.fields["max_concurrency"] = None
        p.sources["max_concurrency"] = src
    else:
        p.warnings.append(f"{doc.path} {at}: unknown GuideLLM strategy {kind!r}; the load "
                          "is unknown")
    _cap(p, strategy, kind)
    constraints = dig(bench, "config", "constraints") or dig(bench, "config", "spec",
                                                                "constraints")
    if isinstance(constraints, dict):
        for name, key in (("max_seconds", "max_duration"), ("max_requests", "max_num")):
            x = finite(dig(constraints, name, key))
            if x is not None:
                p.params[name] = x if name == "max_seconds" else int(x)


def _cap(p: Point, strategy: dict, kind: str) -> None:
    """GuideLLM's ``max_concurrency`` beside a rate, throughput or synchronous strategy is a
    cap on requests in flight (10,240 unless set), not the load: kept in params only."""
    if kind == "concurrent":
        return
    cap = finite(strategy.get("max_concurrency"))
    if cap:
        p.params["max_concurrency_cap"] = int(cap)


_SYNTH = re.compile(r"(prompt_tokens|output_tokens)\s*[=:]\s*(\d+)")


def _scenario(p: Point, top: dict, bench: dict, metrics: dict) -> None:
    data = dig(top, "args", "data")
    if data is None:
        data = dig(bench, "config", "requests", "data") or dig(bench, "requests_loader",
                                                                  "data")
    if isinstance(data, list):
        data = ", ".join(str(x) for x in data)
    if data:
        text = redact(str(data))[:200]
        p.scenario["dataset"] = text
        for key, value in _SYNTH.findall(text):
            name = "input_tokens" if key == "prompt_tokens" else "output_tokens"
            p.scenario.setdefault(name, int(value))
    for name, key in (("input_tokens", "prompt_token_count"),
                      ("output_tokens", "output_token_count")):
        mean = finite(dig(metrics, key, "successful", "mean"))
        if name not in p.scenario and mean:
            p.scenario[name] = mean
    profile = dig(top, "args", "profile") or dig(bench, "config", "profile", "type_")
    if isinstance(profile, str):
        p.params["profile"] = profile


def _model(top: dict, bench: dict) -> str | None:
    for path in (("config", "backend", "model"), ("config", "spec", "backend", "model"),
                 ("worker", "backend_model")):
        value = dig(bench, *path)
        if isinstance(value, str) and value:
            return value
    value = dig(top, "args", "model")
    return value if isinstance(value, str) and value else None


def _requests(doc: Doc, bench: dict, at: str) -> list[dict[str, Any]]:
    """Per-request rows: successful ones, then errored ones with ``error`` set."""
    sample = _dict(doc, bench.get("requests"), f"{at}.requests")
    rows: list[dict[str, Any]] = []
    for status in ("successful", "errored"):
        items = sample.get(status)
        if items is None:
            continue
        if not isinstance(items, list):
            raise _err(doc, f"{at}.requests.{status} is a {type(items).__name__}, expected "
                            "a list of requests")
        for j, item in enumerate(items):
            if not isinstance(item, dict):
                raise _err(doc, f"{at}.requests.{status}[{j}] is a {type(item).__name__}, "
                                "expected a request object")
            rows.append(_row(item, status))
    return rows


def _row(item: dict, status: str) -> dict[str, Any]:
    row: dict[str, Any] = {}
    ttft = finite(item.get("time_to_first_token_ms"))
    latency = finite(item.get("request_latency"))
    if latency is None:
        start, end = finite(item.get("request_start_time")), finite(
            item.get("request_end_time"))
        if start is not None and end is not None:
            latency = end - start
    if ttft is not None:
        row["ttft_ms"] = ttft
    if latency is not None:
        row["e2el_ms"] = latency * 1000.0
    for name, key in (("input_tokens", "prompt_tokens"), ("output_tokens", "output_tokens")):
        x = finite(item.get(key))
        if x is not None:
            row[name] = int(x)
    if status == "errored":
        error = item.get("error") or dig(item, "info", "error") or "errored"
        row["error"] = redact(str(error))[:500]
    return row
