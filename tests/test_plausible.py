"""Values no benchmark can produce are left out with a warning naming the file and key
(issue 33, finding 7): they used to be shown as measured (a p99 E2E of 1.0 ms against a
median of 136 s, infinite durations, negative latencies)."""

from __future__ import annotations

import json

import pytest

from benchreport.ingest.clients import read_points

from .conftest import ROOT

VLLM = ROOT / "data/2024-b300/raw/vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json"


def _point(**changes):
    doc = json.loads(VLLM.read_text())
    doc.update(changes)
    (point,) = read_points(json.dumps(doc).encode(), "r/vllm.json")
    return point


def test_a_real_file_gets_no_warning():
    assert _point().warnings == []


def test_percentiles_out_of_order_are_left_out():
    p = _point(p99_e2el_ms=1.0)
    assert p.warnings == ["r/vllm.json:1: the p99 of E2EL (1.0 ms) is below its p90 "
                          "(99850.8808 ms); percentiles cannot be out of order, so the file's "
                          "E2EL percentiles are left out"]
    assert {s: p.fields.get(f"{s}_e2el_ms") for s in ("median", "p90", "p99")} == \
        dict.fromkeys(("median", "p90", "p99"))
    assert p.fields["mean_e2el_ms"] == pytest.approx(99713.9905)   # the mean is not a percentile
    assert p.fields["p99_ttft_ms"] is not None                     # other metrics stay


@pytest.mark.parametrize("key, value, problem", [
    ("duration", float("inf"), "inf (infinite)"),
    ("mean_itl_ms", -3, "-3.0 (negative)"),
    ("std_ttft_ms", float("-inf"), "-inf (infinite)"),
])
def test_impossible_values_are_left_out(key, value, problem):
    p = _point(**{key: value})
    assert p.warnings == [f"r/vllm.json:1: {key} is {problem}, which no benchmark measures; "
                          "left out"]
    assert key not in p.fields


def test_an_unbounded_request_rate_is_not_impossible():
    p = _point(request_rate=float("inf"))
    assert p.warnings == [] and p.load["request_rate"] == "inf"


def test_more_completed_than_asked_is_warned_and_kept():
    p = _point(completed=15)
    assert "r/vllm.json:1: completed is 15, more than the 10 requests the client was asked " \
           "to send" in p.warnings
    assert p.fields["completed"] == 15


def test_impossible_per_request_values_are_left_out():
    doc = json.loads(VLLM.read_text())
    doc["ttfts"][2] = float("nan")
    doc["e2els"] = doc.get("e2els")
    doc["output_lens"][3] = -7
    (p,) = read_points(json.dumps(doc).encode(), "r/vllm.json")
    assert "r/vllm.json:1: 2 per-request values not a finite, non-negative number (NaN, inf " \
           "or negative); left out" in p.warnings
    assert p.requests[2]["ttft_ms"] is None and p.requests[3]["output_tokens"] is None


def test_a_duplicate_key_is_named():
    text = VLLM.read_text().replace('"burstiness": 1.0', '"burstiness": 1.0, "burstiness": 2.0')
    (p,) = read_points(text.encode(), "r/vllm.json")
    assert p.warnings == ["r/vllm.json: key 'burstiness' appears twice in one object; the "
                          "last value is the one read, as JSON readers do"]


def test_a_negative_count_stops_as_it_did():
    from benchreport.core.errors import ParseError

    with pytest.raises(ParseError, match="'output_throughput' must not be negative"):
        _point(output_throughput=-1.5)
