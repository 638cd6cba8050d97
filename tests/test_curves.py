"""Campaign analyses on generated campaigns whose truth is known (benchreport.synth.campaign):
the knee, the Pareto crossing, capacity at an SLO, ties inside the noise, validity flags.

Each campaign is written, ingested and analysed in-process (no notebooks, no PDF), so these
run in seconds; tests/test_campaign.py builds whole reports."""

from __future__ import annotations

import dataclasses

import pytest

from benchreport.analyses import curves, stats
from benchreport.analyses.validity import (
    FAILED,
    FEW_FOR_P99,
    FLAGGED,
    INVALID,
    NOT_EVALUABLE,
    ONE_WAVE,
    ORDER,
    PASSED,
    SATURATED,
    SLOTS_IDLE,
)
from benchreport.core import ids
from benchreport.core.runmeta import load_run
from benchreport.ingest.run import ingest_run
from benchreport.synth.campaign import EngineModel, expected_point, write_campaign

from .conftest import REAL_SAMPLES, needs_samples

pytestmark = pytest.mark.slow        # whole campaigns written and analysed: seconds a test

SEEDS = (0, 1, 2)


def analyse(tmp_path, name, engines, loads, *, repeats=3, requests=200, seed=0, **options):
    write_campaign(tmp_path / "data" / name, engines=engines, loads=loads, repeats=repeats,
                   requests=requests, seed=seed, **options)
    run = load_run(name, tmp_path / "data", tmp_path / "report")
    ing = ingest_run(run)
    return run, curves.campaign_figures(run, curves.campaign_workloads(ing))


def figures(campaign) -> dict:
    return {f.id: f for f in campaign.figures}


def true_frontier(engine, loads, requests, gpus=1):
    points = []
    for c in loads:
        e = expected_point(engine, c, requests=requests, input_tokens=1024, output_tokens=128,
                           gpus=gpus)
        points.append((e["interactivity"], e["output_throughput_per_gpu"], f"c{c}"))
    keep = [p for p in points if not any(q[0] >= p[0] and q[1] >= p[1] and q[:2] != p[:2]
                                         for q in points)]
    return sorted(keep)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_knee_is_where_the_engine_runs_out_of_slots(tmp_path, seed):
    # gamma runs at most 8 requests at once: beyond c8 throughput is flat, TTFT grows
    run, c = analyse(tmp_path, "knee", ("gamma", "beta"), (2, 4, 8, 16, 32), seed=seed)
    f = figures(c)
    assert f[ids.curve_series("1k", "gamma", "knee")].value == "c8"
    # beta scales over the whole range: no knee
    assert f[ids.curve_series("1k", "beta", "knee")].value == "none"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_frontiers_cross_where_the_true_frontiers_cross(tmp_path, seed):
    loads = (1, 2, 4, 8, 16, 32)
    run, c = analyse(tmp_path, "pareto", ("alpha", "beta"), loads, seed=seed)
    f = figures(c)
    truth, _ = curves.compare_frontiers(true_frontier("alpha", loads, 200),
                                        true_frontier("beta", loads, 200))
    assert len(truth) == 1                           # alpha per user, beta in aggregate
    assert f[ids.pareto("1k", "alpha", "beta", "crossings")].value == 1
    found = f[ids.pareto("1k", "alpha", "beta", "cross1")].value
    assert found == pytest.approx(truth[0], rel=0.03)
    # who leads on each side: beta at low interactivity (high load), alpha above it
    assert f[ids.pareto("1k", "alpha", "beta", "seg1.leader")].value == "beta"
    assert f[ids.pareto("1k", "alpha", "beta", "seg2.leader")].value == "alpha"
    assert f[ids.pareto("1k", "alpha", "beta", "seg1.to")].value == found


