"""The build: execute the notebooks in order with papermill, merge their figures, render."""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..core.errors import BuildError, ReportError
from ..core.figures import load_registry, merge
from ..core.paths import shown
from ..ingest.io import Run, load_run, write_json
from . import checksums, staging, store

# Errors a notebook raises about the inputs (their one-line text is the message to show):
# ReportError and its kinds, all but the build's own.
_INPUT_ERRORS = {c.__name__ for c in (ReportError, *ReportError.__subclasses__())
                 if c is not BuildError}

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
        self.pending: dict[str, int] = {}   # numbers of steps running in worker processes
        self.out = out or (lambda line: print(line, file=sys.stderr, flush=True))

    def note(self, name: str, seconds: float | None = None) -> None:
        """A line for a step that runs elsewhere (a worker process): its start, or, given
        ``seconds``, its end, under the number it started with (steps end in any order)."""
        if seconds is None:
            self.done += 1
            self.pending[name] = self.done
            self.out(f"[{self.done}/{self.total}] {name} ...")
        else:
            self.out(f"[{self.pending.pop(name)}/{self.total}] {name} done in {seconds:.1f}s")

    def run(self, name: str, func: Callable[[], object]) -> object:
        self.done += 1
        tag = f"[{self.done}/{self.total}] {name}"
        self.out(f"{tag} ...")
        start = time.perf_counter()
        result = func()
        self.out(f"{tag} done in {time.perf_counter() - start:.1f}s")
        return result


_KERNEL_DIRS: list[str] = []
KERNEL_LOG = "kernel.log"


# How long a kernel asked to shut down may take to exit before it is interrupted. An idle
# kernel exits in well under a second; one that does not is running a cell (the build is
# being stopped, e.g. by Ctrl-C) and gets the interrupt.
KERNEL_EXIT_WAIT = 2.0


def _ipc_kernel_manager():
    """A kernel manager that talks to the kernel over Unix sockets, not localhost TCP, and
    shuts a finished kernel down without interrupting it."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            import tempfile

            # Socket files are named <ip>-<port>: a folder of its own per kernel, so
            # kernels running side by side never share one.
            folder = tempfile.mkdtemp(prefix="benchreport-kernel-")
            _KERNEL_DIRS.append(folder)
            self.log_path = Path(folder) / KERNEL_LOG
            super().__init__(transport="ipc", ip=f"{folder}/ipc", **kwargs)

        async def start_kernel(self, **kw) -> None:
            """The kernel's own log (its stderr) goes to a file, not the build's stderr.

            What a notebook prints reaches the notebook through the kernel's messages; the
            process's stderr carries only the kernel's log, and ipykernel logs races of its
            own shutdown there (e.g. a control-thread flush after the main thread closed the
            IOPub pipe: "ZMQError: Socket operation on non-socket") on a build that went
            well. The file is shown when a kernel dies (see execute_notebook).
            """
            with open(self.log_path, "ab") as log:
                await super().start_kernel(stderr=log, **kw)

        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            """Ask the kernel to exit, and interrupt it only if it does not.

            jupyter_client's own shutdown sends SIGINT first, then the shutdown request.
            Papermill shuts the kernel down right after the reply to its last request
            (kernel_info), and ipykernel sends a reply before it leaves the handler, where
            SIGINT raises KeyboardInterrupt: when the signal lands there, the kernel prints
            "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." to the stderr it
            shares with the build, on a build that went well.
            """
            if now or restart or not self.owns_kernel or not self.has_kernel:
                await super().shutdown_kernel(now=now, restart=restart)
                return
            import asyncio

            self.shutting_down = True          # as jupyter_client does: no auto-restart
            self.stop_restarter()
            await self.request_shutdown()
            deadline = time.monotonic() + KERNEL_EXIT_WAIT
            while await self.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            if await self.is_alive():
                # Still running a cell: jupyter_client's way, which interrupts it, then
                # terminates it if need be. By now an idle kernel ignores SIGINT.
                await super().shutdown_kernel()
                return
            await self.finish_shutdown()       # reaps the process (it has exited)
            await self.cleanup_resources()

    return IPCKernelManager


def execute_notebook(src: Path, dst: Path, run: Run, data_root: Path,
                     report_root: Path) -> None:
    """Execute one notebook with the run's parameters; a cell error becomes BuildError."""
    # Parameters are plain strings checked before they get here (run ids match a strict
    # pattern, roots are paths): papermill writes them into a cell as Python literals.
    run_notebook(src, dst, {"run_id": run.id, "data_root": str(data_root),
                            "report_root": str(report_root), "notebook": src.name})


