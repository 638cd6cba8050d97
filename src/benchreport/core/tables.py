"""The derived tables: what ingest writes and every later step reads.

Ingest writes one Parquet file per table under ``report/<RUN>/derived/tables/``, through
DuckDB (an embedded engine: no server, and the same files answer SQL in any Parquet reader).
After ingest no module opens ``data/``: benchmark points and requests, log records, windows,
the checksums of every input and the raw text of every log line a figure can cite all come
from here.

Tables (one row per what; units in the column names or below):

``records_<kind>`` one parsed log record of that kind (see ``parsers``): engine, file, line,
                 ts (ISO local time), kind, the parsed fields, sha256, and ``text``: the raw
                 line (first 400 characters), for excerpts and ``benchreport explain``.
                 Lists stay lists (``per_position_acceptance``: DOUBLE[]); the launch
                 settings of ``launch_config`` and ``server_args`` records live in
                 ``settings``. ``records_metric``: one Prometheus sample of a
                 /metrics scrape: name (as exposed), canonical (the name across engine
                 versions, see ``parsers.prometheus``), labels (JSON), value, type, scrape
                 (its index in the file) and ts (the scrape's time).
``settings``     one launch setting: engine, file, sha256, line (of the record), kind
                 (launch_config or server_args), field (flags, env or args), key, value
                 (JSON: the value as launched, typed) and value_line (the line of the file
                 that sets it, where known).
``windows``      one benchmark's span in its engine's log: engine, workload, start, end
                 (ISO local time, inclusive), source (run.yaml, result date, activity burst,
                 request count), method (how it was found: records.WINDOW_METHODS), file,
                 first_line, last_line (the log lines it rests on; 0: none), point.
``points``       one benchmark point (engine × workload × load × repeat) of any client:
                 point (its id), engine, workload, load (id: c16, r4, rinf, max),
                 max_concurrency_target, request_rate_target (as run.yaml declares them),
                 repeat (1-based), variant (sweep parameters such as max_num_seqs=4),
                 client, file, sha256, where (record locator), line, also (other files of
                 the same run), model, date, scenario_input_tokens, scenario_output_tokens,
                 scenario_dataset, scenario_range_ratio (the client's length range: sglang
                 random_range_ratio), arrival, the normalised figures as the file recorded
                 them (duration s, completed, failed, total_input_tokens,
                 total_output_tokens, max_concurrency, request_rate req/s (inf: unbounded),
                 request_throughput req/s, output_throughput tok/s, input_throughput tok/s
                 (prompt tokens per second, where a declared client records it), requests_asked and
                 duration_asked s (what bounded the run, as the file records it),
                 cancellation_rate % (requests the client was asked to cancel) and
                 cancelled (the failed requests that were those cancellations) and
                 {mean,median,p90,p99,std}_{ttft,tpot,itl,e2el}_ms), definitions (a map:
                 metric -> the client's definition code), sources (a map: figure -> the
                 JSON key it came from) and requests (how many per-request rows it has).
``requests``     one request of a point: point, index (its place in the file), ttft_ms,
                 e2el_ms, input_tokens, output_tokens, error (NULL when it succeeded),
                 itl_ms (the request's gaps between streamed chunks, ms, DOUBLE[]; vLLM's
                 and SGLang's ``itls``) and start_s (when it was sent, s after the first
                 request; vLLM's ``start_times``). A failed request has its error and no
                 times (``records.failed_request``); every latency statistic leaves it out.

``timeline``     one request of any point (a sweep's too) with per-request rows, written
                 by the timeline notebook (``analyses.timeline``): engine, workload, point,
                 index, arrival_s (at the client; arrival_basis: client start times, sent at
                 once, not measured), engine_arrival_s (NULL: no log places it), wait_s (the
                 time before own prefill: TTFT − prefill_s),
                 prefill_s (prefill_basis: chunks, estimate, unplaced), first_token_s,
                 stall_s (before token 2), second_token_s, decode_s, finish_s (finish_basis:
                 e2el, ttft + sum of gaps), shared_gaps and shared_s (gaps after token 2 that
                 began while another request's prompt was pending), output_tokens,
                 tpot_ms, unplaced (the phases no file places). Times in s from the first
                 request's send (from the request's own send when arrival is not measured).

A single-point result (one point per engine and workload of a workload that is not a sweep;
the analyses of one load level read these) is not a table of its own: it is a view of its
``points`` row and ``requests`` rows (``records.PointResult``, `single_point_results`).
``inputs``       one input file: path (repo-relative), sha256, role (run, claims, scenario,
                 result, log, launch, other).

Every writer here passes what it stores through ``core.redact`` (the one choke point of
stored text): text cells through ``redact``, launch settings through the allow-list of
``redact_settings``. Columns that name or identify (file, path, sha256, point, engine,
workload, load, …) are stored as they are.
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any

from .errors import ReportError
from .files import sha256_file
from .records import (
    SGLANG_CLIENT,
    VLLM_CLIENT,
    BenchWindow,
    Ingested,
    PointResult,
    RawFile,
    Run,
)
from .recordset import (  # noqa: F401 (LIST_COLUMNS, SETTING_FIELDS re-exported)
    BATCH_ROWS,
    LIST_COLUMNS,
    SETTING_FIELDS,
    Excerpts,
    Records,
)
from .redact import redact, redact_settings

__all__ = ["BATCH_ROWS", "EXCERPT_CHARS", "Excerpts", "KEY_COLUMNS", "LIST_COLUMNS", "POINT_TYPES",
           "REQUEST_COLUMNS", "REQUEST_TYPES", "Records", "SETTING_COLUMNS", "SETTING_FIELDS",
           "SINGLE_POINT_CLIENTS", "connect", "input_checksum", "load_ingested", "nan_to_none",
           "read_rows", "redacted", "single_point_results", "warnings_of", "write_points",
           "write_query", "write_rows", "write_settings"]

# nested fields of log records (lists keep their type; launch settings get their own
# table): LIST_COLUMNS and SETTING_FIELDS, defined in recordset
SETTING_COLUMNS = ("engine", "file", "sha256", "line", "kind", "field", "key", "value",
                   "value_line")
POINT_TYPES = {
    "point": "VARCHAR", "engine": "VARCHAR", "workload": "VARCHAR", "load": "VARCHAR",
    "max_concurrency_target": "BIGINT", "request_rate_target": "DOUBLE", "repeat": "BIGINT",
    "variant": "VARCHAR", "client": "VARCHAR", "file": "VARCHAR", "sha256": "VARCHAR",
    "where": "VARCHAR", "line": "BIGINT", "also": "VARCHAR[]", "model": "VARCHAR",
    "date": "VARCHAR", "scenario_input_tokens": "DOUBLE", "scenario_output_tokens": "DOUBLE",
    "scenario_dataset": "VARCHAR", "arrival": "VARCHAR", "duration": "DOUBLE",
    "scenario_range_ratio": "DOUBLE",
    "completed": "BIGINT", "failed": "BIGINT", "total_input_tokens": "BIGINT",
    "total_output_tokens": "BIGINT", "max_concurrency": "BIGINT", "request_rate": "DOUBLE",
    "request_throughput": "DOUBLE", "output_throughput": "DOUBLE", "input_throughput": "DOUBLE",
    "requests_asked": "BIGINT", "duration_asked": "DOUBLE", "cancellation_rate": "DOUBLE",
    "cancelled": "BIGINT",
    **{f"{s}_{m}_ms": "DOUBLE" for m in ("ttft", "tpot", "itl", "e2el")
       for s in ("mean", "median", "p90", "p99", "std")},
    "definitions": "MAP(VARCHAR, VARCHAR)", "sources": "MAP(VARCHAR, VARCHAR)",
    "requests": "BIGINT",
}
REQUEST_TYPES = {
    "point": "VARCHAR", "index": "BIGINT", "ttft_ms": "DOUBLE", "e2el_ms": "DOUBLE",
    "input_tokens": "BIGINT", "output_tokens": "BIGINT", "error": "VARCHAR",
    "itl_ms": "DOUBLE[]", "start_s": "DOUBLE",
}
REQUEST_COLUMNS = tuple(REQUEST_TYPES)
# the clients whose points can be single-point results (one definition of each latency)
SINGLE_POINT_CLIENTS = (VLLM_CLIENT, SGLANG_CLIENT)
EXCERPT_CHARS = 400


def connect(*settings: str):
    """A DuckDB connection that writes the same bytes on every run: a cursor of this
    process's in-memory database with ``settings`` (SET statements beyond one thread and
    insertion order), made at its first use. A new database costs 15 ms of CPU, a cursor
    0.2 ms, and a build reads hundreds of tables. Each cursor has its own registered frames
    and temporary tables; what one creates, no other sees (so create TEMP tables). A cursor
    is made under the lock: the database's own connection is not for two threads at once."""
    database = shared_database(settings)
    with _DATABASES_LOCK:
        return database.cursor()


