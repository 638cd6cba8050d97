"""vLLM and SGLang client results read through the dispatcher (`read_points`).

Every expected value below was read off the raw file by eye (the comment says which key);
none is computed by the code under test. The real samples are byte-for-byte copies of
public files (see /work/shared/real-samples/SOURCES.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchreport.core.errors import ParseError
from benchreport.ingest.clients import decode, offline, read_points, sglang, sniff, vllm
from benchreport.ingest.clients.base import FIELDS, STATS

from .conftest import REAL_SAMPLES, needs_samples

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = REAL_SAMPLES
SWEEP = SAMPLES / "vllm-sweep"
ASCEND = "vllm-ascend-nightly-2025-05-serving_qwen2_5_7B_tp1_qps_{}.json"
LORA = SAMPLES / "sglang-multi" / "sglang-lora_bench-1115_100_1024_128-6records.jsonl"
REF_VLLM = ROOT / "data/2024-b300/raw/vllm"
REF_SGLANG = ROOT / "data/2024-b300/raw/sglang"
V64 = REF_VLLM / "vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json"
V200 = REF_VLLM / "vllm-infqps-concurrency10-Kimi-K3-20261120-102135.json"
S64 = REF_SGLANG / "sglang_1120_10_65536_3072.jsonl"
S200 = REF_SGLANG / "sglang_1120_10_200000_3072.jsonl"



def read(path: Path):
    return read_points(path.read_bytes(), str(path))


def read_text(text: str, name: str = "result.json"):
    return read_points(text.encode(), name)


def stats_only_contract(p) -> None:
    """Every field is a contract field; latency statistics only mean/median/p90/p99/std."""
    assert set(p.fields) <= set(FIELDS)
    for key in p.fields:
        if key.endswith("_ms"):
            assert key.split("_", 1)[0] in STATS


# ---------------------------------------------------------------------------------------
# vllm bench sweep (vLLM 0.25.1): run=0.json, run=1.json, summary.json

@needs_samples
@pytest.mark.parametrize("run, duration, mean_ttft, p99_e2el, date", [
    # "duration", "mean_ttft_ms", "p99_e2el_ms", "date" of run=0.json / run=1.json
    (0, 1.3653671270003542, 217.27289337468392, 876.8009717071254, "2026-08-18T02:13:33"),
    (1, 0.6420253609976498, 39.30731637592544, 169.63662419613684, "2026-08-18T02:13:38"),
])
def test_sweep_run_files(run, duration, mean_ttft, p99_e2el, date):
    [p] = read(SWEEP / f"vllm-bench-sweep-0.25.1-mns4-c2-run{run}.json")
    assert p.client == "vllm-bench-serve" and p.where == "$" and p.line == 1
    assert p.fields["duration"] == duration
    assert p.fields["completed"] == 8            # "completed": 8
    assert p.fields["failed"] == 0               # "failed": 0, recorded directly (0.25.1)
    assert p.sources["failed"] == "failed"
    assert p.fields["total_input_tokens"] == 256 and p.fields["total_output_tokens"] == 128
    assert p.fields["max_concurrency"] == 2      # "max_concurrency": 2
    assert p.fields["request_rate"] == "inf"     # "request_rate": "inf" (a string)
    assert p.fields["mean_ttft_ms"] == mean_ttft
    assert p.fields["p99_e2el_ms"] == p99_e2el
    assert p.sources["p99_e2el_ms"] == "p99_e2el_ms"
    # the sweep parameters appended to the payload
    assert p.params["run_number"] == run and p.params["max_num_seqs"] == 4
    assert p.params["num_prompts"] == 8
    # measurements and bench-serve keys never leak into params
    for key in ("rtfx", "max_concurrent_requests", "max_output_tokens_per_s",
                "total_token_throughput", "request_goodput", "date", "model_id"):
        assert key not in p.params
    assert p.load == {"kind": "concurrency", "max_concurrency": 2, "request_rate": "inf",
                      "arrival": None}
    assert p.model == "facebook/opt-125m"       # "model_id"
    assert p.engine is None                      # "backend": "openai" names no engine
    assert p.date == date                        # "date": "20260818-0213xx"
    # 256 input tokens / 8 completed = 32; 128 / 8 = 16 (no per-request lists in the file)
    assert p.scenario == {"input_tokens": 32, "input_tokens_from": "mean",
                          "output_tokens": 16, "output_tokens_from": "mean"}
    assert p.definitions == {"ttft": "ttft.first-token", "tpot": "tpot.excl-first",
                             "itl": "itl.per-chunk", "e2el": "e2el.request"}
    assert p.requests == [] and p.warnings == []
    stats_only_contract(p)


@needs_samples
def test_sweep_summary_is_an_array_of_the_run_payloads():
    points = read(SWEEP / "vllm-bench-sweep-0.25.1-mns4-c2-summary.json")
    assert len(points) == 2                      # the array holds two objects
    assert [p.where for p in points] == ["[0]", "[1]"]
    # element 0 opens on line 2; it spans 41 lines ("{", 40 keys, "},"), element 1 on 44
    assert [p.line for p in points] == [2, 44]
    assert [p.params["run_number"] for p in points] == [0, 1]
    assert {p.params["max_num_seqs"] for p in points} == {4}
    assert [p.fields["duration"] for p in points] == [1.3653671270003542, 0.6420253609976498]
    assert [p.fields["median_itl_ms"] for p in points] == [7.372754000243731,
                                                            7.37574999948265]
    runs = [read(SWEEP / f"vllm-bench-sweep-0.25.1-mns4-c2-run{i}.json")[0] for i in (0, 1)]
    assert [p.fields for p in points] == [r.fields for r in runs]


# ---------------------------------------------------------------------------------------
# benchmark_serving.py ~0.8 (vllm-ascend): a QPS sweep 1/4/16/inf, "request_goodput:"

@needs_samples
@pytest.mark.parametrize("qps, rate, kind, duration, median_ttft, p99_itl", [
    # "request_rate", "duration", "median_ttft_ms", "p99_itl_ms" of each file
    ("1", 1.0, "rate", 215.82599276304245, 94.12808157503605, 72.82806649804117),
    ("4", 4.0, "rate", 70.96309100091457, 99.47756491601467, 116.76395431160927),
    ("16", 16.0, "rate", 44.60220558568835, 109.86220464110374, 234.70548689365387),
    ("inf", "inf", "unbounded", 38.96098167076707, 3082.936432212591, 77.88945183157921),
])
def test_benchmark_serving_qps_sweep(qps, rate, kind, duration, median_ttft, p99_itl):
    [p] = read(SWEEP / ASCEND.format(qps))
    assert p.client == "vllm-bench-serve"
    assert p.fields["request_rate"] == rate
    assert p.fields["max_concurrency"] is None   # "max_concurrency": null
    assert p.load["kind"] == kind
    # "burstiness": 1.0 with a finite rate: Poisson arrivals; none for an infinite rate
    assert p.load["arrival"] == ("poisson" if rate != "inf" else None)
    assert p.fields["duration"] == duration
    assert p.fields["median_ttft_ms"] == median_ttft
    assert p.fields["p99_itl_ms"] == p99_itl
    assert p.fields["completed"] == 200
    # 0.8.x writes no "failed": num_prompts 200 − completed 200 = 0
    assert p.fields["failed"] == 0
    assert p.sources["failed"] == "num_prompts - completed"
    # the misspelt key with a trailing colon is recognised, and is not a sweep parameter
    assert p.sources["request_goodput"] == "request_goodput:"
    assert "request_goodput:" not in p.params and "request_goodput" not in p.fields
    assert p.params == {"num_prompts": 200, "backend": "vllm"}
    assert p.engine == "vllm"                    # "backend": "vllm"
    assert p.model == "/root/.cache/modelscope/models/Qwen/Qwen2___5-7B-Instruct"
    # no e2el percentiles in 0.8's default --percentile-metrics
    assert not any("e2el" in k for k in p.fields)
    assert set(p.definitions) == {"ttft", "tpot", "itl"}
    # 43560 input tokens / 200 = 217.8; 44697 output tokens / 200 = 223.485
    assert p.scenario["input_tokens"] == 217.8 and p.scenario["output_tokens"] == 223.485
    assert p.scenario["input_tokens_from"] == "mean"
    stats_only_contract(p)


@needs_samples
def test_benchmark_serving_record_as_the_contract_prints_it():
    [p] = read(SWEEP / ASCEND.format("inf"))
    rec = p.record()
    assert rec["kind"] == "bench_result" and rec["client"] == "vllm-bench-serve"
    assert rec["request_rate"] == "inf" and rec["max_concurrency"] is None
    assert rec["request_throughput"] == 5.133340881656034    # "request_throughput"
    assert rec["output_throughput"] == 1147.2246869368987     # "output_throughput"
    assert rec["date"] == "2025-05-07T10:11:44"               # "date": "20250507-101144"
    assert rec["load_kind"] == "unbounded"
    json.dumps(rec, allow_nan=False)                          # strict JSON, no Infinity


# ---------------------------------------------------------------------------------------
# SGLang lora_bench derivative: 6 appended records of a rate sweep

@needs_samples
def test_sglang_lora_bench_six_records():
    points = read(LORA)
    assert len(points) == 6                      # six lines, six records
    assert {p.client for p in points} == {"sglang-bench-serving"}
    assert [p.where for p in points] == [f"line {i}" for i in range(1, 7)]
    assert [p.line for p in points] == [1, 2, 3, 4, 5, 6]
    # "request_rate" of each line
    assert [p.fields["request_rate"] for p in points] == [2.0, 2.0, 100.0, 100.0, 1000.0,
                                                         1000.0]
    assert {p.load["kind"] for p in points} == {"rate"}
    assert {p.load["arrival"] for p in points} == {"poisson"}
    # "duration" of lines 1 and 6 (equal to "benchmark_duration_s")
    assert points[0].fields["duration"] == 55.868500796030276
    assert points[5].fields["duration"] == 26.57562059094198
    assert [p.fields["completed"] for p in points] == [100] * 6
    # neither "failed", "num_prompts" nor per-request "errors": failed is unknown
    assert all("failed" not in p.fields and p.record()["failed"] is None for p in points)
    # "median_e2e_latency_ms" and "mean_e2e_latency_ms" of line 3, under vLLM's names
    assert points[2].fields["median_e2el_ms"] == 3716.4609889732674
    assert points[2].fields["mean_e2el_ms"] == 5158.4724281542
    assert points[2].sources["median_e2el_ms"] == "median_e2e_latency_ms"
    # no p99 keys in this derivative; "median_itl_ms" is 0.0 with 100 completed requests
    # and "median_ttft_ms" the E2E latency: not streamed, so TTFT and ITL are left out
    assert not any(k.startswith("p99") for p in points for k in p.fields)
    assert all("median_itl_ms" not in p.fields for p in points)
    assert all("median_ttft_ms" not in p.fields for p in points)
    assert [p.fields["total_input_tokens"] for p in points] == [40315] * 6
    # no dataset_name: the random_* lengths are the targets (lora_bench uses random prompts)
    assert points[0].scenario["input_tokens"] == 1024
    assert points[0].scenario["output_tokens"] == 128
    assert points[0].scenario["random_range_ratio"] == 0.0
    assert points[0].engine == "sglang" and points[0].params == {"backend": "sglang"}
    for p in points:
        stats_only_contract(p)


# ---------------------------------------------------------------------------------------
# the reference run's four result files

def test_reference_vllm_save_detailed_65k():
    [p] = read(V64)
    assert p.client == "vllm-bench-serve" and p.where == "$"
    assert p.fields["duration"] == 100.5 and p.fields["completed"] == 10
    assert p.fields["failed"] == 0 and p.fields["max_concurrency"] == 10
    assert p.fields["request_rate"] == "inf"
    assert p.fields["p90_ttft_ms"] == 36227.2266           # "p90_ttft_ms"
    assert p.fields["median_e2el_ms"] == 99805.541         # "median_e2el_ms"
    assert p.engine == "vllm" and p.model == "moonshotai/Kimi-K3"
    assert p.date == "2026-11-20T10:13:45"                 # "date": "20261120-101345"
    # the per-request lists hold 10 entries each
    assert len(p.requests) == 10
    first = p.requests[0]
    assert first["ttft_ms"] == pytest.approx(6177.367, rel=1e-12)    # ttfts[0] 6.177367 s
    assert first["e2el_ms"] == pytest.approx(99359.27, rel=1e-12)    # latencies[0] 99.35927 s
    assert first["input_tokens"] == 65536 and first["output_tokens"] == 3072
    assert first["error"] is None                          # errors[0] == ""
    assert p.requests[9]["ttft_ms"] == pytest.approx(37687.464, rel=1e-12)  # ttfts[9]
    # every input_lens entry is 65536: the mean of the per-request lengths
    assert p.scenario["input_tokens"] == 65536 and p.scenario["input_tokens_from"] == "mean"
    assert p.scenario["output_tokens"] == 3072
    # spec-decode measurements are not parameters
    assert not any(k.startswith("spec_decode") for k in p.params)
    assert p.params == {"num_prompts": 10, "backend": "vllm"}
    stats_only_contract(p)


def test_reference_vllm_save_detailed_200k():
    [p] = read(V200)
    assert p.fields["duration"] == 295.2 and p.fields["total_input_tokens"] == 2000000
    assert p.fields["mean_itl_ms"] == 77.67950777958399
    assert len(p.requests) == 10
    assert p.requests[0]["ttft_ms"] == pytest.approx(11905.092, rel=1e-12)  # 11.905092 s
    # its last streamed chunk, before the run's 295.2 s duration ends
    assert p.requests[9]["e2el_ms"] == pytest.approx(294504.409, rel=1e-12)  # 294.504409 s
    assert p.scenario["input_tokens"] == 200000


@pytest.mark.parametrize("path, duration, input_len, mean_e2e, p90_ttft, ttft0_ms", [
    # "duration", "random_input_len", "mean_e2e_latency_ms", "p90_ttft_ms", ttfts[0] × 1000
    (S64, 150.8, 65536, 136078.8279, 54178.007, 3027.367),
    (S200, 225.3, 200000, 224895.0259, 99691.5538, 11905.092),
])
def test_reference_sglang_one_record(path, duration, input_len, mean_e2e, p90_ttft, ttft0_ms):
    [p] = read(path)
    assert p.client == "sglang-bench-serving"
    assert p.where == "line 1" and p.line == 1
    assert p.fields["duration"] == duration and p.fields["completed"] == 10
    assert p.fields["request_rate"] == "inf"               # bare Infinity
    assert p.fields["max_concurrency"] == 10
    assert p.load == {"kind": "concurrency", "max_concurrency": 10, "request_rate": "inf",
                      "arrival": None}
    assert p.fields["mean_e2el_ms"] == mean_e2e
    assert p.sources["mean_e2el_ms"] == "mean_e2e_latency_ms"
    assert p.fields["p90_ttft_ms"] == p90_ttft
    assert not any(k.startswith("p95") for k in p.fields)  # p95 is not a contract statistic
    # ten empty strings in "errors": none failed
    assert p.fields["failed"] == 0 and p.sources["failed"] == "errors"
    assert len(p.requests) == 10
    assert p.requests[0]["ttft_ms"] == pytest.approx(ttft0_ms, rel=1e-12)
    assert p.requests[0]["e2el_ms"] is None                # SGLang saves no latencies list
    assert p.scenario["dataset"] == "random" and p.scenario["input_tokens"] == input_len
    assert p.scenario["output_tokens"] == 3072 and p.scenario["input_tokens_from"] == "target"
    # a few identifying settings from server_info, never the whole dict
    assert p.params["tp_size"] == 8 and p.params["dcp_size"] == 8
    assert p.params["server_version"] == "0.5.23"
    assert p.params["speculative_algorithm"] == "DSPARK"
    assert "internal_states" not in p.params and "server_info" not in p.params
    assert all(not isinstance(v, dict | list) for v in p.params.values())
    assert p.engine == "sglang"
    stats_only_contract(p)


# ---------------------------------------------------------------------------------------
# inline edge cases

def _vllm(**over) -> dict:
    rec = {"date": "20260101-120000", "endpoint_type": "openai", "backend": "vllm",
           "label": None, "model_id": "m", "tokenizer_id": "m", "num_prompts": 4,
           "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 4, "duration": 2.0,
           "completed": 4, "failed": 0, "total_input_tokens": 400, "total_output_tokens": 40,
           "request_throughput": 2.0, "request_goodput": None, "output_throughput": 20.0,
           "mean_ttft_ms": 10.0, "median_ttft_ms": 9.0, "std_ttft_ms": 1.0,
           "p99_ttft_ms": 12.0}
    rec.update(over)
    return rec


def _sglang(**over) -> dict:
    rec = {"tag": None, "backend": "sglang", "dataset_name": "random", "request_rate": 8.0,
           "max_concurrency": None, "sharegpt_output_len": None, "random_input_len": 100,
           "random_output_len": 10, "random_range_ratio": 1.0, "server_info": None,
           "duration": 5.0, "completed": 20, "total_input_tokens": 2000,
           "total_output_tokens": 200, "request_throughput": 4.0, "output_throughput": 40.0,
           "mean_e2e_latency_ms": 500.0, "median_e2e_latency_ms": 480.0,
           "median_ttft_ms": 50.0, "median_itl_ms": 5.0}
    rec.update(over)
    return rec


def test_all_requests_failed_is_failed_not_fast():
    # what vLLM writes when every request fails: completed 0, failed N, and 0.0 statistics
    errs = ["Bad Request: context too long"] * 4
    rec = _vllm(completed=0, failed=4, total_input_tokens=0, total_output_tokens=0,
                request_throughput=0.0, output_throughput=0.0, mean_ttft_ms=0.0,
                median_ttft_ms=0.0, std_ttft_ms=0.0, p99_ttft_ms=0.0, mean_tpot_ms=0.0,
                mean_itl_ms=0.0, median_itl_ms=0.0, input_lens=[100] * 4, output_lens=[0] * 4,
                ttfts=[0.0] * 4, latencies=[0.0] * 4, errors=errs)
    [p] = read_text(json.dumps(rec))
    assert p.fields["completed"] == 0 and p.fields["failed"] == 4
    assert not any(k.endswith("_ms") for k in p.fields)
    assert len(p.warnings) == 1 and "every request failed" in p.warnings[0]
    assert "left out" in p.warnings[0]
    assert len(p.requests) == 4
    assert all(r["ttft_ms"] is None and r["e2el_ms"] is None for r in p.requests)
    assert p.requests[0]["error"] == "Bad Request: context too long"
    assert p.definitions == {}


def test_all_failed_without_failed_key_counts_num_prompts():
    # older vLLM: no "failed"; num_prompts 4 − completed 0 = 4
    rec = _vllm(completed=0, mean_ttft_ms=0.0, median_ttft_ms=0.0, std_ttft_ms=0.0,
                p99_ttft_ms=0.0)
    del rec["failed"]
    [p] = read_text(json.dumps(rec))
    assert p.fields["failed"] == 4 and p.sources["failed"] == "num_prompts - completed"
    assert "mean_ttft_ms" not in p.fields and p.warnings


def test_some_requests_failed_rows_keep_the_error():
    rec = _vllm(completed=3, failed=1, input_lens=[100, 100, 100, 100],
                output_lens=[10, 10, 0, 10], ttfts=[0.01, 0.02, 0.0, 0.03],
                latencies=[0.1, 0.2, 0.0, 0.3], errors=["", "", "Timeout", ""])
    [p] = read_text(json.dumps(rec))
    assert [r["error"] for r in p.requests] == [None, None, "Timeout", None]
    assert p.requests[2]["ttft_ms"] is None and p.requests[1]["e2el_ms"] == 200.0
    # mean output length over the three that succeeded: (10 + 10 + 10) / 3 = 10
    assert p.scenario["output_tokens"] == 10
    assert p.fields["mean_ttft_ms"] == 10.0          # the client's statistics are kept


def test_chunk_gaps_and_send_times_become_request_columns():
    # itls in s (each gap × 1000 once); start_times are the client's clock readings: seconds
    # after the first request's; a 0.0 reading (never timed) is no time
    rec = _vllm(input_lens=[100] * 4, output_lens=[3, 3, 0, 2],
                ttfts=[0.01, 0.02, 0.0, 0.03], latencies=[0.1, 0.2, 0.0, 0.3],
                itls=[[0.02, 0.03], [0.5, 0.25], [], [0.125]],
                start_times=[1000.5, 1000.0, 1001.25, 0.0], errors=["", "", "Timeout", ""],
                completed=3, failed=1)
    [p] = read_text(json.dumps(rec))
    assert [r["itl_ms"] for r in p.requests] == [[20.0, 30.0], [500.0, 250.0], None, [125.0]]
    assert [r["start_s"] for r in p.requests] == [0.5, 0.0, 1.25, None]
    assert p.warnings == []                  # completed 3, failed 1: one row with an error


@pytest.mark.parametrize("over, says", [
    ({"completed": 4, "failed": 0}, "completed: 4, failed: 0"),
    ({"completed": 3}, "completed: 3, failed: 0"),
])
def test_counts_that_disagree_with_the_errors_are_a_warning(over, says):
    rec = _vllm(input_lens=[100] * 4, output_lens=[10, 10, 0, 0],
                ttfts=[0.01, 0.02, 0.0, 0.0], latencies=[0.1, 0.2, 0.0, 0.0],
                errors=["", "", "Timeout", "Timeout"], **over)
    [p] = read_text(json.dumps(rec), "r.json")
    assert p.warnings == [f"r.json:1: the file says {says}, but 2 of its 4 per-request rows "
                          "carry an error; latency statistics recomputed here use the 2 "
                          "requests without one"]


def test_sglang_errors_are_the_failed_count_and_agree():
    rec = _sglang(completed=2, input_lens=[100] * 3, output_lens=[10, 0, 10],
                  ttfts=[0.05, 0.0, 0.06], itls=[[0.01] * 9, [], [0.02] * 9],
                  errors=["", "HTTP 500", ""])
    [p] = read_text(json.dumps(rec) + "\n", "r.jsonl")
    assert p.fields["failed"] == 1 and p.sources["failed"] == "errors"
    assert p.requests[1] == {"ttft_ms": None, "e2el_ms": None, "input_tokens": 100,
                             "output_tokens": 0, "error": "HTTP 500", "itl_ms": None,
                             "start_s": None}
    assert p.warnings == []


def test_reduced_key_set_does_not_crash():
    rec = {"date": "20240601-080000", "backend": "vllm", "model_id": "m", "num_prompts": 50,
           "request_rate": 4, "mean_ttft_ms": 30.5, "median_ttft_ms": 28.0,
           "p95_ttft_ms": 40.0, "p99_ttft_ms": 44.0}
    [p] = read_text(json.dumps(rec))
    assert p.fields == {"request_rate": 4.0, "mean_ttft_ms": 30.5, "median_ttft_ms": 28.0,
                        "p99_ttft_ms": 44.0,                 # p95 dropped, nothing invented
                        "requests_asked": 50}                # the file's num_prompts
    assert p.record()["failed"] is None and "duration" not in p.record()
    assert p.load == {"kind": "rate", "max_concurrency": None, "request_rate": 4.0,
                      "arrival": "poisson"}
    assert p.scenario == {} and p.definitions == {"ttft": "ttft.first-token"}


def test_gamma_arrivals_and_rate_string():
    [p] = read_text(json.dumps(_vllm(request_rate="16", burstiness=0.5, max_concurrency=None)))
    assert p.fields["request_rate"] == 16.0
    assert p.load == {"kind": "rate", "max_concurrency": None, "request_rate": 16.0,
                      "arrival": "gamma"}


def test_append_result_json_lines_of_vllm_records():
    text = json.dumps(_vllm(max_concurrency=2)) + "\n" + json.dumps(_vllm(max_concurrency=8))
    points = read_text(text, "appended.json")
    assert [p.where for p in points] == ["line 1", "line 2"]
    assert [p.fields["max_concurrency"] for p in points] == [2, 8]


def test_compact_one_line_json_with_no_final_newline():
    text = json.dumps(_vllm(), separators=(",", ":"))
    assert "\n" not in text
    [p] = read_text(text)
    assert p.where == "$" and p.line == 1 and p.fields["median_ttft_ms"] == 9.0


def test_json_lines_saved_as_json():
    text = "\n".join(json.dumps(_sglang(request_rate=r)) for r in (1.0, 2.0, math.inf)) + "\n"
    assert "Infinity" in text
    points = read_text(text, "sglang_results.json")
    assert [p.client for p in points] == ["sglang-bench-serving"] * 3
    assert [p.fields["request_rate"] for p in points] == [1.0, 2.0, "inf"]
    assert [p.load["kind"] for p in points] == ["rate", "rate", "unbounded"]
    assert [p.line for p in points] == [1, 2, 3]


def test_a_broken_line_between_two_good_records():
    lines = [json.dumps(_sglang(request_rate=1.0)), '{"backend": "sglang", "duration": 5.',
             json.dumps(_sglang(request_rate=4.0))]
    points = read_text("\n".join(lines) + "\n", "sweep.jsonl")
    assert [p.line for p in points] == [1, 3]
    assert [p.fields["request_rate"] for p in points] == [1.0, 4.0]
    assert any("sweep.jsonl:2: not valid JSON" in w for w in points[0].warnings)


def test_sglang_successful_requests_and_benchmark_duration_stand_in():
    rec = _sglang(successful_requests=18, benchmark_duration_s=6.5)
    del rec["completed"], rec["duration"]
    [p] = read_text(json.dumps(rec))
    assert p.fields["completed"] == 18 and p.sources["completed"] == "successful_requests"
    assert p.fields["duration"] == 6.5 and p.sources["duration"] == "benchmark_duration_s"


def test_sglang_sharegpt_does_not_take_the_random_lengths():
    [p] = read_text(json.dumps(_sglang(dataset_name="sharegpt", sharegpt_output_len=256)))
    # random_input_len is written whatever the dataset; sharegpt prompts: mean 2000/20 = 100
    assert p.scenario["input_tokens"] == 100 and p.scenario["input_tokens_from"] == "mean"
    assert p.scenario["output_tokens"] == 256 and p.scenario["output_tokens_from"] == "target"
    assert "random_range_ratio" not in p.scenario


def test_no_secrets_or_command_lines_in_params():
    rec = _vllm(api_key="sk-abcdefghijklmnop", hf_token="hf_abcdefghijk",
                cmd="vllm bench serve --api-key sk-abcdefghijklmnop --model m",
                note="tuned with key=sk-abcdefghijklmnop", max_num_batched_tokens=8192)
    [p] = read_text(json.dumps(rec))
    assert "api_key" not in p.params and "hf_token" not in p.params and "cmd" not in p.params
    assert p.params["max_num_batched_tokens"] == 8192
    assert "sk-abc" not in json.dumps(p.record())


def test_bad_content_raises_a_one_line_error_with_the_line():
    with pytest.raises(ParseError) as err:
        read_text(json.dumps(_vllm(completed="ten")))
    assert "'completed' must be a number" in str(err.value) and "\n" not in str(err.value)
    assert err.value.line == 1
    lines = [json.dumps(_sglang()), json.dumps(_sglang(duration=-1.0))]
    with pytest.raises(ParseError) as err:
        read_text("\n".join(lines), "x.jsonl")
    assert err.value.line == 2 and "'duration'" in err.value.message


# ---------------------------------------------------------------------------------------
# offline benchmarks are refused, naming the tool

@pytest.mark.parametrize("content, tool", [
    ({"avg_latency": 1.52, "latencies": [1.5, 1.54],
      "percentiles": {"10": 1.5, "50": 1.52, "99": 1.54}}, "vLLM `benchmark_latency`"),
    ({"elapsed_time": 42.0, "num_requests": 1000, "total_num_tokens": 512000,
      "requests_per_second": 23.8, "tokens_per_second": 12190.5},
     "vLLM `benchmark_throughput`"),
])
def test_offline_vllm_outputs_are_refused(content, tool):
    text = json.dumps(content, indent=4)
    assert sniff(decode(text.encode(), "bench.json")) == "offline"
    with pytest.raises(ParseError) as err:
        read_text(text, "bench.json")
    msg = str(err.value)
    assert "\n" not in msg and tool in msg
    assert "(offline) result, not a serving benchmark" in msg
    assert "vllm bench serve" in msg and "sglang.bench_serving" in msg


def test_offline_sglang_one_batch_jsonl_is_refused():
    rows = [{"run_name": "before", "batch_size": b, "input_len": 1024, "output_len": 16,
             "prefill_latency": 0.1 * b, "prefill_throughput": 9000.0,
             "median_decode_latency": 0.01, "median_decode_throughput": 100.0 * b,
             "total_latency": 0.3, "overall_throughput": 60.0} for b in (1, 8)]
    with pytest.raises(ParseError, match="SGLang `bench_one_batch`"):
        read_text("\n".join(json.dumps(r) for r in rows), "one_batch.jsonl")


# ---------------------------------------------------------------------------------------
# vLLM nightly benchmark_results.json aggregates

NIGHTLY_ROWS = [
    {"Test name": "serving_llama8B_tp1_sharegpt_qps_1", "GPU": "H100", "Engine": "vllm",
     "Request rate (req/s)": 1.0, "Tput (req/s)": 0.98, "Output Tput (tok/s)": 201.5,
     "TTFT (ms)": 25.1, "ITL (ms)": 8.2, "TPOT (ms)": 8.4, "# of req.": 200},
    {"Test name": "serving_llama8B_tp1_sharegpt_qps_inf", "GPU": "H100", "Engine": "sglang",
     "Request rate (req/s)": "inf", "Tput (req/s)": 21.4, "Output Tput (tok/s)": 4400.0,
     "TTFT (ms)": 310.0, "ITL (ms)": 14.0, "TPOT (ms)": 15.5, "# of req.": 200},
]


def _columns_orient(rows):             # pandas DataFrame.to_json() default
    return {c: {str(i): r[c] for i, r in enumerate(rows)} for c in rows[0]}


def _split_orient(rows):               # pandas DataFrame.to_json(orient="split")
    cols = list(rows[0])
    return {"columns": cols, "index": [0, 1], "data": [[r[c] for c in cols] for r in rows]}


@pytest.mark.parametrize("layout", [
    lambda rows: rows,                                        # orient="records"
    _columns_orient,
    lambda rows: {str(i): r for i, r in enumerate(rows)},     # orient="index"
    _split_orient,
    lambda rows: {"serving": _columns_orient(rows),           # sections, offline ones left out
                  "latency": {"Test name": {"0": "latency_llama8B_tp1"},
                              "Mean latency (ms)": {"0": 1520.0}},
                  "throughput": [{"Test name": "throughput_llama8B_tp1",
                                  "Tput (req/s)": 23.8}]},
], ids=["records", "columns", "index", "split", "sections"])
def test_nightly_aggregate_layouts(layout):
    text = json.dumps(layout(NIGHTLY_ROWS))
    points = read_text(text, "benchmark_results.json")
    assert len(points) == 2
    a, b = points
    assert {p.client for p in points} == {"vllm-nightly-aggregate"}
    # bare latency columns hold medians; no other statistic is invented
    assert a.fields["median_ttft_ms"] == 25.1 and a.fields["median_itl_ms"] == 8.2
    assert a.fields["median_tpot_ms"] == 8.4 and a.sources["median_ttft_ms"] == "TTFT (ms)"
    assert not any(k.startswith(("mean_", "p99_", "std_", "p90_")) for k in a.fields)
    assert a.fields["request_rate"] == 1.0 and a.load["kind"] == "rate"
    assert b.fields["request_rate"] == "inf" and b.load["kind"] == "unbounded"
    assert a.fields["request_throughput"] == 0.98 and a.fields["output_throughput"] == 201.5
    assert a.fields["completed"] == 200
    assert a.params["test_name"] == "serving_llama8B_tp1_sharegpt_qps_1"
    assert a.params["gpu"] == "H100"
    assert (a.engine, b.engine) == ("vllm", "sglang")
    assert a.definitions == {"ttft": "ttft.first-token", "tpot": "tpot.excl-first",
                             "itl": "itl.per-chunk"}
    for p in points:
        stats_only_contract(p)


def test_nightly_sections_warn_about_the_offline_tables():
    text = json.dumps({"serving": NIGHTLY_ROWS,
                       "latency": [{"Test name": "latency_a", "Mean latency (ms)": 1.0}]})
    points = read_text(text, "benchmark_results.json")
    assert len(points) == 2 and "offline" in points[0].warnings[0]
    only_offline = json.dumps({"latency": [{"Test name": "latency_a",
                                            "Mean latency (ms)": 1.0}],
                               "throughput": [{"Test name": "t", "Tput (req/s)": 2.0}]})
    with pytest.raises(ParseError, match="no serving rows"):
        read_text(only_offline, "benchmark_results.json")


# ---------------------------------------------------------------------------------------
# the sniffers decide from content and leave other clients' files alone

@needs_samples
@pytest.mark.parametrize("path", sorted(
    p for d in ("guidellm", "aiperf", "genai-bench", "llmperf", "prometheus")
    for p in (SAMPLES / d).glob("*")) if SAMPLES.is_dir() else [])
def test_other_clients_files_are_not_claimed(path):
    doc = decode(path.read_bytes(), str(path))
    assert offline.sniff(doc) is None
    assert vllm.sniff(doc) is None
    assert sglang.sniff(doc) is None


def test_the_file_name_does_not_decide(tmp_path):
    # a vLLM result named like SGLang's default output, and the other way round
    [p] = read_text(json.dumps(_vllm()), "sglang_0101_4_100_10.jsonl")
    assert p.client == "vllm-bench-serve"
    [q] = read_text(json.dumps(_sglang()), "vllm-infqps-concurrency4-m-20260101.json")
    assert q.client == "sglang-bench-serving"


# ------------------------------------------------ SGLang's ITL: per backend and version

def _sglang_record(backend, **extra):
    rec = {"backend": backend, "dataset_name": "random", "request_rate": 4.0,
           "random_input_len": 1024, "random_output_len": 128, "duration": 10.0,
           "completed": 20, "total_input_tokens": 20480, "total_output_tokens": 2560,
           "mean_e2e_latency_ms": 900.0, "median_ttft_ms": 50.0, "median_itl_ms": 6.5,
           "mean_itl_ms": 7.0, "p99_itl_ms": 12.0}
    rec.update(extra)
    return rec


@pytest.mark.parametrize("backend, extra, code", [
    ("sglang", {}, "itl.per-token"),                # native /generate: gap ÷ new tokens
    ("sglang-native", {"accept_length": 3.2}, "itl.per-token"),
    ("sglang-oai", {}, "itl.per-chunk"),            # no speculative decoding recorded
    ("sglang-oai-chat", {"accept_length": None}, "itl.per-chunk"),
    ("sglang-oai", {"accept_length": 1.0}, "itl.per-chunk"),
    # speculative decoding: per chunk before PR #12064, ÷ accept length after; the record
    # does not say which client version wrote it
    ("sglang-oai", {"accept_length": 3.4}, "itl.unknown"),
    ("sglang-oai-chat", {"accept_length": 2.1}, "itl.unknown"),
    ("vllm", {"accept_length": 3.4}, "itl.per-chunk"),  # the PR divides sglang-oai only
    ("lmdeploy", {}, "itl.per-chunk"),
])
def test_sglang_itl_definition_follows_backend_and_accept_length(backend, extra, code):
    (p,) = read_text(json.dumps(_sglang_record(backend, **extra)) + "\n", "s.jsonl")
    assert p.client == "sglang-bench-serving"
    assert p.definitions["itl"] == code and p.fields["median_itl_ms"] == 6.5
    assert p.definitions["ttft"] == "ttft.first-token"


def test_sglang_native_and_oai_records_of_one_file_keep_their_own_itl():
    text = "".join(json.dumps(_sglang_record(b)) + "\n" for b in ("sglang", "sglang-oai"))
    native, oai = read_text(text, "s.jsonl")
    assert (native.definitions["itl"], oai.definitions["itl"]) == ("itl.per-token",
                                                                   "itl.per-chunk")
    rec = _sglang_record("sglang")
    del rec["backend"]
    (p,) = read_text(json.dumps(rec) + "\n", "s.jsonl")
    assert p.definitions["itl"] == "itl.unknown"         # no backend: the file cannot tell


@needs_samples
def test_real_lora_bench_records_are_native_sglang():
    for p in read(LORA):
        assert p.params["backend"] == "sglang"
        assert "itl" not in p.definitions           # its ITL is 0.0: not measured, left out


# ------------------------------------------------ responses that were not streamed

@needs_samples
def test_real_lora_bench_records_were_not_streamed():
    # lora_bench posts to /generate without "stream": each record's median_ttft_ms is its
    # whole response time (941.55 vs median_e2e_latency_ms 941.53 on line 1) and its
    # median_itl_ms 0.0 over 25466 output tokens of 100 requests
    points = read(LORA)
    for i, p in enumerate(points, start=1):
        assert not [k for k in p.fields if "ttft" in k or "tpot" in k or "itl" in k]
        assert set(p.definitions) == {"e2el"}
        assert "median_e2el_ms" in p.fields and "mean_e2el_ms" in p.fields
        assert "output_throughput" in p.fields and "request_throughput" in p.fields
        [note] = p.warnings                                 # one line, not two
        assert note.startswith(f"{LORA}:{i}: the responses were not streamed (")
        assert "median ITL 0.0 ms over 254.7 output tokens per request" in note
        assert "TTFT, TPOT and ITL are left out" in note
    assert "median TTFT 941.55 ms, median E2E 941.53 ms" in points[0].warnings[0]
    # line 3: TTFT below E2E, but no gap between chunks over 254.7 tokens a request
    assert "median TTFT 3094.18 ms, median E2E 3716.46 ms" in points[2].warnings[0]


def test_streamed_sglang_records_keep_their_ttft():
    # ITL above 0: streamed, whatever TTFT is
    (p,) = read_text(json.dumps(_sglang_record("sglang")) + "\n", "s.jsonl")
    assert p.fields["median_ttft_ms"] == 50.0 and p.fields["median_itl_ms"] == 6.5
    assert p.definitions["ttft"] == "ttft.first-token" and not p.warnings
    # one-token outputs: TTFT is the E2E latency and no gap exists, and that is no sign
    one = _sglang(total_output_tokens=20, median_ttft_ms=480.0, median_itl_ms=0.0)
    (p,) = read_text(json.dumps(one) + "\n", "s.jsonl")
    assert p.fields["median_ttft_ms"] == 480.0
    # the generated --output-details files (per-request ttfts and itls)
    for path in (S64, S200):
        [p] = read(path)
        assert "median_ttft_ms" in p.fields and "mean_itl_ms" in p.fields
        assert p.requests[0]["ttft_ms"] is not None and p.requests[0]["itl_ms"]
        assert not any("not streamed" in w for w in p.warnings)


def test_sglang_disable_stream_shapes_are_not_measured():
    # ITL absent, TTFT at or above E2E for every statistic given
    rec = _sglang(median_ttft_ms=480.2, mean_ttft_ms=500.1, p99_ttft_ms=900.0,
                  p99_e2e_latency_ms=899.5, mean_tpot_ms=3.0)
    del rec["median_itl_ms"]
    (p,) = read_text(json.dumps(rec) + "\n", "s.jsonl")
    assert not [k for k in p.fields if "ttft" in k or "tpot" in k or "itl" in k]
    assert p.fields["median_e2el_ms"] == 480.0
    assert "median TTFT 480.2 ms, median E2E 480 ms, no ITL" in p.warnings[0]
    # one statistic clearly below E2E and no ITL: nothing shows it, TTFT stays (the median
    # below it too: percentiles out of order would be left out as impossible)
    rec["p99_ttft_ms"], rec["median_ttft_ms"] = 300.0, 250.0
    (p,) = read_text(json.dumps(rec) + "\n", "s.jsonl")
    assert p.fields["p99_ttft_ms"] == 300.0
    # per-request rows: every request without a chunk gap, over 10 tokens each
    rows = _sglang(ttfts=[0.4] * 20, itls=[[]] * 20, output_lens=[10] * 20,
                   input_lens=[100] * 20, errors=[""] * 20, median_ttft_ms=400.0)
    (p,) = read_text(json.dumps(rows) + "\n", "s.jsonl")
    assert "median_ttft_ms" not in p.fields and p.requests[0]["ttft_ms"] is None
    assert "none of the 20 requests has a gap between chunks" in p.warnings[-1]
    # one request with gaps: streamed, even though the summary's ITL is 0
    rows["itls"] = [[]] * 19 + [[0.01, 0.01]]
    rows["median_itl_ms"] = 0.0
    (p,) = read_text(json.dumps(rows) + "\n", "s.jsonl")
    assert p.fields["median_ttft_ms"] == 400.0 and p.requests[0]["ttft_ms"] == 400.0


def test_vllm_records_are_not_read_as_unstreamed():
    # vLLM's reader keeps its own rules: a TTFT statistic close to E2E stays
    [p] = read_text(json.dumps(_vllm(median_e2el_ms=9.0, median_itl_ms=0.0)))
    assert p.fields["median_ttft_ms"] == 9.0
    for path in (V64, V200):
        [p] = read(path)
        assert "median_ttft_ms" in p.fields and not any("not streamed" in w
                                                        for w in p.warnings)
