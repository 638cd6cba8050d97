"""genai-bench (sgl-project) experiment folders (client "genai-bench").

Read from content (seen in real files of ``benchmark_version`` 0.0.2):

- a per-scenario result file (``<scenario>_<task>_num_concurrency_<N>_time_<T>s.json``):
  ``aggregated_metrics`` (``scenario``, ``num_concurrency``, ``run_duration``,
  ``mean_*_throughput_tokens_per_s``, ``requests_per_second``, ``num_completed_requests``,
  ``num_error_requests``, ``error_codes_frequency`` and ``stats`` per metric with
  min/max/mean/stddev/sum/p25…p99) and ``individual_request_metrics`` (one dict per
  request) → one point. Times are in seconds unless a ``*_time_unit`` key ("ms") says
  otherwise (that key was not seen in a real file).
- ``experiment_metadata.json`` (``cmd``, ``model``, ``api_backend``, ``traffic_scenario``,
  ``server_engine``, ``server_gpu_count`` possibly a string …): recognised, but it holds no
  benchmark point, so `parse` returns []; `experiment` returns its useful fields. The
  ``cmd`` is never read: people put API keys on the command line.

genai-bench's TPOT is (E2E − TTFT) ÷ (output tokens − 1) per request, the vLLM definition.

Without streaming (``--disable-streaming``) genai-bench cannot see the first token and sets
it 1 ms after the request started, so every TTFT is 0.001 s and TPOT is derived from that
placeholder. A file is read as not streamed when it says so (a ``disable_streaming`` /
``stream`` / ``streaming`` setting, at the top level, in ``aggregated_metrics`` or in
``additional_request_params``) or when every TTFT it records is that placeholder; its TTFT
and TPOT are then not measured (left out, with a warning saying why).
"""

from __future__ import annotations

import re
from typing import Any

from ...core.errors import ParseError
from .base import Doc, Point, dig, finite, redact

CLIENT = "genai-bench"
DEFINITIONS: dict[str, str] = {}       # genai-bench's definitions are the shared ones

_LATENCIES = {"ttft": "ttft", "tpot": "tpot", "e2el": "e2e_latency"}
_CODES = {"ttft": "ttft.first-token", "tpot": "tpot.excl-first", "e2el": "e2el.request"}
_STATS = (("mean", "mean"), ("median", "p50"), ("p90", "p90"), ("p99", "p99"),
          ("std", "stddev"))
_TIME_MS = {"s": 1000.0, "sec": 1000.0, "second": 1000.0, "seconds": 1000.0, "ms": 1.0,
            "millisecond": 1.0, "milliseconds": 1.0}
# experiment_metadata.json fields kept for a run description (never cmd or auth_config)
_EXPERIMENT_TEXT = ("model", "api_backend", "api_model_name", "server_model_tokenizer",
                    "task", "server_engine", "server_version", "server_gpu_type",
                    "benchmark_version", "iteration_type")


def sniff(doc: Doc) -> str | None:
    """"genai-bench" for a scenario result or an ``experiment_metadata.json``."""
    d = doc.value
    if doc.kind != "json" or not isinstance(d, dict):
        return None
    if isinstance(d.get("aggregated_metrics"), dict) or (
            isinstance(d.get("individual_request_metrics"), list)
            and "aggregated_metrics" in d):
        return CLIENT
    if "traffic_scenario" in d and any(k in d for k in (
            "benchmark_version", "num_concurrency", "api_backend", "server_engine")):
        return CLIENT
    return None


def parse(doc: Doc) -> list[Point]:
    """One point for a scenario file; [] for ``experiment_metadata.json``."""
    d = doc.value
    if "aggregated_metrics" not in d:
        return []                           # experiment metadata: see experiment()
    return [_point(doc, d)]


def experiment(doc: Doc) -> dict[str, Any]:
    """The fields of ``experiment_metadata.json`` useful for a run description.

    Text goes through `base.redact`; ``cmd`` and ``auth_config`` are never read.
    """
    d = doc.value if isinstance(doc.value, dict) else {}
    out: dict[str, Any] = {}
    for key in _EXPERIMENT_TEXT:
        value = d.get(key)
        if isinstance(value, str) and value.strip():
            out[key] = redact(value.strip())
    count = finite(d.get("server_gpu_count"))
    if count is not None:
        out["server_gpu_count"] = int(count)
    scenarios = d.get("traffic_scenario")
    if isinstance(scenarios, str):
        scenarios = [scenarios]
    if isinstance(scenarios, list):
        out["traffic_scenario"] = [redact(str(s)) for s in scenarios]
    levels = d.get("num_concurrency")
    if isinstance(levels, int | float) and not isinstance(levels, bool):
        levels = [levels]
    if isinstance(levels, list):
        out["num_concurrency"] = [int(x) for x in levels if finite(x) is not None]
    return out


def _err(doc: Doc, message: str) -> ParseError:
    return ParseError(message, path=doc.path)


