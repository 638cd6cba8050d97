"""`benchreport parse FILE --json` on real-shaped files and on files that are not logs."""

import json
import subprocess
import sys

import pytest

RAW = "data/2024-b300/raw"


def parse(project, path, *extra):
    return subprocess.run([sys.executable, "-m", "benchreport", "parse", str(path), "--json",
                           *extra], capture_output=True, text=True, cwd=project)


@pytest.mark.parametrize("name, engine, counts", [
    ("vllm/server.log", "vllm", {"engine_stats": 44, "spec_decode": 41, "memory_event": 32,
                                 "jit_event": 8, "server_args": 1, "version": 2}),
    ("sglang/server.log", "sglang", {"prefill_batch": 82, "decode_batch": 171,
                                     "server_args": 1, "spec_mode": 1}),
    ("sglang/sglang_1120_10_65536_3072.jsonl", "sglang", {"bench_result": 1}),
    ("vllm/launch.yaml", "vllm", {"launch_config": 1}),
])
def test_reference_files_parse_completely(project, name, engine, counts):
    out = parse(project, f"{RAW}/{name}")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) == {"file", "engine", "lines", "unrecognised", "counts", "records"}
    assert doc["engine"] == engine and doc["unrecognised"] == 0
    for kind, n in counts.items():
        assert doc["counts"][kind] == n, kind
    assert all({"kind", "line"} <= set(r) for r in doc["records"])


def test_records_use_the_documented_field_names(project):
    doc = json.loads(parse(project, f"{RAW}/vllm/server.log").stdout)
    stats = next(r for r in doc["records"] if r["kind"] == "engine_stats")
    assert {"prompt_tps", "gen_tps", "running", "waiting", "ts", "line"} <= set(stats)
    spec = next(r for r in doc["records"] if r["kind"] == "spec_decode")
    assert {"accepted", "drafted", "mean_acceptance_length"} <= set(spec)
    doc = json.loads(parse(project, f"{RAW}/sglang/server.log").stdout)
    pre = next(r for r in doc["records"] if r["kind"] == "prefill_batch")
    assert {"new_seq", "new_token", "cached_token", "running_req", "queue_req",
            "input_tps"} <= set(pre)
    dec = next(r for r in doc["records"] if r["kind"] == "decode_batch")
    assert {"gen_tps", "accept_len", "running_req"} <= set(dec)
    res = json.loads(parse(project, f"{RAW}/sglang/sglang_1120_10_65536_3072.jsonl").stdout)
    assert res["records"][0]["duration"] == 150.8 and res["records"][0]["completed"] == 10


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary content"),
    (b"", "empty file"),
    (b'{"model": "x", "layers": 61}\n', "JSON is not a benchmark result"),
])
def test_non_logs_print_one_line_and_fail(project, tmp_path, content, message):
    path = tmp_path / "input.bin"
    path.write_bytes(content)
    out = parse(project, path)
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0]


def test_engine_can_be_forced(project):
    doc = json.loads(parse(project, f"{RAW}/sglang/server.log", "--engine", "sglang").stdout)
    assert doc["engine"] == "sglang" and doc["counts"]["decode_batch"] == 171
