"""Generated runs with known truth: other sizes, concurrency, DCP on/off, engines swapped,
and a run with no steady phase. The truth comes from the simulation; the checks read the
written logs and results back with independent code."""

import json
from pathlib import Path

import pytest
import yaml

from benchreport.synth import make_run

from .rawcheck import sglang_runs, sglang_steady, vllm_runs, vllm_steady

SMALL = Path(__file__).parent / "fixtures" / "scenarios" / "small.yaml"


def variant(tmp_path: Path, name: str, edit) -> Path:
    doc = yaml.safe_load(SMALL.read_text())
    edit(doc)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def truth_steady(sim, n):
    return [w.gen_tps for w in sim.fitted.windows if w.steady(n)]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    run = tmp_path_factory.mktemp("data") / "small"
    return run, make_run(SMALL, run)


def test_small_run_has_run_yaml_and_raw_files(small):
    run, sims = small
    assert (run / "run.yaml").is_file()
    names = sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file())
    assert len(names) == 1 + 2 * (2 + 2)      # run.yaml; per engine 2 results, log, launch
    assert {(s.engine.id, s.spec.workload) for s in sims} == {
        ("alpha", "8k"), ("alpha", "32k"), ("beta", "8k"), ("beta", "32k")}


def test_logged_steady_decode_equals_the_truth_and_the_targets(small):
    run, sims = small
    by = {(s.engine.id, s.spec.workload): s for s in sims}
    alpha = vllm_runs(run / "raw/alpha/server.log")
    beta = sglang_runs(run / "raw/beta/server.log", prompts=4)
    for i, w in enumerate(("8k", "32k")):
        assert vllm_steady(alpha[i], 4) == pytest.approx(truth_steady(by["alpha", w], 4), abs=0.051)
        assert sglang_steady(beta[i], 4) == pytest.approx(truth_steady(by["beta", w], 4),
                                                          abs=0.0051)
    assert (min(vllm_steady(alpha[1], 4)), max(vllm_steady(alpha[1], 4))) == (380.0, 430.0)
    s = sglang_steady(beta[0], 4)
    assert (min(s), max(s), round(sum(s) / len(s))) == (460.0, 520.0, 480)


def test_results_hold_the_true_latencies(small):
    run, sims = small
    sim = next(s for s in sims if s.engine.id == "beta" and s.spec.workload == "32k")
    (path,) = (run / "raw/beta").glob("*_32768_1024.jsonl")
    d = json.loads(path.read_text())
    assert d["ttfts"] == [round(r.first_token - r.sent, 6) for r in sim.timeline.requests]
    assert d["duration"] == pytest.approx(sim.fitted.duration, abs=1e-6)
    assert d["output_lens"] == [1024] * 4


def test_dcp_off_makes_long_context_decode_slower(tmp_path):
    def no_targets(doc, dcp):
        beta = doc["engines"]["beta"]
        beta["dcp"] = dcp
        for r in beta["runs"].values():
            r["targets"] = {}
        return doc

    on = make_run(variant(tmp_path, "on", lambda d: no_targets(d, 4)), tmp_path / "on")
    off = make_run(variant(tmp_path, "off", lambda d: no_targets(d, 1)), tmp_path / "off")

    def mean_32k(sims):
        sim = next(s for s in sims if s.engine.id == "beta" and s.spec.workload == "32k")
        values = truth_steady(sim, 4)
        return sum(values) / len(values)

    # step time 9 ms + 120 ns x KV read: 32K x 4 requests read 4x slower without DCP=4
    assert mean_32k(on) / mean_32k(off) == pytest.approx((9 + 16.1) / (9 + 4.0), rel=0.05)


def test_engines_swapped_swap_the_winner(tmp_path):
    def swap(doc):
        e = doc["engines"]
        e["alpha"], e["beta"] = e["beta"], e["alpha"]
        for spec in e.values():
            for r in spec["runs"].values():
                r["targets"] = {}

    plain = make_run(variant(tmp_path, "plain", lambda d: swap(d) or swap(d)), tmp_path / "p")
    swapped = make_run(variant(tmp_path, "swapped", swap), tmp_path / "s")

    def winner(sims, w):
        return min((s for s in sims if s.spec.workload == w), key=lambda s: s.fitted.duration)

    for w in ("8k", "32k"):
        a, b = winner(plain, w), winner(swapped, w)
        assert a.engine.id != b.engine.id
        assert a.fitted.duration == pytest.approx(b.fitted.duration, rel=0.05)  # other seeds


def test_lower_concurrency_sends_requests_in_waves(tmp_path):
    def waves(doc):
        doc["concurrency"] = 2
        for spec in doc["engines"].values():
            for r in spec["runs"].values():
                r["targets"] = {}

    sims = make_run(variant(tmp_path, "c2", waves), tmp_path / "c2")
    sim = next(s for s in sims if s.engine.id == "alpha" and s.spec.workload == "8k")
    reqs = sim.timeline.requests
    assert [r.sent for r in reqs[:2]] == [sim.timeline.start] * 2
    assert sorted(r.sent for r in reqs[2:]) == sorted(r.finish for r in reqs[:2])
    assert all(w.admitted <= 2 for w in sim.fitted.windows)


def test_requests_spread_out_leave_no_steady_phase(tmp_path):
    def spread(doc):
        r = doc["engines"]["alpha"]["runs"]["8k"]
        r["targets"] = {}
        r["knob_value"] = 8.0          # requests reach the engine 8 s apart

    sims = make_run(variant(tmp_path, "spread", spread), tmp_path / "spread")
    sim = next(s for s in sims if s.engine.id == "alpha" and s.spec.workload == "8k")
    assert truth_steady(sim, 4) == []
    assert vllm_steady(vllm_runs(tmp_path / "spread/raw/alpha/server.log")[0], 4) == []
