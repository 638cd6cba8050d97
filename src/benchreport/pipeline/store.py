"""Export a built run into the results store (``core.store`` documents the tables).

A build calls ``export_run`` once every step has succeeded and before it swaps the new report
in: a run whose build failed never touches the store, and a full disk or an interrupt during
the export leaves the previous report and the previous store as they were.

Atomic per run. An export writes all the run's tables under
``_store/.incoming/<RUN>@<host>.<pid>/``, renames that folder to a new generation
``_store/.generations/<RUN>/<gen>/``, and replaces the symlink
``_store/.generations/<RUN>/current`` with one naming it. Each partition file,
``_store/<table>/run_id=<RUN>/data.parquet``, is a fixed relative symlink through ``current``
(``../../.generations/<RUN>/current/<table>.parquet``), so that one rename switches every table
of the run at once, and a kill at any instant leaves the run at one generation, the previous
or the new one, never a mix.

Why links rather than a generation marker that only benchreport's readers honour: the layout
is public (DuckDB, Spark, Trino and Athena read ``<table>/run_id=<RUN>/`` as it is), and a
marker would leave those readers a mix or two generations' rows. Why one link per run rather
than one per store: exports of different runs stay independent and may run at the same time,
and an export costs the same in a store of a thousand runs as in a store of one.

Order. What takes disk space (the tables, the temporary links, the partition folders) is made
first; then renames only switch the run, and on an error they are undone, so a full disk
leaves the store as it was. A run's first export links its partitions after ``current``
exists, ``runs`` last: until that link is in place the run is not listed, and ``core.store``
reads only the runs ``runs`` lists. A run stored before generations (real files in its
partitions, or a store copied with its links followed) is first taken over: its files are
hard-linked into a generation and each replaced by its link, which changes no byte a reader
sees, so that the switch to the new build is again one rename.

Leftovers. An export holds ``.generations/<RUN>/lock`` (``flock``, which the kernel drops when
the process dies) and removes, under it, what a killed export of the run left: generations
that ``current`` does not name, and ``.incoming/<RUN>@<host>.<pid>/`` folders (of any run)
of this machine whose process is gone. A build whose inputs did not change calls
``remove_leftovers`` instead.

Many processes, many machines. The store may sit on a shared file system (``--store``,
``$BENCHREPORT_STORE``). Exports of different runs share only folders they create with
``exist_ok`` and scratch folders named by run, machine and process; exports of one run wait
for each other on its lock; every export holds ``_store/.lock`` shared, which a compaction
(``pipeline.compact``) takes exclusive only to switch. All of it rests on ``rename`` being atomic
and ``flock`` holding between the machines (NFS v4, CephFS; Lustre mounted with ``flock``).
A killed export's scratch folder is removed only from the machine it ran on, the one place
that can tell its process is gone.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import __version__
from ..analyses.matching import load_columns
from ..analyses.validity import load_value
from ..core import ids
from ..core.records import Run
from ..core.redact import redact_value
from ..core.store import (
    KV_KEY,
    PARTITION_FILE,
    STORE_VERSION,
    TABLES,
    compacted_file,
    compacted_runs,
    partition,
    store_path,
)
from ..core.tables import POINT_TYPES, connect
from ..core.verdicts import INVALID

__all__ = ["CURRENT", "EVENT_KINDS", "GENERATIONS", "INCOMING", "INPUT_TYPES", "LINK_ORDER", "LOCK",
           "POINT_EXTRA_TYPES", "REQUEST_TYPES", "RUN_TYPES", "SETTING_TYPES", "STORE_LOCK",
           "copy_parquet", "export_needed", "export_run", "point_extras", "quoted",
           "remove_leftovers", "remove_path", "run_row", "store_locked"]

EVENT_KINDS = ("memory_event", "jit_event", "retraction", "traceback")
INCOMING = ".incoming"
GENERATIONS = ".generations"
CURRENT = "current"
LOCK = "lock"
STORE_LOCK = ".lock"
# "runs" last: a run is listed (core.store.stored_runs) once all its other tables are linked
LINK_ORDER = tuple(sorted(TABLES, key=lambda t: t == "runs"))


def copy_parquet(con, sql: str, path: Path, params: list | None = None) -> None:
    """Write the rows of ``sql`` to ``path`` as a store's parquet file (with the store's
    version in its metadata); a full disk is an OSError."""
    import duckdb

    target = path.as_posix().replace("'", "''")
    try:
        con.execute(f"COPY ({sql}) TO '{target}' (FORMAT parquet, COMPRESSION zstd, "
                    f"KV_METADATA {{{KV_KEY}: '{STORE_VERSION}'}})", params or [])
    except duckdb.IOException as exc:
        raise _os_error(exc, path) from None


def _os_error(exc: Exception, path: Path) -> OSError:
    """DuckDB's IO error as the OSError under it (a full disk: ENOSPC), which the build and
    the command line report in one line. DuckDB puts the details in a JSON object:
    ``IO Error: ...: {"exception_message": "...", "errno": "28"}``."""
    text = str(exc)
    try:
        detail = json.loads(text[text.index("{"):])
    except ValueError:
        detail = {}
    code = int(detail.get("errno") or 0) or errno.EIO
    if code in (errno.ENOSPC, errno.EDQUOT):
        return OSError(code, os.strerror(code), str(path))
    return OSError(code, detail.get("exception_message") or text.splitlines()[0])


def quoted(path: Path) -> str:
    """``path`` as a quoted SQL string literal."""
    return "'" + path.as_posix().replace("'", "''") + "'"


def _engines(run: Run, tables: Path, con) -> list[dict[str, str]]:
    logged: dict[str, str] = {}
    versions = tables / "records_version.parquet"
    if versions.is_file():
        for engine, version in con.execute(
                f"SELECT engine, min(version) FROM {quoted(versions)} "
                "WHERE version IS NOT NULL GROUP BY 1").fetchall():
            logged[engine] = version
    return [{"id": e.id, "name": e.name, "version": e.version or None,
             "image": e.image or None, "logged_version": logged.get(e.id)}
            for e in run.meta.engines]


def run_row(run: Run, con) -> dict[str, Any]:
    """The run's one row of the ``runs`` table."""
    tables = run.paths.tables
    meta = redact_value(run.meta)          # run.yaml's text as the report shows it
    inputs = con.execute(f"SELECT path, sha256 FROM {quoted(tables / 'inputs.parquet')} "
                         "ORDER BY path").fetchall()
    digest = hashlib.sha256("".join(f"{p} {h}\n" for p, h in inputs).encode()).hexdigest()
    clients: list[str] = []
    if (tables / "points.parquet").is_file():
        clients = [c for (c,) in con.execute(
            f"SELECT DISTINCT client FROM {quoted(tables / 'points.parquet')} "
            "WHERE client IS NOT NULL ORDER BY 1").fetchall()]
    hw, model = meta.hardware, meta.model
    return {
        "store_version": STORE_VERSION,
        "date": meta.date.isoformat() if meta.date else None,
        "title_en": meta.title.get("en"), "title_ko": meta.title.get("ko"),
        "reconstruction": meta.reconstruction is not None,
        "servers": hw.get("servers"), "gpus": hw.get("gpus"),
        "gpu_model": hw.get("gpu_model"),
        "model": model.get("name"), "quantization": model.get("quantization"),
        "draft_model": model.get("draft_model"),
        "engines": _engines(run, tables, con), "clients": clients,
        "workloads": [w.id for w in meta.workloads],
        "workload_labels": [w.label for w in meta.workloads],
        "inputs": len(inputs), "inputs_sha256": digest, "benchreport": __version__,
    }


