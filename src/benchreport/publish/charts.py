"""Charts for the article: SVG, labels per language, text drawn as paths (Hangul included,
no font needed to view), one colour per engine everywhere, same bytes for the same data."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable

from markupsafe import Markup, escape

from ..core import ids
from ..core.figures import Figure
from ..core.records import Ingested, Run
from .fonts import FALLBACK, FAMILY, font_path
from .narrative_base import SECONDS_FROM_MS


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(font_path()))
    name = font_manager.FontProperties(fname=str(font_path())).get_name()
    matplotlib.rcParams.update({
        "svg.fonttype": "none", "svg.hashsalt": "benchreport", "font.family": [name],
        "axes.unicode_minus": False, "figure.dpi": 100,
    })
    return matplotlib


def palette(run: Run) -> dict[str, str]:
    """Colour-blind-safe colours (seaborn's 'colorblind'), fixed per engine by run order."""
    import seaborn as sns

    colours = sns.color_palette("colorblind", max(3, len(run.meta.engines))).as_hex()
    return {e.id: colours[i] for i, e in enumerate(run.meta.engines)}


class Chart(Markup):
    """A chart as page markup (SVG), with a PNG of it at twice its size for blog platforms
    that take no SVG, and the pairs of its labels whose boxes overlap (none, a test says)."""

    png: bytes = b""
    overlaps: tuple[tuple[str, str], ...] = ()


PNG_DPI = 192       # the SVG's size is in points at 96 px per inch: 2× that


def overlapping_labels(fig) -> list[tuple[str, str]]:
    """Pairs of visible texts (titles, tick labels, legend entries, value labels) whose
    boxes, as matplotlib lays them out, intersect by more than a pixel each way."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    # the texts a draw really paints (tick labels beyond the axis limits exist but are not
    # drawn), with the boxes they were painted in
    boxes = []
    draw = Text.draw

    def recording(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            box = self.get_window_extent(renderer)
            if box.width > 0 and box.height > 0:
                boxes.append((self.get_text(), box))

    Text.draw = recording
    try:
        FigureCanvasAgg(fig).draw()
    finally:
        Text.draw = draw
    out = []
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if dx > 1 and dy > 1:
                out.append((a, b))
    return out


def _svg(fig, alt: str) -> Chart:
    overlaps = overlapping_labels(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]                        # drop the XML prolog and doctype
    # Labels stay text (small, selectable, quick to lay out), set in the page's own inline
    # fonts: matplotlib measured them with the same NanumGothic file.
    svg = re.sub(r"font-family:\s*'?[^;'\"]+'?", f"font-family: '{FAMILY}', '{FALLBACK}'", svg)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{escape(alt)}" ', 1)
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=PNG_DPI, bbox_inches="tight",
                metadata={"Software": None})
    chart = Chart(svg)
    chart.png, chart.overlaps = png.getvalue(), tuple(overlaps)
    return chart


def _grouped_ticks(axis) -> None:
    """Tick labels with thousands separators, as the article writes numbers."""
    from matplotlib.ticker import StrMethodFormatter

    axis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def _grouped_bars(ax, run: Run, rows: list, fmt: str) -> None:
    """One group of bars per workload, one bar per engine in its colour, values on top."""
    colours = palette(run)
    n = len(run.meta.engines)
    width = 0.8 / n
    for i, e in enumerate(run.meta.engines):
        pts = [(j + (i - (n - 1) / 2) * width, v) for j, w in enumerate(run.meta.workloads)
               for ww, ee, v in rows if ww.id == w.id and ee.id == e.id]
        if pts:
            bars = ax.bar([p[0] for p in pts], [p[1] for p in pts], width=width,
                          color=colours[e.id], label=e.name)
            ax.bar_label(bars, fmt=fmt, fontsize=8)
    ax.set_xticks(range(len(run.meta.workloads)), [w.label for w in run.meta.workloads])
    ax.spines[["top", "right"]].set_visible(False)
    # beside the bars, not over them
    _legend(ax, frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _bar_chart(run: Run, registry: dict[str, Figure], fid: Callable[[str, str], str],
               fmt: str, height: float):
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
    _grouped_bars(ax, run, rows, fmt)
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
            if span is not None and " – " in str(span.value):
                start, end = str(span.value).split(" – ")
                a = (dt.datetime.fromisoformat(start) - t0).total_seconds()
                b = (dt.datetime.fromisoformat(end) - t0).total_seconds()
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
        _legend(ax, frameon=False, fontsize=7)
    axes[-1].set_xlabel(t["chart.seconds"], fontsize=8)
    fig.suptitle(t["chart.decode_time"], fontsize=10)
    return _svg(fig, t["chart.decode_time"] + ". " + "; ".join(summary))


def chunk_chart(run: Run, chunks: list[dict], t: dict[str, str]) -> Markup | None:
    """The first request's clean chunks (pure, full, interval prefill only) against the
    context cached before each; its other batches (mixed, partial, after decode) hollow.
    ``chunks``: the rows of derived/tables/prefill_chunks.parquet."""
    colours = palette(run)
    longest = run.meta.workloads[-1]
    series = []
    for e in run.meta.engines:
        mine = sorted((r for r in chunks if r["engine"] == e.id and r["workload"] == longest.id
                       and r["request"] == 1), key=lambda r: r["line"])
        clean = [r for r in mine if r["clean"]]
        if len(clean) >= 2:
            series.append((e, clean, [r for r in mine if not r["clean"] and r.get("tps")]))
    if not series:
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(6.4, 2.6))
    ax = fig.subplots()
    for e, clean, left in series:
        ax.plot([r["cached"] for r in clean], [r["tps"] for r in clean], marker="o",
                color=colours[e.id], label=e.name)
        if left:
            ax.plot([r["cached"] for r in left], [r["tps"] for r in left], marker="o",
                    linestyle="none", markerfacecolor="white", color=colours[e.id],
                    label=f"{e.name}: {t['chart.other_batches']}")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(5))      # six-digit labels need room
    _grouped_ticks(ax.xaxis)
    _grouped_ticks(ax.yaxis)
    ax.set_xlabel(t["chart.cached"], fontsize=8)
    ax.set_ylabel(t["chart.tps"], fontsize=8)
    ax.set_title(f'{t["chart.chunks"]} ({longest.label})', fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    _legend(ax, frameon=False, fontsize=7)
    alt = t["chart.chunks"] + ": " + "; ".join(
        f"{e.name} " + " → ".join(f"{r['tps']:.0f}" for r in clean) for e, clean, _ in series)
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

    colours = palette(run)
    fig = MplFigure(figsize=(6.4, 2.6), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    alt = []
    for ax, m in zip(axes, metrics, strict=True):
        values = [registry[fid].value for w in run.meta.workloads for e in run.meta.engines
                  for stat in ("median", "p99")
                  if (fid := ids.latency(w.id, e.id, m, stat)) in registry]
        scale, unit = (1000.0, t["chart.seconds_unit"]) \
            if max(values, default=0) >= SECONDS_FROM_MS else (1.0, "ms")
        for e in run.meta.engines:
            for stat, style in (("median", "-"), ("p99", "--")):
                pts = [(i, w, registry[ids.latency(w.id, e.id, m, stat)].value / scale)
                       for i, w in enumerate(run.meta.workloads)
                       if ids.latency(w.id, e.id, m, stat) in registry]
                label = f"{e.name} {t['chart.median'] if stat == 'median' else stat}"
                if pts:
                    ax.plot([p[0] for p in pts], [p[2] for p in pts], style, marker="o",
                            color=colours[e.id], label=label)
                    alt.append(f"{t['metric.' + m]}, {label}: " + ", ".join(
                        f"{w.label} {v:,.1f} {unit}" for _, w, v in pts))
        ax.set_xticks(range(len(run.meta.workloads)), [w.label for w in run.meta.workloads])
        ax.set_title(t[f"metric.{m}"], fontsize=9)
        ax.set_ylabel(unit, fontsize=8)
        _grouped_ticks(ax.yaxis)
        ax.spines[["top", "right"]].set_visible(False)
        _legend(ax, frameon=False, fontsize=6)
    return _svg(fig, t["heading.latency"] + ": " + "; ".join(alt))


def acceptance_chart(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> Markup | None:
    made = _bar_chart(run, registry, lambda w, e: ids.spec(w, e, "accept_len"), "%.2f",
                      2.2)
    if made is None:
        return None
    fig, ax, rows = made
    ax.set_ylabel(t["table.accept_len"], fontsize=8)
    ax.set_ylim(0, max(v for _, _, v in rows) * 1.25)
    return _svg(fig, t["table.accept_len"] + ": " + "; ".join(
        f"{w.label} {e.name} {v:.2f}" for w, e, v in rows))


def _campaign_series(registry: dict[str, Figure]) -> dict[str, dict[tuple, dict]]:
    """workload -> (engine, variant) -> {load: {metric: figure}} of the curve figures."""
    out: dict[str, dict[tuple, dict]] = {}
    for fid, f in registry.items():
        c = f.context
        if fid.startswith("curve.") and "metric" in c:
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


def _mark_legend(ax, seen: set[str], t: dict[str, str]) -> None:
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    for key, marker, label in MARKS:
        if key in seen:
            handles.append(Line2D([], [], linestyle="none", marker=marker, markersize=6,
                                  markerfacecolor="none", markeredgecolor="#555555"))
            labels.append(t[label])
    ax.legend(handles, labels, frameon=False, fontsize=6)


def _marked_loads(per: dict[tuple, dict], seen: set[str], t: dict[str, str]) -> list[str]:
    """For the chart's text alternative: the loads each mark is drawn at."""
    out = []
    for key, _, label in MARKS:
        loads = sorted({load for s in per.values() for load, f in s.items()
                        if "output_throughput" in f and f["output_throughput"].context.get(key)})
        if key in seen and loads:
            out.append(f"{t[label]}: {', '.join(loads)}")
    return out


def curve_charts(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> list[Markup]:
    """Per campaign workload: output throughput, TTFT and TPOT against load, one line per
    series; error bars are the repeats' 95% intervals (on the log scale, so never below
    zero), dashed lines the p99; hollow squares mark saturated loads, hollow diamonds loads
    whose cause the files cannot tell."""
    charts = []
    for wid, per in _campaign_series(registry).items():
        _mpl()
        from matplotlib.figure import Figure as MplFigure

        loads = sorted({load: f["output_throughput"].context["x"] for s in per.values()
                        for load, f in s.items() if "output_throughput" in f}.items(),
                       key=lambda kv: float("inf") if kv[1] is None else kv[1])
        pos = {load: i for i, (load, _) in enumerate(loads)}
        styles = _styles(run, per)
        fig = MplFigure(figsize=(7.0, 2.6))
        axes = fig.subplots(1, 3)
        fig.subplots_adjust(wspace=0.45)     # room for wide tick labels of long intervals
        alt = []
        seen: set[str] = set()
        panels = ((axes[0], [("output_throughput", "-")], t["table.out_tok_per_s"]),
                  (axes[1], [("median_ttft_ms", "-"), ("p99_ttft_ms", ":")],
                   t["metric.ttft"] + " (ms)"),
                  (axes[2], [("median_tpot_ms", "-"), ("p99_tpot_ms", ":")],
                   t["metric.tpot"] + " (ms)"))
        for ax, metrics, title in panels:
            for key, s in per.items():
                colour, dash, label = styles[key]
                for metric, style in metrics:
                    pts = sorted((pos[load], f[metric]) for load, f in s.items()
                                 if metric in f and load in pos)
                    if not pts:
                        continue
                    xs = [x for x, _ in pts]
                    ys = [f.value for _, f in pts]
                    err = [[max(0.0, f.value - f.context["low"]) if f.context.get("low")
                            is not None else 0.0 for _, f in pts],
                           [max(0.0, f.context["high"] - f.value) if f.context.get("high")
                            is not None else 0.0 for _, f in pts]]
                    ax.errorbar(xs, ys, yerr=err, color=colour,
                                linestyle=dash if style == "-" else style, marker="o",
                                markersize=3, capsize=2, linewidth=1.2,
                                label=label if style == "-" else f"{label} p99")
                    if style == "-":
                        _marks(ax, pts, colour, seen)
                    alt.append(f"{label} {metric}: " + ", ".join(
                        f"{load} {f[metric].value:.1f}" for load, f in s.items()
                        if metric in f))
            ax.set_xticks(range(len(loads)), [load for load, _ in loads], fontsize=7,
                          rotation=45 if len(loads) > 5 else 0)
            ax.set_title(title, fontsize=8, wrap=True)
            ax.spines[["top", "right"]].set_visible(False)
            ax.tick_params(labelsize=7)
        _mark_legend(axes[0], seen, t)
        charts.append(_svg(fig, t["section.curves"] + ": " + "; ".join(
            alt + _marked_loads(per, seen, t))))
    return charts


def pareto_charts(run: Run, registry: dict[str, Figure], t: dict[str, str]) -> list[Markup]:
    """Per campaign workload: throughput (per GPU when the GPU count is known) against
    interactivity; every load as a dot, the frontier as a line, crossings dotted."""
    charts = []
    for wid, per in _campaign_series(registry).items():
        y_metric = None
        for key in per:
            fid = ids.pareto(wid, ids.series(*key), None, "frontier")
            if fid in registry:
                y_metric = registry[fid].context["y"]
        if y_metric is None:
            continue
        _mpl()
        from matplotlib.figure import Figure as MplFigure

        styles = _styles(run, per)
        fig = MplFigure(figsize=(5.2, 3.0))
        ax = fig.subplots()
        alt = []
        for key, s in per.items():
            colour, dash, label = styles[key]
            pts = [(f["interactivity"].value, f[y_metric].value, load) for load, f in s.items()
                   if "interactivity" in f and y_metric in f]
            if not pts:
                continue
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, color=colour,
                       alpha=0.5)
            front = registry.get(ids.pareto(wid, ids.series(*key), None, "frontier"))
            keep = set(front.context["loads"]) if front else set()
            line = sorted(p for p in pts if p[2] in keep)
            ax.plot([p[0] for p in line], [p[1] for p in line], dash, color=colour,
                    marker="o", markersize=3, label=label)
            for x, y, load in line:
                ax.annotate(load, (x, y), fontsize=6, xytext=(2, 2),
                            textcoords="offset points")
            alt.append(f"{label}: " + ", ".join(f"{load} ({x:.1f}, {y:.1f})"
                                                 for x, y, load in line))
        for f in registry.values():
            c = f.context
            if f.unit == "crossings" and c.get("workload") == wid:
                for i in range(1, int(f.value) + 1):
                    x = registry[ids.pareto(wid, c["a"], c["b"], f"cross{i}")].value
                    ax.axvline(x, color="#888888", linestyle=":", linewidth=0.8)
        ax.set_xlabel(t["campaign.interactivity"], fontsize=8)
        ax.set_ylabel(t["campaign.per_gpu"] if y_metric.endswith("per_gpu")
                      else t["table.out_tok_per_s"], fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=7)
        _legend(ax, frameon=False, fontsize=7)
        charts.append(_svg(fig, t["section.pareto"] + ": " + "; ".join(alt)))
    return charts


def server_chart(run: Run, series: list[dict], t: dict[str, str]) -> Markup | None:
    """KV-cache usage and waiting requests at each /metrics scrape inside each benchmark
    (the rows the server notebook saved), one panel per workload, time from the first."""
    if not any(r.get("kv_usage") is not None or r.get("waiting") is not None for r in series):
        return None
    _mpl()
    from matplotlib.figure import Figure as MplFigure

    colours = palette(run)
    workloads = [w for w in run.meta.workloads if any(r["workload"] == w.id for r in series)]
    fig = MplFigure(figsize=(6.4, 2.3 * len(workloads)))
    axes = fig.subplots(len(workloads), 2, squeeze=False)
    summary = []
    for (kv_ax, q_ax), w in zip(axes, workloads, strict=True):
        for e in run.meta.engines:
            rows = sorted((r for r in series if r["workload"] == w.id and r["engine"] == e.id),
                          key=lambda r: r["ts"])
            if not rows:
                continue
            t0 = dt.datetime.fromisoformat(rows[0]["ts"])
            xs = [(dt.datetime.fromisoformat(r["ts"]) - t0).total_seconds() for r in rows]
            kv = [r.get("kv_usage") for r in rows]
            scale = 100.0 if all(v is None or v <= 1.0 for v in kv) else 1.0
            kv_ax.plot(xs, [None if v is None else v * scale for v in kv], marker=".",
                       color=colours.get(e.id), label=e.name)
            q_ax.plot(xs, [r.get("waiting") for r in rows], marker=".",
                      color=colours.get(e.id), label=e.name)
            peak = max((v for v in kv if v is not None), default=None)
            if peak is not None:
                summary.append(f"{w.label} {e.name} {peak * scale:.0f}%")
        kv_ax.set_title(f"{w.label}: {t['chart.kv_usage']}", fontsize=9)
        q_ax.set_title(f"{w.label}: {t['chart.waiting']}", fontsize=9)
        for ax in (kv_ax, q_ax):
            ax.set_xlabel(t["chart.seconds_in"], fontsize=8)
            ax.tick_params(labelsize=8)
        _legend(kv_ax, fontsize=7, frameon=False)
    fig.tight_layout()
    return _svg(fig, t["chart.server"] + ": " + "; ".join(summary))
