"""Runtime events in a log the generator wrote, where the truth is known: FlashInfer's
"Loading JIT ops" lines are loads (not compiles), a span ends at its last line (the last
"Finished loading" line, to the millisecond) and a row cites its whole line range."""

from __future__ import annotations

import datetime as dt
import io
import random
import re
from types import SimpleNamespace

from benchreport.analyses.caveats import _event_rows, _window_events, line_ranges
from benchreport.ingest.parsers.logscan import scan
from benchreport.synth.logs import Lines, VllmProcs, _runtime_events
from benchreport.synth.model import EngineModel, PrefillCurve, simulate
from benchreport.synth.scenario import Events

BASE = dt.datetime(2026, 11, 20, 10, 12, 5)
PREFIX = "(APIServer pid=10) INFO 11-20 10:11:59 [api_server.py:1] "


def _log(events: Events, extra: tuple[str, ...] = ()) -> str:
    model = EngineModel("mixed", 32768, PrefillCurve(((0, 22265.0), (65536, 19628.0))),
                        0.0013, 30.4e-9, 1, 7)
    tl = simulate(model, n_requests=4, input_len=65536, output_len=16, arrival_gap_s=0.0,
                  accept_prob=0.06, step_factor=lambda t, i: 1.0, seed=3,
                  event_delays=events.delays())
    lines = Lines()
    lines.add(BASE - dt.timedelta(seconds=6), PREFIX + "vLLM server version 0.33.0, serving "
              "model m")
    _runtime_events(lines, BASE, tl, VllmProcs(10, 11, tuple(range(20, 28))), events,
                    random.Random(5))
    for i, text in enumerate(extra):
        lines.add(BASE + dt.timedelta(seconds=30 + i), text)
    return lines.text()


def _records(text: str) -> list[dict]:
    recs = list(scan(io.BytesIO(text.encode()), "raw/vllm/server.log", "vllm", 2026))
    for r in recs:
        r.setdefault("file", "raw/vllm/server.log")
        r.setdefault("sha256", "0" * 64)
    return recs


def _ingested(recs: list[dict]):
    def in_window(kind, engine, workload):
        return [r for r in recs if r["kind"] == kind and r.get("ts")]
    return SimpleNamespace(in_window=in_window, results=[], windows=[])


def test_flashinfer_loads_are_loads_and_their_span_ends_at_the_last_finished_line():
    text = _log(Events(jit_compiles=4, jit_s=1.2, oom_retries=16, oom_retry_s=0.4,
                       workers=8))
    # the truth, read off the generated lines without the parser
    numbered = list(enumerate(text.splitlines(), start=1))
    loading = [(n, ln) for n, ln in numbered if "flashinfer.jit: Loading JIT ops" in ln]
    finished = [(n, ln) for n, ln in numbered if "flashinfer.jit: Finished loading" in ln]
    retries = [n for n, ln in numbered if "soft OOM retry" in ln]
    assert len(loading) == len(finished) == 4 and len(retries) == 16
    stamp = re.match(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})", finished[-1][1])
    last_end = f"{stamp[1]}T{stamp[2]}.{stamp[3]}"
    assert last_end[-4:] != ".000"

    ing = _ingested(_records(text))
    ev = _window_events(ing, "vllm", "64k")
    assert len(ev["jit_loads"]) == 4 and ev["jit_compiles"] == []
    rows = {r.id: r for r in _event_rows(ing, ev, "64k", "vllm")}
    assert set(rows) == {"event_oom_retry", "event_jit_load"}    # no compile row
    load = rows["event_jit_load"]
    assert load.counts["n"] == 4
    assert load.span[1] == last_end                       # not the last "Loading" line
    assert load.span[0].startswith(re.match(r"(\S+) (\S+),", loading[0][1])[2], 11)
    assert load.evidence == [f"raw/vllm/server.log:{loading[0][0]}-{finished[-1][0]}"]
    retry = rows["event_oom_retry"]
    assert retry.evidence == [f"raw/vllm/server.log:{retries[0]}-{retries[-1]}"]
    assert retry.counts == {"n": 16, "workers": 8}


def test_a_line_that_says_compile_is_a_compile():
    text = ("[2026-11-20 14:05:07] server_args={'chunked_prefill_size': 32768}\n"
            "[2026-11-20 14:05:20 TP0] Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> "
            "N=7168, K=2048, num_groups=1 with all Ms.\n"
            "[2026-11-20 14:05:21 TP0] Try DeepGEMM JIT Compiling for <GROUPED_GEMM_NT_F8F8BF16> "
            "N=4096, K=7168, num_groups=8 with all Ms.\n")
    recs = list(scan(io.BytesIO(text.encode()), "raw/sglang/server.log", "sglang", 2026))
    for r in recs:
        r.update(file="raw/sglang/server.log", sha256="0" * 64)
    ing = _ingested(recs)
    ev = _window_events(ing, "sglang", "64k")
    assert [r["op"] for r in ev["jit_compiles"]] == ["<GEMM_NT_F8F8BF16>",
                                                      "<GROUPED_GEMM_NT_F8F8BF16>"]
    assert ev["jit_loads"] == []
    rows = {r.id: r for r in _event_rows(ing, ev, "64k", "sglang")}
    assert set(rows) == {"event_jit"} and rows["event_jit"].counts["n"] == 2
    assert rows["event_jit"].span == ("2026-11-20T14:05:20", "2026-11-20T14:05:21")
    assert rows["event_jit"].evidence == ["raw/sglang/server.log:2-3"]


def test_line_ranges_cite_each_file_from_first_to_last_line():
    recs = [{"file": "a.log", "line": 47}, {"file": "a.log", "line": 25},
            {"file": "b.log", "line": 3}]
    assert line_ranges(recs) == ["a.log:25-47", "b.log:3"]
