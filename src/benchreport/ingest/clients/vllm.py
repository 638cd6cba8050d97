"""vLLM's serving benchmark results: ``vllm bench serve`` / ``benchmark_serving.py``,
``vllm bench sweep`` and the nightly CI's ``benchmark_results.json`` aggregate.

Clients:

* ``vllm-bench-serve``: one ``--save-result`` JSON object (``where`` "$"); several appended
  with ``--append-result`` (JSON Lines, one point per line); a ``vllm bench sweep``
  ``run=N.json`` (the same payload plus the sweep parameters, e.g. ``run_number``,
  ``max_num_seqs``, kept in ``params``) and its ``summary.json`` (a JSON array of those
  payloads, ``where`` "[i]"). Older ``benchmark_serving.py`` files (≈0.6–0.8) have the same
  shape, sometimes with fewer keys, ``p95_*`` beside ``p99_*`` or the misspelt key
  ``"request_goodput:"``. With ``--save-detailed`` (always before ≈0.9) the per-request
  lists become `Point.requests` rows (seconds converted to ms).
* ``vllm-nightly-aggregate``: rows of display-name columns ("Test name", "Request rate
  (req/s)", "TTFT (ms)", …), a bare latency column being the median. Read as a list of rows,
  a pandas ``to_json``/``to_dict`` table in the columns, index, split or table orient, or
  such tables under section keys (``{"serving": …, "latency": …, "throughput": …}``; the
  latency/throughput tables are vLLM's offline benchmarks and are left out).

The shared pieces (`records`, `flavour`, `serving_point`, …) are used by ``sglang.py`` too.

>>> flavour({"date": "20250101-120000", "num_prompts": 8, "duration": 2.0, "completed": 8})
'vllm'
>>> flavour({"dataset_name": "random", "duration": 2.0, "completed": 8,
...          "mean_e2e_latency_ms": 900.0})
'sglang'
>>> iso_date("20250507-100754")
'2025-05-07T10:07:54'
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter
from typing import Any

from ...core import jsontext
from ...core.errors import ParseError
from . import offline
from .base import METRICS, STATS, Doc, Point, number, rate_value, redact

CLIENT = "vllm-bench-serve"
NIGHTLY = "vllm-nightly-aggregate"
# Both clients define the four latencies the same way (base.DEFINITIONS).
DEFINITIONS = {"ttft": "ttft.first-token", "tpot": "tpot.excl-first", "itl": "itl.per-chunk",
               "e2el": "e2el.request"}
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
VLLM_NAMES = {m: m for m in LATENCY_METRICS}
# SGLang spells end-to-end latency `e2e_latency`; vLLM `e2el`.
SGLANG_NAMES = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e_latency"}

# Keys that tell the two clients' records apart. vLLM spells e2e `e2el`, SGLang
# `e2e_latency`; beyond that each writes a few keys the other never does.
_VLLM_MARKERS = ("date", "model_id", "tokenizer_id", "num_prompts", "endpoint_type",
                 "burstiness", "total_token_throughput", "request_goodput", "request_goodput:",
                 "label", "rtfx")
_SGLANG_MARKERS = ("dataset_name", "sharegpt_output_len", "random_input_len",
                   "random_output_len", "random_range_ratio", "server_info",
                   "total_output_tokens_retokenized", "total_throughput", "input_throughput",
                   "accept_length", "tag", "successful_requests", "benchmark_duration_s",
                   "concurrency", "total_input_text_tokens")
# Top-level keys of other clients' files (GuideLLM, AIPerf/GenAI-Perf, genai-bench, llmperf).
_FOREIGN = ("benchmarks", "aggregated_metrics", "individual_request_metrics", "records",
            "input_config", "results_ttft_s_mean", "results_num_completed_requests")
_STAT_KEY = re.compile(r"^(?:mean|median|std|min|max|p\d+(?:\.\d+)?)_(\w+)_ms$")
_SHAPE_KEYS = ("duration", "completed", "benchmark_duration_s", "successful_requests",
               "request_throughput", "output_throughput")


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def flavour(rec: Any) -> str | None:
    """"vllm" or "sglang" for a serving-result record of that client, else None."""
    if not isinstance(rec, dict) or any(k in rec for k in _FOREIGN) or offline.tool(rec):
        return None
    if not (any(_is_num(rec.get(k)) for k in _SHAPE_KEYS) or any(
            _STAT_KEY.match(k) and _is_num(v) for k, v in rec.items() if isinstance(k, str))):
        return None
    keys = [k for k in rec if isinstance(k, str)]
    if any(k.endswith("_e2e_latency_ms") for k in keys):
        return "sglang"
    if any(k.endswith("_e2el_ms") for k in keys):
        return "vllm"
    v = sum(k in rec for k in _VLLM_MARKERS)
    s = sum(k in rec for k in _SGLANG_MARKERS)
    if v == s == 0:
        return None
    return "vllm" if v >= s else "sglang"


def first_line(text: str) -> int:
    """The 1-based line where a JSON document starts (after leading blank lines)."""
    return 1 + text[: len(text) - len(text.lstrip())].count("\n")


def element_lines(text: str) -> list[int]:
    """The 1-based line where each element of a top-level JSON array starts."""
    start = len(text) - len(text.lstrip())
    if text[start: start + 1] != "[":
        return []
    decoder, out, i, line, seen = jsontext.decoder(), [], start + 1, 1, 0
    try:
        while True:
            while i < len(text) and text[i] in " \t\r\n,":
                i += 1
            if i >= len(text) or text[i] == "]":
                return out
            line += text.count("\n", seen, i)
            seen = i
            out.append(line)
            _, i = decoder.raw_decode(text, i)
    except json.JSONDecodeError:
        return out


def records(doc: Doc) -> list[tuple[str, int | None, Any]]:
    """Every record of a serving-result file: ``(where, line, object)``."""
    if doc.kind == "jsonl":
        return [(f"line {line}", line, obj) for line, obj in doc.value]
    if doc.kind != "json":
        return []
    if isinstance(doc.value, list):
        lines = element_lines(doc.text)
        return [(f"[{i}]", lines[i] if i < len(lines) else None, obj)
                for i, obj in enumerate(doc.value)]
    line = first_line(doc.text)
    one_line = "\n" not in doc.text.strip()
    return [(f"line {line}" if one_line and doc.kind == "json" and _appended(doc) else "$",
             line, doc.value)]


def _appended(doc: Doc) -> bool:
    # SGLang appends one record per line, so a one-record file is still "line 1"
    return flavour(doc.value) == "sglang"


def claims(doc: Doc, which: str) -> bool:
    """Whether ``which`` ("vllm"/"sglang") writes most of the file's result records."""
    found = Counter(f for f in (flavour(obj) for _, _, obj in records(doc)) if f)
    if not found:
        return False
    top = max(found.values())
    leaders = [f for f in ("vllm", "sglang") if found.get(f) == top]
    return leaders[0] == which


