"""Reading a run's inputs: run.yaml and the raw files of each engine (benchmark results are
read by ``points``/``clients``). Ingest is the only step that uses it; later steps read the
derived tables."""

from __future__ import annotations

import gc
import importlib
import io as _io
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import collector

if TYPE_CHECKING:        # re-exported, but imported on first use (``__getattr__``)
    from ..core.files import (
        looks_binary,
        read_json,
        read_text,
        sha256_file,
        write_json,
        write_text_atomic,
    )
    from ..core.records import RawFile, Run
    from ..core.runmeta import Workload, load_run

__all__ = ["PARALLEL_MIN_BYTES", "RawFile", "Run", "SPILL_ROWS", "Workload", "is_metrics",
           "is_structured", "iter_raw", "load_run", "looks_binary", "raw_files", "read_json",
           "read_raw", "read_text", "sha256_file", "write_json", "write_text_atomic"]

# Names re-exported from core, imported when first asked for: reading a log needs none of
# them, and their imports (yaml, hashlib, tempfile, …) took a twentieth of a second, a
# twentieth of the whole ingest of a 1 GiB log on two cores.
_REEXPORTED = {"looks_binary": "files", "read_json": "files", "read_text": "files",
               "sha256_file": "files", "write_json": "files", "write_text_atomic": "files",
               "RawFile": "records", "Run": "records", "Workload": "runmeta",
               "load_run": "runmeta"}


def __getattr__(name: str) -> object:
    """A re-exported name (``_REEXPORTED``), imported from its core module on first use."""
    if name not in _REEXPORTED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"..core.{_REEXPORTED[name]}", __package__), name)
    globals()[name] = value
    return value


def raw_files(run: Run, engine: str) -> list[RawFile]:
    """The files under raw/<engine>/, sorted by name; hidden files are skipped."""
    from ..core.files import sha256_file
    from ..core.records import RawFile

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


SPILL_ROWS = 5000        # records a helper process pickles at a time


class _Helper:
    """A forked process that scans one byte range of a log (``_helper_main``). It writes
    its records to an unnamed spill file in pickled batches of SPILL_ROWS, and after each
    batch a note (kind, length) to a pipe; this process reads the batches as the notes come,
    while the helper goes on scanning. No process holds all the records.

    A plain fork: the pool of ``concurrent.futures`` took 0.03 s to import, before any
    helper could start."""

    def __init__(self, path: Path, shown: str, engine: str, year: int | None, start: int,
                 end: int) -> None:
        import tempfile

        self.spill = tempfile.TemporaryFile()   # gone with its last handle, whatever happens
        read, write = os.pipe()
        # Ctrl-C is blocked across the fork: the child, a copy of the build's stack, ignores
        # it before it unblocks (the build stops it), so it never unwinds the build's code
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            os.close(read)
            os.close(write)
            self.spill.close()
            raise
        if self.pid == 0:                        # the helper: never returns
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            os.close(read)
            _helper_main(write, self.spill.fileno(), (path, shown, engine, year, start, end))
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        os.close(write)
        self.notes = os.fdopen(read, "rb")
        self.summary = None
        self.offset = 0                          # where the next batch starts in the spill

    def records(self) -> Iterator[dict]:
        """The helper's records, batch by batch as it writes them; then its ``Summary``
        is in ``summary``. An exception the helper raised is raised here."""
        import pickle

        while True:
            kind, data = self._next()
            if kind != b"R":
                break
            with collector.paused():
                batch = pickle.loads(data)
            yield from batch
        self.wait()
        if kind == b"E":
            raise pickle.loads(data)
        self.summary = pickle.loads(data)

    def _next(self) -> tuple[bytes, bytes]:
        """The next note's kind and the pickle it announces (waiting for it)."""
        note = self.notes.read(_NOTE)
        length = int.from_bytes(note[1:], "little")
        data = os.pread(self.spill.fileno(), length, self.offset) if len(note) == _NOTE else b""
        if len(data) < length or len(note) < _NOTE:
            raise RuntimeError(f"the helper process {self.pid} stopped before the end of "
                               "its part of the log")
        self.offset += length
        return note[:1], data

    def wait(self, stop: bool = False) -> None:
        """Wait for the helper to end (``stop``: end it first, if it has not yet)."""
        if self.pid:
            if stop:
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = 0
            self.notes.close()
            self.spill.close()


_NOTE = 9                # a helper's note: a kind (R records, S summary, E error), a length


