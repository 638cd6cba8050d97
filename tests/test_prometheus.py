"""Prometheus /metrics dumps: the real vLLM and SGLang dumps through `benchreport parse
--json`, concatenated scrapes, counter resets, histogram quantiles, the name mapping across
versions, AIPerf's server-metrics JSONL and one-line errors.

Expected values are read off the dumps by eye (line numbers included) or worked out by hand
in the comments; none is read back from the code under test.
"""

import json
import subprocess
import sys

import pytest

from benchreport.core.errors import ParseError
from benchreport.ingest.parsers.prometheus import (
    canonical_name,
    counter_delta,
    histogram_buckets,
    histogram_delta,
    histogram_quantile,
    parse_scrapes,
)

from .conftest import REAL_SAMPLES, needs_samples

PROM = REAL_SAMPLES / "prometheus"
IDLE = "vllm-0.25.1-opt125m-tp2-idle-metrics.txt"
LOADED = "vllm-0.25.1-opt125m-tp2-loaded-c128-metrics.txt"
SGLANG = "sglang-2025-03-llama3.1-8b-docs-example-metrics.txt"
VLLM_LABELS = {"engine": "0", "model_name": "opt-125m-tp2"}
SGLANG_MODEL = "meta-llama/Llama-3.1-8B-Instruct"
GEN_LINE = 'vllm:generation_tokens_total{engine="0",model_name="opt-125m-tp2"} 165293.0\n'
GEN_CREATED = ('vllm:generation_tokens_created{engine="0",model_name="opt-125m-tp2"} '
               '1.7869290186211162e+09\n')


def parse(project, path, *extra):
    return subprocess.run([sys.executable, "-m", "benchreport", "parse", str(path), "--json",
                           *extra], capture_output=True, text=True, cwd=project)


