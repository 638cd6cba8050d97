"""What the notebooks call: each function takes a loaded run and returns tables and figures."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .figures import Figure, Source, fragment
from .io import ResultEntry, Run, load_results, load_run, sha256_file, write_json
from .metrics import compare_lower_is_better

__all__ = ["EndToEnd", "end_to_end", "load_run", "save_figures", "workload_figures"]


def _source(entry: ResultEntry, key: str) -> Source:
    return Source(path=entry.file.rel, sha256=entry.file.sha256, key=key,
                  lines=(entry.result.line,))


@dataclass(frozen=True)
class EndToEnd:
    """End-to-end results: one row per engine and workload, and their figures."""

    table: pd.DataFrame
    figures: list[Figure]


def end_to_end(run: Run) -> EndToEnd:
    """Duration per engine and workload, and per workload which engine finished first.

    Figure ids: ``e2e.<workload>.<engine>.duration`` (s), ``e2e.<workload>.faster`` (engine
    id or "tie"), ``e2e.<workload>.slower`` and ``e2e.<workload>.speedup`` (slower / faster).
    """
    entries = load_results(run)
    figures: list[Figure] = []
    rows = []
    for workload in run.meta.workloads:
        durations: dict[str, float] = {}
        for entry in (e for e in entries if e.workload == workload.id):
            r = entry.result
            durations[entry.engine] = r.duration
            rows.append({
                "workload": workload.id, "engine": entry.engine, "duration_s": r.duration,
                "completed": r.completed, "total_input_tokens": r.total_input_tokens,
                "total_output_tokens": r.total_output_tokens,
                "file": f"{entry.file.rel}:{r.line}",
            })
            figures.append(Figure(
                id=f"e2e.{workload.id}.{entry.engine}.duration", value=r.duration, unit="s",
                method="benchmark duration written by the benchmark client (key 'duration'): "
                       "wall time from the first request sent to the last response received",
                sources=(_source(entry, "duration"),), decimals=1,
                context={"engine": entry.engine, "workload": workload.id},
            ))
        if len(durations) < 2:
            continue
        comparison = compare_lower_is_better(durations)
        dep = tuple(f"e2e.{workload.id}.{e}.duration" for e in comparison.ranking[:2])
        ctx = {"workload": workload.id}
        figures += [
            Figure(id=f"e2e.{workload.id}.faster", value=comparison.faster, unit="engine",
                   method="the engine with the shortest duration ('tie' when the speedup "
                          "rounds to 1.00)", depends_on=dep, context=ctx),
            Figure(id=f"e2e.{workload.id}.slower", value=comparison.slower, unit="engine",
                   method="the engine with the second-shortest duration", depends_on=dep,
                   context=ctx),
            Figure(id=f"e2e.{workload.id}.speedup", value=comparison.ratio, unit="x",
                   method="duration of the second-fastest engine divided by duration of the "
                          "fastest engine", depends_on=dep, decimals=2, context=ctx),
        ]
    table = pd.DataFrame(rows, columns=["workload", "engine", "duration_s", "completed",
                                        "total_input_tokens", "total_output_tokens", "file"])
    return EndToEnd(table=table, figures=figures)


def workload_figures(run: Run) -> list[Figure]:
    """The workload parameters from run.yaml, registered so the page can cite them too.

    Figure ids: ``workload.<id>.input_tokens``, ``.output_tokens``, ``.concurrency``,
    ``.num_prompts``.
    """
    path = run.paths.run_yaml
    src = {"path": run.paths.rel(path), "sha256": sha256_file(path)}
    figures = []
    for w in run.meta.workloads:
        for name, unit in (("input_tokens", "tokens"), ("output_tokens", "tokens"),
                           ("concurrency", "req"), ("num_prompts", "req")):
            figures.append(Figure(
                id=f"workload.{w.id}.{name}", value=getattr(w, name), unit=unit,
                method=f"workload setting '{name}' as declared in run.yaml",
                sources=(Source(key=f"workloads[id={w.id}].{name}", **src),),
                decimals=0, context={"workload": w.id}))
    return figures


def save_figures(run: Run, figures: list[Figure], notebook: str) -> str:
    """Write a notebook's figures to derived/figures/<notebook>.json; return that path."""
    stem = notebook.removesuffix(".ipynb")
    path = run.paths.figure_fragments / f"{stem}.json"
    write_json(path, fragment(figures, notebook))
    return run.paths.rel(path)
