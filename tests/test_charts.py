"""Load-curve and Pareto charts draw only what was measured: no chart of one load, no
panel of a metric no point measured, the rate reached where it differs from the one asked,
the unbounded load set apart and named, a legend of median and p99 lines, and not one
matplotlib warning."""

import re
import warnings
from pathlib import Path

import pytest

from benchreport.analyses.curves import campaign_figures, campaign_workloads
from benchreport.core import ids
from benchreport.core.figures import Figure
from benchreport.core.i18n import load_catalogue
from benchreport.core.runmeta import load_run
from benchreport.ingest.run import ingest_run
from benchreport.publish import charts

from .conftest import REAL_SAMPLES, needs_samples

pytestmark = needs_samples


def _registry(tmp_path: Path, run_id: str, folder: Path):
    """init a real sample folder, read it and make its campaign figures, as the points
    notebook does (no build: the charts need only the figures)."""
    from benchreport.cli import main

    data = tmp_path / "data"
    assert main(["init", run_id, str(folder), "--data-root", str(data)]) == 0
    run = load_run(run_id, data, tmp_path / "report")
    campaign = campaign_figures(run, campaign_workloads(ingest_run(run)))
    return run, {f.id: f for f in campaign.figures}


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("charts")
    return {name: _registry(tmp / name, name, REAL_SAMPLES / name)
            for name in ("sglang-multi", "vllm-sweep", "aiperf")}


