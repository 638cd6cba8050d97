"""Decode means weighted by the time each log line covers, and a crossover that says what it
rests on: two context lengths are an interpolation, three or more a fitted model."""

from __future__ import annotations

import statistics
from types import SimpleNamespace

import pytest

from benchreport.analyses.crossover import band, crossover_figures, rounded
from benchreport.analyses.decode import FOUND, STEPS, TIME, Steady, steady_phase, time_weighted_mean
from benchreport.pipeline.explain import registry_of


@pytest.fixture(scope="module")
def reference(reference_build):
    run = reference_build
    return run, {f.id: f for f in registry_of(run).values()}


# --- the mean over the run -------------------------------------------------------------------

def test_sglang_mean_is_time_weighted_and_the_mean_of_lines_is_kept(reference):
    _, f = reference
    v = {k: x.value for k, x in f.items()}
    # Σ(running × accept len) ÷ Σ(running × accept len ÷ rate); unweighted it would be 332.44
    assert round(v["decode.64k.sglang.mean"], 2) == 332.46
    assert round(v["decode.200k.sglang.mean"], 1) == 267.6
    assert round(v["decode.64k.sglang.mean_of_lines"], 1) == 335.0
    assert round(v["decode.200k.sglang.mean_of_lines"], 1) == 268.0
    assert "harmonic" in f["decode.64k.sglang.mean"].method
    assert "decode steps" in f["decode.64k.sglang.mean"].method
    assert f["decode.64k.sglang.mean_of_lines"].method == (
        "arithmetic mean of the lines: over-weights fast lines, which cover less time")
    # per-request speed, time per token and the degradation follow the time-weighted mean
    assert v["decode.64k.sglang.per_request"] == pytest.approx(v["decode.64k.sglang.mean"] / 10)
    assert v["decode.64k.sglang.ms_per_token"] == pytest.approx(
        10_000 / v["decode.64k.sglang.mean"])
    assert round(v["decode.64k.sglang.ms_per_token"], 1) == 30.1
    assert v["decode.degradation.sglang.mean_over_mean"] == pytest.approx(
        v["decode.64k.sglang.mean"] / v["decode.200k.sglang.mean"])
    assert round(v["decode.degradation.sglang.mean_over_mean"], 2) == 1.24
    # the published 1.25 divides the arithmetic means of the lines: kept, labelled as such
    assert round(v["decode.degradation.sglang.lines_over_lines"], 2) == 1.25
    assert "decode.degradation.vllm.lines_over_lines" not in v


def test_vllm_mean_is_the_arithmetic_mean_of_its_fixed_time_records(reference):
    run, f = reference
    from benchreport.ingest.run import ingest_run

    ing = ingest_run(run)
    for w in ("64k", "200k"):
        s = steady_phase(ing, "vllm", w, 10)
        assert s.basis == TIME and s.verdict == FOUND
        assert f[f"decode.{w}.vllm.mean"].value == pytest.approx(statistics.fmean(s.values))
        assert f"decode.{w}.vllm.mean_of_lines" not in f
        assert "same time" in f[f"decode.{w}.vllm.mean"].method
    assert round(f["decode.200k.vllm.mean"].value) == 163
    s = steady_phase(ing, "sglang", "64k", 10)
    assert s.basis == STEPS and len(s.weights) == len(s.values)


def test_weighted_harmonic_mean_is_total_tokens_over_total_time():
    # two lines of equal token count at 100 and 300 tok/s: 2 units / (1/100 + 1/300 s) = 150
    s = Steady("e", "w", 4, FOUND, values=(100.0, 300.0), weights=(4.0, 4.0), basis=STEPS)
    assert s.mean == pytest.approx(150.0)
    assert s.mean_of_lines == pytest.approx(200.0)
    # tokens 8 and 4 (running 4 × accept len 2, then 4 × 1): 12 / (8/100 + 4/300) = 128.57
    assert time_weighted_mean([100.0, 300.0], [8.0, 4.0], STEPS) == pytest.approx(12 / (
        8 / 100 + 4 / 300))
    # fixed-time records: the arithmetic mean is already total tokens over total time
    t = Steady("e", "w", 4, FOUND, values=(100.0, 300.0))
    assert t.basis == TIME and t.mean == pytest.approx(200.0)


