"""The campaign sections: load curves, Pareto frontier, capacity and cost, validity.

They appear only when the registry holds campaign figures (a workload measured at several
loads or with repeats; see ``analyses.curves``), except validity: every point of every run
is checked, so a run of single points gets the validity section alone. Sentences are
chosen by figures: a knee found or not, who leads on which interactivity range, whether a
ratio's interval holds 1 (a tie: no winner is named inside the noise), whether an SLO was
set, which loads are saturated.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from ..core import ids
from ..core.figures import Figure
from ..core.i18n import format_value, sentence
from ..core.verdicts import (
    BELOW,
    HIGHER,
    INTERPOLATED,
    INTERVAL_LEVEL,
    LOWER,
    NO_INTERVAL,
    NONE,
    NOT_EVALUABLE,
    NOT_REACHED,
    PASSED,
    SATURATED,
    TIE_IN_NOISE,
    UNVERIFIED,
)
from .narrative_base import Writer
from .sections import Section, Table, client_name, metric_header

# placeholders the catalogue sentences take from here, not typed into the catalogues
WORDS = {"level": f"{INTERVAL_LEVEL:.0%}", "one": "1", "median": "p50", "tail": "p99",
         "p90": "p90"}
TIE, UNKNOWN = TIE_IN_NOISE, NO_INTERVAL
CURVE_COLUMNS = ("output_throughput", "output_throughput_per_gpu", "median_ttft_ms",
                 "p99_ttft_ms", "median_tpot_ms", "p99_tpot_ms", "median_e2el_ms", "goodput")


def all_series(w: Writer) -> list[dict[str, Any]]:
    """One entry per series (workload, key, engine, variant, kind, loads in order)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for fid, fig in w.registry.items():
        if not ids.family(fid) == "curve" or "metric" not in fig.context:
            continue
        c = fig.context
        key = (c["workload"], ids.series(c["engine"], c["variant"]))
        s = found.setdefault(key, {"workload": c["workload"], "key": key[1],
                                   "engine": c["engine"], "variant": c["variant"],
                                   "kind": c["kind"], "loads": {}})
        s["loads"][c["load"]] = c["x"]
    order = {e.id: i for i, e in enumerate(w.run.meta.engines)}
    wl = {x.id: i for i, x in enumerate(w.run.meta.workloads)}
    out = sorted(found.values(), key=lambda s: (wl.get(s["workload"], 0),
                                                 order.get(s["engine"], 0), s["variant"]))
    for s in out:
        s["loads"] = [load for load, _ in sorted(s["loads"].items(), key=_load_key)]
    return out


def _load_key(item: tuple[str, float | None]) -> float:
    """Loads in order; an unbounded one (no number) last."""
    return float("inf") if item[1] is None else item[1]


def series_name(w: Writer, s: dict[str, Any]) -> str:
    name = w.engine_name(s["engine"])
    return f"{name} ({s['variant']})" if s["variant"] else name


def _with_interval(w: Writer, fid: str) -> Markup:
    """A figure's value as a link, and its 95% interval when it has one."""
    if not w.has(fid):
        return Markup("–")
    fig = w.registry[fid]
    link = w.fig(fid).html
    low, high = fig.context.get("low"), fig.context.get("high")
    if low is None or high is None:
        return link
    return sentence(w.t["campaign.interval"], value=link, low=_num(w, fig, low),
                    high=_num(w, fig, high))


def _cell_with_interval(w: Writer, fid: str) -> Markup:
    """A table cell: the number alone (the header gives the unit) as a link, and its 95%
    interval on a line of its own, so wide tables fit a page."""
    if not w.has(fid):
        return Markup("–")
    fig = w.registry[fid]
    link = w.link(fid, _num(w, fig, fig.value))
    low, high = fig.context.get("low"), fig.context.get("high")
    if low is None or high is None:
        return link
    return link + Markup('<br><span class="interval">') + sentence(
        w.t["campaign.interval_only"], low=_num(w, fig, low), high=_num(w, fig, high)) \
        + Markup("</span>")


def _cv(w: Writer, fid: str) -> Markup:
    """The repeats' coefficient of variation of a figure, in %, linked to the figure."""
    cv = w.registry[fid].context.get("cv") if w.has(fid) else None
    if cv is None:
        return Markup("–")
    return w.link(fid, format_value(cv * 100, "%", w.lang, 1))


