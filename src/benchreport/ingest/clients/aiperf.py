"""NVIDIA AIPerf and GenAI-Perf result files (clients "aiperf" and "genai-perf").

Read from content:

- AIPerf ``profile_export_aiperf.json``. Early schema (Oct 2025, seen in a real file):
  ``records``, a dict of metrics keyed by short tags (``ttft``, ``ttst``, ``request_latency``
  …), each ``{tag, unit, header, avg, min, max, p1…p99, std, count}``, plus ``input_config``,
  ``error_summary``, ``start_time``, ``end_time``. Newer schema (not seen in a real file; read
  as the reference describes): the same metric dicts at the top level under long names
  (``time_to_first_token`` …) beside ``schema_version`` / ``aiperf_version``.
- GenAI-Perf ``profile_export_genai_perf.json`` (2024, seen in real files): top-level metric
  dicts ``{unit, avg, p99…p25, min, max, std}`` and a flat ``input_config``.
- The ``profile_export_aiperf.csv`` export: blocks separated by blank lines, a percentile
  table (``Metric,avg,min,max,p1,…``) then ``Metric,Value`` rows, where each metric name
  carries its unit in parentheses ("Time to First Token (ms)"). A point with role
  "duplicate": the same run as the JSON beside it, fully parsed so a CSV alone works.
  GenAI-Perf's CSV has the same layout (told apart by its "(per sec)" units or
  p99-first columns; not seen in a real file).
- AIPerf per-request ``profile_export.jsonl`` (``{metadata, metrics: {name: {value, unit}},
  error}`` per line, seen in a real file): a point with role "requests" holding only the
  per-request rows and the completed / failed counts; error records (e.g. HTTP 499
  cancellations) are rows with ``error`` set, never dropped. Each row keeps ``start_s``
  (``metadata.request_start_ns``, s after the file's first request) and ``itl_ms``
  (``inter_chunk_latency``: the gaps between streamed chunks) where the record has them.

Every latency is converted with its unit field (ns / us / ms / s). Statistics are AIPerf's
own, over successful requests; ``request_count`` counts successful requests and
``error_request_count`` the errored ones.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ...core.errors import ParseError
from .base import Doc, Point, dig, finite, number, rate_value, redact

AIPERF, GENAI_PERF = "aiperf", "genai-perf"

# contract metric -> metric names (new/GenAI-Perf name first, then early AIPerf tags)
_LATENCIES = {
    "ttft": ("time_to_first_token", "ttft"),
    "itl": ("inter_token_latency",),
    "e2el": ("request_latency",),
}
_CODES = {"ttft": "ttft.first-token", "itl": "itl.excl-first", "e2el": "e2el.request"}
# contract count -> metric names whose aggregate (avg) it is
_SCALARS = {
    "duration": ("benchmark_duration",),
    "completed": ("request_count",),
    "failed": ("error_request_count",),
    "request_throughput": ("request_throughput",),
    "output_throughput": ("output_token_throughput",),
    "total_input_tokens": ("total_isl", "total_input_sequence_length"),
    # output sequence length counts every generated token, reasoning included (the same
    # tokens as output_token_throughput); AIPerf's "total_output_tokens" leaves reasoning out
    "total_output_tokens": ("total_osl", "total_output_sequence_length"),
}
_STATS = (("mean", ("avg", "mean")), ("median", ("p50", "median")), ("p90", ("p90",)),
          ("p99", ("p99",)), ("std", ("std", "stddev")))
_TIME_MS = {"ns": 1e-6, "nanoseconds": 1e-6, "us": 1e-3, "µs": 1e-3, "microseconds": 1e-3,
            "ms": 1.0, "milliseconds": 1.0, "s": 1000.0, "sec": 1000.0, "secs": 1000.0,
            "second": 1000.0, "seconds": 1000.0}
_MARKERS = ("time_to_first_token", "request_latency", "inter_token_latency",
            "request_throughput", "output_token_throughput")


# ------------------------------------------------------------------------------ sniff

def sniff(doc: Doc) -> str | None:
    """"aiperf" / "genai-perf" for their JSON, CSV and JSON Lines exports, else None."""
    if doc.kind == "json" and isinstance(doc.value, dict):
        return _json_client(doc.value)
    if doc.kind == "jsonl":
        for _, obj in doc.value[:5]:
            if _is_request_record(obj):
                return AIPERF
        return None
    if doc.kind == "csv":
        return _csv_client(doc.value)
    return None


def _json_client(d: dict) -> str | None:
    records = d.get("records")
    if isinstance(records, dict) and any(_is_metric(v) for v in records.values()):
        return AIPERF
    config = d.get("input_config")
    if _versioned(d) and (isinstance(d.get("error_summary"), list)
                          or isinstance(d.get("error_request_count"), dict)):
        return AIPERF                 # a run whose every request failed has no latency
    if not any(_is_metric(d.get(k)) for k in _MARKERS):
        return None
    if _versioned(d) or (isinstance(config, dict) and "loadgen" in config):
        return AIPERF
    return GENAI_PERF


def _is_metric(entry: Any) -> bool:
    return isinstance(entry, dict) and "unit" in entry


def _versioned(d: dict) -> bool:
    """Newer AIPerf states its version at the top level; GenAI-Perf never does."""
    return "aiperf_version" in d or "schema_version" in d


def _is_request_record(obj: Any) -> bool:
    if not isinstance(obj, dict) or not isinstance(obj.get("metrics"), dict):
        return False
    metrics = obj["metrics"]
    return ("metadata" in obj or "error" in obj) and all(
        isinstance(v, dict) and "value" in v for v in metrics.values())


def _csv_client(text: str) -> str | None:
    first = text.lstrip().split("\n", 1)[0].strip().lower().replace(" ", "")
    if not first.startswith("metric,"):
        return None
    low = text.lower()
    if not any(name in low for name in ("time to first token", "request latency",
                                        "request throughput")):
        return None
    header = first.split(",")
    if "(per sec)" in low or (header[1:5] == ["avg", "min", "max", "p99"]):
        return GENAI_PERF
    return AIPERF


# ------------------------------------------------------------------------------ parse

def parse(doc: Doc) -> list[Point]:
    """The run summary (JSON), its CSV duplicate, or its per-request records (JSON Lines)."""
    client = sniff(doc)
    if doc.kind == "jsonl":
        return [_requests_point(doc)]
    if doc.kind == "csv":
        return [_csv_point(doc, client or AIPERF)]
    return [_json_point(doc, client or AIPERF)]


def _err(doc: Doc, message: str, line: int | None = None) -> ParseError:
    return ParseError(message, path=doc.path, line=line)


def _unit_ms(unit: Any) -> float | None:
    """The factor from ``unit`` to milliseconds, or None for a unit that is not a time."""
    return _TIME_MS.get(str(unit).strip().lower()) if unit is not None else None


def _is_per_second(unit: Any) -> bool:
    text = str(unit or "").strip().lower().replace(" ", "")
    return text.endswith(("/sec", "/s", "/second", "persec", "persecond"))


def _json_point(doc: Doc, client: str) -> Point:
    """A summary JSON of either AIPerf schema or GenAI-Perf's as one point, in steps: the
    metric objects, the counts, the latencies, then what ``input_config`` asked."""
    d = doc.value
    early = isinstance(d.get("records"), dict)
    p = Point(client=client, file=doc.path, where="records" if early else "top level",
              line=None, fields={})
    metrics = _metric_entries(doc, d, early)
    for field_name, names in _SCALARS.items():
        _scalar(doc, p, field_name, _find(metrics, names))
    if "total_output_tokens" not in p.fields:
        _output_from_parts(p, metrics)
    _failures(doc, d, p, _find(metrics, _LATENCIES["e2el"]) is not None)
    if p.fields.get("completed") != 0:          # no request succeeded: no latency
        for metric, names in _LATENCIES.items():
            _latency(doc, p, metric, _find(metrics, names))
    config = d.get("input_config")
    if config is not None and not isinstance(config, dict):
        raise _err(doc, f"input_config is a {type(config).__name__}, expected an object")
    _settings(p, config or {})
    _asked(p, config or {})
    _cancellations(d, p)
    _mean_lengths(p, metrics)
    _start_date(p, d.get("start_time"))
    return p


# name -> (metric entry, its key path in the file)
_Metrics = dict[str, tuple[dict, str]]


def _metric_entries(doc: Doc, d: dict, early: bool) -> _Metrics:
    """The metric objects of either schema: under ``records`` (early AIPerf, where anything
    else there is an error) or at the top level (newer AIPerf, GenAI-Perf)."""
    table, prefix = (d["records"], "records.") if early else (d, "")
    metrics: _Metrics = {}
    for name, entry in table.items():
        if name in ("input_config", "error_summary", "telemetry_stats"):
            continue
        if isinstance(entry, dict) and ("unit" in entry or "avg" in entry):
            metrics[name] = (entry, f"{prefix}{name}")
        elif early and entry is not None:
            raise _err(doc, f"records.{name} is a {type(entry).__name__}, expected a metric "
                            "object with 'unit' and 'avg'")
    if not metrics and not _error_counts(d):
        raise _err(doc, "no metric objects (with 'unit' and 'avg'); expected AIPerf / "
                        "GenAI-Perf metrics such as request_latency, time_to_first_token")
    return metrics


def _find(metrics: _Metrics, names: tuple[str, ...]) -> tuple[dict, str] | None:
    """The first of ``names`` the file has: the schemas name one metric differently."""
    return next((metrics[n] for n in names if n in metrics), None)


def _scalar(doc: Doc, p: Point, field_name: str, hit: tuple[dict, str] | None) -> None:
    """One count or rate from its metric's average; a duration in seconds, a count whole.
    A unit that does not fit the field leaves it out with a warning, never a wrong value."""
    if hit is None:
        return
    entry, at = hit
    value = finite(entry.get("avg", entry.get("value")))
    if value is None:
        return
    unit = entry.get("unit")
    if field_name == "duration":
        factor = _unit_ms(unit)
        if factor is None:
            p.warnings.append(f"{doc.path}: {at} has unit {unit!r}, not a time; ignored")
            return
        value = value * (factor / 1000.0)          # to seconds
    elif field_name.endswith("throughput") and unit is not None and not _is_per_second(unit):
        p.warnings.append(f"{doc.path}: {at} has unit {unit!r}, expected a rate per "
                          "second; ignored")
        return
    if field_name in ("completed", "failed", "total_input_tokens", "total_output_tokens"):
        value = int(round(value))
    p.fields[field_name] = value
    p.sources[field_name] = f"{at}.avg"


def _output_from_parts(p: Point, metrics: _Metrics) -> None:
    """Without an output sequence total: visible output + reasoning tokens."""
    parts = [_find(metrics, (n,)) for n in ("total_output_tokens", "total_reasoning_tokens")]
    values = [finite(h[0].get("avg")) for h in parts if h]
    if parts[0] and values and None not in values:
        p.fields["total_output_tokens"] = int(round(sum(values)))
        p.sources["total_output_tokens"] = " + ".join(f"{h[1]}.avg" for h in parts if h)


def _latency(doc: Doc, p: Point, metric: str, hit: tuple[dict, str] | None) -> None:
    """A latency's statistics in ms, converted with its unit; a unit that is not a time
    leaves them all out with a warning."""
    if hit is None:
        return
    entry, at = hit
    factor = _unit_ms(entry.get("unit"))
    if factor is None:
        p.warnings.append(f"{doc.path}: {at} has unit {entry.get('unit')!r}, not a "
                          "time unit (ns/us/ms/s); its statistics are left out")
        return
    for stat, keys in _STATS:
        key = next((k for k in keys if finite(entry.get(k)) is not None), None)
        if key is not None:
            p.fields[f"{stat}_{metric}_ms"] = finite(entry[key]) * factor
            p.sources[f"{stat}_{metric}_ms"] = f"{at}.{key}"
            p.definitions[metric] = _CODES[metric]


def _mean_lengths(p: Point, metrics: _Metrics) -> None:
    """The mean input and output lengths sent, where input_config states no target."""
    for name, names in (("input_tokens", ("input_sequence_length", "isl")),
                        ("output_tokens", ("output_sequence_length", "osl"))):
        hit = _find(metrics, names)
        mean = finite(hit[0].get("avg")) if hit else None
        if name not in p.scenario and mean:
            p.scenario[name] = mean


def _start_date(p: Point, start: Any) -> None:
    """The run's date from ``start_time``, when it is an ISO time."""
    if isinstance(start, str):
        try:
            p.date = datetime.fromisoformat(start).isoformat()
        except ValueError:
            pass