_DATABASES: dict[tuple[int, tuple[str, ...]], Any] = {}
_DATABASES_LOCK = threading.Lock()


def shared_database(settings: tuple[str, ...] = ()):
    """The process's in-memory database with ``settings``: one per process (a forked child
    makes its own, never its parent's) and per set of settings, since a SET applies to the
    whole database."""
    import duckdb

    key = (os.getpid(), settings)
    with _DATABASES_LOCK:
        if key not in _DATABASES:
            con = duckdb.connect()
            # one thread: row order and file bytes the same on every build
            for statement in ("SET threads=1", "SET preserve_insertion_order=true",
                              *settings):
                con.execute(statement)
            _DATABASES[key] = con
        return _DATABASES[key]


def write_query(con, relation_sql: str, path: Path, params: list | None = None) -> None:
    """Write a query's rows to ``path`` atomically (a temp file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    con.execute(f"COPY ({relation_sql}) TO '{tmp.as_posix()}' (FORMAT parquet, "
                "COMPRESSION zstd)", params or [])
    tmp.replace(path)


def _read(path: Path) -> list[dict[str, Any]]:
    con = connect()
    cur = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def nan_to_none(value: Any) -> Any:
    """A cell as stored: NaN as empty (None)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


# columns that identify a row or join tables: never rewritten by the redaction
KEY_COLUMNS = frozenset({"file", "path", "sha256", "point", "engine", "workload", "load",
                         "variant", "client", "kind", "field", "key", "ts", "start", "end",
                         "date", "also", "definitions", "sources", "role", "source"})