def _helper_main(notes: int, spill: int, job: tuple) -> None:
    """The body of a helper process: scan, write the batches, the summary (or the error),
    and exit without returning to the caller's code."""
    import pickle

    gc.disable()        # a short life that leaves no cycles behind (``core.collector``)
    status = 1
    try:
        with open(spill, "wb", closefd=False) as out:

            def send(kind: bytes, value: object) -> None:
                data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                out.write(data)
                out.flush()
                os.write(notes, kind + len(data).to_bytes(_NOTE - 1, "little"))

            try:
                send(b"S", _scan_part(job, lambda batch: send(b"R", batch)))
            except Exception as exc:             # raised again in the parent
                send(b"E", exc)
        status = 0
    finally:
        os._exit(status)


def _scan_part(job: tuple, send) -> object:
    """Scan one byte range of a log, handing its records to ``send`` in batches of
    SPILL_ROWS; the range's ``Summary``."""
    from .parsers.logscan import Summary, scan

    path, shown, engine, year, start, end = job
    summary = Summary(file=shown, engine=engine)
    batch: list[dict] = []
    with open(path, "rb") as fh:
        fh.seek(start)
        for rec in scan(_Bounded(fh, end - start), shown, engine, year, summary,
                        rollover=False):
            batch.append(rec)
            if len(batch) >= SPILL_ROWS:
                send(batch)
                batch = []
    if batch:
        send(batch)
    return summary


# The first range's length against each other's. This process, which scans the first,
# also takes in the helpers' records (unpickles, numbers and checks them: 0.1 s of CPU for
# half the 76,400 records of a 1 GiB vLLM log); a shorter first range ends the two at once.
FIRST_SHARE = 0.9


def _cuts(path: Path, size: int, parts: int) -> list[int]:
    """Byte offsets that split the file into ``parts`` ranges at line starts, the first
    FIRST_SHARE times as long as each other."""
    cuts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            fh.seek(int(size * (FIRST_SHARE + k - 1) / (FIRST_SHARE + parts - 1)))
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
    """Records of one raw file (result, launch configuration or server log), as a list
    (``iter_raw``)."""
    with collector.paused():
        return list(iter_raw(path, shown, engine, year, summary, workers))


def iter_raw(path: Path, shown: str, engine: str = "auto", year: int | None = None,
             summary=None, workers: int = 2) -> Iterator[dict]:
    """Records of one raw file (result, launch configuration or server log), in file order,
    one at a time: memory does not grow with the file.

    A large log is scanned in ``workers`` processes over byte ranges cut at line starts:
    this one scans the first range while helpers scan the others into spill files; line
    numbers, counts and the New Year rollover of year-less stamps are then joined in file
    order, so the records are the same as one process would give. The summary's whole-file
    warnings (``FileChecks``) are added when the last record has been taken.
    """
    from .parsers.logscan import BLOCK, FileChecks, Summary, detect_engine

    summary = summary if summary is not None else Summary(file=shown, engine=engine)
    checks = FileChecks(summary)
    size = path.stat().st_size
    with open(path, "rb") as fp:
        head = fp.read(BLOCK)
        fp.seek(0)
        if size < PARALLEL_MIN_BYTES or workers < 2 or is_structured(head, path.name):
            from .parsers.anyfile import parse_any  # (its imports take a tenth of a second)

            yield from map(checks, parse_any(fp, shown, engine, year, summary))
            checks.finish()
            return
    if engine == "auto":
        engine = detect_engine(head, shown)
    summary.engine = engine
    yield from map(checks, _parallel(path, shown, engine, year, summary, workers))
    checks.finish()


def _parallel(path: Path, shown: str, engine: str, year: int | None, summary,
              workers: int) -> Iterator[dict]:
    from .parsers.logscan import Summary, YearRoll, scan

    cuts = _cuts(path, path.stat().st_size, workers)
    roll = YearRoll(year)
    helpers: list[_Helper] = []
    try:
        for a, b in zip(cuts[1:], cuts[2:], strict=False):
            helpers.append(_Helper(path, shown, engine, year, a, b))
        first = Summary(file=shown, engine=engine)
        with open(path, "rb") as fh:
            for rec in scan(_Bounded(fh, cuts[1]), shown, engine, year, first,
                            rollover=False):
                yield roll(rec)
        summary.merge(first, 0)
        offset = first.lines
        for helper in helpers:
            for rec in helper.records():
                rec["line"] += offset
                yield roll(rec)
            summary.merge(helper.summary, offset)
            offset += helper.summary.lines
    finally:
        for helper in helpers:          # stops those whose records were not all taken
            helper.wait(stop=True)
