"""Secrets never leave ingest: the one redaction every stored or printed text passes.

Two kinds of input, two functions:

* ``redact(text)``: free text (a log line, an exception, an error a client recorded, a
  dataset path, run.yaml's title). It replaces, with ``[redacted]``: the credentials of a
  URL (``https://user:pass@host`` keeps the scheme and the host), the credential after
  ``Bearer`` / ``Basic`` / ``Authorization:`` (the scheme word stays), the value of a
  ``name=value`` / ``name: value`` / ``--name value`` whose name says secret (see
  `secret_name`) — which covers query parameters such as ``token=``, ``sig=`` — and
  well-known token shapes (``hf_…``, ``sk-…``, ``ghp_…``, ``AKIA…``, JWTs ``eyJ…``, …) and
  long mixed-case random-looking strings. Ordinary text is left exactly as it is: model
  names, paths, numbers, ``max_num_batched_tokens``, "output tokens", "tokens/s".
* ``redact_settings(field, mapping)``: the settings an engine was launched with (a launch
  file's ``env`` and ``flags``, a log's ``non-default args`` / ``server_args``). Here an
  ALLOW-LIST decides what is shown: a setting whose name says secret is replaced whatever
  the list says; a setting on the list (`safe_setting`, `safe_env`) is shown with its value
  through ``redact``; a flag not on the list is shown when its value is a number, a
  switch or None (nothing a secret can hide in), else replaced; an environment variable
  not on the list keeps its name and loses its value.

Nothing is kept of a replaced value: the raw files under ``data/`` are the user's own.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
from typing import Any

REDACTED = "[redacted]"

# --- names ----------------------------------------------------------------------------

# a word of a name that says the value is a secret, wherever it stands
_SECRET_WORDS = frozenset({
    "secret", "secrets", "password", "passwd", "passphrase", "credential", "credentials",
    "creds", "auth", "oauth", "authorization", "authentication", "apikey", "bearer",
    "cookie", "signature", "privatekey", "jwt"})
# a word that says secret as the last word of a name (HF_TOKEN, api_key, x-api-key; and
# AWS_ACCESS_KEY_ID); not "tokens" (max_num_batched_tokens) nor "tokenizer", nor "token"
# inside a name (return_tokens_as_token_ids, bos_token_id)
_SECRET_TAIL = frozenset({"token", "key"})
# ... unless the word before makes it a count, a unit or a vocabulary entry (ms_per_token,
# new_token, pad_token, cache_key)
_NOT_SECRET_BEFORE = {
    "token": frozenset({"per", "first", "last", "next", "new", "cached", "output", "input",
                        "prompt", "bonus", "eos", "bos", "pad", "unk", "sep", "cls", "mask",
                        "image", "video", "audio", "special", "draft", "max", "min", "num",
                        "total", "start", "end", "stop", "generation", "gen", "vocab",
                        "placeholder", "dummy", "second", "third"}),
    "key": frozenset({"sort", "cache", "partition", "group", "hash", "lookup", "routing",
                      "shard", "missing", "unexpected", "dict", "index", "primary", "foreign",
                      "label", "metric"}),
}
# names that are secret on their own: query parameters of signed URLs
_SECRET_ALONE = frozenset({"sig", "sas", "pat"})


def _words(name: str) -> list[str]:
    """``hfToken`` / ``HF_TOKEN`` / ``--hf-token`` → ["hf", "token"]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def secret_name(name: str) -> bool:
    """Whether a setting, variable, flag or parameter name says its value is a secret.

    >>> [secret_name(n) for n in ("HF_TOKEN", "OPENAI_API_KEY", "--hf-token",
    ...  "admin_api_key", "api_key", "AWS_ACCESS_KEY_ID", "ssl_keyfile_password", "sig")]
    [True, True, True, True, True, True, True, True]
    >>> [secret_name(n) for n in ("max_num_batched_tokens", "tokenizer", "num_speculative_tokens",
    ...  "TOKENIZERS_PARALLELISM", "return_tokens_as_token_ids", "ssl_keyfile", "model",
    ...  "ms_per_token", "new_token", "pad_token", "cache_key")]
    [False, False, False, False, False, False, False, False, False, False, False]
    """
    words = _words(name)
    if not words:
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    if words[-2:] == ["key", "id"]:
        return True
    if words[-1] in _SECRET_TAIL:
        return len(words) == 1 or words[-2] not in _NOT_SECRET_BEFORE[words[-1]]
    return len(words) == 1 and words[0] in _SECRET_ALONE


