"""What was not controlled: settings that differ between the engines, and runtime events
inside the measurements. Built from the launch configurations, the engines' start-up lines
and the logs; each row carries its evidence as file:line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.i18n import english
from ..core.methods import catalogue, said
from ..core.records import Ingested, Run
from . import limits
from .arrival import arrival
from .budget import time_budget
from .consistency import all_checks
from .consistency import limit_rows as consistency_rows
from .provenance import generator_figures
from .spec import spec_figures, speculative_config

__all__ = ["Account", "COMPARED", "Caveat", "Caveats", "DEFAULTS", "ENGINE_CHOOSES", "ENGINE_SET",
           "MEMORY_FLAGS", "NOT_SETTINGS", "RESOLVED", "SETTINGS", "all_caveats", "caveat_figures",
           "event_caveats", "jit_kinds", "line_ranges", "normalise", "setting_caveats"]

# Equivalent settings under each engine's flag names (vLLM first, then SGLang).
SETTINGS = {
    "dcp": (("decode_context_parallel_size", "dcp"), ("dcp_size", "decode_context_parallel_size")),
    "tensor_parallel": (("tensor_parallel_size", "tp"), ("tp_size",)),
    "chunked_prefill": (("max_num_batched_tokens",), ("chunked_prefill_size",)),
    "max_context": (("max_model_len",), ("context_length",)),
    "attention_backend": (("attention_backend",), ("attention_backend",)),
    "moe_backend": (("moe_backend",), ("moe_runner_backend",)),
    "max_sequences": (("max_num_seqs",), ("max_running_requests",)),
    "page_size": (("block_size",), ("page_size",)),
    "kv_dtype": (("kv_cache_dtype",), ("kv_cache_dtype",)),
    "cuda_graph": ((), ("cuda_graph_max_bs_decode", "cuda_graph_max_bs")),
    "moe_kernel": ((), ()),
}
# Settings compared between the engines, in this order (speculative ones come after).
COMPARED = ("dcp", "tensor_parallel", "chunked_prefill", "max_context", "max_sequences",
            "attention_backend", "moe_backend", "moe_kernel", "kv_dtype", "page_size",
            "cuda_graph")
DEFAULTS = {"dcp": "1"}
# Where the engine's start-up lines say what it resolved a setting to: (record kinds, field).
RESOLVED = {"attention_backend": (("backend",), "attention_backend"),
            "moe_backend": (("backend",), "moe_backend"),
            "moe_kernel": (("backend",), "moe_method"),
            "kv_dtype": (("kv_dtype", "kv_cache"), "kv_dtype"),
            "cuda_graph": (("cuda_graph_sizes",), "graphs")}
# The note on a value the engine set itself, by the argument's name (engine_reset records).
ENGINE_SET = {"attention_backend": "default", "max_running_requests": "set by the engine"}
# Launch flags not compared with the log: where the server listens, the model positional.
NOT_SETTINGS = ("_positional", "host", "port")
# A flag value that leaves the choice to the engine: the engine's own start-up line says
# what it chose, and that is what gets compared.
ENGINE_CHOOSES = ("auto", "none", "")
MEMORY_FLAGS = ("gpu_memory_utilization", "mem_fraction_static")

@dataclass
class Caveat:
    id: str                                  # catalogue keys: setting.<id>, why.<id>
    kind: str                                # "setting" or "event"
    values: dict[str, str]                   # engine -> value as shown
    evidence: list[str] = field(default_factory=list)   # "file:line"
    workload: str | None = None
    touches: list[str] = field(default_factory=list)     # figure ids the event affects
    requests: str = ""                                   # which requests an event touched
    engine: str | None = None                            # an event's engine
    span: tuple[str, ...] = ()                           # an event's first and last time
    # an event's counts by name (n, workers): the article words them from the catalogue
    # (event.<id>); ``values`` keeps the English line for the notebook and the store
    counts: dict[str, int] = field(default_factory=dict)
    # a launch difference's flag, as the launch file spells it ("max_model_len")
    setting: str = ""
    file: str = ""                                       # a launch difference's launch file
    # a setting row not counted among those that differ, and why: "unlike" (the engines
    # state it in terms no log lets us convert) or "outcome" (it follows from other
    # settings, as the KV capacity follows from the memory share and the parallelism)
    apart: str = ""


_NOTE = re.compile(r"\s*\((?:default|auto|set by the engine)\)\s*$")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.])")


def normalise(value: object) -> str:
    """A setting's value in a form where equal settings compare equal: case, '-' versus
    '_', white space, thousands separators, trailing zeros, and the "(default)" / "(auto)"
    notes this module adds are ignored.

    >>> normalise("DSPARK, 7 draft tokens") == normalise("dspark, 7 draft tokens")
    True
    >>> normalise("0.950") == normalise("0.95"), normalise("32,768") == normalise("32768")
    (True, True)
    >>> normalise("1 (default)") == normalise("1")
    True
    >>> normalise("trtllm_mla") == normalise("FLASHINFER_MLA")
    False
    """
    text = _NOTE.sub("", str(value)).strip().lower().replace("-", "_")
    text = re.sub(r"\s+", " ", text)

    def number(m: re.Match) -> str:
        x = float(m[0].replace(",", ""))
        return str(int(x)) if x == int(x) else repr(x)

    return _NUMBER.sub(number, text)


def _launch(ing: Ingested) -> dict[str, dict[str, Any]]:
    out = {}
    for rec in ing.records.get("launch_config", []):
        out[rec["engine"]] = {"file": rec["file"], "image": rec.get("image", ""),
                              "flags": rec.get("flags") or {},
                              "lines": rec.get("flag_lines") or {},
                              "env": rec.get("env") or {},
                              "passes_args": int(rec.get("passes_args") or 0)}
    return out


def _logged(ing: Ingested, engine: str, kind: str) -> list[dict]:
    """The engine's records of ``kind``. A log with several server starts: the records of
    the start in effect when the engine's first benchmark began come first."""
    rows = [r for r in ing.records.get(kind, []) if r["engine"] == engine]
    starts = sorted((r for r in ing.records.get("server_args", []) if r["engine"] == engine),
                    key=lambda r: (r["file"], r["line"]))
    begins = sorted(w.start for w in ing.windows + ing.point_windows if w.engine == engine)
    if len(starts) < 2 or not begins:
        return rows
    before = [r for r in starts if r.get("ts") and r["ts"] <= begins[0]]
    if not before:
        return rows
    start = before[-1]           # the last start before the first benchmark

    def after_start(r: dict) -> bool:
        return (r["file"], r["line"]) >= (start["file"], start["line"])

    return sorted(rows, key=lambda r: (not after_start(r), r["file"], r["line"]))


