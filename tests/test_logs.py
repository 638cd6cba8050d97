"""Server-log parsing, one row per template and era of engine-formats.md, in memory."""

import io

import pytest

from benchreport.core.errors import ParseError
from benchreport.ingest.parsers.logscan import Summary, scan

from .conftest import ROOT


def records(text, engine="auto", year=2026):
    summary = Summary(file="mem.log", engine=engine)
    out = list(scan(io.BytesIO(text.encode()), "mem.log", engine, year, summary))
    return out, summary


def one(text, engine="auto", year=2026):
    recs, summary = records(text, engine, year)
    assert len(recs) == 1, (recs, summary.warnings)
    return recs[0]


P033 = "(APIServer pid=2117) INFO 11-29 07:14:57 [loggers.py:302] "
VLLM_STATS = [
    # 0.31-0.33: optional Preemptions, device word, prefix cache part
    (P033 + "Engine 000: Avg prompt throughput: 8412.6 tokens/s, Avg generation throughput: "
     "935.2 tokens/s, Running: 24 reqs, Waiting: 3 reqs, Preemptions: 2, GPU KV cache usage: "
     "88.4%, Prefix cache hit rate: 61.7%",
     dict(prompt_tps=8412.6, gen_tps=935.2, running=24, waiting=3, preemptions=2,
          kv_cache_usage_pct=88.4, prefix_cache_hit_rate_pct=61.7, engine_index=0)),
    # aggregated data-parallel front end
    (P033 + "2 Engines Aggregated: Avg prompt throughput: 0.0 tokens/s, Avg generation "
     "throughput: 1310.9 tokens/s, Running: 40 reqs, Waiting: 0 reqs, GPU KV cache usage: "
     "47.3%, Prefix cache hit rate: 12.0%",
     dict(engines_aggregated=2, gen_tps=1310.9, running=40, waiting=0)),
    # 0.33: KV fetch part with inner commas, Deferred, XPU device, no prefix-cache part
    (P033 + "Engine 001: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: "
     "20.0 tokens/s, Running: 5 reqs, Waiting: 4 reqs, Deferred: 1 reqs, KV fetch: 2 waiting "
     "to start, 1 in progress, 0 completed waiting, XPU KV cache usage: 9.0%",
     dict(engine_index=1, deferred=1, kv_fetch_waiting=2, kv_fetch_in_progress=1,
          kv_fetch_completed=0, kv_cache_usage_pct=9.0, device="XPU")),
    # 0.7.2-0.9.x: brackets, no process prefix
    ("INFO 03-14 11:02:41 [loggers.py:116] Engine 000: Avg prompt throughput: 512.3 tokens/s, "
     "Avg generation throughput: 88.0 tokens/s, Running: 6 reqs, Waiting: 0 reqs, GPU KV cache "
     "usage: 9.8%, Prefix cache hit rate: 0.0%",
     dict(prompt_tps=512.3, running=6, ts="2026-03-14T11:02:41")),
    # 0.8.0-0.8.2: no "Engine NNN:" part
    ("INFO 03-14 11:02:41 [loggers.py:80] Avg prompt throughput: 1.0 tokens/s, Avg generation "
     "throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
     "Prefix cache hit rate: 0.0%", dict(prompt_tps=1.0, gen_tps=2.0)),
    # V0 (<= 0.7.1 prefix without "["): Swapped, Pending, CPU KV, trailing period
    ("INFO 09-02 16:40:05 metrics.py:351] Avg prompt throughput: 1203.4 tokens/s, Avg "
     "generation throughput: 76.9 tokens/s, Running: 5 reqs, Swapped: 0 reqs, Pending: 2 reqs, "
     "GPU KV cache usage: 21.7%, CPU KV cache usage: 0.0%.",
     dict(running=5, swapped=0, waiting=2, kv_cache_usage_pct=21.7, cpu_kv_cache_usage_pct=0.0)),
    # 0.10-0.12: ANSI-cyan process prefix even in files
    ("\x1b[1;36m(APIServer pid=123)\x1b[0;0m INFO 11-29 07:14:57 [loggers.py:271] Engine 000: "
     "Avg prompt throughput: 3.0 tokens/s, Avg generation throughput: 4.0 tokens/s, Running: 1 "
     "reqs, Waiting: 0 reqs, GPU KV cache usage: 0.5%, Prefix cache hit rate: 0.0%",
     dict(proc="APIServer", pid=123, prompt_tps=3.0)),
    # Docker timestamp in front; DEBUG-mode path with "..."
    ("2026-05-12T08:01:39.331095044Z (APIServer pid=9) INFO 05-12 08:01:39 "
     "[v1/metrics/.../loggers.py:271] Engine 000: Avg prompt throughput: 5.0 tokens/s, Avg "
     "generation throughput: 6.0 tokens/s, Running: 2 reqs, Waiting: 1 reqs, GPU KV cache "
     "usage: 2.0%, Prefix cache hit rate: 0.0%", dict(prompt_tps=5.0, ts="2026-05-12T08:01:39")),
    # wrapper timestamp in front
    ("[2024-07-08 15:17:34] INFO 07-08 15:17:34 [loggers.py:87] Engine 000: Avg prompt "
     "throughput: 7.0 tokens/s, Avg generation throughput: 8.0 tokens/s, Running: 3 reqs, "
     "Waiting: 0 reqs, GPU KV cache usage: 3.0%, Prefix cache hit rate: 0.0%",
     dict(gen_tps=8.0, ts="2024-07-08T15:17:34")),
]


