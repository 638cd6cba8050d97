"""One definition per latency metric for every engine, and within-run spreads instead of
confidence intervals (latency.py)."""

import json
from pathlib import Path
from statistics import mean

import pytest

from benchreport.analyses.latency import latency_figures
from benchreport.ingest.io import load_run
from benchreport.pipeline.explain import registry_of

from .conftest import ROOT

RAW = ROOT / "data" / "2024-b300" / "raw"
WORKLOADS = ("64k", "200k")
ENGINES = ("vllm", "sglang")


def _records(engine: str) -> dict[str, dict]:
    """The reference run's result records of one engine, by workload, read with plain json."""
    out = {}
    for path in sorted((RAW / engine).glob("*.json*")):
        text = path.read_text()
        try:
            docs = [json.loads(text)]
        except json.JSONDecodeError:
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
        for d in docs:
            out["64k" if d["total_input_tokens"] / d["completed"] < 100_000 else "200k"] = d
    return out


@pytest.fixture(scope="module")
def ref(reference_build):
    return {f.id: f for f in registry_of(reference_build).values()}


@pytest.fixture(scope="module")
def raw():
    return {e: _records(e) for e in ENGINES}


# --- the reference run ---------------------------------------------------------------------

def test_e2e_mean_is_the_clients_own_mean_for_every_engine_and_workload(ref, raw):
    for w in WORKLOADS:
        for engine in ENGINES:
            own = raw[engine][w]["mean_e2el_ms" if engine == "vllm" else "mean_e2e_latency_ms"]
            assert ref[f"latency.{w}.{engine}.e2el.mean"].value == pytest.approx(own, rel=1e-3)


def test_sglang_values_and_methods_name_the_client_statistics(ref, raw):
    expected = {"64k": (136_078.8279, 34.0708), "200k": (224_895.0259, 53.4725)}
    for w, (e2e, tpot) in expected.items():
        d = raw["sglang"][w]
        assert "latencies" not in d                      # so nothing is recomputed for E2E
        assert ref[f"latency.{w}.sglang.e2el.mean"].value == d["mean_e2e_latency_ms"]
        assert round(ref[f"latency.{w}.sglang.e2el.mean"].value, 4) == e2e
        assert ref[f"latency.{w}.sglang.tpot.mean"].value == d["mean_tpot_ms"]
        assert round(ref[f"latency.{w}.sglang.tpot.mean"].value, 4) == tpot
        for stat in ("mean", "median", "p90", "p99"):
            m = ref[f"latency.{w}.sglang.e2el.{stat}"]
            assert "'latencies'" not in m.method
            assert f"the client's own '{stat}_e2e_latency_ms'" in m.method
            assert "no per-request latencies" in m.method
            assert [s.key for s in m.sources] == [f"{stat}_e2e_latency_ms"]
            assert ref[f"latency.{w}.sglang.e2el.{stat}"].value == d[f"{stat}_e2e_latency_ms"]
        # the file has no per-request latencies: no spread for E2E or TPOT
        assert f"latency.{w}.sglang.e2el.min" not in ref
        assert f"latency.{w}.sglang.tpot.max" not in ref
        # vLLM's come from its per-request 'latencies' and agree with its own statistics
        v = raw["vllm"][w]
        assert "'latencies'" in ref[f"latency.{w}.vllm.e2el.mean"].method
        assert ref[f"latency.{w}.vllm.e2el.mean"].value == pytest.approx(v["mean_e2el_ms"],
                                                                       rel=1e-9)
        assert ref[f"latency.{w}.vllm.tpot.mean"].value == pytest.approx(v["mean_tpot_ms"],
                                                                       rel=1e-9)


def test_no_confidence_intervals_but_within_run_spreads(ref, raw):
    assert not [i for i in ref if i.endswith("ratio_ci")]
    for w in WORKLOADS:
        for e in ENGINES:
            metrics = ("ttft", "itl") + (("tpot", "e2el") if e == "vllm" else ())
            for m in metrics:
                lo, hi = ref[f"latency.{w}.{e}.{m}.min"], ref[f"latency.{w}.{e}.{m}.max"]
                centre = ref[f"latency.{w}.{e}.{m}.{'mean' if m == 'itl' else 'median'}"]
                assert lo.value <= centre.value <= hi.value
                assert "not a confidence interval" in lo.method and "10 requests" in hi.method
            assert ref[f"latency.{w}.{e}.requests"].value == 10
            assert ref[f"latency.{w}.{e}.p99_is_max"].value == "yes"
            assert "between the two largest values" in ref[f"latency.{w}.{e}.p99_is_max"].method
            ttfts = sorted(1000 * t for t in raw[e][w]["ttfts"])
            assert ref[f"latency.{w}.{e}.ttft.min"].value == pytest.approx(ttfts[0])
            assert ref[f"latency.{w}.{e}.ttft.max"].value == pytest.approx(ttfts[-1])
            assert ttfts[-2] <= ref[f"latency.{w}.{e}.ttft.p99"].value <= ttfts[-1]