# --- whose account: the log's record of its settings wins over the launch file ------------
# An account is a list of (settings, where): where(name) is the "file:line" it says it at.
Account = list[tuple[dict[str, Any], Any]]


def _log_account(ing: Ingested, engine: str) -> Account:
    """The settings the log itself records: vLLM's ``non-default args`` and the engine's
    configuration line, SGLang's ``server_args``; the start in effect first."""
    out: Account = []
    for kind in ("server_args", "version"):
        for rec in _logged(ing, engine, kind):
            settings = rec.get("args") if kind == "server_args" else rec.get("config")
            if isinstance(settings, dict) and settings:
                where = f"{rec['file']}:{rec['line']}"
                out.append((settings, lambda name, where=where: where))
    return out


def _launch_account(launch: dict, engine: str) -> Account:
    cfg = launch.get(engine)
    if not cfg:
        return []
    return [(cfg["flags"], lambda name: f"{cfg['file']}:{cfg['lines'].get(name, 1)}")]


def _said(account: Account, names, none_ok: bool = False) -> tuple[Any, str, str] | None:
    """(value, "file:line", name) of the first of ``names`` the account states."""
    for settings, where in account:
        for name in names:
            if name in settings and (none_ok or settings[name] is not None):
                return settings[name], where(name), name
    return None


def _stated(ing: Ingested, launch: dict, engine: str, names,
            none_ok: bool = False) -> tuple[Any, str, str] | None:
    """The log's value of a setting, else the launch file's."""
    return _said(_log_account(ing, engine), names, none_ok) or \
        _said(_launch_account(launch, engine), names, none_ok)


