"""vLLM and SGLang result records read into points (`ingest.clients.read_points`, the one
model every result file is parsed into): each client and era, statistics, per-request rows,
line numbers and bad input."""

import pytest

from benchreport.core.errors import ParseError
from benchreport.core.records import SGLANG_CLIENT, VLLM_CLIENT
from benchreport.ingest.clients import read_points


def parse(text: str, name: str):
    return read_points(text.encode("latin-1"), name)


VLLM_033 = (
    '{"date": "20261129-071500", "endpoint_type": "openai", "backend": "openai", "label": null, '
    '"model_id": "Qwen/Qwen3-8B", "tokenizer_id": "Qwen/Qwen3-8B", "num_prompts": 2, '
    '"request_rate": "inf", "burstiness": 1.0, "max_concurrency": 2, "duration": 41.8, '
    '"completed": 2, "failed": 0, "total_input_tokens": 4096, "total_output_tokens": 512, '
    '"request_throughput": 0.0478, "request_goodput": null, "output_throughput": 12.2, '
    '"latencies": [6.61, 6.70], "input_lens": [2048, 2048], "output_lens": [256, 256], '
    '"ttfts": [0.2, 0.3], "itls": [[0.02, 0.03], [0.02]], '
    '"mean_ttft_ms": 212.4, "median_ttft_ms": 188.0, "std_ttft_ms": 64.3, "p99_ttft_ms": 402.7, '
    '"mean_tpot_ms": 25.1, "p99.9_tpot_ms": 30.5, "mean_e2el_ms": 6655.0}'
)
VLLM_08 = (
    '{"date": "20250402-101500", "backend": "vllm", "model_id": "m", "tokenizer_id": "m", '
    '"num_prompts": 3, "request_rate": 4.0, "burstiness": 1.0, "max_concurrency": null, '
    '"duration": 12.0, "completed": 3, "total_input_tokens": 300, "total_output_tokens": 30, '
    '"request_throughput": 0.25, "request_goodput:": null, "output_throughput": 2.5, '
    '"total_token_throughput": 27.5, "mean_ttft_ms": 100.0}'
)
SGLANG_LINE = (
    '{"tag": null, "backend": "sglang", "dataset_name": "random", "request_rate": Infinity, '
    '"max_concurrency": 64, "random_input_len": 2048, "random_output_len": 512, '
    '"duration": 58.2, "completed": 512, "total_input_tokens": 1048576, '
    '"total_output_tokens": 262144, "mean_e2e_latency_ms": 7210.5, "p99_e2e_latency_ms": 8111.6, '
    '"mean_ttft_ms": 655.0, "p90_ttft_ms": 930.8, "mean_itl_ms": 12.8, "accept_length": null}'
)
SGLANG_OLD = (  # 0.2.x-0.4.0: reduced key set
    '{"backend": "sglang", "dataset_name": "sharegpt", "request_rate": 8.0, '
    '"total_input_tokens": 1000, "total_output_tokens": 500, "median_ttft_ms": 90.0, '
    '"median_itl_ms": 11.0, "sharegpt_output_len": null, "random_input_len": 1024, '
    '"random_output_len": 128, "random_range_ratio": 0.0, "duration": 20.5, "completed": 100}'
)


@pytest.mark.parametrize("text, client, duration, completed, rate", [
    (VLLM_033, VLLM_CLIENT, 41.8, 2, "inf"),
    (VLLM_08, VLLM_CLIENT, 12.0, 3, 4.0),
    (SGLANG_LINE + "\n", SGLANG_CLIENT, 58.2, 512, "inf"),
    (SGLANG_OLD + "\n", SGLANG_CLIENT, 20.5, 100, 8.0),
])
def test_parse_each_client_and_era(text, client, duration, completed, rate):
    (record,) = parse(text, "r.json")
    assert record.client == client
    assert record.fields["duration"] == pytest.approx(duration)
    assert record.fields["completed"] == completed
    assert record.fields["request_rate"] == rate
    assert record.line == 1
    assert record.warnings == []            # no per-request rows: no counts to check


def test_vllm_latency_stats_and_per_request_lists():
    (r,) = parse(VLLM_033, "r.json")
    assert {k: v for k, v in r.fields.items() if k.endswith("_ttft_ms")} == {
        "mean_ttft_ms": 212.4, "median_ttft_ms": 188.0, "std_ttft_ms": 64.3,
        "p99_ttft_ms": 402.7}
    # p99.9 is not a contract statistic; the mean is kept
    assert r.fields["mean_tpot_ms"] == 25.1 and "p99.9_tpot_ms" not in r.fields
    assert r.fields["mean_e2el_ms"] == 6655.0
    # itls [[0.02, 0.03], [0.02]] s, each gap × 1000 once
    assert [q["itl_ms"] for q in r.requests] == [[20.0, 30.0], [20.0]]
    assert [q["ttft_ms"] for q in r.requests] == [200.0, 300.0]
    assert r.engine is None                   # backend "openai" names no engine


def test_sglang_spells_e2e_latency_its_own_way():
    (r,) = parse(SGLANG_LINE, "r.jsonl")
    assert (r.fields["mean_e2el_ms"], r.fields["p99_e2el_ms"]) == (7210.5, 8111.6)
    assert r.sources["mean_e2el_ms"] == "mean_e2e_latency_ms"
    assert (r.fields["mean_ttft_ms"], r.fields["p90_ttft_ms"]) == (655.0, 930.8)


def test_jsonl_with_several_records_keeps_line_numbers():
    text = SGLANG_OLD + "\n\n" + SGLANG_LINE + "\n"
    records = parse(text, "r.jsonl")
    assert [r.line for r in records] == [1, 3]
    assert [r.fields["duration"] for r in records] == [20.5, 58.2]


def test_a_broken_line_among_good_records_is_a_warning():
    text = SGLANG_LINE + "\n" + '{"duration": 1,' + "\n" + SGLANG_LINE + "\n"
    records = parse(text, "r.jsonl")
    assert [r.line for r in records] == [1, 3]
    assert [w for r in records for w in r.warnings] == [
        "r.jsonl:2: the JSON stops before the record is complete (after 15 characters; "
        "the file looks cut off); this line is skipped, the file's other records are used"]


def test_vllm_append_result_file_is_read_as_lines():
    records = parse(VLLM_08 + "\n" + VLLM_033, "r.json")
    assert [(r.line, r.fields["duration"]) for r in records] == [(1, 12.0), (2, 41.8)]


@pytest.mark.parametrize("text, message, line", [
    ("", "empty file", None),
    ("   \n", "empty file", None),
    ('{"a": 1}', "not a benchmark result", 1),
    ("[1, 2]", "not a benchmark result", 1),
    # two lines, one of them good: read as one document cut after its first line
    (SGLANG_LINE + "\n" + '{"duration": 1,', "not valid JSON at column 1", 2),
    (SGLANG_LINE + "\n" + '{"duration": 1,]', "not valid JSON at column 1", 2),
    (SGLANG_LINE.replace('"duration": 58.2', '"duration": "fast"'),
     "'duration' must be a number", 1),
    (SGLANG_LINE.replace('"duration": 58.2', '"duration": 0'), "'duration' must be > 0", 1),
    ("\x89PNG\r\n\x1a\n\x00\x00", "binary content", None),
])
def test_bad_input_names_file_and_line(text, message, line):
    with pytest.raises(ParseError, match=message) as info:
        parse(text, "raw/x.json")
    assert info.value.path == "raw/x.json"
    assert info.value.line == line
    assert "\n" not in info.value.one_line()
