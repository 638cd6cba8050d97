"""Issue 30: a store for many machines. Its folder is configurable (``--store``,
``$BENCHREPORT_STORE``), and exports from separate processes at the same time, of different
runs and of one run, leave it consistent."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import duckdb
import pytest

from benchreport.cli import main
from benchreport.core.store import (
    STORE_ENV,
    TABLES,
    resolve_store,
    run_query,
    store_path,
    stored_runs,
)
from benchreport.pipeline.store import export_run

from .test_store_atomic import _as_build, _leftovers, _rows

SAME = "same"


def test_the_store_folder_is_the_flag_then_the_environment_then_the_default(tmp_path):
    root = tmp_path / "report"
    assert resolve_store(root, None, {}) == store_path(root) == root / "_store"
    assert resolve_store(root, None, {STORE_ENV: "/shared/store"}) == Path("/shared/store")
    assert resolve_store(root, "/mine", {STORE_ENV: "/shared/store"}) == Path("/mine")
    # an empty value is no value: `make query STORE=` keeps the default
    assert resolve_store(root, "", {STORE_ENV: " "}) == root / "_store"
    assert resolve_store(root, None, {STORE_ENV: "~/s"}) == Path.home() / "s"


@pytest.fixture(scope="module")
def builds(reference_build, tmp_path_factory):
    """Three runs and three builds of one run (each build's every table differs), with
    each build's rows as a store of it alone reads them."""
    base = tmp_path_factory.mktemp("shared")
    runs = [_as_build(reference_build, base / f"b{i}", f"run-{i}") for i in range(3)]
    same = [_as_build(reference_build, base / f"s{i}", SAME, mark=f"m{i}-") for i in range(3)]
    alone = {}
    for i, run in enumerate(runs + same):
        store = base / f"alone{i}" / "_store"
        export_run(run, store)
        alone[i] = _rows(store, run.id)
    return runs, same, alone


def _export(run, store: Path, barrier) -> None:
    """One process's export, started with the others' (a spawned process: no state shared
    with pytest's)."""
    barrier.wait(timeout=60)
    export_run(run, store)


def _in_processes(calls: list[tuple]) -> None:
    """Each call ``(function, *args)`` in its own process, all released at once; every
    process must exit 0."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(calls))
    procs = [ctx.Process(target=f, args=(*args, barrier)) for f, *args in calls]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
    assert [p.exitcode for p in procs] == [0] * len(procs)


def test_exports_from_separate_processes_at_once_leave_the_store_consistent(builds, tmp_path):
    runs, same, alone = builds
    store = tmp_path / "shared" / "_store"
    # three runs exported at once, and three builds of one run at once: six processes
    _in_processes([(_export, run, store) for run in runs + same])

    assert stored_runs(store) == sorted(r.id for r in runs) + [SAME]
    for i, run in enumerate(runs):
        assert _rows(store, run.id) == alone[i], run.id
    # the run exported three times holds one build, whole, in every table
    got = _rows(store, SAME)
    assert got in [alone[3 + i] for i in range(3)]
    assert _leftovers(store) == [] and not any((store / ".incoming").iterdir())
    # every table counts each run's rows once, through benchreport and through plain DuckDB
    for table in TABLES:
        per_run = {r: alone[i][table][0] for i, r in enumerate(
            [r.id for r in runs] + [SAME])}
        _, rows = run_query(store, f"select run_id, count(*) from {table} group by 1")
        assert {r: n for r, n in rows if n} == {r: n for r, n in per_run.items() if n}, table
        plain = duckdb.sql(f"select count(*) from read_parquet('{store}/{table}/*/*.parquet', "
                           "hive_partitioning = true)").fetchall()[0][0]
        assert plain == sum(per_run.values()), table


def test_every_command_takes_the_store_folder(builds, tmp_path, capsys, monkeypatch):
    runs, *_ = builds
    shared = tmp_path / "elsewhere"
    export_run(runs[0], shared)
    root = tmp_path / "report"              # has no _store: only --store or the variable
    sql = "select run_id, count(*) as n from points group by 1"
    assert main(["query", sql, "--format", "csv", "--report-root", str(root),
                 "--store", str(shared)]) == 0
    assert capsys.readouterr().out == "run_id,n\nrun-0,4\n"
    monkeypatch.setenv(STORE_ENV, str(shared))
    assert main(["runs", "--format", "csv", "--report-root", str(root)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("run-0,")
    # the flag comes first: here, a folder that holds no store
    assert main(["query", sql, "--report-root", str(root), "--store", str(tmp_path)]) == 1
    assert "the store is empty" in capsys.readouterr().err
    assert main(["store", "compact", "--report-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith(f"{shared.as_posix()}: 1 runs in the compacted")
    monkeypatch.delenv(STORE_ENV)
    assert main(["store", "compact", "--report-root", str(root)]) == 1
    assert "no results store here" in capsys.readouterr().err


def test_a_build_exports_into_the_store_it_is_given(reference_build, tmp_path, capsys):
    """A rebuild of an unchanged run skips every step but the export, which goes to the
    store named by ``--store`` (its default store is left as it was)."""
    run = reference_build
    default = store_path(run.paths.report.parent)
    before = sorted(p.name for p in (default / "runs").iterdir())
    shared = tmp_path / "shared-store"
    assert main(["build", run.id, "--data-root", str(run.paths.data.parent), "--report-root",
                 str(run.paths.report.parent), "--store", str(shared)]) == 0
    assert stored_runs(shared) == [run.id]
    assert sorted(p.name for p in (default / "runs").iterdir()) == before


def test_compare_hands_the_store_to_its_builds_and_notebook(monkeypatch, tmp_path):
    import benchreport.pipeline.compare as compare
    import benchreport.pipeline.run as pipeline

    built, ran = [], []
    monkeypatch.setattr(pipeline, "build", lambda run_id, **kw: built.append(kw["store_dir"]))
    monkeypatch.setattr(compare, "_execute", lambda *a: ran.append(a[4][0]) or _stop())
    with pytest.raises(_Stop):
        compare.build_compare(["a", "b"], report_root=tmp_path / "report",
                              store_dir=tmp_path / "s", out=lambda line: None)
    assert built == [tmp_path / "s"] * 2 and ran == [(tmp_path / "s").resolve()]


class _Stop(Exception):
    pass


def _stop():
    raise _Stop
