"""The generator: seeded, byte-reproducible, and the reference run is its output."""

import hashlib
import json

import pytest

from benchreport.synth import generate

from .conftest import takes_seconds


def _digests(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
@takes_seconds
def regenerated(tmp_path_factory, request):
    project = request.config.rootpath
    out = tmp_path_factory.mktemp("raw")
    generate(project / "data/2024-b300/scenario.yaml", out)
    return out


def test_reference_raw_files_are_the_generators_output_byte_for_byte(regenerated, project):
    committed = _digests(project / "data/2024-b300/raw")
    assert set(committed) == {
        "sglang/launch.yaml", "sglang/server.log", "sglang/sglang_1120_10_200000_3072.jsonl",
        "sglang/sglang_1120_10_65536_3072.jsonl", "vllm/launch.yaml", "vllm/server.log",
        "vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json",
        "vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-102135.json"}
    assert committed == _digests(regenerated)


def test_reference_durations_match_the_published_ones(project):
    """Read with plain json, independent of the package's parsers."""
    raw = project / "data/2024-b300/raw"
    got = {}
    for path in raw.glob("vllm/*.json"):
        d = json.loads(path.read_text())
        got[("vllm", d["total_input_tokens"] // d["completed"])] = d["duration"]
    for path in raw.glob("sglang/*.jsonl"):
        d = json.loads(path.read_text().splitlines()[0])   # Python's json reads Infinity
        got[("sglang", d["random_input_len"])] = d["duration"]
    assert got == {("vllm", 65536): 100.5, ("sglang", 65536): 150.8,
                   ("vllm", 200000): 295.2, ("sglang", 200000): 225.3}


def test_reference_results_are_consistent_with_their_workload(project):
    for path in sorted((project / "data/2024-b300/raw").glob("*/*.json*")):
        d = json.loads(path.read_text().splitlines()[0])
        assert d["completed"] == 10
        assert d["output_lens"] == [3072] * 10
        assert len(d["ttfts"]) == len(d["itls"]) == 10
        latencies = [t + sum(itl) for t, itl in zip(d["ttfts"], d["itls"], strict=True)]
        assert max(latencies) < d["duration"] <= max(latencies) + 0.8
        assert d["total_output_tokens"] == 30720
        if path.suffix == ".json":
            # vLLM's latency ends at the last streamed chunk (most_recent_timestamp - st)
            assert d["latencies"] == pytest.approx(latencies, abs=1e-4)
        else:
            # sglang.bench_serving: the first chunk (the prefill's one token) gives TTFT,
            # every later token one ITL entry (a k-token chunk's gap split k ways)
            assert [len(x) for x in d["itls"]] == [n - 1 for n in d["output_lens"]]


@pytest.mark.slow
def test_synth_command_writes_the_same_bytes(tmp_path, project, regenerated):
    from benchreport.cli import main

    assert main(["synth", str(project / "data/2024-b300/scenario.yaml"), str(tmp_path)]) == 0
    assert _digests(tmp_path) == _digests(regenerated)


@pytest.mark.slow
def test_the_what_if_run_is_its_scenario_and_shares_sglang_bytes(project, tmp_path):
    """data/2024-b300-vllm-whatif is what its scenario generates, byte for byte; its SGLang
    files are the reference run's, so the one stated change is vLLM's."""
    out = tmp_path / "raw"
    generate(project / "data/2024-b300-vllm-whatif/scenario.yaml", out)
    committed = _digests(project / "data/2024-b300-vllm-whatif/raw")
    assert committed == _digests(out)
    reference = _digests(project / "data/2024-b300/raw")
    assert {k: v for k, v in committed.items() if k.startswith("sglang/")} == \
        {k: v for k, v in reference.items() if k.startswith("sglang/")}
    assert {k: v for k, v in committed.items() if k.startswith("vllm/")} != \
        {k: v for k, v in reference.items() if k.startswith("vllm/")}
    durations = sorted(json.loads(p.read_text())["duration"]
                       for p in (project / "data/2024-b300-vllm-whatif/raw/vllm").glob("*.json"))
    assert durations == [94.0, 276.0]
    run_yaml = (project / "data/2024-b300-vllm-whatif/run.yaml").read_text()
    assert "This run was not measured." in run_yaml and "측정한 것이 아닙니다" in run_yaml
