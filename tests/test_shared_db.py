"""The process's DuckDB databases (``core.tables.connect``) and the cycle collector's pauses
(``core.collector``): what the speed of the build rests on must not change what it reads."""

from __future__ import annotations

import gc
import os

import duckdb
import pytest

from benchreport.core import collector
from benchreport.core.tables import connect, read_rows, shared_database, write_rows


def test_cursors_share_a_database_but_not_their_frames_or_temporary_tables():
    a, b = connect(), connect()
    assert shared_database() is shared_database()
    a.execute("CREATE TEMP TABLE points (v INTEGER)")
    b.execute("CREATE TEMP TABLE points (v INTEGER)")       # no clash: each cursor its own
    a.execute("INSERT INTO points VALUES (1), (2)")
    assert a.execute("SELECT count(*) FROM points").fetchone() == (2,)
    assert b.execute("SELECT count(*) FROM points").fetchone() == (0,)
    assert a.execute("SELECT current_setting('threads')").fetchone() == (1,)


def test_settings_make_a_database_of_their_own():
    plain, store = connect(), connect("SET threads=2")
    assert plain.execute("SELECT current_setting('threads')").fetchone() == (1,)
    assert store.execute("SELECT current_setting('threads')").fetchone() == (2,)
    assert shared_database(("SET threads=2",)) is not shared_database()


def test_a_forked_child_makes_its_own_database(tmp_path):
    connect().execute("SELECT 1")                 # the parent's exists before the fork
    parent = id(shared_database())
    out = tmp_path / "child.txt"
    pid = os.fork()
    if pid == 0:                                  # the child: never returns
        try:
            path = tmp_path / "t.parquet"
            write_rows(path, [{"a": 1}], ["a"])
            same = id(shared_database()) == parent
            out.write_text(f"{read_rows(path)} {same}")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert out.read_text() == "[{'a': 1}] False"


def test_a_users_query_locks_only_its_own_database(tmp_path):
    """``run_query`` locks the configuration of the database it reads through; that is a
    database of its own (``own=True``), never the one every store reader shares."""
    from benchreport.core.store import connect as store_connect

    own = store_connect(tmp_path, check=False, own=True)
    own.execute("SET enable_external_access = false")
    own.execute("SET lock_configuration = true")
    with pytest.raises(duckdb.Error, match="configuration"):
        own.execute("SET threads=1")
    shared = store_connect(tmp_path, check=False)
    shared.execute("SET threads=2")              # still takes settings: nothing was locked
    assert shared.execute("SELECT current_setting('enable_external_access')").fetchone() \
        == (True,)


def test_paused_turns_the_collector_off_for_the_block_only():
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()       # a caller's own pause is left as it was
    finally:
        gc.enable()


def test_paused_with_collect_frees_the_cycles_the_block_left():
    class Node:
        pass

    with collector.paused(collect=True):
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
        left = sum(isinstance(o, Node) for o in gc.get_objects())
        assert left == 2                 # a cycle, and no collection while paused
    assert not any(isinstance(o, Node) for o in gc.get_objects())


def test_freeze_sets_what_exists_aside_after_a_collection():
    before = gc.get_freeze_count()
    try:
        collector.freeze()
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