def test_steady_phase_weights_sglang_lines_by_running_requests_and_accept_len():
    def rec(line, tps, accept=None, running=4):
        r = {"kind": "decode_batch", "line": line, "running_req": running, "queue_req": 0,
             "gen_tps": tps, "file": "s.log", "sha256": "x", "ts": f"2026-01-01T00:00:{line:02d}"}
        if accept is not None:
            r["accept_len"] = accept
        return r

    recs = [{"kind": "prefill_batch", "line": 1}, rec(2, 999.0), rec(3, 100.0, 2.0),
            rec(4, 300.0, 1.0), rec(5, 50.0, running=3)]
    ing = SimpleNamespace(in_window=lambda kind, e, w: [r for r in recs if r["kind"] == kind])
    s = steady_phase(ing, "sglang", "w", 4)
    assert s.values == (100.0, 300.0) and s.weights == (8.0, 4.0) and s.basis == STEPS
    assert s.mean == pytest.approx(12 / (8 / 100 + 4 / 300))
    # accept len not logged: 1 per step
    recs[2].pop("accept_len")
    assert steady_phase(ing, "sglang", "w", 4).mean == pytest.approx(150.0)


def test_fixed_step_mean_is_total_tokens_over_total_time_on_a_run_with_known_truth(tmp_path):
    from benchreport.analyses.decode import decode_figures

    from .test_analysis import _variant

    run, ing, sims = _variant(tmp_path, 3)
    figs = {f.id: f.value for f in decode_figures(run, ing)[0]}
    checked = 0
    for sim in sims:
        steady = [w for w in sim.fitted.windows if w.steady(4)]
        base = f"decode.{sim.spec.workload}.{sim.engine.id}"
        if sim.engine.id != "beta" or not steady:     # beta logs every N decode steps
            continue
        tokens_over_time = sum(w.gen_tokens for w in steady) / sum(w.seconds for w in steady)
        assert figs[f"{base}.mean"] == pytest.approx(tokens_over_time, abs=0.06)
        assert figs[f"{base}.mean_of_lines"] == pytest.approx(
            statistics.fmean(w.gen_tps for w in steady), abs=0.06)
        assert abs(figs[f"{base}.mean_of_lines"] - tokens_over_time) > 0.2
        checked += 1
    assert checked


# --- the crossover ---------------------------------------------------------------------------

def test_reference_crossover_is_an_interpolation_rounded_to_what_two_points_support(reference):
    _, f = reference
    key = "model.crossover.sglang.vllm"
    x = f[key].value
    assert 100_000 < x < 110_000            # 104,503 with time-weighted means (103,788 before)
    assert "linear interpolation between two context lengths" in f[key].method
    assert "unvalidated" in f[key].method
    assert not any(k.startswith("model.decode.") for k in f)     # no fitted intercept/slope
    assert f"{key}.range" not in f
    # the other interpolations of the same four points: linear in tok/s and in log context
    assert f[key].context["interpolation"] == "ms_per_token"
    assert "linear in the context (the point estimate)" in f[key].method
    assert round(f[f"{key}.tok_per_s"].value) == 146_908
    assert round(f[f"{key}.log_context"].value) == 90_553
    assert set(f[key].context["others"]) == {"tok_per_s", "log_context"}
    # the band covers all three (90,553 … 146,908), not the point estimate's step only
    assert f[f"{key}.rounded"].value == "90K–150K" and f[f"{key}.rounded"].unit == "tokens"
    assert "not an interval" in f[f"{key}.rounded"].method
    assert (f[f"{key}.rounded"].context["low"], f[f"{key}.rounded"].context["high"]) == (
        f[f"{key}.log_context"].value, f[f"{key}.tok_per_s"].value)
    assert f[f"{key}.lengths"].value == 2 and f[f"{key}.lengths"].unit == "count"
    assert f[f"{key}.beyond"].value == "no" and f[f"{key}.beyond"].unit == "verdict"
    for k, fig in f.items():
        if k.startswith("model."):
            assert fig.depends_on and all(d in f for d in fig.depends_on), k
    assert set(f[key].depends_on) == {f"decode.{w}.{e}.ms_per_token" for w in ("64k", "200k")
                                      for e in ("sglang", "vllm")}


