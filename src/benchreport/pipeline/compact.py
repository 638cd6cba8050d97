"""Compaction of the results store: many runs' small partitions merged into one file per table.

Why. Every export adds one small Parquet file per table, ``<table>/run_id=<RUN>/data.parquet``.
A query across every run opens every file, so at 10,000 runs it opens 10,000 files per table
and takes seconds. ``benchreport store compact`` merges them.

Layout. The compacted set is one more plain Parquet table per table, not partitioned, with
``run_id`` a real column of every row (a Hive partition value cannot hold many runs)::

    _store/compacted/<table>/data.parquet        rows of many runs, each run's together
    _store/<table>/run_id=<RUN>/data.parquet     a run exported since (as before)

``_store/compacted`` is a relative symlink to ``_store/.compacted/<gen>/``: a compaction
writes a whole new set beside the old one and switches every table with one rename, as an
export does for one run. Each of the two folders of a table is a table any engine reads as
it is (``<table>/`` Hive-partitioned by ``run_id``; ``compacted/<table>/`` plain). The store
is their union, with one rule: **a run's own partition supersedes its compacted rows**. A
compaction moves a run's rows into the set and removes its own partitions; a later export of
that run writes its own partitions again, and readers take those (``core.store.view_sql``),
until the next compaction moves the new rows in and drops the old ones.

Steps and locks.

1. ``_store/.compact.lock`` (``flock``, exclusive): one compaction at a time. Exports do not
   wait for it.
2. Note which generation each run with its own partition is at (``current``), then copy
   every table, as ``core.store.connect`` shows it for those runs and the compacted ones,
   into a new ``.compacted/<gen>/``. Exports of other runs, or of these, may go on.
3. Take the store-wide lock exclusive (``pipeline.store.store_locked``: every export holds it
   shared, so none is half-way now), switch ``compacted`` to the new set, then for each run
   whose ``current`` is still the generation noted in step 2, remove its ``runs`` link first
   (from then on readers take its compacted rows), its other links, its partition folders and
   its generations. A run exported again meanwhile keeps its own partitions, which supersede
   what was copied. Partitions that ``runs`` does not list (a killed first export: no export
   is under way now) are removed too. Each is taken out by renaming its folder into
   ``_store/.trash/`` (one quick step a folder); the trash and the older compacted sets are
   deleted after the lock is released (deleting many folders can take minutes on a file
   system that discards freed blocks at once).

So an export during a compaction loses nothing and doubles nothing for benchreport's readers:
its run is either not in the set (a new run) or in it and superseded by its own partition.
A kill leaves a readable store: before the switch, an unused ``.compacted/<gen>/`` (the next
compaction removes it); after it, runs still with their own partitions, which supersede their
compacted rows. Readers that do not apply the rule (an engine reading both folders) see such
a run twice until the next compaction, as they do a run exported again since the last one;
the README gives the query that applies it. A benchreport reader that opened the store
before a switch and reads after it may miss the runs moved at that instant; ``query`` and
``runs`` open and read in one call.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ReportError
from ..core.store import (
    COMPACTED,
    PARTITION_FILE,
    TABLES,
    Listing,
    compacted_file,
    connect,
    listing,
    partition,
    read_sql,
)
from .store import CURRENT, GENERATIONS, copy_parquet, quoted, remove_path, store_locked

__all__ = ["Compaction", "compact"]

COMPACT_LOCK = ".compact.lock"
SETS = ".compacted"
TRASH = ".trash"


@dataclass(frozen=True)
class Compaction:
    """What a compaction did: runs in the new set, runs moved out of their own partitions
    into it, runs left there (exported again while it copied: their partitions supersede
    what it copied); and its seconds copying, holding the exclusive lock (exports wait
    only then), and deleting what it took out."""

    runs: int
    moved: int
    kept: int
    copy_s: float
    locked_s: float
    delete_s: float


def compact(store: Path) -> Compaction:
    """Merge the store's runs into one file per table (see the module docstring)."""
    if not (store / "runs").is_dir() and not (store / COMPACTED).is_dir():
        raise ReportError("no results store here: nothing to compact", path=store.as_posix(),
                          hint="give the store's folder (--store DIR, or $BENCHREPORT_STORE)")
    clock = [time.perf_counter()]
    with _compact_lock(store):
        _empty_trash(store)                  # what a killed compaction left to remove
        seen = listing(store)
        noted = {run: _generation(store, run) for run in seen.own}
        (store / SETS).mkdir(exist_ok=True)
        fresh = store / SETS / f"{time.time_ns()}.{os.getpid()}"
        try:
            _write_set(store, seen, fresh)
            trash = _trash(store)
            clock.append(time.perf_counter())
            with store_locked(store, exclusive=True):
                _switch(store, fresh)
                # unchanged since noted (None: files, not links, which no export changed:
                # an export first turns them into links)
                moved = [run for run, gen in noted.items() if _generation(store, run) == gen]
                for run in moved:
                    _drop_own(store, run, trash)
                _drop_unlisted(store, trash)
            clock.append(time.perf_counter())
        finally:
            _drop_old_sets(store)
        _empty_trash(store)
    clock.append(time.perf_counter())
    return Compaction(len(seen.runs), len(moved), len(noted) - len(moved),
                      *(b - a for a, b in zip(clock, clock[1:], strict=False)))


