"""Client parsers for GuideLLM, AIPerf / GenAI-Perf, genai-bench and llmperf.

Every real sample of those clients (``/work/shared/real-samples/``, or the folder named by
``BENCHREPORT_REAL_SAMPLES``) goes through the dispatcher, so the sniff order is exercised,
and each value is checked against the raw file read by hand here. Small inline files cover
what the samples do not: failures, unit conversions, CSV quirks, missing keys, bad content.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from benchreport.core.errors import ParseError
from benchreport.ingest.clients import aiperf, decode, genai_bench, guidellm, llmperf, read_points
from benchreport.ingest.clients.base import DEFINITIONS, FIELDS, METRICS, STATS

from .conftest import REAL_SAMPLES, needs_samples

SAMPLES = REAL_SAMPLES

GUIDELLM = SAMPLES / "guidellm" / "guidellm-0.5.0dev-gpt-oss-20b-synchronous.json"
AIPERF_JSON = SAMPLES / "aiperf" / "aiperf-early-examples-run1-profile_export_aiperf.json"
AIPERF_CSV = SAMPLES / "aiperf" / "aiperf-early-examples-run1-profile_export_aiperf.csv"
AIPERF_JSONL = SAMPLES / "aiperf" / "aiperf-early-examples-run1-profile_export.jsonl"
GENAI_PERF = {c: SAMPLES / "aiperf" /
              f"genai-perf-llama3-8b-nim-c{c}-profile_export_genai_perf.json" for c in (1, 10)}
GB = SAMPLES / "genai-bench"
GB_META = GB / "genai-bench-0.0.2-qwen3-30b-N2000-experiment_metadata.json"
GB_RUNS = {2: GB / "genai-bench-0.0.2-qwen3-30b-N2000_200_200_20_text-to-text_num_concurrency_2"
                   "_time_63s.json",
           16: GB / "genai-bench-0.0.2-qwen3-30b-N2000_200_200_20_text-to-text_num_concurrency"
                    "_16_time_15s.json"}
LLMPERF_SUMMARY = SAMPLES / "llmperf" / "llmperf-leaderboard-summary-groq_70b.json"
LLMPERF_INDIVIDUAL = SAMPLES / "llmperf" / "llmperf-leaderboard-individual-groq_70b.json"
OUR_FOLDERS = ("guidellm", "aiperf", "genai-bench", "llmperf")
OUR_MODULES = (guidellm, aiperf, genai_bench, llmperf)
ALL_DEFINITIONS = {**DEFINITIONS, **guidellm.DEFINITIONS, **genai_bench.DEFINITIONS,
                   **llmperf.DEFINITIONS}


def points(path: Path):
    return read_points(path.read_bytes(), str(path))


def inline(obj, name: str = "inline.json"):
    """Points of an inline document, through the dispatcher (JSON text as a file holds it)."""
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return read_points(data, name)


def raw(path: Path):
    return json.loads(path.read_text())


def check_shape(p) -> None:
    """What every point must satisfy: contract keys only, a definition per metric."""
    assert set(p.fields) <= set(FIELDS)
    json.dumps(p.record())                                  # a record is plain JSON
    for key in p.fields:
        if key.endswith("_ms"):
            metric = key.split("_")[1]
            assert p.definitions[metric] in ALL_DEFINITIONS
            assert key in p.sources
    for metric in p.definitions:
        assert metric in METRICS
        assert any(f"{s}_{metric}_ms" in p.fields for s in STATS)
    for row in p.requests:
        assert set(row) <= {"ttft_ms", "e2el_ms", "input_tokens", "output_tokens", "error",
                            "itl_ms", "start_s"}   # AIPerf's JSON Lines records keep both


# ------------------------------------------------------------------ sniffing (all files)

@needs_samples
def test_each_real_sample_is_claimed_by_exactly_its_module():
    expected = {"guidellm": {"guidellm"}, "aiperf": {"aiperf", "genai-perf"},
                "genai-bench": {"genai-bench"}, "llmperf": {"llmperf"}}
    seen = 0
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        for path in sorted(x for x in folder.iterdir() if x.is_file()):
            doc = decode(path.read_bytes(), str(path))
            claims = [c for c in (m.sniff(doc) for m in OUR_MODULES) if c]
            if folder.name in OUR_FOLDERS:
                assert len(claims) == 1 and claims[0] in expected[folder.name], path
                seen += 1
            else:                       # vLLM, SGLang, Prometheus files are someone else's
                assert claims == [], path
    assert seen == 11


def test_vllm_and_sglang_results_are_not_claimed():
    vllm = {"date": "20250101-000000", "backend": "vllm", "num_prompts": 8, "duration": 3.0,
            "completed": 8, "request_rate": "inf", "median_ttft_ms": 10.0}
    sglang = {"backend": "sglang", "dataset_name": "random", "request_rate": 2.0,
              "completed": 100, "median_e2e_latency_ms": 800.0}
    for obj in (vllm, sglang, [vllm, vllm]):
        doc = decode(json.dumps(obj).encode(), "x.json")
        assert [m.sniff(doc) for m in OUR_MODULES] == [None] * 4
    doc = decode((json.dumps(sglang) + "\n" + json.dumps(sglang) + "\n").encode(), "x.jsonl")
    assert doc.kind == "jsonl" and [m.sniff(doc) for m in OUR_MODULES] == [None] * 4


# ---------------------------------------------------------------------------- GuideLLM

@needs_samples
def test_guidellm_real_sample():
    r = raw(GUIDELLM)
    b = r["benchmarks"][0]
    m = b["metrics"]
    (p,) = points(GUIDELLM)                      # one benchmark in `benchmarks` -> one point
    check_shape(p)
    assert (p.client, p.where, p.role) == ("guidellm", "benchmarks[0]", "summary")
    # counts: request_totals.successful (25 in the measurement window), errored 0
    assert m["request_totals"] == {"successful": 25, "errored": 0, "incomplete": 0,
                                   "total": 25}
    assert p.fields["completed"] == 25 and p.fields["failed"] == 0
    assert p.fields["duration"] == b["duration"] == 720.0
    # token totals: total_sum of the successful prompt / output token counts
    assert p.fields["total_input_tokens"] == 2318
    assert p.fields["total_output_tokens"] == 25600 == 25 * 1024
    assert p.fields["request_throughput"] == m["requests_per_second"]["successful"]["mean"]
    assert p.fields["output_throughput"] == m["output_tokens_per_second"]["successful"]["mean"]
    # *_ms metrics are already ms; request_latency is in seconds (× 1000)
    ttft = m["time_to_first_token_ms"]["successful"]
    assert p.fields["mean_ttft_ms"] == ttft["mean"] == 48.843650817871094
    assert p.fields["median_ttft_ms"] == ttft["median"]
    assert p.fields["p90_ttft_ms"] == ttft["percentiles"]["p90"]
    assert p.fields["p99_ttft_ms"] == ttft["percentiles"]["p99"] == 60.7762336730957
    assert p.fields["std_ttft_ms"] == ttft["std_dev"]
    e2e = m["request_latency"]["successful"]
    assert p.fields["median_e2el_ms"] == e2e["median"] * 1000 == 30646.172523498535
    assert p.fields["p99_e2el_ms"] == e2e["percentiles"]["p99"] * 1000
    assert p.fields["mean_tpot_ms"] == m["time_per_output_token_ms"]["successful"]["mean"]
    assert p.fields["p90_itl_ms"] == m["inter_token_latency_ms"]["successful"]["percentiles"][
        "p90"]
    assert p.sources["median_ttft_ms"] == \
        "benchmarks[0].metrics.time_to_first_token_ms.successful.median"
    assert p.sources["median_e2el_ms"] == "benchmarks[0].metrics.request_latency.successful.median"
    assert p.definitions == {"ttft": "ttft.first-token", "tpot": "tpot.guidellm",
                             "itl": "itl.guidellm", "e2el": "e2el.request"}
    # load: the synchronous strategy is one request at a time
    assert p.load["kind"] == "synchronous" and p.load["max_concurrency"] == 1
    assert p.fields["max_concurrency"] == 1 and "request_rate" not in p.fields
    assert p.params["strategy"] == "synchronous" and p.params["max_requests"] == 30
    assert p.model == "openai/gpt-oss-20b"
    assert p.date == "2026-03-02T17:21:22+00:00"      # start_time 1772472082.2 s, UTC
    assert p.scenario["dataset"] == "/root/aime_2024_v2.jsonl"
    assert p.scenario["input_tokens"] == 92.72 and p.scenario["output_tokens"] == 1024.0
    # requests: the sample lists 30 successful ones (warm-up and cool-down included)
    assert len(p.requests) == 30 == len(b["requests"]["successful"])
    assert not any(row.get("error") for row in p.requests)
    first = b["requests"]["successful"][0]
    assert p.requests[0] == {"ttft_ms": first["time_to_first_token_ms"],
                             "e2el_ms": first["request_latency"] * 1000,
                             "input_tokens": 130, "output_tokens": 1024}
    assert any("30 successful request(s)" in w and "count 25" in w for w in p.warnings)
    rec = p.record()
    assert rec["client"] == "guidellm" and rec["max_concurrency"] == 1
    assert rec["load_kind"] == "synchronous" and rec["requests"] == 30


@needs_samples
def test_guidellm_definitions_match_the_file():
    """The texts of tpot.guidellm / itl.guidellm, checked on the raw per-request values."""
    b = raw(GUIDELLM)["benchmarks"][0]
    for req in b["requests"]["successful"]:
        t = req["info"]["timings"]
        n = req["output_tokens"]
        tpot = (t["last_token_iteration"] - t["request_start"]) / n * 1000      # TTFT included
        itl = (t["last_token_iteration"] - t["first_token_iteration"]) / (n - 1) * 1000
        assert req["time_per_output_token_ms"] == pytest.approx(tpot, rel=1e-9)
        assert req["inter_token_latency_ms"] == pytest.approx(itl, rel=1e-9)
    # statistics weighted by tokens: one sample per output token / per token after the first
    assert b["metrics"]["time_per_output_token_ms"]["successful"]["count"] == 25 * 1024
    assert b["metrics"]["inter_token_latency_ms"]["successful"]["count"] == 25 * 1023
    assert "TTFT) is included" in guidellm.DEFINITIONS["tpot.guidellm"]


def _dist(mean: float, count: int) -> dict:
    return {"mean": mean, "median": mean, "std_dev": 0.5, "count": count,
            "total_sum": mean * count, "percentiles": {"p50": mean, "p90": mean + 1,
                                                      "p99": mean + 2}}


def _zero() -> dict:
    return _dist(0.0, 0) | {"std_dev": 0.0, "percentiles": {"p50": 0.0, "p90": 0.0, "p99": 0.0}}


def _guidellm_bench(strategy, ok: int = 3, errored: int = 0, incomplete: int = 0, **extra):
    def split(mean):
        return {"successful": _dist(mean, ok) if ok else _zero(),
                "errored": _dist(mean, errored) if errored else _zero(),
                "incomplete": _zero(), "total": _dist(mean, ok + errored)}
    bench = {
        "type_": "generative_benchmark", "config": {"strategy": strategy},
        "start_time": 1700000000.0, "end_time": 1700000010.0, "duration": 10.0,
        "metrics": {
            "request_totals": {"successful": ok, "errored": errored, "incomplete": incomplete,
                               "total": ok + errored + incomplete},
            "requests_per_second": split(0.3), "request_latency": split(2.0),
            "time_to_first_token_ms": split(50.0), "time_per_output_token_ms": split(20.0),
            "inter_token_latency_ms": split(19.0), "prompt_token_count": split(100.0),
            "output_token_count": split(100.0), "output_tokens_per_second": split(40.0)},
        "requests": {
            "successful": [{"request_latency": 2.0, "time_to_first_token_ms": 50.0,
                            "prompt_tokens": 100, "output_tokens": 100}] * ok,
            "errored": [{"request_latency": 0.5, "prompt_tokens": 100, "output_tokens": 0,
                         "info": {"error": "HTTP 500: Internal Server Error"}}] * errored,
            "incomplete": [], "total": None}}
    bench.update(extra)
    return bench


def test_guidellm_every_request_errored_is_failed_not_fast():
    doc = {"metadata": {"version": 1, "guidellm_version": "0.5.0"},
           "benchmarks": [_guidellm_bench({"type_": "concurrent", "streams": 4}, ok=0,
                                          errored=5)]}
    (p,) = inline(doc)
    check_shape(p)
    assert p.fields["completed"] == 0 and p.fields["failed"] == 5
    assert not [k for k in p.fields if k.endswith("_ms")] and p.definitions == {}
    assert len(p.requests) == 5 and all(r["error"] == "HTTP 500: Internal Server Error"
                                        for r in p.requests)
    assert p.requests[0]["e2el_ms"] == 500.0
    assert p.load == {"kind": "concurrency", "max_concurrency": 4, "request_rate": None,
                      "arrival": None}


def test_guidellm_incomplete_requests_are_not_failures_but_are_reported():
    doc = {"benchmarks": [_guidellm_bench({"type_": "synchronous"}, ok=3, errored=1,
                                          incomplete=2)]}
    (p,) = inline(doc)
    assert p.fields["completed"] == 3 and p.fields["failed"] == 1
    assert p.params["incomplete"] == 2
    assert any("2 request(s) were incomplete" in w for w in p.warnings)
    assert [bool(r.get("error")) for r in p.requests] == [False] * 3 + [True]


@pytest.mark.parametrize("strategy, load, fields", [
    ({"type_": "constant", "rate": 2.5}, {"kind": "rate", "max_concurrency": None,
                                          "request_rate": 2.5, "arrival": "constant"},
     {"request_rate": 2.5, "max_concurrency": None}),
    ({"type_": "poisson", "rate": 4}, {"kind": "rate", "max_concurrency": None,
                                       "request_rate": 4.0, "arrival": "poisson"},
     {"request_rate": 4.0, "max_concurrency": None}),
    ({"type_": "throughput", "max_concurrency": 512},
     {"kind": "unbounded", "max_concurrency": None, "request_rate": "inf", "arrival": None},
     {"request_rate": "inf", "max_concurrency": None}),
    ({"type_": "concurrent", "streams": 16},
     {"kind": "concurrency", "max_concurrency": 16, "request_rate": None, "arrival": None},
     {"max_concurrency": 16}),
])
def test_guidellm_load_from_strategy(strategy, load, fields):
    (p,) = inline({"benchmarks": [_guidellm_bench(strategy)]})
    assert p.load == load
    for key, value in fields.items():
        assert p.fields[key] == value
    assert p.record()["max_concurrency"] == fields.get("max_concurrency")


def test_guidellm_several_benchmarks_old_and_schema2_layouts():
    old = _guidellm_bench(None, ok=2)                    # pre-0.5: args.strategy, no config
    del old["config"], old["duration"]
    old["args"] = {"strategy": {"type_": "poisson", "rate": 1.0}}
    old["request_totals"] = old["metrics"].pop("request_totals")
    spec = _guidellm_bench(None)                          # schema 2: config.spec.strategy
    spec["config"] = {"spec": {"strategy": {"type_": "concurrent", "streams": 8},
                               "backend": {"model": "m-7b"}}}
    pts = inline({"benchmarks": [_guidellm_bench({"type_": "synchronous"}), old, spec]})
    assert [p.where for p in pts] == ["benchmarks[0]", "benchmarks[1]", "benchmarks[2]"]
    assert pts[1].fields["completed"] == 2
    assert pts[1].sources["completed"] == "benchmarks[1].request_totals.successful"
    assert pts[1].fields["duration"] == 10.0                  # end_time − start_time
    assert pts[1].load["arrival"] == "poisson"
    assert pts[2].load["max_concurrency"] == 8 and pts[2].model == "m-7b"
    assert pts[2].sources["max_concurrency"] == "benchmarks[2].config.spec.strategy.streams"


def test_guidellm_missing_keys_leave_fields_absent():
    bench = _guidellm_bench({"type_": "synchronous"})
    for key in ("time_per_output_token_ms", "output_tokens_per_second"):
        del bench["metrics"][key]
    del bench["duration"], bench["start_time"], bench["requests"]
    (p,) = inline({"benchmarks": [bench]})
    assert "mean_tpot_ms" not in p.fields and "tpot" not in p.definitions
    assert "output_throughput" not in p.fields and "duration" not in p.fields
    assert p.requests == [] and p.date is None
    assert p.fields["mean_ttft_ms"] == 50.0


def test_guidellm_bad_content_names_the_file():
    doc = {"metadata": {"guidellm_version": "0.5.0"}, "benchmarks": [{"type_": "x"}]}
    with pytest.raises(ParseError) as exc:
        inline(doc, "results/benchmarks.json")
    assert exc.value.path == "results/benchmarks.json"
    assert "benchmarks[0] has no 'metrics' object" in str(exc.value)
    bench = _guidellm_bench({"type_": "synchronous"})
    bench["requests"]["successful"] = "oops"
    with pytest.raises(ParseError, match=r"requests\.successful is a str"):
        inline({"benchmarks": [bench]}, "b.json")


# ----------------------------------------------------------------- AIPerf / GenAI-Perf

@needs_samples
def test_aiperf_early_json():
    rec = raw(AIPERF_JSON)["records"]
    (p,) = points(AIPERF_JSON)
    check_shape(p)
    assert (p.client, p.role, p.where) == ("aiperf", "summary", "records")
    assert p.fields["completed"] == 89 == rec["request_count"]["avg"]
    assert p.fields["failed"] == 11 == rec["error_request_count"]["avg"]   # the 499s
    assert rec["benchmark_duration"]["unit"] == "sec"
    assert p.fields["duration"] == 9.317788951                              # sec -> s
    assert rec["ttft"]["unit"] == "ms"                                      # ms stays ms
    assert p.fields["mean_ttft_ms"] == rec["ttft"]["avg"] == 2343.219436988764
    assert p.fields["median_ttft_ms"] == rec["ttft"]["p50"]
    assert p.fields["p99_ttft_ms"] == rec["ttft"]["p99"] == 3833.3894000399996
    assert p.fields["std_e2el_ms"] == rec["request_latency"]["std"]
    assert p.fields["p90_itl_ms"] == rec["inter_token_latency"]["p90"]
    assert "mean_tpot_ms" not in p.fields                  # AIPerf has no TPOT
    assert p.fields["total_input_tokens"] == 48950
    # output sequence length counts reasoning tokens too: 1832 visible + 19792 reasoning
    assert p.fields["total_output_tokens"] == 21624 == 1832 + 19792
    assert p.fields["request_throughput"] == rec["request_throughput"]["avg"]
    assert p.fields["output_throughput"] == rec["output_token_throughput"]["avg"]
    assert p.sources["p99_ttft_ms"] == "records.ttft.p99"
    assert p.definitions == {"ttft": "ttft.first-token", "itl": "itl.excl-first",
                             "e2el": "e2el.request"}
    assert p.load == {"kind": "concurrency", "max_concurrency": 100, "request_rate": None,
                      "arrival": None}
    assert p.model == "openai/gpt-oss-20b" and p.date == "2025-10-03T13:13:39.146443"
    assert p.scenario == {"output_tokens": 250.0, "input_tokens": 550.0}
    assert p.params["request_cancellation_rate"] == 10.0
    # asked: 100 requests, 10% of them cancelled; all 11 errors are those cancellations
    assert (p.fields["requests_asked"], p.fields["cancellation_rate"]) == (100, 10.0)
    assert p.fields["cancelled"] == 11 == sum(
        e["count"] for e in raw(AIPERF_JSON)["error_summary"]
        if e["error_details"]["code"] == 499)
    assert p.sources["cancellation_rate"] == "input_config.loadgen.request_cancellation_rate"
    assert "duration_asked" not in p.fields
    text = repr(p) + json.dumps(p.record())
    assert "aiperf profile" not in text and "localhost:9000" not in text   # no cli_command/url


@needs_samples
def test_aiperf_csv_is_a_duplicate_fully_parsed():
    data = AIPERF_CSV.read_bytes()
    assert b"\r\n" in data                                   # CRLF as AIPerf writes it
    rec = raw(AIPERF_JSON)["records"]
    (p,) = points(AIPERF_CSV)
    check_shape(p)
    assert (p.client, p.role) == ("aiperf", "duplicate")
    # the CSV prints the JSON's numbers with two decimals
    assert p.fields["completed"] == 89 and p.fields["failed"] == 11
    assert p.fields["duration"] == 9.32
    assert p.fields["median_ttft_ms"] == 2369.32 == round(rec["ttft"]["p50"], 2)
    assert p.fields["p99_e2el_ms"] == round(rec["request_latency"]["p99"], 2) == 9297.61
    assert p.fields["std_itl_ms"] == round(rec["inter_token_latency"]["std"], 2)
    assert p.fields["total_output_tokens"] == 21624
    (j,) = points(AIPERF_JSON)
    for key, value in p.fields.items():
        assert value == pytest.approx(j.fields[key], abs=0.005 + 1e-9), key
    # the CSV has no config (load, request count, cancellation rate) and no error summary
    assert set(p.fields) == set(j.fields) - {"max_concurrency", "requests_asked",
                                             "cancellation_rate", "cancelled"}
    assert p.definitions == j.definitions
    assert p.sources["median_ttft_ms"] == "line 10: Time to First Token (ms) [p50]"


@needs_samples
def test_aiperf_jsonl_requests_keep_the_499_errors():
    lines = [json.loads(x) for x in AIPERF_JSONL.read_text().splitlines()]
    ok = [x for x in lines if not x["error"]]
    (p,) = points(AIPERF_JSONL)
    check_shape(p)
    assert (p.client, p.role, p.line) == ("aiperf", "requests", 1)
    assert len(p.requests) == 100
    errors = [r for r in p.requests if r.get("error")]
    assert len(errors) == 11 and all(r["error"].startswith("499 RequestCancellationError")
                                     for r in errors)
    assert p.fields == {"completed": 89, "failed": 11}
    assert not any("ttft_ms" in r for r in errors)
    # ttft unit "ms": the mean of the successful rows is the summary's avg
    ttfts = [r["ttft_ms"] for r in p.requests if not r.get("error")]
    assert statistics.mean(ttfts) == pytest.approx(raw(AIPERF_JSON)["records"]["ttft"]["avg"],
                                                  rel=1e-12)
    assert sum(r["output_tokens"] for r in p.requests if not r.get("error")) == 21624
    first_ok = ok[0]["metrics"]
    row = p.requests[11]
    assert {k: row[k] for k in ("ttft_ms", "e2el_ms", "input_tokens", "output_tokens")} == {
        "ttft_ms": first_ok["ttft"]["value"], "e2el_ms": first_ok["request_latency"]["value"],
        "input_tokens": 550, "output_tokens": 193}
    # the gaps between chunks are kept; this early schema names no request_start_ns (only a
    # timestamp_ns it does not define), so no send time is read from it
    assert row["itl_ms"] == first_ok["inter_chunk_latency"]["value"]
    assert "start_s" not in row


@needs_samples
@pytest.mark.parametrize("conc", [1, 10])
def test_genai_perf_json(conc):
    r = raw(GENAI_PERF[conc])
    (p,) = points(GENAI_PERF[conc])
    check_shape(p)
    assert (p.client, p.role) == ("genai-perf", "summary")
    assert p.fields["max_concurrency"] == conc and p.load["kind"] == "concurrency"
    assert p.fields["mean_ttft_ms"] == r["time_to_first_token"]["avg"]
    assert p.fields["median_ttft_ms"] == r["time_to_first_token"]["p50"]
    assert p.fields["p99_e2el_ms"] == r["request_latency"]["p99"]
    assert p.fields["std_itl_ms"] == r["inter_token_latency"]["std"]
    assert p.fields["request_throughput"] == r["request_throughput"]["avg"]
    assert p.fields["output_throughput"] == r["output_token_throughput"]["avg"]
    # GenAI-Perf of 2024 writes no counts and no duration: they stay absent
    assert not {"completed", "failed", "duration"} & set(p.fields)
    assert p.record()["failed"] is None
    assert p.scenario == {"input_tokens": 200.0, "output_tokens": 50.0, "dataset": "synthetic"}
    assert p.model == "meta/llama3-8b-instruct" and p.engine is None   # openai service kind
    assert p.definitions["itl"] == "itl.excl-first"
    if conc == 1:
        assert p.fields["p99_ttft_ms"] == 26.267317079999998


def test_aiperf_new_schema_units_and_rate_load():
    doc = {"aiperf_version": "0.3.0", "schema_version": "1.0",
           "time_to_first_token": {"unit": "ns", "avg": 2_000_000, "p50": 1_500_000,
                                   "p90": 3e6, "p99": 4e6, "std": 1e5},
           "request_latency": {"unit": "s", "avg": 1.5, "p50": 1.25},
           "inter_token_latency": {"unit": "us", "avg": 2500},
           "benchmark_duration": {"unit": "ms", "avg": 12000},
           "request_count": {"unit": "requests", "avg": 10},
           "request_throughput": {"unit": "requests/sec", "avg": 0.8},
           "input_config": {"loadgen": {"request_rate": 4.0, "request_rate_mode": "poisson",
                                        "concurrency": 8}, "cli_command": "aiperf --api-key x"}}
    (p,) = inline(doc)
    check_shape(p)
    assert p.client == "aiperf" and p.where == "top level"
    assert p.fields["mean_ttft_ms"] == 2.0 and p.fields["median_ttft_ms"] == 1.5   # ns
    assert p.fields["p99_ttft_ms"] == 4.0
    assert p.fields["mean_e2el_ms"] == 1500.0 and p.fields["median_e2el_ms"] == 1250.0  # s
    assert p.fields["mean_itl_ms"] == 2.5                                            # us
    assert p.fields["duration"] == 12.0                                              # ms
    assert p.load == {"kind": "rate", "max_concurrency": 8, "request_rate": 4.0,
                      "arrival": "poisson"}
    assert p.fields["request_rate"] == 4.0 and p.fields["max_concurrency"] == 8
    assert "failed" not in p.fields and "api-key" not in repr(p)


def test_aiperf_duration_bound_run_and_cancellations_asked():
    """A run for 60 s (no request count) that asked 20% cancellations: 30 errors of
    which 25 are AIPerf's cancellations (499) and 5 time-outs."""
    doc = {"aiperf_version": "0.3.0", "schema_version": "1.0",
           "request_latency": {"unit": "ms", "avg": 900.0},
           "request_count": {"unit": "requests", "avg": 100},
           "error_request_count": {"unit": "requests", "avg": 30},
           "error_summary": [
               {"error_details": {"code": 499, "type": "RequestCancellationError"},
                "count": 25},
               {"error_details": {"code": 504, "type": "TimeoutError"}, "count": 5}],
           "input_config": {"loadgen": {"concurrency": 8, "benchmark_duration": 60,
                                        "request_cancellation_rate": 20}}}
    (p,) = inline(doc)
    assert p.fields["duration_asked"] == 60.0 and "requests_asked" not in p.fields
    assert p.sources["duration_asked"] == "input_config.loadgen.benchmark_duration"
    assert (p.fields["failed"], p.fields["cancelled"], p.fields["cancellation_rate"]) == (
        30, 25, 20.0)
    # the same errors without a cancellation asked: no cancellation counted
    doc["input_config"]["loadgen"].pop("request_cancellation_rate")
    (q,) = inline(doc)
    assert "cancelled" not in q.fields and "cancellation_rate" not in q.fields
    # a top-level benchmark_duration in input_config counts too
    (r,) = inline({**doc, "input_config": {"benchmark_duration": 30.0}})
    assert r.fields["duration_asked"] == 30.0