def redacted(column: str, value: Any) -> Any:
    """A cell as stored: text (and lists of text) of a non-key column redacted."""
    if column in KEY_COLUMNS:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list | tuple) and any(isinstance(v, str) for v in value):
        return [redact(v) if isinstance(v, str) else v for v in value]
    return value


def write_rows(path: Path, rows: list[dict[str, Any]], columns: list[str],
               types: dict[str, str] | None = None) -> None:
    """A table of plain values (text, numbers, NULL), columns in the given order;
    ``types`` casts columns that hold lists (e.g. ``{"x": "DOUBLE[]"}``). Text is stored
    redacted (``core.redact``)."""
    import pandas as pd

    con = connect()
    df = pd.DataFrame([{c: redacted(c, nan_to_none(r.get(c))) for c in columns} for r in rows],
                      columns=columns)
    df = df.astype(object).where(df.notna(), None)
    con.register("frame", df)
    casts = types or {}
    select = ", ".join(f'CAST("{c}" AS {casts[c]}) AS "{c}"' if c in casts else f'"{c}"'
                       for c in columns) or "*"
    write_query(con, f"SELECT {select} FROM frame", path)


def write_points(path: Path, rows: list[dict[str, Any]]) -> None:
    """The ``points`` table: every column of POINT_TYPES, typed, in that order; text
    redacted (model, dataset, locators; ids and keys as they are)."""
    con = connect()
    cols = ", ".join(f'"{n}" {t}' for n, t in POINT_TYPES.items())
    con.execute(f"CREATE TEMP TABLE points ({cols})")
    names = list(POINT_TYPES)
    for row in rows:
        con.execute(f"INSERT INTO points VALUES ({', '.join('?' for _ in names)})",
                    [redacted(n, nan_to_none(row.get(n))) if n not in ("definitions", "sources")
                     else (row.get(n) or {}) for n in names])
    write_query(con, "SELECT * FROM points", path)


def write_settings(path: Path, records: dict[str, list[dict[str, Any]]]) -> None:
    """The launch settings of every launch_config and server_args record, one row each,
    by the allow-list of ``redact_settings`` (the parsers applied it already; this is the
    choke point for records made elsewhere)."""
    rows = []
    for kind in ("launch_config", "server_args"):
        for rec in records.get(kind, []):
            lines = rec.get("flag_lines") or {}
            for field in ("flags", "env", "args"):
                for key, value in sorted(redact_settings(field, rec.get(field)).items()):
                    rows.append({"engine": rec["engine"], "file": rec["file"],
                                 "sha256": rec.get("sha256"), "line": rec["line"],
                                 "kind": kind, "field": field, "key": key,
                                 "value": json.dumps(value, sort_keys=True, default=str),
                                 "value_line": lines.get(key) if field != "args" else None})
    write_rows(path, rows, list(SETTING_COLUMNS),
               {"value": "JSON", "line": "BIGINT", "value_line": "BIGINT"})


def _attach_settings(records: dict[str, list[dict[str, Any]]], path: Path) -> None:
    """Put each record's launch settings back as mappings (flags, flag_lines, env, args)."""
    if not path.is_file():
        return
    by_record: dict[tuple, dict[str, dict]] = {}
    for row in read_rows(path):
        fields = by_record.setdefault((row["kind"], row["file"], int(row["line"])), {})
        fields.setdefault(row["field"], {})[row["key"]] = json.loads(row["value"])
        if row.get("value_line") is not None:
            fields.setdefault("flag_lines", {})[row["key"]] = int(row["value_line"])
    for kind in ("launch_config", "server_args"):
        for rec in records.get(kind, []):
            fields = by_record.get((kind, rec["file"], int(rec["line"])), {})
            for field in ("flags", "env", "args", "flag_lines"):
                if field in fields or (field != "args") == (kind == "launch_config"):
                    rec[field] = fields.get(field, {})


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if v is not None} for row in _read(path)]