def run_notebook(src: Path, dst: Path, parameters: dict[str, str],
                 cwd: Path | None = None) -> None:
    """Execute ``src`` into ``dst`` with ``parameters`` (plain strings, checked), in
    ``cwd`` (default: the notebooks' parent); a cell error becomes BuildError."""
    import papermill as pm
    from nbclient.exceptions import DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    check_parameters(parameters)
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        _execute(pm, src, dst, parameters, cwd)
    except PapermillExecutionError as exc:
        raise notebook_error(exc, src.name) from None
    except DeadKernelError:
        _show_kernel_logs()         # its own log says why
        raise BuildError("the notebook's kernel died", path=src.name,
                         hint="its log is printed above") from None
    else:
        stable_cell_ids(dst)
    finally:
        while _KERNEL_DIRS:
            shutil.rmtree(_KERNEL_DIRS.pop(), ignore_errors=True)


def _show_kernel_logs() -> None:
    for folder in _KERNEL_DIRS:
        log = Path(folder) / KERNEL_LOG
        text = log.read_text(errors="replace").strip() if log.is_file() else ""
        if text:
            print(f"kernel log:\n{text}", file=sys.stderr)


def check_parameters(parameters: dict[str, str]) -> None:
    """Papermill writes parameters into a code cell as literals. Each value must be a plain
    string that reads back, as a literal, to itself: data, never code."""
    import ast

    from papermill.translators import PythonTranslator

    for name, value in parameters.items():
        literal = PythonTranslator.translate(value) if isinstance(value, str) else None
        if literal is None or ast.literal_eval(literal) != value or any(
                ord(c) < 32 or ord(c) == 127 for c in value):
            raise BuildError(f"notebook parameter {name}={value!r} is not a plain string",
                             hint="use folder names without control characters")


