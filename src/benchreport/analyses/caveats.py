"""What was not controlled: settings that differ between the engines, and runtime events
inside the measurements. Built from the launch configurations, the engines' start-up lines
and the logs; each row carries its evidence as file:line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..core import ids
from ..core.figures import Figure, Source
from ..core.records import Ingested, Run
from .spec import speculative_config

# Equivalent settings under each engine's flag names (vLLM first, then SGLang).
SETTINGS = {
    "dcp": (("decode_context_parallel_size", "dcp"), ("dcp_size", "decode_context_parallel_size")),
    "tensor_parallel": (("tensor_parallel_size", "tp"), ("tp_size",)),
    "chunked_prefill": (("max_num_batched_tokens",), ("chunked_prefill_size",)),
    "max_context": (("max_model_len",), ("context_length",)),
    "attention_backend": (("attention_backend",), ("attention_backend",)),
    "moe_backend": (("moe_backend",), ("moe_runner_backend",)),
}
DEFAULTS = {"dcp": "1"}
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


_NOTE = re.compile(r"\s*\((?:default|auto)\)\s*$")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.])")


def normalise(value: object) -> str:
    """A setting's value in a form where equal settings compare equal: case, '-' versus
    '_', white space, thousands separators, trailing zeros, and the "(default)" / "(auto)"
    notes this module adds are ignored.

    >>> normalise("DSPARK, 7 draft tokens") == normalise("dspark, 7 draft tokens")
    True
    >>> normalise("0.950") == normalise("0.95"), normalise("32,768") == normalise("32768")
    (True, True)
    >>> normalise("1 (default)") == normalise("1"), normalise("trtllm_mla") == normalise("FLASHINFER_MLA")
    (True, False)
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
                              "env": rec.get("env") or {}}
    return out


def _logged(ing: Ingested, engine: str, kind: str) -> list[dict]:
    """The engine's records of ``kind``. A log with several server starts: the records of
    the start in effect when the engine's first benchmark began come first."""
    rows = [r for r in ing.records.get(kind, []) if r["engine"] == engine]
    starts = sorted((r for r in ing.records.get("server_args", []) if r["engine"] == engine),
                    key=lambda r: (r["file"], r["line"]))
    begins = sorted(w.start for w in ing.windows if w.engine == engine)
    if len(starts) < 2 or not begins:
        return rows
    before = [r for r in starts if r.get("ts") and r["ts"] <= begins[0]]
    if not before:
        return rows
    start = before[-1]           # the last start before the first benchmark

    def after_start(r: dict) -> bool:
        return (r["file"], r["line"]) >= (start["file"], start["line"])

    return sorted(rows, key=lambda r: (not after_start(r), r["file"], r["line"]))


def _setting(ing: Ingested, launch: dict, engine: str, sid: str) -> tuple[str | None, str]:
    """(value, evidence) of one setting for one engine: launch flags, then the logs."""
    cfg = launch.get(engine)
    flagged = None
    for names in SETTINGS[sid]:
        for name in names:
            if cfg and name in cfg["flags"]:
                flagged = str(cfg["flags"][name]), f"{cfg['file']}:{cfg['lines'].get(name, 1)}"
                break
            for rec in _logged(ing, engine, "server_args"):
                args = rec.get("args") or {}
                if name in args and args[name] is not None:
                    flagged = str(args[name]), f"{rec['file']}:{rec['line']}"
                    break
            if flagged:
                break
        if flagged:
            break
    if flagged and normalise(flagged[0]) not in ENGINE_CHOOSES:
        return flagged
    if sid in ("attention_backend", "moe_backend"):
        for rec in _logged(ing, engine, "backend"):
            if rec.get(sid):
                chosen = f"{rec[sid]} ({flagged[0]})" if flagged else str(rec[sid])
                return chosen, f"{rec['file']}:{rec['line']}"
    if flagged:
        return flagged
    if sid in DEFAULTS and (cfg or _logged(ing, engine, "server_args")):
        return DEFAULTS[sid] + " (default)", cfg["file"] if cfg else ""
    return None, ""