def _failures(doc: Doc, d: dict, p: Point, timed: bool) -> None:
    """Failed requests from ``error_summary`` when there is no error count; and a run
    whose every request failed (no request count, no latency: ``timed`` False) has
    completed 0 and says so."""
    if "failed" not in p.fields and isinstance(d.get("error_summary"), list):
        p.fields["failed"] = _error_counts(d)
        p.sources["failed"] = "error_summary[].count"
    if "completed" not in p.fields and p.fields.get("failed") and not timed:
        # every request failed: AIPerf then writes only the error count and summary
        p.fields["completed"] = 0
        p.sources["completed"] = (f"{p.sources['failed']} (no request_count and no "
                                  "request_latency: no request succeeded)")
    if p.fields.get("completed") == 0 and p.fields.get("failed"):
        kinds = _error_kinds(d)
        p.warnings.append(f"{doc.path}: all {p.fields['failed']} requests failed"
                          + (f" ({kinds})" if kinds else "")
                          + "; the run has no latency")


# how AIPerf records a request it cancelled on purpose (--request-cancellation-rate): an
# error of HTTP code 499, type RequestCancellationError
CANCEL_CODE, CANCEL_TYPE = 499, "RequestCancellationError"


def is_cancellation(details: Any) -> bool:
    """Whether an error (``error_summary[].error_details`` or a request's ``error``) is
    AIPerf's own cancellation of the request."""
    if not isinstance(details, dict):
        return False
    return details.get("type") == CANCEL_TYPE or finite(details.get("code")) == CANCEL_CODE


