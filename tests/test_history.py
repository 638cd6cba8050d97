"""Issue 30, history and trends: a metric over the runs of the store, the runs from which its
level changed (a permutation test), and the noise a regression gate takes from the history.

The stores here are written directly (one ``runs`` and one ``points`` partition per run, as
``benchmarks/store_scale.py`` fills them): no build, so a 25-run history takes well under a
second to make."""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchreport.analyses import history as hist
from benchreport.cli import main
from benchreport.core.store import STORE_VERSION, partition
from benchreport.core.tables import POINT_TYPES, connect
from benchreport.core.verdicts import CANNOT_TELL, INVALID, LEVEL_CHANGED, NO_LEVEL_CHANGE
from benchreport.pipeline.store import RUN_TYPES, _write_figures, _write_runs, copy_parquet

NOISE = 0.02
STEP = 1.18
STEP_RUN = 21               # 1-based: the first run of the new level
RUNS = 25
BASE_TTFT = 200.0


def store_point(run_id: str, engine: str, workload: str, concurrency: int, repeat: int,
                ttft: float, tpot: float, input_tokens: int = 1000) -> dict:
    """A row of the store's ``points`` table: one repeat of a point with that p99 TTFT and
    TPOT (also what tests/test_methods.py writes its comparisons from)."""
    return {"point": f"{engine}.{workload}.c{concurrency}.r{repeat}", "engine": engine,
            "workload": workload, "load": f"c{concurrency}",
            "max_concurrency_target": concurrency, "repeat": repeat, "variant": "",
            "client": "vllm-bench-serve", "model": "m-8b", "scenario_dataset": "random",
            "scenario_input_tokens": float(input_tokens), "scenario_output_tokens": 200.0,
            "file": f"data/{run_id}/raw/{engine}/c{concurrency}-r{repeat}.json",
            "sha256": hashlib.sha256(f"{run_id} {engine} {concurrency} {repeat}".encode())
            .hexdigest(),
            "line": 1, "completed": 100, "failed": 0, "duration": 60.0,
            "p99_ttft_ms": ttft, "mean_ttft_ms": ttft / 2.5, "mean_tpot_ms": tpot,
            "output_throughput": 20000.0 / tpot, "requests": 0}


def write_run(store: Path, run_id: str, date: str, points: list[dict], con=None, *,
              reconstruction: bool = False) -> None:
    """One run's ``points`` and ``runs`` partitions, typed as an export types them."""
    con = con or connect()
    frame = pd.DataFrame(points).reindex(columns=list(POINT_TYPES))
    con.register("frame", frame.astype(object).where(frame.notna(), None))
    casts = ", ".join(f'CAST("{n}" AS {t}) AS "{n}"' for n, t in POINT_TYPES.items())
    for table in ("points", "runs"):
        partition(store, table, run_id).mkdir(parents=True)
    copy_parquet(con, f"SELECT {casts} FROM frame",
                        partition(store, "points", run_id) / "data.parquet")
    row = {name: None for name in RUN_TYPES}
    row.update(store_version=STORE_VERSION, date=date, model="m-8b",
               reconstruction=reconstruction,
               engines=[{"id": "vllm", "name": "vLLM", "version": "1", "image": None,
                         "logged_version": None}], clients=["vllm-bench-serve"],
               workloads=sorted({p["workload"] for p in points}))
    _write_runs(con, row, partition(store, "runs", run_id) / "data.parquet")


def nightly(store: Path, values: list[float], *, engine: str = "vllm",
            workload=lambda i: "1k", tpot: float = 12.0, seed: int = 7) -> list[str]:
    """A run per value (``nightly-01`` … in date order): one point with that p99 TTFT and a
    flat noisy TPOT; returns the run ids."""
    rng = random.Random(seed)
    run_ids = []
    con = connect()
    for i, ttft in enumerate(values, 1):
        run_id = f"nightly-{i:02d}"
        date = f"2026-{1 + (i - 1) // 28:02d}-{1 + (i - 1) % 28:02d}"
        write_run(store, run_id, date, [store_point(run_id, engine, workload(i), 16, 1, ttft,
                                               tpot * math.exp(rng.gauss(0, NOISE)))],
                  con)
        run_ids.append(run_id)
    return run_ids