def test_rounded_brackets_whole_10k_steps():
    assert band([90_552.8, 104_503.4, 146_907.7]) == "90K–150K"
    assert band([101_000, 104_000]) == "100K–110K"
    assert band([19_999.9999999, 35_714.3]) == "20K–40K"      # float noise at a step
    assert rounded(103_788) == "100K–110K"
    assert rounded(104_503.4) == "100K–110K"
    assert rounded(99_999) == "90K–100K"
    assert rounded(1_234_567) == "1,230K–1,240K"


def _meta(lengths: dict[str, int]):
    workloads = {w: SimpleNamespace(id=w, input_tokens=n) for w, n in lengths.items()}
    return SimpleNamespace(meta=SimpleNamespace(workload=lambda w: workloads[w]))


def _phases(lines: dict[str, tuple[float, float]], lengths: dict[str, int],
            noise: dict[tuple[str, str], float] | None = None) -> list[Steady]:
    """One request per engine: ms/token = a + b × context/1000 (+ noise); mean = 1000/ms."""
    out = []
    for e, (a, b) in lines.items():
        for w, n in lengths.items():
            ms = a + b * n / 1000 + (noise or {}).get((e, w), 0.0)
            out.append(Steady(e, w, 1, FOUND, values=(1000 / ms,)))
    return out


def test_three_context_lengths_give_a_fitted_model_with_intercept_slope_and_residual():
    lengths = {"50k": 50_000, "100k": 100_000, "300k": 300_000}
    run = _meta(lengths)
    phases = _phases({"a": (10.0, 0.1), "b": (20.0, 0.05)}, lengths,
                     noise={("a", "100k"): 0.4})
    f = {x.id: x for x in crossover_figures(run, phases)}
    for e in ("a", "b"):
        assert {f"model.decode.{e}.intercept_ms", f"model.decode.{e}.slope_ms_per_1k",
                f"model.decode.{e}.max_residual_pct"} <= set(f)
        assert "fitted model with 3 points" in f[f"model.decode.{e}.intercept_ms"].method
        assert f[f"model.decode.{e}.intercept_ms"].depends_on == tuple(
            f"decode.{w}.{e}.ms_per_token" for w in ("50k", "100k", "300k"))
    assert f["model.decode.b.intercept_ms"].value == pytest.approx(20.0)
    assert f["model.decode.b.slope_ms_per_1k"].value == pytest.approx(0.05)
    assert f["model.decode.b.max_residual_pct"].value == pytest.approx(0.0, abs=1e-9)
    assert f["model.decode.a.max_residual_pct"].value > 0
    key = "model.crossover.a.b"
    # exact lines cross at 10 / 0.05 × 1000 = 200,000; the noise on a shifts it a little
    assert 190_000 < f[key].value < 210_000
    assert "least-squares" in f[key].method and "3 context lengths" in f[key].method
    assert f[f"{key}.lengths"].value == 3 and f[f"{key}.beyond"].value == "no"
    assert f"{key}.range" not in f


def test_two_lengths_interpolate_exactly_and_say_when_extrapolated():
    lengths = {"8k": 8_000, "32k": 32_000}
    f = {x.id: x for x in crossover_figures(
        _meta(lengths), _phases({"a": (10.0, 0.1), "b": (20.0, 0.05)}, lengths))}
    assert not any(k.startswith("model.decode.") for k in f)
    key = "model.crossover.a.b"
    assert f[key].value == pytest.approx(200_000)
    # far outside the lengths the interpolations part ways: in log context a's 10.8 → 13.2
    # and b's 20.4 → 21.6 ms meet where 2.4 L = 9.6 + 1.2 L, L = log4(x/8,000) = 8; in tok/s
    # where the speeds' straight lines meet
    assert f[f"{key}.log_context"].value == pytest.approx(8_000 * 4 ** 8)
    sa, sb = (1000 / 10.8, 1000 / 13.2), (1000 / 20.4, 1000 / 21.6)
    slope = [(hi - lo) / 24_000 for lo, hi in (sa, sb)]
    x_speed = 8_000 + (sb[0] - sa[0]) / (slope[0] - slope[1])
    assert f[f"{key}.tok_per_s"].value == pytest.approx(x_speed)
    assert 80_000 < x_speed < 90_000
    assert f[f"{key}.rounded"].value == "80K–524,290K"       # 524,288,000 rounded up
    assert f[f"{key}.beyond"].value == "yes" and f[f"{key}.lengths"].value == 2