def _num(w: Writer, fig: Figure, value: float) -> str:
    return format_value(value, "count", w.lang, fig.decimals)


def campaign_sections(w: Writer) -> list[Section]:
    if not w.has(ids.campaign("points")) or not all_series(w):
        return [s for s in (validity_section(w),) if s is not None]
    return [s for s in (curves_section(w), pareto_section(w), capacity_section(w),
                        validity_section(w)) if s is not None]


def _setup(w: Writer) -> list[Markup]:
    t = w.t
    clients = sorted({f.context["client"] for fid, f in w.registry.items()
                      if ids.family(fid) == "point" and f.context.get("client")})
    paras = [sentence(t["campaign.setup"], points=w.fig(ids.campaign("points")),
                      series=w.fig(ids.campaign("series")),
                      repeats=w.fig(ids.campaign("repeats")),
                      clients=", ".join(client_name(w, c) for c in clients))]
    repeats = w.registry[ids.campaign("repeats")].value
    paras.append(sentence(t["campaign.with_repeats"] if repeats and repeats >= 2
                          else t["campaign.single_runs"], **WORDS))
    return paras


def curves_section(w: Writer) -> Section | None:
    t = w.t
    series = all_series(w)
    paras = _setup(w) + key_findings(w)
    for s in series:
        fid = ids.curve_series(s["workload"], s["key"], "knee")
        if not w.has(fid):
            continue
        paras += [x for x in (knee_sentence(w, s),) if x is not None]
        saturated = w.registry[fid].context.get("saturated")
        if saturated:
            paras.append(sentence(t["campaign.saturated"], engine=series_name(w, s),
                                  loads=", ".join(saturated)))
    tables = []
    for s in series:
        caption = str(sentence(t["campaign.curve_caption"], engine=series_name(w, s),
                               workload=workload_label(w, s["workload"])))
        speed, waits = [], []
        for load in s["loads"]:
            f = ids.curve(s["workload"], s["key"], load, "output_throughput")
            n = w.registry[f].context.get("n") if w.has(f) else None
            cells = {m: _cell_with_interval(w, ids.curve(s["workload"], s["key"], load, m))
                     for m in CURVE_COLUMNS}
            speed.append([Markup(escape(load)),
                          Markup(escape(str(n) if n is not None else "–")), _cv(w, f)]
                         + [cells[m] for m in CURVE_COLUMNS[:2]] + [cells["goodput"]])
            waits.append([Markup(escape(load))] + [cells[m] for m in CURVE_COLUMNS[2:7]])
        # two tables of six columns each: one of eleven does not fit a page
        tables.append(Table(
            caption=caption,
            header=[t["table.load"], t["campaign.n"], t["campaign.cv"],
                    t["table.out_tok_per_s"], t["campaign.per_gpu"],
                    t["campaign.goodput_header"]],
            rows=speed, numeric=tuple(range(1, 6))))
        tables.append(Table(
            header=[t["table.load"], t["table.ttft_median"],
                    str(sentence(t["table.ttft_tail"], p="p99")),
                    metric_header(w, "table.tpot_median", "tpot", s["workload"], s["engine"],
                                  s["variant"]),
                    metric_header(w, "campaign.tpot_tail", "tpot", s["workload"], s["engine"],
                                  s["variant"], p="p99"), t["table.e2el_median"]],
            rows=waits, numeric=tuple(range(1, 6))))
    paras += comparison_sentences(w)
    return Section(id="curves", heading=t["section.curves"], paragraphs=paras, tables=tables)


def _verdict(w: Writer, fid: str) -> str:
    """The verdict of a comparison figure (UNKNOWN when it has none)."""
    c = w.registry[fid].context
    vid = ids.compare(c["workload"], c["a"], c["b"], c["load"], c["metric"], "verdict")
    return str(w.registry[vid].value) if w.has(vid) else UNKNOWN