def stable_cell_ids(path: Path) -> None:
    """Papermill gives the cell it injects a random id; name it after its tag instead, so
    the notebook pages built from the executed copies are the same bytes every time."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.id = "injected-parameters"
    nbformat.write(nb, path)


def notebook_error(exc, notebook: str) -> BuildError:
    """A notebook's exception as one line. An input problem the package raised (a
    ReportError such as ParseError) reads as that problem; anything else as a failure in
    the named cell."""
    evalue = exc.evalue.splitlines()[0] if exc.evalue else ""
    if exc.ename in _INPUT_ERRORS and evalue:
        err = BuildError(f"{evalue} (in {notebook}, cell {exc.exec_count})")
    else:
        err = BuildError(f"notebook failed in cell {exc.exec_count}: {exc.ename}: {evalue}",
                         path=notebook)
    err.notebook = notebook
    return err


def _execute(pm, src: Path, dst: Path, parameters: dict, cwd: Path | None = None) -> None:
    """Execute with the project as the working folder (default: the notebooks' parent)."""
    pm.execute_notebook(str(src), str(dst), parameters=parameters, kernel_name="python3",
                        progress_bar=False, log_output=False,
                        cwd=str(cwd or src.parent.parent),
                        kernel_manager_class=_ipc_kernel_manager())


def _digest(paths: list[Path], root: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def step_keys(run: Run, project: Path) -> dict[str, str]:
    """Content keys: the notebooks' inputs (data, notebooks, package code, lock) and the
    renderer's (those plus templates). Same key, same outputs: the step can be skipped."""
    import benchreport

    package = Path(benchreport.__file__).parent
    groups = [  # (files, the folder their names are taken relative to)
        ([p for p in run.paths.data.rglob("*") if p.is_file()], run.paths.data),
        (list((project / "notebooks").glob("*.ipynb")), project / "notebooks"),
        ([p for p in [project / "requirements.lock"] if p.is_file()], project),
        (list(package.rglob("*.py")), package),
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


def _execute_job(job: tuple) -> tuple[str, float]:
    """Run one notebook in a worker process; returns (name, seconds)."""
    src, dst, run, data_root, report_root = job
    start = time.perf_counter()
    execute_notebook(src, dst, run, data_root, report_root)
    return src.name, time.perf_counter() - start


def run_notebooks(notebooks: list[Path], run: Run, data_root: Path, report_root: Path,
                  steps: Steps) -> None:
    """The first notebook (ingest) and the last (claims) run alone; those between depend
    only on the ingest, so they run two at a time."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    def job(nb: Path) -> tuple:
        return (nb, run.paths.notebooks / nb.name, run, data_root, report_root)

    head, middle, tail = notebooks[:1], notebooks[1:-1], notebooks[-1:] if len(notebooks) > 1 \
        else []
    ctx = multiprocessing.get_context("spawn")   # no kernel state shared with the parent
    with ProcessPoolExecutor(2, mp_context=ctx) as pool:
        # The workers start (and import papermill) while the ingest notebook runs.
        warm = [pool.submit(_warm_up) for _ in range(2)] if middle else []
        for nb in head:
            steps.run(f"notebook {nb.name}", lambda nb=nb: execute_notebook(*job(nb)))
        for future in warm:
            future.result()
        for nb in middle:
            steps.note(f"notebook {nb.name}")
        futures = [pool.submit(_execute_job, job(nb)) for nb in middle]
        try:
            for future in as_completed(futures):
                name, seconds = future.result()
                steps.note(f"notebook {name}", seconds)
        except BaseException:
            for future in futures:       # do not start the rest; the build has failed
                future.cancel()
            raise
    for nb in tail:
        steps.run(f"notebook {nb.name}", lambda nb=nb: execute_notebook(*job(nb)))


def _warm_up() -> None:
    import papermill  # noqa: F401
    from papermill.translators import PythonTranslator  # noqa: F401


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
          pdf: bool = True) -> Run:
    """Build report/<run_id>/ from data/<run_id>/: notebooks, figures, HTML and PDF.

    ``pdf=False`` (``benchreport build --no-pdf``) leaves the PDFs out: a quicker draft of
    the pages, and what tests that read no PDF build. A report built so has no PDF, not an
    old one; the next full build renders again.

    The build writes into report/.staging/<run_id>/ and swaps it in only when every step
    has succeeded, under a lock: a failed or interrupted build leaves the previous report
    as it was, and a second build of the same run waits for the first.
    """
    project = Path(project).resolve()
    run = load_run(run_id, data_root, report_root)
    steps_out = out or (lambda line: print(line, file=sys.stderr, flush=True))
    with staging.lock(run.paths.report, steps_out):
        notebooks = list_notebooks(project / "notebooks")
        steps = Steps(total=len(notebooks) + 4, out=steps_out)
        steps.run("verify inputs against SHA256SUMS", lambda: checksums.verify(
            run.paths.data, run.paths.rel(run.paths.data), run.id))
        keys = step_keys(run, project)
        if not pdf:
            keys["render"] += ":no-pdf"
        if _up_to_date(run, "notebooks", keys["notebooks"], _notebook_outputs(run, notebooks)) \
                and _up_to_date(run, "render", keys["render"], _render_outputs(run, pdf)):
            steps.out("notebooks and figures: inputs unchanged, skipped")
            steps.out("render: inputs unchanged, skipped")
            shutil.rmtree(staging.failed_dir(run.paths.report), ignore_errors=True)
            if store.export_needed(run):
                steps.run("export to the results store", lambda: store.export_run(run))
            return run
        with staging.stage(run) as staged:
            _build_into(staged, notebooks, keys, steps, project, pdf)
        # only a build that succeeded reaches the store, and only once its report is in place
        steps.run("export to the results store", lambda: store.export_run(run))
    return run


def _notebook_outputs(run: Run, notebooks: list[Path]) -> list[Path]:
    return [run.paths.notebooks / nb.name for nb in notebooks] + [run.paths.figures_json]


def _render_outputs(run: Run, pdf: bool = True) -> list[Path]:
    return [run.paths.html(lang) for lang in ("ko", "en")] + \
           ([run.paths.pdf(lang) for lang in ("ko", "en")] if pdf else [])


def _build_into(run: Run, notebooks: list[Path], keys: dict[str, str], steps: Steps,
                project: Path, pdf: bool = True) -> None:
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
                      Path(shown(run.paths.report.parent, project)), steps)
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
              lambda: render_report(run, registry, project=project, pdf=pdf))
    _record(run, "render", keys["render"])
