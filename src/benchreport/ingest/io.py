"""Reading a run's inputs: run.yaml, the raw files of each engine, benchmark results.
Ingest is the only step that uses it; later steps read the derived tables."""

from __future__ import annotations

import io as _io
import re
from pathlib import Path

from ..core.errors import MissingInputError, ParseError, ReportError
from ..core.files import (  # noqa: F401 (re-exported)
    looks_binary,
    read_json,
    read_text,
    sha256_file,
    write_json,
    write_text_atomic,
)
from ..core.records import BenchResult, RawFile, ResultEntry, Run  # noqa: F401 (re-exported)
from ..core.runmeta import Workload, load_run  # noqa: F401 (re-exported)
from .parsers import parse_results


def raw_files(run: Run, engine: str) -> list[RawFile]:
    """The files under raw/<engine>/, sorted by name; hidden files are skipped."""
    folder = run.paths.raw / engine
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        out.append(RawFile(path=path, rel=run.paths.rel(path), sha256=sha256_file(path)))
    return out


def _is_result_candidate(path: Path) -> bool:
    return path.suffix.lower() in (".json", ".jsonl")


def _match_workload(result: BenchResult, workloads: tuple[Workload, ...]) -> Workload | None:
    """The workload whose input length is within 10% of the record's mean input length."""
    mean_input = None
    if isinstance(result.raw.get("random_input_len"), int):
        mean_input = float(result.raw["random_input_len"])
    elif result.total_input_tokens and result.completed:
        mean_input = result.total_input_tokens / result.completed
    if mean_input is None:
        return None
    best = min(workloads, key=lambda w: abs(w.input_tokens - mean_input))
    if abs(best.input_tokens - mean_input) <= 0.10 * best.input_tokens:
        return best
    return None


def load_results(run: Run, warnings: list[str] | None = None) -> list[ResultEntry]:
    """Every benchmark result record of the run, matched to engine (folder) and workload.

    Raises ParseError for a file that is not a result (or that belongs to another engine's
    folder), MissingInputError when the run has no result at all, and ReportError for two
    records of one engine and workload. A broken line in a JSON Lines file that also holds
    good records is skipped and reported in ``warnings`` ("file:line: message").
    """
    from .parsers.anyfile import engine_of_result

    entries: list[ResultEntry] = []
    seen: dict[tuple[str, str], str] = {}
    ids = {e.id: e for e in run.meta.engines}
    for engine in run.meta.engines:
        for raw in raw_files(run, engine.id):
            if not _is_result_candidate(raw.path):
                continue
            with open(raw.path, "rb") as fh:
                if looks_binary(fh.read(65536)):
                    raise ParseError("binary content, expected a benchmark result (JSON or "
                                     "JSON Lines)", path=raw.rel)
            text = read_text(raw.path, raw.rel)
            notes = warnings if warnings is not None else []
            for result in parse_results(_io.StringIO(text), raw.rel, warn=lambda n, m, r=raw:
                                        notes.append(f"{r.rel}:{n}: {m}")):
                other = engine_of_result(result)
                if other != engine.id and other in ids and engine.id in ("vllm", "sglang"):
                    raise ParseError(
                        f"a result of {ids[other].name} (backend {result.backend!r}) in "
                        f"{engine.name}'s folder raw/{engine.id}/",
                        path=raw.rel, line=result.line,
                        hint=f"move it to raw/{other}/")
                workload = _match_workload(result, run.meta.workloads)
                if workload is None:
                    known = ", ".join(f"{w.id}={w.input_tokens}" for w in run.meta.workloads)
                    raise ParseError(
                        "result's input length matches no workload of run.yaml "
                        f"(known input_tokens: {known})", path=raw.rel, line=result.line)
                key = (engine.id, workload.id)
                here = f"{raw.rel}:{result.line}"
                if key in seen:
                    raise ReportError(
                        f"two results for engine {engine.id!r} and workload {workload.id!r}: "
                        f"{seen[key]} and {here}",
                        hint="keep one result per engine and workload under raw/<engine>/")
                seen[key] = here
                entries.append(ResultEntry(engine=engine.id, workload=workload.id,
                                           result=result, file=raw))
    if not entries:
        raise MissingInputError(
            f"no benchmark result files under {run.paths.rel(run.paths.raw)}/<engine>/",
            hint="put each engine's result JSON/JSONL in raw/<engine-id>/ as listed in run.yaml")
    return entries


