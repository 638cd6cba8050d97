"""The article's headline and the conclusion of runs the reference's sections do not fit,
chosen by the data for the run's shape.

A run's shape is read from its points' validity figures (one per point, every run has
them): how many engines were measured, whether a series has several loads or repeats,
and whether any request succeeded. The shapes:

- ``failed``: no request succeeded at any point. The headline says so first, and the
  build exits non-zero unless it is told to accept a failed run;
- ``point``: one engine, one load per series, one run each;
- ``repeats``: one engine, one load per series, several runs of it;
- ``sweep``: one engine, several loads in a series;
- ``engines``: several engines (the reference run's shape, with or without sweeps): the
  comparing sentences of the results and of the campaign.

Every sentence is chosen by a figure and carries it as a link: errors above
``ERROR_LEAD_PCT`` lead (``point.<p>.failed_share``); a point states its throughput and
latencies and what its checks found (``point.<p>.validity``); a sweep where throughput
peaks (``curve.<w>.<s>.peak``), how median TTFT grows with the load
(``curve.<w>.<s>.ttft_growth``) and the loads where the server saturated
(``curve.<w>.<s>.knee``'s context). No sentence names a second engine, an interval or a
knee the run does not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from ..core import ids
from ..core.claims import CONFIRMED, CONSISTENT
from ..core.i18n import format_number, format_value, sentence
from ..core.provenance import ASSUMED
from ..core.verdicts import (
    INVALID,
    NOT_APPLICABLE,
    NOT_EVALUABLE,
    NOTE,
    PASSED,
    UNVERIFIED,
    VALID,
)
from .campaign import (
    WORDS,
    all_series,
    capacity_words,
    point_label,
    series_name,
    validity_ids,
    workload_label,
)
from .citations import names as source_names
from .narrative_base import Writer

# failures at or above 1% of a point's requests lead the headline: at that share the
# survivors' latencies already leave out the slowest requests
ERROR_LEAD_PCT = 1.0
# at most this many points or series get a sentence each; the tables hold the rest
MOST = 3

FAILED, POINT, REPEATS, SWEEP, ENGINES = "failed", "point", "repeats", "sweep", "engines"
SERVER = "server"       # run.yaml's results: none: the servers' own files, no client result


@dataclass(frozen=True)
class PointView:
    """One point, as its validity figure describes it."""

    fid: str                 # its validity figure
    pid: str                 # its point id
    context: dict[str, Any]
    verdict: str
    all_failed: bool

    def figure(self, name: str) -> str:
        return ids.point(self.pid, name)


@dataclass(frozen=True)
class Shape:
    kind: str
    engines: tuple[str, ...]
    points: tuple[PointView, ...]


def points_of(w: Writer) -> list[PointView]:
    """The run's points in the run's order (workload, engine, series, load, repeat)."""
    out = []
    for fid in validity_ids(w):
        f = w.registry[fid]
        checks = f.context.get("checks", [])
        out.append(PointView(fid=fid, pid=ids.parse_point(fid)[0], context=f.context,
                             verdict=str(f.value),
                             all_failed=[c["rule"] for c in checks] == ["all_failed"]))
    return out


def shape_of(w: Writer) -> Shape:
    pts = points_of(w)
    engines = tuple(w.measured_engines())
    loads: dict[tuple, set[str]] = {}
    for p in pts:
        c = p.context
        loads.setdefault((c["workload"], c["engine"], c.get("variant", "")), set()).add(
            c["load"])
    if w.run.meta.server_only:
        kind = SERVER
    elif pts and all(p.all_failed for p in pts):
        kind = FAILED
    elif len(engines) > 1:
        kind = ENGINES
    elif any(len(v) > 1 for v in loads.values()):
        kind = SWEEP
    elif any(int(p.context.get("repeat", 1)) > 1 for p in pts):
        kind = REPEATS
    else:
        kind = POINT
    return Shape(kind, engines, tuple(pts))


def _engine_list(w: Writer) -> str:
    """The run's engines by name: "vLLM and SGLang" / "vLLM 및 SGLang"."""
    return w.and_list([e.name for e in w.run.meta.engines])


def run_failed(w: Writer) -> bool:
    """Whether no request succeeded at any point of the run."""
    return shape_of(w).kind == FAILED


# --- sentences -------------------------------------------------------------------------------