# ---------------------------------------------------------------------------------------
# One serving-result record → Point (shared with sglang.py)

def locator(doc: Doc, where: str, line: int | None) -> str:
    return f"{doc.path}:{line}" if line else f"{doc.path} {where}"


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _get_number(doc: Doc, rec: dict, key: str, line: int | None) -> float | int | None:
    value = rec.get(key)
    if value is None:
        return None
    if not _is_num(value):
        raise ParseError(f"{key!r} must be a number, found {str(value)[:40]!r}", path=doc.path,
                         line=line)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def file_stats(record: dict[str, Any], names: dict[str, str]) -> dict[str, dict[str, float]]:
    """Every ``{stat}_{spelled}_ms`` number of a record: metric -> statistic -> ms."""
    out: dict[str, dict[str, float]] = {}
    for metric, spelled in names.items():
        suffix = f"_{spelled}_ms"
        found = {}
        for key, value in record.items():
            if key.endswith(suffix) and _is_num(value):
                stat = key[: -len(suffix)]
                if stat in ("mean", "median", "std", "max", "min") or (
                        stat.startswith("p") and stat[1:].replace(".", "", 1).isdigit()):
                    found[stat] = float(value)
        if found:
            out[metric] = found
    return out


def _first(rec: dict, keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if rec.get(k) is not None), None)


