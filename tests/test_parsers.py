import io
import math

import pytest

from benchreport.core.errors import ParseError
from benchreport.ingest.parsers import SGLANG_CLIENT, VLLM_CLIENT, parse_results

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
    (VLLM_033, VLLM_CLIENT, 41.8, 2, math.inf),
    (VLLM_08, VLLM_CLIENT, 12.0, 3, 4.0),
    (SGLANG_LINE + "\n", SGLANG_CLIENT, 58.2, 512, math.inf),
    (SGLANG_OLD + "\n", SGLANG_CLIENT, 20.5, 100, 8.0),
])
def test_parse_each_client_and_era(text, client, duration, completed, rate):
    (record,) = parse_results(io.StringIO(text), "r.json")
    assert record.client == client
    assert record.duration == pytest.approx(duration)
    assert record.completed == completed
    assert record.request_rate == rate
    assert record.line == 1


def test_vllm_latency_stats_and_per_request_lists():
    (r,) = parse_results(io.StringIO(VLLM_033), "r.json")
    assert r.stats["ttft"] == {"mean": 212.4, "median": 188.0, "std": 64.3, "p99": 402.7}
    assert r.stats["tpot"] == {"mean": 25.1, "p99.9": 30.5}
    assert r.stats["e2el"] == {"mean": 6655.0}
    assert r.per_request["itls"] == [[0.02, 0.03], [0.02]]
    assert r.backend == "openai"


def test_sglang_spells_e2e_latency_its_own_way():
    (r,) = parse_results(io.StringIO(SGLANG_LINE), "r.jsonl")
    assert r.stats["e2el"] == {"mean": 7210.5, "p99": 8111.6}
    assert r.stats["ttft"] == {"mean": 655.0, "p90": 930.8}


def test_jsonl_with_several_records_keeps_line_numbers():
    text = SGLANG_OLD + "\n\n" + SGLANG_LINE + "\n"
    records = parse_results(io.StringIO(text), "r.jsonl")
    assert [r.line for r in records] == [1, 3]
    assert [r.duration for r in records] == [20.5, 58.2]


def test_a_broken_line_among_good_records_is_a_warning_when_asked():
    notes = []
    text = SGLANG_LINE + "\n" + '{"duration": 1,' + "\n" + SGLANG_LINE + "\n"
    records = parse_results(io.StringIO(text), "r.jsonl", warn=lambda n, m: notes.append((n, m)))
    assert [r.line for r in records] == [1, 3]
    assert notes == [(2, "the JSON stops before the record is complete (after 15 characters; "
                         "the file looks cut off); this line is skipped, the file's other "
                         "records are used")]


def test_vllm_append_result_file_is_read_as_lines():
    records = parse_results(io.StringIO(VLLM_08 + "\n" + VLLM_033), "r.json")
    assert [(r.line, r.duration) for r in records] == [(1, 12.0), (2, 41.8)]


@pytest.mark.parametrize("text, message, line", [
    ("", "empty file", None),
    ("   \n", "empty file", None),
    ('{"a": 1}', "not a benchmark result", 1),
    ("[1, 2]", "expected a JSON object", 1),
    (SGLANG_LINE + "\n" + '{"duration": 1,', "the JSON stops before the record is complete", 2),
    (SGLANG_LINE + "\n" + '{"duration": 1,]', "not valid JSON at column 16", 2),
    (SGLANG_LINE.replace('"duration": 58.2', '"duration": "fast"'), "'duration' must be a number", 1),
    (SGLANG_LINE.replace('"duration": 58.2', '"duration": 0'), "'duration' must be > 0", 1),
    ("\x89PNG\r\n\x1a\n\x00\x00", "binary content", None),
])
def test_bad_input_names_file_and_line(text, message, line):
    with pytest.raises(ParseError, match=message) as info:
        parse_results(io.StringIO(text), "raw/x.json")
    assert info.value.path == "raw/x.json"
    assert info.value.line == line
    assert "\n" not in info.value.one_line()