def knee_sentence(w: Writer, s: dict[str, Any]) -> Markup | None:
    """The knee of a series: a plateau, or a peak after which throughput falls; where none
    was found, whether throughput still rose at the heaviest load (the peak figure says);
    nothing for a series of one load, which has no curve to bend."""
    t = w.t
    fid = ids.curve_series(s["workload"], s["key"], "knee")
    if w.registry[fid].value == NONE:
        peak = ids.curve_series(s["workload"], s["key"], "peak")
        if not w.has(peak):
            return None
        key = "campaign.knee_rising" if w.registry[peak].context["at_heaviest"] \
            else "campaign.knee_unclear"
        c = w.registry[fid].context
        return sentence(t[key], engine=series_name(w, s), load=w.fig(peak),
                        gain=f"{c['gain']:.0%}", latency=f"{c['latency']:.0%}")
    fall = ids.curve_series(s["workload"], s["key"], "fall_pct")
    if w.has(fall) and w.registry[fall].context.get("falls"):
        return sentence(t["campaign.knee_falls"], engine=series_name(w, s), load=w.fig(fid),
                        fall=w.fig(fall), last=w.registry[fall].context["last"])
    return sentence(t["campaign.knee"], engine=series_name(w, s), load=w.fig(fid))


def workload_label(w: Writer, wid: str) -> str:
    try:
        return w.run.meta.workload(wid).label
    except KeyError:
        return wid


def _pairs(w: Writer, metric: str) -> list[dict[str, Any]]:
    """(workload, a, b) of every comparison of ``metric``, with its per-load figures."""
    pairs: dict[tuple[str, str, str], dict[str, Any]] = {}
    for fid, f in w.registry.items():
        c = f.context
        if ids.family(fid) == "compare" and c.get("metric") == metric and "load" in c \
                and f.unit == "x":
            p = pairs.setdefault((c["workload"], c["a"], c["b"]),
                                 {"workload": c["workload"], "a": c["a"], "b": c["b"],
                                  "engine_a": c["engine_a"], "engine_b": c["engine_b"],
                                  "variant": c["variant"], "loads": []})
            p["loads"].append(fid)
    return list(pairs.values())


def comparison_sentences(w: Writer) -> list[Markup]:
    """Per pair: the count of loads by verdict, then each load's ratio with interval and n."""
    t = w.t
    out = []
    for metric in ("output_throughput", "median_e2el_ms"):
        for p in _pairs(w, metric):
            a, b = w.name(p["engine_a"]), w.name(p["engine_b"])
            count = {v: w.registry[ids.compare_count(p["workload"], p["a"], p["b"], metric, v)]
                     for v in (HIGHER, LOWER, TIE, UNKNOWN)}
            n_loads = sum(int(f.value) for f in count.values())
            if count[UNKNOWN].value == n_loads:
                out.append(sentence(t["campaign.compare_unknown"], a=a, b=b,
                                    metric=t[f"campaign.metric.{metric}"]))
                continue
            if count[TIE].value == n_loads:
                out.append(sentence(t["campaign.compare_all_tie"], a=a, b=b,
                                    metric=t[f"campaign.metric.{metric}"], **WORDS))
            else:
                out.append(sentence(
                    t["campaign.compare_counts"], a=a, b=b,
                    metric=t[f"campaign.metric.{metric}"],
                    higher=w.fig(ids.compare_count(p["workload"], p["a"], p["b"], metric,
                                                   HIGHER)),
                    lower=w.fig(ids.compare_count(p["workload"], p["a"], p["b"], metric,
                                                  LOWER)),
                    tie=w.fig(ids.compare_count(p["workload"], p["a"], p["b"], metric, TIE))))
            if metric != "output_throughput":
                continue
            for fid in sorted(p["loads"], key=lambda f: w.registry[f].context.get("order", 0)):
                out.append(ratio_sentence(w, fid, a, b))
    return out


def ratio_sentence(w: Writer, fid: str, a, b) -> Markup:
    t = w.t
    f = w.registry[fid]
    c = f.context
    verdict = _verdict(w, fid)
    key = {HIGHER: "campaign.ratio_higher", LOWER: "campaign.ratio_lower",
           TIE: "campaign.ratio_tie"}.get(verdict, "campaign.ratio_unknown")
    values = {**WORDS, "a": a, "b": b, "load": c["load"], "ratio": w.fig(fid),
              "metric": t[f"campaign.metric.{c['metric']}"]}
    if verdict != UNKNOWN:
        values.update(low=_num(w, f, c["low"]), high=_num(w, f, c["high"]),
                      n_a=c["n_a"], n_b=c["n_b"])
    return sentence(t[key], **values)


SINGLE_RUN_METRICS = ("output_throughput", "median_ttft_ms")
SINGLE_RUN_MOST = 4          # workloads named in the headline; the curves section has all


