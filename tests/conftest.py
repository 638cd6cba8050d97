"""Shared fixtures: the project root and copies of the hand-made runs in a temp folder."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"


def _real_samples() -> Path:
    """Public result files that people published (not ours, so not in the repo): the folder
    named by $BENCHREPORT_REAL_SAMPLES, else ../shared/real-samples beside the project, else
    the workspace's copy. Tests that need them skip, saying where they looked."""
    if os.environ.get("BENCHREPORT_REAL_SAMPLES"):
        return Path(os.environ["BENCHREPORT_REAL_SAMPLES"])
    for folder in (ROOT.parent / "shared" / "real-samples", Path("/work/shared/real-samples")):
        if folder.is_dir():
            return folder
    return ROOT.parent / "shared" / "real-samples"


REAL_SAMPLES = _real_samples()
needs_samples = pytest.mark.skipif(not REAL_SAMPLES.is_dir(),
                                   reason=f"no real samples at {REAL_SAMPLES}")


@pytest.fixture
def project() -> Path:
    return ROOT


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A temp project folder with data/ and report/; tests never write into the repo."""
    (tmp_path / "data").mkdir()
    (tmp_path / "report").mkdir()
    return tmp_path


def copy_run(workspace: Path, name: str, as_id: str | None = None) -> Path:
    dst = workspace / "data" / (as_id or name)
    shutil.copytree(FIXTURE_RUNS / name, dst)
    return dst


def builds_a_report(fixture_function):
    """Say that a fixture builds a whole report (notebooks and render). A test that uses
    one, itself or through another fixture, is marked ``slow`` (see below); a test that
    builds in its own body carries ``@pytest.mark.slow``."""
    fixture_function.marks_slow = True
    return fixture_function


def takes_seconds(fixture_function):
    """Say that a fixture takes seconds without building a report (it reads or generates a
    whole run): the tests that use it are marked ``slow`` as well."""
    fixture_function.marks_slow = True
    return fixture_function


def _uses_a_build(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(getattr(d.func, "marks_slow", False)
               for name in info.names_closure for d in info.name2fixturedefs.get(name, ()))


def _module_build(item: pytest.Item) -> bool:
    """Whether the test reads a build (or another slow fixture) made once per module."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope in ("module", "class", "package") and getattr(d.func, "marks_slow", False)
               for name in info.names_closure for d in info.name2fixturedefs.get(name, ()))


GROUPS = "xdist-groups.json"       # in the session's temp folder: test id -> group
# the session's shared builds (below), in the order a test that reads several is grouped by
SHARED = ("reference_build", "mini_build", "dgx_build", "aiperf_sample_build", "planted_build",
          "cli_build")


def _group(item: pytest.Item) -> str | None:
    """The xdist group of a test: its module's, when it reads a slow module-scoped
    fixture; else that of the first shared session build it reads; else, for a test whose
    builds start their own workers (``fresh_workers``), the group of all such tests;
    else none.

    A ``fresh_workers`` test ends its process's kept workers first, so the next build there
    starts new ones (kernels, imports: seconds of CPU); run one after another, such tests
    end them once, not once each."""
    if _module_build(item):
        return item.module.__name__
    names = getattr(getattr(item, "_fixtureinfo", None), "names_closure", ())
    shared = next((f"shared:{name}" for name in SHARED if name in names), None)
    if shared is None and item.get_closest_marker("fresh_workers") is not None:
        return "fresh_workers"
    return shared


def pytest_collection_modifyitems(config, items):
    """The end-to-end tests (they build whole reports: notebook kernels, charts, fonts,
    maybe PDFs) and the few others that take seconds each (a whole run read or generated)
    are marked ``slow``; `make test-fast` runs the rest: ``pytest -m "not slow"``.

    Run in parallel (pytest-xdist, ``-n 2 --dist loadgroup``, as `make test` does), the
    tests of a module that read one of its slow module-scoped fixtures form one group, run
    by one worker, so that fixture is made once, not once per worker (see
    ``pytest_xdist_make_scheduler``); the session's builds are shared by the workers
    (``shared_folder``), and the other tests that read one form a group too, so that one
    worker builds it while the other runs other tests rather than wait for it."""
    groups = {}
    for item in items:
        if _uses_a_build(item):
            item.add_marker(pytest.mark.slow)
        group = _group(item)
        if group:
            groups[item.nodeid] = group
    # The slow tests first (in their order), the quick ones after: xdist hands out the
    # groups largest first and then single tests in this order, so the run ends with tests
    # of a fraction of a second on both workers, not with one worker on a test of seconds
    # while the other, done, waits.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and config.option.basetemp:
        # for the scheduler in the main process, in the session's temp folder (both
        # workers collect the same tests and write the same groups)
        path = Path(config.option.basetemp).parent / GROUPS
        mine = path.with_name(f"{GROUPS}.{worker}")
        mine.write_text(json.dumps(groups))
        os.replace(mine, path)


