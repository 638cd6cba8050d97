"""Reading a run's inputs: run.yaml and the raw files of each engine (benchmark results are
read by ``points``/``clients``). Ingest is the only step that uses it; later steps read the
derived tables."""

from __future__ import annotations

import io as _io
import re
from pathlib import Path

from ..core.files import (  # noqa: F401 (re-exported)
    looks_binary,
    read_json,
    read_text,
    sha256_file,
    write_json,
    write_text_atomic,
)
from ..core.records import RawFile, Run  # noqa: F401 (re-exported)
from ..core.runmeta import Workload, load_run  # noqa: F401 (re-exported)


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