def _failed_run(w: Writer, shape: Shape) -> Markup:
    points = Markup(", ").join(w.link(p.fid, point_label(w, p.context))
                               for p in shape.points)
    return sentence(w.t["headline.failed"], points=points)


def _errors(w: Writer, shape: Shape) -> list[Markup]:
    """The points where failures reached ERROR_LEAD_PCT, the largest share first."""
    shares = [(w.registry[p.figure("failed_share")].value, p) for p in shape.points
              if not p.all_failed and w.has(p.figure("failed_share"))
              and w.registry[p.figure("failed_share")].value >= ERROR_LEAD_PCT]
    shares.sort(key=lambda sp: -sp[0])
    out = []
    for _, p in shares[:MOST]:
        out.append(sentence(w.t["headline.errors"], point=point_label(w, p.context),
                            share=w.fig(p.figure("failed_share")),
                            failed=w.fig(p.figure("failed")),
                            completed=w.fig(p.figure("completed"))))
    return out


def _cancellations(w: Writer, shape: Shape) -> list[Markup]:
    """The points whose client was asked to cancel some of its requests: how many it
    cancelled, of how many sent, at what rate (never called failures)."""
    out = []
    for p in shape.points:
        fids = [p.figure(n) for n in ("cancelled", "cancellation_rate", "completed", "failed")]
        if not w.has(*fids) or not w.registry[fids[0]].value:
            continue
        cancelled, _, completed, failed = (w.registry[f].value for f in fids)
        out.append(sentence(w.t["headline.cancelled"], point=point_label(w, p.context),
                            cancelled=w.link(fids[0], format_number(cancelled, 0)),
                            sent=format_number(completed + failed, 0),
                            rate=w.link(fids[1], format_value(
                                w.registry[fids[1]].value, "%", w.lang,
                                0 if float(w.registry[fids[1]].value).is_integer() else 1))))
    return out[:MOST]


def _latency_part(w: Writer, fid_of, metric: str) -> Markup | None:
    median, tail = fid_of(f"median_{metric}_ms"), fid_of(f"p99_{metric}_ms")
    if median is None:
        return None
    if tail is None:
        return sentence(w.t[f"headline.part_{metric}"], median=w.fig(median))
    return sentence(w.t[f"headline.part_{metric}_p99"], median=w.fig(median),
                    tail=w.fig(tail), tail_name=WORDS["tail"])


def _parts(w: Writer, fid_of) -> list[Markup]:
    """What a point (or a load's repeats) measured: output throughput, median (and p99)
    TTFT and TPOT; E2E latency where neither TTFT nor TPOT was measured."""
    parts = []
    thr = fid_of("output_throughput")
    if thr is not None:
        parts.append(sentence(w.t["headline.part_throughput"], value=w.fig(thr)))
    latencies = [x for x in (_latency_part(w, fid_of, m) for m in ("ttft", "tpot")) if x]
    if not latencies:
        latencies = [x for x in (_latency_part(w, fid_of, "e2el"),) if x]
    return parts + latencies


def _trust(w: Writer, p: PointView) -> Markup:
    """What the point's checks found, in words, chosen by its verdict."""
    checks = p.context.get("checks", [])
    found = [c for c in checks
             if c["severity"] not in (PASSED, NOT_EVALUABLE, NOTE, NOT_APPLICABLE)]
    unrun = sum(c["severity"] == NOT_EVALUABLE for c in checks)
    if p.verdict == UNVERIFIED:
        return sentence(w.t["headline.trust_unverified"],
                        verdict=w.link(p.fid, w.t["validity.verdict.unverified"]),
                        n=str(unrun))
    if p.verdict == VALID:
        key = "headline.trust_valid_unrun" if unrun else "headline.trust_valid"
        return sentence(w.t[key], verdict=w.link(p.fid, w.t["validity.verdict.valid"]),
                        n=str(unrun))
    reasons = ", ".join(dict.fromkeys(
        w.t.get(f"validity.finding.{c['code']}", w.t.get(
            f"validity.finding.{c['rule']}", w.t[f"validity.rule.{c['rule']}"]))
        for c in found))
    key = "headline.trust_invalid" if p.verdict == INVALID else "headline.trust_flagged"
    return sentence(w.t[key], verdict=w.link(p.fid, w.t[f"validity.verdict.{p.verdict}"]),
                    reasons=reasons)


