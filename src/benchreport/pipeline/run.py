"""The build: execute the notebooks in order with papermill, merge their figures, render."""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..analyses.provenance import with_provenance
from ..core.errors import BuildError
from ..core.figures import load_registry, merge
from ..core.paths import shown
from ..core.store import resolve_store
from ..ingest.io import Run, load_run, write_json
from . import checksums, staging, store
from .kernels import take_workers
from .schedule import schedule

__all__ = ["Interrupts", "NOTEBOOK_NAME", "SHOWN_WARNINGS", "Steps", "build", "collect_figures",
           "list_notebooks", "notebook_parameters", "plan_notebooks", "run_notebooks",
           "show_warnings", "step_keys"]

NOTEBOOK_NAME = re.compile(r"\d\d-[a-z0-9-]+\.ipynb")


def list_notebooks(folder: Path) -> list[Path]:
    """The pipeline's notebooks: ``NN-name.ipynb`` in ``folder``, in name order."""
    found = sorted(p for p in folder.glob("*.ipynb") if NOTEBOOK_NAME.fullmatch(p.name))
    if not found:
        raise BuildError(f"no notebooks named NN-name.ipynb in {folder}",
                         hint="run from the benchreport checkout, or give it with "
                              "--project <checkout>")
    return found


class Interrupts:
    """Ctrl-C that cannot get lost while a build runs.

    Python turns SIGINT into KeyboardInterrupt wherever the main thread is, and when that
    is a weakref callback or a __del__ (the garbage collector runs them in the middle of
    anything) the exception is printed as "Exception ignored" and dropped: the build would
    go on and replace the report. While a build runs, SIGINT also sets a flag, which every
    step start and end checks, and such a dropped KeyboardInterrupt is not printed, since
    the flag raises it again at the next step.
    """

    active: Interrupts | None = None      # the one installed (a build inside a build)

    def __init__(self) -> None:
        self.seen = False
        self.installed = False

    def __enter__(self) -> Interrupts:
        import signal
        import threading

        if Interrupts.active is not None:
            return Interrupts.active
        self.installed = threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if self.installed:
            signal.signal(signal.SIGINT, self._handle)
            self.unraisable, sys.unraisablehook = sys.unraisablehook, self._unraisable
            Interrupts.active = self
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self.installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            sys.unraisablehook = self.unraisable
            Interrupts.active = None
            self.installed = False

    def _handle(self, signum, frame) -> None:   # noqa: ARG002
        self.seen = True
        raise KeyboardInterrupt

    def _unraisable(self, unraisable) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            self.unraisable(unraisable)

    def check(self) -> None:
        if self.seen:
            raise KeyboardInterrupt


class Steps:
    """Prints one line when a step starts and one with its time when it ends."""

    def __init__(self, total: int, out: Callable[[str], None] | None = None,
                 interrupts: Interrupts | None = None) -> None:
        self.total = total
        self.interrupts = interrupts or Interrupts()
        self.done = 0
        self.pending: dict[str, int] = {}   # numbers of steps running in worker processes
        self.out = out or (lambda line: print(line, file=sys.stderr, flush=True))

    def note(self, name: str, seconds: float | None = None) -> None:
        """A line for a step that runs elsewhere (a worker process): its start, or, given
        ``seconds``, its end, under the number it started with (steps end in any order)."""
        self.interrupts.check()
        if seconds is None:
            self.done += 1
            self.pending[name] = self.done
            self.out(f"[{self.done}/{self.total}] {name} ...")
        else:
            self.out(f"[{self.pending.pop(name)}/{self.total}] {name} done in {seconds:.1f}s")

    def run(self, name: str, func: Callable[[], object]) -> object:
        self.interrupts.check()
        self.done += 1
        tag = f"[{self.done}/{self.total}] {name}"
        self.out(f"{tag} ...")
        start = time.perf_counter()
        try:
            result = func()
        except Exception:
            # a library that catches the KeyboardInterrupt itself turns Ctrl-C into its own
            # error (DuckDB: "Query interrupted"): still an interrupt, so exit 130, quietly
            if self.interrupts.seen:
                raise KeyboardInterrupt from None
            raise
        self.interrupts.check()
        self.out(f"{tag} done in {time.perf_counter() - start:.1f}s")
        return result


