"""Three charts checked on the matplotlib objects they draw (captured before the SVG):
the decode chart's steady span starts where its first steady record's interval does, the
prefill chart keeps batches shared with other requests apart from the request's own, and
the acceptance bars rise from 1, the accepted length's floor."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchreport.core import ids
from benchreport.core.figures import Figure
from benchreport.core.i18n import load_catalogue
from benchreport.core.records import BenchWindow
from benchreport.core.runmeta import Engine, Workload
from benchreport.publish import charts

ROOT = Path(__file__).resolve().parent.parent
START = dt.datetime(2026, 11, 20, 10, 12, 5)


@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib figures the charts hand to ``_svg``."""
    figs = []
    real = charts._svg

    def keep(fig, alt):
        figs.append(fig)
        return real(fig, alt)
    monkeypatch.setattr(charts, "_svg", keep)
    return figs


def _t(lang="en"):
    return load_catalogue(ROOT / "templates" / "labels", lang)


def _run(engines=(("vllm", "vLLM"),), workloads=("64k",)):
    return SimpleNamespace(meta=SimpleNamespace(
        engines=[Engine(i, n) for i, n in engines],
        workloads=[Workload(w, w.upper(), 65536, 3072, 10, 10) for w in workloads]))


def _fig(fid, value, **ctx):
    return Figure(id=fid, value=value, unit="x", method="test", context=ctx)


@pytest.mark.parametrize("interval", [10.0, 7.5])
def test_the_steady_span_starts_one_interval_before_its_first_record(drawn, interval):
    # a stats line every ``interval`` seconds, the first 1.5 s after the window opens;
    # records 3..8 are the steady ones, so the phase covers the interval ending at record 3
    stamps = [START + dt.timedelta(seconds=1.5 + k * interval) for k in range(10)]
    recs = [{"ts": s.isoformat(), "line": 100 + k, "gen_tps": 400.0 + k}
            for k, s in enumerate(stamps)]
    ing = SimpleNamespace(
        windows=[BenchWindow("vllm", "64k", START.isoformat(), stamps[-1].isoformat(), "t")],
        in_window=lambda kind, e, w: recs if kind == "engine_stats" else [])
    registry = {f.id: f for f in (
        _fig(ids.decode("64k", "vllm", "window"), "", start=recs[3]["ts"], end=recs[8]["ts"]),
        _fig(ids.decode("64k", "vllm", "min"), 403.0),
        _fig(ids.decode("64k", "vllm", "max"), 408.0))}
    assert charts.decode_chart(_run(), ing, registry, _t()) is not None
    (ax,) = [a for a in drawn[-1].axes if a.patches]
    (span,) = ax.patches
    x0, x1 = span.get_x(), span.get_x() + span.get_width()
    assert x0 == pytest.approx(1.5 + 2 * interval)       # record 2's time: record 3's start
    assert x1 == pytest.approx(1.5 + 8 * interval)


def test_the_first_record_of_a_log_begins_one_typical_interval_earlier():
    assert charts.interval_start([3.0, 13.0, 23.0], 3.0) == pytest.approx(-7.0)
    # vLLM prints one idle line and then nothing: a long gap is not one interval
    assert charts.interval_start([0.0, 90.0, 100.0, 110.0], 90.0) == pytest.approx(80.0)


def _chunk(cached, tps, clean=True, shared=False, line=0):
    return {"engine": "sglang", "workload": "200k", "request": 1, "line": line,
            "cached": cached, "tokens": 32768, "tps": tps, "clean": clean, "shared": shared,
            "why_not": "" if clean else "mixed batch"}


def test_a_shared_batch_is_not_drawn_as_the_requests_own_chunk(drawn):
    # the reference's 200K request: six clean chunks falling, then a batch of 3,392 of its
    # tokens and 29,376 of the next request's, whose rate is the whole batch's
    speeds = [22265.0, 21064.0, 19628.0, 18475.0, 17243.0, 16408.0]
    rows = [_chunk(32768 * i, v, line=137 + i) for i, v in enumerate(speeds)]
    rows.append(_chunk(196608, 21316.78, clean=False, shared=True, line=143))
    rows.append(_chunk(229376, 15100.0, clean=False, line=144))     # own, partial
    t = _t()
    run = _run(engines=(("sglang", "SGLang"),), workloads=("64k", "200k"))
    assert charts.chunk_chart(run, rows, t) is not None
    ax = drawn[-1].axes[0]
    by_label = {ln.get_label(): ln for ln in ax.get_lines()}
    own = by_label["SGLang"]
    assert list(own.get_ydata()) == speeds                  # the request's chunks only
    shared = by_label[f"SGLang: {t['chart.shared_batches']}"]
    assert list(shared.get_xdata()) == [196608] and shared.get_marker() == "x"
    assert list(by_label[f"SGLang: {t['chart.other_batches']}"].get_xdata()) == [229376]
    # the legend names the shared batches as such
    legend = [x.get_text() for x in ax.get_legend().get_texts()]
    assert f"SGLang: {t['chart.shared_batches']}" in legend
    # no series that looks like the request's own passes through the shared batch
    for line in ax.get_lines():
        if 196608 in list(line.get_xdata()):
            assert line is shared


def test_acceptance_bars_rise_from_one(drawn):
    values = {("64k", "vllm"): 1.06, ("64k", "sglang"): 1.05, ("200k", "vllm"): 1.02,
              ("200k", "sglang"): 1.02}
    registry = {ids.spec(w, e, "accept_len"): _fig(ids.spec(w, e, "accept_len"), v)
                for (w, e), v in values.items()}
    run = _run(engines=(("vllm", "vLLM"), ("sglang", "SGLang")), workloads=("64k", "200k"))
    assert charts.acceptance_chart(run, registry, _t()) is not None
    ax = drawn[-1].axes[0]
    # a little room under the floor, where a dashed line marks 1.0 (no draft accepted)
    # the axis spans at least most of a token above the floor: a rise of a few hundredths
    # drawn over the whole height read as a large gain
    assert 0.9 < ax.get_ylim()[0] < 1.0 and ax.get_ylim()[1] >= 1.9
    assert [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--"] == [1.0]
    bars = ax.patches
    assert len(bars) == 4
    assert all(b.get_y() == 1.0 for b in bars)
    tops = sorted(round(b.get_y() + b.get_height(), 6) for b in bars)
    assert tops == sorted(values.values())
    # the labels still say the accepted length itself
    labels = sorted(x.get_text() for x in ax.texts if not x.get_text().startswith("1.0:"))
    assert labels == sorted(f"{v:.2f}" for v in values.values())