RUN_TYPES = {
    "store_version": "INTEGER", "date": "DATE", "title_en": "VARCHAR", "title_ko": "VARCHAR",
    "reconstruction": "BOOLEAN", "servers": "INTEGER", "gpus": "INTEGER",
    "gpu_model": "VARCHAR", "model": "VARCHAR", "quantization": "VARCHAR",
    "draft_model": "VARCHAR",
    "engines": "STRUCT(id VARCHAR, name VARCHAR, version VARCHAR, image VARCHAR, "
               "logged_version VARCHAR)[]",
    "clients": "VARCHAR[]", "workloads": "VARCHAR[]", "workload_labels": "VARCHAR[]",
    "inputs": "INTEGER",
    "inputs_sha256": "VARCHAR", "benchreport": "VARCHAR",
}


def _write_runs(con, row: dict[str, Any], path: Path) -> None:
    cols = ", ".join(f'"{n}" {t}' for n, t in RUN_TYPES.items())
    con.execute(f"CREATE OR REPLACE TEMP TABLE run_row ({cols})")
    con.execute(f"INSERT INTO run_row VALUES ({', '.join('?' for _ in RUN_TYPES)})",
                [row[n] for n in RUN_TYPES])
    copy_parquet(con, "SELECT * FROM run_row", path)