def _asked(p: Point, config: dict) -> None:
    """What bounded the run: the request count asked (``loadgen.request_count``) or the
    duration (``loadgen.benchmark_duration``, else ``input_config.benchmark_duration``, s),
    and the share of requests asked to be cancelled (%)."""
    loadgen = config.get("loadgen") if isinstance(config.get("loadgen"), dict) else {}
    for name, key in (("requests_asked", "request_count"), ("duration_asked",
                                                            "benchmark_duration"),
                      ("cancellation_rate", "request_cancellation_rate")):
        for where, table in (("input_config.loadgen", loadgen), ("input_config", config)):
            value = finite(table.get(key)) if not isinstance(table.get(key), bool) else None
            if value is not None and value > 0:
                p.fields[name] = int(value) if name == "requests_asked" else value
                p.sources[name] = f"{where}.{key}"
                break


def _cancellations(d: dict, p: Point) -> None:
    """The failed requests that were the cancellations asked: ``error_summary`` entries of
    AIPerf's cancellation error, counted only when a cancellation rate was asked."""
    entries = d.get("error_summary")
    if not p.fields.get("cancellation_rate") or not isinstance(entries, list):
        return
    counts = [finite(e.get("count")) for e in entries
              if isinstance(e, dict) and is_cancellation(e.get("error_details"))]
    p.fields["cancelled"] = int(sum(c for c in counts if c is not None))
    p.sources["cancelled"] = (f"error_summary[].count (code {CANCEL_CODE}, "
                              f"{CANCEL_TYPE})")