def _single_part(w: Writer, p: dict[str, Any], metric: str) -> Markup | None:
    """One metric of one pair: the measured ratio range and whether it is above one at
    every load, below at every load, or neither; None when any load has an interval."""
    fids = p["loads"]
    if not fids or any(_verdict(w, f) != UNKNOWN for f in fids):
        return None
    values = [w.registry[f].value for f in fids]
    side = ("all_higher" if all(v > 1 for v in values) else
            "all_lower" if all(v < 1 for v in values) else "mixed")
    low = min(fids, key=lambda f: w.registry[f].value)
    high = max(fids, key=lambda f: w.registry[f].value)
    return sentence(w.t[f"campaign.single_{side}"], a=w.name(p["engine_a"]),
                    b=w.name(p["engine_b"]), metric=w.t[f"campaign.metric.{metric}"],
                    n=str(len(fids)), low=w.fig(low), high=w.fig(high))


def single_run_findings(w: Writer) -> list[Markup]:
    """Per pair of engines and workload whose ratios all come from one run each (no
    interval): one sentence with each metric's measured ratio range, then one that says
    no interval comes with them. No winner is named beyond what was measured."""
    parts: dict[tuple[str, str, str], list[Markup]] = {}
    for metric in SINGLE_RUN_METRICS:
        for p in _pairs(w, metric):
            part = _single_part(w, p, metric)
            if part is not None:
                parts.setdefault((p["workload"], p["a"], p["b"]), []).append(part)
    out = [sentence(w.t["campaign.single_pair"], workload=workload_label(w, key[0]),
                    parts=Markup(escape(w.t["campaign.single_join"])).join(found))
           for key, found in sorted(parts.items())][:SINGLE_RUN_MOST]
    if out and w.has(ids.REPEATS):
        out.append(sentence(w.t["campaign.single_note"], n=w.fig(ids.REPEATS)))
    return out


def key_findings(w: Writer) -> list[Markup]:
    """The campaign's key finding, chosen from the data: per pair, the largest
    output-throughput ratio outside the noise (with its interval and n) — among the loads
    where both engines meet the SLO when one is set, since a ratio at a load that breaks
    the objectives describes an overload — or that no load separates them."""
    t = w.t
    out = []
    for p in _pairs(w, "output_throughput"):
        a, b = w.name(p["engine_a"]), w.name(p["engine_b"])
        label = workload_label(w, p["workload"])
        with_slo = any(w.registry[fid].context.get("within_slo") is not None
                       for fid in p["loads"])
        pool = [fid for fid in p["loads"]
                if not with_slo or w.registry[fid].context.get("within_slo")]
        beyond = [fid for fid in pool if _verdict(w, fid) in (HIGHER, LOWER)]
        if not beyond:
            if any(_verdict(w, fid) == TIE for fid in pool):
                out.append(sentence(t["campaign.finding_tie_slo" if with_slo
                                      else "campaign.finding_tie"],
                                    a=a, b=b, workload=label))
            continue

        def spread(fid: str) -> float:
            v = w.registry[fid].value
            return max(v, 1 / v) if v else 0.0
        best = max(beyond, key=spread)
        lead, other = (a, b) if w.registry[best].value >= 1 else (b, a)
        out.append(sentence(t["campaign.finding_slo" if with_slo else "campaign.finding"],
                            leader=lead, other=other, workload=label,
                            detail=ratio_sentence(w, best, a, b)))
    return out


def _pareto_series(w: Writer) -> dict[str, set[str]]:
    """workload -> the series with an interactivity figure, for the workloads where two
    loads or more have one (the Pareto chart draws those; one dot makes no chart)."""
    loads: dict[str, set[tuple[str, str]]] = {}
    for fid, f in w.registry.items():
        c = f.context
        if ids.family(fid) == "curve" and c.get("metric") == "interactivity":
            loads.setdefault(c["workload"], set()).add(
                (ids.series(c["engine"], c.get("variant", "")), c["load"]))
    return {wid: {s for s, _ in pts} for wid, pts in loads.items() if len(pts) >= 2}


