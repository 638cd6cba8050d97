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


@pytest.fixture(scope="session")
def mini_build(tmp_path_factory):
    """The hand-made 'mini' run built once per test session: (the Run, the step lines)."""
    from benchreport.pipeline.run import build

    workspace = tmp_path_factory.mktemp("mini")
    (workspace / "data").mkdir()
    (workspace / "report").mkdir()
    copy_run(workspace, "mini")
    lines: list[str] = []
    run = build("mini", data_root=workspace / "data", report_root=workspace / "report",
                project=ROOT, out=lines.append)
    return run, lines


@pytest.fixture(scope="session")
def reference_build(tmp_path_factory):
    """The reference run built once per test session, into a temp folder (returns the Run)."""
    from benchreport.pipeline.run import build

    out = tmp_path_factory.mktemp("ref")
    shutil.copytree(ROOT / "data" / "2024-b300", out / "data" / "2024-b300")
    return build("2024-b300", data_root=out / "data", report_root=out / "report",
                 project=ROOT, out=lambda line: None)