def _error_counts(d: dict) -> int:
    """The requests ``error_summary`` counts (0 when it lists none)."""
    entries = d.get("error_summary") if isinstance(d.get("error_summary"), list) else []
    counts = [finite(e.get("count")) for e in entries if isinstance(e, dict)]
    return int(sum(c for c in counts if c is not None))


def _error_kinds(d: dict) -> str:
    """"5 TimeoutError, 2 500 Internal Server Error" from ``error_summary``."""
    parts = []
    for e in d.get("error_summary") or []:
        details = e.get("error_details") if isinstance(e, dict) else None
        if not isinstance(details, dict):
            continue
        name = " ".join(str(details[k]) for k in ("code", "type") if details.get(k) is not None)
        count = finite(e.get("count"))
        if name and count is not None:
            parts.append(f"{int(count)} {redact(name)[:80]}")
    return ", ".join(parts)


def _settings(p: Point, config: dict) -> None:
    """Load, model, scenario targets and settings from ``input_config`` (never its
    ``cli_command`` or endpoint URL)."""
    loadgen = config.get("loadgen") if isinstance(config.get("loadgen"), dict) else {}
    _load(p, config, loadgen)
    models = (dig(config, "endpoint", "model_names") or config.get("model_names")
              or config.get("model") or config.get("formatted_model_name"))
    if isinstance(models, str):
        models = [models]
    if isinstance(models, list) and models:
        p.model = ", ".join(str(m) for m in models)
    _targets(p, config)
    if config.get("service_kind") == "triton" and isinstance(config.get("backend"), str):
        p.engine = config["backend"]            # the engine Triton serves (vllm, tensorrtllm)
    _params(p, config, loadgen)