@pytest.mark.parametrize("seed", SEEDS)
def test_capacity_at_the_slo_is_interpolated_between_the_two_points_around_it(tmp_path,
                                                                             seed):
    # gamma's median TTFT: low up to c8, then requests queue for a slot; a 1 s objective
    # falls between c8 and c16, where the noiseless model puts it
    slo = {"percentile": 50, "ttft_ms": 1000}
    run, c = analyse(tmp_path, "slo", ("gamma", "beta"), (4, 8, 16, 32), seed=seed, slo=slo,
                     cost={"gpu_hour_usd": 2.0}, gpus=4)
    f = figures(c)
    cap = f[ids.slo("1k", "gamma", "capacity")]
    assert cap.context["status"] == curves.INTERPOLATED
    assert cap.context["between"] == ["c8", "c16"]
    assert cap.context["limiting"] == "median_ttft_ms"
    assert cap.context["low"] <= cap.value <= cap.context["high"]
    true = {k: expected_point("gamma", k, requests=200, input_tokens=1024,
                              output_tokens=128)["median_ttft_ms"] for k in (8, 16)}
    expected = 8 + (1000 - true[8]) / (true[16] - true[8]) * 8
    assert cap.value == pytest.approx(expected, rel=0.05)
    # the meets verdicts bracket it
    assert f[ids.slo("1k", "gamma", "c8.meets")].value == "yes"
    assert f[ids.slo("1k", "gamma", "c16.meets")].value == "no"
    # cost: price × GPUs ÷ 3600 ÷ tok/s × 10⁶, at each load and at the capacity
    tok = f[ids.curve("1k", "gamma", "c8", "output_throughput")].value
    assert f[ids.cost("1k", "gamma", "c8")].value == pytest.approx(2.0 * 4 / 3600 / tok * 1e6)
    at = f[ids.slo("1k", "gamma", "capacity_output")].value
    assert f[ids.cost("1k", "gamma", "at_capacity")].value == \
        pytest.approx(2.0 * 4 / 3600 / at * 1e6)


def test_goodput_counts_the_requests_that_meet_every_objective(tmp_path):
    slo = {"percentile": 99, "ttft_ms": 1000, "tpot_ms": 50}
    run, c = analyse(tmp_path, "good", ("gamma", "beta"), (4, 32), repeats=1, slo=slo)
    f = figures(c)
    ing = ingest_run(run)
    row = {p["point"]: p for p in ing.points}
    for p in ing.points:
        rows = [r for r in ing.requests if r["point"] == p["point"]]
        good = sum(1 for r in rows if not r["error"] and r["ttft_ms"] <= 1000
                   and (r["e2el_ms"] - r["ttft_ms"]) / (r["output_tokens"] - 1) <= 50)
        assert f[ids.point(p["point"], "goodput")].value == pytest.approx(good / p["duration"])
    # at c32 gamma queues for seconds: most requests miss the TTFT objective
    assert f[ids.point("gamma.1k.c32.r1", "goodput")].value < \
        0.5 * row["gamma.1k.c32.r1"]["request_throughput"]
    assert f[ids.point("gamma.1k.c4.r1", "goodput")].value == \
        pytest.approx(row["gamma.1k.c4.r1"]["request_throughput"], rel=0.02)


def test_two_copies_of_one_engine_tie_as_often_as_the_interval_promises(tmp_path):
    """Two copies of one engine (same model, different random streams): the true difference
    is zero, so the 95% interval should hold 1 in about 19 of 20 campaigns. Seeds 0–19
    give 18 ties (seeds 6 and 10 land in the 5% the interval allows, by 0.0002 and 0.0003
    above 1); fewer than 17 would mean intervals too narrow for the noise."""
    a = EngineModel("one", "One", prefill_s=0.05, itl_s=0.009, itl_slope=0.03)
    b = dataclasses.replace(a, id="two", name="Two")
    verdicts = []
    for seed in range(20):
        run, c = analyse(tmp_path / str(seed), "tie", (a, b), (4,), requests=100, seed=seed)
        f = figures(c)
        verdicts.append(f[ids.compare("1k", "one", "two", "c4", "output_throughput",
                                      "verdict")].value)
    assert verdicts.count(stats.TIE) >= 17, verdicts


@pytest.mark.parametrize("seed", SEEDS)
def test_engines_that_differ_beyond_the_noise_do_not_tie(tmp_path, seed):
    # alpha and beta at c1: about 11% apart, with well under 1% run-to-run noise
    run, c = analyse(tmp_path, "apart", ("alpha", "beta"), (1,), seed=seed)
    f = figures(c)
    ratio = f[ids.compare("1k", "alpha", "beta", "c1", "output_throughput")]
    assert f[ids.compare("1k", "alpha", "beta", "c1", "output_throughput", "verdict")].value \
        == stats.HIGHER
    assert ratio.context["low"] > 1 and ratio.context["n_a"] == ratio.context["n_b"] == 3