def _figures(figures_json: Path) -> list[dict[str, Any]]:
    """The run's figures as figures.json holds them (none without the file)."""
    return json.loads(figures_json.read_text(encoding="utf-8"))["figures"] \
        if figures_json.is_file() else []


def _write_figures(con, figures: list[dict[str, Any]], path: Path) -> None:
    import pandas as pd

    rows = []
    for f in figures:
        value = f.get("value")
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        rows.append({
            "id": f["id"], "family": f["id"].split(".", 1)[0],
            "value": float(value) if numeric else None,
            "value_text": None if value is None else str(value), "unit": f.get("unit"),
            "method": f.get("method"), "notebook": f.get("notebook"),
            "inputs_sha256": sorted({s["sha256"] for s in f.get("sources", [])}),
            "sources": json.dumps(f.get("sources", []), sort_keys=True, ensure_ascii=False)})
    frame = pd.DataFrame(rows, columns=["id", "family", "value", "value_text", "unit",
                                        "method", "notebook", "inputs_sha256", "sources"])
    con.register("figure_rows", frame.astype(object).where(frame.notna(), None))
    copy_parquet(con, "SELECT id::VARCHAR AS id, family::VARCHAR AS family, "
                      "value::DOUBLE AS value, "
                      "value_text::VARCHAR AS value_text, unit::VARCHAR AS unit, "
                      "method::VARCHAR AS method, notebook::VARCHAR AS notebook, "
                      "inputs_sha256::VARCHAR[] AS inputs_sha256, sources::JSON AS sources "
                      "FROM figure_rows ORDER BY id", path)


def _write_events(con, tables: Path, path: Path) -> None:
    parts = []
    for kind in EVENT_KINDS:
        table = tables / f"records_{kind}.parquet"
        if table.is_file():
            cols = {c for (c,) in con.execute(
                f"SELECT column_name FROM (DESCRIBE SELECT * FROM {quoted(table)})").fetchall()}
            event = "event::VARCHAR" if "event" in cols else \
                ("phase::VARCHAR" if "phase" in cols else "NULL::VARCHAR")
            parts.append(f"SELECT engine, file, line::BIGINT AS line, ts, '{kind}' AS kind, "
                         f"{event} AS event, sha256 FROM {quoted(table)}")
    windows = tables / "windows.parquet"
    if not parts or not windows.is_file():
        copy_parquet(con, "SELECT NULL::VARCHAR AS engine, NULL::VARCHAR AS workload, "
                          "NULL::VARCHAR AS kind, NULL::VARCHAR AS event, NULL::VARCHAR AS ts, "
                          "NULL::VARCHAR AS file, NULL::VARCHAR AS sha256, NULL::BIGINT AS line, "
                          "NULL::VARCHAR AS text WHERE false", path)
        return
    excerpts = tables / "excerpts.parquet"
    text = f"LEFT JOIN {quoted(excerpts)} x ON x.file = r.file AND x.line = r.line" \
        if excerpts.is_file() else ""
    copy_parquet(con, f"SELECT r.engine, w.workload, r.kind, r.event, r.ts, r.file, r.sha256, "
                      f"r.line, {'x.text' if text else 'NULL::VARCHAR'} AS text "
                      f"FROM ({' UNION ALL '.join(parts)}) r "
                      f"JOIN {quoted(windows)} w ON w.engine = r.engine "
                      f"AND r.ts BETWEEN w.start AND w.end "
                      f"{text} ORDER BY r.engine, w.workload, r.file, r.line", path)


def _write_table(con, source: Path, path: Path, types: dict[str, str]) -> None:
    """A derived table with every column cast to its stored type (an absent table: no
    rows, same columns), so all partitions of a table share one schema."""
    if source.is_file():
        have = {c for (c,) in con.execute(
            f"SELECT column_name FROM (DESCRIBE SELECT * FROM {quoted(source)})").fetchall()}
        cols = ", ".join(f'CAST("{n}" AS {t}) AS "{n}"' if n in have else
                         f'NULL::{t} AS "{n}"' for n, t in types.items())
        copy_parquet(con, f"SELECT {cols} FROM {quoted(source)}", path)
    else:
        cols = ", ".join(f'NULL::{t} AS "{n}"' for n, t in types.items())
        copy_parquet(con, f"SELECT {cols} WHERE false", path)