def test_aiperf_unknown_unit_is_left_out_with_a_warning():
    doc = {"records": {"ttft": {"tag": "ttft", "unit": "fortnights", "avg": 1.0},
                       "request_count": {"unit": "requests", "avg": 3}}}
    (p,) = inline(doc)
    assert "mean_ttft_ms" not in p.fields and p.fields["completed"] == 3
    assert any("fortnights" in w for w in p.warnings)


def test_aiperf_every_request_errored():
    doc = {"records": {"error_request_count": {"tag": "error_request_count",
                                               "unit": "requests", "avg": 5.0}},
           "error_summary": [{"error_details": {"code": 500}, "count": 5}]}
    (p,) = inline(doc)
    assert p.fields["completed"] == 0 and p.fields["failed"] == 5
    assert not [k for k in p.fields if k.endswith("_ms")]


def test_aiperf_csv_crlf_quoted_thousands_and_empty_cells():
    text = ("Metric,avg,min,max,p1,p50,p90,p99,std\r\n"
            'Request Latency (ms),"1,234.5",1000.00,"2,000.25",,"1,200.00",,1900,12.5\r\n'
            "Time to First Token (s),0.25,0.1,0.5,,0.2,0.3,0.4,\r\n"
            "\r\n"
            "Metric,Value\r\n"
            'Request Count,"1,000"\r\n'
            "Error Request Count,\r\n"
            'Benchmark Duration (sec),"1,234.5"\r\n'
            "Request Throughput (requests/sec),0.81\r\n"
            "\r\n"
            "GPU Index,GPU Name,Power (W)\r\n"             # another block: skipped whole
            "0,H100,650.5\r\n")
    (p,) = inline(text.encode(), "profile_export_aiperf.csv")
    assert (p.client, p.role) == ("aiperf", "duplicate")
    assert p.fields["mean_e2el_ms"] == 1234.5 and p.fields["median_e2el_ms"] == 1200.0
    assert "p90_e2el_ms" not in p.fields and p.fields["p99_e2el_ms"] == 1900.0
    assert p.fields["mean_ttft_ms"] == 250.0 and p.fields["p99_ttft_ms"] == 400.0  # s -> ms
    assert "std_ttft_ms" not in p.fields                         # empty cell: absent
    assert p.fields["completed"] == 1000 and "failed" not in p.fields
    assert p.fields["duration"] == 1234.5
    assert p.sources["completed"] == "line 6: Request Count [Value]"