@pytest.mark.parametrize("line, expected", VLLM_STATS)
def test_vllm_stats_line_in_every_era(line, expected):
    rec = one(line + "\n")
    assert rec["kind"] == "engine_stats"
    for key, value in expected.items():
        assert rec[key] == value, key


VLLM_SPEC = [
    (P033 + "SpecDecoding metrics: Mean acceptance length: 2.61, Accepted throughput: 402.50 "
     "tokens/s, Drafted throughput: 750.00 tokens/s, Accepted: 4025 tokens, Drafted: 7500 "
     "tokens, Per-position acceptance rate: 0.781, 0.529, 0.300, Avg Draft acceptance rate: 53.7%",
     dict(mean_acceptance_length=2.61, accepted=4025, drafted=7500, accepted_tps=402.5,
          per_position_acceptance=[0.781, 0.529, 0.3], draft_acceptance_rate_pct=53.7)),
    ("INFO 07-02 09:31:20 [metrics.py:88] SpecDecoding metrics: Draft acceptance rate: 58.2%, "
     "Mean acceptance length: 2.16, Accepted: 1164 tokens, Drafted: 2000 tokens, Per-position "
     "acceptance rate: 0.742, 0.418",
     dict(draft_acceptance_rate_pct=58.2, mean_acceptance_length=2.16, accepted=1164,
          per_position_acceptance=[0.742, 0.418])),
    ("INFO 04-10 09:31:20 [metrics.py:80] SpecDecoding metrics: Draft acceptance rate: 40.0%, "
     "Accepted: 40 tokens, Drafted: 100 tokens", dict(accepted=40, drafted=100)),
    ("INFO 03-20 09:31:20 [metrics.py:70] Speculative metrics: Draft acceptance rate: 0.415, "
     "Number of accepted tokens: 83, Number of draft tokens: 200, ",
     dict(draft_acceptance_rate_pct=pytest.approx(41.5), accepted=83, drafted=200)),
    ("INFO 10-01 09:31:20 metrics.py:400] Speculative metrics: Draft acceptance rate: 0.500, "
     "System efficiency: 0.400, Number of speculative tokens: 4, Number of accepted tokens: 50, "
     "Number of draft tokens tokens: 100, Number of emitted tokens tokens: 90.",
     dict(accepted=50, drafted=100, emitted=90, num_spec_tokens=4, cumulative=True,
          system_efficiency=0.4)),
    (P033 + "SpecDecoding metrics: Mean acceptance length: 1.00, Accepted throughput: 0.00 "
     "tokens/s, Drafted throughput: 0.00 tokens/s, Accepted: 0 tokens, Drafted: 0 tokens, "
     "Per-position acceptance rate: , Avg Draft acceptance rate: nan%",
     dict(accepted=0, draft_acceptance_rate_pct=None, per_position_acceptance=[])),
]