def noisy(n: int, seed: int, step_at: int | None = None, step: float = STEP) -> list[float]:
    """``n`` values with 2% log-normal noise, ``step`` times higher from run ``step_at``
    (1-based) on."""
    rng = random.Random(seed)
    return [BASE_TTFT * (step if step_at and i >= step_at else 1.0)
            * math.exp(rng.gauss(0, NOISE)) for i in range(1, n + 1)]


@pytest.fixture(scope="module")
def stepped_once(tmp_path_factory) -> tuple[Path, list[str]]:
    store = tmp_path_factory.mktemp("history") / "report" / "_store"
    return store, nightly(store, noisy(RUNS, seed=3, step_at=STEP_RUN))


@pytest.fixture
def stepped(stepped_once, tmp_path) -> tuple[Path, list[str]]:
    """A store of 25 nightly runs whose p99 TTFT is 18% higher from run 21 on (a copy for
    each test, which may add runs to it)."""
    store = tmp_path / "report" / "_store"
    shutil.copytree(stepped_once[0], store)
    return store, stepped_once[1]


# --- the test on values ----------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_step_of_18_percent_is_found_at_its_run(seed):
    values = noisy(RUNS, seed, step_at=STEP_RUN)
    changes = hist.change_points(values, [f"run-{i}" for i in range(1, RUNS + 1)])
    assert len(changes) == 1
    c = changes[0]
    assert (c.index, c.run, c.before, c.after) == (STEP_RUN - 1, f"run-{STEP_RUN}", 20, 5)
    assert c.low < STEP < c.high and c.low > 1.0
    assert c.ratio == pytest.approx(STEP, rel=0.03)
    assert c.p_value == pytest.approx(1 / (hist.PERMUTATIONS + 1))
    assert c.noise_before == pytest.approx(NOISE, rel=0.6)


def test_the_same_values_give_the_same_answer():
    values = noisy(RUNS, 11, step_at=STEP_RUN)
    assert hist.change_points(values) == hist.change_points(values)
    flat = noisy(RUNS, 11)
    assert [hist._test(hist.np.log(hist.np.array(flat)), 999, (5, 0, RUNS))] * 2 == \
        [hist._test(hist.np.log(hist.np.array(flat)), 999, (5, 0, RUNS)) for _ in range(2)]


def test_a_flat_noisy_history_has_no_change_point_at_the_stated_false_alarm_rate():
    """200 flat histories of 25 runs: each flagged with probability about ALPHA (1%), so
    about 2 are expected; 7 or more would happen by chance less than once in 200 suites
    (binomial tail) if the test kept its level."""
    flagged = [seed for seed in range(200) if hist.change_points(noisy(RUNS, 1000 + seed))]
    assert len(flagged) <= 6, flagged
    for seed in range(5):                     # and the first seeds are all clean
        assert hist.change_points(noisy(RUNS, seed)) == []


@pytest.mark.parametrize("where", [0, 6, 12, 18, 24])
@pytest.mark.parametrize("size", [1.3, 0.7, 3.0])
def test_a_single_outlier_run_is_not_a_level_change(where, size):
    values = noisy(RUNS, 21)
    values[where] *= size
    assert hist.change_points(values) == []


def test_two_steps_are_both_found():
    rng = random.Random(5)
    values = [BASE_TTFT * (1.0 if i < 14 else 1.25 if i < 28 else 1.1)
              * math.exp(rng.gauss(0, NOISE)) for i in range(40)]
    changes = hist.change_points(values)
    assert [c.index for c in changes] == [14, 28]
    assert changes[0].ratio == pytest.approx(1.25, rel=0.03)
    assert changes[1].ratio == pytest.approx(1.1 / 1.25, rel=0.03)
    assert (changes[1].before, changes[1].after) == (14, 12)


def test_too_few_runs_cannot_tell():
    values = noisy(hist.MIN_RUNS - 1, 2, step_at=8, step=1.5)
    assert hist.change_points(values) is None          # not [] ("no change")
    assert hist.change_points(noisy(hist.MIN_RUNS, 2)) == []