def serving_point(doc: Doc, rec: dict, client: str, where: str, line: int | None,
                  names: dict[str, str], aliases: dict[str, tuple[str, ...]] | None = None
                  ) -> Point:
    """The parts of a Point that vLLM's and SGLang's records share: counts, throughputs,
    latency statistics, failures, load and per-request rows. ``names`` spells each metric
    as the client does (``e2el`` / ``e2e_latency``); ``aliases`` lists other keys a count
    may be under (SGLang's lora_bench: ``successful_requests``, ``benchmark_duration_s``)."""
    if not isinstance(rec, dict):
        raise ParseError(f"expected a JSON object (one benchmark result), found "
                         f"{type(rec).__name__}", path=doc.path, line=line)
    aliases = aliases or {}
    p = Point(client=client, file=doc.path, where=where, line=line, fields={})
    here = locator(doc, where, line)
    for name in ("duration", "completed", "failed", "total_input_tokens",
                 "total_output_tokens", "request_throughput", "output_throughput"):
        key = _first(rec, aliases.get(name, (name,)))
        value = _get_number(doc, rec, key, line) if key else None
        if value is None:
            continue
        if value < 0:
            raise ParseError(f"{key!r} must not be negative, found {value!r}", path=doc.path,
                             line=line)
        if name == "duration" and value == 0:
            raise ParseError(f"{key!r} must be > 0 s, found 0", path=doc.path, line=line)
        p.fields[name] = _whole(value) if name in ("completed", "failed", "total_input_tokens",
                                                    "total_output_tokens") else float(value)
        p.sources[name] = key
    if "max_concurrency" in rec:
        conc = _get_number(doc, rec, "max_concurrency", line)
        p.fields["max_concurrency"] = None if conc is None else _whole(conc)
        p.sources["max_concurrency"] = "max_concurrency"
    raw_rate = rec.get("request_rate")
    rate = rate_value(raw_rate)
    if raw_rate is not None and rate is None:
        if not (isinstance(raw_rate, str) and raw_rate.strip().lower() == "trace"):
            raise ParseError(f"'request_rate' must be a number, Infinity or \"inf\", found "
                             f"{str(raw_rate)[:40]!r}", path=doc.path, line=line)
        p.params["request_rate"] = "trace"          # SGLang: arrival times from a trace
    elif rate is not None:
        p.fields["request_rate"] = rate
        p.sources["request_rate"] = "request_rate"

    _requests(doc, rec, p, here)
    _failed(rec, p, here)
    asked = rec.get("num_prompts")
    if _is_num(asked) and asked > 0:        # the requests the client was asked to send
        p.fields["requests_asked"] = _whole(asked)
        p.sources["requests_asked"] = "num_prompts"
    _check_counts(p, here)
    _latency_stats(rec, p, names, here)
    p.load = load_of(p.fields.get("max_concurrency"), rate, rec.get("burstiness"),
                     trace=p.params.get("request_rate") == "trace")
    used = {m for m in METRICS if any(f"{s}_{m}_ms" in p.fields for s in STATS)}
    if any(r.get("ttft_ms") is not None for r in p.requests):
        used.add("ttft")
    if any(r.get("e2el_ms") is not None for r in p.requests):
        used.add("e2el")
    p.definitions = {m: DEFINITIONS[m] for m in METRICS if m in used}
    return p


def _failed(rec: dict, p: Point, here: str) -> None:
    if "failed" in p.fields:
        return
    done = p.fields.get("completed")
    asked = rec.get("num_prompts")
    if _is_num(asked) and done is not None:
        if asked >= done:
            p.fields["failed"] = _whole(asked - done)
            p.sources["failed"] = f"num_prompts - {p.sources['completed']}"
            return
        p.warnings.append(f"{here}: 'completed' ({done}) exceeds 'num_prompts' ({asked}); "
                          "the number of failed requests is left blank")
        return
    errors = rec.get("errors")
    if isinstance(errors, list) and errors:
        p.fields["failed"] = sum(1 for e in errors if e)
        p.sources["failed"] = "errors"


