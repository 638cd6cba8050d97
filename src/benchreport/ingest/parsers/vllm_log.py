"""vLLM server-log messages (after the prefix), every era in engine-formats.md sections 1.2-1.5.

Each ``parse_*`` takes a message and returns ``(kind, fields)`` or raises ``FieldError``
for a recognisable line with a malformed field. Field names are snake_case; units:
``*_tps`` tokens/s, ``*_pct`` percent, counts are integers. A field the line does not carry
is absent, never invented.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from ...core.redact import redact_settings
from .prefix import message_starts


class FieldError(ValueError):
    """A line of a known kind whose field could not be read."""


# Where records are found. FREQUENT: literals searched with bytes.find (stats lines, which
# recur all through a log). RARE: message starts, right after the "] " that ends every
# prefix, found in one regex pass; plus library lines (FlashInfer) without that prefix.
FREQUENT = (b"Avg prompt throughput", b"flashinfer.jit: ")
RARE = (
    b"SpecDecoding metrics", b"Speculative metrics", b"vLLM API server version", b"vLLM server version", b"Initializing a",
    b"non-default args", b"GPU KV cache size", b"XPU KV cache size", b"CPU KV cache size",
    b"GPU + host KV cache size", b"Maximum concurrency", b"Available KV cache memory",
    b"# GPU blocks", b"Graph capturing", b"torch.compile t", b"Compiling a graph",
    b"init engine", b"Model loading took", b"Loading weights took", b"Using ", b"MoE backend",
    b"JIT kernel warmup", b"Prebuilt kernels", b"Sequence group", b"EngineCore encountered",
    b"Engine core initialization", b"Free memory on device", b"No available memory",
    b"To serve at least one request", b"Failed to load model", b"ValueError",
    b"torch.OutOfMemoryError", b"CUDA out of memory", b"Prefix cache hit rate: GPU",
    b"Traceback", b"EngineCore failed to start", b"FlashInfer resolved",
    b"Profiling CUDA graph memory",
)
RARE_RE = message_starts(RARE)
# Rare markers of a failure: the scanner looks for tracebacks after these lines (logscan).
ERRORS = frozenset((
    b"Traceback", b"EngineCore encountered", b"EngineCore failed to start",
    b"Engine core initialization", b"ValueError", b"torch.OutOfMemoryError",
    b"CUDA out of memory", b"Failed to load model", b"Free memory on device",
    b"No available memory", b"To serve at least one request",
))

# The current (0.31-0.33) shapes of the two frequent lines, read in one match each; any
# other era or optional part falls through to the general, part-by-part reader.
_FAST_STATS = re.compile(
    r"Engine (\d+): Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: "
    r"([\d.]+) tokens/s, Running: (\d+) reqs, Waiting: (\d+) reqs, GPU KV cache usage: "
    r"([\d.]+)%, Prefix cache hit rate: ([\d.]+)%$")
_FAST_SPEC = re.compile(
    r"SpecDecoding metrics: Mean acceptance length: ([\d.]+), Accepted throughput: ([\d.]+) "
    r"tokens/s, Drafted throughput: ([\d.]+) tokens/s, Accepted: (\d+) tokens, Drafted: "
    r"(\d+) tokens, Per-position acceptance rate: ([\d., ]*), Avg Draft acceptance rate: "
    r"([\d.]+)%$")

_PAIR = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]*?): (?P<val>-?[\d.]+|nan)(?: ?(?P<unit>tokens/s|reqs|tokens|%))?$")
_STATS_KEYS = {
    "Avg prompt throughput": "prompt_tps", "Avg generation throughput": "gen_tps",
    "Running": "running", "Waiting": "waiting", "Pending": "waiting", "Swapped": "swapped",
    "Deferred": "deferred", "Preemptions": "preemptions", "Corrupted": "corrupted",
    "Prefix cache hit rate": "prefix_cache_hit_rate_pct",
    "External prefix cache hit rate": "external_prefix_cache_hit_rate_pct",
    "MM cache hit rate": "mm_cache_hit_rate_pct", "CPU KV cache usage": "cpu_kv_cache_usage_pct",
}
_INT_FIELDS = {"running", "waiting", "swapped", "deferred", "preemptions", "corrupted"}
_KV_USAGE = re.compile(r"^(?P<device>[A-Z][A-Z +]*?) KV cache usage: (?P<val>[\d.]+)%$")
_KV_FETCH = re.compile(r"KV fetch: (\d+) waiting to start, (\d+) in progress, (\d+) completed waiting")
_ENGINE = re.compile(r"^(?:Engine (?P<engine>\d+): |(?P<agg>\d+) Engines Aggregated: )")


# Whole physical lines of the current era, prefix included, read by one bytes regex each
# (no decode, no split): the bulk of a log's records. Anything else takes the general path.
_LINE_PREFIX = (rb"\((?P<proc>[A-Za-z_]\w*) pid=(?P<pid>\d+)\) (?P<level>INFO) "
                rb"(?P<mmdd>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d) \[[\w./-]+:\d+\] ")
_LINE_STATS = re.compile(_LINE_PREFIX + rb"Engine (\d+): Avg prompt throughput: ([\d.]+) tokens/s, "
                         rb"Avg generation throughput: ([\d.]+) tokens/s, Running: (\d+) reqs, "
                         rb"Waiting: (\d+) reqs, GPU KV cache usage: ([\d.]+)%, Prefix cache "
                         rb"hit rate: ([\d.]+)%\r?")
_LINE_SPEC = re.compile(_LINE_PREFIX + rb"SpecDecoding metrics: Mean acceptance length: ([\d.]+), "
                        rb"Accepted throughput: ([\d.]+) tokens/s, Drafted throughput: ([\d.]+) "
                        rb"tokens/s, Accepted: (\d+) tokens, Drafted: (\d+) tokens, Per-position "
                        rb"acceptance rate: ([\d., ]*), Avg Draft acceptance rate: ([\d.]+)%\r?")


def fast_line(raw: bytes):
    """(prefix fields, kind, fields) for a current-era stats or spec line, else None."""
    m = _LINE_STATS.fullmatch(raw)
    if m:
        return m, "engine_stats", {
            "engine_index": int(m[6]), "prompt_tps": float(m[7]), "gen_tps": float(m[8]),
            "running": int(m[9]), "waiting": int(m[10]), "kv_cache_usage_pct": float(m[11]),
            "device": "GPU", "prefix_cache_hit_rate_pct": float(m[12])}
    m = _LINE_SPEC.fullmatch(raw)
    if m:
        return m, "spec_decode", {
            "per_position_acceptance": [float(x) for x in m[11].split(b", ") if x],
            "mean_acceptance_length": float(m[6]), "accepted_tps": float(m[7]),
            "drafted_tps": float(m[8]), "accepted": int(m[9]), "drafted": int(m[10]),
            "draft_acceptance_rate_pct": float(m[12])}
    return None


def whole(value: float) -> int | float:
    """A count as an int; NaN or infinity stays a float, which the scan's soundness check
    (``logscan._unsound``) refuses with a warning naming the line (int() would raise)."""
    return int(value) if math.isfinite(value) else value


def _num(text: str, key: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise FieldError(f"{key}: {text!r} is not a number") from None


def parse_stats(msg: str) -> tuple[str, dict[str, Any]]:
    """The periodic stats line: V0 (Swapped/Pending, trailing period), 0.8.0-0.8.2 (no
    engine prefix), 0.8.3+ (``Engine NNN:``), aggregated DP, and 0.13+ optional parts."""
    fast = _FAST_STATS.match(msg)
    if fast:
        return "engine_stats", {
            "engine_index": int(fast[1]), "prompt_tps": float(fast[2]),
            "gen_tps": float(fast[3]), "running": int(fast[4]), "waiting": int(fast[5]),
            "kv_cache_usage_pct": float(fast[6]), "device": "GPU",
            "prefix_cache_hit_rate_pct": float(fast[7])}
    fields: dict[str, Any] = {}
    m = _ENGINE.match(msg)
    if m:
        if m["engine"] is not None:
            fields["engine_index"] = int(m["engine"])
        else:
            fields["engines_aggregated"] = int(m["agg"])
        msg = msg[m.end():]
    body = msg.rstrip().rstrip(",").removesuffix(".")
    fetch = _KV_FETCH.search(body)
    if fetch:
        fields.update(kv_fetch_waiting=int(fetch[1]), kv_fetch_in_progress=int(fetch[2]),
                      kv_fetch_completed=int(fetch[3]))
        body = body[: fetch.start()] + body[fetch.end():]
    for part in body.split(", "):
        part = part.strip()
        if not part:
            continue
        kv = _KV_USAGE.match(part)
        if kv and kv["device"] != "CPU":
            fields["kv_cache_usage_pct"] = float(kv["val"])
            fields["device"] = kv["device"]
            continue
        pair = _PAIR.match(part)
        if not pair:
            if part.startswith(("Avg prompt", "Avg generation", "Running", "Waiting")):
                raise FieldError(f"malformed part {part!r}")
            continue                              # an unknown optional part: skip it
        key = _STATS_KEYS.get(pair["key"])
        if key is None:
            continue
        value = _num(pair["val"], pair["key"])
        fields[key] = whole(value) if key in _INT_FIELDS else value
    for required in ("prompt_tps", "gen_tps", "running", "waiting"):
        if required not in fields:
            raise FieldError(f"no {required} in stats line")
    return "engine_stats", fields


_PER_POS = re.compile(r"Per-position acceptance rate: (?P<list>[\d., nan]*?)(?=, Avg Draft|$)")
_SPEC_KEYS = {
    "Mean acceptance length": ("mean_acceptance_length", float),
    "Accepted throughput": ("accepted_tps", float),
    "Drafted throughput": ("drafted_tps", float),
    "Accepted": ("accepted", int), "Drafted": ("drafted", int),
    "Avg Draft acceptance rate": ("draft_acceptance_rate_pct", float),
    "Draft acceptance rate": ("draft_acceptance_rate_pct", float),
    "System efficiency": ("system_efficiency", float),
    "Number of speculative tokens": ("num_spec_tokens", int),
    "Number of accepted tokens": ("accepted", int),
    "Number of draft tokens": ("drafted", int),
    "Number of draft tokens tokens": ("drafted", int),        # old misspelling
    "Number of emitted tokens": ("emitted", int),
    "Number of emitted tokens tokens": ("emitted", int),
}


def parse_spec(msg: str) -> tuple[str, dict[str, Any]]:
    """Spec-decoding lines: 0.11+ (``SpecDecoding metrics: Mean acceptance length…``),
    0.8.5-0.10, 0.8.3/0.8.4, early V1 and V0 ``Speculative metrics`` (fractions; V0 counters
    cumulative since start)."""
    fast = _FAST_SPEC.match(msg)
    if fast:
        return "spec_decode", {
            "mean_acceptance_length": float(fast[1]), "accepted_tps": float(fast[2]),
            "drafted_tps": float(fast[3]), "accepted": int(fast[4]), "drafted": int(fast[5]),
            "per_position_acceptance": [float(x) for x in fast[6].split(", ") if x],
            "draft_acceptance_rate_pct": float(fast[7])}
    v0 = msg.startswith("Speculative metrics")
    body = msg.split(":", 1)[1].strip().rstrip(".").rstrip(", ").rstrip(",")
    fields: dict[str, Any] = {}
    per = _PER_POS.search(body)
    if per:
        try:
            fields["per_position_acceptance"] = [float(x) for x in per["list"].split(", ") if x]
        except ValueError:
            raise FieldError(f"per-position list {per['list']!r}") from None
        body = body[: per.start()] + body[per.end():]
    for part in body.split(", "):
        key, sep, val = part.strip().partition(": ")
        if not sep or key not in _SPEC_KEYS:
            continue
        name, cast = _SPEC_KEYS[key]
        val = val.replace("tokens/s", "").replace("tokens", "").rstrip("%").strip()
        if val == "nan":
            fields[name] = None
            continue
        value = _num(val, key)
        if name == "draft_acceptance_rate_pct" and v0:
            value *= 100.0                       # V0 and early V1 print a fraction
        fields[name] = whole(value) if cast is int else value
    if v0 and "system_efficiency" in fields:
        fields["cumulative"] = True
    if "accepted" not in fields and "mean_acceptance_length" not in fields:
        raise FieldError("no accepted count or acceptance length")
    return "spec_decode", fields


_STARTUP = [
    (re.compile(r"(?:vLLM API server|vLLM server) version (?P<version>\S+?),?(?: serving model (?P<model>\S+))?$"), "version"),
    (re.compile(r"^Initializing a V1 LLM engine \(v(?P<version>[^)]+)\)"), "version"),
    (re.compile(r"^Initializing an LLM engine \(v(?P<version>[^)]+)\)"), "version"),
    (re.compile(r"^\s*version\s+(?P<version>\d[\w.+-]*)\s*$"), "version"),   # logo line
    (re.compile(r"^(?P<device>\w[\w +]*) KV cache size: (?P<kv_tokens>[\d,]+) tokens(?:, Maximum concurrency for (?P<max_len>[\d,]+) tokens per request: (?P<max_concurrency>[\d.]+)x)?"), "kv_cache"),
    (re.compile(r"Maximum concurrency for (?P<max_len>[\d,]+) tokens per request: (?P<max_concurrency>[\d.]+)x"), "kv_cache"),
    (re.compile(r"^Available KV cache memory: (?P<kv_gib>[\d.]+) GiB"), "kv_cache"),
    (re.compile(r"^# GPU blocks: (?P<gpu_blocks>\d+)"), "kv_cache"),
    (re.compile(r"^Graph capturing finished in (?P<seconds>[\d.]+) secs, took (?P<gib>[\d.]+) GiB"), "cuda_graph"),
    (re.compile(r"torch\.compile (?:takes|took) (?P<seconds>[\d.]+) s in total"), "compile"),
    (re.compile(r"^Compiling a graph for .*? takes (?P<seconds>[\d.]+) s"), "compile"),
    (re.compile(r"^init engine \(profile, create kv cache, warmup model\) took (?P<seconds>[\d.]+) (?:s|seconds)(?: \(compilation: (?P<compile_seconds>[\d.]+) s)?"), "engine_init"),
    (re.compile(r"^Model loading took (?P<gib>[\d.]+) GiB(?: memory)? and (?P<seconds>[\d.]+) seconds"), "model_load"),
    (re.compile(r"^Loading weights took (?P<seconds>[\d.]+) seconds"), "model_load"),
    (re.compile(r"Using (?:AttentionBackendEnum\.)?(?P<attention_backend>\w+?)(?: attention)? backend\.?$"), "backend"),
    # 0.2x: "Using FLASHINFER attention backend out of potential backends: [...]"
    (re.compile(r"^Using (?P<attention_backend>[A-Z][A-Z0-9_]+) attention backend out of potential backends"), "backend"),
    (re.compile(r"^MoE backend: (?P<moe_backend>\w+)"), "backend"),
    (re.compile(r"^Using '(?P<moe_backend>\w+)' \w+ MoE backend"), "backend"),
    (re.compile(r"^Using (?P<moe_method>\w+MoEMethod)$"), "backend"),
    # the KV cache's element type as the attention backend resolved it (kv_cache_dtype=auto
    # leaves it to the checkpoint)
    (re.compile(r"^FlashInfer resolved query dtypes: .*?kv_cache_dtype=(?:torch\.)?(?P<kv_dtype>\w+)"), "kv_dtype"),
    (re.compile(r"^Profiling CUDA graph memory: (?P<graphs>.*?\(largest=(?P<largest>\d+)\).*)$"), "cuda_graph_sizes"),
]
# (pattern, phase, what the line says happened). FlashInfer's "Loading JIT ops" /
# "Finished loading JIT ops" bracket torch's cpp_extension.load, which builds only what is
# missing or stale and otherwise loads the library already compiled: the pair says a load,
# not a compile (flashinfer/jit/core.py, load_cuda_ops). DeepGEMM's line says it compiles.
_JIT = [
    (re.compile(r"flashinfer\.jit: Loading JIT ops: (?P<op>\S+)"), "start", "load"),
    (re.compile(r"flashinfer\.jit: Finished loading JIT ops: (?P<op>\S+)"), "end", "load"),
    (re.compile(r"^JIT kernel warmup starting"), "warmup_start", "warmup"),
    (re.compile(r"^JIT kernel warmup finished in (?P<seconds>[\d.]+)s"), "warmup_end", "warmup"),
    (re.compile(r"Prebuilt kernels not found, using JIT backend"), "fallback", "fallback"),
    (re.compile(r"DeepGEMM JIT Compiling for (?P<op>\S+)"), "start", "compile"),
]
_MEMORY = [
    (re.compile(r"is preempted by PreemptionMode\.(?P<mode>\w+).*total_num_cumulative_preemption=(?P<cumulative>\d+)"), "preemption"),
    (re.compile(r"(?i)\bretry"), "soft_oom_retry"),
    (re.compile(r"Free memory on device|No available memory for the cache blocks|To serve at least one request|not enough GPU memory"), "startup_memory"),
    (re.compile(r"(?i)out of memory|OutOfMemoryError"), "oom"),
]


def _convert(fields: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in fields.items():
        if v is None:
            continue
        if k in ("kv_tokens", "max_len", "gpu_blocks", "largest"):
            out[k] = int(v.replace(",", ""))
        elif k in ("max_concurrency", "kv_gib", "seconds", "gib", "compile_seconds"):
            out[k] = float(v)
        else:
            out[k] = v
    return out


def parse_non_default_args(msg: str) -> tuple[str, dict[str, Any]]:
    text = msg.split("non-default args:", 1)[1].strip()
    try:
        args = ast.literal_eval(text)     # a Python dict repr; literal_eval runs no code
    except (ValueError, SyntaxError):
        raise FieldError("non-default args are not a Python dict literal") from None
    if not isinstance(args, dict):
        raise FieldError("non-default args are not a dict")
    return "server_args", {"args": redact_settings("args", args)}


# The engine's configuration line ("Initializing a V1 LLM engine (v…) with config: a=1, …"):
# the settings it ran with, defaults included. Kept: top-level ``key=value`` pairs named here,
# under the server argument's name; the speculative config's method, model and length.
_CONFIG_KEYS = {"model": "model", "revision": "revision", "max_seq_len": "max_model_len",
                "tensor_parallel_size": "tensor_parallel_size",
                "pipeline_parallel_size": "pipeline_parallel_size",
                "decode_context_parallel_size": "decode_context_parallel_size",
                "kv_cache_dtype": "kv_cache_dtype", "quantization": "quantization",
                "enable_prefix_caching": "enable_prefix_caching", "block_size": "block_size"}
_SPEC_CONFIG = re.compile(r"speculative_config=SpeculativeConfig\((?P<body>[^()]*)\)")
_TOP_PAIR = re.compile(r"(?:^|, )(?P<key>\w+)=(?P<val>'[^']*'|[^,(){}\[\]]*)(?=, |$)")


def _literal(text: str) -> Any:
    """A config value as Python would print it: 'x' -> x, None/True/False, numbers."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_engine_config(msg: str) -> dict[str, Any]:
    """The settings of the engine's configuration line, by the server arguments' names.

    >>> c = parse_engine_config("with config: model='m', speculative_config=SpeculativeConfig("
    ...     "method='dflash', model='d', num_spec_tokens=15), revision=None, max_seq_len=65536, "
    ...     "kv_cache_dtype=auto, enable_prefix_caching=True")
    >>> c["speculative_config"], c["revision"], c["max_model_len"], c["kv_cache_dtype"]
    ({'method': 'dflash', 'model': 'd', 'num_speculative_tokens': 15}, None, 65536, 'auto')
    """
    body = msg.split("with config:", 1)[1].strip()
    out: dict[str, Any] = {}
    spec = _SPEC_CONFIG.search(body)
    if spec:
        pairs = dict(p.split("=", 1) for p in spec["body"].split(", ") if "=" in p)
        names = {"method": "method", "model": "model", "num_spec_tokens": "num_speculative_tokens"}
        out["speculative_config"] = {names[k]: _literal(v) for k, v in pairs.items()
                                     if k in names}
        body = body[:spec.start()] + body[spec.end():]
    # nested configs (compilation_config={...}, X=Cfg(...)) hold their own pairs: drop them
    flat = re.sub(r"\w+=\w*\((?:[^()]|\([^()]*\))*\)|\w+=\{.*?\}(?=, \w+=|$)", "", body)
    for m in _TOP_PAIR.finditer(flat):
        if m["key"] in _CONFIG_KEYS:
            out[_CONFIG_KEYS[m["key"]]] = _literal(m["val"].strip())
    return redact_settings("args", out)