def test_swapping_the_engines_swaps_every_verdict(tmp_path):
    run, c = analyse(tmp_path, "ab", ("alpha", "beta"), (1, 4, 16, 32))
    text = (tmp_path / "data/ab/run.yaml").read_text()
    head, engines = text.split("engines:\n", 1)
    lines, rest = engines.split("workloads:", 1)
    alpha, beta = [x for x in lines.split("- ") if x.strip()]
    (tmp_path / "data/ab/run.yaml").write_text(
        f"{head}engines:\n- {beta}- {alpha}workloads:{rest}")
    run2 = load_run("ab", tmp_path / "data", tmp_path / "report")
    c2 = curves.campaign_figures(run2, curves.campaign_workloads(ingest_run(run2)))
    f, f2 = figures(c), figures(c2)
    flip = {stats.HIGHER: stats.LOWER, stats.LOWER: stats.HIGHER, stats.TIE: stats.TIE}
    compared = 0
    for load in ("c1", "c4", "c16", "c32"):
        for metric in ("output_throughput", "median_e2el_ms"):
            v = f[ids.compare("1k", "alpha", "beta", load, metric, "verdict")].value
            v2 = f2[ids.compare("1k", "beta", "alpha", load, metric, "verdict")].value
            assert v2 == flip[v]
            r = f[ids.compare("1k", "alpha", "beta", load, metric)]
            r2 = f2[ids.compare("1k", "beta", "alpha", load, metric)]
            assert r2.value == pytest.approx(1 / r.value)
            assert r2.context["low"] == pytest.approx(1 / r.context["high"])
            compared += 1
    assert compared == 8
    seg = f[ids.pareto("1k", "alpha", "beta", "seg1.leader")].value
    assert f2[ids.pareto("1k", "beta", "alpha", "seg1.leader")].value == seg


def test_undriven_load_few_requests_and_failures_are_flagged(tmp_path):
    # the client keeps only 6 of 16 workers busy at c16; 3 of 60 requests fail everywhere
    run, c = analyse(tmp_path, "bad", ("alpha", "beta"), (4, 16), repeats=2, requests=60,
                     failures=3, drive_limit={16: 6})
    checks = {pid: {k.code: k for k in v.checks} for pid, v in c.validity.items()}
    # a closed loop whose slots sat idle: the client's doing, not the server's
    assert checks["alpha.1k.c16.r1"][SLOTS_IDLE].severity == INVALID
    assert c.validity["alpha.1k.c16.r1"].verdict == INVALID
    assert SLOTS_IDLE not in checks["alpha.1k.c4.r1"]
    assert checks["alpha.1k.c4.r1"]["load"].severity == PASSED
    few = checks["alpha.1k.c4.r1"][FEW_FOR_P99]
    assert (few.severity, few.value, few.limit) == (FLAGGED, 57.0, 100)
    failed = checks["beta.1k.c4.r2"][FAILED]
    assert failed.value == pytest.approx(5.0) and failed.severity == FLAGGED
    f = figures(c)
    # the invalid load is left out of the curves and comparisons, and counted
    assert ids.curve("1k", "alpha", "c16", "output_throughput") not in f
    assert ids.compare("1k", "alpha", "beta", "c16", "output_throughput") not in f
    assert f[ids.campaign("excluded")].value == 4
    assert sorted(f[ids.campaign("excluded")].context["points"]) == [
        "alpha.1k.c16.r1", "alpha.1k.c16.r2", "beta.1k.c16.r1", "beta.1k.c16.r2"]


def test_without_repeats_no_ratio_has_an_interval_or_a_winner(tmp_path):
    run, c = analyse(tmp_path, "once", ("alpha", "beta"), (1, 8), repeats=1)
    f = figures(c)
    for load in ("c1", "c8"):
        r = f[ids.compare("1k", "alpha", "beta", load, "output_throughput")]
        assert r.context["low"] is None and r.context["method"] == stats.SINGLE
        assert f[ids.compare("1k", "alpha", "beta", load, "output_throughput",
                             "verdict")].value == stats.UNKNOWN
    assert f[ids.compare_count("1k", "alpha", "beta", "output_throughput",
                               stats.UNKNOWN)].value == 2


