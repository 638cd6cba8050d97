"""The server's state over each benchmark window, from the engines' own log lines.

One row per stats line inside a window (``state_series``): vLLM's ``Engine 000`` interval
lines (every log era the parser reads: Running, Waiting or V0's Pending, GPU KV cache usage)
and SGLang's ``Prefill batch`` / ``Decode batch`` lines (#running-req, #queue-req, token
usage, or full token usage for a hybrid model). Each row keeps its file and line; the rows
join the /metrics scrapes in ``server_series`` with ``source`` log.

Figures (``state.<w>.<e>.<name>``), beside those other analyses already give (peak KV usage
and the prefix-cache hit rate: ``analyses.cache``; the most requests waiting:
``analyses.arrival``):

- ``queued_s``: seconds of the window with a request waiting. A line gives the queue at the
  moment it is logged; the queue is taken to hold until the next line, so the figure is
  resolved to the spacing of the lines (vLLM prints every ~10 s; SGLang a Decode line every
  40 decode steps and a Prefill line per admitted batch), and the method states it.
- ``line_spacing_s``: the median time between the window's stats lines (that resolution);
- ``preemptions`` (vLLM) and ``retractions`` (SGLang): a count where the log era prints
  them, else the verdict "not measured". vLLM V1 prints ``Preemptions: N`` on its stats line
  only when N > 0, from about 0.13 (engine-formats.md 1.2), and V0 a warning per preemption;
  before 0.13 a V1 log says nothing of preemptions, so no count of 0 is read from it.
  SGLang logs every retraction (``KV cache pool is full. Retract requests.``) at the level
  its batch lines are logged at, so a window with batch lines and no such line had none.
"""

from __future__ import annotations

import datetime as dt
import re
import statistics
from typing import Any

from ..core import ids
from ..core.figures import Figure, figure
from ..core.methods import said
from ..core.records import Ingested, Run
from ..core.verdicts import NOT_MEASURED
from .cache import num, source_of

LOG, METRICS = "log", "metrics"
SERIES_COLUMNS = ["source", "engine", "workload", "ts", "kv_usage", "running", "waiting",
                  "file", "line"]
# the release from which vLLM's stats line prints "Preemptions: N" whenever N > 0
VLLM_PREEMPTIONS_FROM = (0, 13)
BATCH_KINDS = ("prefill_batch", "decode_batch")


def _kv_fraction(r: dict) -> float | None:
    """KV-cache usage of a line as a fraction: vLLM prints a percentage, SGLang a fraction
    (full token usage for a hybrid sliding-window model)."""
    if num(r, "kv_cache_usage_pct") is not None:
        return round(num(r, "kv_cache_usage_pct") / 100, 6)
    return num(r, "full_token_usage") if num(r, "full_token_usage") is not None \
        else num(r, "token_usage")


def _row(r: dict, workload: str) -> dict[str, Any]:
    running = r.get("running", r.get("running_req"))
    waiting = r.get("waiting", r.get("queue_req"))
    return {"source": LOG, "engine": r["engine"], "workload": workload, "ts": r["ts"],
            "kv_usage": _kv_fraction(r), "running": running, "waiting": waiting,
            "file": r["file"], "line": int(r["line"])}


def state_lines(ing: Ingested, engine: str, workload: str) -> list[dict]:
    """The window's stats lines (vLLM's interval lines, else SGLang's batch lines), in log
    order."""
    recs = ing.in_window("engine_stats", engine, workload) or [
        r for kind in BATCH_KINDS for r in ing.in_window(kind, engine, workload)]
    return sorted(recs, key=lambda r: (r["ts"], r["file"], int(r["line"])))


def state_series(run: Run, ing: Ingested) -> list[dict[str, Any]]:
    """One row per stats line inside each benchmark window, in run.yaml's order of
    workloads and engines, then log order."""
    return [_row(r, w.id) for w in run.meta.workloads for e in run.meta.engines
            for r in state_lines(ing, e.id, w.id)]


def _seconds(a: str, b: str) -> float:
    return (dt.datetime.fromisoformat(b) - dt.datetime.fromisoformat(a)).total_seconds()


def queued_seconds(rows: list[dict]) -> tuple[float, float | None]:
    """(seconds with a request waiting, the median spacing of the lines) over log rows in
    time order: each line's queue holds until the next line; the last line adds nothing."""
    total = sum(_seconds(a["ts"], b["ts"]) for a, b in zip(rows, rows[1:], strict=False)
                if (a.get("waiting") or 0) > 0)
    gaps = [_seconds(a["ts"], b["ts"]) for a, b in zip(rows, rows[1:], strict=False)]
    return total, statistics.median(gaps) if gaps else None


