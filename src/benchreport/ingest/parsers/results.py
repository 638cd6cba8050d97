"""Benchmark-client result files: `vllm bench serve --save-result` JSON and
`python -m sglang.bench_serving --output-file` JSONL, told apart by their keys.

>>> import io
>>> [r.client for r in parse_results(io.StringIO('{"backend": "sglang", "dataset_name": "random",'
...     ' "request_rate": Infinity, "duration": 12.5, "completed": 10}'), "x.jsonl")]
['sglang-bench-serving']
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TextIO

from ...core.errors import ParseError
from ...core.records import SGLANG_CLIENT, VLLM_CLIENT, BenchResult  # noqa: F401 (re-exported)

# Keys that only one client writes. vLLM: `date` + `num_prompts` (+ `endpoint_type` or
# `total_token_throughput`). SGLang: `dataset_name` + `random_input_len`/`sharegpt_output_len`.
_VLLM_MARKERS = ("date", "num_prompts")
_SGLANG_MARKERS = ("dataset_name",)
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
# SGLang spells end-to-end latency `e2e_latency`; vLLM `e2el`.
_SGLANG_METRIC_NAMES = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e_latency"}


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        if value.strip().lower() in ("inf", "infinity"):
            return math.inf
        try:
            return float(value)
        except ValueError:
            return None
    return float(value)


def _stats(record: dict[str, Any], names: dict[str, str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for metric, spelled in names.items():
        suffix = f"_{spelled}_ms"
        found = {}
        for key, value in record.items():
            if key.endswith(suffix) and isinstance(value, int | float) and not isinstance(
                    value, bool):
                stat = key[: -len(suffix)]
                if stat in ("mean", "median", "std", "max", "min") or (
                        stat.startswith("p") and stat[1:].replace(".", "", 1).isdigit()):
                    found[stat] = float(value)
        if found:
            out[metric] = found
    return out


_PER_REQUEST = ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times")


def classify(record: dict[str, Any]) -> str | None:
    """Return the client that wrote ``record``, or None if it is not a result record."""
    if "duration" not in record or "completed" not in record:
        return None
    if all(k in record for k in _VLLM_MARKERS):
        return VLLM_CLIENT
    if all(k in record for k in _SGLANG_MARKERS):
        return SGLANG_CLIENT
    return None


def _build(record: dict[str, Any], client: str, line: int, path: str) -> BenchResult:
    def number(key: str, typ: type, required: bool = False) -> Any:
        value = record.get(key)
        if value is None:
            if required:
                raise ParseError(f"result record has no {key!r}", path=path, line=line)
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParseError(f"{key!r} must be a number, found {value!r}", path=path, line=line)
        return typ(value)

    duration = number("duration", float, required=True)
    if not duration > 0:
        raise ParseError(f"'duration' must be > 0, found {duration!r}", path=path, line=line)
    names = ({m: m for m in LATENCY_METRICS} if client == VLLM_CLIENT
             else _SGLANG_METRIC_NAMES)
    per_request = {k: record[k] for k in _PER_REQUEST if isinstance(record.get(k), list)}
    backend = record.get("backend") or record.get("endpoint_type") or ""
    return BenchResult(
        client=client, line=line, backend=str(backend), duration=duration,
        completed=number("completed", int, required=True),
        total_input_tokens=number("total_input_tokens", int),
        total_output_tokens=number("total_output_tokens", int),
        request_rate=_rate(record.get("request_rate")),
        max_concurrency=number("max_concurrency", int),
        stats=_stats(record, names), per_request=per_request, raw=record,
    )


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """What is wrong with ``text`` as JSON, saying so plainly when it was cut off."""
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return (f"the JSON stops before the record is complete (after {len(text.rstrip())} "
                "characters; the file looks cut off)")
    return f"not valid JSON at column {exc.colno} ({exc.msg})"


def parse_results(fp: TextIO, path: str,
                  warn: Callable[[int, str], None] | None = None) -> list[BenchResult]:
    """Parse a result file (one JSON object, or JSON Lines) into BenchResult records.

    Non-standard JSON that the clients really write is accepted: SGLang's bare
    ``Infinity``, vLLM's ``"inf"`` rate and old vLLM's ``"request_goodput:"`` key.
    Raises ParseError naming ``path`` and the line when the content is not a result.
    In JSON Lines (one record per line, as ``bench_serving`` appends them), a line that is
    not JSON is skipped with a warning through ``warn(line, message)`` as long as another
    line holds a record; without ``warn``, or with no good line, it is an error.
    """
    text = fp.read()
    if not text.strip():
        raise ParseError("empty file, expected a benchmark result (JSON or JSON Lines)",
                         path=path)
    if "\x00" in text or "\ufffd" in text[:64]:
        raise ParseError("binary content, expected a benchmark result (JSON or JSON Lines)",
                         path=path)
    records: list[tuple[int, Any]] = []
    try:
        records = [(1 + text[: len(text) - len(text.lstrip())].count("\n"), json.loads(text))]
    except json.JSONDecodeError as whole:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        if not all(line.lstrip().startswith("{") for _, line in lines):
            # one JSON document over several lines (vLLM writes it indented, or on one line)
            raise ParseError(f"{_json_problem(whole, text)}; expected a benchmark result",
                             path=path, line=whole.lineno) from None
        bad: list[tuple[int, str]] = []
        for number, line in lines:
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                bad.append((number, _json_problem(exc, line)))
        if bad and (not records or warn is None):
            number, problem = bad[0]
            expected = "one result record per line" if len(lines) > 1 else "a benchmark result"
            raise ParseError(f"{problem}; expected {expected}", path=path, line=number)
        for number, problem in bad:
            warn(number, f"{problem}; this line is skipped, the file's other records are used")
    out = []
    for line, record in records:
        if not isinstance(record, dict):
            raise ParseError(f"expected a JSON object, found {type(record).__name__}",
                             path=path, line=line)
        client = classify(record)
        if client is None:
            raise ParseError(
                "JSON is not a benchmark result (expected the keys of `vllm bench serve` "
                "--save-result or `sglang.bench_serving` output, e.g. 'duration', 'completed')",
                path=path, line=line)
        out.append(_build(record, client, line, path))
    return out
