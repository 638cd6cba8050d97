"""The scanner reads a log in blocks and windows and only looks at the lines its searches
find; it must give the records, line numbers and counts that reading every line in turn
gives, wherever the block and window edges fall and whatever the bytes."""

import io

import pytest

from benchreport.ingest.parsers import logscan
from benchreport.ingest.parsers.logscan import Summary, scan

from .conftest import ROOT

LOGS = {"vllm": ROOT / "data/2024-b300/raw/vllm/server.log",
        "sglang": ROOT / "data/2024-b300/raw/sglang/server.log"}


def naive(data: bytes, engine: str, year: int = 2026):
    """Line by line: every line that holds a frequent marker or starts a rare message is read
    with the scanner's own record reader (tracebacks, read over several lines, are left out)."""
    module, split = logscan._ENGINES[engine]
    summary = Summary(file="mem.log", engine=engine)
    clock = logscan._Clock(year)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out = []
    for number, raw in enumerate(lines, start=1):
        if any(m in raw for m in module.FREQUENT) or module.RARE_RE.search(raw):
            out += logscan._records(raw, number, engine, split, module,
                                    logscan._MUST_PARSE[engine], clock, summary)
    return out, summary, len(lines)


def scanned(data: bytes, engine: str, year: int = 2026):
    summary = Summary(file="mem.log", engine=engine)
    recs = [r for r in scan(io.BytesIO(data), "mem.log", engine, year, summary)
            if r["kind"] != "traceback"]
    summary.counts.pop("traceback", None)
    return recs, summary


def assert_same(data: bytes, engine: str) -> None:
    want, want_summary, lines = naive(data, engine)
    got, summary = scanned(data, engine)
    assert [r["line"] for r in got] == [r["line"] for r in want]
    assert got == want
    assert summary.lines == lines
    assert (summary.counts, summary.unrecognised) == (want_summary.counts,
                                                      want_summary.unrecognised)


def tricky(engine: str) -> dict[str, bytes]:
    """The engine's reference log, and the shapes that trip block and window edges."""
    data = LOGS[engine].read_bytes()
    lines = data.split(b"\n")
    stats = next(x for x in lines if b"Avg prompt throughput" in x or b"Decode batch" in x)
    middle = len(lines) // 2
    return {
        "as is": data,
        "crlf": data.replace(b"\n", b"\r\n"),
        "no final line end": data.rstrip(b"\n"),
        "a very long line": b"\n".join(lines[:middle] + [b"x" * 200_000 + b" " + stats]
                                       + lines[middle:]),
        "bytes that are not UTF-8": b"\n".join(
            lines[:middle] + [stats.replace(b": ", b": \xff\xfe", 1), b"\x80\x81 noise"]
            + lines[middle:]),
        "empty lines": data.replace(b"\n", b"\n\n"),
    }


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("block, window", [(8 << 20, 64 << 10), (4096, 64 << 10),
                                           (4096, 300), (1000, 97), (257, 4096)])
def test_blocks_and_windows_read_what_every_line_holds(monkeypatch, engine, block, window):
    monkeypatch.setattr(logscan, "BLOCK", block)
    monkeypatch.setattr(logscan, "WINDOW", window)
    monkeypatch.setattr(logscan, "SHORT", 64)            # count line ends both ways
    monkeypatch.setattr(logscan, "COUNT_PIECE", 1000)
    for name, data in tricky(engine).items():
        try:
            assert_same(data, engine)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_marker_cut_by_a_block_edge_anywhere(monkeypatch, engine):
    """The block edge falls on every byte of a stats line in turn."""
    data = LOGS[engine].read_bytes()
    stats = max(data.find(b"Avg prompt throughput"), data.find(b"Decode batch"))
    start = data.rfind(b"\n", 0, stats) + 1
    length = data.find(b"\n", stats) - start + 1
    part = data[: start + 4 * length]
    for edge in range(start - 3, start + length + 3, 3):
        monkeypatch.setattr(logscan, "BLOCK", edge)
        monkeypatch.setattr(logscan, "WINDOW", max(1, edge // 3))
        assert_same(part, engine)


def test_a_rare_anchor_byte_that_is_common_after_all(monkeypatch):
    """A marker is found from the hits of its rarest byte in the file's start; where that
    byte turns out common, bytes.find takes over, and nothing is missed."""
    line = ("2025-06-05 08:20:07,822 - INFO - flashinfer.jit: Loading JIT ops: "
            "batch_decode_{}\n")
    head = "(APIServer pid=1) INFO 11-29 07:00:00 [api_server.py:1] vLLM API server version 0.9\n"
    start = (head + "filler line\n" * 800).encode()
    marker = b"flashinfer.jit: "
    monkeypatch.setattr(logscan, "BLOCK", 8192)
    k = logscan._anchors(start[:8192], logscan.vllm_log.FREQUENT)[marker]
    common = marker[k:k + 1] * 300 + b"\n"        # after the start, that byte is everywhere
    data = start + (common + line.encode()) * 60
    assert_same(data, "vllm")
    assert sum(1 for r in scanned(data, "vllm")[0] if r["kind"] == "jit_event") == 60


def test_line_ends_counted_both_ways_agree():
    data = LOGS["vllm"].read_bytes()
    for a, b in ((0, len(data)), (5, 700), (100, 101), (0, 0)):
        assert logscan._count_lines(data, a, b) == data.count(b"\n", a, b)


@pytest.mark.parametrize("engine, line", [
    ("vllm", b"INFO 11-29 07:00:01 [loggers.py:271] Engine 000: Avg prompt throughput: 1.2.3 "
             b"tokens/s, Avg generation throughput: 5.0 tokens/s, Running: 1 reqs, Waiting: 0 "
             b"reqs, GPU KV cache usage: 4.0%, Prefix cache hit rate: 0.0%\n"),
    ("sglang", b"[2026-11-29 07:00:01 TP0] Decode batch, #running-req: 2, #token: 1.2.3, token "
               b"usage: 0.41, gen throughput (token/s): 20.5, #queue-req: 0\n"),
])
def test_a_stats_line_with_a_value_that_is_no_number_is_warned_and_skipped(engine, line):
    """A damaged value ("1.2.3" where a number belongs) is one warning naming the line, not
    a traceback; the lines around it are read."""
    good = {"vllm": b"INFO 11-29 07:00:02 [loggers.py:271] Engine 000: Avg prompt throughput: "
                    b"1.0 tokens/s, Avg generation throughput: 5.0 tokens/s, Running: 1 reqs, "
                    b"Waiting: 0 reqs, GPU KV cache usage: 4.0%, Prefix cache hit rate: 0.0%\n",
            "sglang": b"[2026-11-29 07:00:02 TP0] Decode batch, #running-req: 2, #token: 12, "
                      b"token usage: 0.41, gen throughput (token/s): 20.5, #queue-req: 0\n"}[engine]
    summary = Summary("x.log", engine)
    records = list(scan(io.BytesIO(line + good), "x.log", engine, 2026, summary))
    assert [r["line"] for r in records] == [2]
    assert summary.unrecognised == 1
    said = {"vllm": "'1.2.3' is not a number", "sglang": "token: '1.2.3' is not a number"}
    assert summary.warnings == [f"x.log:1: {said[engine]} (line skipped)"]