def test_genai_perf_csv_is_told_apart():
    text = ("Metric,avg,min,max,p99,p90,p75\r\n"
            "Time To First Token (ms),10.0,9.0,12.0,11.9,11.0,10.5\r\n\r\n"
            "Metric,Value\r\nRequest Throughput (per sec),3.5\r\n")
    (p,) = inline(text.encode(), "profile_export_genai_perf.csv")
    assert p.client == "genai-perf" and p.fields["request_throughput"] == 3.5
    assert p.fields["p99_ttft_ms"] == 11.9 and "median_ttft_ms" not in p.fields


def test_aiperf_bad_content_names_file_and_line():
    text = "Metric,avg,p50\r\nRequest Latency (ms),12.0,abc\r\n"
    with pytest.raises(ParseError) as exc:
        inline(text.encode(), "run/profile_export_aiperf.csv")
    assert (exc.value.path, exc.value.line) == ("run/profile_export_aiperf.csv", 2)
    assert "'abc' under 'p50' is not a number" in str(exc.value)
    good = {"metadata": {}, "metrics": {"ttft": {"value": 1.0, "unit": "ms"}}, "error": None}
    lines = [json.dumps(good), json.dumps(good), json.dumps({"metadata": {}, "metrics": [1]})]
    with pytest.raises(ParseError) as exc:
        inline(("\n".join(lines) + "\n").encode(), "run/profile_export.jsonl")
    assert (exc.value.path, exc.value.line) == ("run/profile_export.jsonl", 3)


