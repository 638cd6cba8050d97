"""The build: execute the notebooks in order with papermill, merge their figures, render."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import checksums
from .errors import BuildError
from .figures import merge
from .io import Run, load_run, write_json

NOTEBOOK_NAME = re.compile(r"\d\d-[a-z0-9-]+\.ipynb")


def list_notebooks(folder: Path) -> list[Path]:
    """The pipeline's notebooks: ``NN-name.ipynb`` in ``folder``, in name order."""
    found = sorted(p for p in folder.glob("*.ipynb") if NOTEBOOK_NAME.fullmatch(p.name))
    if not found:
        raise BuildError(f"no notebooks named NN-name.ipynb in {folder}")
    return found


class Steps:
    """Prints one line when a step starts and one with its time when it ends."""

    def __init__(self, total: int, out: Callable[[str], None] | None = None) -> None:
        self.total = total
        self.done = 0
        self.out = out or (lambda line: print(line, file=sys.stderr, flush=True))

    def run(self, name: str, func: Callable[[], object]) -> object:
        self.done += 1
        tag = f"[{self.done}/{self.total}] {name}"
        self.out(f"{tag} ...")
        start = time.perf_counter()
        result = func()
        self.out(f"{tag} done in {time.perf_counter() - start:.1f}s")
        return result


def _ipc_kernel_manager():
    """A kernel manager that talks to the kernel over Unix sockets, not localhost TCP."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(transport="ipc", **kwargs)

    return IPCKernelManager


def execute_notebook(src: Path, dst: Path, run: Run, data_root: Path,
                     report_root: Path) -> None:
    """Execute one notebook with the run's parameters; a cell error becomes BuildError."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    # Parameters are plain strings checked before they get here (run ids match a strict
    # pattern, roots are paths): papermill writes them into a cell as Python literals.
    parameters = {"run_id": run.id, "data_root": str(data_root), "report_root": str(report_root),
                  "notebook": src.name}
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        pm.execute_notebook(str(src), str(dst), parameters=parameters, kernel_name="python3",
                            progress_bar=False, log_output=False, cwd=str(src.parent),
                            kernel_manager_class=_ipc_kernel_manager())
    except PapermillExecutionError as exc:
        evalue = exc.evalue.splitlines()[0] if exc.evalue else exc.ename
        raise BuildError(f"notebook failed in cell {exc.exec_count}: {exc.ename}: {evalue}",
                         path=str(src.name),
                         hint=f"the executed copy with the error is {dst}") from None


def collect_figures(run: Run) -> dict:
    """Merge derived/figures/*.json into derived/figures.json; return the registry."""
    fragments = {}
    for path in sorted(run.paths.figure_fragments.glob("*.json")):
        fragments[path.name] = json.loads(path.read_text(encoding="utf-8"))
    registry = merge(fragments)
    write_json(run.paths.figures_json, {
        "run_id": run.id,
        "figures": [f.to_json() for f in registry.values()],
    })
    return registry


def build(run_id: str, *, data_root: Path | str = "data", report_root: Path | str = "report",
          project: Path | str = ".", out: Callable[[str], None] | None = None) -> Run:
    """Build report/<run_id>/ from data/<run_id>/: notebooks, figures, HTML and PDF."""
    from .render import render_report

    project = Path(project).resolve()
    run = load_run(run_id, data_root, report_root)
    data_root, report_root = Path(data_root).resolve(), Path(report_root).resolve()
    notebooks = list_notebooks(project / "notebooks")
    steps = Steps(total=len(notebooks) + 3, out=out)
    steps.run("verify inputs against SHA256SUMS", lambda: checksums.verify(
        run.paths.data, run.paths.rel(run.paths.data), run.id))
    # Figures of an earlier build must not leak into this one.
    for stale in run.paths.figure_fragments.glob("*.json"):
        stale.unlink()
    for nb in notebooks:
        steps.run(f"notebook {nb.name}", lambda nb=nb: execute_notebook(
            nb, run.paths.notebooks / nb.name, run, data_root, report_root))
    registry = steps.run("figures", lambda: collect_figures(run))
    steps.run("render HTML and PDF (ko, en)",
              lambda: render_report(run, registry, project=project))
    return run