def _names(sid: str) -> list[str]:
    return [n for group in SETTINGS[sid] for n in group]


def _engine_set(ing: Ingested, engine: str, name: str) -> str | None:
    """The note for a value the engine set itself ("Max running requests is reset to 48")."""
    for rec in _logged(ing, engine, "engine_reset"):
        if rec.get(name) is not None:
            return ENGINE_SET.get(name, "set by the engine")
    return None


def _flagged(ing: Ingested, launch: dict, engine: str, sid: str) -> tuple[str, str] | None:
    """(value, evidence) as the log, else the launch file, states it; a value the engine set
    itself (and the launch file did not) carries the engine's note."""
    said = _stated(ing, launch, engine, _names(sid))
    if not said:
        return None
    launched = _said(_launch_account(launch, engine), [said[2]])
    note = None if launched else _engine_set(ing, engine, said[2])
    return str(said[0]) + (f" ({note})" if note else ""), said[1]


def _resolved(ing: Ingested, engine: str, sid: str,
              flag: str | None) -> tuple[str, str] | None:
    """What the engine's start-up lines say it chose, with the flag that left it the choice."""
    if sid not in RESOLVED:
        return None
    kinds, name = RESOLVED[sid]
    for rec in (r for k in kinds for r in _logged(ing, engine, k)):
        if rec.get(name):
            return (f"{rec[name]} ({flag})" if flag else str(rec[name]),
                    f"{rec['file']}:{rec['line']}")
    return None


def _setting(ing: Ingested, launch: dict, engine: str, sid: str) -> tuple[str | None, str]:
    """(value, evidence) of one setting for one engine: the log's account, else the launch
    file; a value left to the engine ("auto") by what the engine says it chose."""
    flagged = _flagged(ing, launch, engine, sid)
    if flagged and normalise(flagged[0]) not in ENGINE_CHOOSES:
        return flagged
    chosen = _resolved(ing, engine, sid, flagged[0] if flagged else None)
    if chosen or flagged:
        return chosen or flagged
    if sid in DEFAULTS and (launch.get(engine) or _logged(ing, engine, "server_args")):
        cfg = launch.get(engine)
        return DEFAULTS[sid] + " (default)", cfg["file"] if cfg else ""
    return None, ""


def _spec_dicts(ing: Ingested, launch: dict, engine: str) -> list[tuple[dict, str]]:
    """vLLM's speculative configs, the log's first; one naming its method before one that
    does not (the engine configuration line names it, ``non-default args`` may not)."""
    found = []
    for account in (_log_account(ing, engine), _launch_account(launch, engine)):
        for settings, where in account:
            spec = speculative_config(settings)
            if spec is not None:
                found.append((spec, where("speculative_config")))
    return sorted(found, key=lambda sw: not sw[0].get("method"))