def _point_sentence(w: Writer, p: PointView) -> Markup:
    def fid_of(name: str) -> str | None:
        fid = p.figure(name)
        return fid if w.has(fid) else None

    parts = _parts(w, fid_of)
    label = point_label(w, p.context)
    first = sentence(w.t["headline.point"], point=label, parts=Markup(", ").join(parts)) \
        if parts else sentence(w.t["headline.point_nothing"], point=label)
    return Markup(" ").join([first, _trust(w, p)])


def _more(w: Writer, total: int) -> list[Markup]:
    return [sentence(w.t["headline.more"], n=str(total - MOST))] if total > MOST else []


def _series_of(w: Writer, name: str) -> list[str]:
    """The ids of the series figures called ``name`` (``peak``, ``knee``), in run order."""
    engines = {e.id: i for i, e in enumerate(w.run.meta.engines)}
    workloads = {x.id: i for i, x in enumerate(w.run.meta.workloads)}
    found = [fid for fid, f in w.registry.items()
             if f.context.get("workload") is not None and "metric" not in f.context
             and f.context.get("engine") is not None
             and fid == ids.curve_series(f.context["workload"],
                                         ids.series(f.context["engine"],
                                                    f.context.get("variant", "")), name)]
    return sorted(found, key=lambda fid: (
        workloads.get(w.registry[fid].context["workload"], 0),
        engines.get(w.registry[fid].context["engine"], 0), fid))


def _series_label(w: Writer, ctx: dict[str, Any]) -> str:
    """A series as the campaign sections name it, with its workload where there are
    several."""
    name = series_name(w, {"engine": ctx["engine"], "variant": ctx.get("variant", "")})
    if len(w.run.meta.workloads) < 2:
        return name
    return f"{name} · {workload_label(w, ctx['workload'])}"


def _load_words(w: Writer, load: str, x: float | None, kind: str | None) -> str:
    """A load as the reader names it: its label, or "the unbounded rate"."""
    return w.t["headline.unbounded"] if x is None and kind == "rate" else load


def _loads_words(w: Writer, ctx: dict[str, Any], loads: list[str]) -> str:
    """Loads of a series by name, an unbounded rate in words (its curve figures hold x)."""
    key = ids.series(ctx["engine"], ctx.get("variant", ""))
    out = []
    for load in loads:
        fig = w.registry.get(ids.curve(ctx["workload"], key, load, "output_throughput"))
        x = fig.context.get("x") if fig is not None else 0.0
        out.append(_load_words(w, load, x, ctx.get("kind")))
    return ", ".join(out)


def _peak(w: Writer, fid: str) -> Markup:
    f = w.registry[fid]
    c = f.context
    where = w.link(fid, _load_words(w, str(f.value), c.get("x"), c.get("kind")))
    if c["at_heaviest"]:
        return sentence(w.t["headline.sweep_rising"], series=_series_label(w, c),
                        best=w.fig(c["best"]), load=where)
    return sentence(w.t["headline.sweep_peak"], series=_series_label(w, c),
                    best=w.fig(c["best"]), load=where, last=w.fig(c["heaviest"]),
                    heaviest=_load_words(w, c["heaviest_load"], c.get("heaviest_x"),
                                         c.get("kind")))


def _growth(w: Writer, fid: str) -> Markup:
    c = w.registry[fid].context
    key = "headline.ttft_grows" if c["grows"] else "headline.ttft_flat"
    return sentence(w.t[key], series=_series_label(w, c), low=w.fig(c["from"]),
                    high=w.fig(c["to"]), ratio=w.fig(fid),
                    from_load=_load_words(w, c["from_load"], c.get("from_x"), c.get("kind")),
                    to_load=_load_words(w, c["to_load"], c.get("to_x"), c.get("kind")))


def _saturation(w: Writer, fid: str) -> list[Markup]:
    """The loads where the server could not keep up (the knee figure's context lists
    them; where throughput stops rising the peak sentence says)."""
    c = w.registry[fid].context
    if not c.get("saturated"):
        return []
    return [sentence(w.t["headline.saturated"], series=_series_label(w, c),
                     loads=w.link(fid, _loads_words(w, c, c["saturated"])))]


