"""Export a built run into the results store (``core.store`` documents the tables).

A build calls ``export_run`` after its report is in place, so a run whose build failed never
touches the store. Every table of the run is first written under
``_store/.incoming/<RUN>.<pid>/``; only when all of them exist is each moved into its
partition with one rename (``os.replace``), the ``runs`` row last: a reader sees a run's old
files or its new ones, never a half-written file. Builds of different runs write different
partitions, so they may export at the same time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.records import Run
from ..core.redact import redact_value
from ..core.store import (
    KV_KEY,
    PARTITION_FILE,
    STORE_VERSION,
    TABLES,
    partition,
    store_path,
)
from ..core.tables import POINT_TYPES, connect

EVENT_KINDS = ("memory_event", "jit_event", "retraction", "traceback")


def _copy(con, sql: str, path: Path, params: list | None = None) -> None:
    target = path.as_posix().replace("'", "''")
    con.execute(f"COPY ({sql}) TO '{target}' (FORMAT parquet, COMPRESSION zstd, "
                f"KV_METADATA {{{KV_KEY}: '{STORE_VERSION}'}})", params or [])


def _q(path: Path) -> str:
    return "'" + path.as_posix().replace("'", "''") + "'"


def _engines(run: Run, tables: Path, con) -> list[dict[str, str]]:
    logged: dict[str, str] = {}
    versions = tables / "records_version.parquet"
    if versions.is_file():
        for engine, version in con.execute(
                f"SELECT engine, min(version) FROM {_q(versions)} "
                "WHERE version IS NOT NULL GROUP BY 1").fetchall():
            logged[engine] = version
    return [{"id": e.id, "name": e.name, "version": e.version or None,
             "image": e.image or None, "logged_version": logged.get(e.id)}
            for e in run.meta.engines]


def run_row(run: Run, con) -> dict[str, Any]:
    """The run's one row of the ``runs`` table."""
    tables = run.paths.tables
    meta = redact_value(run.meta)          # run.yaml's text as the report shows it
    inputs = con.execute(f"SELECT path, sha256 FROM {_q(tables / 'inputs.parquet')} "
                         "ORDER BY path").fetchall()
    digest = hashlib.sha256("".join(f"{p} {h}\n" for p, h in inputs).encode()).hexdigest()
    clients: list[str] = []
    if (tables / "points.parquet").is_file():
        clients = [c for (c,) in con.execute(
            f"SELECT DISTINCT client FROM {_q(tables / 'points.parquet')} "
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
    _copy(con, "SELECT * FROM run_row", path)


def _write_figures(con, figures_json: Path, path: Path) -> None:
    import pandas as pd

    figures = json.loads(figures_json.read_text(encoding="utf-8"))["figures"] \
        if figures_json.is_file() else []
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
    _copy(con, "SELECT id::VARCHAR AS id, family::VARCHAR AS family, value::DOUBLE AS value, "
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
                f"SELECT column_name FROM (DESCRIBE SELECT * FROM {_q(table)})").fetchall()}
            event = "event::VARCHAR" if "event" in cols else \
                ("phase::VARCHAR" if "phase" in cols else "NULL::VARCHAR")
            parts.append(f"SELECT engine, file, line::BIGINT AS line, ts, '{kind}' AS kind, "
                         f"{event} AS event, sha256 FROM {_q(table)}")
    windows = tables / "windows.parquet"
    if not parts or not windows.is_file():
        _copy(con, "SELECT NULL::VARCHAR AS engine, NULL::VARCHAR AS workload, "
                   "NULL::VARCHAR AS kind, NULL::VARCHAR AS event, NULL::VARCHAR AS ts, "
                   "NULL::VARCHAR AS file, NULL::VARCHAR AS sha256, NULL::BIGINT AS line, "
                   "NULL::VARCHAR AS text WHERE false", path)
        return
    excerpts = tables / "excerpts.parquet"
    text = f"LEFT JOIN {_q(excerpts)} x ON x.file = r.file AND x.line = r.line" \
        if excerpts.is_file() else ""
    _copy(con, f"SELECT r.engine, w.workload, r.kind, r.event, r.ts, r.file, r.sha256, "
               f"r.line, {'x.text' if text else 'NULL::VARCHAR'} AS text "
               f"FROM ({' UNION ALL '.join(parts)}) r "
               f"JOIN {_q(windows)} w ON w.engine = r.engine AND r.ts BETWEEN w.start AND w.end "
               f"{text} ORDER BY r.engine, w.workload, r.file, r.line", path)


def _write_table(con, source: Path, path: Path, types: dict[str, str]) -> None:
    """A derived table with every column cast to its stored type (an absent table: no
    rows, same columns), so all partitions of a table share one schema."""
    if source.is_file():
        have = {c for (c,) in con.execute(
            f"SELECT column_name FROM (DESCRIBE SELECT * FROM {_q(source)})").fetchall()}
        cols = ", ".join(f'CAST("{n}" AS {t}) AS "{n}"' if n in have else
                         f'NULL::{t} AS "{n}"' for n, t in types.items())
        _copy(con, f"SELECT {cols} FROM {_q(source)}", path)
    else:
        cols = ", ".join(f'NULL::{t} AS "{n}"' for n, t in types.items())
        _copy(con, f"SELECT {cols} WHERE false", path)


REQUEST_TYPES = {"point": "VARCHAR", "index": "BIGINT", "ttft_ms": "DOUBLE",
                 "e2el_ms": "DOUBLE", "input_tokens": "BIGINT", "output_tokens": "BIGINT",
                 "error": "VARCHAR"}
INPUT_TYPES = {"path": "VARCHAR", "sha256": "VARCHAR", "role": "VARCHAR"}
SETTING_TYPES = {"engine": "VARCHAR", "file": "VARCHAR", "sha256": "VARCHAR", "line": "BIGINT",
                 "kind": "VARCHAR", "field": "VARCHAR", "key": "VARCHAR", "value": "JSON",
                 "value_line": "BIGINT"}


def export_run(run: Run, store: Path | None = None) -> Path:
    """Write ``run``'s tables into the store, replacing its partitions; return the store."""
    store = store or store_path(run.paths.report.parent)
    tables = run.paths.tables
    incoming = store / ".incoming" / f"{run.id}.{os.getpid()}"
    shutil.rmtree(incoming, ignore_errors=True)
    incoming.mkdir(parents=True)
    try:
        con = connect()
        files = {t: incoming / f"{t}.parquet" for t in TABLES}
        _write_table(con, tables / "points.parquet", files["points"], POINT_TYPES)
        _write_table(con, tables / "requests.parquet", files["requests"], REQUEST_TYPES)
        _write_table(con, tables / "settings.parquet", files["settings"], SETTING_TYPES)
        _write_table(con, tables / "inputs.parquet", files["inputs"], INPUT_TYPES)
        _write_figures(con, run.paths.figures_json, files["figures"])
        _write_events(con, tables, files["events"])
        _write_runs(con, run_row(run, con), files["runs"])
        con.close()
        # "runs" last: a run is listed (stored_runs) once all its tables are in place
        for table in sorted(TABLES, key=lambda t: t == "runs"):
            target = partition(store, table, run.id)
            target.mkdir(parents=True, exist_ok=True)
            os.replace(files[table], target / PARTITION_FILE)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    return store


def export_needed(run: Run, store: Path | None = None) -> bool:
    """Whether the store lacks the run or holds it from an older build or schema."""
    store = store or store_path(run.paths.report.parent)
    stored = partition(store, "runs", run.id) / PARTITION_FILE
    if not stored.is_file():
        return True
    newest = max((p.stat().st_mtime for p in (run.paths.figures_json,
                                              run.paths.tables / "points.parquet")
                  if p.is_file()), default=0.0)
    if stored.stat().st_mtime < newest:
        return True
    import duckdb

    rows = duckdb.connect().execute("SELECT value FROM parquet_kv_metadata(?) WHERE key = ?",
                                    [str(stored), KV_KEY]).fetchall()
    return not rows or rows[0][0] not in (str(STORE_VERSION).encode(), str(STORE_VERSION))
