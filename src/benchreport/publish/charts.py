"""Charts for the article: SVG, labels per language, one colour per engine everywhere, same
bytes for the same data. Labels are SVG text, not paths (smaller pages, selectable text,
quicker layout), set in the fonts the page inlines (``publish.fonts``: NanumGothic as
``FAMILY``, Hangul included, with DejaVu Sans as ``FALLBACK``), the same file matplotlib
measured them with; an SVG shown outside the page (``benchreport history --chart``) is
drawn in whatever fonts the viewer has. Each chart also carries a PNG (``Chart.png``),
whose text is drawn in pixels."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from ..core import collector, ids
from ..core.figures import Figure
from ..core.records import Ingested, Run
from ..core.verdicts import CANNOT_TELL, CLIENT_TIMES, NOT_MEASURED
from .fonts import FALLBACK, FAMILY, font_path
from .narrative_base import SECONDS_FROM_MS

__all__ = ["ACHIEVED_OFF", "CHANGE_COLOUR", "Chart", "GANTT_COLOURS", "GREY", "HATCHES", "LOG_SPAN",
           "MARKS", "MAX_PANELS", "MAX_RUN_TICKS", "MIN_REPEATS_FOR_BARS", "OVERLAY_PANELS",
           "PANELS", "PNG_DPI", "TAIL_PERCENTILE", "acceptance_chart", "chunk_chart",
           "curve_charts", "decode_chart", "durations_chart", "gantt_chart", "gantt_order",
           "history_chart", "interval_start", "latency_chart", "overlapping_labels",
           "overlay_chart", "overlay_charts", "palette", "pareto_charts", "run_colours",
           "seconds_from", "server_chart", "state_charts"]


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(font_path()))
    name = font_manager.FontProperties(fname=str(font_path())).get_name()
    matplotlib.rcParams.update({
        "svg.fonttype": "none", "svg.hashsalt": "benchreport", "font.family": [name],
        "axes.unicode_minus": False, "figure.dpi": 100,
        # chart text comes from run.yaml and logs: "$2.5 and $3" is dollars, not TeX math
        "text.parse_math": False, "text.usetex": False,
    })
    return matplotlib


def palette(run: Run) -> dict[str, str]:
    """Colour-blind-safe colours (seaborn's 'colorblind'), fixed per engine by run order."""
    import seaborn as sns

    colours = sns.color_palette("colorblind", max(3, len(run.meta.engines))).as_hex()
    return {e.id: colours[i] for i, e in enumerate(run.meta.engines)}


class Chart(Markup):
    """A chart as page markup (SVG), with a PNG of it at twice its size for blog platforms
    that take no SVG, and the pairs of its labels whose boxes overlap (none, a test says).

    The PNG is drawn when first asked for (the overlaps are measured by that draw): the
    blog takes only the charts of the sections every edition prints, most charts of a
    report are on the HTML page alone, and a PNG's draw is a third of a chart's time. Until
    then the chart keeps its figure; the drawing is the one it would have been at once."""

    half: bool = False      # laid out two to a row (the page's "chart half" figures)

    @property
    def png(self) -> bytes:
        return self._raster()[0]

    @property
    def overlaps(self) -> tuple[tuple[str, str], ...]:
        return self._raster()[1]

    def _raster(self) -> tuple[bytes, tuple[tuple[str, str], ...]]:
        done = self.__dict__.get("_png")
        if done is None:
            fig, box = self.__dict__.pop("_figure", (None, None))
            done = _png(fig, box) if fig is not None else (b"", ())
            self.__dict__["_png"] = done
        return done


PNG_DPI = 192       # the SVG's size is in points at 96 px per inch: 2× that


def overlapping_labels(fig) -> list[tuple[str, str]]:
    """Pairs of visible texts (titles, tick labels, legend entries, value labels) whose
    boxes, as matplotlib lays them out, intersect by more than a pixel each way."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    with _painted_texts(fig) as boxes:
        FigureCanvasAgg(fig).draw()
    return _overlaps(boxes, 1.0)


@contextlib.contextmanager
def _painted_texts(fig):
    """The texts the last draw of ``fig`` paints (tick labels beyond the axis limits exist
    but are not drawn), with the boxes they were painted in."""
    from matplotlib.text import Text

    boxes: list = []
    draw = Text.draw

    def recording(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            box = self.get_window_extent(renderer)
            if box.width > 0 and box.height > 0:
                boxes.append((self.get_text(), box))

    def drawing(renderer):          # a new draw: only the last one counts
        boxes.clear()
        return type(fig).draw(fig, renderer)

    Text.draw, fig.draw = recording, drawing
    try:
        yield boxes
    finally:
        Text.draw = draw
        del fig.draw


def _overlaps(boxes: list, pixel: float) -> list[tuple[str, str]]:
    """Pairs of ``boxes`` that intersect by more than ``pixel`` each way."""
    out = []
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if dx > pixel and dy > pixel:
                out.append((a, b))
    return out


def _tight_box(fig):
    """The box that ``bbox_inches="tight"`` crops to, found once for both formats.

    Given "tight", or a figure with a layout engine (constrained, or the placeholder that
    ``tight_layout()`` leaves), savefig lays the whole figure out first (every text
    measured): once for the SVG and again for the PNG, a third of a chart's time. Here the
    figure is laid out once, its engine's result kept as the axes' positions and the
    engine removed, so that each savefig only draws. It is laid out at the PNG's
    resolution, as savefig laid it out for the PNG: text measured in fewer pixels comes
    out narrower, and the box would cut into it."""
    import matplotlib

    dpi, fig.dpi = fig.dpi, PNG_DPI
    try:
        fig.draw_without_rendering()        # runs the layout engine, if any
        fig.set_layout_engine(None)         # the positions it set stay
        box = fig.get_tightbbox()
    finally:
        fig.dpi = dpi
    return box.padded(matplotlib.rcParams["savefig.pad_inches"])


def _svg(fig, alt: str) -> Chart:
    # drawing makes a great many short-lived objects; paused, none of them ages into the
    # collector's older generations (``core.collector``). The figure itself stays with the
    # chart until its PNG is drawn (``Chart``), or the chart goes.
    with collector.paused():
        return _drawn(fig, alt)


def _drawn(fig, alt: str) -> Chart:
    buf = io.StringIO()
    box = _tight_box(fig)
    fig.savefig(buf, format="svg", bbox_inches=box, metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]                        # drop the XML prolog and doctype
    # Labels stay text (small, selectable, quick to lay out), set in the page's own inline
    # fonts: matplotlib measured them with the same NanumGothic file.
    svg = re.sub(r"font-family:\s*'?[^;'\"]+'?", f"font-family: '{FAMILY}', '{FALLBACK}'", svg)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{escape(alt)}" ', 1)
    chart = Chart(svg)
    chart.__dict__["_figure"] = (fig, box)      # the PNG is drawn when asked for (Chart)
    return chart


def _png(fig, box) -> tuple[bytes, tuple[tuple[str, str], ...]]:
    """The PNG of a chart whose SVG was drawn with ``box``, and its labels' overlaps."""
    png = io.BytesIO()
    # the labels' overlaps as the PNG's draw lays them out (no draw of their own), at
    # PNG_DPI: a pixel of the figure's dpi is PNG_DPI / dpi of the PNG's
    pixel = PNG_DPI / fig.dpi
    with collector.paused(), _painted_texts(fig) as boxes:
        fig.savefig(png, format="png", dpi=PNG_DPI, bbox_inches=box,
                    metadata={"Software": None})
    return png.getvalue(), tuple(_overlaps(boxes, pixel))


def _grouped_ticks(axis) -> None:
    """Tick labels with thousands separators, as the article writes numbers."""
    from matplotlib.ticker import StrMethodFormatter

    axis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def _grouped_bars(ax, run: Run, rows: list, fmt: str, base: float = 0.0) -> None:
    """One group of bars per workload, one bar per engine in its colour, values on top;
    the bars rise from ``base`` (the quantity's floor)."""
    colours = palette(run)
    n = len(run.meta.engines)
    width = 0.8 / n
    for i, e in enumerate(run.meta.engines):
        pts = [(j + (i - (n - 1) / 2) * width, v) for j, w in enumerate(run.meta.workloads)
               for ww, ee, v in rows if ww.id == w.id and ee.id == e.id]
        if pts:
            bars = ax.bar([p[0] for p in pts], [p[1] - base for p in pts], width=width,
                          bottom=base, color=colours[e.id], label=e.name)
            ax.bar_label(bars, labels=[fmt % p[1] for p in pts], fontsize=8)
    ax.set_xticks(range(len(run.meta.workloads)), [w.label for w in run.meta.workloads])
    ax.spines[["top", "right"]].set_visible(False)
    # beside the bars, not over them
    _legend(ax, frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _bar_chart(run: Run, registry: dict[str, Figure], fid: Callable[[str, str], str],
               fmt: str, height: float, base: float = 0.0):
    """(figure, axes, rows) for a grouped bar chart of the figure ``fid(workload, engine)``
    (e.g. ``lambda w, e: ids.e2e(w, e, "duration")``) per workload and engine, or None when
    no such figure exists."""
    rows = [(w, e, registry[fid(w.id, e.id)].value)
            for w in run.meta.workloads for e in run.meta.engines
            if fid(w.id, e.id) in registry]
    if not rows:
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(6.4, height))
    ax = fig.subplots()
    _grouped_bars(ax, run, rows, fmt, base)
    return fig, ax, rows


def durations_chart(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> Markup | None:
    made = _bar_chart(run, registry, lambda w, e: ids.e2e(w, e, "duration"), "%.1f",
                      2.8)
    if made is None:
        return None
    fig, ax, rows = made
    ax.set_ylabel(t["chart.duration_s"])
    ax.set_title(t["chart.durations"], fontsize=10)
    alt = t["chart.durations"] + ": " + "; ".join(
        f"{w.label} {e.name} {v:,.1f} {t['chart.seconds_unit']}" for w, e, v in rows)
    return _svg(fig, alt)


def decode_chart(run: Run, ing: Ingested, registry: dict[str, Figure],
                 t: dict[str, str]) -> Markup | None:
    """Total decode throughput over each benchmark (the log records, as ingested), the
    steady phase the decode notebook found shaded."""
    panels = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            recs = [r for r in ing.in_window("engine_stats", e.id, w.id)] or \
                   [r for r in ing.in_window("decode_batch", e.id, w.id)]
            if recs:
                panels.append((w, e, sorted(recs, key=lambda r: r["line"])))
    if not panels:
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    colours = palette(run)
    workloads = [w for w in run.meta.workloads if any(p[0].id == w.id for p in panels)]
    fig = MplFigure(figsize=(6.4, 2.4 * len(workloads)), layout="constrained")
    axes = fig.subplots(len(workloads), 1, squeeze=False)[:, 0]
    summary = []
    hatches = {e.id: HATCHES[i % len(HATCHES)] for i, e in enumerate(run.meta.engines)}
    for ax, w in zip(axes, workloads, strict=True):
        for ww, e, recs in panels:
            if ww.id != w.id:
                continue
            window = next(x for x in ing.windows if x.engine == e.id and x.workload == w.id)
            t0 = dt.datetime.fromisoformat(window.start)
            xs = [(dt.datetime.fromisoformat(r["ts"]) - t0).total_seconds() for r in recs]
            ys = [float(r["gen_tps"]) for r in recs]
            # the log's samples as dots, joined thinly: nothing was measured between them
            ax.plot(xs, ys, color=colours[e.id], label=e.name, linewidth=0.8, marker="o",
                    markersize=2.5)
            span = registry.get(ids.decode(w.id, e.id, "window"))
            if span is not None and span.context.get("start"):
                # a record's time is the end of the interval it reports: the phase begins
                # where its first steady record's interval does
                a = interval_start(
                    xs, (dt.datetime.fromisoformat(span.context["start"]) - t0).total_seconds())
                b = (dt.datetime.fromisoformat(span.context["end"]) - t0).total_seconds()
                # hatched and outlined in the engine's colour: where two spans overlap,
                # both stay visible
                ax.axvspan(a, b, facecolor="none", edgecolor=colours[e.id], alpha=0.6,
                           hatch=hatches[e.id], linewidth=0.6)
                lo = registry[ids.decode(w.id, e.id, "min")].value
                hi = registry[ids.decode(w.id, e.id, "max")].value
                summary.append(f"{w.label} {e.name}: {lo:,.1f}–{hi:,.1f} {t['chart.tps']}")
        ax.set_title(w.label, fontsize=9, loc="left")
        ax.set_ylabel(t["chart.tps"], fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
        _legend(ax, frameon=False, fontsize=8)
    axes[-1].set_xlabel(t["chart.seconds"], fontsize=8)
    # the title speaks of a hatched span only where one is drawn
    title = t["chart.decode_time" if summary else "chart.decode_time_plain"]
    fig.suptitle(title, fontsize=10)
    return _svg(fig, title + ". " + "; ".join(summary))


def interval_start(times: list[float], at: float) -> float:
    """Where the interval that the record logged at ``at`` reports begins. vLLM's stats line
    and SGLang's Decode line each report the time since the line before: the previous
    record's time; for the first record, or after a gap of unlogged idle time (vLLM prints
    one idle line only), one typical interval (the median between records) earlier.

    >>> interval_start([5.0, 15.0, 25.0, 35.0], 25.0), interval_start([5.0, 15.0], 5.0)
    (15.0, -5.0)
    """
    import statistics

    ordered = sorted(times)
    steps = [b - a for a, b in zip(ordered, ordered[1:], strict=False) if b > a]
    typical = statistics.median(steps) if steps else 0.0
    before = [x for x in ordered if x < at]
    if before and at - before[-1] <= 1.5 * typical:
        return before[-1]
    return at - typical


def _split_batches(rows: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    """A request's batches: its clean chunks, its other batches with a throughput, and the
    batches it shared with other requests. A shared batch logs the whole batch's
    throughput, not this request's chunk: it is marked apart, never drawn as its own."""
    logged = [r for r in rows if not r["clean"] and r.get("tps")]
    return ([r for r in rows if r["clean"]], [r for r in logged if not r.get("shared")],
            [r for r in logged if r.get("shared")])


def chunk_chart(run: Run, chunks: list[dict], t: dict[str, str]) -> Markup | None:
    """The first request's clean chunks (pure, full, interval prefill only) against the
    context cached before each; its other batches (mixed, partial, after decode) hollow.
    ``chunks``: the rows of derived/tables/prefill_chunks.parquet."""
    if not run.meta.workloads:
        return None
    colours = palette(run)
    longest = run.meta.workloads[-1]
    series = []
    for e in run.meta.engines:
        mine = sorted((r for r in chunks if r["engine"] == e.id and r["workload"] == longest.id
                       and r["request"] == 1), key=lambda r: r["line"])
        clean, own, shared = _split_batches(mine)
        if len(clean) >= 2:
            series.append((e, clean, own, shared))
    if not series:
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(6.4, 2.6))
    ax = fig.subplots()
    for e, clean, left, shared in series:
        ax.plot([r["cached"] for r in clean], [r["tps"] for r in clean], marker="o",
                color=colours[e.id], label=e.name)
        if left:
            ax.plot([r["cached"] for r in left], [r["tps"] for r in left], marker="o",
                    linestyle="none", markerfacecolor="white", color=colours[e.id],
                    label=f"{e.name}: {t['chart.other_batches']}")
        if shared:
            ax.plot([r["cached"] for r in shared], [r["tps"] for r in shared], marker="x",
                    linestyle="none", color=colours[e.id],
                    label=f"{e.name}: {t['chart.shared_batches']}")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(5))      # six-digit labels need room
    _grouped_ticks(ax.xaxis)
    _grouped_ticks(ax.yaxis)
    ax.set_xlabel(t["chart.cached"], fontsize=8)
    ax.set_ylabel(t["chart.tps"], fontsize=8)
    ax.set_title(f'{t["chart.chunks"]} ({longest.label})', fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    _legend(ax, frameon=False, fontsize=8)
    alt = t["chart.chunks"] + ": " + "; ".join(
        f"{e.name} " + " → ".join(f"{r['tps']:.0f}" for r in clean) for e, clean, *_ in series)
    return _svg(fig, alt)


def latency_chart(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> Markup | None:
    """Median and p99 of TTFT and TPOT by input length, one colour per engine; a metric
    that reaches ten seconds is drawn in seconds, as the tables write it."""
    metrics = [m for m in ("ttft", "tpot")
               if any(ids.latency(w.id, e.id, m, "median") in registry
                      for w in run.meta.workloads for e in run.meta.engines)]
    if not metrics or len(run.meta.workloads) < 1:
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(6.4, 2.6), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    alt = [text for ax, m in zip(axes, metrics, strict=True)
           for text in _latency_panel(ax, run, registry, t, m)]
    counts = {registry[f].value for w in run.meta.workloads for e in run.meta.engines
              if (f := ids.latency_run(w.id, e.id, "requests")) in registry}
    title = t["chart.latency_n"].format(n=f"{counts.pop():,}", p="p99") if len(counts) == 1 \
        else t["chart.latency"].format(p="p99")
    return _svg(fig, title + ": " + "; ".join(alt))


def _latency_scale(run: Run, registry: dict[str, Figure], t: dict[str, str],
                   m: str) -> tuple[float, str]:
    """Seconds where the metric reaches ten of them (as the tables write it), else ms."""
    values = [registry[fid].value for w in run.meta.workloads for e in run.meta.engines
              for stat in ("median", "p99")
              if (fid := ids.latency(w.id, e.id, m, stat)) in registry]
    return (1000.0, t["chart.seconds_unit"]) if max(values, default=0) >= SECONDS_FROM_MS \
        else (1.0, "ms")


def _latency_panel(ax, run: Run, registry: dict[str, Figure], t: dict[str, str],
                   m: str) -> list[str]:
    """One metric's panel: each engine's median (filled) and p99 (hollow) at each input
    length as points, not lines (only the measured lengths are known, and a line between
    them would draw a crossing nothing measured), engines side by side; its text
    alternative, a line per engine and statistic."""
    colours, alt = palette(run), []
    scale, unit = _latency_scale(run, registry, t, m)
    for k, e in enumerate(run.meta.engines):
        shift = (k - (len(run.meta.engines) - 1) / 2) * 0.12
        for stat, marker, face in (("median", "o", colours[e.id]), ("p99", "^", "white")):
            pts = [(i, w, registry[ids.latency(w.id, e.id, m, stat)].value / scale)
                   for i, w in enumerate(run.meta.workloads)
                   if ids.latency(w.id, e.id, m, stat) in registry]
            label = f"{e.name} {t['chart.median'] if stat == 'median' else stat}"
            if pts:
                ax.plot([p[0] + shift for p in pts], [p[2] for p in pts], linestyle="none",
                        marker=marker, markersize=5, markerfacecolor=face,
                        color=colours[e.id], label=label)
                alt.append(f"{t['metric.' + m]}, {label}: " + ", ".join(
                    f"{w.label} {v:,.1f} {unit}" for _, w, v in pts))
    ax.set_xticks(range(len(run.meta.workloads)), [w.label for w in run.meta.workloads])
    ax.set_xlim(-0.5, len(run.meta.workloads) - 0.5)
    # the unit in the panel's title, not as a rotated one-syllable axis label
    ax.set_title(f"{t[f'metric.{m}']}, {unit}", fontsize=9)
    _grouped_ticks(ax.yaxis)
    ax.spines[["top", "right"]].set_visible(False)
    _legend(ax, frameon=False, fontsize=8)
    return alt


def acceptance_chart(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> Markup | None:
    # the accepted length counts the verified token: 1 is its floor (no draft accepted),
    # and the bars rise from there
    floor = 1.0
    made = _bar_chart(run, registry, lambda w, e: ids.spec(w, e, "accept_len"), "%.2f",
                      2.2, base=floor)
    if made is None:
        return None
    fig, ax, rows = made
    ax.set_ylabel(t["table.accept_len"], fontsize=8)
    title = t["chart.acceptance"].format(floor=f"{floor:.1f}")
    ax.set_title(title, fontsize=10)
    # at least one whole token above the floor: a rise of 0.06 drawn over the full height
    # would read as a large gain
    rise = max(max(v for _, _, v in rows) - floor, 0.8)
    ax.set_ylim(floor - rise * 0.08, floor + rise * 1.25)
    # 1.0: the verified token alone, no draft token accepted
    ax.axhline(floor, color=GREY, linestyle="--", linewidth=0.9)
    ax.annotate(t["chart.acceptance_floor"].format(floor=f"{floor:.1f}"), (1.0, floor),
                xycoords=("axes fraction", "data"),
                xytext=(4, 0), textcoords="offset points", ha="left", va="center", fontsize=8,
                color=GREY, annotation_clip=False)
    return _svg(fig, title + ": " + "; ".join(
        f"{w.label} {e.name} {v:.2f}" for w, e, v in rows))


def _campaign_series(registry: dict[str, Figure]) -> dict[str, dict[tuple, dict]]:
    """workload -> (engine, variant) -> {load: {metric: figure}} of the curve figures."""
    out: dict[str, dict[tuple, dict]] = {}
    for fid, f in registry.items():
        c = f.context
        if ids.family(fid) == "curve" and "metric" in c:
            per = out.setdefault(c["workload"], {}).setdefault((c["engine"], c["variant"]), {})
            per.setdefault(c["load"], {})[c["metric"]] = f
    return out


_DASHES = ["-", "--", ":", "-."]
HATCHES = ["///", "\\\\\\", "xxx", "..."]


def _styles(run: Run, keys) -> dict[tuple, tuple[str, str, str]]:
    """(colour, line style, label) per (engine, variant): the engine's colour everywhere,
    its variants told apart by dashes."""
    colours = palette(run)
    out, seen = {}, {}
    for engine, variant in sorted(keys, key=lambda k: ([e.id for e in run.meta.engines]
                                                         .index(k[0]) if k[0] in colours
                                                         else 99, k[1])):
        i = seen.setdefault(engine, 0)
        seen[engine] += 1
        name = next((e.name for e in run.meta.engines if e.id == engine), engine)
        out[(engine, variant)] = (colours.get(engine, "#555555"), _DASHES[i % len(_DASHES)],
                                  f"{name} ({variant})" if variant else name)
    return out


# how a load whose points the validity checks mark is drawn over its dot: (context key of
# the curve figure, marker, catalogue key of its legend entry)
MARKS = (("saturated", "s", "campaign.saturated_mark"),
         ("cannot_tell", "D", "campaign.cannot_tell_mark"))
# the panels a load curve can have, in order: (median or only metric, its p99 or None,
# catalogue key of the title, unit suffix); the first three with values are drawn
PANELS = (("output_throughput", None, "table.out_tok_per_s", ""),
          ("median_ttft_ms", "p99_ttft_ms", "metric.ttft", " (ms)"),
          ("median_tpot_ms", "p99_tpot_ms", "metric.tpot", " (ms)"),
          ("median_e2el_ms", "p99_e2el_ms", "metric.e2el", " (ms)"))
MAX_PANELS = 3
# error bars need this many repeats: with two, t(1) = 12.7 makes a 95% interval that
# spans orders of magnitude and says nothing the table does not
MIN_REPEATS_FOR_BARS = 3
ACHIEVED_OFF = 0.10      # achieved rate this far from the asked one: plot against achieved
LOG_SPAN = 8.0           # loads spanning this factor or more get a log axis
GREY = "#555555"
TAIL_PERCENTILE = 99     # the dotted lines: the p99 figures of PANELS


def _marks(ax, pts, colour: str, seen: set[str]) -> None:
    """Hollow squares over saturated loads, hollow diamonds over loads of unknown cause."""
    for key, marker, _ in MARKS:
        marked = [(x, f.value) for x, f in pts if f.context.get(key)]
        if marked:
            seen.add(key)
            ax.scatter([x for x, _ in marked], [y for _, y in marked], marker=marker, s=40,
                       facecolors="none", edgecolors=colour, linewidths=1.0, zorder=3)


def _legend(ax, **style) -> None:
    """A legend of the labelled artists, or none where nothing is labelled (a chart of one
    series): matplotlib would warn and draw an empty box."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**style)


def _marked_loads(per: dict[tuple, dict], seen: set[str], t: dict[str, str]) -> list[str]:
    """For the chart's text alternative: the loads each mark is drawn at."""
    out = []
    for key, _, label in MARKS:
        loads = sorted({load for s in per.values() for load, f in s.items()
                        if "output_throughput" in f and f["output_throughput"].context.get(key)})
        if key in seen and loads:
            out.append(f"{t[label]}: {', '.join(loads)}")
    return out


@dataclass
class _LoadAxis:
    """Where each (series, load) sits on a load curve's x axis, and how the axis reads."""

    x: dict[tuple, float]              # ((engine, variant), load) -> x
    label: str                         # the axis title
    log: bool
    ticks: list[tuple[float, str]]     # [] : matplotlib's own (achieved rates)
    order: dict[str, float]            # load -> the load asked (unbounded: inf), to join
    split: float | None = None         # where the unbounded load is set apart
    names: dict[str, str] = field(default_factory=dict)   # load -> its name on a point


def _offered(per: dict[tuple, dict]) -> dict[str, float | None]:
    """load -> the load asked (None: unbounded), from the curve figures' context."""
    return {load: next(iter(f.values())).context.get("x") for s in per.values()
            for load, f in s.items() if f}


def _kind(per: dict[tuple, dict]) -> str:
    return next(next(iter(f.values())).context.get("kind", "concurrency")
                for s in per.values() for f in s.values() if f)


def _order(offered: dict[str, float | None]) -> dict[str, float]:
    return {load: float("inf") if x is None else x for load, x in offered.items()}


def _load_name(x: float | None, t: dict[str, str]) -> str:
    return t["chart.unbounded"] if x is None else f"{x:g}"


def _achieved_axis(per: dict[tuple, dict], offered: dict, t: dict[str, str]
                   ) -> _LoadAxis | None:
    """The rate each point reached, when every point recorded one and one of them is
    unbounded or reached a rate this far from the one asked."""
    got = {(key, load): f["request_throughput"].value for key, s in per.items()
           for load, f in s.items() if "request_throughput" in f}
    if len(got) < sum(len(s) for s in per.values()) or not got:
        return None
    off = [offered[load] is None or abs(v - offered[load]) > ACHIEVED_OFF * offered[load]
           for (_, load), v in got.items()]
    if not any(off):
        return None
    xs = [v for v in got.values() if v > 0]
    log = bool(xs) and len(xs) == len(got) and max(xs) / min(xs) >= LOG_SPAN
    return _LoadAxis(x=got, label=t["chart.achieved_rate"], log=log, ticks=[],
                     order=_order(offered),
                     names={load: _load_name(x, t) for load, x in offered.items()})


def _offered_axis(per: dict[tuple, dict], offered: dict, kind: str, t: dict[str, str]
                  ) -> _LoadAxis:
    """The load asked, the unbounded one set apart to the right of the others."""
    finite = sorted({x for x in offered.values() if x is not None})
    log = len(finite) >= 2 and finite[0] > 0 and finite[-1] / finite[0] >= LOG_SPAN
    where = {x: x for x in finite}
    split = None
    if None in offered.values():
        top = finite[-1] if finite else 1.0
        where[None] = top * 4 if log else top + max((top - (finite[0] if finite else 0))
                                                     * 0.3, 1.0)
        split = (top * where[None]) ** 0.5 if log else (top + where[None]) / 2
    x = {(key, load): where[offered[load]] for key, s in per.items() for load in s}
    ticks = [(where[v], _load_name(v, t)) for v in finite + ([None] if None in where else [])]
    return _LoadAxis(x=x, label=t["chart.concurrency" if kind == "concurrency"
                                   else "chart.offered_rate"], log=log, ticks=ticks,
                     order=_order(offered), split=split)


def _load_axis(per: dict[tuple, dict], t: dict[str, str]) -> _LoadAxis:
    offered = _offered(per)
    kind = _kind(per)
    return (kind == "rate" and _achieved_axis(per, offered, t)) or \
        _offered_axis(per, offered, kind, t)


def _panels(per: dict[tuple, dict]) -> list[tuple]:
    """The panels whose metric some load of some series measured (the others are "not
    measured" in the table, and not drawn)."""
    have = {m for s in per.values() for f in s.values() for m in f}
    return [p for p in PANELS if p[0] in have][:MAX_PANELS]


def _bars(pts: list[tuple[float, Figure]]) -> list[list[float]] | None:
    """Error bars from the repeats' intervals, when every point has enough repeats."""
    if not pts or any((f.context.get("n") or 0) < MIN_REPEATS_FOR_BARS
                      or f.context.get("low") is None or f.context.get("high") is None
                      for _, f in pts):
        return None
    return [[max(0.0, f.value - f.context["low"]) for _, f in pts],
            [max(0.0, f.context["high"] - f.value) for _, f in pts]]


def _curve_line(ax, axis: _LoadAxis, key: tuple, s: dict, metric: str, style: tuple
                ) -> list[tuple[float, Figure, str]]:
    """One series' line of ``metric`` in the order of the load asked (a dotted last segment
    to the unbounded load set apart); returns its (x, figure, load) points."""
    colour, dash, linestyle = style
    pts = [(axis.x[(key, load)], s[load][metric], load)
           for load in sorted((load for load in s if metric in s[load]),
                              key=lambda load: axis.order[load])]
    if not pts:
        return pts
    solid = [p for p in pts if axis.split is None or p[0] < axis.split]
    ax.errorbar([p[0] for p in solid], [p[1].value for p in solid],
                yerr=_bars([(p[0], p[1]) for p in solid]), color=colour,
                linestyle=dash if linestyle == "-" else linestyle, marker="o", markersize=3,
                capsize=2, linewidth=1.2)
    if len(solid) < len(pts):
        tail = pts[len(solid) - 1:] if solid else pts
        ax.plot([p[0] for p in tail], [p[1].value for p in tail], color=colour,
                linestyle=":", marker="o", markersize=3, linewidth=1.0)
    return pts


def _dress_axis(ax, axis: _LoadAxis, title: str) -> None:
    if axis.log:
        ax.set_xscale("log")
    if axis.ticks:
        from matplotlib.ticker import NullLocator

        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticks([x for x, _ in axis.ticks], [n for _, n in axis.ticks], fontsize=8)
    if axis.split is not None:
        ax.axvline(axis.split, color="#bbbbbb", linestyle="--", linewidth=0.7)
    ax.set_title(title, fontsize=8, wrap=True)
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=8)


def _name_points(ax, axis: _LoadAxis, pts: list[tuple[float, Figure, str]]) -> None:
    """On an achieved-rate axis, each point carries the rate that was asked."""
    for x, f, load in pts:
        ax.annotate(axis.names.get(load, load), (x, f.value), fontsize=8, xytext=(3, 3),
                    textcoords="offset points", color=GREY)


def _curve_legend(fig, styles: dict, p99: bool, seen: set[str], t: dict[str, str]) -> None:
    """One legend under the panels: each series, median and p99 lines, the marks drawn."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, linestyle=d, marker="o", markersize=3)
               for c, d, _ in styles.values()]
    labels = [label for _, _, label in styles.values()]
    if p99:
        handles += [Line2D([], [], color=GREY, linestyle="-"),
                    Line2D([], [], color=GREY, linestyle=":")]
        labels += [t["chart.median"], t["chart.percentile"].format(pct=TAIL_PERCENTILE)]
    for key, marker, label in MARKS:
        if key in seen:
            handles.append(Line2D([], [], linestyle="none", marker=marker, markersize=6,
                                  markerfacecolor="none", markeredgecolor=GREY))
            labels.append(t[label])
    fig.legend(handles, labels, loc="lower center", ncol=min(len(handles), 4),
               frameon=False, fontsize=8, bbox_to_anchor=(0.5, 0.0))


def _panel_title(run: Run, key: str, t: dict[str, str]) -> str:
    """A panel's title key: ``metric.tpot_declared`` where the user's own client (run.yaml's
    ``client:``) defines the metric, for the catalogue's TPOT says "first excluded"."""
    metric = key.removeprefix("metric.")
    declared = run.meta.client is not None and any(
        d.metric == metric for f in run.meta.client.files for d in f.metrics)
    return f"{key}_declared" if declared and f"{key}_declared" in t else key


def _workload_title(run: Run, wid: str) -> str:
    return next((w.label for w in run.meta.workloads if w.id == wid), wid)


def _curve_chart(run: Run, wid: str, per: dict[tuple, dict], t: dict[str, str]) -> Chart:
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    axis, panels, styles = _load_axis(per, t), _panels(per), _styles(run, per)
    fig = MplFigure(figsize=(7.0, 2.9))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    fig.subplots_adjust(wspace=0.45, bottom=0.3, top=0.8)
    fig.suptitle(_workload_title(run, wid), fontsize=9)
    alt, seen, p99 = [f"{_workload_title(run, wid)} ({axis.label})"], set(), False
    for ax, (median, tail, title, unit) in zip(axes, panels, strict=True):
        for key, s in per.items():
            colour, dash, label = styles[key]
            pts = _curve_line(ax, axis, key, s, median, (colour, dash, "-"))
            _marks(ax, [(x, f) for x, f, _ in pts], colour, seen)
            if ax is axes[0] and not axis.ticks:
                _name_points(ax, axis, pts)
            if tail and _curve_line(ax, axis, key, s, tail, (colour, dash, ":")):
                p99 = True
            alt += [f"{label} {m}: " + ", ".join(f"{load} {f[m].value:.1f}"
                                                 for load, f in s.items() if m in f)
                    for m in (median, tail) if m and any(m in f for f in s.values())]
        _dress_axis(ax, axis, t[_panel_title(run, title, t)] + unit)
    fig.supxlabel(axis.label, fontsize=8, y=0.1)
    _curve_legend(fig, styles, p99, seen, t)
    return _svg(fig, t["section.curves"] + ": " + "; ".join(alt + _marked_loads(per, seen, t)))


def curve_charts(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> list[Markup]:
    """Per campaign workload measured at two loads or more: output throughput, TTFT and
    TPOT (E2E latency where one of them was not measured) against load, one line per
    series. The x axis is the rate the points reached where it differs from the one asked
    (each point named by the asked rate), else the load asked, on a log scale when the loads
    span a factor of eight or more, the unbounded load set apart at the right. Error bars are
    the repeats' 95% intervals (on the log scale, so never below zero) with three repeats or
    more; dotted lines are the p99; hollow squares mark saturated loads, hollow diamonds
    loads whose cause the files cannot tell."""
    return [_curve_chart(run, wid, per, t)
            for wid, per in _campaign_series(registry).items()
            if len({load for s in per.values() for load in s}) >= 2 and _panels(per)]


def _pareto_points(per: dict[tuple, dict], y_metric: str) -> dict[tuple, list]:
    """(engine, variant) -> [(interactivity, y, load)] of the loads that measured both."""
    out = {key: [(f["interactivity"].value, f[y_metric].value, load) for load, f in s.items()
                 if "interactivity" in f and y_metric in f] for key, s in per.items()}
    return {key: pts for key, pts in out.items() if pts}


def _pareto_series(ax, pts: list, keep: set[str], style: tuple) -> str:
    """A series' loads as dots (those off its frontier named in grey) and its frontier as a
    line with its loads named; returns the series' text alternative."""
    colour, dash, label = style
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, color=colour, alpha=0.5)
    line = sorted(p for p in pts if p[2] in keep)
    ax.plot([p[0] for p in line], [p[1] for p in line], dash, color=colour, marker="o",
            markersize=3, label=label)
    for x, y, load in pts:
        ax.annotate(load, (x, y), fontsize=8, xytext=(2, 2), textcoords="offset points",
                    color="#000000" if load in keep else "#888888")
    off = [p for p in pts if p[2] not in keep]
    return f"{label}: " + ", ".join(f"{load} ({x:.1f}, {y:.1f})" for x, y, load in line) + (
        " | " + ", ".join(f"{load} ({x:.1f}, {y:.1f})" for x, y, load in off) if off else "")


def _crossings(ax, registry: dict[str, Figure], wid: str) -> None:
    for f in registry.values():
        c = f.context
        if f.unit == "crossings" and c.get("workload") == wid:
            for i in range(1, int(f.value) + 1):
                x = registry[ids.pareto(wid, c["a"], c["b"], f"cross{i}")].value
                ax.axvline(x, color="#888888", linestyle=":", linewidth=0.8)


def _frontier_metric(registry: dict[str, Figure], wid: str, per: dict) -> str | None:
    y_metric = None
    for key in per:
        fid = ids.pareto(wid, ids.series(*key), None, "frontier")
        if fid in registry:
            y_metric = registry[fid].context["y"]
    return y_metric


def pareto_charts(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> list[Markup]:
    """Per campaign workload with two loads or more that measured both: throughput (per GPU
    when the GPU count is known) against interactivity; every load as a dot named by its
    load (grey when off the frontier), the frontier as a line, crossings dotted."""
    charts = []
    for wid, per in _campaign_series(registry).items():
        y_metric = _frontier_metric(registry, wid, per)
        pts = _pareto_points(per, y_metric) if y_metric else {}
        if sum(len(p) for p in pts.values()) < 2:
            continue
        _mpl()
        from matplotlib.figure import Figure as MplFigure

        styles = _styles(run, per)
        fig = MplFigure(figsize=(5.2, 3.0))
        ax = fig.subplots()
        alt = [_workload_title(run, wid)]
        for key, series_pts in pts.items():
            front = registry.get(ids.pareto(wid, ids.series(*key), None, "frontier"))
            alt.append(_pareto_series(ax, series_pts, set(front.context["loads"]) if front
                                      else set(), styles[key]))
        _crossings(ax, registry, wid)
        ax.set_title(_workload_title(run, wid), fontsize=9)
        ax.set_xlabel(t["campaign.interactivity"], fontsize=8)
        ax.set_ylabel(t["campaign.per_gpu"] if y_metric == "output_throughput_per_gpu"
                      else t["table.out_tok_per_s"], fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=8)
        _legend(ax, frameon=False, fontsize=8)
        charts.append(_svg(fig, t["section.pareto"] + ": " + "; ".join(alt)))
    return charts


def _server_panel(ax, rows: list[dict], key: str, colour: str, name: str) -> float | None:
    """One engine's series of a /metrics value (KV-cache usage in %, or waiting requests)
    against seconds from its first scrape; returns its peak."""
    t0 = dt.datetime.fromisoformat(rows[0]["ts"])
    xs = [(dt.datetime.fromisoformat(r["ts"]) - t0).total_seconds() for r in rows]
    ys = [r.get(key) for r in rows]
    if key == "kv_usage" and all(v is None or v <= 1.0 for v in ys):
        ys = [None if v is None else v * 100.0 for v in ys]
    ax.plot(xs, ys, marker=".", color=colour, label=name)
    return max((v for v in ys if v is not None), default=None)


def server_chart(run: Run, series: list[dict], t: dict[str, str]) -> Markup | None:
    """KV-cache usage and waiting requests at each /metrics scrape inside each benchmark
    (the rows the server notebook saved with source metrics), one row of panels per
    workload, time from the first scrape; a value no scrape held gets no panel."""
    series = [r for r in series if r.get("source", "metrics") == "metrics"]
    keys = [(k, title) for k, title in (("kv_usage", "chart.kv_usage"),
                                        ("waiting", "chart.waiting"))
            if any(r.get(k) is not None for r in series)]
    if not keys:
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    colours = palette(run)
    workloads = [w for w in run.meta.workloads if any(r["workload"] == w.id for r in series)]
    fig = MplFigure(figsize=(6.4, 2.3 * len(workloads)))
    axes = fig.subplots(len(workloads), len(keys), squeeze=False)
    summary = []
    for row, w in zip(axes, workloads, strict=True):
        for e in run.meta.engines:
            rows = sorted((r for r in series if r["workload"] == w.id and r["engine"] == e.id),
                          key=lambda r: r["ts"])
            for ax, (key, _) in zip(row, keys, strict=True):
                peak = _server_panel(ax, rows, key, colours.get(e.id), e.name) if rows \
                    else None
                if key == "kv_usage" and peak is not None:
                    summary.append(f"{w.label} {e.name} {peak:.0f}%")
        for ax, (_, title) in zip(row, keys, strict=True):
            ax.set_title(f"{w.label}: {t[title]}", fontsize=9)
            ax.set_xlabel(t["chart.seconds_in"], fontsize=8)
            ax.tick_params(labelsize=8)
        _legend(row[0], fontsize=8, frameon=False)
    fig.tight_layout()
    return _svg(fig, t["chart.server"] + ": " + "; ".join(summary))


def _state_rows(series: list[dict], engine: str, workload: str) -> list[dict]:
    """One engine's rows in one window: its log lines, else its scrapes, in time order."""
    mine = [r for r in series if r["engine"] == engine and r["workload"] == workload]
    logged = [r for r in mine if r.get("source") == "log"]
    return sorted(logged or mine, key=lambda r: (r["ts"], r.get("line") or 0))


def seconds_from(rows: list[dict], start: str | None) -> list[float]:
    """Each row's time in s from ``start`` (the benchmark window's start, on the log's
    clock), else from the first row."""
    t0 = dt.datetime.fromisoformat(start or rows[0]["ts"])
    return [(dt.datetime.fromisoformat(r["ts"]) - t0).total_seconds() for r in rows]


def _state_chart(run: Run, rows: list[dict], colour: str, title: str,
                 t: dict[str, str], start: str | None = None) -> Chart:
    """Running and waiting requests (left axis) and KV-cache usage (right axis, dotted)
    against seconds from the benchmark window's start (``start``; else the first row, and
    the axis says so), each row a step held until the next; laid out two to a row."""
    from matplotlib.figure import Figure as MplFigure

    xs = seconds_from(rows, start)
    fig = MplFigure(figsize=(3.4, 2.3))
    ax = fig.subplots()
    for key, style, label in (("running", "-", t["chart.running"]),
                              ("waiting", "--", t["chart.waiting"])):
        ax.step(xs, [r.get(key) for r in rows], where="post", linestyle=style,
                color=colour if key == "running" else GREY, label=label)
    kv = [None if r.get("kv_usage") is None else 100.0 * r["kv_usage"]
          if r["kv_usage"] <= 1.0 else r["kv_usage"] for r in rows]
    right = ax.twinx()
    right.step(xs, kv, where="post", color=colour, linestyle=":", label=t["chart.kv_usage"])
    ax.set_ylabel(t["chart.requests"], fontsize=8)
    right.set_ylabel(t["chart.kv_usage"], fontsize=8)
    ax.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    ax.set_xlabel(t["chart.seconds_in" if start else "chart.seconds_first_line"], fontsize=8)
    for a in (ax, right):
        a.tick_params(labelsize=8)
    ax.set_title(title, fontsize=8, loc="left", pad=4)
    handles = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    # under the axis label, where the three entries at a legible size do not meet the title
    ax.legend(handles[0] + more[0], handles[1] + more[1], fontsize=8, frameon=False,
              loc="upper center", bbox_to_anchor=(0.5, -0.38), ncol=3, borderaxespad=0.1,
              handlelength=1.6, columnspacing=0.8)
    fig.tight_layout()
    peak = max((v for v in kv if v is not None), default=None)
    most = max((r.get("waiting") or 0 for r in rows), default=0)
    waited = f"{t['chart.waiting']} ≤ {most:g}" if most else t["chart.none_waiting"]
    alt = f"{t['chart.state']}, {title}: {waited}" + \
        (f", {t['chart.kv_usage']} ≤ {peak:.1f}" if peak is not None else "")
    chart = _svg(fig, alt)
    chart.half = True
    return chart


def state_charts(run: Run, series: list[dict], t: dict[str, str],
                 windows=()) -> list[Markup]:
    """One chart per engine and workload with rows in ``server_series``: its state at each
    stats line of its log inside the window (the scrapes where the log has none), on the
    benchmark's clock where its window is known (``windows``: ``Ingested.windows``)."""
    _mpl()
    colours = palette(run)
    starts = {(x.engine, x.workload): x.start for x in windows}
    out = []
    for w in run.meta.workloads:
        for e in run.meta.engines:
            rows = _state_rows(series, e.id, w.id)
            if rows:
                # a window is on the log's clock: the scrapes' times are not
                start = starts.get((e.id, w.id)) if rows[0].get("source") == "log" else None
                out.append(_state_chart(run, rows, colours.get(e.id), f"{w.label}, {e.name}",
                                        t, start))
    return out


def _gantt_spans(r: dict) -> list[tuple[str, float, float]]:
    """A row's phases as (phase, start, length) in s; a phase the files do not place is not
    drawn (an unplaced prefill leaves the whole TTFT one grey 'waiting' bar)."""
    t0 = r.get("arrival_s") or 0.0
    first = r["first_token_s"]
    prefill = r.get("prefill_s")
    spans = [("wait", t0, first - t0 - (prefill or 0.0))]
    if prefill is not None:
        spans.append(("prefill", first - prefill, prefill))
    stall = r.get("stall_s") or 0.0
    if stall:
        spans.append(("stall", first, stall))
    if r.get("decode_s") is not None:
        spans.append(("decode", first + stall, r["decode_s"]))
    # gaps after token 2 that overlapped another prompt's prefill, drawn over the decode bar
    # (a stall is the same interference in the first gap: the two compare as a sum)
    spans += [("overlap", a, n) for a, n in zip(r.get("shared_at_s") or [],
                                                 r.get("shared_len_s") or [], strict=True)]
    return [s for s in spans if s[2] > 0]


# one colour per phase in every panel, whatever the engine (the panel's title names it), so
# the legend holds for all of them
GANTT_COLOURS = {"wait": "#bbbbbb", "prefill": "#4c72b0", "stall": "#222222",
                 "decode": "#a6bddb", "overlap": "#dd8452"}


def _gantt_panel(ax, rows: list[dict], t: dict[str, str], seen: set[str]) -> None:
    rows = sorted(rows, key=lambda r: (r.get("arrival_s") or 0.0, r["index"]))
    # one call per phase (in the order the phases first appear, the legend's): a run of a
    # thousand requests drew with thousands of calls, each with its own container
    spans: dict[str, list[tuple[int, float, float]]] = {}
    for y, r in enumerate(rows):
        for phase, start, length in _gantt_spans(r):
            spans.setdefault(phase, []).append((y, start, length))
    for phase, bars in spans.items():
        label = t[f"chart.gantt_{phase}"] if phase not in seen else None
        seen.add(phase)
        ys, starts, lengths = zip(*bars, strict=True)
        ax.barh(ys, lengths, left=starts, height=0.7, color=GANTT_COLOURS[phase], label=label,
                linewidth=0)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(left=0)
    ax.set_yticks([])
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=8)


def gantt_order(rows: list[dict]) -> str:
    """The y axis's label key: requests by arrival where the client timed each send; in the
    file's order where all were sent at once or never timed (they have no arrival order)."""
    placed = all(r.get("arrival_basis") == CLIENT_TIMES for r in rows)
    return "chart.gantt_requests" if placed else "chart.gantt_requests_file"


def gantt_chart(run: Run, rows: list[dict], t: dict[str, str]) -> Markup | None:
    """Each request's phases (waiting, own prefill, stall before token 2, decode), one panel
    per engine and workload, requests by arrival down the y axis. ``rows``: the rows of
    derived/tables/timeline.parquet."""
    # one panel per engine and workload with one point; a sweep's points stay in the table
    # (a panel each would outgrow the page)
    panels = [(w, e) for w in run.meta.workloads for e in run.meta.engines
              if len({r["point"] for r in rows
                      if r["workload"] == w.id and r["engine"] == e.id}) == 1]
    if not panels:
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    cols = min(2, len(panels))
    nrows = -(-len(panels) // cols)
    fig = MplFigure(figsize=(6.4, 1.9 * nrows + 0.4))
    axes = fig.subplots(nrows, cols, squeeze=False)
    own = any(r.get("arrival_basis") == NOT_MEASURED for r in rows)
    for ax, (w, e) in zip(axes.flat, panels, strict=False):
        mine = [r for r in rows if r["workload"] == w.id and r["engine"] == e.id]
        seen: set[str] = set()
        _gantt_panel(ax, mine, t, seen)
        ax.set_title(f"{e.name}, {w.label}", fontsize=8)
        ax.set_xlabel(t["chart.gantt_own" if own else "chart.gantt_seconds"], fontsize=8)
        ax.set_ylabel(t[gantt_order(mine)], fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles: dict = {}
    for ax in axes.flat:      # one entry per phase, the first panel that draws it
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=3,
                   fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.11 if nrows > 1 else 0.2, 1, 1))
    alt = t["chart.gantt"] + ": " + "; ".join(f"{e.name} {w.label}" for w, e in panels)
    return _svg(fig, alt)


CHANGE_COLOUR = "#d55e00"      # seaborn colorblind's vermilion: the level changes
MAX_RUN_TICKS = 12


def _history_ticks(rec: dict) -> list[int]:
    """Runs named on the x axis: the first, the last, each change's first run, and runs
    spaced evenly between, none closer than half that spacing to another."""
    n = len(rec["runs"])
    step = max(1, -(-n // MAX_RUN_TICKS))
    fixed = sorted({0, n - 1, *(c["index"] for c in rec["changes"])})
    even = [i for i in range(0, n, step) if all(abs(i - f) * 2 >= step for f in fixed)]
    return sorted(set(fixed + even))


def history_chart(rec: dict, t: dict[str, str]) -> Chart:
    """One metric of one point over a run history (a record of ``analyses.history``): each
    run's value in date order, each level's mean as a dashed line over its runs, and each
    level change as a dotted line before its first run, labelled with its ratio."""
    _mpl()
    import seaborn as sns
    from matplotlib.figure import Figure as MplFigure

    runs = rec["runs"]
    index = {r["run"]: i for i, r in enumerate(runs)}
    fig = MplFigure(figsize=(6.4, 2.9))
    ax = fig.subplots()
    ax.plot(range(len(runs)), [r["value"] for r in runs], marker="o", markersize=3,
            linewidth=0.8, color=sns.color_palette("colorblind", 1).as_hex()[0],
            label=t["chart.history_value"])
    for i, level in enumerate(rec["levels"]):
        ax.hlines(level["mean"], index[level["from_run"]] - 0.4, index[level["to_run"]] + 0.4,
                  colors=GREY, linestyles="--", linewidth=1,
                  label=t["chart.history_level"] if i == 0 else None)
    for i, c in enumerate(rec["changes"]):
        ax.axvline(c["index"] - 0.5, color=CHANGE_COLOUR, linestyle=":", linewidth=1.2,
                   label=t["chart.history_change"] if i == 0 else None)
        ax.annotate(f"×{c['ratio']:.3f}", (c["index"] - 0.5, 0.0), xycoords=("data",
                    "axes fraction"), xytext=(3, 3), textcoords="offset points",
                    fontsize=8, color=CHANGE_COLOUR,
                    bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none",
                          "alpha": 0.85})
    ticks = _history_ticks(rec)
    ax.set_xticks(ticks, [runs[i]["run"] for i in ticks], rotation=45, ha="right", fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xlabel(t["chart.history_runs"], fontsize=8)
    ax.set_ylabel(f"{rec['metric']} ({rec['unit']})", fontsize=8)
    p = rec["point"]
    title = f"{rec['metric']}: {p['engine']} {p['workload']} {p['load_id']}"
    ax.set_title(title, fontsize=8, loc="left", pad=14)
    _legend(ax, fontsize=8, frameon=False, loc="lower right", bbox_to_anchor=(1.0, 1.0),
            ncol=3, borderaxespad=0.1, handlelength=1.6, columnspacing=0.8)
    fig.tight_layout()
    said = "; ".join(f"{t['chart.history_change']} {c['run']} ×{c['ratio']:.3f}"
                     for c in rec["changes"]) or \
        t["chart.history_too_few" if rec["verdict"] == CANNOT_TELL else "chart.history_none"]
    return _svg(fig, f"{title}: {said}")


# --- a comparison of runs: their load curves overlaid ----------------------------------

OVERLAY_PANELS = (("output_throughput", None), ("p99_ttft_ms", "output_throughput"))


def run_colours(run_ids: list[str]) -> dict[str, str]:
    """One colour-blind-safe colour per compared run, by its place in the comparison."""
    import seaborn as sns

    colours = sns.color_palette("colorblind", max(3, len(run_ids))).as_hex()
    return {r: colours[i % len(colours)] for i, r in enumerate(run_ids)}


def _overlay_x(points: list[dict]) -> dict[str, float]:
    """load -> its place on the x axis: the load as a number, the unbounded load set apart
    at twice the highest (1 when there is no other)."""
    finite = [p["x"] for p in points if p.get("x") is not None]
    top = max(finite) * 2 if finite else 1.0
    return {p["load"]: (top if p.get("unbounded") else p["x"]) for p in points
            if p.get("unbounded") or p.get("x") is not None}


def _overlay_series(registry: dict[str, Figure], run: dict, y: str, x: str | None,
                    places: dict[str, float]) -> list[tuple[float, float]]:
    """(x, y) of one run's points: y a metric's figure, x the load's place or, for a
    frontier, another metric's figure."""
    out = []
    for p in run["points"]:
        fy, fx = p.get(y), p.get(x) if x else None
        if fy not in registry or (x and fx not in registry) or (not x and p["load"] not in
                                                                 places):
            continue
        out.append((registry[fx].value if x else places[p["load"]], registry[fy].value))
    return out


def overlay_chart(curve: dict, registry: dict[str, Figure], title: str,
                  t: dict[str, str], colours: dict[str, str]) -> Chart | None:
    """One engine and workload across the compared runs: output throughput against the
    load (left) and TTFT p99 against output throughput (right, the frontier), one colour
    per run. None when no run has a point with both figures."""
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    places = _overlay_x([p for r in curve["runs"] for p in r["points"]])
    fig = MplFigure(figsize=(7.0, 2.9))
    axes = fig.subplots(1, 2)
    fig.subplots_adjust(wspace=0.4, bottom=0.3, top=0.8)
    fig.suptitle(title, fontsize=9)
    alt, drawn = [title], 0
    for ax, (y, x) in zip(axes, OVERLAY_PANELS, strict=True):
        for run in curve["runs"]:
            pts = _overlay_series(registry, run, y, x, places)
            if not pts:
                continue
            drawn += 1
            ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", markersize=3,
                    linewidth=1.2, color=colours[run["run"]],
                    label=run["run"] if ax is axes[0] else None)
            alt.append(f"{run['run']} {y}: " + ", ".join(f"{a:,.1f} {b:,.1f}" for a, b in pts))
        ax.set_title(_overlay_label(t, y), fontsize=8, wrap=True)
        ax.set_xlabel(_overlay_label(t, x) if x else t["xrun.chart.load"], fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=8)
        _grouped_ticks(ax.yaxis)
    if not drawn:
        return None
    _overlay_ticks(axes[0], places, curve, t)
    _legend(axes[0], fontsize=8, frameon=False)
    return _svg(fig, "; ".join(alt))


def _overlay_label(t: dict[str, str], metric: str) -> str:
    """A metric's axis title; a tail statistic named by its percentile (``p99``)."""
    parsed = ids.parse_latency_field(metric)
    return t[f"xrun.chart.{metric}"].format(p=parsed[0] if parsed else "")


def _overlay_ticks(ax, places: dict[str, float], curve: dict, t: dict[str, str]) -> None:
    """The load axis: log scale when the loads span LOG_SPAN or more, each load named."""
    xs = sorted(set(places.values()))
    if xs and xs[0] > 0 and xs[-1] / xs[0] >= LOG_SPAN:
        ax.set_xscale("log")
    from matplotlib.ticker import NullLocator

    ax.xaxis.set_minor_locator(NullLocator())
    unbounded = {places[p["load"]] for r in curve["runs"] for p in r["points"]
                 if p.get("unbounded") and p["load"] in places}
    ax.set_xticks(xs, [t["chart.unbounded"] if x in unbounded else f"{x:g}" for x in xs],
                  fontsize=8)


def overlay_charts(rec: dict, registry: dict[str, Figure], t: dict[str, str],
                   title: Callable[[dict], str]) -> list[tuple[dict, Chart]]:
    """Per engine and workload that at least two runs measured: the overlay chart, with
    the curve it draws (``analyses.compare``'s ``curves``)."""
    colours = run_colours([r["id"] for r in rec["runs"]])
    out = []
    for curve in rec.get("curves", []):
        if len(curve["runs"]) < 2:
            continue
        chart = overlay_chart(curve, registry, title(curve), t, colours)
        if chart is not None:
            out.append((curve, chart))
    return out
