"""Build a comparison across runs: report/_compare/<name>/, by the same machinery as a run.

Each run is built first (a run whose inputs did not change is skipped; every build exports
its tables into the results store). Then the notebooks of ``notebooks/compare/`` run under
papermill, reading the store; their figures are merged into one registry; the article is
rendered in every language, HTML and PDF, with the audit appendix. The folder is written
aside and swapped in only when everything succeeded, as a run's report is.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ReportError
from ..core.figures import load_registry, merge
from ..core.files import read_json, write_json
from ..core.paths import ComparePaths, check_run_id, compare_paths, shown
from ..core.store import resolve_store
from . import staging
from .kernels import take_workers
from .run import Interrupts, Steps, list_notebooks

__all__ = ["CompareJob", "build_compare", "default_name"]


@dataclass(frozen=True)
class CompareJob:
    """What ``staging.stage`` moves aside and swaps in: the comparison's paths."""

    paths: ComparePaths


def default_name(run_ids: list[str]) -> str:
    return "-vs-".join(run_ids)


def build_compare(run_ids: list[str], *, base: str | None = None, name: str | None = None,
                  data_root: Path | str = "data", report_root: Path | str = "report",
                  project: Path | str = ".", out: Callable[[str], None] | None = None,
                  build_runs: bool = True, pdf: bool = True,
                  store_dir: Path | str | None = None) -> ComparePaths:
    """Build the comparison of ``run_ids`` (base: the first, unless given), reading the
    store ``core.store.resolve_store`` names (``store_dir``, ``$BENCHREPORT_STORE``, or
    ``<report_root>/_store``). ``pdf=False`` leaves the PDFs out, as ``build`` does (what
    tests that read no PDF build)."""
    from .run import build

    project = Path(project).resolve()
    say = out or (lambda line: print(line, file=sys.stderr, flush=True))
    for run_id in run_ids:
        check_run_id(run_id)
    if len(run_ids) < 2:
        raise ReportError("a comparison needs two or more runs",
                          hint='make compare RUNS="2024-b300 2024-b300-vllm-whatif"')
    if len(set(run_ids)) != len(run_ids):
        raise ReportError("a run is named twice: " + " ".join(run_ids))
    if base and base not in run_ids:
        raise ReportError(f"BASE={base} is not one of RUNS ({' '.join(run_ids)})")
    paths = compare_paths(report_root, name or default_name(run_ids))
    store = resolve_store(report_root, store_dir).resolve()
    if build_runs:
        for run_id in run_ids:
            say(f"run {run_id}:")
            build(run_id, data_root=data_root, report_root=report_root, project=project,
                  out=say, store_dir=store)
    notebooks = list_notebooks(project / "notebooks" / "compare")
    with Interrupts() as interrupts, staging.lock(paths.report, say), \
            staging.stage(CompareJob(paths)) as job:
        steps = Steps(total=len(notebooks) + 2, out=say, interrupts=interrupts)
        staged: ComparePaths = job.paths
        for stale in staged.figure_fragments.glob("*.json"):
            stale.unlink()
        _execute(notebooks, staged, run_ids, base or "", (store, data_root), project, steps)
        steps.run("figures", lambda: _collect(staged))
        steps.run("render HTML and PDF (ko, en)" if pdf else "render HTML (ko, en)",
                  lambda: _render(staged, project, pdf))
    return paths


def _execute(notebooks: list[Path], paths: ComparePaths, run_ids: list[str], base: str,
             roots: tuple[Path, Path | str], project: Path, steps: Steps) -> None:
    """Run the comparison notebooks in turn in one worker's kernel (the main process runs
    no kernel client, so Ctrl-C stays its own); they write into ``paths.report`` (the
    staging copy), read the store and the runs' run.yaml files (their ``gate:`` noise
    floors) under the data root (``roots``: the store, the data root)."""
    store, data_root = roots
    jobs = [(src, paths.notebooks / src.name,
             {"runs": " ".join(run_ids), "base": base, "out": shown(paths.report, project),
              "store": shown(store, project),
              "data_root": shown(Path(data_root).resolve(), project),
              "notebook": src.name}) for src in notebooks]
    with take_workers(1, project) as workers:
        workers.run([jobs], lambda name: steps.note(f"notebook compare/{name}"),
                    lambda name, seconds: steps.note(f"notebook compare/{name}", seconds))


def _collect(paths: ComparePaths) -> None:
    fragments = {p.name: read_json(p) for p in sorted(paths.figure_fragments.glob("*.json"))}
    registry = merge(fragments)
    write_json(paths.figures_json, {"name": paths.name,
                                    "figures": [f.to_json() for f in registry.values()]})


def _render(paths: ComparePaths, project: Path, pdf: bool) -> None:
    from ..publish.compare import render_compare

    render_compare(paths, load_registry(paths.figures_json), project=project, pdf=pdf)
