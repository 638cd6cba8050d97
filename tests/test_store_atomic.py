"""Issue 33, finding 5: the results store export is atomic per run.

A ``kill -9`` at any moment of an export leaves every table of the run at one build, the
previous or the new one, never a mix; a first export killed leaves the run absent from every
table; the next build removes what a killed export left behind.

A kill leaves the files as they are at that instant, so each test runs an export once and
copies the store right before every call that changes the file system (rename, replace,
symlink, link, mkdir, unlink, rmdir): each copy is what a kill there would leave. The copies
are read through the store's own reader (``core.store.connect``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import duckdb
import pytest

from benchreport.core.store import TABLES, connect, partition, store_path, stored_runs
from benchreport.pipeline.store import export_run, remove_leftovers

FS_CALLS = ("rename", "replace", "symlink", "link", "mkdir", "unlink", "rmdir")
RUN = "ref"


def _as_build(run, root: Path, run_id: str, mark: str | None = None):
    """A copy of a built run's derived files under ``root/<run_id>``; with ``mark``, another
    build of it: every input checksum (points, settings, inputs, the events' records, the
    figures' sources) prefixed with ``mark`` and every request's e2el 10% higher."""
    paths = dataclasses.replace(run.paths, run_id=run_id, report=root / run_id)
    shutil.copytree(run.paths.derived, paths.derived)
    if mark:
        con = duckdb.connect()
        for table in paths.tables.glob("*.parquet"):
            cols = {c for (c,) in con.execute(
                f"SELECT column_name FROM (DESCRIBE SELECT * FROM '{table}')").fetchall()}
            changes = [f"'{mark}' || sha256 AS sha256"] if "sha256" in cols else []
            changes += ["e2el_ms * 1.1 AS e2el_ms"] if "e2el_ms" in cols else []
            if changes:
                tmp = table.with_suffix(".tmp")
                con.execute(f"COPY (SELECT * REPLACE ({', '.join(changes)}) FROM '{table}') "
                            f"TO '{tmp}' (FORMAT parquet)")
                tmp.replace(table)
        registry = json.loads(paths.figures_json.read_text())
        for figure in registry["figures"]:
            for source in figure.get("sources", []):
                source["sha256"] = mark + source["sha256"]
        paths.figures_json.write_text(json.dumps(registry))
    return dataclasses.replace(run, paths=paths)


def _state(store: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """Every run's rows, table by table, as the store's reader gives them: how many, and the
    sum of the rows' hashes (DuckDB's ``hash`` of the whole row), which tells two builds'
    rows apart as a list of every row would, without turning thousands of rows into Python
    objects for each of the copies a test reads. A table without a run's rows is (0, 0)."""
    con = connect(store)
    views = {name for (name,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    state: dict[str, dict[str, tuple[int, int]]] = {}
    for table in sorted(views):
        for run_id, count, digest in con.execute(
                f"SELECT run_id, count(*), sum(hash(row)::HUGEINT) FROM {table} AS row "
                "GROUP BY run_id").fetchall():
            state.setdefault(run_id, dict.fromkeys(TABLES, NO_ROWS))[table] = (count, digest)
    return state


NO_ROWS = (0, 0)


def _rows(store: Path, run_id: str) -> dict[str, tuple[int, int]]:
    return _state(store).get(run_id, dict.fromkeys(TABLES, NO_ROWS))


def _leftovers(store: Path) -> list[str]:
    """What a finished export keeps beside the tables is each run's current generation (and
    its lock); anything else under the store's hidden folders is a leftover."""
    found = [p.relative_to(store).as_posix() for p in (store / ".incoming").glob("*")]
    for run in (store / ".generations").glob("*"):
        keep = {"current", "lock", os.readlink(run / "current")
                if (run / "current").is_symlink() else None}
        found += [p.relative_to(store).as_posix() for p in run.iterdir() if p.name not in keep]
    return found


def crash_copies(export, store: Path, copies: Path) -> list[Path]:
    """Run ``export`` once; right before each file-system call copy ``store`` as a kill -9
    there would leave it. The list ends with the state after the export."""
    originals = {name: getattr(os, name) for name in FS_CALLS}
    taken: list[Path] = []
    copying = False

    def take() -> None:
        nonlocal copying
        copying = True
        try:
            dst = copies / f"{len(taken):03d}" / "_store"
            shutil.copytree(store, dst, symlinks=True) if store.exists() else dst.mkdir(
                parents=True)
            taken.append(dst)
        finally:
            copying = False

    def watched(name):
        def call(*args, **kwargs):
            if not copying:
                take()
            return originals[name](*args, **kwargs)
        return call

    with pytest.MonkeyPatch.context() as mp:
        for name in FS_CALLS:
            mp.setattr(os, name, watched(name))
        export()
    take()
    return taken


@pytest.fixture(scope="module")
def builds(reference_build, tmp_path_factory):
    """Two builds of run ``ref`` (old, new), another run, and each build's rows alone."""
    base = tmp_path_factory.mktemp("atomic")
    old = _as_build(reference_build, base / "old", RUN)
    new = _as_build(reference_build, base / "new", RUN, mark="new-")
    other = _as_build(reference_build, base / "other", "other")
    expected = {}
    for name, run in (("old", old), ("new", new)):
        store = base / f"alone-{name}" / "_store"
        export_run(run, store)
        expected[name] = _rows(store, RUN)
    # every table tells the two builds apart, so a mix cannot pass for either
    assert all(expected["old"][t] != expected["new"][t] for t in TABLES), \
        [t for t in TABLES if expected["old"][t] == expected["new"][t]]
    return old, new, other, expected


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _legacy(store: Path) -> None:
    """Turn ``store`` into the layout benchreport wrote before generations: real files in
    each partition, and the folder a killed export of that version left behind."""
    for link in store.glob("*/run_id=*/data.parquet"):
        data = link.read_bytes()
        link.unlink()
        link.write_bytes(data)
    shutil.rmtree(store / ".generations", ignore_errors=True)
    left = store / ".incoming" / f"{RUN}.{_dead_pid()}"
    left.mkdir(parents=True)
    (left / "points.parquet").write_bytes(b"half")


@pytest.mark.parametrize("before", ["first", "rebuild", "legacy"])
def test_a_kill_at_any_step_of_the_export_leaves_one_build(builds, tmp_path, before):
    old, new, other, expected = builds
    store = tmp_path / "report" / "_store"
    export_run(other, store)
    others = _rows(store, "other")
    if before != "first":
        export_run(old, store)
    if before == "legacy":
        _legacy(store)
    copies = crash_copies(lambda: export_run(new, store), store, tmp_path / "copies")
    assert len(copies) > 10
    allowed = {"first": [dict.fromkeys(TABLES, NO_ROWS)], "rebuild": [expected["old"]],
               "legacy": [expected["old"]]}[before] + [expected["new"]]
    seen = []
    for copy in copies:
        state = _state(copy)
        rows = state.get(RUN, dict.fromkeys(TABLES, NO_ROWS))
        assert rows in allowed, (copy, {t: count for t, (count, _) in rows.items()})
        seen.append(allowed.index(rows))
        # no table has rows of a run that ``runs`` does not list
        listed = {r for r, tables in state.items() if tables["runs"] != NO_ROWS}
        assert set(state) == listed == set(stored_runs(copy)), copy
        assert state["other"] == others, copy
    # the copies span the export: the previous build up to one rename, the new one after
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == 1, seen
    assert _leftovers(copies[-1]) == []


@pytest.mark.parametrize("before", ["first", "rebuild"])
def test_the_next_build_removes_what_a_killed_export_left(builds, tmp_path, before):
    old, new, other, expected = builds
    store = tmp_path / "report" / "_store"
    if before != "first":
        export_run(old, store)
    copies = crash_copies(lambda: export_run(new, store), store, tmp_path / "copies")
    left = [c for c in copies if _leftovers(c)]
    assert left, "no kill point leaves anything behind"
    for copy in copies:
        seen = _rows(copy, RUN)
        # a build whose inputs did not change only tidies: what readers see stays
        remove_leftovers(copy, RUN)
        assert _leftovers(copy) == [] and _rows(copy, RUN) == seen, copy
    for copy in left:
        export_run(new, copy)
        assert _rows(copy, RUN) == expected["new"], copy
        assert _leftovers(copy) == [], copy
        assert all(os.path.exists(p) for p in copy.glob("*/run_id=*/data.parquet")), copy


def test_an_export_of_another_live_process_is_left_alone(builds, tmp_path):
    old, *_ = builds
    store = tmp_path / "_store"
    export_run(old, store)
    with subprocess.Popen(["sleep", "60"]) as live:
        try:
            busy = store / ".incoming" / f"other.{live.pid}"
            busy.mkdir()
            dead = store / ".incoming" / f"other.{_dead_pid()}"
            dead.mkdir()
            # the same, named as exports name them now: run@host.pid
            host = socket.gethostname()
            busy_now = store / ".incoming" / f"other@{host}.{live.pid}"
            dead_now = store / ".incoming" / f"other@{host}.{_dead_pid()}"
            # another machine's export on a shared store: its process cannot be seen here
            elsewhere = store / ".incoming" / f"other@not-{host}.{_dead_pid()}"
            for folder in (busy_now, dead_now, elsewhere):
                folder.mkdir()
            remove_leftovers(store, RUN)
            assert busy.is_dir() and not dead.exists()
            assert busy_now.is_dir() and elsewhere.is_dir() and not dead_now.exists()
        finally:
            live.kill()


def test_a_store_copied_with_its_links_followed_still_reads_and_updates(builds, tmp_path):
    """``cp -rL`` or ``shutil.copytree`` without ``symlinks``: every link becomes a file."""
    old, new, _, expected = builds
    store = tmp_path / "a" / "_store"
    export_run(old, store)
    copy = tmp_path / "b" / "_store"
    shutil.copytree(store, copy)
    assert _rows(copy, RUN) == expected["old"]
    export_run(new, copy)
    assert _rows(copy, RUN) == expected["new"]
    assert _leftovers(copy) == []
    assert partition(copy, "points", RUN).joinpath("data.parquet").is_symlink()
    assert store_path(copy.parent) == copy
