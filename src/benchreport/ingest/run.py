"""Ingest a run: every raw file into tidy per-kind tables, per-file summaries, and the
time window of each benchmark inside the (possibly much longer) server logs."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core.errors import ParseError
from ..core.records import LEAD, BenchWindow, Ingested, PointResult  # noqa: F401 (re-exported)
from ..core.recordset import Excerpts, ExcerptSink, Records, RecordSink
from ..core.redact import redact_line
from ..core.tables import (  # noqa: F401 (the loader, re-exported for callers of ingest)
    EXCERPT_CHARS,
    LIST_COLUMNS,
    REQUEST_COLUMNS,
    REQUEST_TYPES,
    SETTING_FIELDS,
    input_checksum,
    load_ingested,
    read_rows,
    single_point_results,
    warnings_of,
    write_points,
    write_rows,
    write_settings,
)
from .io import (
    RawFile,
    Run,
    is_metrics,
    iter_raw,
    raw_files,
    read_raw,  # noqa: F401 (re-exported)
    sha256_file,
    write_json,
)
from .parsers.anyfile import RESULT_SUFFIXES, is_launch
from .parsers.logscan import Summary
from .points import RESULT_SUFFIXES as POINT_SUFFIXES
from .points import load_points, point_row, request_row
from .windows import attach_notes, check_windows, find_windows  # noqa: F401 (re-exported)

__all__ = ["BenchWindow", "EXCERPT_CHARS", "Ingested", "LEAD", "LIST_COLUMNS", "PointResult",
           "REQUEST_COLUMNS", "REQUEST_TYPES", "RawFile", "Run", "SETTING_FIELDS", "TEXT_BLOCK",
           "attach_notes", "check_windows", "declared_warmup", "find_windows", "ingest_log",
           "ingest_run", "input_checksum", "is_metrics", "iter_line_texts", "iter_raw",
           "line_texts", "load_ingested", "raw_files", "read_raw", "read_rows", "save_ingest",
           "sha256_file", "single_point_results", "warnings_of", "write_json", "write_points",
           "write_rows", "write_settings"]


def _a_result(run: Run, raw: RawFile) -> bool:
    """A result file (a known client's by its suffix, or one run.yaml's declared client
    matches by name): load_points reads it, never the log and launch parsers."""
    if run.meta.client is not None and run.meta.client.entry(raw.path.name) is not None:
        return True
    return raw.path.name.lower().endswith(POINT_SUFFIXES) and not is_metrics(raw.path)


def _log_like(raw: RawFile) -> bool:
    return not raw.path.name.lower().endswith(RESULT_SUFFIXES) and \
        not is_launch(raw.path) and not is_metrics(raw.path)


def declared_warmup(run: Run) -> int | None:
    """The requests a declared client sent before its first record (its first file entry
    that says so, 0 when none does), for placing its points by request count; None for a
    run without a declared client (its points are placed by time only)."""
    client = run.meta.client
    if client is None:
        return None
    return next((f.warmup_requests for f in client.files if f.warmup_requests is not None), 0)


def ingest_run(run: Run) -> Ingested:
    """Read every raw file of the run. Result files of every client become points (matched
    to the campaign by load_points) and their requests; the single-point results are views
    of those rows. Logs and launch configurations go through the streaming parsers, whose
    records stream into a ``RecordSink`` (memory flat however many records a log holds)."""
    result_notes: list[str] = []
    points = load_points(run, result_notes)
    sink, cited = RecordSink(), ExcerptSink()
    summaries = []
    year = run.meta.date.year if run.meta.date else dt.date.today().year
    for engine in run.meta.engines:
        for raw in raw_files(run, engine.id):
            if _a_result(run, raw):
                continue          # already read, with workload matching, by load_points
            summary = _ingest_file(run, engine, raw, year, sink)
            summaries.append({**summary.to_json(), "engine_folder": engine.id,
                              "sha256": raw.sha256})
            lines = None if is_launch(raw.path) else _and_first(sink.lines(raw.rel))
            for n, text in iter_line_texts(raw.path, lines):
                cited.add(raw.rel, n, text)
    for path in sorted(run.paths.data.glob("*.yaml")):     # run.yaml, claims.yaml, …
        for n, text in iter_line_texts(path, None):
            cited.add(run.paths.rel(path), n, text)
    summaries += [_point_summary(entry, result_notes) for entry in points]
    records = sink.finish()
    rows = [point_row(e) for e in points]
    requests = [request_row(e, i, r) for e in points for i, r in enumerate(e.point.requests)]
    results = single_point_results(run, rows, requests)
    notes: list[str] = []
    found = find_windows(run, records, points, notes, warmup=declared_warmup(run))
    attach_notes(summaries, notes)
    return Ingested(records=records, summaries=summaries, results=results,
                    windows=[w for w in found if w.level == "workload"],
                    excerpts=cited.finish(), points=rows, requests=requests,
                    point_windows=[w for w in found if w.level == "point"])


def _point_summary(entry, result_notes: list[str]) -> dict[str, Any]:
    """What ingest.json says of a result file: the point it holds and its warnings."""
    return {"file": entry.file.rel, "engine": entry.engine, "engine_folder": entry.engine,
            "lines": None, "unrecognised": 0, "counts": {"bench_result": 1},
            "warnings": [n for n in result_notes if n.startswith(f"{entry.file.rel}:")],
            "sha256": entry.file.sha256, "workload": entry.workload,
            "record_line": entry.point.line, "point": entry.id, "client": entry.point.client}


def _ingest_file(run: Run, engine, raw: RawFile, year: int, sink: RecordSink) -> Summary:
    """Stream one raw file's records into ``sink``; return what the file held."""
    summary = Summary(file=raw.rel, engine="auto")
    wanted = engine.id if engine.id in ("vllm", "sglang") and _log_like(raw) else "auto"
    if wanted != "auto":
        _check_log_engine(raw, engine.id, engine.name)
    for rec in iter_raw(raw.path, raw.rel, wanted, year, summary):
        if rec["kind"] == "metric":       # labels as JSON text: one column type
            rec = {**rec, "labels": json.dumps(rec["labels"], sort_keys=True)}
            if rec.get("ts") is None:     # a dump with no time: run.yaml's scrapes
                named = raw.path.relative_to(run.paths.raw / engine.id).as_posix()
                rec["ts"] = run.meta.scrapes.get(engine.id, {}).get(named)
        sink.add({"engine": engine.id, "file": raw.rel, "sha256": raw.sha256, **rec})
    return summary


