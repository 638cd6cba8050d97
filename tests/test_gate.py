"""The regression gate (``compare --gate``), matching points by what they measured, the
store's numeric load and validity columns, and the comparison's overlaid load curves.

The runs are the real vllm-ascend request-rate sweep the repository carries
(``data/2025-05-qwen7b-ascend-qps``: four unchanged vLLM benchmark_serving result files,
rates 1, 4, 16 and unbounded, one repeat each; see its run.yaml ``sources``), ingested and
exported straight into a store (no notebook, no report: a second per run). A "changed run"
is that run's derived points table with some metrics scaled, and "repeats" are copies of
each point with every metric scaled by a stated factor: they are made-up changes to real
numbers, chosen to show what the gate does with them, not measurements.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from benchreport.analyses.compare import METRICS, compare_runs, record
from benchreport.analyses.matching import Group, match_groups
from benchreport.cli import main
from benchreport.core.files import write_json
from benchreport.core.store import run_query, store_path
from benchreport.core.verdicts import IMPROVED, NO_INTERVAL, REGRESSED, SAME_DATA, TIE_IN_NOISE
from benchreport.ingest.io import load_run
from benchreport.ingest.run import ingest_run, save_ingest
from benchreport.pipeline.store import export_run

from .conftest import ROOT

ASCEND = ROOT / "data" / "2025-05-qwen7b-ascend-qps"
WORKLOAD = "in218-out223"
LOADS = ["r1", "r4", "r16", "rinf"]
MEASURED = [m for m in METRICS if m != "mean_e2el_ms"]   # the files hold no mean E2E latency


def _stored(root: Path, run_id: str, *, scale: dict[str, float] | None = None,
            repeats: tuple[float, ...] = (1.0,), workload: str | None = None,
            gate: str | None = None) -> Path:
    """The ascend sweep as run ``run_id`` in ``root``'s store: metrics scaled by ``scale``,
    each point repeated once per factor of ``repeats`` (every metric times it), the
    workload renamed, a ``gate:`` block appended to its run.yaml. Returns the store."""
    data = root / "data" / run_id
    shutil.copytree(ASCEND, data)
    text = (data / "run.yaml").read_text()
    if workload:
        text = text.replace(f'id: "{WORKLOAD}"', f'id: "{workload}"')
    (data / "run.yaml").write_text(text + (gate or ""))
    run = load_run(run_id, root / "data", root / "report")
    ing = ingest_run(run)
    save_ingest(run, ing)
    from benchreport.analyses.curves import validity_figures

    _, figures = validity_figures(run, ing)
    write_json(run.paths.figures_json, {"figures": [f.to_json() for f in figures]})
    if scale or repeats != (1.0,):
        _rewrite_points(run.paths.tables / "points.parquet", run_id, scale or {}, repeats)
    return export_run(run, store_path(root / "report"))


def _rewrite_points(path: Path, run_id: str, scale: dict[str, float],
                    repeats: tuple[float, ...]) -> None:
    copies = []
    for i, factor in enumerate(repeats, start=1):
        cols = ", ".join(f"{m} * {scale.get(m, 1.0) * factor} AS {m}" for m in METRICS)
        copies.append(f"SELECT * REPLACE ({cols}, {i} AS repeat, "
                      f"regexp_replace(point, '\\.r1$', '.r{i}') AS point, "
                      f"'{run_id}' || sha256 AS sha256) FROM '{path}'")
    tmp = path.with_suffix(".tmp")
    duckdb.execute(f"COPY ({' UNION ALL '.join(copies)}) TO '{tmp}' (FORMAT parquet)")
    tmp.replace(path)


def _gate(root: Path, capsys, *args: str) -> tuple[int, str]:
    code = main(["compare", "--gate", *args, "--report-root", str(root / "report"),
                 "--data-root", str(root / "data")])
    return code, capsys.readouterr().out


FLOORS = "\n".join(["noise:"] + [f"  {m}: 0.05" for m in METRICS]) + "\n"


@pytest.fixture(scope="module")
def ci_store(tmp_path_factory):
    """A base run and a changed run: p99 TTFT 20% higher at every load, every other metric
    1% higher (within a 5% floor); one repeat each, so the floors decide."""
    root = tmp_path_factory.mktemp("gate")
    _stored(root, "base")
    _stored(root, "changed", scale={m: 1.2 if m == "p99_ttft_ms" else 1.01 for m in METRICS})
    (root / "gate.yaml").write_text(FLOORS)
    return root


def test_a_metric_twenty_percent_worse_fails_the_gate_naming_only_it(ci_store, capsys):
    root = ci_store
    code, out = _gate(root, capsys, "base", "changed", "--gate-file", str(root / "gate.yaml"))
    assert code == 1
    assert out.startswith("gate FAIL (exit 1): changed against base: 28 gated")
    assert "worse: p99_ttft_ms" in out
    worse = [line for line in out.splitlines() if line.endswith("<-- worse")]
    assert len(worse) == 4 and all(" p99_ttft_ms: " in line for line in worse)

    code, out = _gate(root, capsys, "base", "changed", "--gate-file", str(root / "gate.yaml"),
                      "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["result"] == "fail" and doc["exit_code"] == 1
    assert doc["worse"] == ["p99_ttft_ms"]
    assert doc["counts"] == {"better": 0, "worse": 4, "within noise": 24, "cannot tell": 0,
                             "same data": 0}
    rows = {(r["load"], r["metric"]): r for r in doc["rows"]}
    assert len(rows) == len(LOADS) * len(MEASURED)
    p99 = rows[("r16", "p99_ttft_ms")]
    assert p99["verdict"] == "worse" and p99["noise_source"] == "floor"
    assert p99["ratio"] == pytest.approx(1.2) and p99["base"] == pytest.approx(215.3527, 1e-4)
    assert (p99["low"], p99["high"]) == (pytest.approx(1.15), pytest.approx(1.25))
    thr = rows[("r16", "output_throughput")]
    assert thr["verdict"] == "within noise" and thr["ratio"] == pytest.approx(1.01)
    assert [(m["base"], m["run"]) for m in doc["matching"][0]["matched"]] == [
        (f"vLLM {WORKLOAD} {load}", f"vLLM {WORKLOAD} {load}") for load in LOADS]
    assert {r["metric"] for r in doc["not_judged"]} == {"mean_e2el_ms"}

    code, out = _gate(root, capsys, "base", "changed", "--gate-file", str(root / "gate.yaml"),
                      "--format", "markdown")
    lines = out.splitlines()
    assert code == 1 and lines[0] == "### benchreport gate: fail"
    header = lines.index("| run | point | metric | base | new | ratio (interval) | verdict "
                         "| noise |")
    table = [line for line in lines[header + 2:] if line.startswith("| ")]
    assert len(table) == len(LOADS) * len(MEASURED)
    flagged = [line for line in table if "**worse**" in line]
    assert [line.split(" | ")[2] for line in flagged] == ["p99_ttft_ms"] * 4
    assert "| changed | vllm in218-out223 r16 | p99_ttft_ms | 215.4 | 258.4 | 1.200 " \
           "(1.150–1.250) | **worse** | floor ±5% |" in table
    assert "**Overall: fail** (exit 1)" in lines


def test_the_floors_come_from_the_new_runs_run_yaml_when_no_gate_file(tmp_path, capsys):
    gate = "gate:\n  noise: {p99_ttft_ms: 0.25, output_throughput: 0.05}\n" \
           "  metrics: [p99_ttft_ms, output_throughput]\n"
    _stored(tmp_path, "base")
    _stored(tmp_path, "changed", scale={"p99_ttft_ms": 1.2}, gate=gate)
    code, out = _gate(tmp_path, capsys, "base", "changed", "--format", "json")
    doc = json.loads(out)
    # a 20% rise inside a declared 25% floor is within noise; only the two gated metrics
    assert code == 0 and doc["result"] == "pass"
    assert doc["gated_metrics"] == ["output_throughput", "p99_ttft_ms"]
    assert {r["verdict"] for r in doc["rows"]} == {"within noise"}
    assert doc["noise_floors_from"]["changed"].endswith("data/changed/run.yaml")


def test_with_repeats_a_two_percent_change_is_within_noise(tmp_path, capsys):
    jitter = (0.98, 1.0, 1.02)
    _stored(tmp_path, "base", repeats=jitter)
    _stored(tmp_path, "plus2", repeats=jitter, scale={m: 1.02 for m in METRICS})
    # a floor far below the change: the repeats' intervals decide, not the floor
    (tmp_path / "tight.yaml").write_text("noise: {p99_ttft_ms: 0.001}\n")
    code, out = _gate(tmp_path, capsys, "base", "plus2", "--gate-file",
                      str(tmp_path / "tight.yaml"), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["result"] == "pass"
    assert {(r["verdict"], r["noise_source"]) for r in doc["rows"]} == {
        ("within noise", "repeats")}
    row = next(r for r in doc["rows"] if r["metric"] == "p99_ttft_ms" and r["load"] == "r4")
    assert row["ratio"] == pytest.approx(1.02)
    assert row["low"] < 1.0 < row["high"] < 1.1


def test_without_repeats_or_a_floor_the_gate_cannot_tell_and_says_so(tmp_path, capsys):
    _stored(tmp_path, "base")
    _stored(tmp_path, "changed", scale={"p99_ttft_ms": 1.2})
    code, out = _gate(tmp_path, capsys, "base", "changed")
    assert code == 0
    assert out.startswith("gate INCONCLUSIVE (exit 0)")
    assert "28 could not be judged (no repeats in both runs and no noise floor declared)" \
        in out
    assert "cannot tell [none]" in out and "within noise" not in out
    code, _ = _gate(tmp_path, capsys, "base", "changed", "--strict")
    assert code == 1


@pytest.mark.parametrize("args, says", [
    (["base", "nope"], "run nope is not in the results store"),
    (["base", "changed", "--gate-file", "missing.yaml"], "missing.yaml not found"),
    (["base", "changed", "--gate-file", "bad.yaml"], "gate.noise names unknown metric "
                                                      "'p99_ttft'"),
    (["base", "changed", "--gate-file", "big.yaml"], "gate.noise.duration must be a "
                                                      "fraction from 0 to below 1"),
    (["base", "changed", "--tolerance", "2"], "--tolerance must be a fraction"),
    (["base"], "a comparison needs two or more runs"),
])
def test_bad_input_exits_2_with_one_line(ci_store, capsys, monkeypatch, args, says):
    monkeypatch.chdir(ci_store)
    (ci_store / "bad.yaml").write_text("noise: {p99_ttft: 0.05}\n")
    (ci_store / "big.yaml").write_text("noise: {duration: 5}\n")
    code = main(["compare", "--gate", *args, "--report-root", "report"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and says in err
    assert err.count("\n") == 1


def test_gate_options_without_gate_are_refused(capsys):
    assert main(["compare", "a", "b", "--format", "json"]) == 2
    assert "go with --gate" in capsys.readouterr().err


# --- matching by what was measured ---------------------------------------------------------

def test_two_real_sweeps_with_different_workload_ids_match_point_by_point(tmp_path, capsys):
    """The same four real result files in two runs whose run.yaml names the workload
    differently (``in218-out223`` and ``nightly``): matched by engine, model, rate and
    lengths, every point pairs with its own rate. The files are the same bytes, so every
    verdict is "same data": the test shows the matching, not a change."""
    store = _stored(tmp_path, "ascend")
    _stored(tmp_path, "nightly", workload="nightly")
    _, rows = run_query(store, "select distinct run_id, workload from points order by 1")
    assert rows == [("ascend", WORKLOAD), ("nightly", "nightly")]
    comp = compare_runs(store, ["ascend", "nightly"])
    (matching,) = comp.matchings
    assert [(m.base.key[2], m.other.key) for m in matching.matched] == [
        (load, ("vllm", "nightly", load)) for load in LOADS]
    assert not matching.unmatched
    assert matching.lines()[1] == (f"matched vLLM {WORKLOAD} r4 (r=4) of ascend with "
                                   "vLLM nightly r4 of nightly")
    assert {r["verdict"] for r in comp.matched} == {SAME_DATA}
    assert len(comp.matched) == len(LOADS) * len(MEASURED)
    code, out = _gate(tmp_path, capsys, "ascend", "nightly", "--format", "json")
    assert code == 0 and json.loads(out)["counts"]["same data"] == 28


def _group(run: str, load: str, *, rate: float | None = None, conc: float | None = None,
           length: float = 218.0, engine: str = "vLLM", model: str = "Qwen2.5-7B") -> Group:
    return Group(run=run, key=("vllm", "w", load), engine=engine, model=model.lower(),
                 concurrency=conc, rate=rate, input_tokens=length, output_tokens=223.0,
                 variant="")


def test_what_did_not_match_says_why():
    base = {g.key: g for g in (_group("A", "c16", conc=16), _group("A", "r4", rate=4.0),
                               _group("A", "r1", rate=1.0))}
    other = {g.key: g for g in (_group("B", "c8", conc=8), _group("B", "r4", rate=4.0,
                                                                   length=1024.0),
                                _group("B", "r1", rate=1.0, length=230.0))}
    m = match_groups(base, other, tolerance=0.10)
    # 218 against 230 is within 10% of the larger; 218 against 1024 is not
    assert [(x.base.key[2], x.other.key[2]) for x in m.matched] == [("r1", "r1")]
    why = {(g.run, g.key[2]): reason for g, reason in m.unmatched}
    assert why[("A", "c16")] == "no point in run B at this load (B has c=8, r=1, r=4)"
    assert why[("A", "r4")] == "input length 218 vs 1024 beyond 10%"
    assert why[("B", "c8")] == "no point in run A at this load (A has c=16, r=1, r=4)"
    other_engine = {g.key: g for g in (_group("B", "r1", rate=1.0, engine="SGLang"),)}
    (_, reason), *_ = match_groups(base, other_engine).unmatched
    assert reason == "no vLLM point in run B"
    other_model = {g.key: g for g in (_group("B", "r1", rate=1.0, model="Llama-3-8B"),)}
    assert ("r1", "model qwen2.5-7b vs llama-3-8b") in [
        (g.key[2], r) for g, r in match_groups(base, other_model).unmatched]
    # twice the prompts at the same rate is no like-for-like duration
    asked = {g.key: g for g in (dataclasses.replace(_group("A", "r1", rate=1.0), requests=200.0),)}
    twice = {g.key: g for g in (dataclasses.replace(_group("B", "r1", rate=1.0), requests=400.0),)}
    assert [r for _, r in match_groups(asked, twice).unmatched][0] == (
        "200 vs 400 requests asked (a duration and its throughputs depend on how many)")


# --- the store's load and validity columns ----------------------------------------------

def test_points_have_numeric_sortable_loads_and_their_validity(ci_store):
    store = store_path(ci_store / "report")
    _, rows = run_query(store, "select load, load_rate, load_concurrency, load_value, "
                               "validity, valid from points where run_id = 'base' "
                               "order by load_value")
    assert [r[0] for r in rows] == LOADS           # text would sort r1, r16, r4, rinf
    assert [r[1] for r in rows] == [1.0, 4.0, 16.0, float("inf")]
    assert {r[2] for r in rows} == {None}
    # the base run's validity figures, as its build would have made them
    assert all(r[4] is not None and r[5] == (r[4] != "invalid") for r in rows)


# --- N runs: the curves overlaid -----------------------------------------------------------

def test_three_runs_overlay_their_curves_one_colour_each(ci_store, tmp_path):
    from benchreport.core.figures import Figure
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.charts import overlay_charts, run_colours

    root = tmp_path
    shutil.copytree(ci_store / "report" / "_store", root / "report" / "_store", symlinks=True)
    _stored(root, "faster", scale={"output_throughput": 1.3, "p99_ttft_ms": 0.8})
    comp = compare_runs(store_path(root / "report"), ["base", "changed", "faster"])
    rec = json.loads(json.dumps(record(comp)))
    (curve,) = rec["curves"]
    assert (curve["engine"], curve["workload"]) == ("vllm", WORKLOAD)
    assert [r["run"] for r in curve["runs"]] == ["base", "changed", "faster"]
    assert all([p["load"] for p in r["points"]] == LOADS for r in curve["runs"])
    registry: dict[str, Figure] = {f.id: f for f in comp.figures}
    faster = curve["runs"][2]["points"][2]
    assert registry[faster["output_throughput"]].value == pytest.approx(1002.1253 * 1.3)
    t = load_catalogue(ROOT / "templates" / "labels", "en")
    ((_, chart),) = overlay_charts(rec, registry, t, lambda c: "vLLM, 218 → 223")
    colours = run_colours(["base", "changed", "faster"])
    assert len(set(colours.values())) == 3
    svg = str(chart)
    for run_id, colour in colours.items():
        assert f"{run_id} output_throughput:" in svg        # the text alternative
        assert f"stroke: {colour}" in svg                   # its own line colour
    assert not chart.overlaps
    # one repeat each and no floor: the report, like the gate, gives a 20% fall of p99
    # TTFT no verdict
    verdicts = {(r["run"], r["load"], r["metric"]): r["verdict"] for r in comp.matched
                if r["base"] == "base"}
    assert verdicts[("faster", "r4", "p99_ttft_ms")] == NO_INTERVAL


def test_a_run_stored_by_the_previous_schema_is_named_for_a_rebuild(ci_store, tmp_path, capsys):
    """A partition written before the load and validity columns (store version 2) is
    refused as a whole run, never read with those columns missing."""
    from benchreport.core.store import STORE_VERSION, partition

    store = tmp_path / "report" / "_store"
    shutil.copytree(ci_store / "report" / "_store", store, symlinks=True)
    part = partition(store, "runs", "changed") / "data.parquet"
    old = part.with_name("old.parquet")
    duckdb.execute(f"COPY (SELECT * REPLACE (2 AS store_version) FROM '{part}') TO '{old}' "
                   "(FORMAT parquet)")
    part.unlink()
    old.rename(part)
    code = main(["compare", "--gate", "base", "changed", "--report-root",
                 str(tmp_path / "report")])
    err = capsys.readouterr().err
    assert STORE_VERSION == 3 and code == 2
    assert "run changed is in the store with schema version 2" in err
    assert "make report RUN=changed" in err


# --- the verdict function itself -------------------------------------------------------------

@pytest.mark.parametrize("kwargs, source, outcome", [
    # repeats first: three each, a 2% rise with a few percent of spread holds 1
    ({"base": [98, 100, 102], "new": [100, 102, 104]}, "repeats", TIE_IN_NOISE),
    # one repeat: a declared floor decides (lower is better here: 10% higher is worse)
    ({"base": [100], "new": [110], "floor": 0.05}, "floor", REGRESSED),
    ({"base": [100], "new": [104], "floor": 0.05}, "floor", TIE_IN_NOISE),
    # the history's noise, when a history model gives one and no floor is declared
    ({"base": [100], "new": [90], "history": 0.05}, "history", IMPROVED),
    ({"base": [100], "new": [110], "floor": 0.2, "history": 0.01}, "floor", TIE_IN_NOISE),
    # paired requests only when nothing else applies
    ({"base": [100], "new": [110], "pairs": lambda: (1.08, 1.12)}, "requests", REGRESSED),
    ({"base": [100], "new": [110]}, "none", NO_INTERVAL),
    ({"base": [100], "new": [100], "same": True}, "same data", SAME_DATA),
    # two repeats far apart give an interval that cannot tell 20% from nothing: the
    # declared floor decides (a newcomer's 20% regression passed as "within noise")
    ({"base": [100, 160], "new": [120, 192], "floor": 0.05}, "floor", REGRESSED),
    ({"base": [100, 160], "new": [120, 192]}, "none", NO_INTERVAL),
])
def test_judge_takes_the_first_noise_source_available(kwargs, source, outcome):
    from benchreport.analyses.gate import judge

    j = judge(kwargs.pop("base"), kwargs.pop("new"), False, **kwargs)
    assert (j.source, j.outcome) == (source, outcome)


def test_a_history_noise_model_plugs_in_per_point_and_metric(ci_store):
    """The hook a run-history noise model will use: a function of the base run's point
    group and the metric. Here a stand-in says p99 TTFT varies by 30% at rates of 4 or
    more and knows nothing else: the 20% rise is within that noise there, and the other
    points and metrics have no verdict (no repeats, no floor)."""
    from benchreport.analyses.gate import Noise

    seen = []

    def history(group, metric):
        seen.append((group.run, group.engine, group.rate, metric))
        return 0.3 if metric == "p99_ttft_ms" and group.rate >= 4 else None

    comp = compare_runs(store_path(ci_store / "report"), ["base", "changed"],
                        noise={"changed": Noise(history=history, requests=False)})
    p99 = {r["load"]: (r["verdict"], r["source"]) for r in comp.matched
           if r["metric"] == "p99_ttft_ms"}
    assert p99 == {"r1": (NO_INTERVAL, "none"), "r4": (TIE_IN_NOISE, "history"),
                   "r16": (TIE_IN_NOISE, "history"), "rinf": (TIE_IN_NOISE, "history")}
    assert ("base", "vLLM", 16.0, "p99_ttft_ms") in seen


@pytest.mark.parametrize("step, code, verdict", [(1.20, 1, "worse"), (1.01, 0, "within noise")])
def test_without_repeats_or_floors_the_history_is_the_noise(tmp_path, capsys, step, code,
                                                            verdict):
    """Twenty nightly runs of one point (2% noise), then a run with p99 TTFT ``step`` times
    the last one's: with no repeats and no floor declared, the gate takes the noise of p99
    TTFT from the history before the new run."""
    from tests.test_history import nightly, noisy

    store = tmp_path / "report" / "_store"
    values = noisy(20, seed=11)
    runs = nightly(store, values + [values[-1] * step])
    gate_file = tmp_path / "gate.yaml"
    gate_file.write_text("metrics: [p99_ttft_ms]\n")
    got = main(["compare", "--gate", runs[-2], runs[-1], "--gate-file", str(gate_file),
                "--format", "json", "--report-root", str(tmp_path / "report"),
                "--data-root", str(tmp_path / "data")])
    out = json.loads(capsys.readouterr().out)
    assert got == code
    [row] = out["rows"]
    assert row["metric"] == "p99_ttft_ms" and row["verdict"] == verdict
    assert row["noise_source"] == "history"
    # 2% noise per run: the interval of a ratio of two single runs is t · σ · √2 at the
    # gate's level (99.9%, for many points × metrics at once: t ≈ 3.9 with 19 degrees of
    # freedom), about ±12%
    assert 0.09 < row["noise"] < 0.16
    assert row["ratio"] == pytest.approx(step)


def test_a_history_too_short_for_a_noise_estimate_cannot_tell(tmp_path, capsys):
    from tests.test_history import nightly, noisy

    values = noisy(4, seed=5)
    runs = nightly(tmp_path / "report" / "_store", values + [values[-1] * 1.3])
    (tmp_path / "gate.yaml").write_text("metrics: [p99_ttft_ms]\n")
    got = main(["compare", "--gate", runs[-2], runs[-1], "--gate-file", str(tmp_path / "gate.yaml"),
                "--format", "json", "--report-root", str(tmp_path / "report"),
                "--data-root", str(tmp_path / "data")])
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert got == 0 and row["verdict"] == "cannot tell" and row["noise_source"] == "none"


def test_few_runs_of_history_screen_out_no_run_and_a_flat_history_says_nothing(tmp_path,
                                                                                 capsys):
    """Six earlier runs of 2% noise, one of them 2.7σ out, were once read as 1% noise (that
    run screened out as an outlier), and the gate failed a run that was only noise; and a
    history whose runs all read the same numbers gave a noise of 0, so any change failed.
    Now fewer runs than a change-point test needs are all kept, and no variation at all is
    "cannot tell"."""
    from benchreport.analyses.history import noise
    from tests.test_history import nightly

    values = [1000.0, 1020.0, 985.0, 1010.0, 951.65, 1005.0]
    assert noise(values) > 0.02
    runs = nightly(tmp_path / "report" / "_store", [200.0] * 8 + [200.4])
    (tmp_path / "gate.yaml").write_text("metrics: [p99_ttft_ms]\n")
    got = main(["compare", "--gate", runs[-2], runs[-1], "--gate-file", str(tmp_path / "gate.yaml"),
                "--format", "json", "--report-root", str(tmp_path / "report"),
                "--data-root", str(tmp_path / "data")])
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert got == 0 and row["verdict"] == "cannot tell"


def test_a_workload_renamed_is_no_factor_of_the_comparison(tmp_path):
    """The same files under another workload id: the points match, and the comparison does
    not put the changes down to the rename."""
    from benchreport.analyses.compare import changes, load_stored

    _stored(tmp_path, "qa")
    _stored(tmp_path, "qd", workload="nightly")
    a, d = load_stored(store_path(tmp_path / "report"), ["qa", "qd"])
    assert [c["group"] for c in changes(a, d) if c["group"] == "workload"] == []


def test_json_outputs_are_strict_json_with_an_unbounded_rate(ci_store, capsys):
    """An unbounded request rate is infinite: the JSON says "inf", never Infinity."""
    assert main(["query", "select load, load_rate from points where load = 'rinf' limit 1",
                 "--format", "json", "--report-root", str(ci_store / "report")]) == 0
    assert json.loads(capsys.readouterr().out, parse_constant=lambda c: 1 / 0) == [
        {"load": "rinf", "load_rate": "inf"}]
