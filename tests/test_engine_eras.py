"""Engine detection without --engine: logs of older eras, of one kind of event, and pasted
tracebacks (engine-formats.md 1.1, 1.4, 3.2, 3.3, 3.5)."""

import io
import json
import subprocess
import sys

import pytest

from benchreport.ingest.parsers import logscan
from benchreport.ingest.parsers.logscan import Summary, scan


def parse(project, path, *extra):
    return subprocess.run([sys.executable, "-m", "benchreport", "parse", str(path), "--json",
                           *extra], capture_output=True, text=True, cwd=project)


def parsed(project, tmp_path, text, name="server.log"):
    path = tmp_path / name
    path.write_text(text)
    out = parse(project, path, "--year", "2026")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


def records(text, engine="auto"):
    summary = Summary(file="mem.log", engine=engine)
    out = list(scan(io.BytesIO(text.encode()), "mem.log", engine, 2026, summary))
    return out, summary


def without_message(rec):
    return {k: v for k, v in rec.items() if k != "message"}


# -- 1. SGLang <= 0.1.x: no prefix, "new fill batch" and bare decode lines -----------------

OLD_FILL = ("new fill batch. #seq: 1. #cached_token: 0. #new_token: 812. #remaining_req: 0. "
            "#running_req: 2. tree_cache_hit_rate: 0.00%.")
OLD_FILL_2 = ("new fill batch. #seq: 3. #cached_token: 64. #new_token: 2048. #remaining_req: 5. "
              "#running_req: 0. tree_cache_hit_rate: 12.50%.")
OLD_DECODE = "#running-req: 3, #token: 1700, token usage: 0.02, #queue-req: 0"


def test_pre_02_sglang_lines_are_detected_and_read(project, tmp_path):
    doc, _ = parsed(project, tmp_path, f"{OLD_FILL}\n{OLD_DECODE}\n{OLD_FILL_2}\n")
    assert doc["engine"] == "sglang" and doc["lines"] == 3 and doc["unrecognised"] == 0
    assert doc["counts"] == {"prefill_batch": 2, "decode_batch": 1}
    assert doc["records"] == [
        {"kind": "prefill_batch", "line": 1, "ts": None, "new_seq": 1, "cached_token": 0,
         "new_token": 812, "queue_req": 0, "running_req": 2, "cache_hit_rate_pct": 0.0},
        {"kind": "decode_batch", "line": 2, "ts": None, "running_req": 3, "token": 1700,
         "token_usage": 0.02, "queue_req": 0},
        {"kind": "prefill_batch", "line": 3, "ts": None, "new_seq": 3, "cached_token": 64,
         "new_token": 2048, "queue_req": 5, "running_req": 0, "cache_hit_rate_pct": 12.5},
    ]


def test_a_paste_of_old_decode_lines_alone_is_read_line_by_line(project, tmp_path):
    lines = [f"#running-req: {n}, #token: {100 * n}, token usage: 0.0{n}, #queue-req: {n - 1}"
             for n in (1, 2, 3)]
    doc, _ = parsed(project, tmp_path, "\n".join(lines) + "\n")
    assert doc["engine"] == "sglang" and doc["counts"] == {"decode_batch": 3}
    assert [(r["line"], r["running_req"], r["token"], r["queue_req"]) for r in doc["records"]] \
        == [(1, 1, 100, 0), (2, 2, 200, 1), (3, 3, 300, 2)]


# -- 2. A log holding only retraction lines, every era of 3.5 ------------------------------