def _latency_stats(rec: dict, p: Point, names: dict[str, str], here: str) -> None:
    found = file_stats(rec, names)
    done = p.fields.get("completed")
    if done == 0:
        p.warnings.append(
            f"{here}: every request failed (completed 0"
            + (f" of {p.fields['failed']}" if p.fields.get("failed") else "") + ")"
            + ("; the file's latency statistics describe no request and are left out"
               if found else ""))
        return
    for metric, stats in found.items():
        spelled = names[metric]
        kept = {s: v for s, v in stats.items() if s in STATS}
        nan = sorted(s for s, v in kept.items() if math.isnan(v))
        if nan:
            p.warnings.append(f"{here}: {', '.join(f'{s}_{spelled}_ms' for s in nan)} is NaN "
                              "in the file; left out")
        kept = {s: v for s, v in kept.items() if not math.isnan(v)}
        if kept and done and all(v == 0 for v in kept.values()):
            shown = ", ".join(f"{s}_{spelled}_ms" for s in kept)
            p.warnings.append(f"{here}: {shown} {'is' if len(kept) == 1 else 'are'} 0.0 although "
                              f"{done} requests completed: the client measured no "
                              f"{metric.upper()} (no streamed chunks?); left out")
            continue
        for stat, value in kept.items():
            p.fields[f"{stat}_{metric}_ms"] = float(value)
            p.sources[f"{stat}_{metric}_ms"] = f"{stat}_{spelled}_ms"


_LISTS = {"ttfts": "ttft_ms", "latencies": "e2el_ms", "input_lens": "input_tokens",
          "output_lens": "output_tokens", "errors": "error", "itls": "itl_ms",
          "start_times": "start_s"}


def _requests(doc: Doc, rec: dict, p: Point, here: str) -> None:
    """Per-request rows from the per-request lists: ttfts, latencies and itls in seconds
    become ms (each value × 1000, once); start_times (the client's clock readings) become
    seconds after the first request's. A failed request (an error) keeps no times."""
    lists = {k: rec[k] for k in _LISTS if isinstance(rec.get(k), list)}
    if not any(k in lists for k in ("ttfts", "latencies", "input_lens", "output_lens")):
        return
    base_key = next(k for k in ("ttfts", "latencies", "input_lens", "output_lens", "errors")
                    if k in lists)
    n = len(lists[base_key])
    odd = {k: len(v) for k, v in lists.items() if len(v) != n}
    if odd:
        p.warnings.append(
            f"{here}: per-request lists of different lengths ({base_key}: {n}, "
            + ", ".join(f"{k}: {m}" for k, m in odd.items()) + "); "
            + ", ".join(odd) + " left out of the per-request rows")
        lists = {k: v for k, v in lists.items() if k not in odd}
    starts = _start_offsets(lists.get("start_times"))
    for i in range(n):
        row = _request_row(lists, i)
        row["start_s"] = starts[i] if starts else None
        p.requests.append(row)


def _request_row(lists: dict[str, list], i: int) -> dict[str, Any]:
    """Request ``i`` from the per-request lists (times in ms; none for a failed one)."""
    err = lists["errors"][i] if "errors" in lists else None
    err = redact(str(err)) if err not in (None, "") else None
    row: dict[str, Any] = {}
    for key, field in _LISTS.items():
        if field in ("error", "itl_ms", "start_s"):
            continue
        value = number(lists[key][i]) if key in lists else None
        if field.endswith("_ms"):
            # a failed request's 0.0 times are not measurements
            value = None if value is None or err else value * 1000.0
        elif value is not None:
            value = _whole(value)
        row[field] = value
    row["error"] = err
    row["itl_ms"] = None if err or "itls" not in lists else _gaps_ms(lists["itls"][i])
    return row


def _gaps_ms(gaps: Any) -> list[float] | None:
    """One request's chunk gaps (s) in ms, or None when the entry is not a list of numbers."""
    if not isinstance(gaps, list):
        return None
    if all(type(g) is float for g in gaps):      # as the client writes them: no checks
        return [g * 1000.0 for g in gaps]
    out = [number(g) for g in gaps]
    return None if any(g is None for g in out) else [g * 1000.0 for g in out]


def _start_offsets(times: Any) -> list[float | None] | None:
    """Each request's send time as seconds after the first one's (vLLM's ``start_times``
    are readings of the client's monotonic clock, whose zero means nothing)."""
    if not isinstance(times, list):
        return None
    values = [number(t) for t in times]
    # 0.0 is the field's default: a request the client never timed
    seen = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not seen:
        return None
    first = min(seen)
    return [v - first if v is not None and v > 0 and math.isfinite(v) else None
            for v in values]