PARALLEL_MIN_BYTES = 32 << 20     # below this, one process is faster than starting two


class _Bounded(_io.RawIOBase):
    """A read-only window [start, start + length) of an open binary file."""

    def __init__(self, fh, length: int) -> None:
        self.fh, self.left = fh, length

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.fh.read(n)
        self.left -= len(data)
        return data


def _scan_part(args: tuple) -> tuple[list[dict], object]:
    from .parsers.logscan import Summary, scan

    path, shown, engine, year, start, end = args
    summary = Summary(file=shown, engine=engine)
    with open(path, "rb") as fh:
        fh.seek(start)
        records = list(scan(_Bounded(fh, end - start), shown, engine, year, summary,
                            rollover=False))
    return records, summary


def _cuts(path: Path, size: int, parts: int) -> list[int]:
    """Byte offsets that split the file into ``parts`` ranges at line starts."""
    cuts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            fh.seek(size * k // parts)
            fh.readline()                          # move to the next line start
            cuts.append(max(cuts[-1], fh.tell()))
    return cuts + [size]


def is_metrics(path: Path) -> bool:
    """A Prometheus /metrics dump (text exposition, or AIPerf's server-metrics JSONL)."""
    from .parsers.prometheus import sniff

    with open(path, "rb") as fp:
        return sniff(fp, path.name) is not None


def is_structured(head: bytes, name: str) -> bool:
    """JSON or YAML (read whole, in one process), as opposed to a log (scanned in parts).
    A JSON array starts with "[" and a value; so does every SGLang log line ("[2026-…")."""
    start = head.lstrip()
    return start[:1] == b"{" or re.match(rb"\[\s*[{\]\"]", start) is not None or \
        name.lower().endswith((".json", ".jsonl", ".yaml", ".yml", ".prom"))


def read_raw(path: Path, shown: str, engine: str = "auto", year: int | None = None,
             summary=None, workers: int = 2) -> list[dict]:
    """Records of one raw file (result, launch configuration or server log).

    A large log is scanned in ``workers`` processes over byte ranges cut at line starts;
    line numbers, counts and the New Year rollover of year-less stamps are then joined in
    file order, so the result is the same as one process would give.
    """
    from .parsers.anyfile import parse_any
    from .parsers.logscan import BLOCK, Summary, detect_engine, file_checks, roll_years

    summary = summary if summary is not None else Summary(file=shown, engine=engine)
    size = path.stat().st_size
    with open(path, "rb") as fp:
        head = fp.read(BLOCK)
        fp.seek(0)
        structured = is_structured(head, path.name)
        if size < PARALLEL_MIN_BYTES or workers < 2 or structured:
            records = list(parse_any(fp, shown, engine, year, summary))
            file_checks(records, summary)
            return records
    if engine == "auto":
        engine = detect_engine(head, shown)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    cuts = _cuts(path, size, workers)
    jobs = [(str(path), shown, engine, year, a, b) for a, b in zip(cuts, cuts[1:], strict=False)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        parts = list(pool.map(_scan_part, jobs))
    records: list[dict] = []
    offset = 0
    summary.engine = engine
    for part_records, part in parts:
        for rec in part_records:
            rec["line"] += offset
        records += part_records
        summary.merge(part, offset)
        offset += part.lines
    if year is not None:
        roll_years(records, year)
    for rec in records:
        rec.pop("_yearless", None)
    file_checks(records, summary)
    return records