def pareto_section(w: Writer) -> Section | None:
    t = w.t
    drawn = _pareto_series(w)
    if not drawn:
        return None                         # no chart: no section around it
    shared = any(len(series) > 1 for series in drawn.values())
    paras = [sentence(t["campaign.pareto_intro" if shared and not w.one_engine()
                         else "campaign.pareto_intro_one"])]
    if any(ids.family(fid) == "pareto" and f.context.get("ttft_filtered")
           for fid, f in w.registry.items()):
        paras.append(sentence(t["campaign.pareto_ttft"]))
    seen = False
    for fid, f in sorted(w.registry.items()):
        if not (ids.family(fid) == "pareto" and ids.leaf(fid) == "crossings"):
            continue
        seen = True
        c = f.context
        a, b = w.name(c["engine_a"]), w.name(c["engine_b"])
        wid = c["workload"]
        if not c.get("segments"):
            paras.append(sentence(t["campaign.pareto_disjoint"], a=a, b=b))
            continue
        for i in range(1, int(c["segments"]) + 1):
            def seg(part: str, i: int = i) -> str:
                return ids.pareto(wid, c["a"], c["b"], f"seg{i}.{part}")
            paras.append(sentence(t["campaign.pareto_segment"],
                                  leader=w.name(str(w.registry[seg("leader")].value)),
                                  low=w.fig(seg("from")), high=w.fig(seg("to"))))
        if f.value:
            paras.append(sentence(t["campaign.pareto_cross"], a=a, b=b, crossings=w.fig(fid),
                                  at=Markup(", ").join(
                                      w.fig(ids.pareto(wid, c["a"], c["b"], f"cross{i}")).html
                                      for i in range(1, int(f.value) + 1))))
        else:
            paras.append(sentence(t["campaign.pareto_no_cross"], a=a, b=b))
    if not seen and not any(f.context.get("y") and ids.family(fid) == "pareto"
                            for fid, f in w.registry.items()):
        return None                         # no series has a frontier
    if shared and not w.one_engine():
        paras.append(sentence(t["campaign.pareto_noise"]))
    return Section(id="pareto", heading=t["section.pareto"], paragraphs=paras)


def _limiting(capacity: dict) -> str:
    """The metric whose objective a series' capacity ran into (``TTFT``)."""
    parsed = ids.parse_latency_field(capacity["limiting"])
    return parsed[1].upper() if parsed else str(capacity["limiting"])


def capacity_words(w: Writer, s: dict[str, Any]) -> Markup:
    """A series' capacity within the SLO in words, chosen by its figure's status."""
    t = w.t
    fid = ids.slo(s["workload"], s["key"], "capacity")
    c = w.registry[fid].context
    status = c.get("status")
    if status == INTERPOLATED:
        return sentence(t["campaign.capacity_interpolated"], value=_with_interval(w, fid),
                        low=c["between"][0], high=c["between"][1], metric=_limiting(c))
    if status == NOT_REACHED:
        return sentence(t["campaign.capacity_not_reached"], value=w.fig(fid))
    if status == BELOW:
        return sentence(t["campaign.capacity_below"], load=s["loads"][0])
    return sentence(t["campaign.capacity_none"])


def capacity_section(w: Writer) -> Section:
    t = w.t
    series = all_series(w)
    if not w.has(ids.campaign("slo.percentile")):
        return Section(id="capacity", heading=t["section.capacity"],
                       paragraphs=[sentence(t["campaign.no_slo"])])
    objectives = [sentence(t["campaign.objective"], p=w.fig(ids.campaign("slo.percentile")),
                           metric=t[f"metric.{m}"], limit=w.fig(ids.campaign(f"slo.{m}_ms")))
                  for m in ("ttft", "tpot", "itl", "e2el")
                  if w.has(ids.campaign(f"slo.{m}_ms"))]
    paras = [sentence(t["campaign.slo"], objectives=Markup("; ").join(objectives))]
    rows = []
    for s in series:
        fid = ids.slo(s["workload"], s["key"], "capacity")
        if not w.has(fid):
            continue
        cap = capacity_words(w, s)
        out_fid = ids.slo(s["workload"], s["key"], "capacity_output")
        cost_fid = ids.cost(s["workload"], s["key"], "at_capacity")
        rows.append([Markup(escape(series_name(w, s))), cap,
                     w.fig(out_fid).html if w.has(out_fid) else Markup("–"),
                     w.fig(cost_fid).html if w.has(cost_fid) else Markup("–")])
    cost_rows = []
    if w.has(ids.campaign("cost.gpus")):
        for s in series:
            cells = [[_cell_with_interval(w, ids.cost(s["workload"], s["key"], load)),
                      _meets(w, s, load)] for load in s["loads"]]
            cost_rows.append((s, cells))
    tables = [Table(header=[t["table.engine"], t["campaign.capacity"],
                            t["campaign.capacity_output"], t["campaign.cost_at_capacity"]],
                    rows=rows, numeric=(2, 3))]
    if w.has(ids.campaign("cost.gpus")):
        paras.append(sentence(t["campaign.cost"], gpus=w.fig(ids.campaign("cost.gpus"))))
        for s, cells in cost_rows:
            tables.append(Table(
                caption=str(sentence(t["campaign.cost_caption"], engine=series_name(w, s))),
                header=[t["table.load"], t["campaign.cost_per_mtok"], t["campaign.meets"]],
                rows=[[Markup(escape(load))] + cell for load, cell in zip(s["loads"], cells,
                                                                           strict=True)],
                numeric=(1,)))
    else:
        paras.append(sentence(t["campaign.no_cost"]))
    good = any(ids.family(fid) == "point" and ids.leaf(fid) == "goodput" for fid in w.registry)
    paras.append(sentence(t["campaign.goodput"] if good else t["campaign.no_goodput"]))
    return Section(id="capacity", heading=t["section.capacity"], paragraphs=paras,
                   tables=tables)


