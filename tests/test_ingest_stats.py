"""A log of stats lines is all records: ingest must not hold them (issue 33, finding 9).

The reference run plus a server log of stats lines (the run's own vLLM stats and
spec-decoding lines, stamped a second apart from the first benchmark on): its records go to
Parquet in batches, memory does not grow with the lines, and what a build reads back (the
tables, the windows, the records of a window, the excerpts) is the same as when every
record is held in memory.
"""

from __future__ import annotations

import datetime as dt
import importlib
import random
import re
import shutil
import tracemalloc
from pathlib import Path

import pytest

from benchreport.core import redact as red
from benchreport.ingest.io import load_run
from benchreport.ingest.run import ingest_run, save_ingest

from .conftest import takes_seconds

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "data" / "2024-b300"
_STAMP = re.compile(r"^(\(APIServer pid=\d+\) INFO )\d\d-\d\d \d\d:\d\d:\d\d( \[.*"
                    r"(?:Avg prompt throughput|SpecDecoding metrics).*)$")


def stats_log(path: Path, lines: int, start: str = "2026-11-20T10:12:05") -> None:
    """``lines`` vLLM stats and spec-decoding lines of the reference run, two a second."""
    found = [m.groups() for m in map(_STAMP.match, (REFERENCE / "raw" / "vllm" /
                                                    "server.log").read_text().splitlines())
             if m]
    t0 = dt.datetime.fromisoformat(start)
    with open(path, "w") as fh:
        for i in range(lines):
            head, tail = found[i % len(found)]
            stamp = (t0 + dt.timedelta(seconds=i // 2)).strftime("%m-%d %H:%M:%S")
            fh.write(f"{head}{stamp}{tail}\n")


def run_with_stats(tmp_path: Path, lines: int):
    data = tmp_path / "data"
    shutil.copytree(REFERENCE, data / "2024-b300")
    stats_log(data / "2024-b300" / "raw" / "vllm" / "stats.log", lines)
    return load_run("2024-b300", data, tmp_path / "report")


def _batch(monkeypatch, rows: int) -> None:
    """A small batch, so that a test log of a few thousand lines spans several."""
    try:
        recordset = importlib.import_module("benchreport.core.recordset")
    except ImportError:           # before batches: nothing to set (and memory grows)
        return
    monkeypatch.setattr(recordset, "BATCH_ROWS", rows)


def _small_buffers(monkeypatch) -> None:
    """Every fixed-size buffer small (reads of 64 KiB, fetches of 500 rows), so that only
    what grows with the lines could grow between a test log and one six times longer."""
    _batch(monkeypatch, 500)
    for target, value in (("benchreport.ingest.parsers.logscan.BLOCK", 1 << 16),
                          ("benchreport.ingest.run.TEXT_BLOCK", 1 << 16),
                          ("benchreport.ingest.windows.READ_BLOCK", 1 << 16),
                          ("benchreport.core.recordset.FETCH_ROWS", 500)):
        module, name = target.rsplit(".", 1)
        try:
            monkeypatch.setattr(importlib.import_module(module), name, value, raising=False)
        except ImportError:
            pass


def _ingest_memory(tmp_path: Path, lines: int) -> tuple[int, int]:
    """Python memory (tracemalloc) that ingest holds when done, and its peak."""
    run = run_with_stats(tmp_path, lines)
    tracemalloc.start()
    try:
        ing = ingest_run(run)
        held = tracemalloc.get_traced_memory()[0]
        save_ingest(run, ing)
        del ing
        return held, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_ingest_memory_does_not_grow_with_stats_lines(tmp_path, monkeypatch):
    """10,000 more stats lines cost less than 150 bytes each of what ingest holds and of
    its peak (a record held as a dict, with its excerpt, took over 1 KiB)."""
    _small_buffers(monkeypatch)
    # imports and caches, batches included (more lines than one batch): not measured, nor
    # traced (tracing makes ingest three times slower)
    warm = run_with_stats(tmp_path / "warm", 1000)
    save_ingest(warm, ingest_run(warm))
    small = _ingest_memory(tmp_path / "a", 2000)
    large = _ingest_memory(tmp_path / "b", 12000)
    assert large[0] - small[0] < 10000 * 150, (small, large)
    assert large[1] - small[1] < 10000 * 150, (small, large)


def _normal(rows) -> list[dict]:
    """Rows as the tables give them back: no empty cells."""
    return [{k: v for k, v in row.items() if v is not None} for row in rows]


@pytest.fixture(scope="module")
@takes_seconds
def both(tmp_path_factory):
    """The same run ingested with every record in memory and with batches of 500 rows."""
    out = {}
    for name, rows in (("memory", None), ("batches", 500)):
        patch = pytest.MonkeyPatch()
        if rows:
            _batch(patch, rows)
        try:
            folder = tmp_path_factory.mktemp(name)
            run = run_with_stats(folder, 3000)
            ing = ingest_run(run)
            save_ingest(run, ing)
            out[name] = (run, ing)
        finally:
            patch.undo()
    return out


def test_batches_give_the_same_records_windows_and_excerpts(both):
    (_, a), (_, b) = both["memory"], both["batches"]
    assert b.records.is_large("engine_stats") and not a.records.is_large("engine_stats")
    assert a.windows == b.windows and a.point_windows == b.point_windows
    assert a.summaries == b.summaries
    assert list(a.records) == list(b.records)
    for kind in a.records:
        assert _normal(a.records[kind]) == _normal(b.records[kind]), kind
    assert dict(a.excerpts.items()) == dict(b.excerpts.items())
    for w in a.windows:
        for kind in ("engine_stats", "spec_decode", "memory_event"):
            assert _normal(a.in_window(kind, w.engine, w.workload)) == \
                _normal(b.in_window(kind, w.engine, w.workload))


def test_tables_read_back_by_window_are_the_same(both):
    """After the build's ingest, a large table stays in its file; a window's records read
    from it equal those of the table read whole."""
    from benchreport.core import recordset
    from benchreport.core.tables import load_ingested

    run, _ = both["batches"]
    whole = load_ingested(run)
    assert not whole.records.is_large("engine_stats")   # 3,000 rows: under one batch
    patch = pytest.MonkeyPatch()
    patch.setattr("benchreport.core.tables.BATCH_ROWS", 500)
    try:
        lazy = load_ingested(run)
    finally:
        patch.undo()
    assert lazy.records.is_large("engine_stats") and recordset.BATCH_ROWS > 500
    for w in whole.windows:
        got = lazy.in_window("engine_stats", w.engine, w.workload)
        assert got == whole.in_window("engine_stats", w.engine, w.workload)
    assert lazy.excerpts.get(("data/2024-b300/raw/vllm/stats.log", 7)) == \
        whole.excerpts[("data/2024-b300/raw/vllm/stats.log", 7)]


def test_the_sink_writes_bounded_batches(tmp_path, monkeypatch):
    """Every part the sink writes holds at most one batch of rows."""
    from benchreport.core.recordset import RecordSink
    from benchreport.ingest.io import iter_raw

    log = tmp_path / "stats.log"
    stats_log(log, 2500)
    sink = RecordSink(batch=400)
    for rec in iter_raw(log, "stats.log", "vllm", 2026):
        sink.add({"engine": "vllm", "file": "stats.log", "sha256": "", **rec})
        assert all(len(rows) < 400 for rows in sink.pending.values())
    records = sink.finish()
    assert sink.parts and max(sink.parts) <= 400 and sum(sink.parts) == 2500
    assert records.count("engine_stats") + records.count("spec_decode") == 2500


_PIECES = ["token", "Token=", "key: ", "--api-key ", "Bearer ", "Basic dXNlcjpwYXNz", "://",
           "http://u:p@h/", "hf_" + "a" * 20, "sk-" + "b" * 20, "ghp_" + "c" * 22, "eyJabcdefghij",
           "AKIA" + "A" * 16, "AbCdEfGh1234567890aBcDeFgH12345678", "tokens/s", "#new-token: 3",
           "passwd=x", "sig=abc&", " ", ", ", ": ", "=", '"', "'", "throughput", "Authorization: ",
           "x" * 33, "\u00e9", "K\u212aey=1", "\x1b[31m", "\t", "-", "_", "."]


def test_redact_skips_only_patterns_that_cannot_match():
    """The fast path of ``redact`` (patterns whose literals the text lacks are skipped)
    gives what every pattern over the whole text gives."""
    rng = random.Random(33)
    for _ in range(3000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12)))
        assert red.redact(text) == red._every_pattern(red.visible(text)), text