def _time_factor(doc: Doc, d: dict, agg: dict) -> tuple[float, str | None]:
    """Factor from the file's time unit to ms: seconds unless a ``*_time_unit`` key says."""
    for table, prefix in ((agg, "aggregated_metrics."), (d, "")):
        for key, value in table.items():
            if key.endswith("time_unit") and isinstance(value, str):
                factor = _TIME_MS.get(value.strip().lower())
                if factor is None:
                    raise _err(doc, f"{prefix}{key} is {value!r}; expected 's' or 'ms'")
                return factor, f"{prefix}{key}"
    return 1000.0, None


def _point(doc: Doc, d: dict) -> Point:
    agg = d.get("aggregated_metrics")
    if not isinstance(agg, dict):
        raise _err(doc, "'aggregated_metrics' is not an object; expected genai-bench's "
                        "aggregated metrics")
    stats = agg.get("stats", {})
    if not isinstance(stats, dict):
        raise _err(doc, "aggregated_metrics.stats is not an object; expected one dict of "
                        "min/max/mean/stddev/p25…p99 per metric")
    factor, unit_key = _time_factor(doc, d, agg)
    p = Point(client=CLIENT, file=doc.path, where="aggregated_metrics", line=None, fields={})

    def put(name: str, value: Any, src: str, cast=float) -> None:
        x = finite(value)
        if x is not None:
            p.fields[name] = cast(x)
            p.sources[name] = src

    requests = _requests(doc, d, factor)
    put("duration", agg.get("run_duration"), "aggregated_metrics.run_duration")
    put("completed", agg.get("num_completed_requests"),
        "aggregated_metrics.num_completed_requests", int)
    put("failed", agg.get("num_error_requests"), "aggregated_metrics.num_error_requests", int)
    errors = agg.get("error_codes_frequency")
    if "failed" not in p.fields and isinstance(errors, dict):
        p.fields["failed"] = int(sum(finite(v) or 0 for v in errors.values()))
        p.sources["failed"] = "aggregated_metrics.error_codes_frequency"
    if requests:
        bad = sum(1 for r in requests if r.get("error"))
        if "completed" not in p.fields:
            p.fields["completed"] = len(requests) - bad
            p.sources["completed"] = ("individual_request_metrics[].error_code (requests "
                                      "without an error)")
        if "failed" not in p.fields:
            p.fields["failed"] = bad
            p.sources["failed"] = ("individual_request_metrics[].error_code (requests "
                                   "with an error)")
    put("request_throughput", agg.get("requests_per_second"),
        "aggregated_metrics.requests_per_second")
    put("output_throughput", agg.get("mean_output_throughput_tokens_per_s"),
        "aggregated_metrics.mean_output_throughput_tokens_per_s")
    put("total_input_tokens", dig(stats, "num_input_tokens", "sum"),
        "aggregated_metrics.stats.num_input_tokens.sum", int)
    put("total_output_tokens", dig(stats, "num_output_tokens", "sum"),
        "aggregated_metrics.stats.num_output_tokens.sum", int)

    not_streamed = _not_streamed(d, agg, stats, requests, factor)
    if not_streamed:
        p.params["streaming"] = False
        p.warnings.append(
            f"{doc.path}: the requests were not streamed ({not_streamed}); genai-bench then "
            "writes a 1 ms placeholder as TTFT, so TTFT and TPOT were not measured and are "
            "left out")
        for row in requests:
            row.pop("ttft_ms", None)
    if p.fields.get("completed") != 0:           # no statistics when nothing succeeded
        for metric, key in _LATENCIES.items():
            if not_streamed and metric in ("ttft", "tpot"):
                continue
            entry = stats.get(key)
            if entry is None:
                continue
            if not isinstance(entry, dict):
                raise _err(doc, f"aggregated_metrics.stats.{key} is not an object; expected "
                                "min/max/mean/stddev/p25…p99")
            for stat, name in _STATS:
                x = finite(entry.get(name))
                if x is not None:
                    p.fields[f"{stat}_{metric}_ms"] = x * factor
                    p.sources[f"{stat}_{metric}_ms"] = f"aggregated_metrics.stats.{key}.{name}"
                    p.definitions[metric] = _CODES[metric]
    if unit_key:
        p.params["time_unit_key"] = unit_key

    conc = finite(agg.get("num_concurrency"))
    if conc:
        p.load = {"kind": "concurrency", "max_concurrency": int(conc), "request_rate": None,
                  "arrival": None}
        p.fields["max_concurrency"] = int(conc)
        p.sources["max_concurrency"] = "aggregated_metrics.num_concurrency"
    for name in ("batch_size", "iteration_type"):
        value = agg.get(name)
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            p.params[name] = value

    scenario = agg.get("scenario")
    if isinstance(scenario, str) and scenario:
        p.scenario.update(scenario_tokens(scenario))
        p.scenario["distribution"] = redact(scenario)
    for name, key in (("input_tokens", "num_input_tokens"),
                      ("output_tokens", "num_output_tokens")):
        mean = finite(dig(stats, key, "mean"))
        if name not in p.scenario and mean:
            p.scenario[name] = mean
    # not in the 0.0.2 scenario files, but read when a version writes them there
    for table in (agg, d):
        if p.engine is None and isinstance(table.get("server_engine"), str):
            p.engine = redact(table["server_engine"].strip().lower()) or None
        if p.model is None and isinstance(table.get("model"), str):
            p.model = redact(table["model"].strip()) or None
    p.requests = requests
    return p


