"""Ingest a run: every raw file into tidy per-kind tables, per-file summaries, and the
time window of each benchmark inside the (possibly much longer) server logs."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ..core.errors import ParseError
from ..core.redact import redact_line
from ..core.records import LEAD, BenchWindow, Ingested, PointResult  # noqa: F401 (re-exported)
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
    raw_files,
    read_raw,
    sha256_file,
    write_json,
)
from .parsers.anyfile import RESULT_SUFFIXES, is_launch
from .parsers.logscan import Summary
from .points import RESULT_SUFFIXES as POINT_SUFFIXES
from .points import load_points, point_row, request_row
from .windows import attach_notes, check_windows, find_windows  # noqa: F401 (re-exported)



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
    of those rows. Logs and launch configurations go through the streaming parsers."""
    result_notes: list[str] = []
    points = load_points(run, result_notes)
    records: dict[str, list[dict[str, Any]]] = {}
    summaries = []
    excerpts: dict[tuple[str, int], str] = {}
    year = run.meta.date.year if run.meta.date else dt.date.today().year
    for engine in run.meta.engines:
        for raw in raw_files(run, engine.id):
            if _a_result(run, raw):
                continue          # already read, with workload matching, by load_points
            summary = Summary(file=raw.rel, engine="auto")
            wanted = engine.id if engine.id in ("vllm", "sglang") and _log_like(raw) else "auto"
            if wanted != "auto":
                _check_log_engine(raw, engine.id, engine.name)
            for rec in read_raw(raw.path, raw.rel, wanted, year, summary):
                if rec["kind"] == "metric":       # labels as JSON text: one column type
                    rec = {**rec, "labels": json.dumps(rec["labels"], sort_keys=True)}
                    if rec.get("ts") is None:     # a dump with no time: run.yaml's scrapes
                        named = raw.path.relative_to(run.paths.raw / engine.id).as_posix()
                        rec["ts"] = run.meta.scrapes.get(engine.id, {}).get(named)
                records.setdefault(rec["kind"], []).append(
                    {"engine": engine.id, "file": raw.rel, "sha256": raw.sha256, **rec})
            summaries.append({**summary.to_json(), "engine_folder": engine.id,
                              "sha256": raw.sha256})
            cited = None if is_launch(raw.path) else {1} | {
                r["line"] for rs in records.values() for r in rs if r["file"] == raw.rel}
            excerpts.update(((raw.rel, n), text)
                            for n, text in line_texts(raw.path, cited).items())
    for path in sorted(run.paths.data.glob("*.yaml")):     # run.yaml, claims.yaml, …
        excerpts.update(((run.paths.rel(path), n), text)
                        for n, text in line_texts(path, None).items())
    for entry in points:
        mine = [n for n in result_notes if n.startswith(f"{entry.file.rel}:")]
        summaries.append({"file": entry.file.rel, "engine": entry.engine,
                          "engine_folder": entry.engine, "lines": None, "unrecognised": 0,
                          "counts": {"bench_result": 1}, "warnings": mine,
                          "sha256": entry.file.sha256, "workload": entry.workload,
                          "record_line": entry.point.line, "point": entry.id,
                          "client": entry.point.client})
    rows = [point_row(e) for e in points]
    requests = [request_row(e, i, r) for e in points for i, r in enumerate(e.point.requests)]
    results = single_point_results(run, rows, requests)
    notes: list[str] = []
    found = find_windows(run, records, points, notes, warmup=declared_warmup(run))
    attach_notes(summaries, notes)
    return Ingested(records=records, summaries=summaries, results=results,
                    windows=[w for w in found if w.level == "workload"],
                    excerpts=excerpts, points=rows, requests=requests,
                    point_windows=[w for w in found if w.level == "point"])


def line_texts(path, lines: set[int] | None, limit: int = EXCERPT_CHARS) -> dict[int, str]:
    """The text of the given 1-based lines of a file (all lines when ``lines`` is None),
    found by counting newlines block by block: only the wanted lines are decoded."""
    out: dict[int, str] = {}
    todo = sorted(lines) if lines is not None else None
    if todo is not None and not todo:
        return out
    block, number, carry, previous = 8 << 20, 1, b"", b""
    with open(path, "rb") as fh:
        while True:
            data = fh.read(block)
            if not data:
                break
            data = carry + data
            last = data.rfind(b"\n")
            if last == -1:
                carry = data
                continue
            whole, carry = data[: last + 1], data[last + 1:]
            ends = number + whole.count(b"\n")
            if todo is None or (todo and todo[0] < ends):
                at = 0
                for n in range(number, ends):
                    nl = whole.find(b"\n", at)
                    if todo is None or n == todo[0]:
                        out[n] = _text(whole[at:nl], limit, previous)
                        if todo is not None:
                            todo.pop(0)
                            if not todo:
                                break
                    previous = whole[at:nl]
                    at = nl + 1
            previous = whole[whole.rfind(b"\n", 0, len(whole) - 1) + 1: -1]
            number = ends
            if todo is not None and not todo:
                break
    if carry and (todo is None or (todo and todo[0] == number)):
        out[number] = _text(carry, limit, previous)
    return out


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
    for kind in sorted(ing.records):
        path = folder / f"records_{kind}.parquet"
        columns = [c for c in ing.table(kind).columns if c not in SETTING_FIELDS]
        write_rows(path, ing.records[kind], columns, LIST_COLUMNS)
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
    write_rows(folder / "excerpts.parquet",
               [{"file": f, "line": n, "text": t} for (f, n), t in sorted(ing.excerpts.items())],
               ["file", "line", "text"])
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
