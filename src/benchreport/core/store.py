"""The results store: every built run's tables in one folder, for SQL across runs.

Layout (plain Parquet, Hive-partitioned by run; any Parquet reader can query it)::

    report/_store/<table>/run_id=<RUN>/data.parquet

``run_id`` is the partition key, not a column of the files: read the folder with
``hive_partitioning = true`` (and ``hive_types = {'run_id': VARCHAR}``, so that a run id such
as ``2025-05-01`` stays text). ``_store`` starts with an underscore, which no run id can.

Each ``data.parquet`` is a relative symlink into the run's current generation,
``_store/.generations/<RUN>/current/<table>.parquet``: an export switches all the run's tables
with one rename (``pipeline.store`` says how and why). A reader here lists the runs first
(a run's first export links ``runs`` last) and leaves out the partitions of any run ``runs``
does not list, so a run whose first export was killed halfway is not seen in any table. A
store written before generations, with real files in the partitions, reads the same; each
run is moved over at its next export.

Where. ``resolve_store`` names the folder: ``--store DIR``, else ``$BENCHREPORT_STORE``, else
``<report-root>/_store``; the store may sit on a shared file system that many machines
export into (``pipeline.store`` says what holds then).

Compacted runs. ``benchreport store compact`` (``pipeline.compact``) moves runs' rows into one
plain Parquet file per table, ``_store/compacted/<table>/data.parquet``, with ``run_id`` a
real column (its last, as the views have it). A reader takes the union of both folders with
one rule: a run with its own ``runs`` partition is read from its partitions, any other
compacted run from the compacted set (``view_sql``); ``stored_runs`` lists both.

Tables (one row per what; units in the names or below). Every file also carries the Parquet
key-value metadata ``benchreport_store_version``; ``runs`` has it as a column too.

``runs``      one run: store_version, date (run.yaml), title_en, title_ko, reconstruction
              (true when the run's files are a reconstruction, not a measurement), servers,
              gpus, gpu_model, model, quantization, draft_model, engines (a list of
              {id, name, version, image, logged_version}: version and image as run.yaml
              states them, logged_version as the engine's log printed it), clients (the
              benchmark clients of its points), workloads (ids), workload_labels (as
              run.yaml names them, in the same order), inputs (how many input
              files), inputs_sha256 (the sha256 of the sorted "path sha256" lines of every
              input file: two runs with the same value read the same bytes), benchreport
              (the version that built it).
``points``    one benchmark point (engine × workload × load × repeat): the run's derived
              ``points`` table as is (``core.tables``: durations s, latencies ms,
              throughputs tok/s or req/s, the client and its definitions), then the
              store's own columns: load_concurrency (DOUBLE: the concurrency cap, run.yaml's
              target else the client's setting; NULL for none), load_rate (DOUBLE: the
              request rate, likewise; ``inf`` for an unbounded rate), load_value (DOUBLE:
              the number a series' loads sort by, the finite rate else the cap, ``inf`` for
              an unbounded rate with no cap; ``load`` itself is text and sorts r1, r16,
              r4), validity (the point's verdict: valid, unverified, flagged, saturated,
              cannot tell or invalid; NULL when the build made none), valid (BOOLEAN:
              false only for invalid; NULL with validity) and validity_reason (the codes
              of the checks that gave the verdict, e.g. ``slots_idle``; NULL when none).
``requests``  one request of a point, where the client's file has per-request data:
              point, index, ttft_ms, e2el_ms, input_tokens, output_tokens, error.
``figures``   one figure of the run's registry: id, family (the id's first part), value
              (DOUBLE; NULL for a verdict or a text), value_text (the value as text), unit,
              method, notebook, inputs_sha256 (the sha256 of every input file it rests on),
              sources (JSON: file, sha256, key, lines).
``settings``  one launch setting of one engine: engine, file, sha256, line, kind, field, key,
              value (JSON), value_line.
``events``    one runtime event inside a benchmark window: engine, workload, kind
              (memory_event, jit_event, retraction, traceback), event (its sub-kind where
              logged), ts (ISO local time), file, sha256, line, text (the raw line).
``inputs``    one input file of the run: path (repo-relative), sha256, role (run, claims,
              scenario, result, log, launch, other): what a comparison cites.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ReportError
from .jsontext import finite

__all__ = ["COMPACTED", "KV_KEY", "Listing", "PARTITION_FILE", "STORE_DIR", "STORE_ENV",
           "STORE_VERSION", "TABLES", "check_versions", "compacted_file", "compacted_runs",
           "connect", "format_rows", "listing", "own_runs", "partition", "read_sql",
           "resolve_store", "rows_of", "run_query", "store_path", "stored_runs", "unlisted",
           "view_sql"]

# 2: points gained scenario_range_ratio (a partition of version 1 lacks the column)
# 3: points gained load_concurrency, load_rate, load_value, validity, valid and
#    validity_reason (a partition of version 2 lacks them: it is refused, naming the run to
#    rebuild; a build re-exports a run whose partition has another version)
STORE_VERSION = 3
STORE_DIR = "_store"
STORE_ENV = "BENCHREPORT_STORE"
COMPACTED = "compacted"
TABLES = ("runs", "points", "requests", "figures", "settings", "events", "inputs")
PARTITION_FILE = "data.parquet"
KV_KEY = "benchreport_store_version"


def store_path(report_root: Path | str) -> Path:
    """The default store: ``<report-root>/_store``."""
    return Path(report_root) / STORE_DIR


def resolve_store(report_root: Path | str, given: Path | str | None = None,
                  environ: Mapping[str, str] | None = None) -> Path:
    """The store a command reads and writes. Precedence: ``given`` (``--store DIR``), then
    the environment variable ``BENCHREPORT_STORE``, then ``<report-root>/_store``. An empty
    value counts as not given, so ``make ... STORE=`` keeps the default."""
    env = os.environ if environ is None else environ
    for choice in (given, env.get(STORE_ENV)):
        if choice is not None and str(choice).strip():
            return Path(str(choice).strip()).expanduser()
    return store_path(report_root)


def partition(store: Path, table: str, run_id: str) -> Path:
    return store / table / f"run_id={run_id}"


def read_sql(store: Path, table: str) -> str:
    """The ``read_parquet`` call that reads one table of the store, every run."""
    glob = (store / table / "*" / PARTITION_FILE).as_posix().replace("'", "''")
    # Every partition of a table has the same columns and types (export casts them; another
    # schema version is refused), so the first file's schema stands for all: no
    # union_by_name, which would read every file's footer before the query starts.
    return (f"read_parquet('{glob}', hive_partitioning = true, "
            "hive_types = {'run_id': VARCHAR})")


def unlisted(store: Path, table: str, run_ids: set[str]) -> list[str]:
    """Runs with a partition of ``table`` that ``runs`` does not list: a first export under
    way, or killed before its ``runs`` partition was in place. Readers leave them out."""
    return sorted(p.name.removeprefix("run_id=") for p in (store / table).glob("run_id=*")
                  if p.name.removeprefix("run_id=") not in run_ids)


def own_runs(store: Path) -> list[str]:
    """Run ids with a complete partition of their own (their ``runs`` partition is linked
    last)."""
    folder = store / "runs"
    if not folder.is_dir():
        return []
    return sorted(p.name.removeprefix("run_id=") for p in folder.iterdir()
                  if p.name.startswith("run_id=") and (p / PARTITION_FILE).is_file())


def compacted_file(store: Path, table: str) -> Path:
    """The compacted set's file of ``table`` (``run_id`` is a column of it)."""
    return store / COMPACTED / table / PARTITION_FILE


