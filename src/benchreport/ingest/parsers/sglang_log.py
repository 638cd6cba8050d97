"""SGLang server-log messages (after the prefix), every era in engine-formats.md 3.2-3.7.

Prefill and Decode batch lines are parsed by key, not position: split on ", " after the
"batch" word (period or comma), drop the trailing-comma era's empty part, read each
``key: value`` pair. Unknown keys are kept under their snake_case name.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ...core.redact import redact_settings
from .prefix import message_starts
from .vllm_log import FieldError, whole

# Where records are found (see vllm_log): batch lines are frequent; the rest are rare message
# starts after the "] " of the prefix, or the prefix-less lines of 0.1.x.
FREQUENT = (b"new fill batch",)
# Up to 0.1.x decode lines had no "Decode batch" word and no prefix; they come with "new fill
# batch" lines, so they are looked for only in blocks that have one.
ANCIENT = (b"new fill batch", b"\n#running-req: ")
RARE = (
    b"Prefill batch", b"Decode batch", b"server_args=", b"KV Cache is allocated", b"max_total_num_tokens=", b"Load weight end",
    b"Capture ", b"KV cache pool is full", b"Decode out of memory", b"Prefill out of memory",
    b"Not enough memory", b"The memory capacity", b"Retraction host", b"Try DeepGEMM JIT",
    b"Entering DeepGEMM", b"The server is fired up", b"DCP is enabled", b"Traceback",
    b"Scheduler hit an exception", b"DetokenizerManager hit an exception",
    b"DataParallelController hit an exception", b"Max running requests is reset",
    b"Attention backend not specified", b"Using ",
)
RARE_RE = message_starts(RARE)
# Rare markers of a failure: the scanner looks for tracebacks after these lines (logscan).
ERRORS = frozenset((
    b"Traceback", b"Scheduler hit an exception", b"DetokenizerManager hit an exception",
    b"DataParallelController hit an exception", b"Decode out of memory",
    b"Prefill out of memory", b"Not enough memory", b"Retraction host",
))

_BATCH = re.compile(r"^(?P<what>Prefill|Decode) batch(?: \[\d+\])?(?:\(mixed #running-req: (?P<mixed>\d+)\))?[.,] ")
_KEYS = {
    "#new-seq": "new_seq", "#new-token": "new_token", "#cached-token": "cached_token",
    "#running-req": "running_req", "#queue-req": "queue_req", "#pending-token": "pending_token",
    "#token": "token", "token usage": "token_usage", "accept len": "accept_len",
    "accept rate": "accept_rate", "input throughput (token/s)": "input_tps",
    "gen throughput (token/s)": "gen_tps", "cache hit rate": "cache_hit_rate_pct",
    "#replay-token": "replay_token", "#retracted-req": "retracted_req",
    "pre-allocated usage": "preallocated_usage", "#prealloc-req": "prealloc_req",
    "#transfer-req": "transfer_req", "full token usage": "full_token_usage",
    "swa token usage": "swa_token_usage", "mamba usage": "mamba_usage",
    "#full token": "full_token", "#swa token": "swa_token",
}
_INTS = {"new_seq", "new_token", "cached_token", "running_req", "queue_req", "pending_token",
         "token", "replay_token", "retracted_req", "prealloc_req", "transfer_req", "full_token",
         "swa_token"}
_PAIR = re.compile(r"^(?P<key>[#A-Za-z][^:]*): (?P<val>.+)$")


def _snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower().lstrip("#")).strip("_")


def _value(name: str, text: str) -> Any:
    text = text.strip()
    if text in ("True", "False"):
        return text == "True"
    text = text.rstrip("%")
    try:
        number = float(text)
    except ValueError:
        raise FieldError(f"{name}: {text!r} is not a number") from None
    return whole(number) if name in _INTS else number


# 0.5.15+ shapes of the two batch lines (plain models, no PD/MFU parts), one match each.
_FAST_PREFILL = re.compile(
    r"Prefill batch, #new-seq: (\d+), #new-token: (\d+), #cached-token: (\d+), token usage: "
    r"([\d.]+), #running-req: (\d+), #queue-req: (\d+), #pending-token: (\d+), (\w+) graph: "
    r"(True|False), input throughput \(token/s\): ([\d.]+)$")
_FAST_DECODE = re.compile(
    r"Decode batch, #running-req: (\d+), #token: (\d+), token usage: ([\d.]+), (?:accept len: "
    r"([\d.]+), accept rate: ([\d.]+), )?(\w+) graph: (True|False), gen throughput "
    r"\(token/s\): ([\d.]+), #queue-req: (\d+)$")


_LINE_PREFIX = (rb"\[(?P<date>\d{4}-\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d)(?:\.\d{3})?"
                rb"(?P<ranks>(?: [A-Z_]+\d+)*)\] ")
_LINE_PREFILL = re.compile(_LINE_PREFIX + _FAST_PREFILL.pattern.encode().rstrip(b"$") + rb"\r?")
_LINE_DECODE = re.compile(_LINE_PREFIX + _FAST_DECODE.pattern.encode().rstrip(b"$") + rb"\r?")


def fast_line(raw: bytes):
    """(prefix fields, kind, fields) for a current-era batch line, else None."""
    f = _LINE_PREFILL.fullmatch(raw)
    if f:
        return f, "prefill_batch", {
            "new_seq": int(f[4]), "new_token": int(f[5]), "cached_token": int(f[6]),
            "token_usage": float(f[7]), "running_req": int(f[8]), "queue_req": int(f[9]),
            "pending_token": int(f[10]), "graph": f[11].decode(), "graph_used": f[12] == b"True",
            "input_tps": float(f[13])}
    f = _LINE_DECODE.fullmatch(raw)
    if f:
        fields = {"running_req": int(f[4]), "token": int(f[5]), "token_usage": float(f[6]),
                  "graph": f[9].decode(), "graph_used": f[10] == b"True",
                  "gen_tps": float(f[11]), "queue_req": int(f[12])}
        if f[7] is not None:
            fields["accept_len"], fields["accept_rate"] = float(f[7]), float(f[8])
        return f, "decode_batch", fields
    return None


def parse_batch(msg: str) -> tuple[str, dict[str, Any]]:
    f = _FAST_PREFILL.match(msg)
    if f:
        return "prefill_batch", {
            "new_seq": int(f[1]), "new_token": int(f[2]), "cached_token": int(f[3]),
            "token_usage": float(f[4]), "running_req": int(f[5]), "queue_req": int(f[6]),
            "pending_token": int(f[7]), "graph": f[8], "graph_used": f[9] == "True",
            "input_tps": float(f[10])}
    f = _FAST_DECODE.match(msg)
    if f:
        fields = {"running_req": int(f[1]), "token": int(f[2]), "token_usage": float(f[3]),
                  "graph": f[6], "graph_used": f[7] == "True", "gen_tps": float(f[8]),
                  "queue_req": int(f[9])}
        if f[4] is not None:
            fields["accept_len"], fields["accept_rate"] = float(f[4]), float(f[5])
        return "decode_batch", fields
    m = _BATCH.match(msg)
    if m is None:
        raise FieldError("not a batch line")
    kind = "prefill_batch" if m["what"] == "Prefill" else "decode_batch"
    fields: dict[str, Any] = {}
    if m["mixed"]:
        fields["running_req"] = int(m["mixed"])
    for part in msg[m.end():].rstrip(", ").split(", "):
        part = part.strip()
        if not part:
            continue                      # 0.4.10-0.5.8 end every line with ", "
        pair = _PAIR.match(part)
        if not pair:
            continue                      # cropped or glued tail: skip, others stay valid
        key = pair["key"].strip()
        if key.endswith(" graph"):        # "cuda graph", "cpu graph", "npu graph", "musa graph"
            fields["graph"] = key.split()[0]
            fields["graph_used"] = _value("graph", pair["val"])
            continue
        name = _KEYS.get(key, _snake(key))
        fields[name] = _value(name, pair["val"])
    needed = ("new_token",) if kind == "prefill_batch" else ("running_req",)
    for n in needed:
        if n not in fields:
            raise FieldError(f"no {n} in {kind} line")
    return kind, fields


_OLD_FILL = re.compile(r"^new fill batch\. #seq: (\d+)\. #cached_token: (\d+)\. #new_token: (\d+)\. "
                       r"#remaining_req: (\d+)\. #running_req: (\d+)\.(?: tree_cache_hit_rate: "
                       r"([\d.]+)%)?")
_BARE_DECODE = re.compile(r"^#running-req: (\d+), #token: (\d+), token usage: ([\d.]+), "
                          r"(?:gen throughput \(token/s\): ([\d.]+), )?#queue-req: (\d+)")
_RETRACT = re.compile(r"#retracted_reqs: (?P<retracted>\d+)")
# The other counters of a retraction line across eras (engine-formats.md 3.5), by name.
_RETRACT_MORE = (
    ("aborted_retracted", re.compile(r"#aborted_retracted_reqs: (\d+)"), int),
    ("new_tokens_gained", re.compile(r"#new_tokens_gained: (\d+)"), int),
    ("mamba_num_gained", re.compile(r"#mamba_num_gained: (\d+)"), int),
)
_RATIO = re.compile(r"#new_token_ratio: ([\d.]+) -> ([\d.]+)")
_OTHER = [
    (re.compile(r"^KV Cache is allocated\.(?: dtype: (?:torch\.)?(?P<kv_dtype>\w+),)?.*?#tokens: (?P<kv_tokens>\d+)"), "kv_cache"),
    # a setting the engine changed from what it was given or chose itself
    (re.compile(r"^Max running requests is reset to (?P<max_running_requests>\d+) for (?P<reason>[\w ]+?)\."), "engine_reset"),
    (re.compile(r"^Using (?P<moe_method>\w+MoEMethod)$"), "backend"),
    (re.compile(r"^Attention backend not specified\. Use (?P<attention_backend>\w+) backend by default"), "engine_reset"),
    (re.compile(r"^max_total_num_tokens=(?P<kv_tokens>\d+), chunked_prefill_size=(?P<chunked_prefill_size>-?\d+), max_prefill_tokens=(?P<max_prefill_tokens>\d+), max_running_requests=(?P<max_running_requests>\d+), context_len=(?P<context_len>\d+)"), "capacity"),
    (re.compile(r"^Capture .*?cuda graph end\. .*?(?:elapsed=|Time elapsed: )(?P<seconds>[\d.]+) s"), "cuda_graph"),
    (re.compile(r"^Load weight end\. (?:elapsed=(?P<seconds>[\d.]+) s, )?type=(?P<model_class>\w+)"), "model_load"),
    (re.compile(r"DeepGEMM JIT Compiling for (?P<op>\S+)"), "jit_event"),
    (re.compile(r"Entering DeepGEMM JIT Pre-Compile session"), "jit_event"),
    (re.compile(r"^The server is fired up and ready to roll!"), "ready"),
    (re.compile(r"non-adaptive verification"), "spec_mode"),
]
_MEMORY = re.compile(r"Prefill out of memory|Decode out of memory\. Try|Not enough memory\. "
                     r"Please try to increase|Capture cuda graph failed|memory capacity is "
                     r"unbalanced|Retraction host KV pool exhausted")


def parse_server_args(msg: str) -> tuple[str, dict[str, Any]]:
    """``server_args=ServerArgs(a=1, ...)`` (≤0.5.17) or ``server_args={...}`` (0.5.20+),
    read with ``ast`` literals only: nothing is evaluated."""
    text = msg.split("server_args=", 1)[1].strip()
    try:
        node = ast.parse(text, mode="eval").body
        if isinstance(node, ast.Call):
            args = {}
            for kw in node.keywords:
                try:
                    args[kw.arg] = ast.literal_eval(kw.value)
                except ValueError:
                    args[kw.arg] = ast.unparse(kw.value)
        else:
            args = ast.literal_eval(node)
    except (ValueError, SyntaxError):
        raise FieldError("server_args is not a dict or ServerArgs(...) literal") from None
    if not isinstance(args, dict):
        raise FieldError("server_args is not a mapping")
    return "server_args", {"args": redact_settings("args", args)}


def parse_message(msg: str, level: str | None = None) -> tuple[str, dict[str, Any]] | None:
    m = msg.strip()
    if m.startswith(("Prefill batch", "Decode batch")):
        return parse_batch(m)
    if m.startswith("new fill batch"):
        f = _OLD_FILL.match(m)
        if not f:
            raise FieldError("malformed 'new fill batch' line")
        fields = {"new_seq": int(f[1]), "cached_token": int(f[2]), "new_token": int(f[3]),
                  "queue_req": int(f[4]), "running_req": int(f[5])}
        if f[6] is not None:              # the radix tree's running hit rate, like 0.2-0.4.3
            fields["cache_hit_rate_pct"] = float(f[6])
        return "prefill_batch", fields
    if m.startswith("#running-req:"):
        f = _BARE_DECODE.match(m)
        if f:
            fields = {"running_req": int(f[1]), "token": int(f[2]), "token_usage": float(f[3]),
                      "queue_req": int(f[5])}
            if f[4]:
                fields["gen_tps"] = float(f[4])
            return "decode_batch", fields
        return None
    if m.startswith("server_args="):
        return parse_server_args(m)
    if "Retract" in m or "Decode out of memory happened" in m:
        r = _RETRACT.search(m)
        if r:
            fields: dict[str, Any] = {"retracted": int(r["retracted"])}
            for name, rx, cast in _RETRACT_MORE:
                if more := rx.search(m):
                    fields[name] = cast(more[1])
            if ratio := _RATIO.search(m):
                fields["new_token_ratio_from"] = float(ratio[1])
                fields["new_token_ratio_to"] = float(ratio[2])
            fields["message"] = m[:300]
            return "retraction", fields
    if _MEMORY.search(m):
        return "memory_event", {"event": "oom", "message": m[:300]}
    for rx, kind in _OTHER:
        if mm := rx.search(m):
            fields = {k: v for k, v in mm.groupdict().items() if v is not None}
            for k, v in list(fields.items()):
                if k not in ("model_class", "op", "kv_dtype", "reason", "attention_backend",
                             "moe_method"):
                    fields[k] = float(v) if "." in v else int(v)
            if kind == "jit_event" and "op" in fields:     # this line says it compiles
                fields.update(phase="start", what="compile")
            return kind, fields
    return None