@pytest.mark.parametrize("line, expected", VLLM_SPEC)
def test_vllm_spec_decode_line_in_every_era(line, expected):
    rec = one(line + "\n")
    assert rec["kind"] == "spec_decode"
    for key, value in expected.items():
        assert rec[key] == value, key


VLLM_OTHER = [
    ("(APIServer pid=1) INFO 11-29 07:00:00 [api_server.py:1] vLLM server version 0.33.0, "
     "serving model Qwen/Qwen3-8B", "version", dict(version="0.33.0", model="Qwen/Qwen3-8B")),
    ("INFO 06-16 10:03:14 [api_server.py:1] vLLM API server version 0.9.2", "version",
     dict(version="0.9.2")),
    ("(APIServer pid=1) INFO 11-29 07:00:00 [utils.py:1] non-default args: {'model': 'm', "
     "'tensor_parallel_size': 8, 'speculative_config': {'method': 'eagle3'}}", "server_args",
     dict(args={"model": "m", "tensor_parallel_size": 8,
                "speculative_config": {"method": "eagle3"}})),
    ("(EngineCore pid=3) INFO 11-29 07:00:00 [kv_cache_utils.py:1] GPU KV cache size: 1,823,372 "
     "tokens, Maximum concurrency for 262,144 tokens per request: 6.96x", "kv_cache",
     dict(kv_tokens=1823372, max_len=262144, max_concurrency=6.96, device="GPU")),
    ("(EngineCore_DP0 pid=3) INFO 11-29 07:00:00 [kv_cache_utils.py:1] Maximum concurrency for "
     "32,768 tokens per request: 55.64x", "kv_cache", dict(max_len=32768, max_concurrency=55.64)),
    ("(Worker_TP0 pid=4) INFO 11-29 07:00:00 [gpu_model_runner.py:1] Graph capturing finished "
     "in 26 secs, took 3.41 GiB", "cuda_graph", dict(seconds=26.0, gib=3.41)),
    ("(Worker pid=4) INFO 11-29 07:00:00 [monitor.py:1] torch.compile took 60.04 s in total",
     "compile", dict(seconds=60.04)),
    ("(EngineCore pid=3) INFO 11-29 07:00:00 [core.py:1] init engine (profile, create kv cache, "
     "warmup model) took 205.79 s (compilation: 60.04 s)", "engine_init",
     dict(seconds=205.79, compile_seconds=60.04)),
    ("(Worker_TP2 pid=5) WARNING 11-29 07:00:00 [fused_moe.py:1] CUDA out of memory while "
     "allocating the MoE workspace (3.1 GiB requested, 2.2 GiB free); freeing cached blocks and "
     "retrying (soft OOM retry 1/4)", "memory_event",
     dict(event="soft_oom_retry", proc="Worker_TP2")),
    ("(EngineCore pid=3) ERROR 11-29 07:00:00 [core.py:1] torch.OutOfMemoryError: CUDA out of "
     "memory. Tried to allocate 2.00 GiB.", "memory_event", dict(event="oom")),
    ("WARNING 05-01 10:00:00 scheduler.py:1] Sequence group 12 is preempted by "
     "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. "
     "total_num_cumulative_preemption=7", "memory_event", dict(event="preemption")),
    ("2026-11-20 10:12:05,050 - INFO - flashinfer.jit: Loading JIT ops: fused_moe_sm100",
     "jit_event", dict(phase="start", what="load", op="fused_moe_sm100",
                       ts="2026-11-20T10:12:05.050")),        # the library's milliseconds kept
    ("2026-11-20 10:12:06,235 - INFO - autotuner.py:12 - flashinfer.jit: Finished loading JIT "
     "ops: fused_moe_sm100", "jit_event", dict(phase="end", what="load", op="fused_moe_sm100",
                                              ts="2026-11-20T10:12:06.235")),
    ("(APIServer pid=1) INFO 11-29 07:00:00 [v.py:1] JIT kernel warmup finished in 3.20s.",
     "jit_event", dict(phase="warmup_end", seconds=3.2)),
]