# ------------------------------------------------------------------------- genai-bench

CMD_SECRETS = ("https://model-yqvy8neq.api.baseten.co", "--api-base", "/root/.cache/uv",
               "~/.oci/config", "user_principal", "/mnt/ckpts", "--config-file",
               "builds-v0", "genai-bench --num-concurrency")


@needs_samples
def test_genai_bench_experiment_metadata_without_cmd():
    meta = raw(GB_META)
    assert all(s in meta["cmd"] for s in CMD_SECRETS)       # the parts really are in cmd
    assert points(GB_META) == []
    exp = genai_bench.experiment(decode(GB_META.read_bytes(), str(GB_META)))
    assert exp["model"] == "Qwen3-30B-A3B-Instruct-2507"
    assert exp["api_backend"] == "baseten" and exp["server_gpu_type"] == "H100"
    assert exp["server_gpu_count"] == 1                     # "1" in the file
    assert exp["traffic_scenario"] == ["N(2000,200)/(200,20)"]
    assert exp["num_concurrency"] == [2, 4, 8, 16, 32, 64]
    assert "server_engine" not in exp and "server_version" not in exp   # null in the file
    assert "cmd" not in exp
    texts = [json.dumps(exp)]
    for path in GB.iterdir():
        for p in points(path):
            texts += [repr(p), json.dumps(p.record())]
    for text in texts:
        assert meta["cmd"] not in text
        for secret in CMD_SECRETS:
            assert secret not in text


