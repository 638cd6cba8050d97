"""End-to-end results: each engine's benchmark duration per workload, which engine finished
first and by how much, and the gap split at the last first token (``gap``); and the workload
settings run.yaml declares, as figures the page can cite."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.metrics import compare_lower_is_better
from ..core.records import PointResult, Run
from ..core.tables import input_checksum, load_ingested
from ..core.verdicts import INCONSISTENT
from .consistency import DURATION_CHECKS, all_checks, check_figures
from .gap import split_figures

__all__ = ["EndToEnd", "end_to_end", "run_yaml_source", "workload_figures"]


def _source(entry: PointResult, key: str) -> Source:
    return Source(path=entry.file.rel, sha256=entry.file.sha256, key=key,
                  lines=(entry.line,))


@dataclass(frozen=True)
class EndToEnd:
    """End-to-end results: one row per engine and workload, and their figures."""

    table: pd.DataFrame
    figures: list[Figure]


def end_to_end(run: Run, ing=None) -> EndToEnd:
    """Duration per engine and workload, and per workload which engine finished first.

    Figure ids: ``e2e.<workload>.<engine>.duration`` (s), ``e2e.<workload>.faster`` (engine
    id or "tie"), ``e2e.<workload>.slower`` and ``e2e.<workload>.speedup`` (slower / faster).
    """
    ing = ing or load_ingested(run)
    entries = ing.results
    # the client's result against the engine's log and its /metrics scrapes
    checks = all_checks(run, ing)
    figures: list[Figure] = check_figures(checks)
    doubtful = {(c.workload, c.engine): ids.consistency(c.workload, c.engine, c.name)
                for c in checks if c.status == INCONSISTENT and c.name in DURATION_CHECKS}
    rows = []
    for workload in run.meta.workloads:
        durations: dict[str, float] = {}
        for entry in (e for e in entries if e.workload == workload.id):
            r = entry
            durations[entry.engine] = r.duration
            rows.append({
                "workload": workload.id, "engine": entry.engine, "duration_s": r.duration,
                "completed": r.completed, "total_input_tokens": r.total_input_tokens,
                "total_output_tokens": r.total_output_tokens,
                "file": f"{entry.file.rel}:{r.line}",
            })
            figures.append(figure(
                id=ids.e2e(workload.id, entry.engine, "duration"), value=r.duration, unit="s",
                method=said("e2e.duration"),
                sources=(_source(entry, "duration"),), decimals=1,
                context={"engine": entry.engine, "workload": workload.id},
            ))
        mine = [e for e in entries if e.workload == workload.id]
        if len(durations) < 2:
            figures += split_figures(workload, mine, None)
            continue
        comparison = compare_lower_is_better(durations)
        figures += split_figures(workload, mine, comparison,
                                 {e: fid for (w, e), fid in doubtful.items()
                                  if w == workload.id})
        dep = tuple(ids.e2e(workload.id, e, "duration") for e in comparison.ranking[:2])
        ctx = {"workload": workload.id}
        figures += [
            figure(id=ids.e2e(workload.id, None, "faster"), value=comparison.faster, unit="engine",
                   method=said("e2e.faster", one="1.00"), depends_on=dep, context=ctx),
            figure(id=ids.e2e(workload.id, None, "slower"), value=comparison.slower, unit="engine",
                   method=said("e2e.slower"), depends_on=dep,
                   context=ctx),
            figure(id=ids.e2e(workload.id, None, "speedup"), value=comparison.ratio, unit="x",
                   method=said("e2e.speedup"), depends_on=dep, decimals=2, context=ctx),
        ]
    table = pd.DataFrame(rows, columns=["workload", "engine", "duration_s", "completed",
                                        "total_input_tokens", "total_output_tokens", "file"])
    return EndToEnd(table=table, figures=figures)


def run_yaml_source(run: Run) -> Source:
    """run.yaml as a figure's source (path and sha256; the caller adds the key)."""
    path = run.paths.run_yaml
    return Source(path=run.paths.rel(path), sha256=input_checksum(run, path))


def workload_figures(run: Run) -> list[Figure]:
    """The workload parameters from run.yaml, registered so the page can cite them too.

    Figure ids: ``workload.<id>.input_tokens``, ``.output_tokens``, ``.concurrency``,
    ``.num_prompts``.
    """
    path = run.paths.run_yaml
    src = {"path": run.paths.rel(path), "sha256": input_checksum(run, path)}
    figures = []
    for w in run.meta.workloads:
        for name, unit in (("input_tokens", "tokens"), ("output_tokens", "tokens"),
                           ("concurrency", "req"), ("num_prompts", "req"),
                           ("repeats", "count")):
            if getattr(w, name) is None or (name == "repeats" and not w.is_sweep):
                continue            # not declared (a sweep has no single concurrency)
            figures.append(figure(
                id=ids.workload(w.id, name), value=getattr(w, name), unit=unit,
                method=said("e2e.workload_setting", name=name),
                sources=(Source(key=f"workloads[id={w.id}].{name}", **src),),
                decimals=0, context={"workload": w.id}))
    return figures