RETRACTIONS = [
    # <= 0.4.6
    ("[2026-11-29 07:14:57 TP0] Decode out of memory happened. #retracted_reqs: 3, "
     "#new_token_ratio: 0.7000 -> 1.0000",
     {"ts": "2026-11-29T07:14:57", "rank": "TP0", "retracted": 3,
      "new_token_ratio_from": 0.7, "new_token_ratio_to": 1.0}),
    # 0.4.9 - 0.5.6
    ("[2025-09-14 10:02:11 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, "
     "#new_token_ratio: 0.4000 -> 0.6000",
     {"ts": "2025-09-14T10:02:11", "rank": "TP0", "retracted": 2,
      "new_token_ratio_from": 0.4, "new_token_ratio_to": 0.6}),
    # 0.5.3: aborted count before the ratio
    ("[2025-10-14 10:02:11 DP1 TP1] KV cache pool is full. Retract requests. #retracted_reqs: "
     "5, #aborted_retracted_reqs: 1, #new_token_ratio: 0.4000 -> 0.6000",
     {"ts": "2025-10-14T10:02:11", "rank": "DP1 TP1", "retracted": 5, "aborted_retracted": 1,
      "new_token_ratio_from": 0.4, "new_token_ratio_to": 0.6}),
    # 0.5.8+ (TP=1: no rank suffix), with the ~0.5.15 mamba part
    ("[2026-11-29 07:14:57] KV cache pool is full. Retract requests. #retracted_reqs: 4, "
     "#new_tokens_gained: 8192, #mamba_num_gained: 2, #new_token_ratio: 0.3500 -> 0.8000",
     {"ts": "2026-11-29T07:14:57", "retracted": 4, "new_tokens_gained": 8192,
      "mamba_num_gained": 2, "new_token_ratio_from": 0.35, "new_token_ratio_to": 0.8}),
]


@pytest.mark.parametrize("line, fields", RETRACTIONS)
def test_a_log_of_retractions_alone_is_sglang(project, tmp_path, line, fields):
    doc, _ = parsed(project, tmp_path, line + "\n")
    assert doc["engine"] == "sglang" and doc["counts"] == {"retraction": 1}
    rec = doc["records"][0]
    assert without_message(rec) == {"kind": "retraction", "line": 1, **fields}
    assert rec["message"] == line.split("] ", 1)[1]


def test_retractions_of_every_era_in_one_file(project, tmp_path):
    doc, _ = parsed(project, tmp_path, "\n".join(line for line, _ in RETRACTIONS) + "\n")
    assert doc["engine"] == "sglang" and doc["unrecognised"] == 0
    assert [(r["line"], r["retracted"]) for r in doc["records"]] == [(1, 3), (2, 2), (3, 5), (4, 4)]


# -- 3. Tracebacks ------------------------------------------------------------------------

CORE = "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py"
TRACEBACK = f"""\
(EngineCore pid=2429) ERROR 11-20 10:12:05 [core.py:700] EngineCore encountered a fatal error.
(EngineCore pid=2429) Traceback (most recent call last):
(EngineCore pid=2429)   File "{CORE}", line 691, in run_engine_core
(EngineCore pid=2429)     engine_core.run_busy_loop()
(EngineCore pid=2429) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
"""
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."


@pytest.mark.parametrize("proc", ["EngineCore", "EngineCore_DP0"])
@pytest.mark.parametrize("with_error_line", [True, False])
def test_a_pasted_vllm_traceback_is_found_with_its_exception(project, tmp_path, proc,
                                                               with_error_line):
    text = TRACEBACK.replace("EngineCore pid", f"{proc} pid")
    if not with_error_line:
        text = text.split("\n", 1)[1]
    doc, _ = parsed(project, tmp_path, text)
    shift = 0 if with_error_line else 1
    assert doc["engine"] == "vllm" and doc["lines"] == 5 - shift
    assert doc["counts"]["traceback"] == 1
    tb = next(r for r in doc["records"] if r["kind"] == "traceback")
    assert tb == {"kind": "traceback", "line": 5 - shift, "span_lines": 4, "ts": None,
                  "proc": proc, "pid": 2429, "exception_type": "torch.OutOfMemoryError",
                  "exception": OOM, "frames": 1,
                  "where": "vllm/v1/engine/core.py:691 in run_engine_core"}
    if with_error_line:
        assert doc["records"][0]["kind"] == "engine_error" and doc["records"][0]["line"] == 1