def compacted_runs(store: Path) -> list[str]:
    """Run ids in the compacted set, whether or not a later export superseded them."""
    path = compacted_file(store, "runs")
    if not path.is_file():
        return []
    from .tables import connect as cursor

    con = cursor()
    try:
        return [r for (r,) in con.execute("SELECT run_id FROM read_parquet(?) ORDER BY 1",
                                          [path.as_posix()]).fetchall()]
    finally:
        con.close()


@dataclass(frozen=True)
class Listing:
    """What a reader takes as the store at one moment: the runs with their own partitions,
    and the compacted set's runs (those with their own partition too read from it)."""

    own: frozenset[str]
    compacted: frozenset[str]

    @property
    def runs(self) -> list[str]:
        return sorted(self.own | self.compacted)


def listing(store: Path) -> Listing:
    return Listing(frozenset(own_runs(store)), frozenset(compacted_runs(store)))


def stored_runs(store: Path) -> list[str]:
    """Run ids in the store: with a complete partition of their own, or compacted."""
    return listing(store).runs


def _in_list(run_ids) -> str:
    return ", ".join("'" + r.replace("'", "''") + "'" for r in sorted(run_ids))


def view_sql(store: Path, table: str, seen: Listing) -> str | None:
    """What a reader sees of ``table``: the rows of the runs' own partitions (leaving out
    partitions that ``runs`` does not list), and the compacted set's rows of the runs
    with no partition of their own (a later export supersedes the compacted rows).
    None when neither holds the table."""
    parts = []
    if any((store / table).glob(f"run_id=*/{PARTITION_FILE}")):
        # a filter on the partition key: DuckDB skips those files without opening them
        left_out = _in_list(unlisted(store, table, set(seen.own)))
        parts.append(f"SELECT * FROM {read_sql(store, table)}"
                     + (f" WHERE run_id NOT IN ({left_out})" if left_out else ""))
    compacted = compacted_file(store, table)
    if seen.compacted and compacted.is_file():
        shadowed = _in_list(seen.own & seen.compacted)
        parts.append(f"SELECT * FROM read_parquet({_literal(compacted)})"
                     + (f" WHERE run_id NOT IN ({shadowed})" if shadowed else ""))
    return " UNION ALL BY NAME ".join(parts) or None