def test_a_single_point_run_has_no_campaign(project, tmp_path):
    run = load_run("2024-b300", project / "data", tmp_path / "report")
    ing = ingest_run(run)
    assert curves.campaign_figures(run, curves.campaign_workloads(ing)).figures == []


def test_a_peak_followed_by_a_fall_is_called_a_fall(tmp_path):
    # beta's throughput peaks near c32 and falls beyond it (prefill queueing); gamma's
    # stays flat beyond c8
    run, c = analyse(tmp_path, "fall", ("gamma", "beta"), (4, 8, 16, 32, 64, 128),
                     repeats=2, requests=300)
    f = figures(c)
    assert f[ids.curve_series("1k", "beta", "knee")].value == "c32"
    fall = f[ids.curve_series("1k", "beta", "fall_pct")]
    thr = {load: f[ids.curve("1k", "beta", load, "output_throughput")].value
           for load in ("c32", "c128")}
    assert fall.value == pytest.approx((thr["c32"] - thr["c128"]) / thr["c32"] * 100)
    assert fall.value > 10 and fall.context["falls"] is True
    assert f[ids.curve_series("1k", "gamma", "knee")].value == "c8"
    assert f[ids.curve_series("1k", "gamma", "fall_pct")].context["falls"] is False


def test_the_frontier_keeps_only_loads_within_the_ttft_objective(tmp_path):
    """Interactivity comes from TPOT alone: beyond gamma's 8 slots requests queue for
    seconds at the same TPOT, so those loads must not sit on its frontier."""
    slo = {"percentile": 99, "ttft_ms": 1000}
    run, c = analyse(tmp_path, "front", ("gamma", "beta"), (2, 4, 8, 16, 32), slo=slo)
    f = figures(c)
    front = f[ids.pareto("1k", "gamma", None, "frontier")].context
    assert front["ttft_filtered"] is True
    p99 = {load: f[ids.curve("1k", "gamma", load, "p99_ttft_ms")].value
           for load in ("c2", "c4", "c8", "c16", "c32")}
    assert set(front["left_out"]) == {load for load, v in p99.items() if v > 1000}
    assert "c32" in front["left_out"] and not set(front["loads"]) & set(front["left_out"])
    # without an SLO every load may join, but loads equal within 1% do not crowd it
    run, c = analyse(tmp_path / "no-slo", "front", ("gamma", "beta"), (2, 4, 8, 16, 32))
    loads = figures(c)[ids.pareto("1k", "gamma", None, "frontier")].context["loads"]
    assert len([x for x in loads if x in ("c8", "c16", "c32")]) == 1


def test_every_point_of_a_single_point_run_is_checked(project, tmp_path):
    """The reference run has one point per engine and workload: no campaign, but every
    point gets its checks, with what could not run said."""
    run = load_run("2024-b300", project / "data", tmp_path / "report")
    ing = ingest_run(run)
    validity, figs = curves.validity_figures(run, ing)
    assert sorted(validity) == sorted(p["point"] for p in ing.points) and len(validity) == 4
    by_id = {f.id: f for f in figs}
    for p in ing.points:
        f = by_id[ids.point(p["point"], "validity")]
        rules = [c["rule"] for c in f.context["checks"]]
        assert rules == list(ORDER[1:])
        assert f.context["not_evaluable"] == sum(c["severity"] == NOT_EVALUABLE
                                                 for c in f.context["checks"])
        # 10 requests at concurrency 10: one wave, and far too few for a p99
        load = next(c for c in f.context["checks"] if c["rule"] == "load")
        assert load["code"] == ONE_WAVE
        assert f.value == FLAGGED