# --- the allow-list of launch settings ---------------------------------------------------

# Flag and argument names (vLLM's and SGLang's command lines, ``non-default args``,
# ``server_args``), as ``flags_from_args`` spells them (``--tp-size`` → ``tp_size``).
SAFE_SETTINGS = frozenset({
    "_positional", "model", "model_tag", "served_model_name", "tokenizer", "revision",
    "code_revision", "tokenizer_revision", "host", "port", "dtype", "quantization",
    "device", "seed", "random_seed", "tp", "pp", "dp", "ep", "dcp", "trust_remote_code",
    "mem_fraction_static", "gpu_memory_utilization", "swap_space", "cpu_offload_gb",
    "block_size", "page_size", "enforce_eager", "distributed_executor_backend",
    "kv_cache_dtype", "load_format", "context_length", "max_model_len", "task", "runner",
    "convert", "generation_config", "chat_template", "hf_overrides", "api_server_count",
    "nnodes", "node_rank", "dist_init_addr", "data_parallel_address", "uvicorn_log_level",
    "disable_log_requests", "disable_log_stats", "enable_log_requests", "stream_interval",
    "schedule_conservativeness", "watchdog_timeout", "weight_version", "download_dir",
    "tool_call_parser", "reasoning_parser", "served_model", "lora_modules", "max_loras",
    "max_lora_rank", "enable_lora", "preemption_mode", "scheduling_policy", "root_path",
    "limit_mm_per_prompt", "mm_processor_kwargs", "override_generation_config",
})
SAFE_PREFIXES = (
    "enable_", "disable_", "max_", "min_", "num_", "use_", "skip_", "speculative_",
    "cuda_graph_", "cudagraph_", "moe_", "attention_", "attn_", "kv_", "prefill_",
    "decode_", "chunked_", "schedule_", "scheduler_", "tokenizer_", "detokenizer_",
    "tensor_parallel", "pipeline_parallel", "data_parallel", "expert_parallel",
    "context_parallel", "decode_context_parallel", "compilation_", "torch_compile",
    "log_", "enable", "mamba_", "lora_", "mm_", "dp_", "tp_", "pp_", "ep_", "dcp_",
    "deepep_", "ds_", "nsa_", "hicache_", "radix_", "page_", "cpu_", "gpu_", "swa_",
    "eplb_", "load_", "model_", "quantization_", "override_", "served_", "reasoning_",
    "tool_", "chat_", "grammar_", "sampling_", "triton_", "flashinfer_", "cuda_",
    "allow_", "async_", "pd_", "disaggregation_", "hybrid_", "sleep_", "show_", "stream_",
)
SAFE_SUFFIXES = (
    "_size", "_sizes", "_len", "_length", "_tokens", "_seqs", "_requests", "_backend",
    "_dtype", "_policy", "_mode", "_parser", "_format", "_level", "_path", "_dir",
    "_name", "_config", "_method", "_algorithm", "_impl", "_strategy", "_ratio",
    "_fraction", "_utilization", "_timeout", "_interval", "_port", "_host", "_steps",
    "_num", "_threshold", "_factor", "_seconds", "_s", "_ms", "_limit", "_count", "_rank",
    "_nodes", "_blocks", "_gb", "_gib", "_bytes", "_type", "_version", "_parallel",
    "_degree", "_capacity", "_buckets", "_bs", "_kernel", "_kernels", "_worker_num",
    "_id", "_step", "_batch", "_weight", "_weights", "_compile", "_overlap", "_args",
    "_compiler", "_location", "_modules", "_role", "_endpoint",
)