def _meets(w: Writer, s: dict[str, Any], load: str) -> Markup:
    fid = ids.slo(s["workload"], s["key"], f"{load}.meets")
    if not w.has(fid):
        return Markup("–")
    return w.link(fid, w.t[f"campaign.meets_{w.registry[fid].value}"])


def validity_ids(w: Writer) -> list[str]:
    """The points' validity figures in the run's order: workload and engine as run.yaml
    lists them, then series, load (lightest first, an unbounded one last) and repeat."""
    found = [fid for fid in w.registry
             if (ids.parse_point(fid) or ("", ""))[1] == "validity"]
    engines = {e.id: i for i, e in enumerate(w.run.meta.engines)}
    workloads = {x.id: i for i, x in enumerate(w.run.meta.workloads)}

    def order(fid: str) -> tuple:
        c = w.registry[fid].context
        x = c.get("x")
        return (workloads.get(c["workload"], len(workloads)), c["workload"],
                engines.get(c["engine"], len(engines)), c["engine"], c.get("variant", ""),
                x is None, x or 0.0, c.get("repeat", 1), fid)
    return sorted(found, key=order)


def _found(w: Writer, checks: list[dict[str, Any]]) -> Markup:
    return Markup("; ").join(
        sentence(w.t[f"validity.{c['code']}"], value=_check_value(w, c, "value"),
                 limit=_check_value(w, c, "limit"),
                 asked=_check_value(w, {"value": c.get("asked"), "unit": "%"}, "value"),
                 basis=w.t[f"validity.basis.{c['basis']}"] if c.get("basis") else "",
                 **WORDS)
        for c in checks if c["severity"] not in (PASSED, NOT_EVALUABLE)) or Markup("–")


def _unrun(w: Writer, checks: list[dict[str, Any]]) -> Markup:
    t = w.t
    return Markup("; ").join(
        sentence(t["validity.lacking"], rule=t[f"validity.rule.{c['rule']}"],
                 missing=", ".join(t[f"validity.missing.{m}"] for m in c.get("missing", [])))
        for c in checks if c["severity"] == NOT_EVALUABLE) or Markup("–")


def point_label(w: Writer, ctx: dict[str, Any], repeat: bool = True) -> str:
    """A point as readers name it: engine (and series), workload, load and, where the
    workload has repeats (and ``repeat``), which run."""
    parts = [series_name(w, {"engine": ctx["engine"], "variant": ctx.get("variant", "")}),
             workload_label(w, ctx["workload"]), ctx["load"]]
    try:
        repeats = w.run.meta.workload(ctx["workload"]).repeats
    except KeyError:
        repeats = 1
    if repeat and (repeats > 1 or ctx.get("repeat", 1) > 1):
        parts.append(sentence(w.t["validity.run_n"], n=str(ctx["repeat"])))
    return " · ".join(str(x) for x in parts)


def _verdict_cell(w: Writer, fid: str) -> Markup:
    f = w.registry[fid]
    cell = w.link(fid, w.t[f"validity.verdict.{f.value}"])
    unrun = int(f.context.get("not_evaluable") or 0)
    if unrun:
        cell = cell + Markup(" ") + sentence(w.t["validity.could_not_run"], n=str(unrun))
    return cell