def test_genai_bench_experiment_redacts_kept_text():
    doc = decode(json.dumps({
        "cmd": "genai-bench benchmark --api-key sk-abcdefghijkl1234 --model m",
        "benchmark_version": "0.0.3", "model": "m", "traffic_scenario": "D(100,100)",
        "server_engine": "vLLM api_key=secret123", "server_gpu_count": 8,
        "num_concurrency": 4}).encode(), "experiment_metadata.json")
    assert genai_bench.sniff(doc) == "genai-bench"
    exp = genai_bench.experiment(doc)
    assert exp["server_engine"] == "vLLM api_key=[redacted]"
    assert exp["traffic_scenario"] == ["D(100,100)"] and exp["num_concurrency"] == [4]
    assert exp["server_gpu_count"] == 8
    assert "sk-abc" not in json.dumps(exp) and "secret123" not in json.dumps(exp)


@needs_samples
@pytest.mark.parametrize("conc, n", [(2, 65), (16, 64)])
def test_genai_bench_scenario_file(conc, n):
    r = raw(GB_RUNS[conc])
    agg, st = r["aggregated_metrics"], r["aggregated_metrics"]["stats"]
    (p,) = points(GB_RUNS[conc])
    check_shape(p)
    assert (p.client, p.role, p.where) == ("genai-bench", "summary", "aggregated_metrics")
    assert p.fields["completed"] == n and p.fields["failed"] == 0
    assert p.fields["duration"] == agg["run_duration"]
    assert p.fields["max_concurrency"] == conc
    assert p.load == {"kind": "concurrency", "max_concurrency": conc, "request_rate": None,
                      "arrival": None}
    # statistics in seconds -> ms
    assert p.fields["p99_ttft_ms"] == st["ttft"]["p99"] * 1000
    assert p.fields["median_ttft_ms"] == st["ttft"]["p50"] * 1000
    assert p.fields["std_e2el_ms"] == st["e2e_latency"]["stddev"] * 1000
    assert p.fields["mean_tpot_ms"] == st["tpot"]["mean"] * 1000
    assert p.fields["p90_tpot_ms"] == st["tpot"]["p90"] * 1000
    assert "mean_itl_ms" not in p.fields
    assert p.fields["total_input_tokens"] == st["num_input_tokens"]["sum"]
    assert p.fields["total_output_tokens"] == st["num_output_tokens"]["sum"]
    assert p.fields["request_throughput"] == agg["requests_per_second"]
    assert p.fields["output_throughput"] == agg["mean_output_throughput_tokens_per_s"]
    assert p.definitions == {"ttft": "ttft.first-token", "tpot": "tpot.excl-first",
                             "e2el": "e2el.request"}
    assert p.scenario == {"input_tokens": 2000, "output_tokens": 200,
                          "distribution": "N(2000,200)/(200,20)"}
    assert len(p.requests) == n and not any(x.get("error") for x in p.requests)
    first = r["individual_request_metrics"][0]
    assert p.requests[0] == {"ttft_ms": first["ttft"] * 1000,
                             "e2el_ms": first["e2e_latency"] * 1000,
                             "input_tokens": first["num_input_tokens"],
                             "output_tokens": first["num_output_tokens"]}
    if conc == 2:
        assert p.fields["total_input_tokens"] == 127837
        assert p.fields["p99_ttft_ms"] == pytest.approx(267.2089373320341, rel=1e-15)