def test_ratios_are_ratios_of_the_registered_means(ref):
    for w in WORKLOADS:
        # vLLM's ITL is per chunk, SGLang's native client's per token: never a ratio of two
        assert f"latency.{w}.itl.ratio" not in ref
        for m in ("ttft", "tpot", "e2el"):
            r = ref[f"latency.{w}.{m}.ratio"]
            a, b = (ref[i].value for i in r.depends_on)
            assert r.value == pytest.approx(b / a) and r.value >= 1
    e2e = ref["latency.200k.e2el.ratio"]
    assert e2e.value == pytest.approx(293_666.7818 / 224_895.0259)
    assert "the client's own 'mean_e2e_latency_ms'" in e2e.method
    assert "'latencies'" in e2e.method and "confidence interval" in e2e.method


# --- a hand-made run: one file with per-request latencies, one without ---------------------

RUN_YAML = """schema: 1
title: {ko: "지연 정의", en: "Latency definitions"}
date: 2026-01-15
hardware: {servers: 1, gpus: 2, gpu_model: Test GPU}
model: {name: Tiny-MoE, quantization: FP8}
deployment: docker
engines:
  - {id: vllm, name: vLLM, image: "vllm/vllm-openai:test"}
  - {id: sglang, name: SGLang, image: "lmsysorg/sglang:test"}
workloads:
  - {id: 1k, label: 1K, input_tokens: 1024, output_tokens: 5, concurrency: 3, num_prompts: 3}
"""

# vLLM: 3 requests; each latency is longer than TTFT + the sum of its gaps (5, 6, 9 s).
VLLM = {
    "date": "20260115-101000", "endpoint_type": "vllm", "backend": "vllm",
    "num_prompts": 3, "request_rate": "inf", "max_concurrency": 3, "duration": 12.0,
    "completed": 3, "failed": 0, "total_input_tokens": 3072, "total_output_tokens": 15,
    "input_lens": [1024] * 3, "output_lens": [5, 5, 5],
    "ttfts": [1.0, 2.0, 3.0], "latencies": [5.5, 6.5, 10.5],
    "itls": [[1.0] * 4, [1.0] * 4, [1.5] * 4], "errors": ["", "", ""],
    "mean_ttft_ms": 2000.0, "median_ttft_ms": 2000.0, "p99_ttft_ms": 2980.0,
    "mean_tpot_ms": 1333.3, "median_tpot_ms": 1125.0, "p99_tpot_ms": 1860.0,
    "mean_itl_ms": 1166.7, "median_itl_ms": 1000.0, "p99_itl_ms": 1500.0,
    "mean_e2el_ms": 7500.0, "median_e2el_ms": 6500.0, "p99_e2el_ms": 10420.0,
}
# SGLang: TTFTs and gaps per request, no latencies; the client's E2E is its own timing
# (TTFT + sum of gaps would be 5, 6 and 8 s: mean 6333.3 ms); it recorded no p90.
SGLANG = {
    "backend": "sglang", "dataset_name": "random", "request_rate": float("inf"),
    "max_concurrency": 3, "random_input_len": 1024, "random_output_len": 5, "duration": 9.0,
    "completed": 3, "total_input_tokens": 3072, "total_output_tokens": 15,
    "mean_e2e_latency_ms": 6800.0, "median_e2e_latency_ms": 6400.0,
    "p99_e2e_latency_ms": 8490.0,
    "mean_ttft_ms": 1000.0, "median_ttft_ms": 1000.0, "p99_ttft_ms": 1490.0,
    "mean_tpot_ms": 1450.0, "median_tpot_ms": 1350.0, "p99_tpot_ms": 1740.0,
    "mean_itl_ms": 1333.3, "median_itl_ms": 1000.0, "p99_itl_ms": 2000.0,
    "input_lens": [1024] * 3, "output_lens": [5] * 3, "ttfts": [0.5, 1.0, 1.5],
    "itls": [[1.0] * 4 + [0.5], [1.0] * 5, [2.0] * 3 + [0.5]], "errors": ["", "", ""],
}


# The same with a fourth request that failed, written as vLLM writes failures (zeros).
VLLM_FAILED = {**VLLM, "num_prompts": 4, "failed": 1, "input_lens": [1024] * 4,
               "output_lens": [5, 5, 5, 0], "ttfts": [1.0, 2.0, 3.0, 0.0],
               "latencies": [5.5, 6.5, 10.5, 0.0], "itls": VLLM["itls"] + [[]],
               "errors": ["", "", "", "connection reset"]}