def _speculative(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    """The speculative method, as the engine names it."""
    specs = _spec_dicts(ing, launch, engine)
    if specs:
        spec, where = specs[0]
        # a config with no method leaves vLLM to infer it from the draft model: not stated
        return str(spec.get("method") or "(method not stated)"), where
    said = _stated(ing, launch, engine, ["speculative_algorithm"])
    return (str(said[0]), said[1]) if said else (None, "")


def _draft_tokens(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    """Draft tokens per step in the engine's own terms, unconverted: vLLM's
    num_speculative_tokens (tokens the draft proposes), SGLang's speculative_num_draft_tokens
    (tokens verified per step; what it means depends on the method), marked "(default)"
    when the log has it but the launch file did not set it."""
    specs = [s for s in _spec_dicts(ing, launch, engine)
             if s[0].get("num_speculative_tokens") is not None]
    if specs:
        spec, where = specs[0]
        return f"num_speculative_tokens {spec['num_speculative_tokens']}", where
    if _stated(ing, launch, engine, ["speculative_algorithm"]) is None:
        return None, ""
    said = _stated(ing, launch, engine, ["speculative_num_draft_tokens"])
    if not said:
        return None, ""
    launched = _said(_launch_account(launch, engine), ["speculative_num_draft_tokens"])
    default = " (default)" if launched is None and launch.get(engine) else ""
    return f"speculative_num_draft_tokens {said[0]}{default}", said[1]


def _draft_model(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    """The draft checkpoint: vLLM's speculative_config.model, SGLang's
    speculative_draft_model_path; from the log, else the launch file."""
    specs = [s for s in _spec_dicts(ing, launch, engine) if s[0].get("model")]
    if specs:
        return str(specs[0][0]["model"]), specs[0][1]
    said = _stated(ing, launch, engine, ["speculative_draft_model_path"])
    return (str(said[0]), said[1]) if said else (None, "")


def _memory(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    said = _stated(ing, launch, engine, MEMORY_FLAGS)
    if not said:
        return None, ""
    return f"--{said[2].replace('_', '-')} {said[0]}", said[1]


def _revision(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    """The model revision: a pinned commit, or "unpinned" where the log says None."""
    said = _stated(ing, launch, engine, ["revision"], none_ok=True)
    if not said:
        return None, ""
    return ("unpinned" if said[0] in (None, "None", "") else str(said[0])), said[1]


def _kv_capacity(ing: Ingested, engine: str) -> tuple[str | None, str]:
    """KV-cache capacity in tokens as the engine logged it: SGLang's max_total_num_tokens
    line, else the last KV pool (``KV Cache is allocated``) or vLLM's ``GPU KV cache size``."""
    recs = [r for r in _logged(ing, engine, "capacity") if r.get("kv_tokens")] or \
        [r for r in _logged(ing, engine, "kv_cache")
         if r.get("kv_tokens") and r.get("device", "GPU") == "GPU"][-1:]
    if not recs:
        return None, ""
    return str(int(recs[0]["kv_tokens"])), f"{recs[0]['file']}:{recs[0]['line']}"


def _prefix_caching(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    """Prefix caching on or off: vLLM's enable_prefix_caching, SGLang's radix cache."""
    said = _stated(ing, launch, engine, ["enable_prefix_caching", "disable_radix_cache"])
    if not said:
        return None, ""
    on = bool(said[0]) if said[2] == "enable_prefix_caching" else not said[0]
    if isinstance(said[0], str):            # a launch flag: "--disable-radix-cache" alone
        on = (said[0].lower() not in ("false", "0")) == (said[2] == "enable_prefix_caching")
    return ("on" if on else "off"), said[1]


def _verification(ing: Ingested, engine: str, has_spec: bool) -> tuple[str | None, str]:
    for rec in _logged(ing, engine, "spec_mode"):
        return "non-adaptive", f"{rec['file']}:{rec['line']}"
    if not has_spec:
        return None, ""
    # nothing logged: the evidence is the whole log that was searched
    logs = {r["file"] for r in _logged(ing, engine, "server_args")}
    searched = [s for s in ing.summaries if s["file"] in logs and s.get("lines")]
    return "default", (f"{searched[0]['file']}:1-{searched[0]['lines']}" if searched else "")


def _searched(ing: Ingested, engine: str, workload: str) -> Source | None:
    """The stretch of the engine's log a window covers: where absence was looked for."""
    recs = [r for k in ("engine_stats", "decode_batch", "prefill_batch", "spec_decode")
            for r in ing.in_window(k, engine, workload)]
    if not recs:
        return None
    file = min(r["file"] for r in recs)
    lines = [int(r["line"]) for r in recs if r["file"] == file]
    sha = next(r["sha256"] for r in recs if r["file"] == file)
    return Source(path=file, sha256=sha, lines=(min(lines), max(lines)))


def _launch_differences(ing: Ingested, launch: dict, engine: str) -> list[Caveat]:
    """Each launch flag the log also states, where the two differ: the launch file in the
    folder is then not what ran as written (changed since, or given more arguments)."""
    cfg = launch.get(engine)
    log = _log_account(ing, engine)
    if not cfg or not log:
        return []
    out = []
    for name, value in cfg["flags"].items():
        if name in NOT_SETTINGS:
            continue
        said = _said(log, [name], none_ok=True)
        if said is None or _same(value, said[0]):
            continue
        out.append(Caveat(id="launch_differs", kind="launch", engine=engine, setting=name,
                          file=cfg["file"], counts={"passes_args": cfg["passes_args"]},
                          values={"log": _shown(said[0]), "launch": _shown(value)},
                          evidence=[said[1], f"{cfg['file']}:{cfg['lines'].get(name, 1)}"]))
    return out


def _shown(value: Any) -> str:
    """A setting's value as text: JSON for a mapping, "None" for no value."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(", ", ": "))
    return str(value)


def _same(a: Any, b: Any) -> bool:
    """Whether a launch value and a logged one say the same (after ``normalise``). A word
    against a list is compared with the list's first item: the launch parser keeps one value
    per flag (``--served-model-name a`` is logged as ``['a']``).

    >>> _same("65536", 65536), _same("0.90", 0.9), _same("262144", 65536)
    (True, True, False)
    >>> _same({"model": "d", "n": "1"}, {"model": "d", "n": 1}), _same({"a": 1}, {})
    (True, False)
    >>> _same("kimi", ["kimi"]), _same("kimi", ["k2"]), _same(True, True)
    (True, False, True)
    """
    if isinstance(a, list) != isinstance(b, list):
        items = b if isinstance(b, list) else a
        return not items or _same(a if items is b else b, items[0])
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and \
            all(_same(a[k], b[k]) for k in a)
    return normalise(_shown(a)) == normalise(_shown(b))


def setting_caveats(run: Run, ing: Ingested) -> tuple[list[Caveat], dict[str, Caveat]]:
    """(settings that differ between the engines, and launch files that differ from their
    logs; every compared setting)."""
    launch = _launch(ing)
    engines = [e.id for e in run.meta.engines]
    rows: list[Caveat] = []
    compared: dict[str, Caveat] = {}

    def add(sid: str, getter, unlike: bool = False, apart: str = "") -> None:
        """``unlike``: the engines state it in different terms, never called equal;
        ``apart``: shown, but not counted among the settings that differ (Caveat.apart)."""
        values, evidence = {}, []
        for e in engines:
            value, where = getter(e)
            if value is not None:
                values[e] = value
                if where:
                    evidence.append(where)
        if values:
            compared[sid] = Caveat(id=sid, kind="setting", values=values, evidence=evidence,
                                   apart=apart)
        # a value left to the engine whose choice no log names ("auto") cannot be told
        # apart from the other: shown side by side, never listed as differing
        unresolved = any(normalise(v) in ENGINE_CHOOSES for v in values.values())
        if len(values) >= 2 and (unlike or (not unresolved and
                                            len({normalise(v) for v in values.values()}) > 1)):
            rows.append(compared[sid])

    # The image is the engine itself (what is compared), not a setting that differs; the
    # report shows it with the engines.
    for sid in COMPARED:
        add(sid, lambda e, sid=sid: _setting(ing, launch, e, sid))
    add("kv_tokens", lambda e: _kv_capacity(ing, e), apart="outcome")
    add("prefix_caching", lambda e: _prefix_caching(ing, launch, e))
    add("revision", lambda e: _revision(ing, launch, e))
    # Memory: vLLM's share of all GPU memory vs SGLang's share for weights and KV pool are
    # different quantities, so they are shown side by side and never called equal.
    add("memory", lambda e: _memory(ing, launch, e), unlike=True)
    add("speculative", lambda e: _speculative(ing, launch, e))
    # vLLM counts drafted tokens, SGLang tokens verified per step: each in its own terms
    drafts = {e: _draft_tokens(ing, launch, e) for e in engines}
    terms = {value.split(" ")[0] for value, _ in drafts.values() if value}
    add("draft_tokens", lambda e: drafts[e], unlike=len(terms) > 1,
        apart="unlike" if len(terms) > 1 else "")
    add("draft_model", lambda e: _draft_model(ing, launch, e))
    add("verification", lambda e: _verification(ing, e, _speculative(ing, launch, e)[0]
                                                is not None))
    for e in engines:
        rows += _launch_differences(ing, launch, e)
    return rows, compared


def _touched_requests(ing: Ingested, engine: str, workload: str, first_ts: str) -> str:
    """Requests whose first token came after the first event: their TTFT includes it."""
    import datetime as dt

    entry = next((r for r in ing.results if r.engine == engine and r.workload == workload),
                 None)
    window = next((w for w in ing.windows if w.engine == engine and w.workload == workload),
                  None)
    ttfts = entry.seconds("ttft_ms") if entry else None     # successes only
    if not ttfts or not window or not first_ts:
        return ""
    start = dt.datetime.fromisoformat(window.start) + dt.timedelta(seconds=1)
    offset = (dt.datetime.fromisoformat(first_ts) - start).total_seconds()
    hit = sum(1 for t in ttfts if t >= offset)
    return f"{hit} of {len(ttfts)} requests got their first token after the events began " \
           f"(+{max(offset, 0):.0f} s)"


def jit_kinds(recs: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    """A window's JIT records by what their lines say: (compiles, loads, every line of the
    loads). A compile is a line that says it compiles (DeepGEMM) or that kernels fall back
    to the JIT backend; a load is FlashInfer's "Loading JIT ops" (its "Finished loading"
    line ends it), which compiles only what no cached build holds and says neither way."""
    loads = [r for r in recs if r.get("what") == "load"]
    compiles = [r for r in recs if r.get("what") != "load"
                and r.get("phase") in ("start", "fallback")]
    return compiles, [r for r in loads if r.get("phase") == "start"], loads


def line_ranges(recs: list[dict]) -> list[str]:
    """``file:first-last`` (``file:line`` for one line) of each file's records: the whole
    stretch of the log they come from."""
    by_file: dict[str, list[int]] = {}
    for r in recs:
        by_file.setdefault(r["file"], []).append(int(r["line"]))
    return [f"{f}:{min(n)}" if min(n) == max(n) else f"{f}:{min(n)}-{max(n)}"
            for f, n in sorted(by_file.items())]


def _window_events(ing: Ingested, engine: str, workload: str) -> dict[str, list[dict]]:
    """The runtime events of one engine inside one workload's window, by count name."""
    mem = ing.in_window("memory_event", engine, workload)
    compiles, loads, load_lines = jit_kinds(ing.in_window("jit_event", engine, workload))
    stats = ing.in_window("engine_stats", engine, workload)
    return {"oom_retries": [r for r in mem if r.get("event") == "soft_oom_retry"],
            "oom_errors": [r for r in mem
                           if r.get("event") not in ("soft_oom_retry", "preemption")],
            # vLLM's preemptions: its stats lines' count where they print one, V0's warnings
            "preemptions": [r for r in stats if int(r.get("preemptions") or 0) > 0]
            + [r for r in mem if r.get("event") == "preemption"],
            "jit_compiles": compiles, "jit_loads": loads, "jit_load_lines": load_lines,
            "retractions": ing.in_window("retraction", engine, workload), "stats": stats}


def _preemptions(ev: dict[str, list[dict]]) -> int:
    """Preemptions the window's lines show: each stats line's count, one per V0 warning.
    How many there were when the log says nothing is the server state's figure
    (``state.<w>.<e>.preemptions``, which knows when silence is not 0), so no count of
    them is made here."""
    return sum(int(r.get("preemptions") or 0) if r.get("event") != "preemption" else 1
               for r in ev["preemptions"])


def _count_figures(ev: dict[str, list[dict]], searched, w: str, e: str) -> list[Figure]:
    workers = sorted({r.get("proc") for r in ev["oom_retries"] if r.get("proc")})
    counts = {"oom_retries": len(ev["oom_retries"]), "oom_retry_workers": len(workers),
              "oom_errors": len(ev["oom_errors"]), "jit_compiles": len(ev["jit_compiles"]),
              "jit_loads": len(ev["jit_loads"]), "retractions": len(ev["retractions"])}
    cited = {"oom_retry_workers": ev["oom_retries"], "jit_loads": ev["jit_load_lines"]}
    out = []
    for name, n in counts.items():
        recs = cited.get(name, ev.get(name, []))
        none = ""
        if recs and n:
            src = (Source(path=recs[0]["file"], sha256=recs[0]["sha256"],
                          lines=tuple(int(r["line"]) for r in recs)),)
        else:     # none found: cite the stretch of the log that was searched
            src = (searched,) if searched else ()
            if searched:
                none = said("events.none_in", first=searched.lines[0], last=searched.lines[-1])
        out.append(figure(id=ids.events(w, e, name), value=n, unit="count", decimals=0,
                          sources=src, context={"engine": e, "workload": w},
                          method=said("events." + name, none=none)))
    return out


def _event_rows(ing: Ingested, ev: dict[str, list[dict]], w: str, e: str) -> list[Caveat]:
    retries = ev["oom_retries"]
    workers = sorted({r.get("proc") for r in retries if r.get("proc")})
    preempt = _preemptions(ev)
    touched = [ids.latency(w, e, "ttft", "mean"), ids.e2e(w, e, "duration")]
    rows = []
    # (row, the records counted, the records whose lines span the event, English value, n)
    for cid, recs, lines, value, n in (
            ("event_oom_retry", retries, retries,
             f"{len(retries)} retries on {len(workers)} workers", len(retries)),
            ("event_oom", ev["oom_errors"], ev["oom_errors"],
             f"{len(ev['oom_errors'])} errors", len(ev["oom_errors"])),
            ("event_jit", ev["jit_compiles"], ev["jit_compiles"],
             f"{len(ev['jit_compiles'])} kernels compiled", len(ev["jit_compiles"])),
            ("event_jit_load", ev["jit_loads"], ev["jit_load_lines"],
             f"{len(ev['jit_loads'])} JIT ops loaded (FlashInfer)", len(ev["jit_loads"])),
            ("event_retraction", ev["retractions"], ev["retractions"],
             f"{len(ev['retractions'])} retractions", len(ev["retractions"])),
            ("event_preemption", ev["preemptions"], ev["preemptions"],
             f"{preempt} preemptions", preempt)):
        if not recs:
            continue
        # the span runs from the first line to the last: a load ends at its "Finished" line
        first = min(r.get("ts") or "" for r in lines)
        last = max(r.get("ts") or "" for r in lines)
        rows.append(Caveat(
            id=cid, kind="event", workload=w, touches=touched, engine=e, span=(first, last),
            requests=_touched_requests(ing, e, w, first),
            values={e: f"{value}, {first[11:]}–{last[11:]}"},
            counts={"n": int(n), "workers": len(workers)}, evidence=line_ranges(lines)))
    return rows


def event_caveats(run: Run, ing: Ingested) -> tuple[list[Caveat], list[Figure]]:
    """Runtime events inside each benchmark window, and their counts as figures."""
    rows: list[Caveat] = []
    figures: list[Figure] = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            if not any(x.engine == e.id and x.workload == w.id for x in ing.windows):
                continue
            has_log = any(True for k in ("engine_stats", "decode_batch")
                          for _ in ing.rows(k, engine=e.id))
            if not has_log:
                continue
            ev = _window_events(ing, e.id, w.id)
            figures += _count_figures(ev, _searched(ing, e.id, w.id), w.id, e.id)
            rows += _event_rows(ing, ev, w.id, e.id)
    return rows, figures


def caveat_figures(rows: list[Caveat], compared: dict[str, Caveat],
                   sha: dict[str, str]) -> list[Figure]:
    """Every compared setting per engine, and how many differ."""
    out = []
    for c in compared.values():
        differs = any(r.id == c.id for r in rows)
        for engine, value in sorted(c.values.items()):
            src = []
            for where in c.evidence:
                path, _, line = where.rpartition(":")   # "file:line" or "file:first-last"
                if path in sha and f"/{engine}/" in path:
                    src.append(Source(path=path, sha256=sha[path],
                                      lines=tuple(int(x) for x in line.split("-"))))
            out.append(figure(id=ids.setting(c.id, engine), value=value, unit="setting",
                              context={"engine": engine}, sources=tuple(src[:1]),
                              method=said("settings.as_logged", name=_setting_name(c.id),
                                          differs=said("settings.differs") if differs
                                          else "")))
    # with nothing compared, the count rests on the inputs searched for launch settings
    searched = () if out else tuple(Source(path=p, sha256=h, key="no launch settings")
                                    for p, h in sorted(sha.items()))
    counted = [c.id for c in rows if c.kind == "setting" and not c.apart]
    apart = [c for c in rows if c.kind == "setting" and c.apart]
    out.append(figure(id=ids.SETTINGS_DIFFERING, unit="count", decimals=0,
                      value=len(counted), depends_on=tuple(f.id for f in out),
                      sources=searched, context={"which": counted},
                      method=said("settings.differing",
                                  which=counted if out else said("settings.none_compared"))))
    out.append(figure(id=ids.SETTINGS_APART, unit="count", decimals=0, value=len(apart),
                      depends_on=tuple(ids.setting(c.id, e) for c in apart for e in c.values),
                      sources=searched,
                      context={"which": [c.id for c in apart],
                               "why": {c.id: c.apart for c in apart}},
                      method=said("settings.apart", which=[c.id for c in apart])))
    return out


def _setting_name(sid: str) -> Any:
    """A setting's name in a method: the catalogue's (settings.name_<id>), else its id with
    spaces (a setting this release does not know yet)."""
    key = "settings.name_" + sid
    return said(key) if key in catalogue("en") else sid.replace("_", " ")


@dataclass(frozen=True)
class Caveats:
    """What was not controlled: one row per differing setting or runtime event, and what
    one run cannot tell; ``record`` is what ``analyses.notebook.save_caveats`` writes for the
    report."""

    table: pd.DataFrame
    figures: list[Figure]
    record: dict


def all_caveats(run: Run, ing: Ingested) -> Caveats:
    """Settings that differ, events inside the measurements and what one run cannot tell."""
    rows, compared = setting_caveats(run, ing)
    events, event_figs = event_caveats(run, ing)
    en = english()
    sha = {s["file"]: s["sha256"] for s in ing.summaries}
    all_rows = rows + events
    spans: dict[tuple[str, str], tuple[str, str]] = {}
    for c in events:
        if c.engine and c.workload and c.span:
            lo, hi = spans.get((c.engine, c.workload), c.span)
            spans[(c.engine, c.workload)] = (min(lo, c.span[0]), max(hi, c.span[1]))
    differing = {c.id for c in rows}
    parts = [limits.repeats(run, ing), limits.warmup(run, ing), limits.few_requests(run, ing),
             limits.event_stall(run, ing, spans),
             limits.kv_capacity(run, ing, compared["dcp"].values if "dcp" in compared else {}),
             limits.spec_overhead(run, spec_figures(run, ing), differing),
             arrival(run, ing), time_budget(run, ing)]
    limit_figs = [f for figs, _ in parts for f in figs]
    limit_rows = consistency_rows(all_checks(run, ing)) + \
        [r for _, found in parts for r in found]
    record = {"differing": [c.__dict__ for c in all_rows],
              "compared": {k: c.values for k, c in sorted(compared.items())},
              "limits": [r.__dict__ for r in limit_rows]}
    table = pd.DataFrame([{"what": f"{c.id}: {c.setting}" if c.setting else c.id,
                           "kind": c.kind, "workload": c.workload,
                           **{f"{e}": _cell(c, e) for e in (x.id for x in run.meta.engines)},
                           "why it matters": en[f"why.{c.id}"], "touches": c.requests,
                           "evidence": "; ".join(c.evidence)} for c in all_rows]
                         + [{"what": r.id, "kind": "limit", "workload": r.workload,
                             "evidence": "; ".join(r.evidence)} for r in limit_rows])
    return Caveats(table=table, record=record,
                   figures=caveat_figures(rows, compared, sha) + event_figs + limit_figs
                   + generator_figures(run))


def _cell(c, engine: str) -> str:
    """A caveat's value for one engine; a launch difference: the log's against the file's."""
    if c.kind == "launch":
        return f"log {c.values['log']} / launch file {c.values['launch']}" \
            if c.engine == engine else ""
    return c.values.get(engine, "")
