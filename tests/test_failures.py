"""Failed requests are never fast: every latency statistic of a built run is over the
requests that succeeded, in each client's own failure shape, and a file whose counts
disagree with its per-request errors gets a warning naming both.

Each run goes through what a build does: ingest, the derived tables written and read back
(`save_ingest`, `load_ingested`), then the analyses. Expected values are computed here
from the successful requests only, by hand or with numpy on the generator's truth.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean, median

import numpy as np
import pytest

from benchreport.analyses.campaign import point_figures
from benchreport.analyses.latency import latency_figures
from benchreport.analyses.notebook import end_to_end
from benchreport.core.tables import load_ingested, warnings_of
from benchreport.ingest.io import load_run
from benchreport.ingest.run import ingest_run, save_ingest

RUN_YAML = """schema: 1
title: {ko: "실패한 요청", en: "Failed requests"}
date: 2026-01-15
hardware: {servers: 1, gpus: 1, gpu_model: Test GPU}
model: {name: Tiny, quantization: FP8}
deployment: docker
engines:
  - {id: ENGINE, name: NAME, image: "test/ENGINE:1"}
workloads:
  - {id: 1k, label: 1K, input_tokens: 1024, output_tokens: 4, concurrency: 10, num_prompts: 10}
"""
ERROR = "Internal Server Error"
# the five requests that succeeded (s): median TTFT 17.5 s, mean latency 100.2 s
OK_TTFTS = [15.0, 16.5, 17.5, 18.5, 20.0]
OK_LATENCIES = [98.0, 99.5, 100.2, 101.0, 102.3]
OK_ITLS = [[20.0, 30.0, 31.0], [25.0, 28.0, 30.0], [26.0, 27.5, 29.2], [27.0, 27.5, 28.0],
           [26.0, 28.0, 28.3]]


def _built(workspace: Path, engine: str, name: str, text: str):
    """The run with one result file, ingested, saved and read back as a build reads it."""
    run_dir = workspace / "data" / "fail"
    (run_dir / "raw" / engine).mkdir(parents=True)
    (run_dir / "run.yaml").write_text(RUN_YAML.replace("ENGINE", engine).replace(
        "NAME", {"vllm": "vLLM", "sglang": "SGLang"}[engine]))
    (run_dir / "raw" / engine / name).write_text(text)
    run = load_run("fail", workspace / "data", workspace / "report")
    save_ingest(run, ingest_run(run))
    ing = load_ingested(run)
    figures = {f.id: f.value for f in latency_figures(run, ing) + end_to_end(run, ing).figures}
    return run, ing, figures


def _vllm_failed_half() -> dict:
    """10 requests, 5 failed, as `vllm bench serve --save-detailed` writes them: a failed
    request has TTFT and latency 0.0, no output tokens, no gaps and its error text."""
    n_ok = len(OK_TTFTS)
    tpots = [(lat - t) / 3 for lat, t in zip(OK_LATENCIES, OK_TTFTS, strict=True)]
    pooled = [g for row in OK_ITLS for g in row]
    return {
        "date": "20260115-101000", "endpoint_type": "openai", "backend": "vllm",
        "model_id": "m", "tokenizer_id": "m", "num_prompts": 10, "request_rate": "inf",
        "burstiness": 1.0, "max_concurrency": 10, "duration": 103.0, "completed": n_ok,
        "failed": 5, "total_input_tokens": 1024 * n_ok, "total_output_tokens": 4 * n_ok,
        "request_throughput": n_ok / 103.0, "output_throughput": 4 * n_ok / 103.0,
        "input_lens": [1024] * 10, "output_lens": [4, 0, 4, 0, 4, 0, 4, 0, 4, 0],
        "ttfts": [x for t in OK_TTFTS for x in (t, 0.0)],
        "latencies": [x for t in OK_LATENCIES for x in (t, 0.0)],
        "itls": [x for row in OK_ITLS for x in (row, [])],
        "errors": [x for _ in OK_TTFTS for x in ("", ERROR)],
        # the client's own statistics are over the successes (vLLM's calculate_metrics)
        "mean_ttft_ms": 1000 * mean(OK_TTFTS), "median_ttft_ms": 1000 * median(OK_TTFTS),
        "mean_e2el_ms": 1000 * mean(OK_LATENCIES),
        "median_e2el_ms": 1000 * median(OK_LATENCIES),
        "mean_tpot_ms": 1000 * mean(tpots), "mean_itl_ms": 1000 * mean(pooled),
    }


def test_vllm_failed_requests_are_in_no_latency_statistic(workspace):
    _, ing, f = _built(workspace, "vllm", "vllm-infqps-concurrency10-m-20260115-101000.json",
                       json.dumps(_vllm_failed_half()))
    # the file's own figures over its 5 successes: median TTFT 17.5 s, mean E2E 100.2 s
    # (with the failures' zeros they would be 7.5 s and 50.1 s)
    assert f["latency.1k.vllm.ttft.median"] == pytest.approx(17_500.0, rel=1e-12)
    assert f["latency.1k.vllm.e2el.mean"] == pytest.approx(100_200.0, rel=1e-12)
    assert f["latency.1k.vllm.requests"] == 5
    assert f["latency.1k.vllm.ttft.min"] == pytest.approx(15_000.0, rel=1e-12)
    assert f["latency.1k.vllm.e2el.min"] == pytest.approx(98_000.0, rel=1e-12)
    tpots = [(lat - t) * 1000 / 3 for lat, t in zip(OK_LATENCIES, OK_TTFTS, strict=True)]
    assert f["latency.1k.vllm.tpot.min"] == pytest.approx(min(tpots), rel=1e-12)
    assert f["latency.1k.vllm.tpot.mean"] == pytest.approx(mean(tpots), rel=1e-12)
    pooled = [1000 * g for row in OK_ITLS for g in row]
    assert f["latency.1k.vllm.itl.mean"] == pytest.approx(mean(pooled), rel=1e-12)
    # every request was sent at the start: the first first token came after 15 s, not 0 s
    assert f["e2e.1k.vllm.to_first_token_s"] == pytest.approx(15.0, rel=1e-12)
    assert f["e2e.1k.vllm.to_last_first_token_s"] == pytest.approx(20.0, rel=1e-12)
    # the counts agree with the errors: no warning, and the failures stay in the tables
    assert warnings_of(ing.summaries) == []
    [view] = ing.results
    assert (view.completed, view.failed, len(view.requests), len(view.ok)) == (5, 5, 10, 5)
    assert [r.get("error") for r in view.requests[:2]] == [None, ERROR]


def test_a_file_that_says_none_failed_while_requests_carry_errors_is_warned(workspace):
    # completed 10, failed 0, yet 3 requests carry an error and 0.0 s (with output lengths)
    ttfts = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6]
    lats = [31.0, 32.0, 30.0, 33.0, 31.5, 30.5, 32.5]
    rec = {**_vllm_failed_half(), "completed": 10, "failed": 0,
           "output_lens": [1001] * 10, "ttfts": ttfts + [0.0] * 3,
           "latencies": lats + [0.0] * 3, "itls": [[0.03] * 1000] * 7 + [[]] * 3,
           "errors": [""] * 7 + [ERROR] * 3}
    name = "vllm-infqps-concurrency10-m-20260115-101000.json"
    _, ing, f = _built(workspace, "vllm", name, json.dumps(rec))
    tpots = [(lat - t) * 1000 / 1000 for lat, t in zip(lats, ttfts, strict=True)]
    assert f["latency.1k.vllm.tpot.min"] == pytest.approx(min(tpots), rel=1e-12)   # not 0.0
    assert f["latency.1k.vllm.tpot.median"] == pytest.approx(median(tpots), rel=1e-12)
    assert f["latency.1k.vllm.requests"] == 7
    assert f["latency.1k.vllm.ttft.mean"] == pytest.approx(1000 * mean(ttfts), rel=1e-12)
    assert warnings_of(ing.summaries) == [
        f"data/fail/raw/vllm/{name}:1: the file says completed: 10, failed: 0, but 3 of its "
        "10 per-request rows carry an error; latency statistics recomputed here use the 7 "
        "requests without one"]


def test_sglang_failed_requests_are_in_no_latency_statistic(workspace):
    # `sglang.bench_serving --output-details`: no 'failed' and no 'latencies'; a failed
    # request has TTFT 0.0, output length 0, no gaps and its error text
    n_ok = len(OK_TTFTS)
    rec = {
        "tag": None, "backend": "sglang", "dataset_name": "random",
        "request_rate": float("inf"), "max_concurrency": 10, "random_input_len": 1024,
        "random_output_len": 4, "random_range_ratio": 1.0, "duration": 103.0,
        "completed": n_ok, "total_input_tokens": 1024 * n_ok,
        "total_output_tokens": 4 * n_ok, "mean_e2e_latency_ms": 1000 * mean(OK_LATENCIES),
        "median_e2e_latency_ms": 1000 * median(OK_LATENCIES),
        "mean_ttft_ms": 1000 * mean(OK_TTFTS), "median_ttft_ms": 1000 * median(OK_TTFTS),
        "input_lens": [1024] * 10, "output_lens": [4, 0] * 5,
        "ttfts": [x for t in OK_TTFTS for x in (t, 0.0)],
        "itls": [x for row in OK_ITLS for x in (row, [])],
        "generated_texts": [""] * 10, "errors": [x for _ in OK_TTFTS for x in ("", ERROR)],
    }
    _, ing, f = _built(workspace, "sglang", "sglang_0115_10_1024_4.jsonl",
                       json.dumps(rec) + "\n")
    assert f["latency.1k.sglang.ttft.median"] == pytest.approx(17_500.0, rel=1e-12)
    assert f["latency.1k.sglang.ttft.min"] == pytest.approx(15_000.0, rel=1e-12)
    assert f["latency.1k.sglang.requests"] == 5
    pooled = [1000 * g for row in OK_ITLS for g in row]
    assert f["latency.1k.sglang.itl.mean"] == pytest.approx(mean(pooled), rel=1e-12)
    # no per-request latencies: E2E is the client's own mean, over its successes
    assert f["latency.1k.sglang.e2el.mean"] == 1000 * mean(OK_LATENCIES)
    assert f["e2e.1k.sglang.to_first_token_s"] == pytest.approx(15.0, rel=1e-12)
    [view] = ing.results
    assert (view.completed, view.failed) == (5, 5)          # failed: the errors counted
    assert sum(1 for r in view.requests if r.get("error") == ERROR) == 5
    assert warnings_of(ing.summaries) == []


@pytest.mark.parametrize("client", ["guidellm", "aiperf"])
def test_guidellm_and_aiperf_failures_carry_their_error_and_are_left_out(tmp_path, client):
    from benchreport.analyses.latency import per_request
    from benchreport.core.records import PointResult, RawFile
    from benchreport.synth.campaign import write_campaign

    truth = write_campaign(tmp_path / "data" / "camp", engines=("alpha",), loads=(4,),
                           repeats=1, requests=20, clients=(client,), failures=5)
    run = load_run("camp", tmp_path / "data", tmp_path / "report")
    save_ingest(run, ingest_run(run))
    ing = load_ingested(run)
    q = truth.points[("alpha", "c4", 1)].requests
    ok = np.array([not e for e in q.errors])
    ttft_ok = q.ttfts[ok] * 1000.0
    lat_ok = q.latencies[ok] * 1000.0
    [p] = ing.points
    rows = [r for r in ing.requests if r["point"] == p["point"]]
    # every failed request is a row with its error (GuideLLM's `requests.errored`, AIPerf's
    # error records in profile_export.jsonl), and the point counts them as failed
    assert sum(1 for r in rows if r.get("error")) == 5 and p["failed"] == 5
    assert p["completed"] == 15
    # the point's figures: the client's own statistics, over the 15 successes
    figures = {f.id: f.value for f in point_figures(run, ing)[1]}
    pid = p["point"]
    assert figures[f"point.{pid}.mean_ttft_ms"] == pytest.approx(ttft_ok.mean(), rel=1e-9)
    assert figures[f"point.{pid}.mean_e2el_ms"] == pytest.approx(lat_ok.mean(), rel=1e-9)
    # ... and the same computed from its requests rows leaves the failures out
    view = PointResult.from_rows(p, rows, RawFile(Path(p["file"]), p["file"], p["sha256"]))
    values = per_request(view)
    assert len(values["ttft"]) == 15
    assert median(values["ttft"]) == pytest.approx(float(np.median(ttft_ok)), rel=1e-12)
    assert mean(values["e2el"]) == pytest.approx(float(lat_ok.mean()), rel=1e-12)
    assert not ing.results            # not a vLLM/SGLang point: not a single-point result