def _capacity(w: Writer, fid: str) -> list[Markup]:
    """The series' capacity within the SLO, where one is set (the capacity figure)."""
    c = w.registry[fid].context
    key = ids.series(c["engine"], c.get("variant", ""))
    if not w.has(ids.slo(c["workload"], key, "capacity")):
        return []
    series = next((s for s in all_series(w)
                   if s["workload"] == c["workload"] and s["key"] == key), None)
    if series is None:
        return []
    return [sentence(w.t["headline.capacity"], series=_series_label(w, c),
                     capacity=capacity_words(w, series))]


def _key(w: Writer, fid: str) -> tuple[str, str, str]:
    c = w.registry[fid].context
    return c["workload"], c["engine"], c.get("variant", "")


def _sweeps(w: Writer, peaks: list[str]) -> list[Markup]:
    growth = {_key(w, f): f for f in _series_of(w, "ttft_growth")}
    knees = {_key(w, f): f for f in _series_of(w, "knee")}
    out = []
    for fid in peaks[:MOST]:
        out.append(_peak(w, fid))
        if _key(w, fid) in growth:
            out.append(_growth(w, growth[_key(w, fid)]))
        if _key(w, fid) in knees:
            out += _saturation(w, knees[_key(w, fid)])
        out += _capacity(w, fid)
    return out + _more(w, len(peaks))


def _spread_of(w: Writer, p: PointView) -> str | None:
    """The spread figure of the load whose repeat ``p`` is, when it has one."""
    c = p.context
    fid = ids.curve(c["workload"], ids.series(c["engine"], c.get("variant", "")), c["load"],
                    "spread")
    return fid if w.has(fid) else None


def _repeats(w: Writer, fid: str, group: list[PointView]) -> Markup:
    """A load's repeats in one sentence: their mean figures, how far apart they are
    (worded by whether the spread figure says they differ), and what the checks found on
    the repeat they judged worst."""
    c = w.registry[fid].context
    p = max(group, key=lambda q: (q.verdict == INVALID, q.verdict != VALID))
    key = ids.series(c["engine"], c.get("variant", ""))

    def fid_of(name: str) -> str | None:
        mean = ids.curve(c["workload"], key, c["load"], name)
        return mean if w.has(mean) else None

    label = point_label(w, p.context, repeat=False)
    runs = sorted((f for f in w.registry[fid].depends_on if w.has(f)),
                  key=lambda f: w.registry[f].value)
    spread = sentence(w.t["headline.repeats_differ" if c["differs"] else
                          "headline.repeats_agree"], n=str(c["n"]), spread=w.fig(fid),
                      lowest=w.fig(runs[0]), highest=w.fig(runs[-1]))
    parts = _parts(w, fid_of)
    first = sentence(w.t["headline.repeats"], point=label, n=str(c["n"]),
                     parts=Markup(", ").join(parts)) if parts else \
        sentence(w.t["headline.point_nothing"], point=label)
    return Markup(" ").join([first, spread, _trust(w, p)])


def _point_sentences(w: Writer, points: list[PointView]) -> list[Markup]:
    """One sentence per point, except that a load's repeats share one (with their spread),
    at the place of the load's first repeat."""
    order: list[PointView | str] = []          # a point, or the spread figure of a load
    groups: dict[str, list[PointView]] = {}
    for p in points:
        fid = _spread_of(w, p)
        if fid is None:
            order.append(p)
            continue
        if fid not in groups:
            order.append(fid)
        groups.setdefault(fid, []).append(p)
    return [_repeats(w, x, groups[x]) if isinstance(x, str) else _point_sentence(w, x)
            for x in order]


def _per_series(w: Writer, shape: Shape) -> list[Markup]:
    """A sweep's sentences for each series with a peak figure (several loads measured
    its throughput), a point's sentence for every other point that succeeded (the repeats
    of one load in one sentence)."""
    peaks = _series_of(w, "peak")
    swept = {_key(w, f) for f in peaks}
    rest = [p for p in shape.points if not p.all_failed and
            (p.context["workload"], p.context["engine"], p.context.get("variant", ""))
            not in swept]
    said = _point_sentences(w, rest)
    return _sweeps(w, peaks) + said[:MOST] + _more(w, len(said))