def test_the_text_output_names_the_traceback(project, tmp_path):
    path = tmp_path / "crash.log"
    path.write_text(TRACEBACK.split("\n", 1)[1])
    out = subprocess.run([sys.executable, "-m", "benchreport", "parse", str(path)],
                         capture_output=True, text=True, cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{path}: vllm, 4 lines, 0 unrecognised; traceback 1"


def test_vllm_logger_exception_lines_each_carry_the_prefix(project, tmp_path):
    """0.31+ (and logger.exception in every era): the record's full prefix on each line;
    another process's line in between is not part of the traceback."""
    p = "(EngineCore_DP0 pid=77) ERROR 11-20 10:12:05 [core.py:712] "
    text = (f"{p}EngineCore encountered a fatal error.\n{p}Traceback (most recent call last):\n"
            f'{p}  File "{CORE}", line 703, in run_engine_core\n'
            "(APIServer pid=70) ERROR 11-20 10:12:05 [async_llm.py:480] AsyncLLM output_handler "
            "failed.\n"
            f'{p}  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/'
            'gpu_model_runner.py", line 2100, in execute_model\n'
            f"{p}    out = self.model(x)\n{p}{OOM}\n")
    quote = ('(APIServer pid=70) INFO 11-20 10:11:59 [logger.py:43] Received request: prompt: '
             '"Traceback (most recent call last): what does it mean?"\n')
    doc, err = parsed(project, tmp_path, quote + text)
    assert doc["engine"] == "vllm" and err == ""     # a quoted phrase starts no traceback
    assert doc["counts"] == {"engine_error": 1, "traceback": 1, "memory_event": 1}
    tb = next(r for r in doc["records"] if r["kind"] == "traceback")
    assert (tb["line"], tb["span_lines"], tb["ts"], tb["proc"], tb["pid"], tb["level"]) == \
        (8, 6, "2026-11-20T10:12:05", "EngineCore_DP0", 77, "ERROR")
    assert (tb["exception"], tb["frames"], tb["where"]) == \
        (OOM, 2, "vllm/v1/worker/gpu_model_runner.py:2100 in execute_model")
    mem = next(r for r in doc["records"] if r["kind"] == "memory_event")
    assert (mem["line"], mem["event"]) == (8, "oom")


def test_sglang_scheduler_exception_traceback(project, tmp_path):
    text = ("[2026-11-29 07:14:57 TP0] Scheduler hit an exception: Traceback (most recent call "
            "last):\n"
            '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2850, '
            "in run_scheduler_process\n"
            "    scheduler.event_loop_overlap()\n"
            "RuntimeError: Prefill out of memory. Try to lower your batch size.\n"
            "\n"
            "[2026-11-29 07:14:58] Received sigquit from a child process.\n")
    doc, _ = parsed(project, tmp_path, text)
    assert doc["engine"] == "sglang" and doc["counts"] == {"traceback": 1}
    assert doc["records"][0] == {
        "kind": "traceback", "line": 4, "span_lines": 4, "ts": "2026-11-29T07:14:57",
        "rank": "TP0", "message": "Scheduler hit an exception",
        "exception_type": "RuntimeError",
        "exception": "RuntimeError: Prefill out of memory. Try to lower your batch size.",
        "frames": 1,
        "where": "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py:2850 in "
                 "run_scheduler_process"}


def test_a_bare_traceback_is_told_by_the_package_of_its_frames(project, tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "/usr/local/bin/vllm", line 10, in <module>\n'
            "    sys.exit(main())\n"
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/cli/main.py", '
            "line 54, in main\n"
            "    args.dispatch_function(args)\n"
            "ValueError: Free memory on device cuda:0 (3.1/79.1 GiB) on startup is less than "
            "desired GPU memory utilization (0.9, 71.2 GiB).\n")
    doc, _ = parsed(project, tmp_path, text)
    assert doc["engine"] == "vllm" and doc["counts"] == {"traceback": 1}
    tb = doc["records"][0]
    assert (tb["line"], tb["span_lines"], tb["exception_type"], tb["frames"], tb["where"]) == \
        (6, 6, "ValueError", 2, "vllm/entrypoints/cli/main.py:54 in main")


def test_a_traceback_that_shows_no_engine_says_so(project, tmp_path):
    path = tmp_path / "crash.log"
    path.write_text("hello\nTraceback (most recent call last):\n"
                    '  File "/app/run.py", line 3, in <module>\nKeyError: \'x\'\n')
    out = parse(project, path)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == (
        f"error: {path}:2: a Python traceback, but no line in it shows whether vLLM or SGLang "
        "wrote it (no process prefix, no frame in a vllm/ or sglang/ package); name the "
        "engine: benchreport parse FILE --engine vllm (or sglang)")
    forced = parse(project, path, "--engine", "vllm")
    tb = json.loads(forced.stdout)["records"][0]
    assert (tb["line"], tb["span_lines"], tb["exception"]) == (4, 3, "KeyError: 'x'")
    # other text is still no log: the weaker evidence is specific too
    path.write_text("[2026-11-29 07:14:57] backup done\n(MainProcess pid=3) started\n")
    out = parse(project, path)
    assert out.returncode == 1 and "no vLLM or SGLang log lines found" in out.stderr


def test_chained_tracebacks_are_two_records(project, tmp_path):
    p = "(APIServer pid=9) "
    text = (f"{p}Traceback (most recent call last):\n"
            f'{p}  File "/x/vllm/a.py", line 1, in f\n'
            "(EngineCore_DP0 pid=10) INFO 11-20 10:12:05 [core.py:1] unrelated\n"
            f"{p}KeyError: 'a'\n{p}\n"
            f"{p}During handling of the above exception, another exception occurred:\n{p}\n"
            f"{p}Traceback (most recent call last):\n"
            f'{p}  File "/x/vllm/b.py", line 2, in g\n'
            f"{p}vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\n")
    doc, _ = parsed(project, tmp_path, text)
    assert doc["engine"] == "vllm" and doc["counts"] == {"traceback": 2}
    assert [(r["line"], r["span_lines"], r["exception_type"], r["where"])
            for r in doc["records"]] == [
        (4, 4, "KeyError", "/x/vllm/a.py:1 in f"),
        (10, 3, "vllm.v1.engine.exceptions.EngineDeadError", "/x/vllm/b.py:2 in g")]


def test_a_cut_traceback_is_reported_without_an_exception(project, tmp_path):
    text = TRACEBACK.rsplit("\n", 2)[0] + "\n"            # the exception line is missing
    doc, err = parsed(project, tmp_path, text)
    tb = next(r for r in doc["records"] if r["kind"] == "traceback")
    assert (tb["line"], tb["span_lines"], tb["exception"], tb["exception_type"], tb["frames"]) \
        == (2, 1, None, None, 1)
    assert ":2: a traceback without its exception line" in err


# -- Large logs: the scan of normal lines is not slowed ------------------------------------

FILLER = ("(APIServer pid=70) INFO 11-20 10:00:00 [logger.py:43] Received request chatcmpl-1: "
          "prompt: 'Summarise the attached report.', params: SamplingParams(n=1)\n")


def large_log(pad, error_line=True):
    """A log larger than the (shrunk) read block, the traceback ``pad`` bytes in."""
    head = FILLER * 40 + "x" * pad + "\n"
    crash = TRACEBACK if error_line else TRACEBACK.split("\n", 1)[1]
    return head + crash + FILLER * 40, head.count("\n")


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(logscan, "BLOCK", 4096)
    monkeypatch.setattr(logscan, "TB_WINDOW", 1024, raising=False)


def test_large_log_traceback_after_an_error_at_any_block_boundary(small_blocks):
    for pad in range(0, 4096, 61):              # the block edge falls on every line of it
        text, before = large_log(pad)
        recs, summary = records(text)
        tbs = [r for r in recs if r["kind"] == "traceback"]
        assert len(tbs) == 1, pad
        assert (tbs[0]["line"], tbs[0]["span_lines"], tbs[0]["exception"], tbs[0]["proc"]) == \
            (before + 5, 4, OOM, "EngineCore"), pad
        assert summary.warnings == [], pad


def test_large_log_looks_for_unprefixed_tracebacks_only_after_an_error(small_blocks):
    """The trade-off: one more search of every block would cost a tenth of the scan, so in a
    log larger than one block a header without "] " is looked for after an error record
    only; a file read in one block (an excerpt) is searched everywhere."""
    text, _ = large_log(0, error_line=False)
    assert [r for r in records(text)[0] if r["kind"] == "traceback"] == []
    excerpt = TRACEBACK.split("\n", 1)[1]
    assert [r["line"] for r in records(excerpt)[0]] == [4]


def test_large_log_parsed_in_two_processes_gives_the_same_records(small_blocks, monkeypatch,
                                                                    tmp_path):
    from benchreport.ingest import io as bio

    monkeypatch.setattr(bio, "PARALLEL_MIN_BYTES", 1)
    text, before = large_log(100)
    path = tmp_path / "big.log"
    path.write_text(text * 2)          # the traceback twice; the cut falls between the two
    one = bio.read_raw(path, "big.log", "auto", 2026, workers=1)
    two = bio.read_raw(path, "big.log", "auto", 2026, workers=2)
    assert one == two
    assert [(r["line"], r["span_lines"]) for r in one if r["kind"] == "traceback"] == \
        [(before + 5, 4), (before + 5 + text.count("\n"), 4)]