# Environment variables: engine switches and device, NCCL, threading and cache settings.
SAFE_ENV = frozenset({
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "HF_HOME",
    "HF_HUB_OFFLINE", "HF_HUB_ENABLE_HF_TRANSFER", "HF_DATASETS_OFFLINE",
    "TRANSFORMERS_OFFLINE", "TRANSFORMERS_CACHE", "TOKENIZERS_PARALLELISM",
    "PYTHONUNBUFFERED", "PYTHONHASHSEED", "TZ", "LANG", "LC_ALL", "MAX_JOBS",
    "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_ORDER",
})
SAFE_ENV_PREFIXES = (
    "VLLM_", "SGLANG_", "SGL_", "NCCL_", "CUDA_", "NVIDIA_", "TORCH_", "TORCHINDUCTOR_",
    "PYTORCH_", "OMP_", "TRITON_", "FLASHINFER_", "NVTE_", "HIP_", "HSA_", "ROCM_",
    "AITER_", "GLOO_", "MC_", "MOONCAKE_", "UCX_", "NVSHMEM_", "DG_", "TRTLLM_",
)


def safe_setting(name: str) -> bool:
    """Whether a launch flag or a server argument is on the allow-list (by its name).

    >>> [safe_setting(n) for n in ("tensor_parallel_size", "max_num_batched_tokens",
    ...  "moe_runner_backend", "speculative_config", "gpu_memory_utilization", "port")]
    [True, True, True, True, True, True]
    >>> safe_setting("license_blob"), safe_setting("hf_token")
    (False, False)
    """
    key = name.lstrip("-").replace("-", "_").lower()
    if secret_name(key):
        return False
    return key in SAFE_SETTINGS or key.startswith(SAFE_PREFIXES) or key.endswith(SAFE_SUFFIXES)


def safe_env(name: str) -> bool:
    """Whether an environment variable's value may be shown (by its name).

    >>> safe_env("CUDA_VISIBLE_DEVICES"), safe_env("VLLM_USE_V1"), safe_env("NCCL_DEBUG")
    (True, True, True)
    >>> safe_env("HF_TOKEN"), safe_env("VLLM_API_KEY"), safe_env("HTTPS_PROXY")
    (False, False, False)
    """
    return not secret_name(name) and (name in SAFE_ENV or name.startswith(SAFE_ENV_PREFIXES))


# --- free text ------------------------------------------------------------------------

_URL_USER = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,15}://)([^\s/@?#\"'<>]+)@")
_AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
    r"(?!(?:(?:bearer|basic|token|digest|negotiate)\s+)?\[redacted\])"
    r"((?:bearer|basic|token|digest|negotiate)\s+)?([^\s\"',;)}\]>]+)")
_BEARER = re.compile(r"\b((?:Bearer|BEARER|bearer)\s+)(?!\[redacted\])([A-Za-z0-9._~+/=-]+)")
_BASIC = re.compile(r"\b((?:Basic|BASIC)\s+)(?=[A-Za-z0-9+/]*[0-9+/=])([A-Za-z0-9+/]{6,}={0,2})")
# name=value, name: value, "name": "value", --name value, ?name=value&…
# (only names holding a word of a secret name are candidates, so that a match that turns
# out harmless never swallows the next assignment; whitespace separates only a --flag)
_NAME_HINT = r"(?i:token|key|secret|pass|auth|cred|bearer|cookie|sig|jwt|sas|pat)"
_ASSIGN = re.compile(
    r"(?<![\w.-])(?P<open>[\"']?)(?P<dash>--?)?"
    r"(?P<name>(?=[A-Za-z_])[A-Za-z0-9_.-]*?" + _NAME_HINT + r"[A-Za-z0-9_.-]*)(?P=open)"
    r"(?P<sep>\s*[:=]\s*|(?(dash)\s+|(?!)))"
    r"(?!\[redacted\])(?:(?P<q>[\"'])(?P<qv>[^\"'\n]*)(?P=q)"
    r"|(?P<bare>[^\s\"'`,;&)}\]>{\[(<][^\s\"'`,;&)}\]>]*))")