def parse_ok(project, path):
    out = parse(project, path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def at(doc, line, name=None):
    """The records of one line (one sample per line in a text exposition)."""
    found = [r for r in doc["records"] if r["line"] == line and name in (None, r["name"])]
    assert len(found) == 1, (line, found)
    return found[0]


def read(name):
    return (PROM / name).read_text(encoding="utf-8")


# --- the real dumps -----------------------------------------------------------------------

@needs_samples
@pytest.mark.parametrize("name, engine, lines, samples", [
    # samples = lines that are neither blank nor a comment (grep -cv '^#'): 91, 405, 435
    (SGLANG, "sglang", 115, 91),
    (IDLE, "vllm", 577, 405),
    (LOADED, "vllm", 607, 435),
])
def test_real_dumps_parse_one_record_per_sample(project, name, engine, lines, samples):
    doc = parse_ok(project, PROM / name)
    assert doc["engine"] == engine and doc["lines"] == lines and doc["unrecognised"] == 0
    assert doc["counts"] == {"metric": samples}
    assert len(doc["records"]) == samples
    keys = {"kind", "line", "name", "labels", "value", "canonical", "type", "scrape", "ts"}
    assert all(set(r) == keys and r["kind"] == "metric" for r in doc["records"])
    assert {r["scrape"] for r in doc["records"]} == {0}
    assert all(r["ts"] is None for r in doc["records"])     # no time in the file or its name
    assert {r["type"] for r in doc["records"]} <= {"counter", "gauge", "histogram", "summary",
                                                    "unknown"}
    lines_seen = [r["line"] for r in doc["records"]]
    assert lines_seen == sorted(set(lines_seen))            # one record per line, in order


@needs_samples
def test_vllm_loaded_values(project):
    doc = parse_ok(project, PROM / LOADED)
    running = at(doc, 57)
    assert running == {"kind": "metric", "line": 57, "name": "vllm:num_requests_running",
                       "labels": VLLM_LABELS, "value": 64.0, "canonical": "requests_running",
                       "type": "gauge", "scrape": 0, "ts": None}
    waiting = at(doc, 60)
    assert (waiting["name"], waiting["value"], waiting["canonical"]) == \
        ("vllm:num_requests_waiting", 64.0, "requests_waiting")
    # the by-reason gauge shares the prefix but is another metric
    capacity, deferred = at(doc, 63), at(doc, 64)
    assert capacity["name"] == deferred["name"] == "vllm:num_requests_waiting_by_reason"
    assert capacity["canonical"] is None and deferred["canonical"] is None
    assert capacity["labels"] == {**VLLM_LABELS, "reason": "capacity"}
    assert (capacity["value"], deferred["value"]) == (64.0, 0.0)
    assert [r["line"] for r in doc["records"] if r["canonical"] == "requests_waiting"] == [60]
    kv = at(doc, 72)
    assert (kv["name"], kv["value"], kv["canonical"]) == \
        ("vllm:kv_cache_usage_perc", 0.11223878211531546, "kv_cache_usage")
    gen = at(doc, 139)
    assert (gen["name"], gen["value"], gen["type"], gen["canonical"]) == \
        ("vllm:generation_tokens_total", 165293.0, "counter", "generation_tokens_total")
    assert at(doc, 117)["value"] == 339968.0 and at(doc, 117)["canonical"] == \
        "prompt_tokens_total"
    assert at(doc, 111)["canonical"] == "preemptions_total" and at(doc, 111)["value"] == 0.0
    assert at(doc, 81)["canonical"] == "prefix_cache_hits_total" and at(doc, 81)["value"] == 2480
    length = at(doc, 146)
    assert length["labels"] == {**VLLM_LABELS, "finished_reason": "length"}
    assert length["value"] == 600.0 and length["canonical"] == "request_success_total"
    inf = at(doc, 291)
    assert inf["name"] == "vllm:time_to_first_token_seconds_bucket"
    assert inf["labels"] == {**VLLM_LABELS, "le": "+Inf"} and inf["value"] == 664.0
    assert inf["canonical"] == "ttft_seconds_bucket" and inf["type"] == "histogram"
    itl = at(doc, 320)
    assert (itl["name"], itl["canonical"], itl["value"]) == \
        ("vllm:inter_token_latency_seconds_sum", "itl_seconds_sum", 998.1225105317717)
    # per request, not per token: not the inter-token latency
    tpot = [r for r in doc["records"]
            if r["name"].startswith("vllm:request_time_per_output_token_seconds")]
    assert len(tpot) == 23 and all(r["canonical"] is None for r in tpot)
    created = at(doc, 142)
    assert created["name"] == "vllm:generation_tokens_created"
    assert created["value"] == 1786929018.6211162 and created["type"] == "gauge"
    assert at(doc, 578)["name"] == "http_request_duration_highr_seconds_count"
    assert at(doc, 578)["labels"] == {} and at(doc, 578)["canonical"] is None


@needs_samples
def test_sglang_docs_values(project):
    doc = parse_ok(project, PROM / SGLANG)
    prompt, gen = at(doc, 3), at(doc, 6)
    # exponent form in the file: 8.128902e+06 and 7.557572e+06
    assert (prompt["name"], prompt["value"], prompt["canonical"], prompt["type"]) == \
        ("sglang:prompt_tokens_total", 8128902.0, "prompt_tokens_total", "counter")
    assert (gen["value"], gen["canonical"]) == (7557572.0, "generation_tokens_total")
    assert prompt["labels"] == {"model_name": SGLANG_MODEL}
    assert (at(doc, 9)["value"], at(doc, 9)["canonical"]) == (0.28, "kv_cache_usage")
    assert at(doc, 12)["canonical"] == "cache_hit_rate"
    assert (at(doc, 106)["name"], at(doc, 106)["value"], at(doc, 106)["canonical"]) == \
        ("sglang:num_running_reqs", 162.0, "requests_running")
    assert (at(doc, 115)["value"], at(doc, 115)["canonical"]) == (2826.0, "requests_waiting")
    assert (at(doc, 112)["value"], at(doc, 112)["canonical"]) == \
        (86.50814177726902, "gen_throughput")
    itl = at(doc, 70)
    assert itl["labels"] == {"le": "0.1", "model_name": SGLANG_MODEL}
    assert itl["value"] == 4950195.0 and itl["canonical"] == "itl_seconds_bucket"
    func = at(doc, 103)
    assert func["labels"] == {"name": "generate_request"} and func["canonical"] is None


@needs_samples
def test_model_label_is_model_name_or_sglangs_older_name():
    new = parse_scrapes(read(SGLANG), SGLANG)[0]
    assert {s.model for s in new.select("requests_running")} == {SGLANG_MODEL}
    # name= on a function-latency histogram names a function, not a model
    assert {s.model for s in new.select("sglang:func_latency_seconds_count")} == {None}
    old = parse_scrapes('# TYPE sglang:num_requests_running gauge\n'
                        'sglang:num_requests_running{name="meta-llama/Llama-2-7b"} 12.0\n'
                        '# TYPE sglang:queue_req gauge\n'
                        'sglang:queue_req{name="meta-llama/Llama-2-7b"} 3.0\n', "old.txt")[0]
    assert [(s.model, s.value) for s in old.select("requests_running")] == \
        [("meta-llama/Llama-2-7b", 12.0)]
    assert [s.value for s in old.select("requests_waiting")] == [3.0]


# --- several scrapes ----------------------------------------------------------------------

@needs_samples
def test_idle_then_loaded_files_difference(project):
    before = parse_scrapes(read(IDLE), str(PROM / IDLE))[0]
    after = parse_scrapes(read(LOADED), str(PROM / LOADED))[0]
    # idle 0, loaded 165293 and 339968; same process (same _created times in both)
    assert counter_delta(before, after, "generation_tokens_total") == (165293.0, None)
    assert counter_delta(before, after, "vllm:prompt_tokens_total") == (339968.0, None)
    assert counter_delta(before, after, "preemptions_total") == (0.0, None)
    # request_success over its five finished_reason series: 0+600+0+0+0 minus all zeros
    assert counter_delta(before, after, "request_success_total") == (600.0, None)
    assert counter_delta(before, after, "request_success_total",
                         {"finished_reason": "stop"}) == (0.0, None)
    # /tokenize and /v1/completions appear only under load and count from zero: 1+2+600 - 1
    assert counter_delta(before, after, "http_requests_total") == (602.0, None)


@needs_samples
def test_concatenated_real_dumps_split_where_a_family_repeats(project, tmp_path):
    path = tmp_path / "metrics-run.txt"
    path.write_text(read(IDLE) + read(LOADED), encoding="utf-8")
    doc = parse_ok(project, path)
    assert doc["counts"] == {"metric": 405 + 435} and doc["lines"] == 577 + 607
    assert {r["scrape"] for r in doc["records"] if r["line"] <= 577} == {0}
    assert {r["scrape"] for r in doc["records"] if r["line"] > 577} == {1}
    running = at(doc, 577 + 57)
    assert (running["name"], running["value"], running["scrape"]) == \
        ("vllm:num_requests_running", 64.0, 1)
    scrapes = parse_scrapes(path.read_text(), str(path))
    assert [(s.first_line, s.last_line, len(s.samples)) for s in scrapes] == \
        [(1, 577, 405), (578, 1184, 435)]
    assert counter_delta(*scrapes, "generation_tokens_total") == (165293.0, None)


@needs_samples
def test_concatenated_scrapes_with_separators_and_a_counter_increased(project, tmp_path):
    text = read(LOADED)
    later = text.replace(GEN_LINE, GEN_LINE.replace("165293.0", "170000.0"))
    assert later != text
    path = tmp_path / "scrapes.prom"
    path.write_text("# scrape 2025-03-01T12:00:00Z\n" + text + "# time: 1740830460\n" + later)
    doc = parse_ok(project, path)
    assert doc["counts"] == {"metric": 2 * 435}
    first, second = at(doc, 1 + 139), at(doc, 608 + 1 + 139)
    assert first["name"] == second["name"] == "vllm:generation_tokens_total"
    assert (first["value"], first["scrape"], first["ts"]) == \
        (165293.0, 0, "2025-03-01T12:00:00+00:00")
    # 1740830460 s = 2025-03-01 12:01:00 UTC
    assert (second["value"], second["scrape"], second["ts"]) == \
        (170000.0, 1, "2025-03-01T12:01:00+00:00")
    scrapes = parse_scrapes(path.read_text(), str(path))
    assert [(s.first_line, s.last_line) for s in scrapes] == [(1, 608), (609, 1216)]
    assert counter_delta(*scrapes, "generation_tokens_total") == (170000.0 - 165293.0, None)
    assert counter_delta(*scrapes, "prompt_tokens_total") == (0.0, None)
    # without the separators the repeated families still split the text in two
    bare = parse_scrapes(text + later, "bare.txt")
    assert len(bare) == 2 and counter_delta(*bare, "generation_tokens_total").value == 4707.0


@needs_samples
def test_counter_reset_is_never_differenced():
    loaded = parse_scrapes(read(LOADED), "loaded.txt")[0]
    idle = parse_scrapes(read(IDLE), "idle.txt")[0]
    value, reason = counter_delta(loaded, idle, "generation_tokens_total")
    assert value is None
    assert "counter reset" in reason and "165293" in reason and "loaded.txt:139" in reason
    # the value went up, but the counter was created anew: a restart between the scrapes
    restarted = read(LOADED).replace(GEN_LINE, GEN_LINE.replace("165293.0", "170000.0"))
    restarted = restarted.replace(GEN_CREATED, GEN_CREATED.replace("1.7869290186211162e+09",
                                                                   "1.7869400000000000e+09"))
    after = parse_scrapes(restarted, "restarted.txt")[0]
    value, reason = counter_delta(loaded, after, "generation_tokens_total")
    assert value is None and "created time" in reason
    # a series that disappears
    gone = parse_scrapes(read(LOADED).replace(GEN_LINE, ""), "gone.txt")[0]
    value, reason = counter_delta(loaded, gone, "generation_tokens_total")
    assert value is None and "gone.txt" in reason
    # histograms are refused the same way
    value, reason = histogram_delta(loaded, idle, "ttft_seconds")
    assert value is None and "counter reset" in reason


def test_data_parallel_ranks_and_draft_positions():
    def scrape(accepted, drafts):
        rows = ["# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens.",
                "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter"]
        for (engine, pos), v in accepted.items():
            rows.append(f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="{engine}",'
                        f'model_name="m",position="{pos}"}} {v}')
        rows += ["# HELP vllm:spec_decode_num_drafts_total Drafts.",
                 "# TYPE vllm:spec_decode_num_drafts_total counter"]
        rows += [f'vllm:spec_decode_num_drafts_total{{engine="{engine}",model_name="m"}} {v}'
                 for engine, v in drafts.items()]
        return "\n".join(rows) + "\n"

    text = ("# scrape\n" + scrape({("0", 0): 80, ("0", 1): 50, ("1", 0): 70, ("1", 1): 40},
                                  {"0": 100, "1": 90}) +
            "# scrape\n" + scrape({("0", 0): 160, ("0", 1): 95, ("1", 0): 150, ("1", 1): 85},
                                  {"0": 200, "1": 190}))
    a, b = parse_scrapes(text, "dp.txt")
    pos = "spec_accepted_tokens_per_pos_total"
    # position 0: (160-80) + (150-70) = 160; position 1: (95-50) + (85-40) = 90
    assert counter_delta(a, b, pos, {"position": "0"}) == (160.0, None)
    assert counter_delta(a, b, pos, {"position": "1"}) == (90.0, None)
    assert counter_delta(a, b, pos, {"position": "0", "engine": "1"}) == (80.0, None)
    # drafts: (200-100) + (190-90) = 200
    assert counter_delta(a, b, "spec_drafts_total") == (200.0, None)
    assert {s.labels["engine"] for s in b.select(pos)} == {"0", "1"}


# --- histograms ---------------------------------------------------------------------------

def test_histogram_quantile_by_hand():
    buckets = {"0.1": 1, "0.5": 4, "+Inf": 5}
    # median: rank 2.5 falls in (0.1, 0.5] holding counts 1..4: 0.1 + 0.4 * 1.5 / 3 = 0.3
    assert histogram_quantile(buckets, 0.5) == pytest.approx(0.3)
    # p10: rank 0.5 in the first bucket, which starts at 0: 0.1 * 0.5 / 1 = 0.05
    assert histogram_quantile(buckets, 0.1) == pytest.approx(0.05)
    # p95: rank 4.75 lies past the last finite bound: that bound, 0.5
    assert histogram_quantile(buckets, 0.95) == 0.5
    assert histogram_quantile({"0.1": 1, "0.5": 4}, 0.5) is None        # no +Inf bucket
    assert histogram_quantile({"0.1": 0, "+Inf": 0}, 0.5) is None       # no observation
    with pytest.raises(ValueError):
        histogram_quantile(buckets, 1.5)


@needs_samples
def test_histogram_quantile_of_real_buckets():
    sglang = parse_scrapes(read(SGLANG), SGLANG)[0]
    ttft = histogram_buckets(sglang, "ttft_seconds")
    assert len(ttft) == 21 and ttft[-1] == (float("inf"), 11008.0)
    # p10: rank 1100.8 between le=7.5 (941) and le=10 (1330): 7.5 + 2.5 * 159.8 / 389
    assert histogram_quantile(ttft, 0.10) == pytest.approx(8.526992287917738)
    # p50: rank 5504 is past le=30 (2513): the estimate stops at 30
    assert histogram_quantile(ttft, 0.5) == 30.0
    itl = histogram_buckets(sglang, "sglang:time_per_output_token_seconds")
    # p50: rank 3700378.5 between le=0.075 (433413) and le=0.1 (4950195)
    assert histogram_quantile(itl, 0.5) == pytest.approx(
        0.075 + 0.025 * (3700378.5 - 433413) / (4950195 - 433413))

    idle = parse_scrapes(read(IDLE), IDLE)[0]
    loaded = parse_scrapes(read(LOADED), LOADED)[0]
    delta, reason = histogram_delta(idle, loaded, "ttft_seconds")
    assert reason is None and delta[-1] == (float("inf"), 664.0)
    # p50: rank 332 between le=0.1 (166) and le=0.25 (593): 0.1 + 0.15 * 166 / 427
    assert histogram_quantile(delta, 0.5) == pytest.approx(0.15831381733021077)
    # p99: rank 657.36 between le=0.25 (593) and le=0.5 (664): 0.25 + 0.25 * 64.36 / 71
    assert histogram_quantile(delta, 0.99) == pytest.approx(0.4766197183098592)


# --- names across versions ----------------------------------------------------------------

@pytest.mark.parametrize("exposed, canonical", [
    ("vllm:gpu_cache_usage_perc", "kv_cache_usage"),
    ("vllm:kv_cache_usage_perc", "kv_cache_usage"),
    ("vllm:num_requests_running", "requests_running"),
    ("vllm:num_requests_waiting", "requests_waiting"),
    ("vllm:num_requests_waiting_by_reason", None),
    ("vllm:prompt_tokens_total", "prompt_tokens_total"),
    ("vllm:prompt_tokens_created", "prompt_tokens_created"),
    ("vllm:prompt_tokens_by_source_total", None),
    ("vllm:prompt_tokens_cached_total", None),
    ("vllm:generation_tokens_total", "generation_tokens_total"),
    ("vllm:num_preemptions_total", "preemptions_total"),
    ("vllm:num_preemptions", "preemptions_total"),
    ("vllm:prefix_cache_queries_total", "prefix_cache_queries_total"),
    ("vllm:prefix_cache_hits_total", "prefix_cache_hits_total"),
    ("vllm:gpu_prefix_cache_queries_total", "prefix_cache_queries_total"),
    ("vllm:gpu_prefix_cache_hits_total", "prefix_cache_hits_total"),
    ("vllm:external_prefix_cache_hits_total", None),
    ("vllm:time_per_output_token_seconds_bucket", "itl_seconds_bucket"),
    ("vllm:inter_token_latency_seconds_bucket", "itl_seconds_bucket"),
    ("vllm:inter_token_latency_seconds_count", "itl_seconds_count"),
    ("vllm:request_time_per_output_token_seconds_bucket", None),
    ("vllm:time_to_first_token_seconds_sum", "ttft_seconds_sum"),
    ("vllm:e2e_request_latency_seconds_bucket", "e2e_latency_seconds_bucket"),
    ("vllm:iteration_tokens_total_bucket", None),
    ("vllm:spec_decode_num_drafts_total", "spec_drafts_total"),
    ("vllm:spec_decode_num_draft_tokens_total", "spec_draft_tokens_total"),
    ("vllm:spec_decode_num_accepted_tokens_total", "spec_accepted_tokens_total"),
    ("vllm:spec_decode_num_accepted_tokens_per_pos_total",
     "spec_accepted_tokens_per_pos_total"),
    ("vllm:num_requests_running_total", None),           # a gauge has no _total
    ("sglang:num_running_reqs", "requests_running"),
    ("sglang:num_requests_running", "requests_running"),
    ("sglang:num_queue_reqs", "requests_waiting"),
    ("sglang:queue_req", "requests_waiting"),
    ("sglang:token_usage", "kv_cache_usage"),
    ("sglang:cache_hit_rate", "cache_hit_rate"),
    ("sglang:prompt_tokens_total", "prompt_tokens_total"),
    ("sglang:generation_tokens_total", "generation_tokens_total"),
    ("sglang:spec_accept_length", "spec_accept_length"),
    ("sglang:gen_throughput", "gen_throughput"),
    ("sglang:time_per_output_token_seconds_bucket", "itl_seconds_bucket"),
    ("sglang:func_latency_seconds_bucket", None),
    ("sglang:num_used_tokens", None),
    ("python_gc_objects_collected_total", None),
    ("process_cpu_seconds_total", None),
])
def test_canonical_names(exposed, canonical):
    assert canonical_name(exposed) == canonical


def test_a_counter_written_without_total_keeps_its_name():
    s = parse_scrapes("# TYPE vllm:num_preemptions counter\nvllm:num_preemptions 3.0\n",
                      "v0.txt")[0].samples[0]
    assert (s.name, s.type, s.value, s.canonical) == \
        ("vllm:num_preemptions", "counter", 3.0, "preemptions_total")


def test_old_and_new_names_side_by_side_are_not_added_twice():
    text = ("# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc 0.4\n"
            "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 0.5\n")
    scrape = parse_scrapes(text, "both.txt")[0]
    assert [s.name for s in scrape.select("kv_cache_usage")] == ["vllm:kv_cache_usage_perc"]
    assert [s.value for s in scrape.select("vllm:gpu_cache_usage_perc")] == [0.4]


# --- times --------------------------------------------------------------------------------

@needs_samples
@pytest.mark.parametrize("name, ts", [
    ("metrics-2025-03-01T12-30-00Z.txt", "2025-03-01T12:30:00+00:00"),
    ("scrape_1740832200.prom", "2025-03-01T12:30:00+00:00"),      # 1740830400 + 1800
    ("metrics_20250301_123000.txt", "2025-03-01T12:30:00"),        # no zone: as written
])
def test_scrape_time_from_the_file_name(project, tmp_path, name, ts):
    path = tmp_path / name
    path.write_text(read(SGLANG))
    doc = parse_ok(project, path)
    assert {r["ts"] for r in doc["records"]} == {ts}


def test_scrape_time_from_sample_timestamps():
    text = ('vllm:num_requests_running{engine="0"} 2 1740830400000\n'
            'vllm:num_requests_waiting{engine="0"} 1 1740830400500\n')
    scrape = parse_scrapes(text, "metrics-2024-01-01T00-00-00Z.txt")[0]
    assert scrape.time.isoformat() == "2025-03-01T12:00:00.500000+00:00"
    assert scrape.time_from == "sample"


# --- AIPerf's server_metrics_export.jsonl -------------------------------------------------

def _aiperf_line(ns, running, generated, buckets, total):
    return json.dumps({
        "endpoint_url": "http://localhost:8000/metrics", "timestamp_ns": ns,
        "endpoint_latency_ns": 2_000_000,
        "metrics": {
            "vllm:num_requests_running": [{"labels": VLLM_LABELS, "value": running}],
            "vllm:generation_tokens": [{"labels": VLLM_LABELS, "value": generated}],
            "vllm:time_to_first_token_seconds": [{"labels": VLLM_LABELS, "buckets": buckets,
                                                  "sum": 1.5, "count": total}],
        }}) + "\n"


def test_aiperf_server_metrics_jsonl(project, tmp_path):
    path = tmp_path / "server_metrics_export.jsonl"
    path.write_text(
        _aiperf_line(1740830400_000_000_000, 3.0, 1000.0, {"0.1": 1, "0.5": 4, "+Inf": 5}, 5)
        + _aiperf_line(1740830401_000_000_000, 4.0, 1250.0, {"0.1": 1, "0.5": 6, "+Inf": 8}, 8))
    doc = parse_ok(project, path)
    # per line: 1 gauge + 1 counter + 3 buckets, sum and count = 7
    assert doc["engine"] == "vllm" and doc["counts"] == {"metric": 14}
    gen = [r for r in doc["records"] if r["canonical"] == "generation_tokens_total"]
    assert [(r["name"], r["line"], r["scrape"], r["value"], r["type"], r["ts"]) for r in gen] == [
        ("vllm:generation_tokens_total", 1, 0, 1000.0, "counter", "2025-03-01T12:00:00+00:00"),
        ("vllm:generation_tokens_total", 2, 1, 1250.0, "counter", "2025-03-01T12:00:01+00:00")]
    le = [r for r in doc["records"] if r["line"] == 2 and r["name"].endswith("_bucket")]
    assert [(r["labels"]["le"], r["value"]) for r in le] == [("0.1", 1), ("0.5", 6), ("+Inf", 8)]
    a, b = parse_scrapes(path.read_text(), str(path))
    assert counter_delta(a, b, "generation_tokens_total") == (250.0, None)
    delta = histogram_delta(a, b, "ttft_seconds").value
    assert delta == [(0.1, 0.0), (0.5, 2.0), (float("inf"), 3.0)]
    # median of the 3 new observations: rank 1.5 in (0.1, 0.5] holding 0..2: 0.1 + 0.4 * 0.75
    assert histogram_quantile(delta, 0.5) == pytest.approx(0.4)


def test_aiperf_request_records_are_not_server_metrics(tmp_path):
    from benchreport.ingest.parsers.prometheus import sniff

    path = tmp_path / "profile_export.jsonl"
    path.write_bytes(b'{"metadata": {"timestamp_ns": 1740830400000000000}, "metrics": '
                     b'{"request_latency": {"value": 812.5, "unit": "ms"}}, "error": null}\n')
    with open(path, "rb") as fp:
        assert sniff(fp, str(path)) is None


# --- bad input ----------------------------------------------------------------------------

@needs_samples
@pytest.mark.parametrize("bad, line_no, words", [
    ('vllm:num_requests_running{engine="0" 64.0', 61, "expected a sample"),
    ("vllm:num_requests_running{engine=0} 64.0", 61, "expected a sample"),
    ("vllm:num_requests_running sixty-four", 61, "expected a sample"),
    ("# TYPE vllm:num_requests_running gauges", 61, "expected one of counter, gauge"),
])
def test_malformed_line_is_a_one_line_error(project, tmp_path, bad, line_no, words):
    lines = read(LOADED).splitlines(keepends=True)
    path = tmp_path / "metrics.txt"
    path.write_text("".join(lines[:60]) + bad + "\n" + "".join(lines[60:]))
    out = parse(project, path)
    assert out.returncode == 1 and out.stdout == ""
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and f"{path}:{line_no}:" in err[0] and words in err[0]
    with pytest.raises(ParseError) as caught:
        parse_scrapes(path.read_text(), str(path))
    assert caught.value.line == line_no and "\n" not in str(caught.value)


def test_malformed_aiperf_line(tmp_path):
    text = _aiperf_line(1740830400_000_000_000, 3.0, 1.0, {"+Inf": 1}, 1) + '{"metrics": [1]\n'
    with pytest.raises(ParseError) as caught:
        parse_scrapes(text, "server_metrics_export.jsonl")
    assert caught.value.line == 2 and "server_metrics_export.jsonl:2:" in str(caught.value)