def _pick(config: dict, loadgen: dict, key: str) -> tuple[Any, str]:
    """A load setting and where it was: AIPerf keeps it under ``loadgen``, GenAI-Perf under
    ``perf_analyzer.stimulus`` or at the top of ``input_config``."""
    stimulus = dig(config, "perf_analyzer", "stimulus")
    stimulus = stimulus if isinstance(stimulus, dict) else {}
    for where, table in (("input_config.loadgen", loadgen),
                         ("input_config.perf_analyzer.stimulus", stimulus),
                         ("input_config", config)):
        if table.get(key) is not None:
            return table[key], f"{where}.{key}"
    return None, ""


def _load(p: Point, config: dict, loadgen: dict) -> None:
    """A request rate (with the concurrency that capped it, and its arrival pattern), else
    a concurrency."""
    conc, conc_at = _pick(config, loadgen, "concurrency")
    rate, rate_at = _pick(config, loadgen, "request_rate")
    conc = finite(conc)
    rate = rate_value(rate)
    mode = str(loadgen.get("request_rate_mode") or loadgen.get("arrival_pattern")
               or config.get("request_distribution") or "").lower()
    arrival = next((a for a in ("poisson", "constant", "gamma") if a in mode), None)
    if rate is not None:
        p.load = {"kind": "rate", "max_concurrency": int(conc) if conc else None,
                  "request_rate": rate, "arrival": arrival}
        p.fields["request_rate"] = rate
        p.sources["request_rate"] = rate_at
        p.fields["max_concurrency"] = int(conc) if conc else None
        p.sources["max_concurrency"] = conc_at or rate_at
    elif conc:
        p.load = {"kind": "concurrency", "max_concurrency": int(conc), "request_rate": None,
                  "arrival": None}
        p.fields["max_concurrency"] = int(conc)
        p.sources["max_concurrency"] = conc_at


def _targets(p: Point, config: dict) -> None:
    """The input and output lengths asked (each schema names them differently) and the
    dataset, its path redacted and cut short."""
    prompt = dig(config, "input", "prompt") or {}
    for name, value in (
            ("input_tokens", dig(prompt, "input_tokens", "mean")
             or config.get("synthetic_input_tokens_mean")
             or dig(config, "input", "synthetic_tokens", "mean")),
            ("output_tokens", dig(prompt, "output_tokens", "mean")
             or config.get("output_tokens_mean")
             or dig(config, "input", "output_tokens", "mean"))):
        x = finite(value)
        if x:
            p.scenario[name] = x
    dataset = (config.get("input_dataset") or dig(config, "input", "public_dataset")
               or dig(config, "input", "file") or config.get("prompt_source"))
    if isinstance(dataset, str) and dataset:
        p.scenario["dataset"] = redact(dataset)[:200]