_TOKEN_SHAPES = re.compile(
    r"\bhf_[A-Za-z0-9]{16,}"                       # Hugging Face
    r"|\bsk-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_-]{16,}"   # OpenAI, Anthropic (sk-proj-…, sk-ant-…)
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"   # GitHub
    r"|\bglpat-[A-Za-z0-9_-]{16,}"                 # GitLab
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"            # Slack
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"              # AWS access key id
    r"|\bAIza[0-9A-Za-z_-]{30,}"                   # Google API key
    r"|\beyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+){0,2}")   # JWT
# a long run of letters and digits mixing cases and digits: a key of no known shape (hex
# digests are one case; names and paths have separators)
_RANDOM = re.compile(r"(?<![\w./-])(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])"
                     r"[A-Za-z0-9]{32,}(?![\w./-])")
_CLASS_SWITCH = re.compile(r"(?<=[a-z])(?=[A-Z\d])|(?<=[A-Z])(?=[a-z\d])|(?<=\d)(?=[A-Za-z])")


def _random_looking(m: re.Match) -> str:
    """A long run of letters and digits that switches between upper case, lower case and
    digits as often as random text does (a key), unlike a CamelCase class name such as
    ``CompressedTensorsWNA16MarlinMoEMethod``."""
    run = m[0]
    switches = len(_CLASS_SWITCH.findall(run))
    return REDACTED if switches >= 0.45 * len(run) else run
_MAYBE = re.compile(r"(?i)token|key|secret|pass|auth|cred|bearer|basic|sig|cookie|jwt|sas|"
                    r"pat|://|hf_|sk-|gh[pousr]_|github_pat_|glpat|xox|akia|asia|aiza|eyj|"
                    r"[A-Za-z0-9]{32}")
# values that hide nothing: numbers, switches, None, and the scheme word of an
# ``Authorization: Bearer [redacted]`` whose credential is already replaced
_PLAIN_VALUE = re.compile(r"[-+]?[\d.,]+%?|true|false|none|null|nan|inf|"
                          r"bearer|basic|token|digest|negotiate", re.IGNORECASE)


def _assignment(m: re.Match) -> str:
    name, sep = m["name"], m["sep"]
    if not secret_name(name):
        return m[0]
    if not sep.strip() and not m["dash"]:
        return m[0]            # "output token throughput": a word, not a flag
    if ":" in sep and not m["open"] and name.lower() in _SECRET_TAIL | _SECRET_ALONE:
        return m[0]            # "Missing key: …": prose, unless quoted like JSON
    value = m["qv"] if m["q"] else m["bare"]
    if REDACTED in value or _PLAIN_VALUE.fullmatch(value) or (m["dash"] and not sep.strip()
                                         and value.startswith("-")):
        return m[0]            # a number, a switch, None, or already redacted
    start = m.start("qv") if m["q"] else m.start("bare")
    end = m.end("qv") if m["q"] else m.end("bare")
    return m[0][: start - m.start()] + REDACTED + m[0][end - m.start():]


# Characters that act on a terminal or a page instead of showing: C0 and C1 controls (ESC
# starts a terminal escape, NUL ends C strings) and the bidirectional overrides and isolates
# (U+202E turns what follows around). Tab and newline are text.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                        "\u2066-\u2069]")


def visible(text: str) -> str:
    r"""``text`` with every control or direction character shown as its escape (``\x1b``,
    ``\u202e``), so it reaches a page, a Markdown file or a terminal as characters.

    >>> visible("Kimi\x1b[31m-K3\u202e\x00 tab\tand newline\n stay")
    'Kimi\\x1b[31m-K3\\u202e\\x00 tab\tand newline\n stay'
    """
    if text.isprintable():
        return text
    return _INVISIBLE.sub(lambda m: ascii(m[0])[1:-1], text)


def redact(text: str) -> str:
    """``text`` with every credential in it replaced by ``[redacted]``, and control and
    direction characters shown as escapes (`visible`).

    >>> redact("genai-bench benchmark --api-key sk-abc123456789 --model m")
    'genai-bench benchmark --api-key [redacted] --model m'
    >>> redact('{"Authorization": "Bearer abcdef"}')
    '{"Authorization": "Bearer [redacted]"}'
    >>> redact("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 via http://admin:pass@proxy:3128/")
    'HF_TOKEN=[redacted] via http://[redacted]@proxy:3128/'
    >>> redact("s3://b/d.json?X-Amz-Signature=abc123&sig=xyz&part=2")
    's3://b/d.json?X-Amz-Signature=[redacted]&sig=[redacted]&part=2'
    >>> redact("--max-num-batched-tokens 8192, 935.2 tokens/s, #new-token: 3042, Kimi-K3")
    '--max-num-batched-tokens 8192, 935.2 tokens/s, #new-token: 3042, Kimi-K3'
    """
    if not text:
        return text
    if len(text) <= _SHORT:
        return _redact_short(text)
    return _redact(text)