def parse_message(msg: str, level: str | None) -> tuple[str, dict[str, Any]] | None:
    """Classify one vLLM message; None when it is none of our kinds."""
    m = msg.strip()
    if "Avg prompt throughput" in m:
        return parse_stats(m)
    if m.startswith(("SpecDecoding metrics", "Speculative metrics")):
        return parse_spec(m)
    if m.startswith("Prefix cache hit rate: GPU"):
        parts = re.findall(r"(GPU|CPU): ([\d.]+)%", m)
        return "prefix_cache_v0", {f"{d.lower()}_hit_rate_pct": float(v) for d, v in parts}
    if "non-default args:" in m:
        return parse_non_default_args(m)
    for rx, phase, what in _JIT:
        if mm := rx.search(m):
            return "jit_event", {"phase": phase, "what": what, **_convert(mm.groupdict())}
    if level in ("WARNING", "ERROR", "CRITICAL") or "out of memory" in m.lower() or \
            "OutOfMemory" in m or "preempted" in m:
        for rx, what in _MEMORY:
            if rx.search(m) and (what != "soft_oom_retry" or "memory" in m.lower()):
                return "memory_event", {"event": what, "level": level, "message": m[:300]}
    if "EngineCore encountered a fatal error" in m or "Engine core initialization failed" in m:
        return "engine_error", {"message": m[:300]}
    for rx, kind in _STARTUP:
        if mm := rx.search(m):
            fields = _convert(mm.groupdict())
            if kind == "version" and "with config:" in m:
                fields["config"] = parse_engine_config(m)
            return kind, fields
    return None
