"""Shared fixtures: the project root and copies of the hand-made runs in a temp folder."""

from __future__ import annotations

import os
import shutil
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


def pytest_collection_modifyitems(config, items):
    """The end-to-end tests (they build whole reports: notebook kernels, charts, fonts,
    maybe PDFs) and the few others that take seconds each (a whole run read or generated)
    are marked ``slow``; `make test-fast` runs the rest: ``pytest -m "not slow"``.
    Run in parallel (pytest-xdist, ``-n 2``, as `make test` does), each worker builds the
    session fixtures its tests need."""
    for item in items:
        if _uses_a_build(item):
            item.add_marker(pytest.mark.slow)


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
    """The hand-made 'mini' run built once per test session, without PDFs unless a test of
    the session asks for mini_pdf_build: (the Run, the step lines)."""
    workspace = tmp_path_factory.mktemp("mini")
    (workspace / "data").mkdir()
    (workspace / "report").mkdir()
    copy_run(workspace, "mini")
    lines: list[str] = []
    run = _build(workspace, "mini", pdf=_pdf_wanted(request, "mini_pdf_build"),
                 out=lines.append)
    return run, lines


@pytest.fixture(scope="session")
def mini_pdf_build(mini_build):
    """mini_build with its PDFs (added by a render step if it had none): (the Run, the
    first build's step lines)."""
    run, lines = mini_build
    _add_pdfs(run)
    return run, lines


@pytest.fixture(scope="session")
@builds_a_report
def reference_build(tmp_path_factory, request):
    """The reference run built once per test session, into a temp folder, without PDFs
    unless a test of the session asks for reference_pdf_build (returns the Run)."""
    out = tmp_path_factory.mktemp("ref")
    shutil.copytree(ROOT / "data" / "2024-b300", out / "data" / "2024-b300")
    return _build(out, "2024-b300", pdf=_pdf_wanted(request, "reference_pdf_build"),
                  out=lambda line: None)


@pytest.fixture(scope="session")
def reference_pdf_build(reference_build):
    """reference_build with its PDFs (added by a render step if it had none)."""
    _add_pdfs(reference_build)
    return reference_build