_SHORT = 80          # texts this short recur (levels, process names, units): remembered


@functools.lru_cache(maxsize=1 << 14)
def _redact_short(text: str) -> str:
    return _redact(text)


def _redact(text: str) -> str:
    text = visible(text)
    if not text.isascii():
        return _every_pattern(text)
    low = text.lower()
    if not (any(w in low for w in _MAYBE_WORDS) or _LONG_RUN.search(text)):
        return text                      # what _MAYBE says, without its slow search
    for rx, repl, needed in _IN_TURN:
        if needed(text, low):
            done = rx.sub(repl, text)
            if done != text:
                text, low = done, done.lower()
    return text


def _every_pattern(text: str) -> str:
    """``redact``'s patterns, each over the whole text (the path for any text that is
    not ASCII; ``redact`` skips, on ASCII text, the patterns whose literals it lacks)."""
    if not _MAYBE.search(text):
        return text
    for rx, repl, _ in _IN_TURN:
        text = rx.sub(repl, text)
    return text


def _may_assign(text: str, low: str) -> bool:
    """Whether ``_ASSIGN`` can match: a word of a secret name, then the rest of a name,
    a quote, and ``:``/``=`` or a space (a cheap necessary test, on ASCII text)."""
    for hint in _HINT_WORDS:
        at = low.find(hint)
        while at != -1:
            if _AFTER_HINT.match(low, at + len(hint)):
                return True
            at = low.find(hint, at + 1)
    return False


# _MAYBE's literals (ASCII, lower case) and its long run; the words of _NAME_HINT
_MAYBE_WORDS = ("token", "key", "secret", "pass", "auth", "cred", "bearer", "basic", "sig",
                "cookie", "jwt", "sas", "pat", "://", "hf_", "sk-", "ghp_", "gho_", "ghu_",
                "ghs_", "ghr_", "github_pat_", "glpat", "xox", "akia", "asia", "aiza", "eyj")
_LONG_RUN = re.compile(r"[A-Za-z0-9]{32}")
_HINT_WORDS = ("token", "key", "secret", "pass", "auth", "cred", "bearer", "cookie", "sig",
               "jwt", "sas", "pat")
_AFTER_HINT = re.compile(r"[a-z0-9_.-]*[\"']?(?:\s*[:=]|\s)")
_SHAPE_LITERALS = ("hf_", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
                   "glpat-", "xox", "AKIA", "ASIA", "AIza", "eyJ")
# the patterns in the order they apply, each with what it replaces a match by and a cheap
# test that the text holds what any match of it must (on ASCII text; ``low`` lower case)
_IN_TURN = (
    (_URL_USER, lambda m: m[1] + REDACTED + "@", lambda t, low: "://" in low),
    (_AUTH_HEADER, lambda m: m[1] + (m[2] or "") + REDACTED,
     lambda t, low: "authorization" in low),
    (_BEARER, lambda m: m[1] + REDACTED, lambda t, low: "bearer" in low),
    (_BASIC, lambda m: m[1] + REDACTED, lambda t, low: "basic" in low),
    (_ASSIGN, _assignment, _may_assign),
    (_TOKEN_SHAPES, REDACTED, lambda t, low: any(x in t for x in _SHAPE_LITERALS)),
    (_RANDOM, _random_looking, lambda t, low: _LONG_RUN.search(t) is not None),
)


_FLAG_LINE = re.compile(r"\s*(?:-\s+)?[\"']?(?P<flag>--?[A-Za-z][\w.-]*)[\"']?\s*\\?\s*")
_VALUE_LINE = re.compile(r"(?P<head>\s*(?:-\s+)?[\"']?)(?P<value>.*?)(?P<tail>[\"']?\s*\\?\s*)")