def merge_same_rows(rows: list[list[Markup]]) -> list[list[Markup]]:
    """Rows that read the same after their first cell become one row listing their first
    cells: four points with the same verdict, findings and checks are one line, not four
    copies (the links of the later rows' verdicts stay in the ledger; the text is equal)."""
    merged: dict[tuple[str, ...], list[list[Markup]]] = {}
    for row in rows:
        merged.setdefault(tuple(Markup(c).striptags() for c in row[1:]), []).append(row)
    return [[Markup("<br>").join(r[0] for r in same), *same[0][1:]]
            for same in merged.values()]


def _one_row_for_all(w: Writer, rows: list[list[Markup]]) -> list[list[Markup]]:
    """The validity rows merged where they read the same; one row for every point says
    "all n points" rather than listing them in one cell."""
    merged = merge_same_rows(rows)
    if len(merged) == 1 and len(rows) > 2:
        merged[0][0] = sentence(w.t["validity.all_points"],
                                n=format_value(len(rows), "count", w.lang))
    return merged


def _states(w: Writer, found: list[str]) -> list[Markup]:
    """What the states the points are in mean, said only for the states some point is in
    (a saturated point, a check that could not run, a point none of whose checks ran)."""
    verdicts = {w.registry[f].value for f in found}
    unrun = any(c["severity"] == NOT_EVALUABLE for f in found
                for c in w.registry[f].context.get("checks", []))
    keys = [key for key, held in (("validity.state_saturated", SATURATED in verdicts),
                                  ("validity.state_not_evaluable", unrun),
                                  ("validity.state_unverified", UNVERIFIED in verdicts))
            if held]
    return [Markup(" ").join(sentence(w.t[k]) for k in keys)] if keys else []


def validity_section(w: Writer) -> Section | None:
    """Every point's checks: its verdict (and how many checks could not run), what they
    found, which could not run and for want of what, and which passed."""
    t = w.t
    found = validity_ids(w)
    if not found:
        return None
    rows = []
    for fid in found:
        f = w.registry[fid]
        checks = f.context.get("checks", [])
        rows.append([Markup(escape(point_label(w, f.context))), _verdict_cell(w, fid),
                     _found(w, checks),
                     _unrun(w, checks),
                     Markup(escape(", ".join(t[f"validity.rule.{c['rule']}"] for c in checks
                                             if c["severity"] == PASSED) or "–"))])
    if w.has(ids.campaign("points")) and any(len(s["loads"]) > 1 for s in all_series(w)):
        paras = [sentence(t["campaign.validity"], points=w.fig(ids.campaign("points")),
                          valid=w.fig(ids.campaign("valid")),
                          flagged=w.fig(ids.campaign("flagged")),
                          excluded=w.fig(ids.campaign("excluded")))]
        if w.has(ids.campaign("unverified")) and w.registry[ids.campaign("unverified")].value:
            paras.append(sentence(t["campaign.validity_unverified"],
                                  unverified=w.fig(ids.campaign("unverified"))))
        if w.has(ids.campaign("saturated"), ids.campaign("cannot_tell"),
                 ids.campaign("not_evaluable")):
            paras.append(sentence(t["campaign.validity_more"],
                                  saturated=w.fig(ids.campaign("saturated")),
                                  unclear=w.fig(ids.campaign("cannot_tell")),
                                  unrun=w.fig(ids.campaign("not_evaluable"))))
    else:
        paras = [sentence(t["validity.single_intro"], **WORDS)]
    paras += _states(w, found)
    if w.run.meta.reconstruction:       # the generator wrote the files these checks read
        paras.append(sentence(t["validity.reconstruction"]))
    tables = [Table(header=[t["campaign.point"], t["campaign.verdict"], t["campaign.reasons"],
                            t["validity.header_unrun"], t["validity.header_passed"]],
                    rows=_one_row_for_all(w, rows))]
    return Section(id="validity", heading=t["section.validity"], paragraphs=paras,
                   tables=tables)


def _check_value(w: Writer, check: dict[str, Any], key: str) -> str:
    value = check.get(key)
    if value is None:
        return "–"
    unit = check.get("unit") or "count"
    decimals = 0 if float(value).is_integer() else 1
    return format_value(value, unit, w.lang, decimals)