# --- reading back: the one loader ------------------------------------------------------

def single_point_results(run: Run, points: list[dict[str, Any]],
                         requests: list[dict[str, Any]]) -> list[PointResult]:
    """The results that the single-point analyses read (end-to-end, latency, the log
    windows): one vLLM or SGLang point per engine and workload, of a workload that is not a
    sweep and declares one concurrency and a prompt count, built from its ``points`` row and
    ``requests`` rows. A sweep or another client's points are shown by the campaign analyses
    instead; so is a point whose file records no duration or no completed count."""
    from collections import Counter

    count = Counter((p["engine"], p["workload"]) for p in points)
    sweeps = {w.id for w in run.meta.workloads
              if w.is_sweep or w.concurrency is None or w.num_prompts is None}
    by_point: dict[str, list[dict[str, Any]]] = {}
    for r in requests:
        by_point.setdefault(r["point"], []).append(r)
    out = []
    for p in points:
        if p["workload"] in sweeps or count[(p["engine"], p["workload"])] > 1 or \
                p["client"] not in SINGLE_POINT_CLIENTS or \
                p.get("duration") is None or p.get("completed") is None:
            continue
        # the file is named, never opened again: everything later steps need is in the rows
        file = RawFile(path=run.paths.root / p["file"], rel=p["file"], sha256=p["sha256"])
        out.append(PointResult.from_rows(p, by_point.get(p["point"], []), file))
    return out


def warnings_of(summaries: list[dict[str, Any]]) -> list[str]:
    """Every file's warnings ("file:line: message"), once each, in file order."""
    seen: dict[str, None] = {}
    for s in sorted(summaries, key=lambda s: s["file"]):
        for note in s["warnings"]:
            seen.setdefault(note, None)
    return list(seen)


def _row_counts(paths: list[Path]) -> dict[str, int]:
    """Rows of each Parquet file, from the files' footers (one query for all)."""
    if not paths:
        return {}
    found = connect().execute("SELECT file_name, num_rows FROM parquet_file_metadata(?)",
                              [[str(p) for p in paths]]).fetchall()
    return {name: int(rows) for name, rows in found}


def _load_records(folder: Path) -> Records:
    """The records tables: a table of at most one batch of rows read into memory (as it
    always was), a larger one left in its file and queried as needed (``Records``)."""
    small: dict[str, list[dict[str, Any]]] = {}
    large: dict[str, list[Path]] = {}
    order = []
    paths = sorted(folder.glob("records_*.parquet"))
    counts = _row_counts(paths)
    for path in paths:
        kind = path.stem.removeprefix("records_")
        order.append(kind)
        if counts.get(str(path), 0) > BATCH_ROWS:
            large[kind] = [path]
            continue
        rows = read_rows(path)
        for row in rows:
            for key in ("line", "pid"):
                if isinstance(row.get(key), float):
                    row[key] = int(row[key])
        small[kind] = rows
    return Records(small=small, large=large, order=order)


def _load_excerpts(path: Path) -> Excerpts:
    """The excerpts table: read whole while small, else looked up line by line."""
    if path.is_file() and _row_counts([path]).get(str(path), 0) > BATCH_ROWS:
        return Excerpts(parts=[path])
    return Excerpts({(r["file"], int(r["line"])): r["text"] for r in read_rows(path)})


def load_ingested(run: Run) -> Ingested:
    """What the ingest notebook wrote, read back: later steps read no raw file again."""
    folder = run.paths.tables
    if not (run.paths.ingest_json).is_file():
        raise ReportError("derived/ingest.json is missing; the ingest notebook must run first",
                          path=run.paths.rel(run.paths.derived))
    records = _load_records(folder)
    _attach_settings(records.small, folder / "settings.parquet")
    points = read_rows(folder / "points.parquet") if (folder / "points.parquet").is_file() \
        else []
    requests = read_rows(folder / "requests.parquet") \
        if (folder / "requests.parquet").is_file() else []
    summaries = json.loads((run.paths.ingest_json).read_text())["files"]
    windows = [BenchWindow(**w) for w in read_rows(folder / "windows.parquet")]
    point_windows = [w for w in windows if w.level == "point"]
    windows = [w for w in windows if w.level != "point"]
    results = single_point_results(run, points, requests)
    excerpts = _load_excerpts(folder / "excerpts.parquet")
    return Ingested(records=records, summaries=summaries, results=results, windows=windows,
                    excerpts=excerpts, points=points, requests=requests,
                    point_windows=point_windows)


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