def ingest_log(path: Path, engine: str, folder: Path, year: int | None = None) -> tuple[int, int]:
    """Ingest one server log on its own, as a build does (records streamed to
    ``folder``'s ``records_<kind>`` tables, its excerpts to ``excerpts``); return its lines
    and records. The stats-log benchmark measures this."""
    summary = Summary(file=path.name, engine=engine)
    sink, cited = RecordSink(), ExcerptSink()
    for rec in iter_raw(path, path.name, engine, year, summary):
        sink.add({"engine": engine, "file": path.name, "sha256": "", **rec})
    for n, text in iter_line_texts(path, _and_first(sink.lines(path.name))):
        cited.add(path.name, n, text)
    records = sink.finish()
    folder.mkdir(parents=True, exist_ok=True)
    for kind in records:
        records.write_table(kind, folder / f"records_{kind}.parquet")
    cited.finish().write(folder / "excerpts.parquet")
    return summary.lines, sum(summary.counts.values())


TEXT_BLOCK = 8 << 20      # bytes read at a time when excerpts are taken from a file


def _and_first(lines: Iterable[int]) -> Iterator[int]:
    """Line 1 (every log's excerpts start there), then the ascending ``lines``."""
    return itertools.chain([1], (n for n in lines if n != 1))


def line_texts(path, lines: set[int] | None, limit: int = EXCERPT_CHARS) -> dict[int, str]:
    """The text of the given 1-based lines of a file (all lines when ``lines`` is None)."""
    return dict(iter_line_texts(path, None if lines is None else sorted(lines), limit))


def iter_line_texts(path, lines: Iterable[int] | None,
                    limit: int = EXCERPT_CHARS) -> Iterator[tuple[int, str]]:
    """(line, text) of the given 1-based lines of a file, ascending (every line when
    ``lines`` is None), found by counting newlines block by block: only the wanted lines
    are decoded, and ``lines`` (ascending) is taken as it is needed."""
    todo = None if lines is None else _Wanted(lines)
    if todo is not None and todo.next is None:
        return
    number, carry, previous = 1, b"", b""
    with open(path, "rb") as fh:
        while data := fh.read(TEXT_BLOCK):
            data = carry + data
            last = data.rfind(b"\n")
            if last == -1:
                carry = data
                continue
            whole, carry = data[: last + 1], data[last + 1:]
            ends = number + whole.count(b"\n")
            if todo is None or (todo.next is not None and todo.next < ends):
                yield from _block_texts(whole, number, ends, todo, limit, previous)
            previous = whole[whole.rfind(b"\n", 0, len(whole) - 1) + 1: -1]
            number = ends
            if todo is not None and todo.next is None:
                return
    if carry and (todo is None or todo.next == number):
        yield number, _text(carry, limit, previous)


class _Wanted:
    """An ascending stream of line numbers, looked at one at a time."""

    def __init__(self, lines: Iterable[int]) -> None:
        self.rest = iter(lines)
        self.next = next(self.rest, None)

    def take(self) -> None:
        self.next = next(self.rest, None)


def _block_texts(whole: bytes, number: int, ends: int, todo: _Wanted | None, limit: int,
                 previous: bytes) -> Iterator[tuple[int, str]]:
    """The wanted lines among the whole lines of one block (its first is ``number``)."""
    at = 0
    for n in range(number, ends):
        nl = whole.find(b"\n", at)
        if todo is None or n == todo.next:
            yield n, _text(whole[at:nl], limit, previous)
            if todo is not None:
                todo.take()
                if todo.next is None:
                    return
        previous = whole[at:nl]
        at = nl + 1