def _params(p: Point, config: dict, loadgen: dict) -> None:
    """The settings that tell runs apart, where the file gives them as plain values."""
    streaming = dig(config, "endpoint", "streaming")
    for name, value in (("request_count", loadgen.get("request_count")),
                        ("num_prompts", config.get("num_prompts")),
                        ("request_cancellation_rate", loadgen.get("request_cancellation_rate")),
                        ("endpoint_type", dig(config, "endpoint", "type")
                         or config.get("endpoint_type")),
                        ("streaming", streaming if streaming is not None
                         else config.get("streaming")),
                        ("measurement_interval", config.get("measurement_interval"))):
        if isinstance(value, bool | int | float | str) and value is not None:
            p.params[name] = value


# -------------------------------------------------------------------------------- CSV

# normalised CSV metric name -> JSON metric name
_CSV_NAMES = {
    "time to first token": "time_to_first_token", "request latency": "request_latency",
    "inter token latency": "inter_token_latency", "benchmark duration": "benchmark_duration",
    "request count": "request_count", "error request count": "error_request_count",
    "request throughput": "request_throughput",
    "output token throughput": "output_token_throughput",
    "total input sequence length": "total_isl", "total output sequence length": "total_osl",
    "total output tokens": "total_output_tokens",
    "total reasoning tokens": "total_reasoning_tokens",
    "input sequence length": "input_sequence_length",
    "output sequence length": "output_sequence_length",
}


def _split_label(label: str) -> tuple[str, str | None]:
    """"Time to First Token (ms)" -> ("time to first token", "ms")."""
    label = label.strip()
    unit = None
    if label.endswith(")") and "(" in label:
        label, unit = label[: label.rindex("(")].strip(), label[label.rindex("(") + 1:-1]
    return " ".join(label.lower().split()), unit


def _csv_rows(doc: Doc) -> Iterator[list[str]]:
    """The rows of a CSV export; one the csv module cannot read (a cell over its size
    limit) is an error naming its line."""
    rows = csv.reader(io.StringIO(doc.value))
    while True:
        try:
            yield next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _err(doc, f"not a CSV row ({exc})", line=rows.line_num) from None


def _csv_point(doc: Doc, client: str) -> Point:
    """The CSV export read into the same metric dicts as the JSON, then parsed alike."""
    metrics: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    header: list[str] | None = None               # None: the next row is a block's header
    for n, row in enumerate(_csv_rows(doc), start=1):
        if not any(cell.strip() for cell in row):
            header = None                          # a blank line ends a block
            continue
        if header is None:
            # a "Metric,…" table, or another block (GPU telemetry …) that is skipped whole
            header = [c.strip().lower() for c in row] if row[0].strip().lower() == "metric" \
                else []
            continue
        if not header:
            continue
        name, unit = _split_label(row[0])
        key = _CSV_NAMES.get(name)
        if key is None:
            continue                               # telemetry and metrics not in the contract
        entry = metrics.setdefault(key, {"unit": unit, "label": row[0].strip()})
        lines.setdefault(key, n)
        for col, cell in zip(header[1:], row[1:], strict=False):
            value = number(cell)
            if value is None and cell.strip():
                raise _err(doc, f"{row[0].strip()!r}: {cell.strip()!r} under {col!r} is not "
                                "a number", line=n)
            entry["avg" if col == "value" else col] = value
    if not metrics:
        raise _err(doc, "no known metric rows; expected AIPerf / GenAI-Perf rows such as "
                        "'Request Latency (ms)'", line=1)
    sub = Doc(doc.path, doc.name, "json", metrics, doc.text)
    p = _json_point(sub, client)
    p.where, p.line, p.role = "line 1", 1, "duplicate"
    p.sources = {f: _csv_source(src, metrics, lines) for f, src in p.sources.items()}
    return p