@contextlib.contextmanager
def _compact_lock(store: Path) -> Iterator[None]:
    with open(store / COMPACT_LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _generation(store: Path, run: str) -> str | None:
    """The generation ``current`` names for ``run`` (None: no link, e.g. a copied store)."""
    current = store / GENERATIONS / run / CURRENT
    return os.readlink(current) if current.is_symlink() else None


def _write_set(store: Path, seen: Listing, folder: Path) -> None:
    """Every table's rows of ``seen``'s runs into ``folder/<table>/data.parquet``: a run
    with its own partition from there, any other from the compacted set; a run that appears,
    or reappears, after ``seen`` was taken stays out. Rows keep the order they are read in
    (the previous set's, then the partitions' in run order: runs stay together, so a reader
    looking for one run skips most row groups); ``run_id`` is the last column, as readers'
    views have it."""
    con = connect(store, seen=seen)          # refuses a store of mixed schema versions
    try:
        for name, runs in (("own", seen.own), ("old", seen.compacted - seen.own)):
            con.execute(f"CREATE TEMP TABLE {name} (run_id VARCHAR)")
            if runs:
                con.executemany(f"INSERT INTO {name} VALUES (?)", [[r] for r in sorted(runs)])
        for table in TABLES:
            parts = []
            if compacted_file(store, table).is_file():
                parts.append(f"SELECT * FROM read_parquet({quoted(compacted_file(store, table))}) "
                             "WHERE run_id IN (SELECT run_id FROM old)")
            if seen.own and any((store / table).glob(f"run_id=*/{PARTITION_FILE}")):
                parts.append(f"SELECT * FROM {read_sql(store, table)} "
                             "WHERE run_id IN (SELECT run_id FROM own)")
            if parts:
                (folder / table).mkdir(parents=True)
                copy_parquet(con, " UNION ALL BY NAME ".join(parts),
                                    folder / table / PARTITION_FILE)
    finally:
        con.close()


def _switch(store: Path, fresh: Path) -> None:
    """Point ``_store/compacted`` at ``fresh`` with one rename. A real folder there (a store
    copied with its links followed) is first moved among the old sets."""
    link = store / COMPACTED
    if link.is_dir() and not link.is_symlink():
        os.rename(link, store / SETS / f"copied.{time.time_ns()}")
    tmp = store / SETS / f"link.{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(f"{SETS}/{fresh.name}", tmp)
    os.replace(tmp, link)


def _trash(store: Path) -> Path:
    """A new folder that what a compaction takes out is renamed into: a rename is one quick
    step under the exclusive lock; removing folders can be slow (a file system that discards
    freed blocks at once), so it happens after the lock is released."""
    trash = store / TRASH / f"{time.time_ns()}.{os.getpid()}"
    for sub in TABLES + (GENERATIONS,):
        (trash / sub).mkdir(parents=True)
    return trash


def _drop_own(store: Path, run: str, trash: Path) -> None:
    """Take ``run``'s own partitions out, ``runs`` first (from then on readers take its
    compacted rows), then its generations, each with one rename into ``trash``."""
    for table in ("runs",) + tuple(t for t in TABLES if t != "runs"):
        with contextlib.suppress(FileNotFoundError):
            os.rename(partition(store, table, run), trash / table / run)
    with contextlib.suppress(FileNotFoundError):
        os.rename(store / GENERATIONS / run, trash / GENERATIONS / run)


def _drop_unlisted(store: Path, trash: Path) -> None:
    """Take out the partitions and generations of runs that ``runs`` does not list: under
    the exclusive lock no export is under way, so they are what a killed first export, or a
    killed compaction, left."""
    listed = {p.name.removeprefix("run_id=") for p in (store / "runs").glob("run_id=*")
              if (p / PARTITION_FILE).is_file()}
    found = {p.name for p in (store / GENERATIONS).glob("*")}
    for table in TABLES:
        found |= {p.name.removeprefix("run_id=") for p in (store / table).glob("run_id=*")}
    for run in sorted(found - listed):
        _drop_own(store, run, trash)


def _empty_trash(store: Path) -> None:
    shutil.rmtree(store / TRASH, ignore_errors=True)


def _drop_old_sets(store: Path) -> None:
    """Remove every compacted set that ``_store/compacted`` does not name."""
    link = store / COMPACTED
    keep = os.path.basename(os.readlink(link)) if link.is_symlink() else None
    for entry in list((store / SETS).glob("*")):
        if entry.name != keep:
            remove_path(entry)