def test_the_band_covers_the_crossover_of_every_interpolation():
    """Two lengths, hand-computed. ms/token: a 10 → 40, b 20 → 30 at 10K → 40K.
    Linear in ms/token: x/1000 = 20 + (x − 10,000)/3,000, so x = 25,000.
    Linear in tok/s: a 100 → 25, b 50 → 33.3…: 100 − (x − 10,000)/400 = 50 − (x − 10,000)/1,800,
    so x = 10,000 + 50 · 720,000/1,400 = 250,000/7 = 35,714.29.
    Linear in ln(context): 10 + 30 L = 20 + 10 L with L = ln(x/10,000)/ln 4, so L = ½, x = 20,000.
    """
    lengths = {"10k": 10_000, "40k": 40_000}
    ms = {("a", "10k"): 10.0, ("a", "40k"): 40.0, ("b", "10k"): 20.0, ("b", "40k"): 30.0}
    phases = [Steady(e, w, 1, FOUND, values=(1000 / m,)) for (e, w), m in ms.items()]
    f = {x.id: x for x in crossover_figures(_meta(lengths), phases)}
    key = "model.crossover.a.b"
    assert f[key].value == pytest.approx(25_000)
    assert f[f"{key}.tok_per_s"].value == pytest.approx(250_000 / 7)
    assert f[f"{key}.log_context"].value == pytest.approx(20_000)
    assert f[f"{key}.rounded"].value == "20K–40K"          # 20,000 … 35,714, outward
    assert f[key].context["others"] == pytest.approx({"tok_per_s": 250_000 / 7,
                                                       "log_context": 20_000})
    # the point estimate's method names its interpolation and gives the others
    assert "taking the time per output token linear in the context (the point estimate)" \
        in f[key].method
    assert "linear in the context: 35,714" in f[key].method
    assert "logarithm of the context: 20,000" in f[key].method
    assert f[f"{key}.rounded"].depends_on == (key, f"{key}.tok_per_s", f"{key}.log_context")
    assert f[f"{key}.beyond"].value == "no"


def test_an_interpolation_that_does_not_cross_is_said_and_left_out_of_the_band():
    """ms/token a 10 → 40, b 20 → 60 never cross when extended (b stays above a); in tok/s
    a 100 → 25 and b 50 → 16.7 cross where 100 − (x − 10,000)/400 = 50 − (x − 10,000)/900:
    x = 10,000 + 50 · 360,000/500 = 46,000. Only a crossing of the point estimate's lines
    gives figures at all."""
    lengths = {"10k": 10_000, "40k": 40_000}
    ms = {("a", "10k"): 10.0, ("a", "40k"): 40.0, ("b", "10k"): 20.0, ("b", "40k"): 60.0}
    phases = [Steady(e, w, 1, FOUND, values=(1000 / m,)) for (e, w), m in ms.items()]
    f = {x.id: x for x in crossover_figures(_meta(lengths), phases)}
    assert f["model.crossover.a.b"].value == "none"
    assert "model.crossover.a.b.tok_per_s" not in f
    from benchreport.analyses.crossover import crossings
    pts = {e: sorted((lengths[w], m, w) for (e2, w), m in ms.items() if e2 == e)
           for e in ("a", "b")}
    got = crossings(pts["a"], pts["b"])
    assert got["ms_per_token"] is None and got["tok_per_s"] == pytest.approx(46_000)


def test_lines_that_do_not_cross_at_positive_context_keep_the_none_verdict():
    lengths = {"8k": 8_000, "32k": 32_000}
    f = {x.id: x for x in crossover_figures(
        _meta(lengths), _phases({"a": (10.0, 0.1), "b": (20.0, 0.2)}, lengths))}
    assert f["model.crossover.a.b"].value == "none"
    assert "linear interpolation" in f["model.crossover.a.b"].method
    assert f["model.crossover.a.b.lengths"].value == 2
    assert "model.crossover.a.b.rounded" not in f and "model.crossover.a.b.beyond" not in f