def test_noise_is_a_robust_relative_spread():
    values = noisy(400, 9)
    assert hist.noise(values) == pytest.approx(NOISE, rel=0.08)
    with_outlier = values[:20] + [values[20] * 5]
    assert hist.noise(with_outlier) == pytest.approx(hist.noise(values[:20]), rel=0.2)
    assert hist.noise(values[:hist.MIN_NOISE_RUNS - 1]) is None
    with pytest.raises(ValueError, match="positive"):
        hist.noise([1.0] * 6 + [0.0])


# --- series from the store ---------------------------------------------------------------

def test_the_store_series_finds_the_step_at_its_run(stepped):
    store, run_ids = stepped
    trends = hist.history(store, metrics=["p99_ttft_ms", "mean_tpot_ms"])
    by_metric = {t.series.metric: t for t in trends}
    assert set(by_metric) == {"p99_ttft_ms", "mean_tpot_ms"}
    ttft = by_metric["p99_ttft_ms"]
    assert ttft.series.run_ids == run_ids
    assert ttft.verdict == LEVEL_CHANGED
    assert [c.run for c in ttft.changes] == [f"nightly-{STEP_RUN}"]
    assert ttft.changes[0].low < STEP < ttft.changes[0].high
    assert by_metric["mean_tpot_ms"].verdict == NO_LEVEL_CHANGE
    assert by_metric["mean_tpot_ms"].changes == []


def test_points_match_by_what_they_measured_not_by_workload_id(tmp_path):
    """Workload ids change halfway (``1k`` then ``in1000-out200``), lengths do not: one
    series; a run whose input length is 50% longer is another series."""
    store = tmp_path / "_store"
    nightly(store, noisy(14, 4), workload=lambda i: "1k" if i <= 7 else "in1000-out200")
    write_run(store, "longer", "2026-03-01",
              [store_point("longer", "vllm", "1k", 16, 1, 300.0, 12.0, input_tokens=1500)])
    series = hist.read_series(store, metrics=["p99_ttft_ms"])
    assert sorted(len(s.runs) for s in series) == [1, 14]
    main_series = next(s for s in series if len(s.runs) == 14)
    assert main_series.workload == "in1000-out200"          # the newest run's id
    # a selection by workload id picks every series with a run of that id
    assert len(hist.read_series(store, metrics=["p99_ttft_ms"], workload="1k")) == 2
    assert len(hist.read_series(store, metrics=["p99_ttft_ms"], load="c32")) == 0
    picked = hist.read_series(store, metrics=["p99_ttft_ms"], point="vllm.in1000-out200.c16")
    assert [len(s.runs) for s in picked] == [14]
    assert hist.read_series(store, metrics=["p99_ttft_ms"], engine="sglang") == []


def test_a_point_found_invalid_is_left_out(stepped):
    """A run whose point the validity check found invalid (its figure in the store's
    figures table, as a build exports it) is not part of the series."""
    store, run_ids = stepped
    figures = [{"id": "point.vllm.1k.c16.r1.validity", "value": INVALID, "unit": "verdict",
                "method": "validity", "sources": []}]
    folder = partition(store, "figures", "nightly-03")
    folder.mkdir(parents=True)
    _write_figures(connect(), figures, folder / "data.parquet")
    (series,) = hist.read_series(store, metrics=["p99_ttft_ms"])
    assert series.run_ids == [r for r in run_ids if r != "nightly-03"]


def test_history_noise_is_close_to_the_generated_noise(stepped):
    store, run_ids = stepped
    key = {"engine": "vllm", "model": "m-8b", "scenario_dataset": "random",
           "max_concurrency_target": 16, "request_rate_target": None, "load": "c16",
           "variant": "", "scenario_input_tokens": 1000.0, "scenario_output_tokens": 200.0}
    # before the step: the 20 runs of the first level
    got = hist.history_noise(store, key, "p99_ttft_ms", f"nightly-{STEP_RUN}")
    assert got == pytest.approx(NOISE, rel=0.35)
    # the same from a noise model that reads the store once for many look-ups
    model = hist.NoiseModel(store, ["p99_ttft_ms", "mean_tpot_ms"])
    assert model.noise(key, "p99_ttft_ms", f"nightly-{STEP_RUN}") == got
    assert model.noise(key, "mean_tpot_ms", f"nightly-{STEP_RUN}") == \
        pytest.approx(NOISE, rel=0.5)
    # after the step: each run is measured from its own level, so the 18% step is not
    # taken for noise (the spread of all 25 values about one median would be about 4%)
    write_run(store, "nightly-26", "2026-02-01",
              [store_point("nightly-26", "vllm", "1k", 16, 1, 236.0, 12.0)])
    after = hist.history_noise(store, key, "p99_ttft_ms", "nightly-26")
    assert after == pytest.approx(NOISE, rel=0.35)
    assert hist.noise(hist.read_series(store, metrics=["p99_ttft_ms"])[0].values) > 1.5 * after
    # too few runs before: cannot tell, None (never 0)
    assert hist.history_noise(store, key, "p99_ttft_ms", "nightly-05") is None
    # another load has no history
    assert hist.history_noise(store, {**key, "max_concurrency_target": 32}, "p99_ttft_ms",
                              "nightly-25") is None