@pytest.mark.parametrize("line, kind, expected", VLLM_OTHER)
def test_vllm_startup_memory_and_jit_lines(line, kind, expected):
    rec = one(line + "\n", engine="vllm")
    assert rec["kind"] == kind
    for key, value in expected.items():
        assert rec[key] == value, key


SG = "[2026-11-29 07:14:57 TP0] "
SGLANG_BATCH = [
    (SG + "Prefill batch, #new-seq: 3, #new-token: 6144, #cached-token: 2210, token usage: 0.37, "
     "#running-req: 18, #queue-req: 4, #pending-token: 9821, cuda graph: False, input throughput "
     "(token/s): 21873.40", "prefill_batch",
     dict(new_seq=3, new_token=6144, cached_token=2210, token_usage=0.37, running_req=18,
          queue_req=4, pending_token=9821, graph="cuda", graph_used=False, input_tps=21873.4)),
    ("[2025-09-14 10:02:11 TP0] Prefill batch. #new-seq: 1, #new-token: 812, #cached-token: 64, "
     "token usage: 0.05, #running-req: 2, #queue-req: 0, ", "prefill_batch",
     dict(new_seq=1, new_token=812, queue_req=0, rank="TP0")),
    ("[2024-12-02 18:40:03 TP0] Prefill batch. #new-seq: 2, #new-token: 4096, #cached-token: 120, "
     "cache hit rate: 7.45%, token usage: 0.21, #running-req: 11, #queue-req: 9", "prefill_batch",
     dict(cache_hit_rate_pct=7.45, running_req=11)),
    ("[2026-02-10 08:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 100, #cached-token: 0, "
     "token usage: 0.01, #running-req: 0, #queue-req: 0, input throughput (token/s): 900.00, "
     "cuda graph: False", "prefill_batch", dict(input_tps=900.0)),
    ("[2024-08-10 08:00:00 TP0] Prefill batch(mixed #running-req: 5). #new-seq: 1, #new-token: "
     "10, #cached-token: 0, cache hit rate: 0.00%, #queue-req: 0", "prefill_batch",
     dict(running_req=5, new_token=10)),
    ("new fill batch. #seq: 1. #cached_token: 0. #new_token: 512. #remaining_req: 0. "
     "#running_req: 0. tree_cache_hit_rate: 0.00%.", "prefill_batch", dict(new_token=512)),
    (SG + "Decode batch, #running-req: 21, #token: 48213, token usage: 0.41, accept len: 2.84, "
     "accept rate: 0.61, cuda graph: True, gen throughput (token/s): 1893.55, #queue-req: 0",
     "decode_batch", dict(running_req=21, token=48213, accept_len=2.84, accept_rate=0.61,
                          graph_used=True, gen_tps=1893.55, queue_req=0)),
    ("[2026-11-29 07:15:04 DP1 TP1] Decode batch, #running-req: 64, #token: 0, token usage: "
     "0.00, pre-allocated usage: 0.12, #prealloc-req: 3, #transfer-req: 1, #retracted-req: 0, "
     "cuda graph: True, gen throughput (token/s): 2710.02, #queue-req: 0", "decode_batch",
     dict(rank="DP1 TP1", prealloc_req=3, retracted_req=0, gen_tps=2710.02)),
    ("[2025-03-03 12:00:40 TP0] Decode batch. #running-req: 9, #token: 20412, token usage: 0.09, "
     "accept len: 3.07, gen throughput (token/s): 402.19, #queue-req: 0", "decode_batch",
     dict(accept_len=3.07, gen_tps=402.19)),
    ("[2025-10-01 12:00:40 TP0] Decode batch. #running-req: 9, #token: 20412, token usage: 0.09, "
     "accept len: 3.07, accept rate: 0.40, cpu graph: False, gen throughput (token/s): 40.19, "
     "#queue-req: 0, ", "decode_batch", dict(graph="cpu", graph_used=False, accept_rate=0.4)),
    ("[16:43:29 TP0] Decode batch. #running-req: 2, #token: 100, token usage: 0.01, gen "
     "throughput (token/s): 50.00, #queue-req: 0", "decode_batch", dict(gen_tps=50.0, ts=None)),
    ("[2026-11-29 07:14:57.123 TP0] Decode batch, #running-req: 1, #full token: 10, full token "
     "usage: 0.10, #swa token: 5, swa token usage: 0.05, cuda graph: True, gen throughput "
     "(token/s): 10.00, #queue-req: 0", "decode_batch",
     dict(full_token=10, swa_token_usage=0.05, ts="2026-11-29T07:14:57")),
]


