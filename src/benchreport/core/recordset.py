"""Log records by kind, held in memory while they are few and in Parquet once they are many.

A server log of stats lines is all records: millions of them in a long run. Held as Python
dicts they took some 1 KiB each, so memory grew with the log (issue 33). Here a kind's
records stay a list until ``BATCH_ROWS`` of them have come; from then on they go to Parquet
in batches of that size, and every reader asks for what it needs (a window, a file, a few
columns) through DuckDB, one batch of rows at a time.

A kind that stays in memory is written and read exactly as before, so the tables of a run
with short logs are the same bytes; only a kind with more rows than one batch takes the
Parquet path. ``Records`` is a read-only mapping (kind -> list of rows) for the callers
that want every row of a rare kind, plus ``rows``/``in_window``/``count`` that never hold a
large kind whole.
"""

from __future__ import annotations

import atexit
import functools
import heapq
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

BATCH_ROWS = 20_000      # rows of one kind held before they go to a Parquet part
FETCH_ROWS = 10_000      # rows fetched from DuckDB at a time
LEAD = ["engine", "file", "line", "ts", "kind"]     # the first columns of a record table
# kinds never spilled: their nested settings go to the settings table from memory
KEEP_IN_MEMORY = frozenset({"launch_config", "server_args"})
LIST_COLUMNS = {"per_position_acceptance": "DOUBLE[]", "labels": "JSON"}
SETTING_FIELDS = ("flags", "flag_lines", "env", "args")


def table_columns(keys: Iterable[str]) -> list[str]:
    """A record table's columns: LEAD first, then the others sorted; settings left out."""
    keys = set(keys)
    lead = [c for c in LEAD if c in keys]
    return lead + sorted(c for c in keys if c not in lead and c not in SETTING_FIELDS)


def _quoted(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + p.as_posix().replace("'", "''") + "'" for p in paths) + "]"


def _stored(row: dict[str, Any]) -> dict[str, Any]:
    """A row as read back from Parquet: no NULL cells; line and pid as integers."""
    out = {k: v for k, v in row.items() if v is not None}
    for key in ("line", "pid"):
        if isinstance(out.get(key), float):
            out[key] = int(out[key])
    return out


def _by_time(row: dict[str, Any]) -> tuple:
    return row["ts"], row["line"]


def _in_window(row: dict[str, Any], engine: str, start: str, end: str) -> bool:
    return row["engine"] == engine and bool(row.get("ts")) and start <= row["ts"] <= end


