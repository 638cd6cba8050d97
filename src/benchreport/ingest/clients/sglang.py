"""SGLang's serving benchmark results: ``python -m sglang.bench_serving --output-file F``.

``bench_serving`` opens the output file in append mode and writes one JSON record per run,
so a file holds every run made under that name (often a rate or concurrency sweep, or a
re-run of one point): every record becomes a Point (``where`` "line N"). People also save
a single record, or several lines, under a ``.json`` name; the content decides, not the name.

Key sets vary by era: 2024 records carry medians only; newer ones mean/median/std/p90/p95/
p99, ``tag`` and ``server_info`` (the server's settings, large: only the few settings that
tell points apart are kept). Derivatives such as ``benchmark/lora/lora_bench.py`` write the
same shape with extra keys (``successful_requests``, ``benchmark_duration_s``), and may lack
``dataset_name`` or ``completed``. End-to-end latency is spelt ``*_e2e_latency_ms``; an
infinite ``request_rate`` is the bare token ``Infinity``.

ITL differs by backend (checked against ``bench_serving``'s request functions): the native
``sglang`` backend (``/generate``) divides each streamed chunk's gap evenly over the tokens
the chunk brought, so its ITL is per token (``itl.per-token``). The OpenAI-compatible
``sglang-oai`` / ``sglang-oai-chat`` backends record one gap per chunk, except that from
sglang PR #12064 (Oct 2025) on they divide it by the mean accepted length when speculative
decoding ran. A record shows that speculative decoding ran (``accept_length`` above 1) but
not which version of the client wrote it, so such a record's ITL is ``itl.unknown``. Every
other backend (``vllm``, ``lmdeploy``, ``trt``, …) records one gap per chunk; a record with
no backend says nothing, so its ITL is ``itl.unknown`` too.

A record whose responses were not streamed (``--disable-stream``; lora_bench posts to
``/generate`` without ``stream``) has a TTFT that is the whole response time and an ITL of 0
(`base.unstreamed`): its TTFT, TPOT and ITL are left out, with a warning, and its E2E
latency and throughputs kept.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import ParseError
from .base import Doc, Point, drop_unstreamed, redact, unstreamed
from .vllm import (
    SGLANG_NAMES,
    claims,
    engine_name,
    file_stats,
    fill_scenario,
    flavour,
    locator,
    param_value,
    records,
    serving_point,
)

CLIENT = "sglang-bench-serving"
_ALIASES = {"completed": ("completed", "successful_requests"),
            "duration": ("duration", "benchmark_duration_s")}
# Settings from server_info that tell points apart (the rest of it is left out).
_SERVER_KEYS = ("tp_size", "dp_size", "pp_size", "ep_size", "dcp_size", "chunked_prefill_size",
                "max_running_requests", "mem_fraction_static", "schedule_policy",
                "attention_backend", "kv_cache_dtype", "quantization", "disable_radix_cache",
                "enable_dp_attention", "speculative_algorithm", "speculative_num_steps",
                "speculative_eagle_topk", "speculative_num_draft_tokens")


def _server_params(info: Any, p: Point) -> None:
    if not isinstance(info, dict):
        return
    args = info.get("server_args") if isinstance(info.get("server_args"), dict) else info
    version = info.get("version")
    if isinstance(version, str) and version.strip():
        p.params["server_version"] = redact(version.strip())
    for key in _SERVER_KEYS:
        value = param_value(key, args.get(key, info.get(key)))
        if value is not None:
            p.params[key] = value
    if p.model is None:
        for key in ("served_model_name", "model_path"):
            name = args.get(key, info.get(key))
            if isinstance(name, str) and name.strip():
                p.model = name.strip()
                break


def record_point(doc: Doc, rec: Any, where: str, line: int | None) -> Point:
    if flavour(rec) != "sglang":
        raise ParseError("expected a `sglang.bench_serving` result record (keys such as "
                         "'backend', 'dataset_name', 'duration', 'completed', "
                         "'median_e2e_latency_ms')", path=doc.path, line=line)
    p = serving_point(doc, rec, CLIENT, where, line, SGLANG_NAMES, _ALIASES)
    p.engine = engine_name(rec.get("backend"))
    for key in ("model", "model_id", "model_path"):
        if isinstance(rec.get(key), str) and rec[key].strip():
            p.model = rec[key].strip()
            break
    for key in ("tag", "backend", "num_prompts"):
        value = param_value(key, rec.get(key))
        if value is not None:
            p.params[key] = value
    _server_params(rec.get("server_info"), p)
    if "itl" in p.definitions:
        p.definitions["itl"] = itl_code(rec)
    _not_streamed(doc, rec, p, where, line)

    dataset = rec.get("dataset_name")
    if isinstance(dataset, str) and dataset.strip():
        p.scenario["dataset"] = redact(dataset.strip())
    # random_* are written whatever the dataset; they describe the prompts only for the
    # random datasets (lora_bench writes no dataset_name and uses random prompts)
    random = dataset is None or (isinstance(dataset, str) and dataset.startswith("random"))
    in_keys = ("random_input_len",) if random else ()
    out_keys = ("random_output_len",) if random else (
        ("sharegpt_output_len",) if dataset == "sharegpt" else ())
    fill_scenario(p, rec, in_keys, out_keys)
    ratio = rec.get("random_range_ratio")
    if random and isinstance(ratio, int | float) and not isinstance(ratio, bool):
        p.scenario["random_range_ratio"] = ratio
    return p


def _not_streamed(doc: Doc, rec: dict, p: Point, where: str, line: int | None) -> None:
    """A record whose responses were not streamed (``--disable-stream``, or a derivative
    such as lora_bench posting to ``/generate`` without ``stream``) times its "first token"
    when the whole response arrives: its TTFT, TPOT and ITL measure nothing of streaming."""
    if p.fields.get("completed") == 0:
        return                                          # every latency is left out already
    done, out = p.fields.get("completed"), p.fields.get("total_output_tokens")
    per_request = out / done if done and out is not None else None
    evidence = unstreamed(file_stats(rec, SGLANG_NAMES), p.requests, per_request)
    if evidence:
        drop_unstreamed(p, locator(doc, where, line), evidence)


_NATIVE = ("sglang", "sglang-native")
_OAI = ("sglang-oai", "sglang-oai-chat")


def itl_code(rec: dict) -> str:
    """The definition code of a record's ITL, from its backend and ``accept_length``.

    >>> itl_code({"backend": "sglang"}), itl_code({"backend": "vllm", "accept_length": 3.1})
    ('itl.per-token', 'itl.per-chunk')
    >>> itl_code({"backend": "sglang-oai", "accept_length": None})
    'itl.per-chunk'
    >>> itl_code({"backend": "sglang-oai-chat", "accept_length": 3.4}), itl_code({})
    ('itl.unknown', 'itl.unknown')
    """
    backend = rec.get("backend")
    if not isinstance(backend, str) or not backend.strip():
        return "itl.unknown"
    backend = backend.strip().lower()
    if backend in _NATIVE:
        return "itl.per-token"
    accept = rec.get("accept_length")
    speculative = isinstance(accept, int | float) and not isinstance(accept, bool) \
        and accept > 1
    if backend in _OAI and speculative:
        return "itl.unknown"
    return "itl.per-chunk"


def sniff(doc: Doc) -> str | None:
    """"sglang-bench-serving" when most records of the file are SGLang's, else None."""
    if doc.kind in ("json", "jsonl") and claims(doc, "sglang"):
        return CLIENT
    return None


def parse(doc: Doc) -> list[Point]:
    """One Point per record, in file order."""
    found = records(doc)
    if not found:
        raise ParseError("expected `sglang.bench_serving` result records (JSON Lines)",
                         path=doc.path, line=1)
    return [record_point(doc, rec, where, line) for where, line, rec in found]