def _speculative(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    cfg = launch.get(engine)
    flags = cfg["flags"] if cfg else {}
    spec = speculative_config(flags)
    if spec is not None:
        # a config with no method leaves vLLM to infer it from the draft model: not stated
        method = spec.get("method") or "(method not stated)"
        n = spec.get("num_speculative_tokens")
        text = method + (f", {n} draft tokens" if n is not None else "")
        return text, f"{cfg['file']}:{cfg['lines'].get('speculative_config', 1)}"
    if "speculative_algorithm" in flags:
        n = flags.get("speculative_num_draft_tokens")
        drafts = f", {int(n) - 1} draft tokens" if n is not None else ""
        return (f"{flags['speculative_algorithm']}{drafts}",
                f"{cfg['file']}:{cfg['lines'].get('speculative_algorithm', 1)}")
    return None, ""


def _draft_model(ing: Ingested, launch: dict, engine: str) -> tuple[str | None, str]:
    """The draft checkpoint: vLLM's speculative_config.model, SGLang's
    speculative_draft_model_path; from the launch file, else the logged arguments."""
    cfg = launch.get(engine)
    sources = [(cfg["flags"], cfg["file"], cfg["lines"])] if cfg else []
    sources += [(r.get("args") or {}, r["file"], None)
                for r in _logged(ing, engine, "server_args")[:1]]
    for flags, file, lines in sources:
        spec = speculative_config(flags) or {}
        for key, value in (("speculative_config", spec.get("model")),
                           ("speculative_draft_model_path",
                            flags.get("speculative_draft_model_path"))):
            if value:
                line = lines.get(key, 1) if lines is not None else \
                    _logged(ing, engine, "server_args")[0]["line"]
                return str(value), f"{file}:{line}"
    return None, ""


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


def setting_caveats(run: Run, ing: Ingested) -> tuple[list[Caveat], dict[str, Caveat]]:
    """(settings that differ between the engines, every compared setting)."""
    launch = _launch(ing)
    engines = [e.id for e in run.meta.engines]
    rows: list[Caveat] = []
    compared: dict[str, Caveat] = {}

    def add(sid: str, getter) -> None:
        values, evidence = {}, []
        for e in engines:
            value, where = getter(e)
            if value is not None:
                values[e] = value
                if where:
                    evidence.append(where)
        if values:
            compared[sid] = Caveat(id=sid, kind="setting", values=values, evidence=evidence)
        if len(values) >= 2 and len({normalise(v) for v in values.values()}) > 1:
            rows.append(compared[sid])

    # The image is the engine itself (what is compared), not a setting that differs; the
    # report shows it with the engines.
    for sid in ("dcp", "tensor_parallel", "chunked_prefill", "max_context",
                "attention_backend", "moe_backend"):
        add(sid, lambda e, sid=sid: _setting(ing, launch, e, sid))
    # Memory: vLLM's share of all GPU memory vs SGLang's share for weights and KV pool are
    # different quantities, so they are shown side by side and never called equal.
    mem = {}
    evidence = []
    for e in engines:
        cfg = launch.get(e)
        for name in MEMORY_FLAGS:
            if cfg and name in cfg["flags"]:
                mem[e] = f"--{name.replace('_', '-')} {cfg['flags'][name]}"
                evidence.append(f"{cfg['file']}:{cfg['lines'].get(name, 1)}")
                break
        else:                          # no launch file: the arguments the server logged
            for rec in _logged(ing, e, "server_args")[:1]:
                args = rec.get("args") or {}
                name = next((n for n in MEMORY_FLAGS if args.get(n) is not None), None)
                if name:
                    mem[e] = f"--{name.replace('_', '-')} {args[name]}"
                    evidence.append(f"{rec['file']}:{rec['line']}")
    if mem:
        compared["memory"] = Caveat(id="memory", kind="setting", values=mem, evidence=evidence)
    if len(mem) >= 2:
        rows.append(compared["memory"])
    add("speculative", lambda e: _speculative(ing, launch, e))
    add("draft_model", lambda e: _draft_model(ing, launch, e))
    add("verification", lambda e: _verification(ing, e, _speculative(ing, launch, e)[0]
                                                is not None))
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


def event_caveats(run: Run, ing: Ingested) -> tuple[list[Caveat], list[Figure]]:
    """Runtime events inside each benchmark window, and their counts as figures."""
    rows: list[Caveat] = []
    figures: list[Figure] = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            if not any(x.engine == e.id and x.workload == w.id for x in ing.windows):
                continue
            has_log = any(r["engine"] == e.id for k in ("engine_stats", "decode_batch")
                          for r in ing.records.get(k, []))
            if not has_log:
                continue
            mem = ing.in_window("memory_event", e.id, w.id)
            jit = [r for r in ing.in_window("jit_event", e.id, w.id)
                   if r.get("phase") in ("start", "fallback")]
            retract = ing.in_window("retraction", e.id, w.id)
            stats = ing.in_window("engine_stats", e.id, w.id)
            preempt = sum(int(r.get("preemptions") or 0) for r in stats)
            retries = [r for r in mem if r.get("event") == "soft_oom_retry"]
            ooms = [r for r in mem if r.get("event") != "soft_oom_retry"]
            workers = sorted({r.get("proc") for r in retries if r.get("proc")})
            counts = {"oom_retries": len(retries), "oom_retry_workers": len(workers),
                      "oom_errors": len(ooms), "jit_compiles": len(jit),
                      "retractions": len(retract), "preemptions": preempt}
            ctx = {"engine": e.id, "workload": w.id}
            searched = _searched(ing, e.id, w.id)
            for name, n in counts.items():
                recs = {"oom_retries": retries, "oom_retry_workers": retries,
                        "oom_errors": ooms, "jit_compiles": jit,
                        "retractions": retract, "preemptions": stats}[name]
                how = f"{name.replace('_', ' ')} logged inside the benchmark window"
                if recs and n:
                    src = (Source(path=recs[0]["file"], sha256=recs[0]["sha256"],
                                  lines=tuple(int(r["line"]) for r in recs)),)
                else:     # none found: cite the stretch of the log that was searched
                    src = (searched,) if searched else ()
                    if searched:
                        how += (f": none in lines {searched.lines[0]}–{searched.lines[-1]}, "
                                "the window's first and last record")
                figures.append(Figure(id=ids.events(w.id, e.id, name), value=n,
                                      unit="count", decimals=0, sources=src, context=ctx,
                                      method=how))
            touched = [ids.latency(w.id, e.id, "ttft", "mean"), ids.e2e(w.id, e.id, "duration")]
            for cid, recs, value, n in (
                    ("event_oom_retry", retries,
                     f"{len(retries)} retries on {len(workers)} workers", len(retries)),
                    ("event_oom", ooms, f"{len(ooms)} errors", len(ooms)),
                    ("event_jit", jit, f"{len(jit)} kernels compiled", len(jit)),
                    ("event_retraction", retract, f"{len(retract)} retractions",
                     len(retract)),
                    ("event_preemption", stats if preempt else [], f"{preempt} preemptions",
                     preempt)):
                if recs:
                    first = min(r.get("ts") or "" for r in recs)
                    last = max(r.get("ts") or "" for r in recs)
                    rows.append(Caveat(
                        id=cid, kind="event", workload=w.id, touches=touched,
                        engine=e.id, span=(first, last),
                        requests=_touched_requests(ing, e.id, w.id, first),
                        values={e.id: f"{value}, {first[11:]}–{last[11:]}"},
                        counts={"n": int(n), "workers": len(workers)},
                        evidence=[f"{recs[0]['file']}:{r['line']}" for r in recs[:3]]))
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
            out.append(Figure(id=ids.setting(c.id, engine), value=value, unit="setting",
                              context={"engine": engine}, sources=tuple(src[:1]),
                              method=f"{c.id.replace('_', ' ')} as launched"
                                     + (" (differs between the engines)" if differs else "")))
    # with nothing compared, the count rests on the inputs searched for launch settings
    searched = () if out else tuple(Source(path=p, sha256=h, key="no launch settings")
                                    for p, h in sorted(sha.items()))
    out.append(Figure(id=ids.SETTINGS_DIFFERING, unit="count", decimals=0,
                      value=sum(1 for c in rows if c.kind == "setting"),
                      depends_on=tuple(f.id for f in out), sources=searched,
                      method="settings that differ between the engines: "
                             + (", ".join(c.id for c in rows if c.kind == "setting")
                                if out else "none compared: the inputs hold no launch "
                                            "settings")))
    return out
