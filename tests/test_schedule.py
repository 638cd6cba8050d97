"""The notebook schedule (pipeline/schedule.py): every notebook has a phase, each phase reads
only what the phases before it write, and what the notebooks call agrees with that."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from benchreport.core.errors import BuildError
from benchreport.pipeline.run import list_notebooks, plan_notebooks
from benchreport.pipeline.schedule import (
    CAVEATS,
    CHARTS,
    CLAIMS,
    FIGURES,
    INGESTED,
    INPUTS,
    NOTEBOOKS,
    PHASES,
    phase_of,
    schedule,
)

ROOT = Path(__file__).resolve().parent.parent
NONE: frozenset[str] = frozenset()

# What each function the notebooks import reads and writes (the resources of
# pipeline/schedule.py). A notebook that calls a function not listed here fails the test:
# say what it reads and writes first.
CALLS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "benchreport.ingest.io:load_run": ({INPUTS}, NONE),
    "benchreport.ingest.run:ingest_run": ({INPUTS}, NONE),
    "benchreport.ingest.run:check_windows": (NONE, NONE),
    "benchreport.ingest.run:save_ingest": (NONE, {INGESTED}),
    "benchreport.core.tables:load_ingested": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:load_run": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:Collector": (NONE, {FIGURES}),      # its save()
    "benchreport.analyses.notebook:save_figures": (NONE, {FIGURES}),
    "benchreport.analyses.notebook:run_yaml_source": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:workload_figures": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:end_to_end": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:request_timeline": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:save_timeline": (NONE, {CHARTS}),
    "benchreport.analyses.notebook:save_chunks": (NONE, {CHARTS}),
    "benchreport.analyses.notebook:server_view": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:save_server_series": (NONE, {CHARTS}),
    "benchreport.analyses.notebook:caveats": ({INGESTED}, NONE),
    "benchreport.analyses.notebook:save_caveats": (NONE, {CAVEATS}),
    "benchreport.analyses.notebook:claim_check": ({INGESTED, FIGURES, CAVEATS}, NONE),
    "benchreport.analyses.notebook:save_claims": (NONE, {CLAIMS}),
    "benchreport.analyses.campaign:definitions_table": ({INGESTED}, NONE),
    "benchreport.analyses.campaign:point_figures": ({INGESTED}, NONE),
    "benchreport.analyses.curves:campaign_figures": ({INGESTED}, NONE),
    "benchreport.analyses.curves:campaign_workloads": ({INGESTED}, NONE),
    "benchreport.analyses.curves:tables": (NONE, NONE),
    "benchreport.analyses.curves:validity_figures": ({INGESTED}, NONE),
    "benchreport.analyses.curves:validity_table": (NONE, NONE),
    "benchreport.analyses.pointlog:point_log_figures": ({INGESTED}, NONE),
    "benchreport.analyses.latency:latency_figures": ({INGESTED}, NONE),
    "benchreport.analyses.decode:decode_figures": ({INGESTED}, NONE),
    "benchreport.analyses.stepmodel:stepmodel_figures": ({INGESTED}, NONE),
    "benchreport.analyses.prefill:prefill_figures": ({INGESTED}, NONE),
    "benchreport.analyses.cache:cache_figures": ({INGESTED}, NONE),
    "benchreport.analyses.spec:spec_figures": ({INGESTED}, NONE),
    "benchreport.analyses.crossover:crossover_figures": ({INGESTED}, NONE),
}

# The run paths (core.paths) that hold each resource: a function in CALLS whose own source
# names one of them must declare that resource.
PATHS = {"figure_fragments": FIGURES, "caveats_json": CAVEATS, "claims_json": CLAIMS,
         "prefill_chunks": CHARTS, "timeline": CHARTS, "server_series": CHARTS,
         "ingest_json": INGESTED}


def _calls(source: Path) -> set[str]:
    """``module:name`` of everything the notebook imports from benchreport."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    return {f"{node.module}:{a.name}" for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchreport")
            for a in node.names}


def _earlier_writes(phase) -> set[str]:
    done = set()
    for p in PHASES:
        if p is phase:
            return done | {INPUTS}
        done |= p.writes
    raise AssertionError(phase)


def test_every_notebook_has_a_declared_phase_and_every_declared_one_exists():
    names = {p.stem for p in list_notebooks(ROOT / "notebooks")}
    assert names == set(NOTEBOOKS)
    assert set(NOTEBOOKS.values()) <= {p.name for p in PHASES}


def test_each_phase_reads_only_what_earlier_phases_write():
    for phase in PHASES:
        assert phase.reads <= _earlier_writes(phase), phase.name


def test_what_each_notebook_calls_reads_and_writes_only_what_its_phase_may():
    wrong = []
    for name, phase_name in NOTEBOOKS.items():
        phase = phase_of(name)
        assert phase.name == phase_name
        calls = _calls(ROOT / "notebooks" / "src" / f"{name}.py")
        undeclared = sorted(calls - set(CALLS))
        assert not undeclared, f"{name} calls {undeclared}: declare them in CALLS"
        reads = set().union(*(CALLS[c][0] for c in calls))
        writes = set().union(*(CALLS[c][1] for c in calls))
        if not reads <= phase.reads:
            wrong.append(f"{name} reads {sorted(reads - phase.reads)} ({phase.name} may not)")
        if not writes <= phase.writes:
            wrong.append(f"{name} writes {sorted(writes - phase.writes)} "
                         f"({phase.name} may not)")
    assert not wrong, wrong


def test_the_declared_reads_and_writes_cover_the_paths_each_function_names():
    """Each function's own source (not what it calls in turn) against CALLS."""
    wrong = []
    for qualified, (reads, writes) in CALLS.items():
        module, _, name = qualified.partition(":")
        source = inspect.getsource(getattr(importlib.import_module(module), name))
        named = {PATHS[m] for m in re.findall(r"\bpaths\.(\w+)", source) if m in PATHS}
        if not named <= reads | writes:
            wrong.append(f"{qualified} uses {sorted(named - reads - writes)}")
    assert not wrong, wrong


def test_a_notebook_without_a_phase_stops_the_build_in_one_line(tmp_path):
    for name in ("05-ingest", "90-extra", "80-claims"):
        (tmp_path / f"{name}.ipynb").write_text("{}")
    with pytest.raises(BuildError) as caught:
        schedule(list_notebooks(tmp_path))
    line = caught.value.one_line()
    assert "90-extra.ipynb has no declared phase" in line and "\n" not in line
    assert "schedule.py" in line


def test_notebooks_run_phase_by_phase_whatever_their_names():
    nbs = [Path(f"{n}.ipynb") for n in sorted(NOTEBOOKS)]
    groups = schedule(nbs[::-1])
    assert [p.name for p, _ in groups] == ["ingest", "analyses", "claims"]
    assert [nb.stem for nb in groups[0][1]] == ["05-ingest"]
    assert [nb.stem for nb in groups[-1][1]] == ["80-claims"]
    analyses = groups[1][1]
    assert analyses == sorted(analyses) and len(analyses) == 10
    first, second = plan_notebooks(analyses)
    assert sorted(first + second) == analyses and len(second) >= len(first)


def test_a_run_with_the_claims_notebook_only_schedules_one_phase():
    assert [(p.name, [nb.stem for nb in group]) for p, group in
            schedule([Path("80-claims.ipynb")])] == [("claims", ["80-claims"])]