@needs_samples
def test_the_real_sglang_sweep_keeps_its_saturated_points_and_shows_its_peak(tmp_path):
    """sglang-multi: rates 2, 100, 1000 twice each. At 100 and 1000 req/s the rate asked was
    not reached and the median E2E latency (no TTFT: the responses were not streamed) grew
    4.7× or more: the four points are saturated, not invalid; they stay on the curve, and
    throughput peaks at r100."""
    from benchreport.cli import main

    data = tmp_path / "data"
    data.mkdir()
    assert main(["init", "s6", str(REAL_SAMPLES / "sglang-multi"), "--data-root",
                 str(data)]) == 0
    run = load_run("s6", data, tmp_path / "report")
    ing = ingest_run(run)
    validity, _ = curves.validity_figures(run, ing)
    c = curves.campaign_figures(run, curves.campaign_workloads(ing), None, validity)
    f = figures(c)
    verdicts = {p["load"]: set() for p in ing.points}
    for p in ing.points:
        verdicts[p["load"]].add(validity[p["point"]].verdict)
    assert verdicts["r100"] == verdicts["r1000"] == {SATURATED}
    assert f[ids.campaign("excluded")].value == 0
    assert f[ids.campaign("saturated")].value == 4
    wl = ing.points[0]["workload"]
    sat = f[ids.curve(wl, "sglang", "r100", "output_throughput")]
    # the workload as init drafts it: the lengths really sent (range ratio 0), not 1024/128
    assert sat.context["saturated"] == ["sglang.in403-out255.r100.r1",
                                        "sglang.in403-out255.r100.r2"]
    assert sat.value == pytest.approx((1119.909400452757 + 1063.7644029805238) / 2)
    assert not any(m.startswith("median_ttft") for m in
                   (fig.context.get("metric", "") for fig in c.figures))
    # the knee is the peak, and the fall beyond it is said
    knee = f[ids.curve_series(wl, "sglang", "knee")]
    assert knee.value == "r100" and knee.context["saturated"] == ["r100", "r1000"]
    fall = f[ids.curve_series(wl, "sglang", "fall_pct")]
    top, last = sat.value, (741.6219851326617 + 958.2466724664115) / 2
    assert fall.value == pytest.approx((top - last) / top * 100) and fall.context["falls"]
    # two repeats a load: no interval, said in the method, never a bound
    for fig in c.figures:
        if fig.id.startswith("curve.") and fig.context.get("n") == 2 and "std" in fig.context:
            assert fig.context["low"] is None and fig.context["high"] is None, fig.id
            assert fig.context["method"] == "n too small for an interval", fig.id
        elif fig.id.startswith("curve.") and fig.context.get("low") is not None:
            assert 0 < fig.context["low"] <= fig.value <= fig.context["high"], fig.id


@needs_samples
def test_the_real_aiperf_run_keeps_unverified_points_and_cancellations_are_no_failures(
        tmp_path):
    """aiperf: two GenAI-Perf points (NIM, c1 and c10) with no counts and no duration, so
    no check can run (unverified, kept on the curve), and an AIPerf point whose 11 errors
    of 100 are the 10% cancellations it was asked for (no failed share)."""
    from benchreport.cli import main
    from benchreport.core.verdicts import UNVERIFIED

    data = tmp_path / "data"
    data.mkdir()
    assert main(["init", "ap", str(REAL_SAMPLES / "aiperf"), "--data-root", str(data)]) == 0
    run = load_run("ap", data, tmp_path / "report")
    ing = ingest_run(run)
    validity, figs = curves.validity_figures(run, ing)
    c = curves.campaign_figures(run, curves.campaign_workloads(ing), None, validity)
    f = {**figures(c), **{x.id: x for x in figs}}
    nim = [p for p in ing.points if p["client"] == "genai-perf"]
    assert len(nim) == 2 and {validity[p["point"]].verdict for p in nim} == {UNVERIFIED}
    assert f[ids.campaign("unverified")].value == 2
    assert f[ids.campaign("valid")].value == 0 and f[ids.campaign("excluded")].value == 0
    for p in nim:
        assert ids.curve(p["workload"], "nim", p["load"], "output_throughput") in f
    (server,) = [p for p in ing.points if p["client"] == "aiperf"]
    pid = server["point"]
    assert (server["failed"], server["cancelled"], server["cancellation_rate"]) == (11, 11, 10)
    assert ids.point(pid, "failed_share") not in f
    checks = {x["rule"]: x for x in f[ids.point(pid, "validity")].context["checks"]}
    assert checks["cancelled"]["value"] == 11 and checks["cancelled"]["asked"] == 10.0
    assert checks["failed"]["severity"] == PASSED
    assert f[ids.point(pid, "validity")].value == FLAGGED