# columns the store adds to a run's points table (core.store documents them)
POINT_EXTRA_TYPES = {"load_concurrency": "DOUBLE", "load_rate": "DOUBLE",
                     "load_value": "DOUBLE", "validity": "VARCHAR", "valid": "BOOLEAN",
                     "validity_reason": "VARCHAR"}


def _validity(figures: list[dict[str, Any]]) -> dict[str, tuple[str, str | None]]:
    """Point id -> (its validity verdict, the codes of the checks that made it), from the
    run's ``point.<p>.validity`` figures."""
    out = {}
    for f in figures:
        parsed = ids.parse_point(f["id"])
        if not parsed or parsed[1] != "validity":
            continue
        verdict = str(f.get("value"))
        codes = [c["code"] for c in (f.get("context") or {}).get("checks", [])
                 if c.get("severity") == verdict]
        out[parsed[0]] = (verdict, ", ".join(codes) or None)
    return out


def point_extras(point: dict[str, Any], validity: dict[str, tuple[str, str | None]]
                 ) -> dict[str, Any]:
    """The store's own columns of one point: its load as numbers (concurrency cap and
    request rate as ``analyses.matching`` reads them; ``load_value`` orders a series'
    loads as ``analyses.validity.load_value`` does, ``inf`` for an unbounded rate) and
    its validity (NULL when the run has no validity figure for it)."""
    conc, rate = load_columns(point)
    verdict, reason = validity.get(point["point"], (None, None))
    return {"point": point["point"], "load_concurrency": conc, "load_rate": rate,
            "load_value": load_value(point), "validity": verdict,
            "valid": None if verdict is None else verdict != INVALID,
            "validity_reason": reason}


def _write_points(con, source: Path, figures: list[dict[str, Any]], path: Path) -> None:
    """The run's points table (every column cast as ``_write_table`` does) with the
    store's columns (``point_extras``) after them."""
    import pandas as pd

    staged = path.with_name("points.base.parquet")
    _write_table(con, source, staged, POINT_TYPES)
    points = [dict(zip(POINT_TYPES, row, strict=True)) for row in con.execute(
        f"SELECT * FROM {quoted(staged)}").fetchall()]
    validity = _validity(figures)
    frame = pd.DataFrame([point_extras(p, validity) for p in points],
                         columns=["point", *POINT_EXTRA_TYPES])
    con.register("point_extras", frame.astype(object).where(frame.notna(), None))
    extra = ", ".join(f'CAST(e."{n}" AS {t}) AS "{n}"' for n, t in POINT_EXTRA_TYPES.items())
    copy_parquet(con, f"SELECT p.*, {extra} FROM {quoted(staged)} p LEFT JOIN point_extras e "
                      "USING (point) ORDER BY p.point", path)
    staged.unlink()


REQUEST_TYPES = {"point": "VARCHAR", "index": "BIGINT", "ttft_ms": "DOUBLE",
                 "e2el_ms": "DOUBLE", "input_tokens": "BIGINT", "output_tokens": "BIGINT",
                 "error": "VARCHAR"}
INPUT_TYPES = {"path": "VARCHAR", "sha256": "VARCHAR", "role": "VARCHAR"}
SETTING_TYPES = {"engine": "VARCHAR", "file": "VARCHAR", "sha256": "VARCHAR", "line": "BIGINT",
                 "kind": "VARCHAR", "field": "VARCHAR", "key": "VARCHAR", "value": "JSON",
                 "value_line": "BIGINT"}


def _write_tables(run: Run, folder: Path) -> None:
    """Every table of ``run``, one Parquet file each, into the new folder ``folder``."""
    tables = run.paths.tables
    folder.mkdir(parents=True)
    con = connect()
    try:
        files = {t: folder / f"{t}.parquet" for t in TABLES}
        figures = _figures(run.paths.figures_json)          # read once, for two tables
        _write_points(con, tables / "points.parquet", figures, files["points"])
        _write_table(con, tables / "requests.parquet", files["requests"], REQUEST_TYPES)
        _write_table(con, tables / "settings.parquet", files["settings"], SETTING_TYPES)
        _write_table(con, tables / "inputs.parquet", files["inputs"], INPUT_TYPES)
        _write_figures(con, figures, files["figures"])
        _write_events(con, tables, files["events"])
        _write_runs(con, run_row(run, con), files["runs"])
    finally:
        con.close()