def headline(w: Writer, results: list[Markup], campaign: list[Markup]) -> list[Markup]:
    """The headline: a failed run's first line, errors above the threshold, then this
    shape's findings (``results`` and ``campaign``: the comparing sentences of several
    engines)."""
    shape = shape_of(w)
    if shape.kind == FAILED:
        return [_failed_run(w, shape)]
    if shape.kind == SERVER:
        return [sentence(w.t["headline.server_only"], engines=_engine_list(w))]
    out = _errors(w, shape) + _cancellations(w, shape)
    if shape.kind == ENGINES and (results or campaign):
        return out + results + campaign + _not_controlled(w)
    return out + _per_series(w, shape)


def _assumed_mark(w: Writer, setting: str) -> str:
    """" (assumed)" after a setting whose value any engine's was assumed (a value the
    published text did not give, such as a capacity a reconstruction filled in)."""
    held = [ids.setting(setting, e.id) for e in w.run.meta.engines
            if w.has(ids.setting(setting, e.id))]
    return w.tag("assumed") if held and w.provenance(*held) == ASSUMED else ""


def _not_controlled(w: Writer) -> list[Markup]:
    """Beside an engine comparison: the settings that differed between the engines."""
    if not w.has(ids.SETTINGS_DIFFERING) or not w.registry[ids.SETTINGS_DIFFERING].value:
        return []
    which = [sid for sid in w.registry[ids.SETTINGS_DIFFERING].context.get("which") or []
             if "setting." + sid in w.t]
    # the settings whose values were assumed are named apart, in one clause, not each
    # with its own mark
    assumed = [w.inside(w.t["setting." + sid]) for sid in which if _assumed_mark(w, sid)]
    known = [w.inside(w.t["setting." + sid]) for sid in which if not _assumed_mark(w, sid)]
    published = _published_differences(w) if assumed else None
    if published is not None:
        # values a reconstruction assumed are not counted as found: what the write-up said
        return [published]
    if assumed and known:
        said = sentence(w.t["headline.not_controlled_assumed"], n=w.fig(ids.SETTINGS_DIFFERING),
                        known=w.and_list(known), assumed=w.and_list(assumed))
    else:
        names = [w.t["setting." + sid] + _assumed_mark(w, sid) for sid in which]
        said = sentence(w.t["headline.not_controlled"],
                        n=w.fig(ids.SETTINGS_DIFFERING), which=w.and_list(names))
    return [Markup(" ").join([said, *_apart(w),
                              sentence(w.t["headline.not_controlled_where"])])]


def _published_differences(w: Writer) -> Markup | None:
    """In a reconstruction: the write-up's own statement that the engines ran differently
    (a claim checked by the differing settings, which the check agrees with), in place of
    a count of settings whose values the reconstruction partly assumed."""
    if not w.run.meta.reconstruction:
        return None
    for fid, fig in sorted(w.registry.items()):
        if ids.family(fid) == "claim" and fig.context.get("reason") == "differs_listed" \
                and fig.value in (CONFIRMED, CONSISTENT):
            named = source_names(w.run.meta, w.lang)
            return sentence(w.t["headline.not_controlled_published"],
                            sources=w.and_list([named.get(k, k)
                                                for k in fig.context.get("source", [])]),
                            which=w.gist([fig.context.get("text", {}).get(w.lang)]))
    return None


def _apart(w: Writer) -> list[Markup]:
    """The settings shown side by side but not counted, one sentence per reason (stated in
    unlike terms; following from other settings)."""
    if not w.has(ids.SETTINGS_APART):
        return []
    why = w.registry[ids.SETTINGS_APART].context.get("why") or {}
    out = []
    for reason in ("unlike", "outcome"):
        names = [w.inside(w.t["setting." + sid]) for sid, r in why.items()
                 if r == reason and "setting." + sid in w.t]
        if names:
            out.append(sentence(w.t["headline.apart_" + reason], which=w.and_list(names)))
    return out


def conclusion(w: Writer) -> list[Markup]:
    """What a run of one engine lets the reader conclude: what was found (as the headline
    says it), and that it compares nothing. Empty for several engines, whose conclusion
    the comparing sections write."""
    shape = shape_of(w)
    if shape.kind == SERVER:
        return [sentence(w.t["headline.conclusion_server_only"], engines=_engine_list(w))]
    if shape.kind == ENGINES or not shape.points:
        return []
    if shape.kind == FAILED:
        return [sentence(w.t["headline.conclusion_failed"])]
    found = headline(w, [], [])
    return found + [sentence(w.t["headline.conclusion_one"],
                             engine=w.name(shape.engines[0]))]


