"""How each engine received a workload's requests, read from its own log: the most requests
waiting at once, and, where the log has prefill and decode lines, how far apart the bursts
of prefill came.

A client that sends every request at once makes requests wait at an engine that prefills
them in turn; an engine at which none ever waits received them spaced out, and then each
burst of prefill between decode lines is one request arriving. When the engines
of one workload differ in that, their TTFT and duration are not like for like, and the
caveats table gets a row per engine saying how its requests arrived.
"""

from __future__ import annotations

import datetime as dt

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.records import Ingested, Run
from .limits import Limit

# the field each kind of log line counts its waiting requests in
QUEUED = {"engine_stats": "waiting", "prefill_batch": "queue_req", "decode_batch": "queue_req"}


def _queue_lines(ing: Ingested, engine: str, workload: str) -> list[tuple[dict, int]]:
    """Every line of the window that counts waiting requests, with that count."""
    out = []
    for kind, key in QUEUED.items():
        out += [(r, int(r[key])) for r in ing.in_window(kind, engine, workload)
                if isinstance(r.get(key), int | float)]
    return sorted(out, key=lambda x: (x[0]["file"], x[0]["line"]))


def burst_starts(ing: Ingested, engine: str, workload: str) -> list[dict]:
    """The prefill lines that start a burst of prefill: the window's first, and each that
    follows a decode line (SGLang logs both kinds; vLLM's interval lines mark neither).
    With no request waiting, each burst is one newly arrived request's prefill."""
    lines = sorted(ing.in_window("prefill_batch", engine, workload)
                   + ing.in_window("decode_batch", engine, workload),
                   key=lambda r: (r["file"], r["line"]))
    return [r for i, r in enumerate(lines) if r["kind"] == "prefill_batch"
            and (i == 0 or lines[i - 1]["kind"] == "decode_batch")]


def _gap_s(rows: list[dict]) -> float | None:
    """The mean time between successive burst starts: first to last over the gaps (log
    times are whole seconds, so one gap is too coarse to read alone)."""
    times = sorted(dt.datetime.fromisoformat(r["ts"]) for r in rows)
    if len(times) < 3:
        return None
    return (times[-1] - times[0]).total_seconds() / (len(times) - 1)


def _source(rows: list[dict]) -> tuple[Source, ...]:
    by_file: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        by_file.setdefault((r["file"], r["sha256"]), []).append(int(r["line"]))
    return tuple(Source(path=f, sha256=sha, lines=tuple(sorted(lines)))
                 for (f, sha), lines in sorted(by_file.items()))


def engine_figures(ing: Ingested, engine: str, workload: str) -> list[Figure]:
    """The most requests waiting at once in the window, and the mean time between the
    starts of successive prefill bursts (where the log has prefill and decode lines)."""
    lines = _queue_lines(ing, engine, workload)
    if not lines:
        return []
    ctx = {"engine": engine, "workload": workload}
    out = [figure(id=ids.arrival(workload, engine, "max_waiting"),
                  value=max(n for _, n in lines), unit="count", decimals=0,
                  sources=_source([r for r, _ in lines]), context=ctx,
                  method=said("arrival.max_waiting"))]
    starts = burst_starts(ing, engine, workload)
    gap = _gap_s(starts)
    if gap is not None:
        out.append(figure(id=ids.arrival(workload, engine, "burst_gap_s"), value=gap,
                          unit="s", decimals=1, sources=_source(starts), context=ctx,
                          method=said("arrival.burst_gap")))
    return out


def _evidence(fig: Figure) -> list[str]:
    return [f"{s.path}:{s.lines[0]}-{s.lines[-1]}" if len(s.lines) > 1 else
            f"{s.path}:{s.lines[0]}" for s in fig.sources if s.lines]


def arrival(run: Run, ing: Ingested) -> tuple[list[Figure], list[Limit]]:
    """Per workload and engine, how the requests arrived; a caveats row per engine where,
    at one workload sent with a concurrency above one, requests waited at one engine and
    never at another."""
    figures, rows = [], []
    for wl in run.meta.workloads:
        per = {e.id: engine_figures(ing, e.id, wl.id) for e in run.meta.engines}
        per = {e: f for e, f in per.items() if f}
        figures += [f for fs in per.values() for f in fs]
        waited = {e: fs[0].value > 0 for e, fs in per.items()}
        if (wl.concurrency or 0) < 2 or len(set(waited.values())) < 2:
            continue
        for e, fs in per.items():
            gap_id = ids.arrival(wl.id, e, "burst_gap_s")
            gap = gap_id if any(f.id == gap_id for f in fs) else None
            params = {"queued": fs[0].id, "concurrency": ids.workload(wl.id, "concurrency")}
            if gap is not None and not waited[e]:
                params["gap"] = gap          # spaced out: how far apart they came
            rows.append(Limit("arrival", params, workload=wl.id, engine=e,
                              evidence=[x for f in fs for x in _evidence(f)]))
    return figures, rows