def test_noise_interval_of_a_ratio_of_two_single_runs(stepped):
    store, _ = stepped
    key = hist.PointKey("vllm", "m-8b", "random", 16.0, None, "", "", 1000.0, 200.0)
    noise, runs = hist.NoiseModel(store, ["p99_ttft_ms"]).estimate(key, "p99_ttft_ms",
                                                                    f"nightly-{STEP_RUN}")
    assert runs == 20 and noise == hist.history_noise(store, key, "p99_ttft_ms",
                                                      f"nightly-{STEP_RUN}")
    # exp(± t(19) · σ · √2): σ 2% gives about ±6%
    low, high = hist.noise_interval(1.18, 0.02, 20)
    assert (low, high) == pytest.approx((1.18 * math.exp(-2.093 * 0.02 * math.sqrt(2)),
                                         1.18 * math.exp(2.093 * 0.02 * math.sqrt(2))),
                                        rel=1e-3)
    assert hist.verdict(*hist.noise_interval(1.18, noise, runs), 1.0) == "higher"
    assert hist.verdict(*hist.noise_interval(1.02, noise, runs), 1.0) == "tie"
    assert hist.noise_interval(1.0, 0.02)[1] == pytest.approx(math.exp(1.96 * 0.02 * 2 ** .5),
                                                              rel=1e-3)


def test_history_noise_names_an_unknown_run_or_metric(stepped):
    store, _ = stepped
    key = hist.PointKey("vllm", "m-8b", "random", 16.0, None, "", "", 1000.0, 200.0)
    with pytest.raises(hist.ReportError, match="run nightly-99 is not in the results store"):
        hist.history_noise(store, key, "p99_ttft_ms", "nightly-99")
    with pytest.raises(hist.ReportError, match="unknown metric 'p98_ttft_ms'"):
        hist.history_noise(store, key, "p98_ttft_ms", "nightly-10")
    model = hist.NoiseModel(store, ["p99_ttft_ms"], engine="sglang")
    with pytest.raises(hist.ReportError, match="read engine sglang's points only"):
        model.noise(key, "p99_ttft_ms", "nightly-10")
    with pytest.raises(hist.ReportError, match="'mean_tpot_ms' was not read"):
        model.noise(key, "mean_tpot_ms", "nightly-10")


def test_figures_of_a_trend(stepped):
    store, _ = stepped
    tr = next(t for t in hist.history(store, metrics=["p99_ttft_ms"]))
    figs = {f.id: f for f in hist.history_figures(tr)}
    base = "history.vllm.1k.c16.p99_ttft_ms"
    assert figs[f"{base}.verdict"].value == LEVEL_CHANGED
    assert figs[f"{base}.runs"].value == RUNS
    assert figs[f"{base}.change1.run"].value == f"nightly-{STEP_RUN}"
    assert figs[f"{base}.change1"].value == pytest.approx(tr.changes[0].ratio)
    assert figs[f"{base}.change1.before"].value == 20
    assert figs[f"{base}.value.nightly-03"].sources[0].path == \
        "data/nightly-03/raw/vllm/c16-r1.json"
    assert {f.provenance for f in figs.values()} == {"measured"}
    assert all(hist.ids.well_formed(fid) for fid in figs)