def _handmade(workspace: Path, vllm: dict) -> dict:
    run_dir = workspace / "data" / "defs"
    (run_dir / "raw" / "vllm").mkdir(parents=True)
    (run_dir / "raw" / "sglang").mkdir(parents=True)
    (run_dir / "run.yaml").write_text(RUN_YAML)
    (run_dir / "raw" / "vllm" / "vllm-infqps-concurrency4-tiny-20260115-101000.json") \
        .write_text(json.dumps(vllm))
    (run_dir / "raw" / "sglang" / "sglang_0115_4.jsonl").write_text(json.dumps(SGLANG) + "\n")
    run = load_run("defs", workspace / "data", workspace / "report")
    from benchreport.ingest.run import ingest_run

    return {f.id: f for f in latency_figures(run, ingest_run(run))}


def test_e2e_comes_from_latencies_or_from_the_clients_statistics_never_from_the_gaps(
        workspace):
    f = _handmade(workspace, VLLM)
    # without 'latencies', E2E is the client's own mean, not TTFT + ΣITL (6333.3 ms)
    assert f["latency.1k.sglang.e2el.mean"].value == 6800.0
    assert f["latency.1k.sglang.tpot.mean"].value == 1450.0
    # with 'latencies': the requests' own latencies, not TTFT + ΣITL (mean 6666.7 ms)
    assert f["latency.1k.vllm.e2el.mean"].value == pytest.approx(7500.0)
    assert f["latency.1k.vllm.e2el.median"].value == pytest.approx(6500.0)
    assert (f["latency.1k.vllm.e2el.min"].value, f["latency.1k.vllm.e2el.max"].value) == \
        pytest.approx((5500.0, 10500.0))
    assert f["latency.1k.vllm.tpot.mean"].value == pytest.approx(mean([1125.0, 1125.0, 1875.0]))
    assert f["latency.1k.vllm.ttft.mean"].value == pytest.approx(2000.0)
    assert f["latency.1k.vllm.requests"].value == 3
    # without: the client's own statistics, as recorded, for E2E and TPOT ...
    assert f["latency.1k.sglang.e2el.p99"].value == 8490.0
    assert "'latencies'" not in f["latency.1k.sglang.e2el.mean"].method
    assert "'mean_e2e_latency_ms'" in f["latency.1k.sglang.e2el.mean"].method
    # ... a percentile the client did not record gets no figure, and no spread is made up
    assert "latency.1k.sglang.e2el.p90" not in f and "latency.1k.sglang.tpot.p90" not in f
    assert "latency.1k.sglang.e2el.min" not in f and "latency.1k.sglang.tpot.max" not in f
    # ... while TTFT and ITL, whose lists the file holds, are recomputed from them
    assert f["latency.1k.sglang.ttft.mean"].value == pytest.approx(1000.0)
    assert f["latency.1k.sglang.itl.mean"].value == pytest.approx(16_000 / 14)
    assert (f["latency.1k.sglang.itl.min"].value, f["latency.1k.sglang.itl.max"].value) == \
        pytest.approx((900.0, 1625.0))
    assert f["latency.1k.sglang.requests"].value == 3
    assert f["latency.1k.sglang.p99_is_max"].value == "yes"
    # the ratio compares the two registered means, and says where each came from
    r = f["latency.1k.e2el.ratio"]
    assert f["latency.1k.e2el.faster"].value == "sglang"
    assert r.value == pytest.approx(7500.0 / 6800.0)
    assert "the client's own 'mean_e2e_latency_ms'" in r.method and "'latencies'" in r.method
    assert not [i for i in f if i.endswith("ratio_ci")]


def test_failed_requests_are_left_out_as_the_clients_leave_them_out(workspace):
    f = _handmade(workspace, VLLM_FAILED)
    assert f["latency.1k.vllm.requests"].value == 3
    assert f["latency.1k.vllm.e2el.mean"].value == pytest.approx(7500.0)
    assert f["latency.1k.vllm.ttft.min"].value == pytest.approx(1000.0)
    assert f["latency.1k.vllm.itl.min"].value == pytest.approx(1000.0)
    assert f["latency.1k.vllm.itl.mean"].value == pytest.approx(14_000 / 12)


def test_the_longest_gap_and_the_share_of_time_above_the_p99():
    from benchreport.analyses.latency import _tail_figures

    gaps = [1.0] * 99 + [101.0]            # p99 interpolates to 2.0: one gap lies above it
    longest, share = _tail_figures("8k", "vllm", {}, (), gaps, "the gaps")
    assert (longest.id, longest.value) == ("latency.8k.vllm.itl.longest", 101.0)
    assert share.id == "latency.8k.vllm.itl.tail_share"
    assert share.value == pytest.approx(100 * 101 / 200)
    assert share.depends_on == ("latency.8k.vllm.itl.p99",)
