"""The client's result file and the engine's log must agree where both see the benchmark;
a disagreement warns, becomes a caveat, and withholds the explanation resting on it."""

from __future__ import annotations

import json
import shutil

import pytest

from benchreport.analyses.consistency import duration_checks
from benchreport.cli import main
from benchreport.core import ids
from benchreport.core.tables import load_ingested
from benchreport.core.verdicts import CONSISTENT, INCONSISTENT
from benchreport.pipeline.run import build

from .conftest import ROOT

VLLM_64K = "raw/vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json"


@pytest.fixture(scope="module")
def perturbed(tmp_path_factory):
    """The reference run with only vLLM's 64K duration changed from 100.5 s to 200.0 s."""
    root = tmp_path_factory.mktemp("perturbed")
    data = root / "data" / "2024-b300"
    shutil.copytree(ROOT / "data" / "2024-b300", data)
    path = data / VLLM_64K
    text = path.read_text()
    assert text.count('"duration": 100.5') == 1
    path.write_text(text.replace('"duration": 100.5', '"duration": 200.0'))
    assert main(["checksums", "2024-b300", "--data-root", str(root / "data"), "--write"]) == 0
    return root


def test_check_names_the_file_and_both_values(perturbed, capsys):
    assert main(["check", "2024-b300", "--data-root", str(perturbed / "data")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"warning: data/2024-b300/{VLLM_64K}:1: the client's duration (200.0 s) disagrees "
        "with vllm's log data/2024-b300/raw/vllm/server.log (work logged in lines 43–95: "
        "99.0 s); they may differ by 24.0 s",
        # the file's own latencies say the same: every request was sent at the start
        f"warning: data/2024-b300/{VLLM_64K}:1: the duration (200.0 s) does not fit the "
        "file's own latencies: every request was sent at the start and the longest took "
        "99.9 s; they may differ by 4.0 s"]


def test_the_reference_run_is_consistent_and_check_stays_silent(reference_build, capsys):
    assert main(["check", "2024-b300", "--data-root", str(ROOT / "data")]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "0 warnings" in captured.out
    checks = duration_checks(reference_build, load_ingested(reference_build))
    # client duration against the log's span of work, per engine and input length
    assert sorted((c.engine, c.workload, c.client, c.server, c.status) for c in checks
                  if c.name == "duration") == [
        ("sglang", "200k", 225.3, 222.0, CONSISTENT), ("sglang", "64k", 150.8, 148.0, CONSISTENT),
        ("vllm", "200k", 295.2, 299.0, CONSISTENT), ("vllm", "64k", 100.5, 99.0, CONSISTENT)]
    figures = json.loads(reference_build.paths.figures_json.read_text())["figures"]
    verdicts = {f["id"]: f["value"] for f in figures
                if f["id"].startswith("consistency.") and f["unit"] == "verdict"}
    # duration against the log for both engines; against the file's own latencies for vLLM,
    # whose files keep them (SGLang's keep no end-to-end latency per request)
    assert verdicts == {**{ids.consistency(w, e, "duration"): CONSISTENT
                           for w in ("64k", "200k") for e in ("vllm", "sglang")},
                        **{ids.consistency(w, "vllm", "latency_span"): CONSISTENT
                           for w in ("64k", "200k")}}
    html = reference_build.paths.html("en").read_text()
    # no sentence of a duration the log contradicts (the claim check's own count of claims
    # the data contradicts is another matter)
    assert "disagree" not in html and "which its server log contradicts" not in html


@pytest.mark.slow
def test_a_disagreeing_duration_is_a_caveat_and_withholds_the_explanation(perturbed):
    run = build("2024-b300", data_root=perturbed / "data", report_root=perturbed / "report",
                project=ROOT, out=lambda line: None, pdf=False)     # the pages say it
    figures = {f["id"]: f for f in json.loads(run.paths.figures_json.read_text())["figures"]}
    assert figures[ids.consistency("64k", "vllm", "duration")]["value"] == INCONSISTENT
    assert figures[ids.consistency("64k", "vllm", "duration", "tolerance")]["value"] == \
        pytest.approx(2 * 10 + 2 + 0.02 * 99.0)       # 2% of the shorter of the two
    assert figures[ids.e2e("64k", None, "gap.where")]["value"] == INCONSISTENT
    # the other workload is untouched: its split is still stated
    assert figures[ids.e2e("200k", None, "gap.where")]["value"] != INCONSISTENT
    en = run.paths.html("en").read_text()
    ko = run.paths.html("ko").read_text()
    # no explanation of the 64K gap: neither "in the decode tail" nor "before the first tokens"
    assert "At 64K, vLLM&#39;s duration as its benchmark client wrote it" in en
    assert "where the gap accrued is not stated" in en
    assert "At 64K, SGLang finished" not in en and "At 64K, vLLM finished" not in en
    assert "This comparison rests on vLLM" in en
    assert "Client and server log disagree: vLLM, 64K" in en
    assert "The result file does not hold together: vLLM, 64K" in en
    # the conclusion qualifies 64K and draws no general conclusion from it
    assert "This rests on vLLM&#39;s duration, which the run&#39;s other sources contradict" in en
    assert "faster at every measured input length" not in en
    # the published claims that rest on the 64K durations are not judged on them
    claims = {c["claim"]: c for c in json.loads(run.paths.claims_json.read_text())}
    assert claims["e2e-64k-speedup"]["verdict"] == "not derivable"
    assert claims["e2e-64k-speedup"]["reason"] == "sources_disagree"
    assert claims["e2e-200k-speedup"]["verdict"] == "confirmed"
    assert "격차가 어디서 생겼는지는 로그와 어긋나는 수치를 써야 하므로 밝히지 않습니다" in ko
    assert "클라이언트와 서버 로그의 불일치: vLLM, 64K" in ko