@needs_samples
def test_genai_bench_tpot_is_the_vllm_definition():
    """TPOT = (E2E − TTFT) ÷ (output tokens − 1) on every request of the sample."""
    for req in raw(GB_RUNS[2])["individual_request_metrics"]:
        expected = (req["e2e_latency"] - req["ttft"]) / (req["num_output_tokens"] - 1)
        assert req["tpot"] == pytest.approx(expected, rel=1e-9)


def _gb_doc(errors: int = 0, ok: int = 2, **agg_extra):
    stat = {"min": 0.1, "max": 0.3, "mean": 0.2, "stddev": 0.05, "sum": 0.4, "p25": 0.15,
            "p50": 0.2, "p75": 0.25, "p90": 0.28, "p99": 0.3}
    agg = {"scenario": "D(100,1000)", "num_concurrency": 4, "run_duration": 10.0,
           "requests_per_second": 0.2, "mean_output_throughput_tokens_per_s": 100.0,
           "error_codes_frequency": {"500": errors} if errors else {},
           "num_error_requests": errors, "num_completed_requests": ok,
           "num_requests": ok + errors,
           "stats": {"ttft": stat, "tpot": stat, "e2e_latency": stat} if ok else {}}
    agg.update(agg_extra)
    reqs = [{"ttft": 0.2, "e2e_latency": 2.0, "num_input_tokens": 100,
             "num_output_tokens": 1000, "error_code": None, "error_message": None}] * ok
    reqs += [{"ttft": None, "e2e_latency": 0.01, "num_input_tokens": 100,
              "num_output_tokens": None, "error_code": 500,
              "error_message": "Bearer abcdef rejected"}] * errors
    return {"aggregated_metrics": agg, "individual_request_metrics": reqs}


def test_genai_bench_time_unit_key_and_errors():
    (p,) = inline(_gb_doc(errors=1, metrics_time_unit="ms", server_engine="vLLM"))
    assert p.fields["mean_ttft_ms"] == 0.2                 # already ms: no × 1000
    assert p.engine == "vllm"
    assert p.requests[0]["e2el_ms"] == 2.0
    assert p.fields["completed"] == 2 and p.fields["failed"] == 1
    assert p.requests[-1]["error"] == "500 Bearer [redacted] rejected"     # base.redact
    assert p.scenario["input_tokens"] == 100 and p.scenario["output_tokens"] == 1000
    (q,) = inline(_gb_doc())
    assert q.fields["mean_ttft_ms"] == 200.0               # seconds by default


def test_genai_bench_all_failed_and_missing_keys():
    (p,) = inline(_gb_doc(errors=3, ok=0))
    assert p.fields["completed"] == 0 and p.fields["failed"] == 3
    assert not [k for k in p.fields if k.endswith("_ms")]
    doc = _gb_doc()
    for key in ("num_completed_requests", "num_error_requests", "run_duration",
                "num_concurrency"):
        del doc["aggregated_metrics"][key]
    (q,) = inline(doc)
    # no concurrency and no rate in the file: the load is not stated (never unbounded)
    assert "duration" not in q.fields and "max_concurrency" not in q.fields
    assert q.load["kind"] == "unstated" and "request_rate" not in q.fields
    assert q.fields["completed"] == 2 and q.fields["failed"] == 0   # from the requests
    assert q.sources["completed"] == ("individual_request_metrics[].error_code (requests "
                                      "without an error)")


def test_genai_bench_scenario_strings_and_bad_content():
    assert genai_bench.scenario_tokens("N(480,240)/(300,150)") == {"input_tokens": 480,
                                                                   "output_tokens": 300}
    assert genai_bench.scenario_tokens("I(512,512)") == {}
    doc = _gb_doc()
    doc["individual_request_metrics"] = {"ttft": 1}
    with pytest.raises(ParseError) as exc:
        inline(doc, "exp/N100_text-to-text_num_concurrency_4_time_10s.json")
    assert exc.value.path == "exp/N100_text-to-text_num_concurrency_4_time_10s.json"
    assert "'individual_request_metrics' is not a list" in str(exc.value)


# ----------------------------------------------------------------------------- llmperf

@needs_samples
def test_llmperf_summary():
    r = raw(LLMPERF_SUMMARY)
    (p,) = points(LLMPERF_SUMMARY)
    check_shape(p)
    assert (p.client, p.role) == ("llmperf", "summary")
    assert p.fields["completed"] == 150 and p.fields["failed"] == 0
    # seconds -> ms
    assert p.fields["p99_ttft_ms"] == r["results_ttft_s_quantiles_p99"] * 1000
    assert p.fields["median_ttft_ms"] == r["results_ttft_s_quantiles_p50"] * 1000
    assert p.fields["mean_e2el_ms"] == r["results_end_to_end_latency_s_mean"] * 1000
    assert p.fields["std_e2el_ms"] == r["results_end_to_end_latency_s_stddev"] * 1000
    assert p.fields["p90_itl_ms"] == r["results_inter_token_latency_s_quantiles_p90"] * 1000
    assert p.fields["mean_ttft_ms"] == pytest.approx(227.86034579078357, rel=1e-15)
    assert "mean_tpot_ms" not in p.fields
    assert p.definitions == {"ttft": "ttft.first-token", "itl": "itl.llmperf",
                             "e2el": "e2el.request"}
    assert p.fields["max_concurrency"] == 5 and p.load["kind"] == "concurrency"
    # completed per minute / 60; the run's wall time is completed ÷ that rate
    assert p.fields["request_throughput"] == r["results_num_completed_requests_per_min"] / 60
    assert p.fields["duration"] == pytest.approx(150 / 176.73895115400083 * 60, rel=1e-12)
    assert p.fields["output_throughput"] == 441.84737788500206
    assert p.fields["total_input_tokens"] == 550 * 150
    assert p.fields["total_output_tokens"] == 150 * 150
    assert p.scenario == {"input_tokens": 550, "output_tokens": 150}
    assert p.model == "llama2-70b-4096" and p.date == "2024-01-10T01:55:04+00:00"
    assert p.sources["p99_ttft_ms"] == "results_ttft_s_quantiles_p99"


@needs_samples
def test_llmperf_individual_responses():
    r = raw(LLMPERF_INDIVIDUAL)
    (p,) = points(LLMPERF_INDIVIDUAL)
    check_shape(p)
    assert (p.client, p.role) == ("llmperf", "requests")
    assert len(p.requests) == 150 == len(r)
    assert p.fields == {"completed": 150, "failed": 0}
    assert p.requests[0] == {"ttft_ms": r[0]["ttft_s"] * 1000,
                             "e2el_ms": r[0]["end_to_end_latency_s"] * 1000,
                             "input_tokens": 550, "output_tokens": 150}