def campaign_conclusion(w: Writer) -> list[Markup]:
    """What the campaign concludes, chosen from its figures: per pair of engines, the
    frontier (one engine ahead everywhere, or where they cross) and, with an SLO, which
    sustains more load within it — a tie when the capacities' intervals overlap."""
    t = w.t
    out: list[Markup] = []
    for fid, f in sorted(w.registry.items()):
        if not (ids.family(fid) == "pareto" and f.unit == "crossings"):
            continue
        c = f.context
        wid, segments = c["workload"], int(c.get("segments") or 0)
        label = workload_label(w, wid)

        def seg(i: int, part: str) -> str:
            return ids.pareto(wid, c["a"], c["b"], f"seg{i}.{part}")
        if segments == 1:
            key = "conclusion_front_one" if w.run.meta.slo else "conclusion_front_one_noslo"
            if w.has(ids.REPEATS) and w.registry[ids.REPEATS].value == 1:
                key += "_single"            # one run each: what was measured, no verdict
            out.append(sentence(t[f"campaign.{key}"], workload=label,
                                leader=w.name(str(w.registry[seg(1, "leader")].value)),
                                low=w.fig(seg(1, "from")), high=w.fig(seg(1, "to"))))
        if segments:
            out += _beyond_shared(w, wid, c, seg(1, "from"))
        elif f.value == 1 and segments == 2:
            out.append(sentence(
                t["campaign.conclusion_front_cross"], workload=label,
                at=w.fig(ids.pareto(wid, c["a"], c["b"], "cross1")),
                below=w.name(str(w.registry[seg(1, "leader")].value)),
                above=w.name(str(w.registry[seg(2, "leader")].value))))
        out += _capacity_conclusion(w, wid, c, label)
    if not out:                     # one engine: what its curves show
        out = [x for x in (knee_sentence(w, s) for s in all_series(w)
                           if w.has(ids.curve_series(s["workload"], s["key"], "knee")))
               if x is not None]
    return out


def _beyond_shared(w: Writer, wid: str, c: dict[str, Any], low: str) -> list[Markup]:
    """A frontier whose highest throughput lies below the interactivity both engines reach:
    the range comparison above does not see it, so it is said."""
    out = []
    for side, other in (("a", "b"), ("b", "a")):
        top, top_x = (ids.pareto(wid, c[side], None, n) for n in ("top", "top_x"))
        other_top = ids.pareto(wid, c[other], None, "top")
        if not w.has(top, top_x, other_top):
            continue
        if w.registry[top_x].value < w.registry[low].value and \
                w.registry[top].value > w.registry[other_top].value:
            out.append(sentence(w.t["campaign.conclusion_beyond"],
                                engine=w.name(c[f"engine_{side}"]),
                                other=w.name(c[f"engine_{other}"]), low=w.fig(low),
                                top=w.fig(top), top_x=w.fig(top_x),
                                other_top=w.fig(other_top)))
    return out


def _capacity_conclusion(w: Writer, wid: str, c: dict[str, Any], label: str) -> list[Markup]:
    """Within the SLO, which engine delivers more output throughput at its capacity (a
    concurrency is not comparable across engines; tokens per second are), and at what
    cost; a tie when the throughputs' intervals overlap."""
    t = w.t
    got = {}
    for side in ("a", "b"):
        fid = ids.slo(wid, c[side], "capacity_output")
        if not w.has(fid) or w.registry[fid].context.get("status") != INTERPOLATED:
            return []
        f = w.registry[fid]
        if f.context.get("low") is None or f.context.get("high") is None:
            return []
        got[side] = (w.name(c[f"engine_{side}"]), fid, f.context["low"], f.context["high"])
    (a, fa, lo_a, hi_a), (b, fb, lo_b, hi_b) = got["a"], got["b"]
    cost = {side: ids.cost(wid, c[side], "at_capacity") for side in ("a", "b")}
    if lo_a > hi_b or lo_b > hi_a:
        (more, f_more, s_more), (less, f_less, s_less) = \
            ((a, fa, "a"), (b, fb, "b")) if lo_a > hi_b else ((b, fb, "b"), (a, fa, "a"))
        text = sentence(t["campaign.conclusion_capacity"], workload=label, more=more,
                        less=less, more_out=_with_interval(w, f_more),
                        less_out=_with_interval(w, f_less))
        if w.has(cost[s_more]) and w.has(cost[s_less]):
            text = Markup(" ").join([text, sentence(
                t["campaign.conclusion_cost"], more=more, less=less,
                more_cost=w.fig(cost[s_more]), less_cost=w.fig(cost[s_less]))])
        return [text]
    return [sentence(t["campaign.conclusion_capacity_tie"], workload=label, a=a, b=b,
                     out_a=_with_interval(w, fa), out_b=_with_interval(w, fb))]