def redact_line(line: str, previous: str = "") -> str:
    """A line of a file, read on its own (an excerpt): ``redact``, and the whole value when
    the line before is a bare flag whose name says secret, as a launch file lists a
    command line one word a line (``- --api-key`` then ``- sk-…``) or a shell script
    continues one (``--api-key \\`` then the key).

    >>> redact_line("- k3y", previous="- --api-key"), redact_line("- '8'", previous="- --tp-size")
    ('- [redacted]', "- '8'")
    """
    line = redact(line)
    flag = _FLAG_LINE.fullmatch(previous[:200]) if previous else None
    if flag and secret_name(flag["flag"]) and REDACTED not in line:
        value = _VALUE_LINE.fullmatch(line)
        if value and value["value"] and not value["value"].startswith("-"):
            return value["head"] + REDACTED + value["tail"]
    return line


def redact_value(value: Any) -> Any:
    """``redact`` applied to every string inside a value: dicts by their values (a dict
    entry whose key says secret loses its value), lists, tuples and dataclasses (a run's
    metadata as run.yaml declares it). Other values unchanged; a dict keeps its type and
    attributes (a YAML mapping its key lines).

    >>> redact_value({"title": "see https://u:p@host/x", "api_key": "k",
    ...               "n": [1, "hf_" + 20 * "a"]})
    {'title': 'see https://[redacted]@host/x', 'api_key': '[redacted]', 'n': [1, '[redacted]']}
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out = copy.copy(value)
        out.clear()
        out.update((k, _hidden(v) if isinstance(k, str) and secret_name(k) else
                    redact_value(v)) for k, v in value.items())
        return out
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: redact_value(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    return value


def _hidden(value: Any) -> Any:
    """A secret's value: replaced, unless it is a switch, a number or None (nothing to
    hide; a parsed record's ``new_token`` count stays a count)."""
    return value if value is None or isinstance(value, bool | int | float) else REDACTED


def _plain(value: Any) -> bool:
    """A number, a switch or None: a value no secret can hide in."""
    if value is None or isinstance(value, bool | int | float):
        return True
    return isinstance(value, str) and re.fullmatch(r"[-+]?\d[\d_]*(?:\.\d+)?", value.strip()) \
        is not None


def redact_setting(name: str, value: Any) -> Any:
    """One launch flag or server argument, by the allow-list (see the module's docstring)."""
    if secret_name(name):
        return _hidden(value)
    if safe_setting(name):
        return redact_value(value)
    if isinstance(value, dict):
        return {k: redact_setting(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_setting(name, v) for v in value)
    return value if _plain(value) else REDACTED


def redact_env(name: str, value: Any) -> Any:
    """One environment variable: its value only when the allow-list has its name."""
    return redact_value(value) if safe_env(name) else _hidden(value)


def redact_settings(field: str, mapping: dict[str, Any] | None) -> dict[str, Any]:
    """A record's settings (``env``, or ``flags`` / ``args``), every entry by its name.

    >>> redact_settings("env", {"HF_TOKEN": "hf_x", "VLLM_USE_V1": "1", "HTTPS_PROXY": "x"})
    {'HF_TOKEN': '[redacted]', 'VLLM_USE_V1': '1', 'HTTPS_PROXY': '[redacted]'}
    >>> redact_settings("flags", {"tokenizer": "https://u:p@hub/t", "api_key": "k",
    ...                           "tp_size": "8", "license_blob": "abc"})
    {'tokenizer': 'https://[redacted]@hub/t', 'api_key': '[redacted]', 'tp_size': '8', \
'license_blob': '[redacted]'}
    """
    one = redact_env if field == "env" else redact_setting
    return {k: one(str(k), v) for k, v in (mapping or {}).items()}


def redact_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A parsed record with its settings by the allow-list and every other text redacted."""
    out = {}
    for key, value in rec.items():
        if key in ("env", "flags", "args") and isinstance(value, dict):
            out[key] = redact_settings(key, value)
        else:
            out[key] = redact_value(value)
    return out