@needs_samples
def test_llmperf_itl_counts_the_first_token():
    """llmperf's ITL is about E2E ÷ n (TTFT counted), not (E2E − TTFT) ÷ (n − 1)."""
    for req in raw(LLMPERF_INDIVIDUAL):
        n, e2e, ttft = (req["number_output_tokens"], req["end_to_end_latency_s"],
                        req["ttft_s"])
        itl = req["inter_token_latency_s"]
        assert abs(itl - e2e / n) < abs(itl - (e2e - ttft) / (n - 1))
        assert itl == pytest.approx(e2e / n, rel=0.05)


def test_llmperf_error_records_keep_latencies():
    reqs = [{"error_code": None, "error_msg": "", "ttft_s": 0.1, "end_to_end_latency_s": 1.0,
             "inter_token_latency_s": 0.01, "number_input_tokens": 10,
             "number_output_tokens": 100},
            {"error_code": 429, "error_msg": "Too Many Requests", "ttft_s": 0.05,
             "end_to_end_latency_s": 0.06, "inter_token_latency_s": 0,
             "number_input_tokens": 10, "number_output_tokens": 0}]
    (p,) = inline(reqs, "x_individual_responses.json")
    assert p.role == "requests" and p.fields == {"completed": 1, "failed": 1}
    # an error record's 0 output tokens is what it delivered
    assert p.requests[1] == {"ttft_ms": 50.0, "e2el_ms": 60.0, "input_tokens": 10,
                             "output_tokens": 0, "error": "429 Too Many Requests"}


def test_llmperf_all_failed_summary_and_missing_keys():
    text = json.dumps({"model": "m", "num_concurrent_requests": 2,
                       "results_ttft_s_mean": math.nan, "results_ttft_s_quantiles_p50": math.nan,
                       "results_num_requests_started": 10, "results_error_rate": 1.0,
                       "results_number_errors": 10, "results_num_completed_requests": 0,
                       "results_num_completed_requests_per_min": 0.0})
    assert "NaN" in text
    (p,) = inline(text.encode(), "m_summary.json")
    assert p.fields["completed"] == 0 and p.fields["failed"] == 10
    assert not [k for k in p.fields if k.endswith("_ms")] and "duration" not in p.fields
    (q,) = inline({"results_ttft_s_mean": 0.5, "results_num_completed_requests": 3})
    assert q.fields == {"completed": 3, "mean_ttft_ms": 500.0}
    assert q.load["kind"] == "unstated"
    assert q.record()["failed"] is None


def test_llmperf_bad_content():
    with pytest.raises(ParseError) as exc:
        inline([{"error_code": None, "ttft_s": 1.0, "end_to_end_latency_s": 2.0}, 5],
               "out/individual.json")
    assert exc.value.path == "out/individual.json" and "[1] is a int" in str(exc.value)


# ------------------------------------------------ values never measured are never shown

def test_every_source_key_of_every_real_sample_is_in_its_file():
    """The audit trail cites only keys the file holds: every real sample of every client,
    each point's every source, resolved in the decoded file."""
    from benchreport.ingest.clients.sources import missing

    checked = 0
    for path in sorted(p for p in SAMPLES.rglob("*") if p.is_file()
                       and p.suffix.lower() in (".json", ".jsonl", ".csv")):
        data = path.read_bytes()
        try:
            found = read_points(data, path.name)
        except ParseError:
            continue                           # not a client result (server metrics, …)
        doc = decode(data, path.name)
        for p in found:
            assert missing(doc, p) == [], (path, p.where)
            checked += len(p.sources)
    assert checked > 300


def test_the_source_resolver_refuses_keys_that_are_not_there():
    from benchreport.ingest.clients.sources import missing

    doc = decode(json.dumps({"records": {"ttft": {"avg": 1}}, "error_summary": [],
                             "a": 2}).encode(), "x.json")
    p = type("P", (), {"where": "records", "sources": {
        "mean_ttft_ms": "records.ttft.avg", "failed": "error_summary[].count",
        "completed": "completed", "duration": "a ÷ 60 (a note)", "x": "records.ttft.p99"}})()
    assert missing(doc, p) == ["completed: completed", "x: records.ttft.p99"]


@needs_samples
def test_genai_bench_not_streamed_has_no_ttft_or_tpot():
    """A copy of a real scenario file as genai-bench writes it without streaming: every TTFT
    is its 1 ms placeholder. TTFT and TPOT are not measured; E2E still is."""
    d = raw(GB_RUNS[2])
    for item in d["individual_request_metrics"]:
        item["ttft"] = 0.001
    d["aggregated_metrics"]["stats"]["ttft"].update(
        {k: 0.001 for k in ("min", "max", "mean", "p50", "p90", "p99")}, stddev=0.0)
    (p,) = inline(d, "run.json")
    assert not [k for k in p.fields if "_ttft_" in k or "_tpot_" in k]
    assert set(p.definitions) == {"e2el"} and p.params["streaming"] is False
    assert p.fields["mean_e2el_ms"] == d["aggregated_metrics"]["stats"]["e2e_latency"][
        "mean"] * 1000.0
    assert all("ttft_ms" not in r for r in p.requests) and len(p.requests) == 65
    assert any("not streamed (every TTFT is 0.001 s)" in w for w in p.warnings)
    # the streaming setting, where a file records it, says so without the placeholder
    d = raw(GB_RUNS[2])
    d["aggregated_metrics"]["additional_request_params"] = {"stream": False}
    (q,) = inline(d, "run.json")
    assert "mean_ttft_ms" not in q.fields and "mean_tpot_ms" not in q.fields
    assert any("additional_request_params.stream is false" in w for w in q.warnings)
    (real,) = points(GB_RUNS[2])                 # the real, streamed file keeps its TTFT
    assert real.fields["mean_ttft_ms"] > 1.0 and "streaming" not in real.params


def test_unknown_token_counts_are_none_not_zero():
    doc = _gb_doc()
    doc["aggregated_metrics"]["stats"]["num_input_tokens"] = {"sum": 0, "mean": 0}
    for item in doc["individual_request_metrics"]:
        item["num_input_tokens"] = 0
    (p,) = inline(doc)
    assert "total_input_tokens" not in p.fields
    assert p.scenario["input_tokens"] == 100          # the scenario's target, D(100,1000)
    assert all(r["input_tokens"] is None for r in p.requests)
    assert any("2 request(s) record 0 input tokens; read as not known" in w
               for w in p.warnings)
    assert any("num_input_tokens.sum is 0 although 2 requests completed" in w
               for w in p.warnings)
    # a vLLM result that writes 0 tokens for its requests
    (v,) = inline({"date": "20250101-000000", "backend": "vllm", "num_prompts": 2,
                   "duration": 2.0, "completed": 2, "total_input_tokens": 0,
                   "total_output_tokens": 0, "request_rate": "inf", "max_concurrency": 2,
                   "median_ttft_ms": 10.0})
    assert not {"total_input_tokens", "total_output_tokens"} & set(v.fields)
    assert v.record().get("total_input_tokens") is None


def test_a_csv_that_does_not_state_its_load_is_unstated_not_unbounded():
    text = ("Metric,avg,min,max,p50,p90,p99,std\r\n"
            "Time to First Token (ms),10.0,9.0,12.0,10.0,11.0,11.9,0.5\r\n\r\n"
            "Metric,Value\r\nRequest Count,8\r\nRequest Throughput (requests/sec),3.5\r\n")
    (p,) = inline(text.encode(), "profile_export_aiperf.csv")
    assert p.load == {"kind": "unstated", "max_concurrency": None, "request_rate": None,
                      "arrival": None}
    assert "request_rate" not in p.fields and "max_concurrency" not in p.fields
    assert any("its load is not stated" in w for w in p.warnings)