_PLACEHOLDER_S = 0.001            # genai-bench's TTFT when it does not stream
_STREAM_KEYS = (("disable_streaming", True), ("stream", False), ("streaming", False))


def _not_streamed(d: dict, agg: dict, stats: dict, requests: list[dict],
                  factor: float) -> str | None:
    """Why the file shows its requests were not streamed, or None."""
    for table, prefix in ((d, ""), (agg, "aggregated_metrics."),
                          (d.get("additional_request_params"), "additional_request_params."),
                          (agg.get("additional_request_params"),
                           "aggregated_metrics.additional_request_params.")):
        if not isinstance(table, dict):
            continue
        for key, flag in _STREAM_KEYS:
            if table.get(key) is flag:
                return f"{prefix}{key} is {str(flag).lower()}"
    placeholder = _PLACEHOLDER_S * 1000.0 / factor          # in the file's unit
    ttft = stats.get("ttft") if isinstance(stats.get("ttft"), dict) else {}
    bounds = [finite(ttft.get(k)) for k in ("min", "max")]
    if None not in bounds and all(abs(b - placeholder) <= 1e-6 * 1000.0 / factor
                                  for b in bounds):
        return f"every TTFT is {placeholder:g} {'s' if factor == 1000.0 else 'ms'}"
    seen = [r["ttft_ms"] for r in requests if r.get("ttft_ms") is not None]
    if seen and all(abs(x - _PLACEHOLDER_S * 1000.0) <= 1e-3 for x in seen):
        return "every request's TTFT is 1 ms"
    return None


_NUM = r"\s*(\d+(?:\.\d+)?)\s*"
_PAIR = re.compile(rf"\({_NUM},{_NUM}\)")


def scenario_tokens(text: str) -> dict[str, float | int]:
    """Target input / output tokens of a genai-bench traffic scenario.

    N(mean_in,std_in)/(mean_out,std_out) gives the means, D(in,out) the fixed lengths,
    U(min_in,max_in)/(min_out,max_out) the midpoints; other scenarios (embeddings, images,
    dataset) give nothing.

    >>> scenario_tokens("N(2000,200)/(200,20)"), scenario_tokens("D(100,1000)")
    ({'input_tokens': 2000, 'output_tokens': 200}, {'input_tokens': 100, 'output_tokens': 1000})
    >>> scenario_tokens("U(50,150)/(10,30)"), scenario_tokens("E(1024)")
    ({'input_tokens': 100, 'output_tokens': 20}, {})
    """
    text = text.strip()
    kind = text[:1].upper()
    pairs = [(float(a), float(b)) for a, b in _PAIR.findall(text)]

    def whole(x: float) -> float | int:
        return int(x) if x.is_integer() else x

    if kind == "D" and len(pairs) == 1:
        return {"input_tokens": whole(pairs[0][0]), "output_tokens": whole(pairs[0][1])}
    if kind == "N" and len(pairs) == 2:
        return {"input_tokens": whole(pairs[0][0]), "output_tokens": whole(pairs[1][0])}
    if kind == "U" and len(pairs) == 2:
        return {"input_tokens": whole(sum(pairs[0]) / 2), "output_tokens":
                whole(sum(pairs[1]) / 2)}
    return {}


def _requests(doc: Doc, d: dict, factor: float) -> list[dict[str, Any]]:
    items = d.get("individual_request_metrics")
    if items is None:
        return []
    if not isinstance(items, list):
        raise _err(doc, "'individual_request_metrics' is not a list; expected one object per "
                        "request")
    rows = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _err(doc, f"individual_request_metrics[{i}] is a {type(item).__name__}, "
                            "expected a request object")
        row: dict[str, Any] = {}
        for name, key in (("ttft_ms", "ttft"), ("e2el_ms", "e2e_latency")):
            x = finite(item.get(key))
            if x is not None:
                row[name] = x * factor
        for name, key in (("input_tokens", "num_input_tokens"),
                          ("output_tokens", "num_output_tokens")):
            x = finite(item.get(key))
            if x is not None:
                row[name] = int(x)
        code, message = item.get("error_code"), item.get("error_message")
        if code not in (None, "", 0, 200) or message:
            text = " ".join(str(x) for x in (code, message) if x not in (None, ""))
            row["error"] = redact(text)[:500]
        rows.append(row)
    return rows
