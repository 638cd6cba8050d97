"""Ingest a run: every raw file into tidy per-kind tables, per-file summaries, and the
time window of each benchmark inside the (possibly much longer) server logs."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ..core.errors import ParseError, ReportError
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
from .parsers.anyfile import LAUNCH_SUFFIXES, RESULT_SUFFIXES
from .parsers.logscan import Summary
from .points import RESULT_SUFFIXES as POINT_SUFFIXES
from .points import load_points, point_row, request_row

BURST_GAP_S = 30.0       # idle seconds that separate two benchmarks in one log
MARGIN_S = 12.0          # a stats line printed up to one interval after the end still counts


def _log_like(raw: RawFile) -> bool:
    return not raw.path.name.lower().endswith(RESULT_SUFFIXES + LAUNCH_SUFFIXES) and \
        not is_metrics(raw.path)


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
            metrics = is_metrics(raw.path)
            if raw.path.name.lower().endswith(POINT_SUFFIXES) and not metrics:
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
            cited = None if raw.path.name.lower().endswith(LAUNCH_SUFFIXES) else {1} | {
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
    ing = Ingested(records=records, summaries=summaries, results=results, windows=[],
                   points=rows, requests=requests)
    return Ingested(records=records, summaries=summaries, results=results,
                    windows=find_windows(run, ing), excerpts=excerpts, points=rows,
                    requests=requests)


def line_texts(path, lines: set[int] | None, limit: int = EXCERPT_CHARS) -> dict[int, str]:
    """The text of the given 1-based lines of a file (all lines when ``lines`` is None),
    found by counting newlines block by block: only the wanted lines are decoded."""
    out: dict[int, str] = {}
    todo = sorted(lines) if lines is not None else None
    if todo is not None and not todo:
        return out
    block, number, carry = 8 << 20, 1, b""
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
                        out[n] = _text(whole[at:nl], limit)
                        if todo is not None:
                            todo.pop(0)
                            if not todo:
                                break
                    at = nl + 1
            number = ends
            if todo is not None and not todo:
                break
    if carry and (todo is None or (todo and todo[0] == number)):
        out[number] = _text(carry, limit)
    return out


def _text(raw: bytes, limit: int) -> str:
    text = raw.decode("utf-8", errors="replace").rstrip("\r")
    return text if len(text) <= limit else text[:limit] + "…"


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


def _iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def _bursts(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    rows = sorted((r for r in rows if r.get("ts")), key=lambda r: (r["ts"], r["line"]))
    bursts: list[list[dict[str, Any]]] = []
    last = None
    for r in rows:
        t = dt.datetime.fromisoformat(r["ts"])
        if last is None or (t - last).total_seconds() > BURST_GAP_S:
            bursts.append([])
        bursts[-1].append(r)
        last = t
    return bursts


def _burst_tokens(burst: list[dict[str, Any]]) -> float:
    if burst and burst[0]["kind"] == "engine_stats":
        total, prev = 0.0, None
        for r in burst:
            t = dt.datetime.fromisoformat(r["ts"])
            total += r["prompt_tps"] * ((t - prev).total_seconds() if prev else 10.0)
            prev = t
        return total
    return float(sum(r.get("new_token", 0) for r in burst if r["kind"] == "prefill_batch"))


def find_windows(run: Run, ing: Ingested) -> list[BenchWindow]:
    out = []
    for engine in run.meta.engines:
        mine = [e for e in ing.results if e.engine == engine.id]
        activity = [r for kind in ("engine_stats", "prefill_batch", "decode_batch")
                    for r in ing.records.get(kind, []) if r["engine"] == engine.id]
        bursts = _bursts(activity)
        used: set[int] = set()
        for entry in sorted(mine, key=lambda e: e.workload):
            explicit = run.meta.windows.get(engine.id, {}).get(entry.workload)
            if explicit:
                out.append(BenchWindow(engine.id, entry.workload, explicit["start"],
                                       explicit["end"], "run.yaml"))
                continue
            date = entry.date          # vLLM's date as ISO local time (clients/vllm.iso_date)
            if isinstance(date, str) and len(date) == 19:
                end = dt.datetime.fromisoformat(date)
                start = end - dt.timedelta(seconds=entry.duration + 1)
                out.append(BenchWindow(engine.id, entry.workload, _iso(start),
                                       _iso(end + dt.timedelta(seconds=MARGIN_S)),
                                       "result date"))
                continue
            want = entry.total_input_tokens or 0
            best = None
            for i, burst in enumerate(bursts):
                if i in used or not want:
                    continue
                miss = abs(_burst_tokens(burst) - want) / want
                if miss <= 0.10 and (best is None or miss < best[0]):
                    best = (miss, i)
            if best is None:
                continue          # no log for this benchmark: sections that need one say so
            used.add(best[1])
            burst = bursts[best[1]]
            start = dt.datetime.fromisoformat(burst[0]["ts"]) - dt.timedelta(seconds=2)
            end = dt.datetime.fromisoformat(burst[-1]["ts"]) + dt.timedelta(seconds=2)
            out.append(BenchWindow(engine.id, entry.workload, _iso(start), _iso(end),
                                   "activity burst"))
    return _clipped(out)


def _clipped(windows: list[BenchWindow]) -> list[BenchWindow]:
    """A window found from a result's date keeps a margin after its end for a late stats
    line; where the engine's next benchmark starts inside that margin, the window ends the
    second before, so no record of the next benchmark is counted in this one. Windows that
    run.yaml states are kept as stated."""
    out = []
    for w in windows:
        later = [x.start for x in windows if x.engine == w.engine and x.start > w.start]
        if later and w.source != "run.yaml" and min(later) <= w.end:
            cut = dt.datetime.fromisoformat(min(later)) - dt.timedelta(seconds=1)
            w = BenchWindow(w.engine, w.workload, w.start, max(w.start, _iso(cut)), w.source)
        out.append(w)
    return out


def _inputs(run: Run) -> list[dict[str, Any]]:
    """Every input file of the run with its checksum and role."""
    roles = {"run.yaml": "run", "claims.yaml": "claims", "SHA256SUMS": "checksums"}
    out = []
    for path in sorted(p for p in run.paths.data.rglob("*") if p.is_file()):
        name = path.name.lower()
        role = roles.get(path.name) or ("scenario" if path.parent == run.paths.data
                                        and name.endswith((".yaml", ".yml")) else
                                        "result" if name.endswith(RESULT_SUFFIXES) else
                                        "launch" if name.endswith(LAUNCH_SUFFIXES) else
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
    write_rows(folder / "windows.parquet", [w.__dict__ for w in ing.windows],
               ["engine", "workload", "start", "end", "source"])
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
    write_json(run.paths.windows_json, [w.__dict__ for w in ing.windows])
    return [run.paths.rel(p) for p in written] + [
        run.paths.rel(run.paths.ingest_json),
        run.paths.rel(run.paths.windows_json)]


def check_windows(run: Run, ing: Ingested) -> None:
    """A benchmark whose engine has a log but no window found is worth stopping for."""
    for engine in run.meta.engines:
        has_log = any(r["engine"] == engine.id for k in ("engine_stats", "prefill_batch")
                      for r in ing.records.get(k, []))
        if not has_log:
            continue
        for entry in (e for e in ing.results if e.engine == engine.id):
            if not any(w.engine == engine.id and w.workload == entry.workload
                       for w in ing.windows):
                raise ReportError(
                    f"cannot find the {entry.workload} benchmark in {engine.id}'s log",
                    path=entry.file.rel,
                    hint=f"give its time span in run.yaml: windows: {{{engine.id}: "
                         f"{{{entry.workload}: {{start: ..., end: ...}}}}}}")