@pytest.mark.parametrize("line, kind, expected", SGLANG_BATCH)
def test_sglang_batch_lines_in_every_era(line, kind, expected):
    rec = one(line + "\n", engine="sglang")
    assert rec["kind"] == kind
    for key, value in expected.items():
        assert rec[key] == value, key


SGLANG_OTHER = [
    (SG + "KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_tokens_gained: 900, "
     "#new_token_ratio: 0.4000 -> 0.6000", "retraction", dict(retracted=3)),
    (SG + "Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1 -> 0.2",
     "retraction", dict(retracted=1)),
    (SG + "Prefill out of memory. Try to lower your batch size.", "memory_event",
     dict(event="oom")),
    ("[2026-11-29 07:00:00] server_args={'model_path': '/m', 'tp_size': 8, 'dcp_size': 8}",
     "server_args", dict(args={"model_path": "/m", "tp_size": 8, "dcp_size": 8})),
    ("[2025-06-01 07:00:00] server_args=ServerArgs(model_path='/m', tp_size=4, "
     "mem_fraction_static=0.85, json_model_override_args='{}')", "server_args",
     dict(args={"model_path": "/m", "tp_size": 4, "mem_fraction_static": 0.85,
                "json_model_override_args": "{}"})),
    (SG + "max_total_num_tokens=25690112, chunked_prefill_size=32768, max_prefill_tokens=16384, "
     "max_running_requests=48, context_len=262144, available_gpu_mem=77.17 GB", "capacity",
     dict(kv_tokens=25690112, chunked_prefill_size=32768)),
    (SG + "Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, K=2048, num_groups=1 with "
     "all Ms.", "jit_event", dict(op="<GEMM_NT_F8F8BF16>", phase="start", what="compile")),
]


@pytest.mark.parametrize("line, kind, expected", SGLANG_OTHER)
def test_sglang_retraction_memory_and_startup_lines(line, kind, expected):
    rec = one(line + "\n", engine="sglang")
    assert rec["kind"] == kind
    for key, value in expected.items():
        assert rec[key] == value, key


def test_two_records_glued_on_one_line_are_both_read():
    a = P033 + ("Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: "
                "2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
                "Prefix cache hit rate: 0.0%")
    b = P033 + ("SpecDecoding metrics: Mean acceptance length: 1.50, Accepted throughput: 1.00 "
                "tokens/s, Drafted throughput: 2.00 tokens/s, Accepted: 10 tokens, Drafted: 20 "
                "tokens, Per-position acceptance rate: 0.500, Avg Draft acceptance rate: 50.0%")
    recs, summary = records("noise\n" + a + b + "\n")
    assert [(r["kind"], r["line"]) for r in recs] == [("engine_stats", 2), ("spec_decode", 2)]
    assert recs[0]["prefix_cache_hit_rate_pct"] == 0.0 and summary.unrecognised == 0