def _check_counts(p: Point, here: str) -> None:
    """The file's own completed / failed against the errors its per-request rows carry:
    where they disagree, a warning naming both (the statistics use the rows without one)."""
    if not p.requests:
        return
    errors = sum(1 for r in p.requests if r.get("error"))
    good = len(p.requests) - errors
    done, failed = p.fields.get("completed"), p.fields.get("failed")
    if (done is None or done == good) and (failed is None or failed == errors):
        return
    says = ", ".join(f"{k}: {v}" for k, v in (("completed", done), ("failed", failed))
                     if v is not None)
    p.warnings.append(
        f"{here}: the file says {says}, but {errors} of its {len(p.requests)} per-request "
        f"rows carry an error; latency statistics recomputed here use the {good} requests "
        "without one")


def load_of(conc: Any, rate: float | str | None, burstiness: Any = None,
            trace: bool = False) -> dict[str, Any]:
    """The load a record states: concurrency-bound, rate-bound or unbounded."""
    finite = rate is not None and rate != "inf"
    if trace:
        arrival = "trace"
    elif finite:
        arrival = "poisson" if burstiness is None or burstiness == 1 else "gamma"
    else:
        arrival = None
    kind = "concurrency" if conc is not None else "rate" if finite or trace else "unbounded"
    return {"kind": kind, "max_concurrency": conc, "request_rate": rate, "arrival": arrival}


def engine_name(backend: Any) -> str | None:
    """The serving engine a client's ``backend`` value names, or None ("openai", …)."""
    if not isinstance(backend, str):
        return None
    b = backend.strip().lower()
    for prefix in ("vllm", "sglang", "lmdeploy", "tgi", "scalellm", "deepspeed-mii"):
        if b.startswith(prefix):
            return prefix
    if b in ("trt", "trt-llm", "tensorrt-llm", "tensorrtllm", "tensorrt_llm"):
        return "tensorrt-llm"
    if b in ("llama.cpp", "llamacpp", "llama-cpp"):
        return "llama.cpp"
    return None


