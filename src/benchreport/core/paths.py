"""Every path of a run, derived from the run id in one place."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import MissingInputError, ReportError

__all__ = ["COMPARE_DIR", "ComparePaths", "LABELS", "RUN_ID_PATTERN", "ReportFolder", "RunPaths",
           "check_run_id", "compare_paths", "refuse_links_outside", "run_paths", "shown"]

RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


# The label catalogues, beside the package in the project tree (src/benchreport/core/ ->
# templates/).
LABELS = Path(__file__).resolve().parents[3] / "templates" / "labels"


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is a plain folder name, else raise ReportError."""
    if not run_id or not RUN_ID_PATTERN.fullmatch(run_id) or ".." in run_id:
        raise ReportError(
            f"RUN={run_id!r} is not a run id (letters, digits, '.', '_', '-'; no '/' or '..')",
            hint="usage: make report RUN=<run-id>, e.g. make report RUN=2024-b300",
        )
    return run_id


class ReportFolder:
    """What every report folder holds (a run's, or a comparison's): derived figures, the
    executed notebooks, and the article per language. Subclasses have ``report``."""

    report: Path

    @property
    def derived(self) -> Path:
        return self.report / "derived"

    @property
    def figure_fragments(self) -> Path:
        return self.derived / "figures"

    @property
    def figures_json(self) -> Path:
        return self.derived / "figures.json"

    @property
    def notebooks(self) -> Path:
        return self.report / "notebooks"

    def html(self, lang: str) -> Path:
        return self.report / f"report.{lang}.html"

    def pdf(self, lang: str) -> Path:
        return self.report / f"report.{lang}.pdf"


@dataclass(frozen=True)
class RunPaths(ReportFolder):
    """Where a run's inputs are read from and its outputs written to."""

    run_id: str
    data: Path      # data/<RUN>/        inputs, committed, never edited
    report: Path    # report/<RUN>/      everything derived

    @property
    def run_yaml(self) -> Path:
        return self.data / "run.yaml"

    @property
    def raw(self) -> Path:
        return self.data / "raw"

    @property
    def tables(self) -> Path:
        """The derived tables ingest writes (see ``tables``)."""
        return self.derived / "tables"

    @property
    def prefill_chunks(self) -> Path:
        """Every prefill batch of every request, as the prefill notebook accounted them."""
        return self.tables / "prefill_chunks.parquet"

    @property
    def timeline(self) -> Path:
        """One row per request: where its time went (analyses.timeline)."""
        return self.tables / "timeline.parquet"

    @property
    def server_series(self) -> Path:
        """KV usage and queue at every /metrics scrape inside a benchmark window."""
        return self.tables / "server_series.parquet"

    @property
    def ingest_json(self) -> Path:
        return self.derived / "ingest.json"

    @property
    def windows_json(self) -> Path:
        return self.derived / "windows.json"

    @property
    def caveats_json(self) -> Path:
        return self.derived / "caveats.json"

    @property
    def claims_json(self) -> Path:
        return self.derived / "claims.json"

    @property
    def inputs_copy(self) -> Path:
        """Byte copies of the run's description files (run.yaml, claims.yaml, the
        scenario), written by ingest so that later steps read nothing under data/."""
        return self.derived / "inputs"

    def described(self, name: str) -> Path:
        """Where a later step reads the description file ``name``: ingest's copy, or the
        file under data/ where no ingest was saved (the package used as a library)."""
        copy = self.inputs_copy / name
        return copy if copy.is_file() else self.data / name

    @property
    def root(self) -> Path:
        """The folder that repo-relative input paths are relative to (parent of data/)."""
        return self.data.parent.parent

    def rel(self, path: Path) -> str:
        """``path`` relative to the project root, with forward slashes (for provenance)."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()


def run_paths(run_id: str, data_root: Path | str = "data",
              report_root: Path | str = "report") -> RunPaths:
    """Paths of run ``run_id``; raise MissingInputError if its data folder is missing."""
    check_run_id(run_id)
    data = Path(data_root) / run_id
    if not (data / "run.yaml").is_file():
        raise MissingInputError(
            f"{data.as_posix()}/run.yaml not found",
            hint=f"put the run's inputs in {data.as_posix()}/ (see README), "
                 "or try: make report RUN=2024-b300",
        )
    refuse_links_outside(data, Path(data_root).resolve().parent)
    report = Path(report_root) / run_id
    if report.is_symlink():
        raise ReportError(
            f"a symbolic link (to {os.readlink(report)}); refused: a build replaces this "
            "folder by swapping in a new one beside it, which a link would move outside "
            f"{Path(report_root).as_posix()}/",
            path=f"{report.as_posix()}/",
            hint="remove the link, or build elsewhere with --report-root")
    return RunPaths(run_id=run_id, data=data.resolve(), report=report.resolve())


def shown(path: Path, base: Path) -> str:
    """``path`` as a user reads it: relative to ``base`` when inside it, else as it is."""
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def refuse_links_outside(folder: Path, project: Path) -> None:
    """Raise ReportError for a symbolic link in ``folder`` (or ``folder`` itself) that
    points outside ``project``: a run's inputs are files of the repository, checksummed
    and committed, never something elsewhere on the machine."""
    import os

    def check(path: Path) -> None:
        if path.is_symlink():
            target = path.resolve()
            if not target.is_relative_to(project):
                raise ReportError(
                    f"a symbolic link to {target.as_posix()}, outside the project; refused",
                    path=shown(path.absolute(), project),
                    hint="copy the file into the run's folder instead")

    check(folder)
    for top, dirs, files in os.walk(folder):
        for name in sorted(dirs + files):
            check(Path(top) / name)


COMPARE_DIR = "_compare"


@dataclass(frozen=True)
class ComparePaths(ReportFolder):
    """Where a comparison across runs is written: report/_compare/<name>/."""

    name: str
    report: Path     # report/_compare/<name>/
    project: Path    # the folder holding data/ and report/ (paths in figures are relative to it)

    @property
    def compare_json(self) -> Path:
        """The comparison's tables (what changed, matched points, trends) for the article."""
        return self.derived / "compare.json"

    def rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.project.resolve()).as_posix()
        except ValueError:
            return path.as_posix()


def compare_paths(report_root: Path | str, name: str) -> ComparePaths:
    """Paths of the comparison ``name`` (a plain folder name, as a run id)."""
    check_run_id(name)
    root = Path(report_root).resolve()
    return ComparePaths(name=name, report=root / COMPARE_DIR / name, project=root.parent)