def export_run(run: Run, store: Path | None = None) -> Path:
    """Write ``run``'s tables into the store as a new generation and switch the run to it
    in one rename (see the module docstring); return the store."""
    store = store or store_path(run.paths.report.parent)
    with _locked(store, run.id):
        _sweep(store, run.id)
        scratch = store / INCOMING / f"{run.id}@{_host()}.{os.getpid()}"
        try:
            _write_tables(run, scratch / "tables")
            _adopt(store, run.id, scratch)
            _switch(store, run.id, _keep(store, run.id, scratch / "tables"), scratch)
        finally:
            remove_path(scratch)
            _sweep_generations(store, run.id)
    return store


def remove_leftovers(store: Path, run_id: str) -> None:
    """Remove what killed exports left: the run's generations that ``current`` does not name,
    and ``.incoming`` folders of processes that are gone."""
    if (store / GENERATIONS / run_id).is_dir():
        with _locked(store, run_id):
            _sweep(store, run_id)
    else:
        _sweep_incoming(store, run_id)


@contextlib.contextmanager
def store_locked(store: Path, exclusive: bool = False) -> Iterator[None]:
    """The store-wide lock, ``_store/.lock``: every export holds it shared, so exports of
    different runs run at the same time; a compaction holds it exclusive only while it
    switches to its new compacted set and removes the partitions it took over
    (``pipeline.compact``), so no export is half-way then. ``flock``: a killed holder leaves
    no stale lock."""
    import fcntl

    store.mkdir(parents=True, exist_ok=True)
    with open(store / STORE_LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


@contextlib.contextmanager
def _locked(store: Path, run_id: str) -> Iterator[None]:
    """One export of a run at a time (builds of one run already wait for each other; this
    covers callers outside a build), under the store-wide lock held shared."""
    import fcntl

    with store_locked(store):
        folder = store / GENERATIONS / run_id
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / LOCK, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield


def _current(store: Path, run_id: str) -> Path:
    return store / GENERATIONS / run_id / CURRENT


def _part(store: Path, table: str, run_id: str) -> Path:
    return partition(store, table, run_id) / PARTITION_FILE


def _link_text(run_id: str, table: str) -> str:
    """Where a partition file points, relative to its folder: through ``current``."""
    return f"../../{GENERATIONS}/{run_id}/{CURRENT}/{table}.parquet"


def _linked(store: Path, table: str, run_id: str) -> bool:
    part = _part(store, table, run_id)
    return part.is_symlink() and os.readlink(part) == _link_text(run_id, table)


def _keep(store: Path, run_id: str, folder: Path) -> Path:
    """Move a complete generation beside the run's others; return its new place."""
    generation = store / GENERATIONS / run_id / f"{time.time_ns()}.{os.getpid()}"
    os.rename(folder, generation)
    return generation


def _adopt(store: Path, run_id: str, scratch: Path) -> None:
    """Take over a run whose partitions are files, not links (a store written before
    generations, or copied with its links followed): hard-link the files into a generation
    and switch to it. Readers see the same bytes at every step."""
    current = _current(store, run_id)
    existing = [t for t in TABLES if os.path.lexists(_part(store, t, run_id))]
    if not existing or (current.is_symlink() and all(_linked(store, t, run_id)
                                                     for t in existing)):
        return
    taken = scratch / "adopted"
    taken.mkdir()
    for table in existing:
        if _part(store, table, run_id).is_file():
            _hard_link(_part(store, table, run_id), taken / f"{table}.parquet")
    if current.exists() and not current.is_symlink():    # a copy of a generation, not a link
        shutil.rmtree(current)
    _switch(store, run_id, _keep(store, run_id, taken), scratch)


def _hard_link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:             # a file system without hard links: a copy
        shutil.copy2(src, dst)


def _switch(store: Path, run_id: str, generation: Path, scratch: Path) -> None:
    """Point the run at ``generation``: after ``_prepare``, renames only, ``current`` first
    (every linked table switches with it), then the links the run lacks, ``runs`` last. On
    any error the renames are undone."""
    links = scratch / f"links.{generation.name}"
    fresh: set[str] = set()
    done: list[str] = []
    try:
        todo = _prepare(store, run_id, generation, links, fresh)
        os.replace(links / CURRENT, _current(store, run_id))
        for table in todo:
            os.replace(links / table, _part(store, table, run_id))
            done.append(table)
    except BaseException:
        _undo(store, run_id, generation, links, done, fresh)
        raise


def _prepare(store: Path, run_id: str, generation: Path, links: Path,
             fresh: set[str]) -> list[str]:
    """Make everything ``_switch`` renames into place, in ``links`` (which takes the disk
    space there is to take before anything changes); add to ``fresh`` the tables with no
    partition file yet. Return the tables whose partition is not yet linked, in order."""
    links.mkdir()
    current = _current(store, run_id)
    os.symlink(generation.name, links / CURRENT)
    if current.is_symlink():
        os.symlink(os.readlink(current), links / "previous")
    todo = [t for t in LINK_ORDER if (generation / f"{t}.parquet").is_file()
            and not _linked(store, t, run_id)]
    for table in todo:
        if not os.path.lexists(_part(store, table, run_id)):
            fresh.add(table)
            partition(store, table, run_id).mkdir(parents=True, exist_ok=True)
        os.symlink(_link_text(run_id, table), links / table)
    return todo


def _undo(store: Path, run_id: str, generation: Path, links: Path, done: list[str],
          fresh: set[str]) -> None:
    """Back to what readers saw before ``_switch``, by renames and removals only (they need
    no disk space): the new links out, ``current`` back to its previous generation."""
    for table in fresh:
        with contextlib.suppress(OSError):
            if table in done:
                _part(store, table, run_id).unlink()
            partition(store, table, run_id).rmdir()
    current = _current(store, run_id)
    if (links / "previous").is_symlink():
        os.replace(links / "previous", current)
    elif current.is_symlink() and os.readlink(current) == generation.name and \
            all(t in fresh for t in done):      # a first export: only its own links used it
        current.unlink()


def _sweep(store: Path, run_id: str) -> None:
    _sweep_incoming(store, run_id)
    _sweep_generations(store, run_id)


def _host() -> str:
    """This machine's name, as scratch folders carry it (no '@': it separates the run)."""
    import socket

    return socket.gethostname().replace("@", "_") or "localhost"


def _sweep_incoming(store: Path, run_id: str) -> None:
    """Remove ``.incoming/<RUN>@<host>.<pid>`` of this machine's processes that are gone (an
    export killed), and this process's own one of ``run_id`` (an export of it that failed).
    Another machine's are left alone: whether its process lives cannot be told from here
    (a store on a shared file system). A name without ``@<host>`` (an older benchreport's)
    counts as this machine's."""
    for entry in list((store / INCOMING).glob("*")):
        name, _, pid = entry.name.rpartition(".")
        run, at, host = name.rpartition("@")
        if not pid.isdigit() or (at and host != _host()):
            continue
        if not _alive(int(pid)) or (int(pid) == os.getpid() and (run if at else name) == run_id):
            remove_path(entry)


def _sweep_generations(store: Path, run_id: str) -> None:
    """Remove the run's generations that ``current`` does not name (under its lock)."""
    folder = store / GENERATIONS / run_id
    current = folder / CURRENT
    keep = {CURRENT, LOCK, os.readlink(current) if current.is_symlink() else None}
    for entry in list(folder.glob("*")):
        if entry.name not in keep:
            remove_path(entry)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:      # another user's process
        return True
    return True


def remove_path(path: Path) -> None:
    """Remove a file, link or folder, whichever ``path`` is; gone already is fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def export_needed(run: Run, store: Path | None = None) -> bool:
    """Whether the store lacks the run or holds it from an older build or schema."""
    store = store or store_path(run.paths.report.parent)
    stored = partition(store, "runs", run.id) / PARTITION_FILE
    if not stored.is_file():
        # a compacted run is up to date when the compacted set is newer than its build
        stored = compacted_file(store, "runs")
        if run.id not in compacted_runs(store):
            return True
    newest = max((p.stat().st_mtime for p in (run.paths.figures_json,
                                              run.paths.tables / "points.parquet")
                  if p.is_file()), default=0.0)
    if stored.stat().st_mtime < newest:
        return True
    rows = connect().execute("SELECT value FROM parquet_kv_metadata(?) WHERE key = ?",
                             [str(stored), KV_KEY]).fetchall()
    return not rows or rows[0][0] not in (str(STORE_VERSION).encode(), str(STORE_VERSION))