def test_guidellm_concurrency_cap_is_not_the_load():
    """GuideLLM writes max_concurrency (10,240 unless set) beside a rate strategy: a cap on
    requests in flight, not the load."""
    (p,) = inline({"benchmarks": [_guidellm_bench(
        {"type_": "constant", "rate": 2.0, "max_concurrency": 10240})]})
    assert p.load == {"kind": "rate", "max_concurrency": None, "request_rate": 2.0,
                      "arrival": "constant"}
    assert p.fields["max_concurrency"] is None and p.params["max_concurrency_cap"] == 10240
    (s,) = inline({"benchmarks": [_guidellm_bench(
        {"type_": "synchronous", "max_concurrency": 10240})]})
    assert s.fields["max_concurrency"] == 1 and s.params["max_concurrency_cap"] == 10240
    (c,) = inline({"benchmarks": [_guidellm_bench({"type_": "concurrent", "streams": 8,
                                                   "max_concurrency": 8})]})
    assert c.fields["max_concurrency"] == 8 and "max_concurrency_cap" not in c.params


AIPERF_08_ALL_TIMEOUT = {
    # AIPerf 0.8's profile_export_aiperf.json when every request timed out: no request
    # count and no latency records, only the error count and the error summary
    "schema_version": "1.1", "aiperf_version": "0.8.0",
    "error_request_count": {"unit": "requests", "avg": 40.0},
    "benchmark_duration": {"unit": "sec", "avg": 600.5},
    "error_summary": [{"error_details": {"code": None, "type": "TimeoutError",
                                         "message": "Request timed out"}, "count": 40}],
    "input_config": {"endpoint": {"model_names": ["m"], "streaming": True},
                     "loadgen": {"concurrency": 8}},
    "was_cancelled": False, "start_time": "2026-01-01T00:00:00", "end_time":
        "2026-01-01T00:10:00"}


def test_aiperf_08_every_request_timed_out_is_a_failed_run():
    (p,) = inline(AIPERF_08_ALL_TIMEOUT, "profile_export_aiperf.json")
    assert (p.client, p.role) == ("aiperf", "summary")
    assert p.fields["completed"] == 0 and p.fields["failed"] == 40
    assert not [k for k in p.fields if k.endswith("_ms")] and p.definitions == {}
    assert p.fields["max_concurrency"] == 8 and p.fields["duration"] == 600.5
    assert any("all 40 requests failed (40 TimeoutError)" in w for w in p.warnings)
    # only the error summary, not even an error count
    doc = {k: v for k, v in AIPERF_08_ALL_TIMEOUT.items() if k != "error_request_count"}
    (q,) = inline(doc, "profile_export_aiperf.json")
    assert q.fields["completed"] == 0 and q.fields["failed"] == 40
    assert q.sources["failed"] == "error_summary[].count"
    from benchreport.ingest.clients.sources import missing
    for d, point in ((AIPERF_08_ALL_TIMEOUT, p), (doc, q)):
        assert missing(decode(json.dumps(d).encode(), "x.json"), point) == []


@needs_samples
def test_early_aiperf_cancelled_requests_are_failed():
    (p,) = points(AIPERF_JSON)
    (r,) = points(AIPERF_JSONL)
    assert (p.fields["completed"], p.fields["failed"]) == (89, 11)
    assert (r.fields["completed"], r.fields["failed"]) == (89, 11)


# ---------------------------------------- views of one run: no file lost without a word

def _genai_perf_csv(j: dict) -> bytes:
    """A CSV in the shape GenAI-Perf writes beside its JSON (p99-first columns, "(per sec)"
    units, two decimals), holding that JSON's numbers. It records no concurrency."""
    rows = ["Metric,avg,min,max,p99,p90,p75,p50,p25"]
    for name, key in (("Time To First Token (ms)", "time_to_first_token"),
                      ("Inter Token Latency (ms)", "inter_token_latency"),
                      ("Request Latency (ms)", "request_latency")):
        m = j[key]
        rows.append(",".join([name] + [f"{m[c]:.2f}" for c in
                                       ("avg", "min", "max", "p99", "p90", "p75", "p50",
                                        "p25")]))
    rows += ["", "Metric,Value",
             f"Request Throughput (per sec),{j['request_throughput']['avg']:.2f}",
             f"Output Token Throughput (per sec),{j['output_token_throughput']['avg']:.2f}"]
    return ("\r\n".join(rows) + "\r\n").encode()


@needs_samples
def test_genai_perf_csv_without_concurrency_joins_its_json_or_says_why_not(tmp_path):
    from benchreport.core.records import RawFile
    from benchreport.ingest.points import merge_views

    def view(name: str, data: bytes):
        path = tmp_path / name
        path.write_bytes(data)
        return [(p, RawFile(path=path, rel=name, sha256="")) for p in
                read_points(data, name)]

    c1, c10 = (GENAI_PERF[c].read_bytes() for c in (1, 10))
    csv10 = _genai_perf_csv(json.loads(c10))
    (csv_point,) = read_points(csv10, "profile_export_genai_perf.csv")
    assert csv_point.client == "genai-perf" and csv_point.load["kind"] == "unstated"
    # the CSV beside the two JSON summaries of the sweep is c10's: one point per run
    found = view("c1.json", c1) + view("c10.json", c10) + view("profile_export_genai_perf"
                                                                ".csv", csv10)
    notes: list[str] = []
    merged = merge_views(found, notes)
    assert [(p.fields["max_concurrency"], also) for p, _, also in merged] == [
        (1, []), (10, ["profile_export_genai_perf.csv"])]
    assert notes == []
    # a CSV whose numbers match neither JSON is a run of its own, and a note says so
    other = json.loads(c10)
    other["time_to_first_token"]["avg"] += 50.0
    found = view("c1.json", c1) + view("c10.json", c10) + view("other.csv",
                                                               _genai_perf_csv(other))
    merged = merge_views(found, notes)
    assert len(merged) == 3 and merged[2][0].load["kind"] == "unstated"
    assert notes == ["other.csv: its figures match none of the 2 genai-perf summaries "
                     "beside it, so it is read as a run of its own"]


def test_an_unstated_load_matches_only_a_single_load_workload():
    from benchreport.core.runmeta import Load, Workload
    from benchreport.ingest.points import match_load, point_load

    text = ("Metric,avg,p50\r\nTime to First Token (ms),10.0,10.0\r\n\r\n"
            "Metric,Value\r\nRequest Count,8\r\n")
    (p,) = inline(text.encode(), "profile_export_aiperf.csv")
    assert point_load(p) == Load()
    one = Workload(id="1k", label="1K", input_tokens=1000, output_tokens=None,
                   concurrency=None, num_prompts=None, loads=(Load(16),))
    assert match_load(p, one, "x.csv") == Load(16)
    sweep = Workload(id="1k", label="1K", input_tokens=1000, output_tokens=None,
                     concurrency=None, num_prompts=None,
                     loads=(Load(16), Load(None, "inf")))
    with pytest.raises(ParseError, match="states no load"):    # never taken for "inf"
        match_load(p, sweep, "x.csv")
