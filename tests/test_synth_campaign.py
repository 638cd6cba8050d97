"""A generated campaign with known truth, read back through `load_points`: every point lands
on its engine, load and repeat, with the figures, per-request rows and definitions the
truth says."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from benchreport.core.errors import ReportError
from benchreport.core.runmeta import load_run
from benchreport.ingest.clients import read_points
from benchreport.ingest.points import load_points
from benchreport.synth.campaign import (
    PRESETS,
    EngineModel,
    expected_point,
    noiseless,
    simulate,
    write_campaign,
)

SMALL = {"engines": ("alpha", "beta"), "loads": (1, 4, 16), "repeats": 2, "requests": 20}
VLLM_CODES = {"ttft": "ttft.first-token", "tpot": "tpot.excl-first", "itl": "itl.per-chunk",
              "e2el": "e2el.request"}


def _campaign(root: Path, run_id: str = "camp", **kw):
    args = {**SMALL, **kw}
    truth = write_campaign(root / "data" / run_id, **args)
    return truth, load_run(run_id, root / "data", root / "report")


@pytest.fixture(scope="module")
def vllm_campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("campaign")
    truth, run = _campaign(root, failures=1)
    notes: list[str] = []
    return truth, load_points(run, notes), notes


def test_every_point_is_matched_to_its_engine_load_and_repeat(vllm_campaign):
    truth, entries, notes = vllm_campaign
    assert notes == []
    assert len(entries) == 2 * 3 * 2
    assert [(e.engine, e.load.id, e.repeat) for e in entries] == [
        (engine, load, r) for engine in ("alpha", "beta") for load in ("c1", "c4", "c16")
        for r in (1, 2)]
    for e in entries:
        t = truth.points[(e.engine, e.load.id, e.repeat)]
        assert (e.workload, e.variant, e.load.max_concurrency) == ("1k", "", t.concurrency)
        assert e.file.rel.endswith(t.files["vllm"]) and e.point.where == t.where["vllm"]
        assert e.point.client == "vllm-bench-serve"


def test_each_points_figures_rows_and_definitions_equal_the_truth(vllm_campaign):
    truth, entries, _ = vllm_campaign
    for e in entries:
        t = truth.points[(e.engine, e.load.id, e.repeat)]
        assert e.point.fields == t.fields["vllm"], e.id
        assert e.point.requests == t.rows("vllm"), e.id
        assert e.point.definitions == VLLM_CODES == t.definitions("vllm")
        assert (e.point.fields["completed"], e.point.fields["failed"]) == (19, 1)
        assert sum(1 for r in e.point.requests if r["error"]) == 1


def test_the_figures_are_vllms_statistics_of_the_true_requests(vllm_campaign):
    """Recomputed here from the truth's arrays, the way vLLM's calculate_metrics does."""
    truth, entries, _ = vllm_campaign
    for e in entries:
        q = truth.points[(e.engine, e.load.id, e.repeat)].requests
        ok = [i for i in range(q.n) if not q.errors[i]]
        ttfts = [float(q.ttfts[i]) for i in ok]
        lats = [float(q.latencies[i]) for i in ok]
        outs = [int(q.output_lens[i]) for i in ok]
        itls = q.itls()
        pooled = [x for i in ok for x in itls[i]]
        tpots = [(la - tt) / (n - 1) for la, tt, n in zip(lats, ttfts, outs, strict=True)]
        f = e.point.fields
        assert f["completed"] == len(ok) and f["failed"] == q.n - len(ok)
        assert f["median_ttft_ms"] == np.median(ttfts) * 1000
        assert f["p99_ttft_ms"] == np.percentile(ttfts, 99) * 1000
        assert f["p99_itl_ms"] == np.percentile(pooled, 99) * 1000
        assert f["mean_itl_ms"] == np.mean(pooled) * 1000
        assert f["mean_tpot_ms"] == np.mean(tpots) * 1000
        assert f["median_e2el_ms"] == np.median(lats) * 1000
        assert f["output_throughput"] == sum(outs) / q.duration
        assert f["total_input_tokens"] == int(q.input_lens[ok].sum())
        # the file's per-request lists are the truth's arrays, to the bit
        raw = json.loads(e.file.path.read_text())
        assert raw["ttfts"] == q.ttfts.tolist() and raw["itls"] == itls
        assert raw["latencies"] == q.latencies.tolist()


def test_the_latency_model_shows_in_the_figures(vllm_campaign):
    truth, _, _ = vllm_campaign
    f = {k: t.fields["vllm"] for k, t in truth.points.items()}
    for engine in ("alpha", "beta"):
        # ITL and TTFT grow with concurrency; repeats differ
        assert f[(engine, "c1", 1)]["median_itl_ms"] < f[(engine, "c16", 1)]["median_itl_ms"]
        assert f[(engine, "c1", 1)]["p99_ttft_ms"] < f[(engine, "c16", 1)]["p99_ttft_ms"]
        assert f[(engine, "c4", 1)]["mean_ttft_ms"] != f[(engine, "c4", 2)]["mean_ttft_ms"]
    # the two engines differ: alpha decodes faster alone, beta prefills faster
    assert f[("alpha", "c1", 1)]["median_itl_ms"] < f[("beta", "c1", 1)]["median_itl_ms"]
    assert f[("alpha", "c1", 1)]["median_ttft_ms"] > f[("beta", "c1", 1)]["median_ttft_ms"]


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_same_arguments_write_byte_identical_files(tmp_path):
    args = {**SMALL, "requests": 5, "clients": ("vllm", "guidellm", "aiperf")}
    write_campaign(tmp_path / "a" / "camp", **args)
    write_campaign(tmp_path / "b" / "camp", **args)
    write_campaign(tmp_path / "c" / "camp", **args, seed=1)
    assert _digest(tmp_path / "a" / "camp") == _digest(tmp_path / "b" / "camp")
    assert _digest(tmp_path / "a" / "camp") != _digest(tmp_path / "c" / "camp")
    with pytest.raises(FileExistsError):
        write_campaign(tmp_path / "a" / "camp", **args)


def test_repeats_must_be_declared(tmp_path):
    truth, _ = _campaign(tmp_path)
    path = truth.out / "run.yaml"
    doc = yaml.safe_load(path.read_text())
    del doc["workloads"][0]["repeats"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    with pytest.raises(ReportError) as err:
        load_points(load_run("camp", tmp_path / "data", tmp_path / "report"))
    assert err.value.message.startswith("two results for engine")
    assert str(err.value).startswith("two results for engine 'alpha', workload '1k' and load c1")


def test_guidellm_and_aiperf_files_parse_to_the_same_loads(tmp_path, vllm_campaign):
    vtruth, ventries, _ = vllm_campaign
    truth, run = _campaign(tmp_path, clients=("guidellm", "aiperf"), failures=1)
    notes: list[str] = []
    entries = load_points(run, notes)
    assert notes == []
    assert {(e.engine, e.load.id) for e in entries} == \
        {(e.engine, e.load.id) for e in ventries}
    # each client's results of a point are a variant of their own, with the run's repeats
    assert len(entries) == 2 * 3 * 2 * 2
    assert sorted({e.variant for e in entries}) == ["client-aiperf", "client-guidellm"]
    assert max(e.repeat for e in entries) == 2
    assert entries[0].id == "alpha.1k.c1.client-aiperf.r1"
    for e in entries:
        client = e.variant.removeprefix("client-")
        t = truth.points[(e.engine, e.load.id, e.repeat)]
        assert e.point.client == client
        assert e.file.rel.endswith(t.files[client]) and e.point.where == t.where[client]
        assert e.point.fields == t.fields[client], e.id
        want = t.rows(client)       # the truth's columns (AIPerf's rows also carry itl_ms
        got = [{k: r.get(k) for k in w} for r, w in zip(e.point.requests, want, strict=True)]
        assert got == want, e.id    # and start_s, which the truth does not spell out)
        assert e.point.definitions == t.definitions(client)
        if client == "aiperf":
            assert e.also and e.also[0].endswith("profile_export.jsonl")
        # the same simulated requests as the vLLM campaign: the definitions they share agree
        v = vtruth.points[(t.engine, t.load, t.repeat)].fields["vllm"]
        assert e.point.fields["mean_ttft_ms"] == pytest.approx(v["mean_ttft_ms"], rel=1e-12)
        assert e.point.fields["completed"] == v["completed"]
        if client == "aiperf":           # AIPerf's ITL is vLLM's TPOT (first token excluded)
            assert e.point.fields["mean_itl_ms"] == pytest.approx(v["mean_tpot_ms"],
                                                                 rel=1e-12)
    assert {e.point.definitions["tpot"] for e in entries if "tpot" in e.point.definitions} \
        == {"tpot.guidellm"}
    assert {e.point.definitions["itl"] for e in entries} == {"itl.guidellm", "itl.excl-first"}


def test_read_points_reads_each_file_alone(tmp_path):
    truth = write_campaign(tmp_path / "camp", **{**SMALL, "requests": 8},
                           clients=("vllm", "guidellm", "aiperf"))
    t = truth.points[("beta", "c4", 2)]
    for client in ("vllm", "guidellm", "aiperf"):
        path = truth.out / t.files[client]
        points = read_points(path.read_bytes(), t.files[client])
        mine = [p for p in points if p.where == t.where[client]]
        assert len(mine) == 1 and mine[0].fields == t.fields[client]
    assert len(read_points((truth.out / t.files["guidellm"]).read_bytes(), "b.json")) == 3


# ------------------------------------------------------------------ load-curve campaigns

KNEE_LOADS = (2, 4, 8, 16, 32)
SHAPE = {"requests": 200, "input_tokens": 1024, "output_tokens": 128}


def _peak_decoding(q) -> int:
    """The most requests between their first and last token at once (each holds a slot)."""
    events = sorted([(float(s + t), 1) for s, t in zip(q.sent, q.ttfts, strict=True)]
                    + [(float(s + la), -1) for s, la in zip(q.sent, q.latencies, strict=True)])
    now = peak = 0
    for _, step in events:          # at a tie the finish (-1) comes first
        now += step
        peak = max(peak, now)
    return peak


def test_max_running_puts_a_knee_in_the_throughput_curve():
    gamma = PRESETS["gamma"]
    assert gamma.max_running == 8
    curve = {c: expected_point(gamma, c, **SHAPE) for c in KNEE_LOADS}
    thr = [curve[c]["output_throughput"] for c in KNEE_LOADS]
    gains = [b / a - 1 for a, b in zip(thr, thr[1:], strict=False)]
    assert all(g > 0.20 for g in gains[:2]), gains           # 2 → 4 → 8
    assert all(abs(g) < 0.03 for g in gains[2:]), gains      # 8 → 16 → 32: flat
    assert curve[32]["median_ttft_ms"] > 2 * curve[8]["median_ttft_ms"]
    assert curve[32]["median_e2el_ms"] > curve[16]["median_e2el_ms"] \
        > curve[8]["median_e2el_ms"]
    # decode steps stop slowing down at the knee: the engine runs 8 whatever the load
    assert curve[16]["median_tpot_ms"] == pytest.approx(curve[8]["median_tpot_ms"])
    assert curve[8]["interactivity"] == pytest.approx(1000 / curve[8]["median_tpot_ms"])
    # the same engine without the limit keeps gaining past 8: the knee is max_running's
    free = dataclasses.replace(gamma, max_running=None)
    assert expected_point(free, 16, **SHAPE)["output_throughput"] > 1.1 * thr[2]


def test_the_engine_never_runs_more_than_max_running():
    gamma = PRESETS["gamma"]
    for c, peak in ((4, 4), (32, 8)):
        q = simulate(gamma, c, 1, seed=0, **SHAPE)
        assert _peak_decoding(q) == peak, c
    # the free engine runs far more (its serial prefills alone keep it below 32); a limit
    # no lower than the load changes nothing
    free = dataclasses.replace(gamma, max_running=None)
    assert _peak_decoding(simulate(free, 32, 1, seed=0, **SHAPE)) > 16
    a = simulate(free, 16, 1, seed=0, failures=3, **SHAPE)
    b = simulate(dataclasses.replace(gamma, max_running=16), 16, 1, seed=0, failures=3,
                 **SHAPE)
    assert a.duration == b.duration and a.ttfts.tolist() == b.ttfts.tolist()
    assert a.latencies.tolist() == b.latencies.tolist() and a.errors == b.errors
    with pytest.raises(ValueError):
        EngineModel("x", "X", prefill_s=0.05, itl_s=0.01, itl_slope=0.03, max_running=0)


def test_the_written_figures_scatter_around_the_expected_point(tmp_path):
    truth = write_campaign(tmp_path / "knee", engines=("gamma",), loads=KNEE_LOADS,
                           repeats=1, **SHAPE)
    for c in KNEE_LOADS:
        f = truth.points[("gamma", f"c{c}", 1)].fields["vllm"]
        e = expected_point("gamma", c, **SHAPE)
        assert f["output_throughput"] == pytest.approx(e["output_throughput"], rel=0.05), c
        assert f["median_tpot_ms"] == pytest.approx(e["median_tpot_ms"], rel=0.05), c
    assert truth.points[("gamma", "c32", 1)].fields["vllm"]["median_ttft_ms"] > \
        2 * truth.points[("gamma", "c8", 1)].fields["vllm"]["median_ttft_ms"]


def test_noiseless_and_expected_point():
    alpha = PRESETS["alpha"]
    quiet = noiseless(alpha)
    assert (quiet.noise, quiet.stall_p) == (0.0, 0.0)
    assert dataclasses.replace(quiet, noise=alpha.noise, stall_p=alpha.stall_p) == alpha
    step = alpha.itl_s * (1 + alpha.itl_slope * 3)
    full = simulate(quiet, 4, 1, seed=0, **SHAPE)
    assert set(full.itl_flat.tolist()) == {step}
    one, two = (expected_point(alpha, 4, **SHAPE, gpus=g) for g in (1, 2))
    assert one["output_throughput"] == two["output_throughput"] \
        == 2 * two["output_throughput_per_gpu"] == one["output_throughput_per_gpu"]
    assert one["output_throughput"] == 200 * 128 / full.duration
    assert one["median_ttft_ms"] == pytest.approx(float(np.median(full.ttfts)) * 1000)
    assert one["median_e2el_ms"] == pytest.approx(float(np.median(full.latencies)) * 1000)
    assert one["median_tpot_ms"] == pytest.approx(step * 1000)
    assert one["interactivity"] == pytest.approx(1 / step)


def test_drive_limit_simulates_fewer_workers_than_the_files_record(tmp_path):
    truth = write_campaign(tmp_path / "camp", engines=("alpha",), loads=(4, 16), repeats=1,
                           requests=200, drive_limit={16: 6}, clients=("vllm", "guidellm"))
    assert truth.drive_limit == {16: 6}
    for c, lo, hi in ((4, 3.5, 4.05), (16, 5.0, 6.5)):
        t = truth.points[("alpha", f"c{c}", 1)]
        raw = json.loads((truth.out / t.files["vllm"]).read_text())
        assert raw["max_concurrency"] == c == t.fields["vllm"]["max_concurrency"]
        assert t.fields["guidellm"]["max_concurrency"] == c
        q = t.requests
        ok = q.ok
        little = int(ok.sum()) * float(q.latencies[ok].mean()) / q.duration
        assert lo < little < hi, (c, little)
    assert _peak_decoding(truth.points[("alpha", "c16", 1)].requests) == 6
    # GuideLLM measures the concurrency the client kept, not the one it was asked for
    report = json.loads((truth.out / truth.points[("alpha", "c16", 1)].files["guidellm"])
                        .read_text())
    strategy = report["benchmarks"][1]["config"]["strategy"]
    assert (strategy["streams"], strategy["max_concurrency"]) == (16, 16)
    measured = report["benchmarks"][1]["metrics"]["request_concurrency"]["successful"]
    assert measured["mean"] == 6.0
    # a noiseless point does not depend on its name: 16 driven by 6 is 6
    assert expected_point("alpha", 16, **SHAPE, drive=6) == expected_point("alpha", 6, **SHAPE)
    for bad in ({8: 4}, {16: 17}, {16: 0}):
        with pytest.raises(ValueError):
            write_campaign(tmp_path / "bad", loads=(4, 16), drive_limit=bad)


def _old_run_yaml(title: str) -> str:
    """run.yaml as write_campaign wrote it before gpus, slo and cost (SMALL's arguments)."""
    doc = {
        "schema": 1,
        "title": {"ko": f"합성 캠페인 {title}", "en": f"Synthetic campaign {title}"},
        "date": yaml.safe_load("2025-11-20"),
        "hardware": {"servers": 1, "gpus": 1, "gpu_model": "Simulated GPU"},
        "model": {"name": "synth-8b"},
        "engines": [{"id": "alpha", "name": "Alpha"}, {"id": "beta", "name": "Beta"}],
        "workloads": [{"id": "1k", "label": "1K", "input_tokens": 1024, "output_tokens": 128,
                       "concurrency": [1, 4, 16], "num_prompts": 20, "repeats": 2}],
        "reconstruction": {"statement": {
            "ko": "이 실행은 benchreport.synth.campaign이 만든 합성 데이터입니다.",
            "en": "This run is synthetic data made by benchreport.synth.campaign."}},
    }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def test_run_yaml_carries_gpus_slo_and_cost_as_given(tmp_path):
    slo = {"percentile": 99, "ttft_ms": 2000, "tpot_ms": 50}
    cost = {"gpu_hour_usd": 2.5}
    plain = write_campaign(tmp_path / "plain" / "camp", **SMALL)
    text = (plain.out / "run.yaml").read_text(encoding="utf-8")
    assert text == _old_run_yaml("camp")
    assert "slo" not in yaml.safe_load(text) and "cost" not in yaml.safe_load(text)

    truth = write_campaign(tmp_path / "full" / "camp", **SMALL, gpus=8, slo=slo, cost=cost)
    full = (truth.out / "run.yaml").read_text(encoding="utf-8")
    doc = yaml.safe_load(full)
    assert doc["hardware"] == {"servers": 1, "gpus": 8, "gpu_model": "Simulated GPU"}
    assert doc["slo"] == slo and doc["cost"] == cost
    assert list(doc)[-2:] == ["slo", "cost"]
    # everything else as before: only the gpus line changes and the two blocks follow
    assert full == text.replace("  gpus: 1\n", "  gpus: 8\n") + yaml.safe_dump(
        {"slo": slo, "cost": cost}, sort_keys=False)
    assert (truth.gpus, truth.slo, truth.cost) == (8, slo, cost)
    # the raw files do not depend on run.yaml's blocks
    for key, t in truth.points.items():
        assert (truth.out / t.files["vllm"]).read_bytes() == \
            (plain.out / plain.points[key].files["vllm"]).read_bytes()
    with pytest.raises(ValueError):
        write_campaign(tmp_path / "bad", **SMALL, gpus=0)