class Records(Mapping):
    """Records by kind: ``small`` kinds as lists of rows, ``large`` kinds as Parquet files
    (read in file order, the parts of one kind one after another)."""

    def __init__(self, small: dict[str, list[dict[str, Any]]] | None = None,
                 large: dict[str, list[Path]] | None = None, order: list[str] | None = None,
                 folder: Path | None = None) -> None:
        self.small = dict(small or {})
        self.large = dict(large or {})
        self.order = order or list(self.small) + [k for k in self.large if k not in self.small]
        self.folder = folder                       # a staging folder this object owns
        if folder is not None:
            weakref.finalize(self, shutil.rmtree, folder, True)

    @classmethod
    def of(cls, records: Mapping[str, list[dict[str, Any]]]) -> Records:
        """``records`` as it is if it is one already; a plain dict of lists wrapped."""
        return records if isinstance(records, Records) else cls(small=dict(records))

    # --- the mapping: every row of a kind --------------------------------------------
    def __getitem__(self, kind: str) -> list[dict[str, Any]]:
        if kind in self.small:
            return self.small[kind]
        if kind in self.large:
            return list(self.rows(kind))
        raise KeyError(kind)

    def __iter__(self) -> Iterator[str]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, kind: object) -> bool:
        return kind in self.small or kind in self.large

    # --- what readers ask for -----------------------------------------------------------
    def is_large(self, kind: str) -> bool:
        return kind in self.large

    def count(self, kind: str) -> int:
        if kind in self.small:
            return len(self.small[kind])
        if kind not in self.large:
            return 0
        return _connect().execute(f"SELECT count(*) FROM {self._source(kind)}").fetchone()[0]

    def total(self) -> int:
        return sum(self.count(kind) for kind in self.order)

    def rows(self, kind: str, *, engine: str | None = None, file: str | None = None,
             window: tuple[str, str] | None = None) -> Iterator[dict[str, Any]]:
        """Rows of ``kind`` in file order, of one engine, one file, or with a time stamp
        inside ``window`` (start, end; inclusive), without holding a large kind whole."""
        if kind in self.small:
            yield from (r for r in self.small[kind]
                        if (engine is None or r["engine"] == engine)
                        and (file is None or r["file"] == file)
                        and (window is None or (r.get("ts") and
                                                window[0] <= r["ts"] <= window[1])))
            return
        if kind not in self.large:
            return
        where, params = ["true"], []
        for column, value in (("engine", engine), ("file", file)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if window is not None:
            where.append("ts IS NOT NULL AND ts <> '' AND ts BETWEEN ? AND ?")
            params += list(window)
        yield from self._fetch(f"SELECT * FROM {self._source(kind)} WHERE "
                               f"{' AND '.join(where)}", params)

    def in_window(self, kind: str, engine: str, start: str, end: str) -> list[dict[str, Any]]:
        """Records of ``kind`` from ``engine``'s logs with a time stamp in [start, end]."""
        if kind in self.small:
            return [r for r in self.small[kind] if _in_window(r, engine, start, end)]
        return list(self.rows(kind, engine=engine, window=(start, end)))

    def files(self, kind: str, engine: str, keep=None, sql: str = "true") -> set[str]:
        """The files holding ``engine``'s records of ``kind`` that ``keep`` keeps (a large
        kind: that ``sql``, the same test as a condition on its columns, keeps)."""
        if kind in self.large:
            found = _connect().execute(f"SELECT DISTINCT file FROM {self._source(kind)} WHERE "
                                       f"engine = ? AND ({sql})", [engine]).fetchall()
            return {f for (f,) in found}
        return {r["file"] for r in self.small.get(kind, [])
                if r["engine"] == engine and (keep is None or keep(r))}

    def ts_range_by_file(self, kind: str, engine: str) -> dict[str, tuple[str, str]]:
        """Per file, the first and last time stamp of ``engine``'s records of ``kind``."""
        if kind in self.large:
            found = _connect().execute(
                f"SELECT file, min(ts), max(ts) FROM {self._source(kind)} WHERE engine = ? "
                "AND ts IS NOT NULL AND ts <> '' GROUP BY file", [engine]).fetchall()
            return {f: (a, b) for f, a, b in found}
        times: dict[str, list[str]] = {}
        for r in self.small.get(kind, []):
            if r["engine"] == engine and r.get("ts"):
                times.setdefault(r["file"], []).append(r["ts"])
        return {f: (min(ts), max(ts)) for f, ts in times.items()}

    def sorted_rows(self, kinds: Iterable[str], engine: str,
                    columns: Iterable[str] | None = None) -> Iterator[dict[str, Any]]:
        """Rows of several kinds of one engine that have a time stamp, by (ts, line); rows
        that tie keep the order of ``kinds``, then file order (as a stable sort would).
        ``columns``: of a large kind, only those are read (the others are absent)."""
        streams = []
        for index, kind in enumerate(kinds):
            if kind in self.small:
                rows = [r for r in self.small[kind] if r["engine"] == engine and r.get("ts")]
                streams.append(((r["ts"], r["line"], index, "", n), r)
                               for n, r in enumerate(sorted(rows, key=_by_time)))
            elif kind in self.large:
                streams.append(((r["ts"], r["line"], index, r.pop("_f"), r.pop("_n")), r)
                               for r in self._fetch(
                    f"SELECT {self._select(kind, columns)}, filename AS _f, file_row_number "
                    f"AS _n FROM {self._source(kind, numbered=True)} WHERE engine = ? AND ts "
                    "IS NOT NULL AND ts <> '' ORDER BY ts, line, _f, _n", [engine]))
        yield from (row for _, row in heapq.merge(*streams, key=lambda x: x[0]))

    def lines_of(self, file: str) -> Iterator[tuple[int, str]]:
        """(line, ts) of every record of ``file`` that has a time stamp, by line then ts."""
        streams = [sorted((r["line"], r["ts"]) for k in self.order if k in self.small
                          for r in self.small[k] if r["file"] == file and r.get("ts"))]
        for kind in (k for k in self.order if k in self.large):
            streams.append((int(r["line"]), r["ts"]) for r in self._fetch(
                f"SELECT line, ts FROM {self._source(kind)} WHERE file = ? AND ts IS NOT NULL "
                "AND ts <> '' ORDER BY line, ts", [file]))
        yield from heapq.merge(*streams)

    def _select(self, kind: str, columns: Iterable[str] | None) -> str:
        """The select list of a large kind's query: ``columns`` that its table has, else *."""
        if columns is None:
            return "*"
        have = {d[0] for d in _connect().execute(f"SELECT * FROM {self._source(kind)} "
                                                 "LIMIT 0").description}
        return ", ".join(f'"{c}"' for c in columns if c in have)

    def _source(self, kind: str, numbered: bool = False) -> str:
        if kind in self.large:
            extra = ", filename=true, file_row_number=true" if numbered else ""
            return f"read_parquet({_quoted(self.large[kind])}, union_by_name=true{extra})"
        raise KeyError(kind)

    def _fetch(self, sql: str, params: list) -> Iterator[dict[str, Any]]:
        con = _connect()
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        while batch := cur.fetchmany(FETCH_ROWS):
            for values in batch:
                yield _stored(dict(zip(names, values, strict=True)))


    # --- writing the derived tables ------------------------------------------------------
    def write_table(self, kind: str, path: Path) -> None:
        """The ``records_<kind>`` table: a kind held in memory exactly as it always was
        written; a large one copied from its parts, columns in the same order."""
        from .tables import write_query, write_rows

        if kind in self.small:
            rows = self.small[kind]
            columns = table_columns(k for r in rows for k in r)
            write_rows(path, rows, columns, LIST_COLUMNS)
            return
        con = _connect()
        names = [d[0] for d in con.execute(f"SELECT * FROM {self._source(kind)} LIMIT 0")
                 .description]
        select = ", ".join(f'"{c}"' for c in table_columns(names))
        write_query(con, f"SELECT {select} FROM {self._source(kind)}", path)


def _connect():
    """A cursor of the process's database for records: bounded memory, spilling to a
    folder of its own, and no progress bar printed to stdout by a long query."""
    from .tables import connect

    return connect("SET memory_limit='256MB'", "SET enable_progress_bar=false",
                   f"SET temp_directory='{_spill_folder()}'")


@functools.cache
def _spill_folder() -> str:
    """Where DuckDB may spill a large sort or join: a folder of this process's own (two
    notebook kernels run at once), removed when it exits."""
    folder = tempfile.mkdtemp(prefix="benchreport-duckdb-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _staging(prefix: str, owner: object) -> tuple[Path, weakref.finalize]:
    """A temporary folder for ``owner``'s parts, removed with it (a sink dropped halfway,
    by an error in a later file) unless the finalizer is detached."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    return folder, weakref.finalize(owner, shutil.rmtree, folder, True)


def _part(folder: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    """One batch of rows as a Parquet part: the columns any row fills, each built as one
    list (whole numbers a column of integers, numbers with gaps one of floats, as the
    derived tables type them), text redacted as ``tables.write_rows`` does."""
    import pandas as pd

    from .tables import KEY_COLUMNS, nan_to_none, redacted, write_query

    filled = {k for r in rows for k, v in r.items() if v is not None}
    columns = table_columns(filled | {k for k in LEAD if k in rows[0]})
    data = {}
    for c in columns:
        values = [r.get(c) for r in rows]
        types = set(map(type, values))
        if any(issubclass(t, float) for t in types):
            values = [nan_to_none(v) for v in values]             # NaN: empty
        if c not in KEY_COLUMNS and any(issubclass(t, str | list | tuple) for t in types):
            values = [redacted(c, v) for v in values]
        data[c] = values
    con = _connect()
    con.register("frame", pd.DataFrame(data, columns=columns))
    select = ", ".join(f'CAST("{c}" AS {LIST_COLUMNS[c]}) AS "{c}"' if c in LIST_COLUMNS
                       else f'"{c}"' for c in columns)
    path = folder / name
    write_query(con, f"SELECT {select} FROM frame", path)
    return path


def _excerpt_part(path: Path, texts: dict[tuple[str, int], str]) -> Path:
    """Excerpt lines as a Parquet part: their texts are redacted already (``redact_line``,
    which also reads the line before), so they are stored as they are."""
    import pandas as pd

    from .tables import write_query

    frame = pd.DataFrame({"file": [f for f, _ in texts], "line": [n for _, n in texts],
                          "text": list(texts.values())})
    con = _connect()
    con.register("frame", frame)
    write_query(con, 'SELECT "file"::VARCHAR AS file, "line"::BIGINT AS line, '
                     '"text"::VARCHAR AS text FROM frame', path)
    return path


class RecordSink:
    """Takes records one at a time (``add``) and keeps at most ``batch`` rows of a kind in
    memory: a kind that reaches it is written out as a Parquet part and goes on in parts.
    ``finish`` gives the ``Records``; ``parts`` counts the rows of every part written."""

    def __init__(self, batch: int | None = None) -> None:
        self.batch = batch or BATCH_ROWS
        self.pending: dict[str, list[dict[str, Any]]] = {}
        self.large: dict[str, list[Path]] = {}
        self.order: list[str] = []
        self.folder: Path | None = None
        self.parts: list[int] = []

    def add(self, rec: dict[str, Any]) -> None:
        kind = rec["kind"]
        rows = self.pending.get(kind)
        if rows is None:
            rows = self.pending[kind] = []
            if kind not in self.large:
                self.order.append(kind)
        rows.append(rec)
        if len(rows) >= self.batch and kind not in KEEP_IN_MEMORY:
            self.flush(kind)

    def flush(self, kind: str) -> None:
        rows = self.pending.pop(kind, None)
        if not rows:
            return
        if self.folder is None:
            self.folder, self.cleanup = _staging("benchreport-records-", self)
        parts = self.large.setdefault(kind, [])
        parts.append(_part(self.folder, f"{kind}-{len(parts):06d}.parquet", rows))
        self.parts.append(len(rows))

    def lines(self, file: str) -> Iterator[int]:
        """The distinct lines of ``file`` that hold a record, ascending."""
        streams: list[Iterable[int]] = [sorted({r["line"] for rows in self.pending.values()
                                                for r in rows if r["file"] == file})]
        for kind, parts in self.large.items():
            cur = _connect().execute(f"SELECT DISTINCT line::BIGINT FROM read_parquet("
                                     f"{_quoted(parts)}, union_by_name=true) WHERE file = ? "
                                     "ORDER BY 1", [file])
            streams.append(int(n) for batch in iter(lambda c=cur: c.fetchmany(FETCH_ROWS), [])
                           for (n,) in batch)
        last = None
        for n in heapq.merge(*streams):
            if n != last:
                yield n
                last = n

    def finish(self) -> Records:
        for kind in list(self.large):
            self.flush(kind)
        small = {k: v for k, v in self.pending.items() if k not in self.large}
        if self.folder is not None:
            self.cleanup.detach()                # the Records owns the parts now
        return Records(small=small, large=self.large, order=self.order, folder=self.folder)


class Excerpts(Mapping):
    """The text of every line a figure can cite, by (file, line): a dict while few, else
    Parquet parts (during ingest) or the excerpts table (after it), looked up on demand."""

    def __init__(self, small: dict[tuple[str, int], str] | None = None,
                 parts: list[Path] | None = None, folder: Path | None = None) -> None:
        self.small = dict(small or {})
        self.parts = list(parts or [])
        self.cache: dict[tuple[str, int], str | None] = {}
        self.folder = folder
        if folder is not None:
            weakref.finalize(self, shutil.rmtree, folder, True)

    def _lookup(self, key: tuple[str, int]) -> str | None:
        if key in self.small or not self.parts:
            return self.small.get(key)
        if key not in self.cache:
            found = _connect().execute(f"SELECT text FROM read_parquet({_quoted(self.parts)}) "
                                       "WHERE file = ? AND line = ? LIMIT 1",
                                       [key[0], int(key[1])]).fetchone()
            self.cache[key] = found[0] if found else None
        return self.cache[key]

    def texts(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """The text of each of ``keys`` that has one, looked up in one query."""
        keys = set(keys)
        if not self.parts:
            return {k: self.small[k] for k in keys if k in self.small}
        con = _connect()
        con.execute("CREATE TEMP TABLE wanted (file VARCHAR, line BIGINT)")
        if keys:
            con.executemany("INSERT INTO wanted VALUES (?, ?)", sorted(keys))
        found = con.execute(f"SELECT p.file, p.line, p.text FROM read_parquet("
                            f"{_quoted(self.parts)}) p JOIN wanted w ON p.file = w.file AND "
                            "p.line = w.line").fetchall()
        out = {(f, int(n)): t for f, n, t in found}
        self.cache.update({k: out.get(k) for k in keys})
        return out

    def __getitem__(self, key: tuple[str, int]) -> str:
        text = self._lookup(key)
        if text is None:
            raise KeyError(key)
        return text

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self._lookup(key) is not None

    def __iter__(self) -> Iterator[tuple[str, int]]:
        yield from self.small
        for part in self.parts:
            cur = _connect().execute(f"SELECT file, line FROM read_parquet('{part}')")
            while batch := cur.fetchmany(FETCH_ROWS):
                yield from ((f, int(n)) for f, n in batch)

    def items(self) -> Iterator[tuple[tuple[str, int], str]]:   # type: ignore[override]
        """Every ((file, line), text), the parts read one batch at a time."""
        yield from self.small.items()
        for part in self.parts:
            cur = _connect().execute(f"SELECT file, line, text FROM read_parquet('{part}')")
            while batch := cur.fetchmany(FETCH_ROWS):
                yield from (((f, int(n)), t) for f, n, t in batch)

    def __len__(self) -> int:
        if not self.parts:
            return len(self.small)
        return len(self.small) + _connect().execute(
            f"SELECT count(*) FROM read_parquet({_quoted(self.parts)})").fetchone()[0]

    def write(self, path: Path) -> None:
        """The excerpts table, by file and line (parts hold one file's lines each, in
        order, and come sorted by file)."""
        from .tables import write_query, write_rows

        if not self.parts:
            write_rows(path, [{"file": f, "line": n, "text": t}
                              for (f, n), t in sorted(self.small.items())],
                       ["file", "line", "text"])
            return
        if self.small:
            raise ValueError("excerpts in memory beside parts: the sink flushes them all")
        write_query(_connect(), f"SELECT file, line, text FROM read_parquet({_quoted(self.parts)})",
                         path)


class ExcerptSink:
    """Takes excerpt lines one at a time (each file's in ascending order, one file after
    another), keeping at most ``batch`` in memory; a part holds the lines of one file."""

    def __init__(self, batch: int | None = None) -> None:
        self.batch = batch or BATCH_ROWS
        self.pending: dict[tuple[str, int], str] = {}
        self.parts: list[tuple[str, Path]] = []
        self.folder: Path | None = None

    def add(self, file: str, line: int, text: str) -> None:
        self.pending[(file, line)] = text
        if len(self.pending) >= self.batch:
            self.flush()

    def flush(self) -> None:
        if self.folder is None:
            self.folder, self.cleanup = _staging("benchreport-excerpts-", self)
        by_file: dict[str, dict[tuple[str, int], str]] = {}
        for key, text in self.pending.items():
            by_file.setdefault(key[0], {})[key] = text
        for file, texts in by_file.items():
            path = self.folder / f"excerpts-{len(self.parts):06d}.parquet"
            self.parts.append((file, _excerpt_part(path, texts)))
        self.pending = {}

    def finish(self) -> Excerpts:
        if not self.parts:
            return Excerpts(self.pending)
        if self.pending:
            self.flush()
        self.cleanup.detach()                    # the Excerpts owns the parts now
        ordered = sorted(range(len(self.parts)), key=lambda i: (self.parts[i][0], i))
        return Excerpts({}, [self.parts[i][1] for i in ordered], self.folder)