def _literal(path: Path) -> str:
    return "'" + path.as_posix().replace("'", "''") + "'"


def check_versions(con) -> None:
    """Refuse a store holding a run written by another schema version, naming it. Each
    export writes the ``runs`` row last, with the version it wrote every table in."""
    row = con.execute(f"SELECT run_id, store_version FROM runs WHERE store_version IS "
                      f"DISTINCT FROM {STORE_VERSION} ORDER BY run_id LIMIT 1").fetchone()
    if row:
        run_id, found = row
        raise ReportError(
            f"run {run_id} is in the store with schema version "
            f"{'none' if found is None else found}; this "
            f"benchreport reads version {STORE_VERSION}",
            hint=f"rebuild it (make report RUN={run_id}) to migrate it, or delete its "
                 f"partitions (report/{STORE_DIR}/*/run_id={run_id}) and "
                 f"report/{STORE_DIR}/.generations/{run_id}")


def connect(store: Path, *, check: bool = True, seen: Listing | None = None,
            own: bool = False):
    """An in-memory DuckDB connection with one view per table of the store (``view_sql``),
    as ``seen`` lists it (default: as it is now): a cursor of the process's database for
    store readers (``tables.connect``; a new database costs 15 ms of CPU), whose views are
    temporary, so no other cursor sees them. ``own``: a database of its own, for a user's
    query, which locks the database's configuration (``_read_only``)."""
    if own:
        import duckdb

        con = duckdb.connect()
        con.execute("SET threads=2")
    else:
        from .tables import connect as cursor

        con = cursor("SET threads=2")
    seen = seen or listing(store)
    for table in TABLES:
        sql = view_sql(store, table, seen)
        if sql:
            con.execute(f"CREATE TEMP VIEW {table} AS {sql}")
    if check and seen.runs:
        check_versions(con)
    return con


def run_query(store: Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Column names and rows of ``sql`` over the store; an error is one ReportError line."""
    import duckdb

    if not stored_runs(store):
        raise ReportError("the store is empty: no run has been built yet",
                          path=store.as_posix(), hint="make report RUN=<run-id> fills it")
    con = connect(store, own=True)
    try:
        _read_only(con, store, sql)
        cur = con.execute(sql)
        names = [d[0] for d in cur.description] if cur.description else []
        return names, cur.fetchall()
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ReportError(f"query failed: {first}",
                          hint=f"tables: {', '.join(TABLES)}; run_id is each table's "
                               "partition column") from None


def _read_only(con, store: Path, sql: str) -> None:
    """A user's query reads the store and nothing else: one SELECT statement (no COPY,
    ATTACH, DROP or SET), and DuckDB's access to files outside the store turned off and
    locked, so ``read_csv('/etc/passwd')`` or an extension install fails too."""
    import duckdb

    kinds = [st.type for st in con.extract_statements(sql)]
    if kinds != [duckdb.StatementType.SELECT]:
        found = ", ".join(k.name for k in kinds) or "none"
        raise ReportError(f"query: give one SELECT statement (found: {found}); the store "
                          "is read-only here")
    con.execute("SET allowed_directories = ?", [[f"{store.resolve().as_posix()}/"]])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def rows_of(con, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    """``sql``'s rows as dicts, on a connection from ``connect``."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def format_rows(names: list[str], rows: list[tuple], fmt: str) -> str:
    """Rows as an aligned text table, CSV or JSON (a list of objects)."""
    if fmt == "json":
        return json.dumps(finite([dict(zip(names, r, strict=True)) for r in rows]),
                          default=_plain, ensure_ascii=False, indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(names)
        writer.writerows([[_csv_cell(v) for v in r] for r in rows])
        return buf.getvalue()
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]
    numeric = [bool(rows) and all(isinstance(r[i], int | float) or r[i] is None for r in rows)
               for i in range(len(names))]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    out = [line(names), line(["-" * w for w in widths])] + [line(c) for c in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out) + "\n"


def _plain(value: Any) -> Any:
    import datetime as dt
    import decimal

    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return str(value)


# a spreadsheet runs a cell that starts with one of these as a formula
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: Any) -> str:
    """A CSV cell: text that a spreadsheet would take for a formula gets a leading quote
    (numbers, negative ones included, stay numbers)."""
    cell = _cell(value)
    if isinstance(value, str) and cell.startswith(_FORMULA_START):
        return "'" + cell
    return cell


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e15 else repr(value)
    if isinstance(value, list | dict):
        return json.dumps(value, default=_plain, ensure_ascii=False)
    return str(value)