@pytest.hookimpl(optionalhook=True)      # an xdist hook: known only where xdist is installed
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: xdist's own scheduler, given the groups the workers wrote.
    (xdist marks a group by a suffix it appends to the test ids, which no longer reaches
    them under pytest 9: its loadgroup alone ran a group's tests on both workers.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class GroupScheduling(LoadGroupScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:      # first asked once every worker has collected
                path = config._tmp_path_factory.getbasetemp() / GROUPS
                self.groups = json.loads(path.read_text()) if path.is_file() else {}
            return self.groups.get(nodeid, nodeid)

    return GroupScheduling(config, log)


@pytest.fixture(scope="session", autouse=True)
def _kept_notebook_workers(tmp_path_factory):
    """The session's builds in this process share their notebook workers (and kernels):
    each build after the first skips starting them and their imports, seconds of CPU
    (``pipeline.kernels.WorkerPool``). A build in a subprocess (the command line) starts
    its own, as every build outside the tests does.

    Every process of the session (the xdist workers, their kernels, the command lines the
    tests run) shares the client tails it fits for a reconstruction's caveats, seconds of
    CPU per build of the reference run (``synth.client_tails``): set first, so every
    kernel starts with it.

    Their PDF workers are kept the same way (``KeptPdfWorkers``)."""
    from benchreport.pipeline import kernels
    from benchreport.publish import render
    from benchreport.synth import FIT_CACHE_ENV

    root = tmp_path_factory.getbasetemp()
    fits = (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / "fits"
    fits.mkdir(exist_ok=True)
    os.environ[FIT_CACHE_ENV] = str(fits)
    kernels.POOL = kernels.WorkerPool()
    own_pdf_workers, render.pdf_workers = render.pdf_workers, KeptPdfWorkers(render.pdf_workers)
    yield
    pool, kernels.POOL = kernels.POOL, None
    pdfs, render.pdf_workers = render.pdf_workers, own_pdf_workers
    try:
        pool.close()
    finally:
        pdfs.close()


class KeptPdfWorkers:
    """``publish.render.pdf_workers`` for the session's builds in this process: the PDF
    workers of the first build that renders PDFs (two processes that import WeasyPrint, a
    second of CPU each) are kept, idle, for the next, as the notebook workers are. A render
    that fails or is interrupted ends them as a build's own ones end (``make``'s context
    sees the exception), and the next render starts new ones. A build in a subprocess (the
    command line) or in a ``fresh_workers`` test starts its own."""

    def __init__(self, make: Callable) -> None:
        self.make = make                  # publish.render's own pdf_workers
        self.open: tuple | None = None    # (its context, its pool, its warm-up futures)

    @contextlib.contextmanager
    def __call__(self):
        if self.open is None:
            context = self.make()
            self.open = (context, *context.__enter__())
        context, pool, warm = self.open
        try:
            yield pool, warm
        except BaseException:
            self.open = None
            if not context.__exit__(*sys.exc_info()):
                raise

    def close(self) -> None:
        if self.open is not None:
            context, self.open = self.open[0], None
            context.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _fresh_notebook_workers(request, monkeypatch):
    """A test marked ``fresh_workers`` checks what becomes of a build's workers and kernels
    (killed, cleaned up, quiet): its builds start their own, as outside the tests, and no
    idle worker of the pool is there while it runs."""
    if request.node.get_closest_marker("fresh_workers") is None:
        return
    from benchreport.pipeline import kernels
    from benchreport.publish import render

    if kernels.POOL is not None:
        kernels.POOL.close()
    monkeypatch.setattr(kernels, "POOL", None)
    if isinstance(render.pdf_workers, KeptPdfWorkers):
        render.pdf_workers.close()
        monkeypatch.setattr(render, "pdf_workers", render.pdf_workers.make)


def shared_folder(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder made once per test session by ``make(folder)``, shared by the xdist workers:
    the first worker to ask makes it, under a file lock, while the other waits, then reads
    it. (Run without xdist, the folder is this process's own.) It is read-only: copy it to
    change anything. A ``make`` that fails leaves no folder for the other worker, which
    tries again."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent / "shared"     # the session's, not a worker's
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)                      # released when closed
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


def _pdf_wanted(request, fixture: str) -> bool:
    """Whether a test of this session reads the PDFs of a session build: then it is built
    with them at once, instead of adding them in a second render step."""
    return any(fixture in getattr(item, "fixturenames", ()) for item in request.session.items)


def _build(workspace: Path, run_id: str, *, pdf: bool, out) -> object:
    from benchreport.pipeline.run import build

    return build(run_id, data_root=workspace / "data", report_root=workspace / "report",
                 project=ROOT, out=out, pdf=pdf)


def _add_pdfs(run) -> list[str]:
    """Build ``run`` again where it was built, with PDFs: its keys are unchanged, so the
    notebooks are skipped and only the render step runs (pages and PDFs), or nothing, when
    it was built with them. The folder then holds what a full build with PDFs writes, as
    the byte-identity test of the mini run checks."""
    lines: list[str] = []
    _build(run.paths.data.parent.parent, run.id, pdf=True, out=lines.append)
    assert "notebooks and figures: inputs unchanged, skipped" in lines, lines
    return lines


# The session's builds are shared by every test that reads them: treat them as read-only
# (copy the folder first to change anything). A test that reads a PDF asks for the
# *_pdf_build fixture: the build is made with PDFs when such a test is in the session (so
# `pytest -m "not slow"` and a run of one module render none), and a *_pdf_build asked for
# later adds them to the same folder (one render step).

@pytest.fixture(scope="session")
@builds_a_report
def mini_build(tmp_path_factory, request):
    """The hand-made 'mini' run built once per test session (shared by the xdist workers),
    without PDFs unless a test of the session asks for mini_pdf_build: (the Run, the step
    lines)."""
    from benchreport.ingest.io import load_run

    pdf = _pdf_wanted(request, "mini_pdf_build")

    def make(workspace: Path) -> None:
        (workspace / "data").mkdir()
        (workspace / "report").mkdir()
        copy_run(workspace, "mini")
        lines: list[str] = []
        _build(workspace, "mini", pdf=pdf, out=lines.append)
        (workspace / "lines.txt").write_text("".join(line + "\n" for line in lines))

    workspace = shared_folder(tmp_path_factory, "mini", make)
    lines = (workspace / "lines.txt").read_text().splitlines()
    return load_run("mini", workspace / "data", workspace / "report"), lines


@pytest.fixture(scope="session")
def mini_pdf_build(tmp_path_factory, mini_build):
    """mini_build with its PDFs (added by a render step if it had none): (the Run, the
    first build's step lines)."""
    run, lines = mini_build
    shared_folder(tmp_path_factory, "mini-pdf", lambda _: _add_pdfs(run))
    return run, lines


@pytest.fixture(scope="session")
@builds_a_report
def reference_build(tmp_path_factory, request):
    """The reference run built once per test session (shared by the xdist workers), into a
    temp folder, without PDFs unless a test of the session asks for reference_pdf_build
    (returns the Run)."""
    from benchreport.ingest.io import load_run

    pdf = _pdf_wanted(request, "reference_pdf_build")

    def make(out: Path) -> None:
        shutil.copytree(ROOT / "data" / "2024-b300", out / "data" / "2024-b300")
        _build(out, "2024-b300", pdf=pdf, out=lambda line: None)

    out = shared_folder(tmp_path_factory, "ref", make)
    return load_run("2024-b300", out / "data", out / "report")


@pytest.fixture(scope="session")
def reference_pdf_build(tmp_path_factory, reference_build):
    """reference_build with its PDFs (added by a render step if it had none)."""
    shared_folder(tmp_path_factory, "ref-pdf", lambda _: _add_pdfs(reference_build))
    return reference_build


DGX = "2026-08-dgx-spark-laguna"
AIPERF_SAMPLE = "paired/inferencemax-glm51-mi355x-sglang-aiperf"


@pytest.fixture(scope="session")
@builds_a_report
def dgx_build(tmp_path_factory):
    """The second reference run (data/2026-08-dgx-spark-laguna) built once per test session
    without PDFs, shared by the xdist workers (returns the Run)."""
    from benchreport.ingest.io import load_run

    def make(out: Path) -> None:
        shutil.copytree(ROOT / "data" / DGX, out / "data" / DGX)
        _build(out, DGX, pdf=False, out=lambda line: None)

    out = shared_folder(tmp_path_factory, "dgx", make)
    return load_run(DGX, out / "data", out / "report")


@pytest.fixture(scope="session")
@builds_a_report
def aiperf_sample_build(tmp_path_factory):
    """The real AIPerf sample of a SGLang server (real samples' paired/inferencemax-glm51-
    mi355x-sglang-aiperf) made a run 'aip' by ``benchreport init`` and built once per test
    session without PDFs, shared by the xdist workers (returns the Run); skipped without
    the samples."""
    from benchreport.cli import main
    from benchreport.ingest.io import load_run

    if not (REAL_SAMPLES / AIPERF_SAMPLE).is_dir():
        pytest.skip(f"no real samples at {REAL_SAMPLES / AIPERF_SAMPLE}")

    def make(out: Path) -> None:
        assert main(["init", "aip", str(REAL_SAMPLES / AIPERF_SAMPLE), "--data-root",
                     str(out / "data")]) == 0
        _build(out, "aip", pdf=False, out=lambda line: None)

    out = shared_folder(tmp_path_factory, "aiperf-sample", make)
    return load_run("aip", out / "data", out / "report")


@pytest.fixture(scope="session")
@builds_a_report
def planted_build(tmp_path_factory) -> Path:
    """The reference run with hostile inputs planted (tests/planted.py: the markup of
    test_hostile and the secrets of test_redaction), built once per test session with PDFs,
    with a copy exported under another id and the comparison of the two; shared by the
    xdist workers (returns the workspace folder: data/, report/, launch.sh)."""
    from .planted import build_planted

    return shared_folder(tmp_path_factory, "planted", lambda ws: build_planted(ws, ROOT))


# The model name of the command line's build (tests/test_long_strings.py, issue 33, finding
# 10: a 200,000-character name kept the build rendering past 600 s), and how long that build
# may take: a build of the mini run takes well under a minute; before the fix it took hours.
LONG_NAME = "Tiny-MoE-" + "x" * 200_000
CLI_BUILD_BOUND_S = 300


@pytest.fixture(scope="session")
@builds_a_report
def cli_build(tmp_path_factory) -> tuple[Path, int, str, float]:
    """The mini run built as a user builds it: ``python -m benchreport build mini`` in a
    child process (its own notebook and PDF workers, PDFs included), with a model name of
    200,000 characters in its run.yaml (``LONG_NAME``), once per test session and shared by
    the xdist workers. tests/test_long_strings.py reads the report and the time it took,
    tests/test_quiet_build.py what it printed. A child process, so that a build that never
    ends fails those tests (after ``CLI_BUILD_BOUND_S``) instead of hanging them: (the
    workspace, the exit code, stdout and stderr together, the seconds it took)."""
    def make(ws: Path) -> None:
        (ws / "data").mkdir()
        meta = copy_run(ws, "mini") / "run.yaml"
        text = meta.read_text()
        assert "model: {name: Tiny-MoE," in text
        meta.write_text(text.replace("model: {name: Tiny-MoE,", f"model: {{name: {LONG_NAME},",
                                     1))
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "benchreport", "build", "mini", "--data-root",
             str(ws / "data"), "--report-root", str(ws / "report"), "--project", str(ROOT)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ws,
            timeout=CLI_BUILD_BOUND_S)
        (ws / "build.json").write_text(json.dumps({
            "code": proc.returncode, "output": proc.stdout,
            "seconds": time.monotonic() - started}))

    ws = shared_folder(tmp_path_factory, "cli", make)
    done = json.loads((ws / "build.json").read_text())
    return ws, done["code"], done["output"], done["seconds"]