def _csv_source(src: str, metrics: dict[str, dict], lines: dict[str, int]) -> str:
    """"time_to_first_token.p99" -> "line 10: Time to First Token (ms) [p99]"."""
    parts = []
    for piece in src.split(" + "):
        key, _, col = piece.partition(".")
        if key in metrics:
            col = "Value" if col == "avg" and "p50" not in metrics[key] else col
            parts.append(f"line {lines[key]}: {metrics[key]['label']} [{col}]")
        else:
            parts.append(piece)
    return " + ".join(parts)


# ------------------------------------------------------------------------ JSON Lines

def _requests_point(doc: Doc) -> Point:
    rows: list[tuple[int, Any]] = doc.value
    first = rows[0][0] if rows else None
    p = Point(client=AIPERF, file=doc.path, where=f"lines {first}–{rows[-1][0]}" if rows
              else "", line=first, fields={}, role="requests")
    warmup = 0
    sent: list[Any] = []
    for n, obj in rows:
        metrics = obj.get("metrics") if isinstance(obj, dict) else None
        if not isinstance(obj, dict) or not isinstance(metrics or {}, dict) or (
                metrics is None and not obj.get("error")):
            raise _err(doc, "expected an AIPerf request record {metadata, metrics, error} "
                            "with a 'metrics' object or an 'error'", line=n)
        if dig(obj, "metadata", "credit_phase") == "warmup":
            warmup += 1
            continue
        p.requests.append(_request_row(metrics or {}, obj.get("error")))
        sent.append(dig(obj, "metadata", "request_start_ns"))
    _start_offsets(p.requests, sent)
    failed = sum(1 for r in p.requests if r.get("error"))
    p.fields["completed"] = len(p.requests) - failed
    p.fields["failed"] = failed
    p.sources["completed"] = "lines[] (the records without an error)"
    p.sources["failed"] = "lines[] (the records with an error)"
    if warmup:
        p.warnings.append(f"{doc.path}: {warmup} warm-up record(s) (credit_phase 'warmup') "
                          "are not counted")
    return p


def _start_offsets(requests: list[dict[str, Any]], sent: list[Any]) -> None:
    """Each request's ``start_s``: when AIPerf sent it (``metadata.request_start_ns``), in
    seconds after the earliest request of the file; none when a record lacks the time."""
    if not sent or not all(isinstance(x, int | float) for x in sent):
        return
    first = min(sent)
    for row, ns in zip(requests, sent, strict=True):
        row["start_s"] = (ns - first) / 1e9


def _chunk_gaps(entry: Any) -> list[float] | None:
    """A record's ``inter_chunk_latency`` (the gaps between streamed chunks) in ms, or None
    where it is missing or not a list of times."""
    factor = _unit_ms(entry.get("unit")) if isinstance(entry, dict) else None
    values = entry.get("value") if factor is not None else None
    if not isinstance(values, list) or any(finite(x) is None for x in values):
        return None
    return [float(x) * factor for x in values]


def _request_row(metrics: dict, error: Any) -> dict[str, Any]:
    row: dict[str, Any] = {}

    def value(*names: str) -> tuple[float | None, Any]:
        for name in names:
            entry = metrics.get(name)
            if isinstance(entry, dict) and finite(entry.get("value")) is not None:
                return finite(entry["value"]), entry.get("unit")
        return None, None

    for name, names in (("ttft_ms", ("time_to_first_token", "ttft")),
                        ("e2el_ms", ("request_latency",))):
        x, unit = value(*names)
        factor = _unit_ms(unit)
        if x is not None and factor is not None:
            row[name] = x * factor
    gaps = _chunk_gaps(metrics.get("inter_chunk_latency"))
    if gaps is not None:
        row["itl_ms"] = gaps
    for name, names in (("input_tokens", ("input_sequence_length", "isl")),
                        ("output_tokens", ("output_sequence_length", "osl",
                                           "output_token_count"))):
        x, _ = value(*names)
        if x is not None:
            row[name] = int(x)
    if error:
        if isinstance(error, dict):
            text = " ".join(str(error[k]) for k in ("code", "type") if error.get(k) is not None)
            if error.get("message"):
                text = f"{text}: {error['message']}" if text else str(error["message"])
        else:
            text = str(error)
        row["error"] = redact(text or "error")[:500]
    return row