def test_sglang_glued_batch_lines_are_both_read():
    a = SG + "Decode batch, #running-req: 1, #token: 5, token usage: 0.00, cuda graph: True, " \
        "gen throughput (token/s): 10.00, #queue-req: 0"
    recs, _ = records(a + a + "\n", engine="sglang")
    assert [r["kind"] for r in recs] == ["decode_batch", "decode_batch"]


def test_crlf_continuations_and_line_numbers():
    text = ("(APIServer pid=1) INFO 11-29 07:00:00 [x.py:1] Some multi-line message\r\n"
            "(APIServer pid=1) INFO 11-29 07:00:00 [x.py:1] continued\r\n" + VLLM_STATS[0][0]
            + "\r\n")
    (rec,), summary = records(text)
    assert rec["line"] == 3 and rec["running"] == 24 and summary.lines == 3


def test_wrapped_line_is_a_warning_not_a_crash():
    stats = VLLM_STATS[0][0]
    cut = stats.index("Running")
    text = stats[:cut] + "\n" + stats[cut:] + "\n" + VLLM_STATS[3][0] + "\n"
    recs, summary = records(text)
    assert [r["line"] for r in recs] == [3]
    assert summary.unrecognised == 1
    assert summary.warnings[0].startswith("mem.log:1: no running in stats line")


def test_malformed_field_is_a_warning_naming_the_line():
    bad = VLLM_STATS[3][0].replace("512.3 tokens/s", "5x2.3 tokens/s")
    recs, summary = records("x\n" + bad + "\n")
    assert recs == [] and summary.unrecognised == 1
    assert summary.warnings == ["mem.log:2: malformed part 'Avg prompt throughput: 5x2.3 "
                                "tokens/s' (line skipped)"]


def test_non_utf8_bytes_inside_a_line_are_replaced_with_a_warning():
    raw = VLLM_STATS[3][0].encode().replace(b"Prefix cache", b"Pre\xfffix cache") + b"\n"
    summary = Summary(file="mem.log", engine="auto")
    (rec,) = list(scan(io.BytesIO(raw), "mem.log", "auto", 2026, summary))
    assert rec["prompt_tps"] == 512.3
    assert summary.warnings == ["mem.log:1: bytes that are not UTF-8 were replaced"]


def test_year_rolls_over_at_new_year():
    def stats(mmdd):
        return VLLM_STATS[3][0].replace("03-14", mmdd) + "\n"

    recs, _ = records(stats("12-31") + stats("01-01") + stats("01-02"), year=2025)
    assert [r["ts"][:10] for r in recs] == ["2025-12-31", "2026-01-01", "2026-01-02"]


def test_other_lines_are_counted_but_not_kept():
    text = 'INFO:     10.0.0.5:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n' * 3
    text += VLLM_STATS[3][0] + "\n"
    recs, summary = records(text)
    assert len(recs) == 1 and summary.lines == 4 and summary.counts == {"engine_stats": 1}