def test_a_reconstruction_in_the_history_is_no_measurement(stepped):
    store, _ = stepped
    write_run(store, "whatif", "2026-02-01",
              [store_point("whatif", "vllm", "1k", 16, 1, 236.0, 12.0)], reconstruction=True)
    tr = hist.history(store, metrics=["p99_ttft_ms"])[0]
    figs = {f.id: f for f in hist.history_figures(tr)}
    base = "history.vllm.1k.c16.p99_ttft_ms"
    assert figs[f"{base}.value.whatif"].provenance == "model-derived"
    assert figs[f"{base}.value.nightly-01"].provenance == "measured"
    assert figs[f"{base}.change1"].provenance == "model-derived"
    assert f"{base}.value.whatif" in figs[f"{base}.change1"].provenance_why


# --- the command line --------------------------------------------------------------------

def test_history_json_from_the_command_line(stepped, capsys):
    store, _ = stepped
    assert main(["history", "--report-root", str(store.parent), "--metric", "p99_ttft_ms",
                 "--metric", "mean_tpot_ms", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    by_metric = {t["metric"]: t for t in out["trends"]}
    ttft = by_metric["p99_ttft_ms"]
    assert ttft["verdict"] == LEVEL_CHANGED and len(ttft["runs"]) == RUNS
    (change,) = ttft["changes"]
    assert change["run"] == f"nightly-{STEP_RUN}" and change["before"] == 20
    assert change["low"] < STEP < change["high"]
    assert by_metric["mean_tpot_ms"]["verdict"] == NO_LEVEL_CHANGE
    assert out["test"]["alpha"] == hist.ALPHA


def test_history_text_says_where_and_against_what_noise(stepped, capsys):
    store, _ = stepped
    assert main(["history", "--report-root", str(store.parent), "--metric",
                 "p99_ttft_ms"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "from run" in x)
    assert line.startswith("p99_ttft_ms vllm 1k c16: rose ")
    assert f"from run nightly-{STEP_RUN} on" in line
    assert "outside the noise" in line and "of the 20 runs before" in line
    assert out.count("nightly-") >= RUNS                # the series is printed too


def test_history_markdown_and_cannot_tell(tmp_path, capsys):
    store = tmp_path / "report" / "_store"
    nightly(store, noisy(5, 1))
    assert main(["history", "--report-root", str(store.parent), "--metric", "p99_ttft_ms",
                 "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| metric |" in out
    assert f"| p99_ttft_ms | vllm 1k c16 | 5 | {CANNOT_TELL} |" in out
    assert f"fewer than {hist.MIN_RUNS} runs" in out


def test_history_chart_marks_the_change(stepped, tmp_path, capsys):
    store, _ = stepped
    out_dir = tmp_path / "charts"
    assert main(["history", "--report-root", str(store.parent), "--metric", "p99_ttft_ms",
                 "--chart", str(out_dir)]) == 0
    (svg,) = sorted(out_dir.glob("*.svg"))
    assert svg.name == "vllm-1k-c16-p99_ttft_ms.svg"
    text = svg.read_text()
    assert text.startswith("<svg") and f"nightly-{STEP_RUN}" in text
    first = text
    assert main(["history", "--report-root", str(store.parent), "--metric", "p99_ttft_ms",
                 "--chart", str(out_dir)]) == 0
    assert svg.read_text() == first                      # the same bytes again
    assert str(svg) in capsys.readouterr().out


def test_history_errors_are_one_line(tmp_path, stepped, capsys):
    store, _ = stepped
    assert main(["history", "--report-root", str(store.parent), "--metric", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown metric 'nope'" in err
    assert main(["history", "--report-root", str(store.parent), "--engine", "sglang"]) == 1
    assert "no series" in capsys.readouterr().err
    assert main(["history", "--report-root", str(tmp_path / "empty")]) == 1
    assert "the store is empty" in capsys.readouterr().err


@pytest.mark.skipif(not (Path(__file__).resolve().parents[1] / ".venv" / ".installed").exists(),
                    reason="make history needs the project's .venv (make install); a git "
                           "worktree without one would create it")
@pytest.mark.parametrize("var", ["WORKLOAD", "LOAD", "METRIC"])
def test_make_history_passes_its_values_as_text_not_shell_code(project, tmp_path, var):
    from .test_cli import _make

    planted = tmp_path / "planted"
    for payload in (f"x\"; touch {planted}; echo \"", f"$(shell touch {planted})",
                    f"$$(touch {planted})", f"`touch {planted}`"):
        _make(project, "history", f"{var}={payload}")
        assert not planted.exists(), payload