def _draw(run, registry, project, lang="en"):
    t = load_catalogue(project / "templates" / "labels", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # any matplotlib warning fails the test
        return charts.curve_charts(run, registry, t), charts.pareto_charts(run, registry, t), t


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_saturated_rate_sweep_is_drawn_against_the_rate_it_reached(samples, project, lang):
    run, registry = samples["sglang-multi"]
    curves, pareto, t = _draw(run, registry, project, lang)
    assert len(curves) == 1 and not curves[0].overlaps
    svg = str(curves[0])
    assert t["chart.achieved_rate"] in svg
    # the responses were not streamed: no TTFT and no TPOT, E2E latency drawn
    assert t["metric.e2el"] in svg and t["metric.tpot"] not in svg
    assert t["metric.ttft"] not in svg
    # every load keeps its asked rate beside its dot, the saturated ones marked
    for asked in ("2", "100", "1000"):
        assert f">{asked}<" in svg
    assert t["campaign.saturated_mark"] in svg
    # no p99 in the file: no p99 entry in the legend
    assert ">p99<" not in svg
    # no TPOT, so no interactivity, so no Pareto chart (it would be empty axes)
    assert pareto == []


def test_one_load_gets_no_curve_and_the_unbounded_rate_is_named(samples, project):
    run, registry = samples["vllm-sweep"]
    curves, pareto, t = _draw(run, registry, project)
    # two workloads: the QPS sweep (4 rates) and the c2 repeats (one load): one chart each
    assert len(curves) == 1 and len(pareto) == 1
    svg = str(curves[0])
    assert t["chart.unbounded"] in svg and t["chart.achieved_rate"] in svg
    assert t["chart.median"] in svg and ">p99<" in svg
    assert [c.overlaps for c in curves + pareto] == [(), ()]
    # r16 lies off the frontier: it is named too, in grey
    assert "r16" in str(pareto[0]) and "r16 (" in pareto[0].__html__().split("aria-label")[1]


def test_a_sweep_without_tpot_has_no_pareto_chart(samples, project):
    run, registry = samples["aiperf"]
    curves, pareto, _ = _draw(run, registry, project)
    assert len(curves) == 1 and pareto == []


def _figure(load, x, metric, value, kind, **extra):
    return Figure(id=ids.curve("w", "vllm", load, metric), value=value, unit="ms", decimals=1,
                  method="made up for the test",
                  context={"engine": "vllm", "variant": "", "workload": "w", "kind": kind,
                           "load": load, "x": x, "metric": metric, "n": extra.get("n", 1),
                           "low": extra.get("low"), "high": extra.get("high")})


def test_an_asked_rate_spanning_decades_gets_a_log_axis_and_the_unbounded_set_apart(
        samples, project):
    run, _ = samples["vllm-sweep"]
    t = load_catalogue(project / "templates" / "labels", "en")
    loads = (("r1", 1.0), ("r10", 10.0), ("r100", 100.0), ("rinf", None))
    registry = {f.id: f for load, x in loads for f in (
        _figure(load, x, "output_throughput", 100.0 + (x or 1000.0), "rate"),
        _figure(load, x, "median_ttft_ms", 50.0 + (x or 1000.0), "rate"))}
    axis = charts._load_axis(charts._campaign_series(registry)["w"], t)
    # no achieved rate in the figures: the asked one, on a log scale, unbounded at 4× the top
    assert axis.log and axis.label == t["chart.offered_rate"]
    assert axis.ticks == [(1.0, "1"), (10.0, "10"), (100.0, "100"), (400.0, "unbounded")]
    assert axis.split == pytest.approx(200.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (chart,) = charts.curve_charts(run, registry, t)
    assert "unbounded" in str(chart) and not chart.overlaps


def test_error_bars_need_three_repeats():
    two = _figure("c1", 1.0, "median_ttft_ms", 10.0, "concurrency", n=2, low=0.1, high=900.0)
    three = _figure("c2", 2.0, "median_ttft_ms", 10.0, "concurrency", n=3, low=8.0, high=13.0)
    assert charts._bars([(1.0, two)]) is None
    assert charts._bars([(2.0, three)]) == [[2.0], [3.0]]
    assert charts._bars([(1.0, two), (2.0, three)]) is None


def test_a_server_view_without_kv_usage_has_only_the_waiting_panel(samples, project):
    run, _ = samples["vllm-sweep"]
    t = load_catalogue(project / "templates" / "labels", "en")
    wid = run.meta.workloads[0].id
    rows = [{"workload": wid, "engine": "vllm", "ts": f"2025-05-01T10:00:0{i}",
             "waiting": i, "kv_usage": None} for i in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg = str(charts.server_chart(run, rows, t))
    assert t["chart.waiting"] in svg and t["chart.kv_usage"] not in svg
    assert charts.server_chart(run, [dict(r, waiting=None) for r in rows], t) is None


@pytest.mark.slow
def test_the_decode_chart_speaks_of_a_steady_span_only_where_it_draws_one(tmp_path, project):
    from benchreport.cli import main

    folder = REAL_SAMPLES / "paired" / "inferencemax-glm51-mi355x-sglang-aiperf"
    assert main(["init", "im", str(folder), "--data-root", str(tmp_path / "data")]) == 0
    run = load_run("im", tmp_path / "data", tmp_path / "report")
    ing = ingest_run(run)
    t = load_catalogue(project / "templates" / "labels", "en")
    plain = charts.decode_chart(run, ing, {}, t)
    assert t["chart.decode_time_plain"] in str(plain) and t["chart.decode_time"] not in str(plain)
    w, e = ing.windows[0].workload, ing.windows[0].engine
    start = ing.windows[0].start
    span = {ids.decode(w, e, "window"): Figure(
                id=ids.decode(w, e, "window"), value="", unit="time", method="test",
                context={"start": start, "end": start}),
            ids.decode(w, e, "min"): Figure(id=ids.decode(w, e, "min"), value=1.0,
                                            unit="tok/s", method="test"),
            ids.decode(w, e, "max"): Figure(id=ids.decode(w, e, "max"), value=2.0,
                                            unit="tok/s", method="test")}
    assert t["chart.decode_time"] in str(charts.decode_chart(run, ing, span, t))


@pytest.mark.parametrize("label", ["64K at $2.5 and $3 per GPU-hour",
                                   "64K (costs in $, 5% of budget in $)"])
def test_dollars_in_chart_text_are_dollars_not_tex(label):
    """Workload labels and engine names come from run.yaml: matplotlib's math parser used to
    drop the dollars and set the middle in italics, or crash the build."""
    import io

    from benchreport.publish.charts import _mpl

    _mpl()
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.set_title(label)
    ax.set_xlabel(label)
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    svg = re.sub(r"<!--.*?-->", "", buf.getvalue(), flags=re.S)    # the source, as comments
    assert svg.count(f">{label}</text>") == 2