@pytest.mark.parametrize("data, message", [
    (b"", "empty file"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary content"),
    (b"# README\nnothing to see\n", "no vLLM or SGLang log lines found"),
])
def test_non_logs_are_refused(data, message):
    with pytest.raises(ParseError, match=message):
        list(scan(io.BytesIO(data), "x.log"))


def test_a_huge_single_line_is_read_without_trouble():
    line = VLLM_STATS[3][0] + " " + "x" * (10 << 20)
    recs, summary = records("hello\n" + VLLM_STATS[3][0] + "\n" + line + "\n")
    assert [r["line"] for r in recs] == [2, 3] and summary.lines == 3


def test_parallel_read_equals_one_process(tmp_path, monkeypatch):
    """A big log is scanned in two processes; the records are the same as from one."""
    from benchreport.ingest import io as bio

    lines = []
    for i in range(4000):
        mmdd = "12-31" if i < 2500 else "01-01"          # crosses New Year in the 2nd half
        lines.append(VLLM_STATS[3][0].replace("03-14", mmdd).replace("512.3", f"{i}.5"))
        lines.append('INFO:     10.0.0.5:1 - "POST /v1/completions HTTP/1.1" 200 OK')
    path = tmp_path / "big.log"
    path.write_text("\n".join(lines) + "\n")
    one = bio.read_raw(path, "big.log", "auto", 2025, workers=1)
    monkeypatch.setattr(bio, "PARALLEL_MIN_BYTES", 0)
    summary = Summary(file="big.log", engine="auto")
    two = bio.read_raw(path, "big.log", "auto", 2025, summary, workers=2)
    assert two == one and len(two) == 4000
    assert summary.lines == 8000 and summary.counts == {"engine_stats": 4000}
    assert two[2499]["ts"].startswith("2025-12-31") and two[2500]["ts"].startswith("2026-01-01")
    assert two[3999]["line"] == 7999 and two[3999]["prompt_tps"] == 3999.5


@pytest.mark.parametrize("block", [17, 64, 100, 257, 1000])
def test_block_boundaries_change_nothing(monkeypatch, block):
    """Blocks cut lines anywhere; the records and counts must not depend on where."""
    from benchreport.ingest.parsers import logscan

    text = "".join(line + "\n" + 'INFO:     1.2.3.4:5 - "GET / HTTP/1.1" 200 OK\n'
                   for line, _ in VLLM_STATS[3:6]) * 3
    reference, ref_summary = records(text, engine="vllm")
    monkeypatch.setattr(logscan, "BLOCK", block)
    got, summary = records(text, engine="vllm")
    assert got == reference and len(got) == 9
    assert (summary.lines, summary.counts) == (ref_summary.lines, ref_summary.counts)


@pytest.mark.parametrize("name", ["vllm/server.log", "sglang/server.log"])
def test_fast_path_and_general_path_agree(project, monkeypatch, name):
    """Current-era lines take a one-regex fast path; it must read exactly what the general
    path reads."""
    from benchreport.ingest.parsers import sglang_log, vllm_log

    data = (project / "data/2024-b300/raw" / name).read_bytes()
    fast, _ = records(data.decode())
    assert sum(1 for r in fast if r["kind"] in ("engine_stats", "decode_batch")) > 40
    monkeypatch.setattr(vllm_log, "fast_line", lambda raw: None)
    monkeypatch.setattr(sglang_log, "fast_line", lambda raw: None)
    slow, _ = records(data.decode())
    assert fast == slow


def test_an_sglang_log_is_not_taken_for_json():
    """Every SGLang line starts with "[": that must not send a big log down the one-process
    path meant for JSON (it did, and halved the ingest speed of SGLang logs)."""
    from benchreport.ingest.io import is_structured

    assert not is_structured(b"[2026-11-20 13:41:07 TP0] Prefill batch, #new-seq: 1", "server.log")
    assert not is_structured(b"[16:43:29 TP0] Decode batch. #running-req: 1", "x.txt")
    assert is_structured(b'  [{"duration": 1}]', "x") and is_structured(b'{"a": 1}', "x")
    assert is_structured(b"[]", "x") and is_structured(b"image: x", "launch.yaml")


def test_a_big_sglang_log_is_read_in_two_processes(tmp_path, monkeypatch):
    from benchreport.ingest import io as bio

    line = ("[2026-11-20 14:0{m}:{s:02d} TP0] Decode batch, #running-req: 10, #token: 655360, "
            "token usage: 0.31, accept len: 1.05, cuda graph: True, gen throughput (token/s): "
            "{i}.25, #queue-req: 0")
    text = "".join(line.format(m=i // 600, s=(i // 10) % 60, i=i) + "\n" +
                   "[2026-11-20 14:00:00] INFO:     127.0.0.1:1 - \"POST /generate\" 200 OK\n"
                   for i in range(3000))
    path = tmp_path / "server.log"
    path.write_text(text)
    one = bio.read_raw(path, "server.log", "auto", 2026, workers=1)
    real_cuts, cut = bio._cuts, []

    def spy(*args):                     # _cuts runs only when the file is split
        cut.append(args)
        return real_cuts(*args)

    monkeypatch.setattr(bio, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(bio, "_cuts", spy)
    two = bio.read_raw(path, "server.log", "auto", 2026, workers=2)
    assert cut and two == one and len(two) == 3000
    assert two[-1]["gen_tps"] == 2999.25 and two[-1]["line"] == 5999


def _big_vllm_log(tmp_path, lines=4000):
    text = "".join(VLLM_STATS[3][0].replace("512.3", f"{i}.5") + "\n" +
                   'INFO:     10.0.0.5:1 - "POST /v1/completions HTTP/1.1" 200 OK\n'
                   for i in range(lines))
    path = tmp_path / "big.log"
    path.write_text(text)
    return path


def _children() -> set[int]:
    """This process's children now, zombies included (psutil lists them): a test compares
    the set before and after, since under xdist the worker has children of its own (kernels,
    a browser) that a process-wide wait would see."""
    import psutil

    return {c.pid for c in psutil.Process().children()}


def test_an_error_in_the_helper_process_is_raised_in_the_parent(tmp_path, monkeypatch):
    from benchreport.ingest import io as bio

    path = _big_vllm_log(tmp_path)
    monkeypatch.setattr(bio, "PARALLEL_MIN_BYTES", 0)
    before = _children()

    def fails(job, send):                # runs in the helper (forked after the patch)
        raise ParseError("broken in the helper", path="big.log")

    monkeypatch.setattr(bio, "_scan_part", fails)
    with pytest.raises(ParseError, match="broken in the helper"):
        bio.read_raw(path, "big.log", "auto", 2026, workers=2)

    def dies(job, send):
        import os

        os._exit(3)

    monkeypatch.setattr(bio, "_scan_part", dies)
    with pytest.raises(RuntimeError, match="stopped before the end"):
        bio.read_raw(path, "big.log", "auto", 2026, workers=2)
    assert _children() <= before            # every helper reaped: no new child, no zombie


def test_a_reading_stopped_early_stops_the_helper_process(tmp_path, monkeypatch):
    import itertools

    from benchreport.ingest import io as bio

    path = _big_vllm_log(tmp_path, 20000)
    monkeypatch.setattr(bio, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(bio, "SPILL_ROWS", 100)
    before = _children()
    for taken in (5, 15000):             # in the parent's range; in the helper's
        records = bio.iter_raw(path, "big.log", "auto", 2026, workers=2)
        got = list(itertools.islice(records, taken))
        records.close()
        assert len(got) == taken and got[-1]["line"] == 2 * taken - 1
        assert _children() <= before


@pytest.mark.parametrize("engine, find, change, says", [
    ("vllm", "Avg prompt throughput: 9078.8", "Avg prompt throughput: nan", "prompt_tps is nan"),
    ("vllm", "Running: 2 reqs", "Running: 99999999999999999999999 reqs",
     "running is 99999999999999999999999"),
    ("vllm", "11-20 10:12:14", "11-20 25:12:14", "the time 2026-11-20 25:12:14 does not exist"),
    ("sglang", "[2026-11-20 14:05:13 TP0] Prefill", "[2026-13-20 14:05:13 TP0] Prefill",
     "the time 2026-13-20 14:05:13 does not exist"),
])
def test_an_impossible_number_or_time_skips_its_line_with_a_warning(engine, find, change, says):
    """Issue 33, finding 11: NaN, 1e309 and an hour 25 passed the parsers and ended as a
    traceback in a notebook cell instead of a line naming the file and line."""
    text = (ROOT / f"data/2024-b300/raw/{engine}/server.log").read_text()
    assert find in text
    number = text[: text.index(find)].count("\n") + 1
    summary = Summary("s.log", engine)
    records = list(scan(io.BytesIO(text.replace(find, change, 1).encode()), "s.log", engine,
                        2026, summary))
    assert number not in [r["line"] for r in records]
    assert f"s.log:{number}: {says}, which no engine prints (line skipped)" in summary.warnings