def iso_date(value: Any) -> str | None:
    """vLLM's ``date`` ("20250507-100754", local time) as ISO, or None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})", text)
    try:
        if m:
            return dt.datetime(*map(int, m.groups())).isoformat()
        return dt.datetime.fromisoformat(text).isoformat()
    except ValueError:
        return None


_SECRET_KEY = re.compile(r"(?i)(api[_-]?key|secret|passw|token$|auth|bearer|cookie|credential)")


def param_value(key: str, value: Any) -> Any:
    """A scalar worth keeping in ``params`` (strings redacted), or None to leave it out."""
    if _SECRET_KEY.search(key) or isinstance(value, dict | list) or value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text or len(text) > 200 or re.search(r"(^|\s)--?\w", text):
            return None                     # empty, a blob, or a command line
        return text if _identifier(text) else redact(text)
    return value


_SECRET_PREFIX = re.compile(r"(?i)^(sk-|hf_|ghp_|gho_|github_pat_|xox[abp]-|akia|eyj)")


def _identifier(text: str) -> bool:
    """A name such as "serving_llama8B_tp1_sharegpt_qps_1": words joined by separators,
    none long enough to be a token. (base.redact hides any 32-character run, names too.)"""
    return (re.fullmatch(r"[\w.:/+-]+", text) is not None and not _SECRET_PREFIX.match(text)
            and all(len(part) < 24 for part in re.split(r"[_.:/+-]", text)))


def scenario_mean(p: Point, which: str) -> float | None:
    """Mean input/output tokens of the requests that succeeded, else total ÷ completed."""
    field = f"{which}_tokens"
    vals = [r[field] for r in p.requests if r.get(field) is not None and not r.get("error")]
    if vals:
        return sum(vals) / len(vals)
    total, done = p.fields.get(f"total_{which}_tokens"), p.fields.get("completed")
    return total / done if total is not None and done else None


def fill_scenario(p: Point, rec: dict, in_keys: tuple[str, ...],
                  out_keys: tuple[str, ...]) -> None:
    """``input_tokens`` / ``output_tokens``: the first target key set, else the mean."""
    for which, keys in (("input", in_keys), ("output", out_keys)):
        key = next((k for k in keys if _is_num(rec.get(k)) and rec[k] > 0), None)
        if key:
            p.scenario[f"{which}_tokens"] = _whole(rec[key])
            p.scenario[f"{which}_tokens_from"] = "target"
            continue
        mean = scenario_mean(p, which)
        if mean is not None:
            p.scenario[f"{which}_tokens"] = _whole(mean)
            p.scenario[f"{which}_tokens_from"] = "mean"


# ---------------------------------------------------------------------------------------
# vllm bench serve

# Keys of a bench serve payload that are measurements or handled elsewhere: everything else
# that is a scalar (a `vllm bench sweep` parameter, a `--metadata KEY=VALUE`) goes to params.
_KNOWN = {
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
    "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
    "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
    "request_goodput:", "output_throughput", "total_token_throughput",
    "max_output_tokens_per_s", "max_concurrent_requests", "rtfx", "latencies", "queue_times",
    "input_lens", "output_lens", "ttfts", "itls", "start_times", "generated_texts", "errors",
    "server_queue_times", "server_ttfts", "rps_change_events", "total_input_sequences",
    "input_sequence_throughput", "best_of", "use_beam_search",
}
_MEASURED_PREFIXES = ("probe_", "spec_decode_", "diffusion_")
_PARAMS = ("num_prompts", "label", "backend", "ramp_up_strategy", "ramp_up_start_rps",
           "ramp_up_end_rps")
_VLLM_INPUT = ("input_len", "random_input_len", "sonnet_input_len")
_VLLM_OUTPUT = ("output_len", "random_output_len", "sharegpt_output_len", "sonnet_output_len")


def bench_serve_point(doc: Doc, rec: Any, where: str, line: int | None) -> Point:
    if flavour(rec) != "vllm":
        raise ParseError("expected a `vllm bench serve` result object (keys such as 'date', "
                         "'num_prompts', 'duration', 'completed', 'mean_ttft_ms')",
                         path=doc.path, line=line)
    p = serving_point(doc, rec, CLIENT, where, line, VLLM_NAMES)
    if "request_goodput:" in rec:
        p.sources["request_goodput"] = "request_goodput:"     # vLLM ≤0.8's misspelt key
    elif "request_goodput" in rec:
        p.sources["request_goodput"] = "request_goodput"
    p.model = rec["model_id"] if isinstance(rec.get("model_id"), str) else None
    p.engine = engine_name(rec.get("backend") or rec.get("endpoint_type"))
    p.date = iso_date(rec.get("date"))
    for key in _PARAMS:
        value = param_value(key, rec.get(key))
        if value is not None:
            p.params[key] = value
    for key, value in rec.items():
        if not isinstance(key, str) or key in _KNOWN or _STAT_KEY.match(key) \
                or key.startswith(_MEASURED_PREFIXES):
            continue
        value = param_value(key, value)
        if value is not None:
            p.params[key] = value
    if isinstance(rec.get("dataset_name"), str):
        p.scenario["dataset"] = redact(rec["dataset_name"])
    fill_scenario(p, rec, _VLLM_INPUT, _VLLM_OUTPUT)
    return p


# ---------------------------------------------------------------------------------------
# vLLM nightly aggregate (display-name columns holding medians)

def _norm(col: Any) -> str:
    return re.sub(r"\s+", " ", str(col)).strip().lower()


def _is_test_col(col: Any) -> bool:
    return isinstance(col, str) and re.fullmatch(r"test[ _]?name", _norm(col)) is not None


_NIGHTLY_COLUMNS = (
    (r"test[ _]?name", "param:test_name"),
    (r"gpu( type)?", "param:gpu"),
    (r"(serving )?engine|backend", "engine"),
    (r"model( id| name)?", "model"),
    (r"dataset( name)?", "scenario:dataset"),
    (r"(request rate|qps|request_rate)( \(req/s\))?", "request_rate"),
    (r"(max(imum)? (request )?concurrency|max_concurrency|concurrency|# of concurrent req\.?)",
     "max_concurrency"),
    (r"(# of req\.?|successful req(uest)?s?\.?|completed)", "completed"),
    (r"(# of failed req\.?|failed req(uest)?s?\.?|failed)", "failed"),
    (r"(benchmark )?duration( \(s\))?", "duration"),
    (r"total input tokens", "total_input_tokens"),
    (r"total (output|generated) tokens", "total_output_tokens"),
    (r"(tput|request throughput|request tput|throughput) \(req/s\)", "request_throughput"),
    (r"output (token )?(tput|throughput) \(tok/s\)", "output_throughput"),
)
_NIGHTLY_LATENCY = re.compile(
    r"(?:(mean|median|avg|average|std|p\d+)\s+)?(ttft|tpot|itl|e2el|e2e latency)\s*\((ms|s)\)")
_STAT_ALIASES = {None: "median", "avg": "mean", "average": "mean"}


def _nightly_column(col: Any) -> tuple[str, float] | None:
    """(target, scale) for a display-name column: a FIELDS key, "param:…", "engine", …"""
    if not isinstance(col, str):
        return None
    name = _norm(col)
    m = _NIGHTLY_LATENCY.fullmatch(name)
    if m:
        stat = _STAT_ALIASES.get(m.group(1), m.group(1))
        metric = "e2el" if m.group(2).startswith("e2e") else m.group(2)
        if stat not in STATS:
            return None
        return f"{stat}_{metric}_ms", (1000.0 if m.group(3) == "s" else 1.0)
    m = _STAT_KEY.match(col)
    if m and col.split("_", 1)[0] in STATS and m.group(1) in METRICS:
        return col, 1.0                       # a raw bench serve key kept in the table
    for pattern, target in _NIGHTLY_COLUMNS:
        if re.fullmatch(pattern, name):
            return target, 1.0
    return None


def _table_rows(value: Any) -> list[tuple[str, dict]] | None:
    """The rows of one table in any of the layouts pandas and people write."""
    if isinstance(value, list):
        if value and all(isinstance(r, dict) for r in value) and any(
                any(_is_test_col(k) for k in r) for r in value):
            return [(f"[{i}]", r) for i, r in enumerate(value)]
        return None
    if not isinstance(value, dict):
        return None
    col = next((k for k in value if _is_test_col(k)), None)
    if col is not None:
        first = value[col]
        if isinstance(first, dict):                             # orient="columns" / to_dict()
            return [(f"row {ix}", {c: (v.get(ix) if isinstance(v, dict) else None)
                                   for c, v in value.items()}) for ix in first]
        if isinstance(first, list):                             # to_dict(orient="list")
            return [(f"[{i}]", {c: (v[i] if isinstance(v, list) and i < len(v) else None)
                                for c, v in value.items()}) for i in range(len(first))]
        return [("$", value)]                                   # a single row
    cols, data = value.get("columns"), value.get("data")
    if isinstance(cols, list) and isinstance(data, list) and any(_is_test_col(c) for c in cols):
        index = value.get("index")                              # orient="split"
        index = index if isinstance(index, list) and len(index) == len(data) else range(len(data))
        return [(f"row {ix}", dict(zip(cols, row, strict=False)))
                for ix, row in zip(index, data, strict=False) if isinstance(row, list)]
    if isinstance(value.get("schema"), dict) and isinstance(data, list):   # orient="table"
        return _table_rows(data)
    rows = list(value.values())
    if rows and all(isinstance(r, dict) and any(_is_test_col(k) for k in r) for r in rows):
        return [(f"row {ix}", r) for ix, r in value.items()]   # orient="index"
    return None


def nightly_rows(value: Any) -> list[tuple[str, str | None, dict]]:
    """``(where, section, row)`` for every row of a nightly aggregate, or []."""
    rows = _table_rows(value)
    if rows is not None:
        return [(w, None, r) for w, r in rows]
    out: list[tuple[str, str | None, dict]] = []
    if isinstance(value, dict):
        for name, sub in value.items():
            for w, r in _table_rows(sub) or []:
                out.append((f"{name}{w}" if w.startswith("[") else f"{name} {w}", str(name), r))
    return out


def _is_serving_row(row: dict, section: str | None) -> bool:
    if section is not None and _norm(section) in ("latency", "throughput"):
        return False
    targets = {t for t in (_nightly_column(c) for c in row) if t}
    return any(t[0].endswith(tuple(f"_{m}_ms" for m in METRICS)) for t in targets) or (
        section is not None and _norm(section) == "serving")


def _nightly_claims(doc: Doc) -> bool:
    if doc.kind != "json":
        return False
    rows = nightly_rows(doc.value)
    return any({t[0] for t in (_nightly_column(c) for c in r) if t} - {"param:test_name"}
               for _, _, r in rows)


def _nightly_point(doc: Doc, where: str, row: dict) -> Point:
    p = Point(client=NIGHTLY, file=doc.path, where=where, line=None, fields={})
    here = locator(doc, where, None)
    for col, cell in row.items():
        target = _nightly_column(col)
        if target is None or cell is None:
            continue
        key, scale = target
        if key == "engine":
            p.engine = engine_name(cell)
        elif key == "model":
            p.model = str(cell)
        elif key.startswith("param:"):
            value = param_value(key[6:], cell)
            if value is not None:
                p.params[key[6:]] = value
        elif key.startswith("scenario:"):
            p.scenario[key[9:]] = redact(str(cell))
        elif key == "request_rate":
            rate = rate_value(cell)
            if rate is not None:
                p.fields[key], p.sources[key] = rate, str(col)
        else:
            value = number(cell)
            if value is None or math.isnan(value):
                continue
            p.fields[key] = _whole(value) if key in ("completed", "failed", "max_concurrency",
                                                      "total_input_tokens",
                                                      "total_output_tokens") \
                else value * scale
            p.sources[key] = str(col)
    stats = [k for k in p.fields if k.endswith("_ms")]
    if p.fields.get("completed") == 0 and stats:
        for k in stats:
            del p.fields[k], p.sources[k]
        p.warnings.append(f"{here}: every request failed (0 completed); the row's latencies "
                          "describe no request and are left out")
    p.load = load_of(p.fields.get("max_concurrency"), p.fields.get("request_rate"))
    if "request_rate" not in p.fields and "max_concurrency" not in p.fields:
        p.load = {}                          # the row does not say
    for which in ("input", "output"):
        mean = scenario_mean(p, which)
        if mean is not None:
            p.scenario[f"{which}_tokens"] = _whole(mean)
            p.scenario[f"{which}_tokens_from"] = "mean"
    used = {m for m in METRICS if any(f"{s}_{m}_ms" in p.fields for s in STATS)}
    p.definitions = {m: DEFINITIONS[m] for m in METRICS if m in used}
    return p


def _nightly_points(doc: Doc) -> list[Point]:
    rows = nightly_rows(doc.value)
    points, skipped = [], Counter()
    for where, section, row in rows:
        if _is_serving_row(row, section):
            points.append(_nightly_point(doc, where, row))
        else:
            skipped[section or "rows"] += 1
    if not points:
        raise ParseError("this vLLM nightly aggregate holds no serving rows (only the offline "
                         "latency/throughput tables); expected rows with 'TTFT (ms)', "
                         "'TPOT (ms)' or 'ITL (ms)'", path=doc.path)
    if skipped:
        points[0].warnings.append(
            f"{doc.path}: " + ", ".join(f"{n} {s!r} row(s)" for s, n in skipped.items())
            + " of vLLM's offline latency/throughput benchmarks left out; only serving rows "
            "are compared")
    return points


# ---------------------------------------------------------------------------------------

def sniff(doc: Doc) -> str | None:
    """"vllm-bench-serve" or "vllm-nightly-aggregate" when the content is vLLM's, else None."""
    if doc.kind not in ("json", "jsonl"):
        return None
    if claims(doc, "vllm"):
        return CLIENT
    if _nightly_claims(doc):
        return NIGHTLY
    return None


def parse(doc: Doc) -> list[Point]:
    """One Point per result object (or nightly row) of the file."""
    if claims(doc, "vllm"):
        return [bench_serve_point(doc, rec, where, line) for where, line, rec in records(doc)]
    if _nightly_claims(doc):
        return _nightly_points(doc)
    raise ParseError("expected a `vllm bench serve` result (keys such as 'date', "
                     "'num_prompts', 'duration', 'completed', 'mean_ttft_ms') or vLLM's "
                     "nightly benchmark_results.json", path=doc.path, line=1)