def _spacing_figure(rows: list[dict], w: str, e: str, spacing: float) -> Figure:
    return figure(id=ids.state(w, e, "line_spacing_s"), value=spacing, unit="s", decimals=0,
                  sources=source_of(rows), context={"engine": e, "workload": w},
                  method=said("state.spacing"))


def _queued_figure(rows: list[dict], w: str, e: str, vllm: bool) -> Figure:
    total, spacing = queued_seconds(rows)
    lines = said("state.lines_vllm" if vllm else "state.lines_sglang")
    every = said("state.every", spacing=f"{spacing:g}") if spacing is not None \
        else said("state.one_line")
    return figure(id=ids.state(w, e, "queued_s"), value=total, unit="s", decimals=0,
                  sources=source_of(rows), context={"engine": e, "workload": w,
                                                    "lines": len(rows)},
                  depends_on=(ids.state(w, e, "line_spacing_s"),) if spacing is not None
                  else (),
                  method=said("state.queued", lines=lines, every=every))


def _version(ing: Ingested, run: Run, engine: str) -> tuple[int, ...] | None:
    found = [r.get("version") for r in ing.records.get("version", [])
             if r["engine"] == engine and r.get("version")]
    text = (found or [run.meta.engine(engine).version or ""])[0]
    m = re.match(r"v?(\d+)\.(\d+)", str(text))
    return (int(m[1]), int(m[2])) if m else None


def _vllm_preemptions(ing: Ingested, run: Run, rows: list[dict], w: str, e: str) -> Figure:
    fid, ctx = ids.state(w, e, "preemptions"), {"engine": e, "workload": w}
    printed = [r for r in rows if r.get("preemptions") is not None]
    warned = [r for r in ing.in_window("memory_event", e, w) if r.get("event") == "preemption"]
    version = _version(ing, run, e)
    if printed or (version is not None and version >= VLLM_PREEMPTIONS_FROM):
        n = sum(int(r.get("preemptions") or 0) for r in printed)
        return figure(id=fid, value=n, unit="count", decimals=0,
                      sources=source_of(printed or rows), context=ctx,
                      method=said("state.preemptions", zero=0))
    if warned or any(r.get("swapped") is not None for r in rows):
        return figure(id=fid, value=len(warned), unit="count", decimals=0,
                      sources=source_of(warned or rows), context=ctx,
                      method=said("state.preemptions_v0", engine="V0"))
    return figure(fid, NOT_MEASURED, "verdict",
                  said("state.preemptions_unmeasured", release="0.13", zero=0),
                  sources=source_of(rows), context=ctx, status="not measured")


def _sglang_retractions(ing: Ingested, rows: list[dict], w: str, e: str) -> Figure:
    found = ing.in_window("retraction", e, w)
    return figure(id=ids.state(w, e, "retractions"),
                  value=sum(int(r.get("retracted") or 0) for r in found), unit="count",
                  decimals=0, sources=source_of(found or rows),
                  context={"engine": e, "workload": w, "events": len(found)},
                  method=said("state.retractions_none", zero=0) if not found else
                  said("state.retractions", n=len(found)))


def _window_figures(ing: Ingested, run: Run, w: str, e: str) -> list[Figure]:
    recs = state_lines(ing, e, w)
    if not recs:
        return []
    vllm = recs[0]["kind"] == "engine_stats"
    rows = [_row(r, w) | {"sha256": r["sha256"]} for r in recs]
    out = [_queued_figure(rows, w, e, vllm)]
    spacing = queued_seconds(rows)[1]
    if spacing is not None:
        out.append(_spacing_figure(rows, w, e, spacing))
    out += _lead_figure(ing, rows, w, e)
    out.append(_vllm_preemptions(ing, run, recs, w, e) if vllm
               else _sglang_retractions(ing, recs, w, e))
    return out


def _lead_figure(ing: Ingested, rows: list[dict], w: str, e: str) -> list[Figure]:
    """Where the window's first stats line already shows a request waiting: the seconds
    from the window's start to that line, which ``queued_s`` does not count (a request may
    have waited all of them): the time queued lies between ``queued_s`` and it added."""
    window = next((x for x in ing.windows if x.engine == e and x.workload == w), None)
    if window is None or not (rows[0].get("waiting") or 0) > 0:
        return []
    lead = max(0.0, _seconds(window.start, rows[0]["ts"]))
    return [figure(id=ids.state(w, e, "queued_lead_s"), value=lead, unit="s", decimals=0,
                   sources=source_of(rows[:1]), context={"engine": e, "workload": w,
                                                         "window_start": window.start},
                   method=said("state.queued_lead"))]


def state_figures(run: Run, ing: Ingested) -> list[Figure]:
    """Per workload and engine with stats lines in its window: the time with requests
    queued, and preemptions (vLLM) or retractions (SGLang)."""
    return [f for w in run.meta.workloads for e in run.meta.engines
            for f in _window_figures(ing, run, w.id, e.id)]

