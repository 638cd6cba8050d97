"""Issue 30: ``benchreport store compact`` merges the runs' partitions into one file per
table (``pipeline.compact``). Readers see the same rows before and after; a later export of a
compacted run supersedes its compacted rows; exports during a compaction lose and double
nothing; a kill at any step of a compaction leaves a readable store."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

from benchreport.analyses.compare import compare_runs
from benchreport.cli import main
from benchreport.core.store import TABLES, compacted_file, listing, run_query, stored_runs
from benchreport.pipeline.compact import compact
from benchreport.pipeline.store import export_needed, export_run

from .test_store_atomic import _as_build, _leftovers, _rows, _state, crash_copies
from .test_store_shared import _in_processes

RUNS = ("run-a", "run-b", "run-c")


@pytest.fixture(scope="module")
def builds(reference_build, tmp_path_factory):
    """Three runs, another build of run-a and of run-b, and a store holding the three."""
    base = tmp_path_factory.mktemp("compact")
    runs = {r: _as_build(reference_build, base / r, r) for r in RUNS}
    again = {r: _as_build(reference_build, base / f"{r}-again", r, mark="again-")
             for r in ("run-a", "run-b")}
    store = base / "store"
    for run in runs.values():
        export_run(run, store)
    return runs, again, store


def _copy(store: Path, to: Path) -> Path:
    shutil.copytree(store, to, symlinks=True)
    return to


def _plain_counts(store: Path) -> dict[str, int]:
    """Rows per table as an engine that knows nothing of benchreport reads the two folders,
    with no rule for runs in both: their plain union."""
    counts = {}
    for table in TABLES:
        n = 0
        if any((store / table).glob("run_id=*/data.parquet")):
            n += duckdb.sql(f"select count(*) from read_parquet('{store}/{table}/*/*.parquet', "
                            "hive_partitioning = true)").fetchall()[0][0]
        if compacted_file(store, table).is_file():
            n += duckdb.sql(f"select count(*) from "
                            f"'{compacted_file(store, table)}'").fetchall()[0][0]
        counts[table] = n
    return counts


def _counts(state: dict) -> dict[str, int]:
    return {t: sum(tables[t][0] for tables in state.values()) for t in TABLES}


def test_after_compaction_query_runs_and_compare_give_the_same_rows(builds, tmp_path, capsys):
    _, _, original = builds
    store = _copy(original, tmp_path / "_store")
    before = _state(store)
    comp_before = compare_runs(store, ["run-a", "run-b"])
    assert main(["runs", "--format", "csv", "--store", str(store)]) == 0
    runs_before = capsys.readouterr().out

    done = compact(store)
    assert (done.runs, done.moved, done.kept) == (3, 3, 0)
    # one file per table, no per-run partition left
    assert not list(store.glob("*/run_id=*")) and not any((store / ".generations").iterdir())
    assert _state(store) == before
    assert stored_runs(store) == list(RUNS)
    comp_after = compare_runs(store, ["run-a", "run-b"])
    assert comp_after.matched == comp_before.matched and comp_after.changes == \
        comp_before.changes and len(comp_after.matched) == 4 * 8
    assert main(["runs", "--format", "csv", "--store", str(store)]) == 0
    assert capsys.readouterr().out == runs_before
    # a plain reader of compacted/<table>/ gets the same rows, run_id a column of each
    assert _plain_counts(store) == _counts(before)
    _, rows = run_query(store, "select run_id, count(*) from points group by 1 order by 1")
    assert rows == [(r, 4) for r in RUNS]
    # compacting again changes nothing
    assert compact(store).moved == 0 and _state(store) == before


def test_a_later_export_of_a_compacted_run_supersedes_its_compacted_rows(builds, tmp_path):
    runs, again, original = builds
    store = _copy(original, tmp_path / "_store")
    alone = tmp_path / "alone"
    export_run(again["run-a"], alone)
    new_a = _rows(alone, "run-a")
    compact(store)
    # an unchanged build of a compacted run needs no export; a newer one does
    assert not export_needed(runs["run-b"], store)
    assert export_needed(again["run-a"], tmp_path / "empty")
    later = compacted_file(store, "runs").stat().st_mtime + 10
    os.utime(again["run-a"].paths.figures_json, (later, later))
    assert export_needed(again["run-a"], store)
    export_run(again["run-a"], store)
    assert listing(store).own == {"run-a"}
    state = _state(store)
    assert state["run-a"] == new_a and sorted(state) == list(RUNS)
    _, rows = run_query(store, "select run_id, count(*) from points group by 1 order by 1")
    assert rows == [(r, 4) for r in RUNS]                 # no run twice
    # the README's query for a reader without benchreport: the union, with the rule applied
    plain = duckdb.sql(
        f"select run_id, count(*) from (select * from read_parquet('{store}/points/*/*.parquet', "
        "hive_partitioning = true, hive_types = {'run_id': VARCHAR}) union all by name "
        f"select * from read_parquet('{store}/compacted/points/*.parquet') where run_id not in "
        f"(select run_id from read_parquet('{store}/runs/*/*.parquet', hive_partitioning = "
        "true))) group by 1 order by 1").fetchall()
    assert plain == rows
    # the next compaction takes the new rows in and drops the old: plain readers agree
    assert compact(store).moved == 1
    assert _state(store) == state and _plain_counts(store) == _counts(state)
    assert _leftovers(store) == []


def _compact_in_process(store: Path, barrier) -> None:
    barrier.wait(timeout=60)
    compact(store)


def _export_in_process(run, store: Path, barrier) -> None:
    barrier.wait(timeout=60)
    export_run(run, store)


def test_exports_during_a_compaction_lose_and_double_nothing(builds, tmp_path):
    runs, again, original = builds
    store = _copy(original, tmp_path / "_store")
    compact(store)                  # run-a and run-b compacted, then rebuilt while compacting
    fresh = _as_build(runs["run-c"], tmp_path / "d", "run-d")
    export_run(runs["run-c"], store)
    expected = {}
    for run in (again["run-a"], again["run-b"], runs["run-c"], fresh):
        alone = tmp_path / f"alone-{run.id}"
        export_run(run, alone)
        expected[run.id] = _rows(alone, run.id)
    _in_processes([(_compact_in_process, store)] + [
        (_export_in_process, run, store) for run in (again["run-a"], again["run-b"], fresh)])
    state = _state(store)
    assert state == expected
    _, rows = run_query(store, "select run_id, count(*) from runs group by 1 order by 1")
    assert rows == [(r, 1) for r in sorted(expected)]
    # what was exported meanwhile kept its own partitions; the next compaction takes it in
    compact(store)
    assert _state(store) == expected and _plain_counts(store) == _counts(expected)
    assert listing(store).own == frozenset() and _leftovers(store) == []


def test_a_kill_at_any_step_of_a_compaction_leaves_a_readable_store(builds, tmp_path):
    runs, again, original = builds
    store = _copy(original, tmp_path / "s" / "_store")
    compact(store)
    export_run(again["run-a"], store)       # one run superseded, one exported since
    export_run(_as_build(runs["run-c"], tmp_path / "d", "run-d"), store)
    before = _state(store)
    copies = crash_copies(lambda: compact(store), store, tmp_path / "copies")
    assert len(copies) > 20
    for copy in copies:
        assert _state(copy) == before, copy
    # the next compaction leaves each copy whole and tidy, for plain readers too
    for copy in copies[:: max(1, len(copies) // 6)] + copies[-1:]:
        compact(copy)
        assert _state(copy) == before, copy
        assert _plain_counts(copy) == _counts(before), copy
        assert _leftovers(copy) == [] and not any((copy / ".generations").iterdir()), copy
        assert [p.name for p in (copy / ".compacted").iterdir()] == \
            [os.path.basename(os.readlink(copy / "compacted"))], copy
