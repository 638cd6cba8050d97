"""The derived tables: what ingest writes and every later step reads.

Ingest writes one Parquet file per table under ``report/<RUN>/derived/tables/``, through
DuckDB (an embedded engine: no server, and the same files answer SQL in any Parquet reader).
After ingest no module opens ``data/``: results, log records, windows, the checksums of every
input and the raw text of every log line a figure can cite all come from here.

Tables (one row per what; units in the column names or below):

``results``      one benchmark result record: engine, workload, file, sha256, line (of the
                 record in its file), client, backend, duration (s), completed, failed,
                 total_input_tokens, total_output_tokens, request_rate (req/s, inf for
                 "all at once"), max_concurrency, date (the client's own, or NULL),
                 random_input_len, stats (JSON: metric -> statistic -> ms, as the client
                 wrote them) and the per-request lists where the file has them:
                 input_lens, output_lens (tokens), ttfts, latencies (s), itls (s, a list per
                 request), errors (text per request).
``records_<kind>`` one parsed log record of that kind (see ``parsers``): engine, file, line,
                 ts (ISO local time), kind, the parsed fields, sha256, and ``text``: the raw
                 line (first 400 characters), for excerpts and ``benchreport explain``.
``windows``      one benchmark's span in its engine's log: engine, workload, start, end
                 (ISO local time, inclusive), source (run.yaml, result date, activity burst).
``inputs``       one input file: path (repo-relative), sha256, role (run, claims, scenario,
                 result, log, launch, other).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import ReportError
from .files import sha256_file
from .records import BenchResult, BenchWindow, Ingested, RawFile, ResultEntry, Run

RESULT_COLUMNS = (
    ("engine", "VARCHAR"), ("workload", "VARCHAR"), ("file", "VARCHAR"), ("sha256", "VARCHAR"),
    ("line", "BIGINT"), ("client", "VARCHAR"), ("backend", "VARCHAR"), ("duration", "DOUBLE"),
    ("completed", "BIGINT"), ("failed", "BIGINT"), ("total_input_tokens", "BIGINT"),
    ("total_output_tokens", "BIGINT"), ("request_rate", "DOUBLE"),
    ("max_concurrency", "BIGINT"), ("date", "VARCHAR"), ("random_input_len", "BIGINT"),
    ("stats", "VARCHAR"), ("input_lens", "BIGINT[]"), ("output_lens", "BIGINT[]"),
    ("ttfts", "DOUBLE[]"), ("latencies", "DOUBLE[]"), ("itls", "DOUBLE[][]"),
    ("errors", "VARCHAR[]"),
)
PER_REQUEST = ("input_lens", "output_lens", "ttfts", "latencies", "itls", "errors")
EXCERPT_CHARS = 400


def _connect():
    import duckdb

    con = duckdb.connect()
    # one thread: row order and file bytes the same on every build
    con.execute("SET threads=1")
    con.execute("SET preserve_insertion_order=true")
    return con


def _write(con, relation_sql: str, path: Path, params: list | None = None) -> None:
    """Write a query's rows to ``path`` atomically (a temp file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    con.execute(f"COPY ({relation_sql}) TO '{tmp.as_posix()}' (FORMAT parquet, "
                "COMPRESSION zstd)", params or [])
    tmp.replace(path)


def _read(path: Path) -> list[dict[str, Any]]:
    con = _connect()
    cur = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def write_results(path: Path, rows: list[dict[str, Any]]) -> None:
    con = _connect()
    cols = ", ".join(f'"{n}" {t}' for n, t in RESULT_COLUMNS)
    con.execute(f"CREATE TABLE results ({cols})")
    names = [n for n, _ in RESULT_COLUMNS]
    for row in rows:
        con.execute(f"INSERT INTO results VALUES ({', '.join('?' for _ in names)})",
                    [row.get(n) for n in names])
    _write(con, "SELECT * FROM results ORDER BY engine, workload, file, line", path)


def read_results(path: Path) -> list[dict[str, Any]]:
    return _read(path)


def write_rows(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> None:
    """A table of plain values (text, numbers, NULL), columns in the given order."""
    import pandas as pd

    con = _connect()
    df = pd.DataFrame([{c: _clean(r.get(c)) for c in columns} for r in rows], columns=columns)
    df = df.astype(object).where(df.notna(), None)
    con.register("frame", df)
    _write(con, "SELECT * FROM frame", path)


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if v is not None} for row in _read(path)]


# --- reading back: the one loader ------------------------------------------------------

def _result_entry(run: Run, row: dict[str, Any]) -> ResultEntry:
    raw = {k: row[k] for k in ("date", "failed", "random_input_len", "errors")
           if row.get(k) is not None}
    result = BenchResult(
        client=row["client"], line=int(row["line"]), backend=row["backend"],
        duration=row["duration"], completed=int(row["completed"]),
        total_input_tokens=row["total_input_tokens"],
        total_output_tokens=row["total_output_tokens"], request_rate=row["request_rate"],
        max_concurrency=row["max_concurrency"], stats=json.loads(row["stats"]),
        per_request={k: row[k] for k in PER_REQUEST if row.get(k) is not None}, raw=raw)
    # the file is named, never opened again: everything later steps need is in the row
    file = RawFile(path=run.paths.root / row["file"], rel=row["file"], sha256=row["sha256"])
    return ResultEntry(engine=row["engine"], workload=row["workload"], result=result,
                       file=file)


def warnings_of(summaries: list[dict[str, Any]]) -> list[str]:
    """Every file's warnings ("file:line: message"), once each, in file order."""
    seen: dict[str, None] = {}
    for s in sorted(summaries, key=lambda s: s["file"]):
        for note in s["warnings"]:
            seen.setdefault(note, None)
    return list(seen)


def load_ingested(run: Run) -> Ingested:
    """What the ingest notebook wrote, read back: later steps read no raw file again."""
    folder = run.paths.tables
    if not (run.paths.ingest_json).is_file():
        raise ReportError("derived/ingest.json is missing; the ingest notebook must run first",
                          path=run.paths.rel(run.paths.derived))
    records: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("records_*.parquet")):
        rows = read_rows(path)
        for row in rows:
            for key in ("line", "pid"):
                if isinstance(row.get(key), float):
                    row[key] = int(row[key])
        records[path.stem.removeprefix("records_")] = rows
    summaries = json.loads((run.paths.ingest_json).read_text())["files"]
    windows = [BenchWindow(**w) for w in read_rows(folder / "windows.parquet")]
    results = [_result_entry(run, row) for row in read_results(folder / "results.parquet")]
    excerpts = {(r["file"], int(r["line"])): r["text"]
                for r in read_rows(folder / "excerpts.parquet")}
    return Ingested(records=records, summaries=summaries, results=results, windows=windows,
                    excerpts=excerpts)


def input_checksum(run: Run, path) -> str:
    """The sha256 of an input file of the run, as ingest recorded it (computed from the
    file only where no ingest was saved: the package used as a library, in tests)."""
    table = run.paths.tables / "inputs.parquet"
    if table.is_file():
        rel = run.paths.rel(path)
        for row in read_rows(table):
            if row["path"] == rel:
                return row["sha256"]
    return sha256_file(path)


def stats_json(stats: dict) -> str:
    return json.dumps(stats, sort_keys=True, allow_nan=True)