def _text(raw: bytes, limit: int, previous: bytes = b"") -> str:
    """A line as an excerpt: redacted (``core.redact``, which also looks at the line
    before: a flag's value may stand on the next line) before it is cut, so a secret that
    straddles the cut is never left half shown (a huge line: its head, with room for a
    long token, is redacted)."""
    text = raw[: 16 * limit].decode("utf-8", errors="replace").rstrip("\r")
    before = previous[:400].decode("utf-8", errors="replace").rstrip("\r")
    head = redact_line(text[: 4 * limit], before)
    return head if len(head) <= limit and len(text) <= 4 * limit else head[:limit] + "…"


def _check_log_engine(raw: RawFile, engine_id: str, engine_name: str) -> None:
    """A server log under raw/<engine>/ must be that engine's log (by its line prefixes)."""
    from ..core.files import looks_binary
    from .parsers.logscan import BLOCK, detect_engine

    with open(raw.path, "rb") as fh:
        head = fh.read(BLOCK)
    if head.strip() and looks_binary(head):
        raise ParseError("binary content, expected a server log", path=raw.rel)
    found = detect_engine(head, raw.rel)
    if found != engine_id:
        names = {"vllm": "vLLM", "sglang": "SGLang"}
        raise ParseError(f"this is {names[found]}'s server log (by its line prefixes), in "
                         f"{engine_name}'s folder raw/{engine_id}/", path=raw.rel,
                         hint="move it to the folder of the engine that wrote it")




def _inputs(run: Run) -> list[dict[str, Any]]:
    """Every input file of the run with its checksum and role."""
    roles = {"run.yaml": "run", "claims.yaml": "claims", "SHA256SUMS": "checksums"}
    out = []
    for path in sorted(p for p in run.paths.data.rglob("*") if p.is_file()):
        name = path.name.lower()
        role = roles.get(path.name) or ("scenario" if path.parent == run.paths.data
                                        and name.endswith((".yaml", ".yml")) else
                                        "result" if name.endswith(RESULT_SUFFIXES) else
                                        "launch" if is_launch(path) else
                                        "log" if path.parent.parent == run.paths.raw
                                        else "other")
        out.append({"path": run.paths.rel(path), "sha256": sha256_file(path), "role": role})
    return out


def save_ingest(run: Run, ing: Ingested) -> list[str]:
    """Write the derived tables (derived/tables/*.parquet, see ``tables``),
    derived/ingest.json (what each file held), derived/windows.json, and byte copies of the
    run's description files in derived/inputs/ (the steps after ingest read those)."""
    folder = run.paths.tables
    written = []
    for old in folder.glob("*.csv") if folder.is_dir() else []:
        old.unlink()                  # an earlier build's CSV tables
    records = Records.of(ing.records)
    for kind in sorted(records):
        path = folder / f"records_{kind}.parquet"
        records.write_table(kind, path)
        written.append(path)
    write_settings(folder / "settings.parquet", ing.records)
    written.append(folder / "settings.parquet")
    write_points(folder / "points.parquet", ing.points)
    write_rows(folder / "requests.parquet", ing.requests, list(REQUEST_COLUMNS), REQUEST_TYPES)
    written += [folder / "points.parquet", folder / "requests.parquet"]
    write_rows(folder / "windows.parquet",
               [w.__dict__ for w in ing.windows + ing.point_windows],
               ["engine", "workload", "start", "end", "source", "method", "file",
                "first_line", "last_line", "point", "level"])
    write_rows(folder / "inputs.parquet", _inputs(run), ["path", "sha256", "role"])
    excerpts = ing.excerpts if isinstance(ing.excerpts, Excerpts) else Excerpts(ing.excerpts)
    excerpts.write(folder / "excerpts.parquet")
    for old in (folder / "results.parquet",):
        old.unlink(missing_ok=True)       # an earlier build's table, now a view of points
    written += [folder / "windows.parquet",
                folder / "inputs.parquet", folder / "excerpts.parquet"]
    copies = run.paths.inputs_copy
    copies.mkdir(parents=True, exist_ok=True)
    for old in copies.iterdir():
        old.unlink()
    for path in sorted(run.paths.data.glob("*.yaml")):     # run.yaml, claims.yaml, scenario
        (copies / path.name).write_bytes(path.read_bytes())
        written.append(copies / path.name)
    write_json(run.paths.ingest_json, {"run_id": run.id, "files": sorted(
        ing.summaries, key=lambda s: s["file"])})
    write_json(run.paths.windows_json, [w.__dict__ for w in ing.windows + ing.point_windows])
    return [run.paths.rel(p) for p in written] + [
        run.paths.rel(run.paths.ingest_json),
        run.paths.rel(run.paths.windows_json)]
