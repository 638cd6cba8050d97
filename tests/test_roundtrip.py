"""Round trip: what the generator wrote is what the parsers read, over seeds and scenarios."""

from pathlib import Path

import pytest
import yaml

from benchreport.ingest.parsers.logscan import Summary, scan
from benchreport.synth import make_run
from benchreport.synth.windows import decode_log_windows

SMALL = Path(__file__).parent / "fixtures" / "scenarios" / "small.yaml"


def parsed(path):
    summary = Summary(file=str(path), engine="auto")
    with open(path, "rb") as fp:
        recs = list(scan(fp, str(path), "auto", 2026, summary))
    return recs, summary


@pytest.mark.parametrize("seed, concurrency", [(1, 4), (2, 4), (3, 2), (11, 3)])
def test_parsed_logs_equal_the_simulated_truth(tmp_path, seed, concurrency):
    doc = yaml.safe_load(SMALL.read_text())
    doc["seed"], doc["concurrency"] = seed, concurrency
    for spec in doc["engines"].values():
        for r in spec["runs"].values():
            r["targets"] = {}
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(doc))
    sims = make_run(scenario, tmp_path / "run")

    recs, summary = parsed(tmp_path / "run/raw/alpha/server.log")
    assert summary.unrecognised == 0 and summary.warnings == []
    stats = [r for r in recs if r["kind"] == "engine_stats"]
    truth = []
    for sim in sorted((s for s in sims if s.engine.id == "alpha"), key=lambda s: s.spec.start):
        seen_idle = False
        for w in sim.fitted.windows:
            idle = w.prompt_tokens == 0 and w.gen_tokens == 0
            if idle and seen_idle:
                continue
            seen_idle = idle
            truth.append((round(w.prompt_tps, 1), round(w.gen_tps, 1), w.admitted, w.waiting))
    assert [(r["prompt_tps"], r["gen_tps"], r["running"], r["waiting"]) for r in stats] == truth
    spec = [r for r in recs if r["kind"] == "spec_decode"]
    assert sum(r["drafted"] for r in spec) == sum(
        len(s.accepted_each) * 3 for sim in sims if sim.engine.id == "alpha"
        for s in sim.timeline.steps)

    recs, summary = parsed(tmp_path / "run/raw/beta/server.log")
    assert summary.unrecognised == 0
    prefill = [r for r in recs if r["kind"] == "prefill_batch"]
    decode = [r for r in recs if r["kind"] == "decode_batch"]
    beta = sorted((s for s in sims if s.engine.id == "beta"), key=lambda s: s.spec.start)
    assert [r["new_token"] for r in prefill] == [
        sum(g.tokens for g in st.prefill) for sim in beta for st in sim.timeline.steps
        if st.prefill]
    n = min(concurrency, 4)
    truth_decode = [(round(w.gen_tps, 2), w.running) for sim in beta
                    for w in decode_log_windows(sim.timeline, 10, n)]
    assert [(r["gen_tps"], r["running_req"]) for r in decode] == truth_decode


def test_reference_logs_round_trip(project):
    """The reference run's logs hold exactly the windows its scenario simulated."""
    recs, summary = parsed(project / "data/2024-b300/raw/vllm/server.log")
    assert summary.unrecognised == 0
    assert sum(1 for r in recs if r["kind"] == "memory_event") == 32
    # in order to the second (FlashInfer's lines keep milliseconds, vLLM's own do not)
    stamps = [r["ts"][:19] for r in recs if r["ts"]]
    assert stamps == sorted(stamps)