def _digest(paths: list[Path], root: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def step_keys(run: Run, project: Path) -> dict[str, str]:
    """Content keys: the notebooks' inputs (data, notebooks, package code, lock, and the
    catalogues the analyses word their methods and caveats from) and the renderer's (those
    plus templates). Same key, same outputs: the step can be skipped."""
    import benchreport

    package = Path(benchreport.__file__).parent
    groups = [  # (files, the folder their names are taken relative to)
        ([p for p in run.paths.data.rglob("*") if p.is_file()], run.paths.data),
        (list((project / "notebooks").glob("*.ipynb")), project / "notebooks"),
        ([p for p in [project / "requirements.lock"] if p.is_file()], project),
        (list(package.rglob("*.py")), package),
        # figures keep their method's English text, and the caveats table its words
        (list((project / "templates" / "labels").glob("*.yaml")), project),
    ]
    nb_key = "".join(_digest(files, root) for files, root in groups)
    templates = [p for p in (project / "templates").rglob("*") if p.is_file()]
    from ..publish.render import code_version

    return {"notebooks": nb_key,
            "render": nb_key + _digest(templates, project) + code_version(project)}


def _stamp(run: Run) -> Path:
    return run.paths.report / ".build-keys.json"


def _up_to_date(run: Run, step: str, key: str, outputs: list[Path]) -> bool:
    path = _stamp(run)
    if not path.is_file() or not all(p.exists() for p in outputs):
        return False
    return json.loads(path.read_text()).get(step) == key


def _record(run: Run, step: str, key: str) -> None:
    path = _stamp(run)
    keys = json.loads(path.read_text()) if path.is_file() else {}
    keys[step] = key
    write_json(path, keys)


def notebook_parameters(src: Path, run: Run, data_root: Path, report_root: Path) -> dict:
    # Parameters are plain strings checked before they get here (run ids match a strict
    # pattern, roots are paths): papermill writes them into a cell as Python literals.
    return {"run_id": run.id, "data_root": str(data_root), "report_root": str(report_root),
            "notebook": src.name}


def plan_notebooks(phase: list[Path]) -> tuple[list[Path], list[Path]]:
    """The notebooks of one phase split between the two kernels: the second gets the larger
    half, since the first has run the phase before meanwhile. Fixed by name order, never by
    which kernel is free first, so every build executes the same notebooks in the same
    kernels in the same order."""
    return phase[1::2], phase[0::2]


def run_notebooks(notebooks: list[Path], run: Run, data_root: Path, report_root: Path,
                  steps: Steps, project: Path) -> None:
    """The notebooks phase by phase (``schedule``: ingest, the analyses, the claim check): a
    phase starts when the one before it is done, and the notebooks of one phase run two at
    a time. Two worker processes hold one kernel each; the second starts its kernel while
    the first phase runs. A notebook with no declared phase stops the build before any
    runs."""
    def job(nb: Path) -> tuple:
        return (nb, run.paths.notebooks / nb.name,
                notebook_parameters(nb, run, data_root, report_root))

    groups = [group for _, group in schedule(notebooks)]
    # a phase of one notebook runs in the first kernel, the one that ran the phase before
    phases = [[[job(nb) for nb in half] for half in
               (plan_notebooks(group) if len(group) > 1 else (group,))] for group in groups]
    with take_workers(2 if any(len(group) > 1 for group in groups) else 1, project) as workers:
        for plan in phases:
            workers.run(plan, lambda name: steps.note(f"notebook {name}"),
                        lambda name, seconds: steps.note(f"notebook {name}", seconds))


def collect_figures(run: Run) -> dict:
    """Merge derived/figures/*.json into derived/figures.json; return the registry."""
    fragments = {}
    for path in sorted(run.paths.figure_fragments.glob("*.json")):
        fragments[path.name] = json.loads(path.read_text(encoding="utf-8"))
    registry = with_provenance(run, merge(fragments))
    write_json(run.paths.figures_json, {
        "run_id": run.id,
        "figures": [f.to_json() for f in registry.values()],
    })
    return registry


SHOWN_WARNINGS = 10


def show_warnings(run: Run, out: Callable[[str], None]) -> None:
    """Print what the ingest could not read (it is also in derived/ingest.json)."""
    from ..ingest.run import warnings_of

    path = run.paths.ingest_json
    if not path.is_file():
        return
    notes = warnings_of(json.loads(path.read_text(encoding="utf-8"))["files"])
    for note in notes[:SHOWN_WARNINGS]:
        out(f"warning: {note}")
    if len(notes) > SHOWN_WARNINGS:
        out(f"warning: {len(notes) - SHOWN_WARNINGS} more in derived/ingest.json of the report")


def build(run_id: str, *, data_root: Path | str = "data", report_root: Path | str = "report",
          project: Path | str = ".", out: Callable[[str], None] | None = None,
          pdf: bool = True, base_url: str | None = None,
          store_dir: Path | str | None = None) -> Run:
    """Build report/<run_id>/ from data/<run_id>/: notebooks, figures, HTML and PDF.

    ``pdf=False`` (``benchreport build --no-pdf``) leaves the PDFs out: a quicker draft of
    the pages, and what tests that read no PDF build. A report built so has no PDF, not an
    old one; the next full build renders again. ``base_url`` (``--base-url``) is where the
    blog bundle will be served: its links become absolute.

    The build writes into report/.staging/<run_id>/ and swaps it in only when every step
    has succeeded, under a lock: a failed or interrupted build leaves the previous report
    as it was, and a second build of the same run waits for the first. The last step,
    before the swap, exports the run into the results store (report/_store/, or
    ``store_dir``, or ``$BENCHREPORT_STORE``: ``core.store.resolve_store``), so a full
    disk or an interrupt there leaves the previous report and store alike.
    """
    project = Path(project).resolve()
    run = load_run(run_id, data_root, report_root)
    results = resolve_store(run.paths.report.parent, store_dir)
    steps_out = out or (lambda line: print(line, file=sys.stderr, flush=True))
    with Interrupts() as interrupts, staging.lock(run.paths.report, steps_out):
        notebooks = list_notebooks(project / "notebooks")
        schedule(notebooks)           # a notebook with no declared phase: before any step
        steps = Steps(total=len(notebooks) + 4, out=steps_out, interrupts=interrupts)
        steps.run("verify inputs against SHA256SUMS", lambda: checksums.verify(
            run.paths.data, run.paths.rel(run.paths.data), run.id))
        keys = step_keys(run, project)
        if not pdf:
            keys["render"] += ":no-pdf"
        if base_url:
            keys["render"] += f":base-url={base_url}"
        if _up_to_date(run, "notebooks", keys["notebooks"], _notebook_outputs(run, notebooks)) \
                and _up_to_date(run, "render", keys["render"], _render_outputs(run, pdf)):
            steps.out("notebooks and figures: inputs unchanged, skipped")
            steps.out("render: inputs unchanged, skipped")
            shutil.rmtree(staging.failed_dir(run.paths.report), ignore_errors=True)
            with staging.full_disk_is_one_line(run.paths.report):
                if store.export_needed(run, results):
                    steps.run("export to the results store",
                              lambda: store.export_run(run, results))
                else:
                    store.remove_leftovers(results, run.id)
            return run
        with staging.stage(run) as staged:
            _build_into(staged, notebooks, keys, steps, project, pdf, base_url)
            # only a build that succeeded reaches the store, and before its report is swapped
            # in: a failed export leaves the previous report and store
            steps.run("export to the results store", lambda: store.export_run(staged, results))
    return run


def _notebook_outputs(run: Run, notebooks: list[Path]) -> list[Path]:
    return [run.paths.notebooks / nb.name for nb in notebooks] + [run.paths.figures_json]


def _render_outputs(run: Run, pdf: bool = True) -> list[Path]:
    return [run.paths.html(lang) for lang in ("ko", "en")] + \
           ([run.paths.pdf(lang) for lang in ("ko", "en")] if pdf else [])


def _build_into(run: Run, notebooks: list[Path], keys: dict[str, str], steps: Steps,
                project: Path, pdf: bool = True, base_url: str | None = None) -> None:
    """The steps whose inputs changed, writing under ``run.paths.report`` (the staging copy)."""
    from ..publish.render import render_report

    if _up_to_date(run, "notebooks", keys["notebooks"], _notebook_outputs(run, notebooks)):
        steps.out("notebooks and figures: inputs unchanged, skipped")
    else:
        # Figures of an earlier build must not leak into this one.
        for stale in run.paths.figure_fragments.glob("*.json"):
            stale.unlink()
        _stamp(run).unlink(missing_ok=True)
        # project-relative, so the executed copies do not carry this machine's paths
        run_notebooks(notebooks, run, Path(shown(run.paths.data.parent, project)),
                      Path(shown(run.paths.report.parent, project)), steps, project)
        steps.run("figures", lambda: collect_figures(run))
        show_warnings(run, steps.out)
        _record(run, "notebooks", keys["notebooks"])
    if _up_to_date(run, "render", keys["render"], _render_outputs(run, pdf)):
        steps.out("render: inputs unchanged, skipped")
        return
    registry = load_registry(run.paths.figures_json)
    if not pdf:          # no PDF of an earlier build may sit beside pages it does not match
        for lang in ("ko", "en"):
            run.paths.pdf(lang).unlink(missing_ok=True)
    steps.run("render HTML and PDF (ko, en)" if pdf else "render HTML (ko, en)",
              lambda: render_report(run, registry, project=project, pdf=pdf,
                                    base_url=base_url))
    _record(run, "render", keys["render"])
