"""The "Where each request's time went" section: per engine and workload, the time before
each request's own prefill against that prefill, the stall before token 2, the gaps after it
that overlap another request's pending prompt, and the client's mean TPOT split into those
parts (analyses.timeline)."""

from __future__ import annotations

from functools import partial

from markupsafe import Markup, escape

from ..core import ids, provenance
from ..core.i18n import format_value, sentence
from ..core.verdicts import PHASE_UNPLACED as UNPLACED
from ..core.verdicts import PREFILL_ESTIMATE as ESTIMATE
from ..core.verdicts import STALL_FACTOR
from .narrative_base import Writer
from .sections import Section, Table

TPOT_PARTS = ("tpot_stall_ms", "tpot_shared_ms", "tpot_gaps_ms")


def _pair(w: Writer, a: str, b: str) -> Markup:
    """Two figures as "a (b)", or what is held of them."""
    if not w.has(a):
        return Markup("–")
    return w.fig(a).html + (Markup(" ({})").format(w.fig(b).html) if w.has(b) else "")


def _tpot(w: Writer, fid, client: str) -> Markup:
    """stall + shared + other gaps = the parts' sum, per token (the client's mean TPOT)."""
    if not w.has(*(fid(p) for p in TPOT_PARTS), fid("tpot_sum_ms")):
        return Markup("–")
    return Markup(" + ").join(w.fig(fid(p)).html for p in TPOT_PARTS) + \
        Markup(" = ") + _pair(w, fid("tpot_sum_ms"), client)


def _stall(w: Writer, fid) -> Markup:
    """The longest stall (token 2 at), "none" where the gaps were read and none stalled."""
    if w.has(fid("stalls")) and w.registry[fid("stalls")].value == 0:
        return w.link(fid("stalls"), w.t["timeline.none"])
    return _pair(w, fid("longest_stall_s"), fid("longest_stall_token2_s"))


def _row(w: Writer, engine, wl, fid, label: str) -> list[Markup]:
    shared = Markup("–") if not w.has(fid("shared_gaps")) else \
        w.link(fid("shared_gaps"), w.t["timeline.none"]) \
        if w.registry[fid("shared_gaps")].value == 0 else \
        _pair(w, fid("shared_gaps"), fid("shared_gap_max_s"))
    return [Markup(escape(engine.name)), Markup(escape(label)),
            w.fig(fid("wait_share")).html if w.has(fid("wait_share")) else Markup("–"),
            _pair(w, fid("longest_wait_s"), fid("longest_wait_prefill_s")),
            _stall(w, fid), shared,
            _tpot(w, fid, ids.latency(wl.id, engine.id, "tpot", "mean")),
            _pair(w, fid("tpot_steady_ms"), fid("tpot_other_ms"))]


def _outside_queue(w: Writer, engine, wl, fid, words: dict) -> list[Markup]:
    """Where the engine's lines show no request waiting but the time before own prefill is
    not zero: that time is outside the queue the engine shows (said for a reconstruction
    too: it reconciles this section with the server state's, and names the generator's
    arrival spacing that put it there)."""
    queued = ids.state(wl.id, engine.id, "queued_s")
    if not w.has(queued, fid("wait_share")) or w.registry[queued].value != 0 \
            or not w.registry[fid("wait_share")].value > 0:
        return []
    gap = ids.arrival(wl.id, engine.id, "burst_gap_s")
    if w.run.meta.reconstruction and w.has(gap):
        return [sentence(w.t["timeline.outside_queue_generated"], **words,
                         share=w.fig(fid("wait_share")), gap=w.fig(gap), mark=w.mark(gap))]
    return [sentence(w.t["timeline.outside_queue"], **words,
                     share=w.fig(fid("wait_share")))]


def _closure_diff(w: Writer, fid) -> tuple[str, Markup] | None:
    """Where the parts' sum and the client's mean TPOT differ by more than the shown
    rounding, which way (the client's per-request time runs past the last streamed chunk:
    its TPOT is E2E − TTFT, not the sum of the gaps, over the tokens) and by how much."""
    if not w.has(fid("tpot_closure_ms"), fid("tpot_sum_ms")):
        return None
    shown = w.registry[fid("tpot_sum_ms")].decimals or 0
    fig = w.registry[fid("tpot_closure_ms")]
    if abs(fig.value) < 0.5 * 10 ** -shown:
        return None
    key = "timeline.closure_after" if fig.value > 0 else "timeline.closure_before"
    return key, w.link(fid("tpot_closure_ms"), format_value(abs(fig.value), fig.unit,
                                                            w.lang, fig.decimals))


def _closures(w: Writer, points: list[tuple]) -> list[Markup]:
    """One sentence per engine and direction for the points whose TPOT parts do not add up
    to the client's mean: the workloads together, their differences in order."""
    groups: dict[tuple[str, str], list] = {}
    for _, engine, fid, label in points:
        found = _closure_diff(w, fid)
        if found:
            groups.setdefault((engine.id, found[0]), []).append((label, found[1], fid))
    out = []
    for (engine, key), items in groups.items():
        diffs = Markup(", ").join(d for _, d, _ in items)
        out.append(sentence(
            w.t[key], engine=w.name(engine), label=w.and_list([lb for lb, _, _ in items]),
            diff=diffs if len(items) == 1 else sentence(w.t["timeline.respectively"],
                                                        values=diffs),
            mark=w.mark(*(f("tpot_closure_ms") for *_, f in items))))
    return out


def _estimates(w: Writer, points: list[tuple]) -> list[Markup]:
    """One sentence for every row whose own prefill is vLLM's estimate, each named as a
    link to how it was made."""
    named = [w.link(fid("prefill_basis"), f"{engine.name} {label}")
             for _, engine, fid, label in points
             if w.registry[fid("prefill_basis")].value == ESTIMATE]
    return [sentence(w.t["timeline.estimate"], rows=Markup(", ").join(named))] if named else []


def _sentences(w: Writer, engine, wl, fid, label: str) -> list[Markup]:
    """What the figures select, for one engine and workload (for a reconstruction only how
    the phases were placed: its note says what set the figures)."""
    t, out = w.t, []
    words = {"engine": w.name(engine.id), "label": label}
    basis = w.registry[fid("prefill_basis")].value
    if basis == UNPLACED:
        out.append(sentence(t["timeline.unplaced"], **words))
    if w.has(fid("prefill_substituted")) and w.registry[fid("prefill_substituted")].value:
        out.append(sentence(t["timeline.substituted"], **words,
                            n=w.fig(fid("prefill_substituted"))))
    if w.registry[fid("requests")].context.get("point") is None:   # the workload's window
        out += _outside_queue(w, engine, wl, fid, words)
    if w.generated(fid("requests"), fid("stalls")):
        return out
    if w.has(fid("longest_stall_s")):
        out.append(sentence(t["timeline.stall"], **words, stall=w.fig(fid("longest_stall_s")),
                            at=w.fig(fid("longest_stall_token2_s"))))
    if w.has(fid("shared_gap_min_s")):
        out.append(sentence(t["timeline.shared"], **words, n=w.fig(fid("shared_gaps")),
                            low=w.fig(fid("shared_gap_min_s")),
                            high=w.fig(fid("shared_gap_max_s"))))
    return out


def _shown(w: Writer, fig_id: str) -> float:
    """A figure's value as the page shows it (rounded to its decimals)."""
    fig = w.registry[fig_id]
    return round(fig.value, fig.decimals if fig.decimals is not None else 2)


def _rounding(w: Writer, fids: list) -> list[Markup]:
    """The rounding note, where some row's rounded TPOT parts do not add up to its rounded
    sum."""
    def off(fid) -> bool:
        if not w.has(*(fid(p) for p in TPOT_PARTS), fid("tpot_sum_ms")):
            return False
        parts = sum(_shown(w, fid(p)) for p in TPOT_PARTS)
        return abs(parts - _shown(w, fid("tpot_sum_ms"))) > 1e-9
    return [Markup(escape(w.t["timeline.rounding"]))] if any(off(f) for f in fids) else []


def _label(w: Writer, wl, ctx: dict) -> str:
    """The workload, and for a point of a sweep or of repeats its load (and run)."""
    if ctx.get("point") is None:
        return wl.label
    parts = [wl.label, ctx["load"]] + ([ctx["variant"]] if ctx.get("variant") else [])
    if wl.repeats > 1 or ctx.get("repeat", 1) > 1:
        parts.append(str(sentence(w.t["validity.run_n"], n=str(ctx["repeat"]))))
    return " · ".join(parts)


def _steady_notes(w: Writer, points: list[tuple]) -> list[Markup]:
    """What set the steady decode column in a reconstruction, one note per kind of input
    (a steady mean calibrated to the published one, or drawn by the seed), naming its rows
    where the kinds differ."""
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for _, engine, fid, label in points:
        steady = fid("tpot_steady_ms")      # the column's value; the difference beside it
        if w.has(steady) and w.run.meta.reconstruction \
                and w.provenance(steady) in (*provenance.GENERATED, provenance.CALIBRATED):
            names, held = groups.setdefault(w.provenance(steady), ([], []))
            names.append(f"{engine.name} {label}")
            held.append(steady)
    what = w.t["timeline.steady_what"]
    return [w.generated_note(what if len(groups) == 1
                             else f"{what}{w.paren_space}({', '.join(names)})",
                             *figs) for names, figs in groups.values()]


def _timelines(w: Writer) -> list[tuple]:
    """(workload, engine, id maker, label) of every point with a request timeline, in
    run.yaml's order of workloads and engines, then the points' own order."""
    out = []
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            group = ids.timeline_group(wl.id, e.id)
            for fig_id in sorted((f for f in w.registry if ids.leaf(f) == "requests"
                                  and ids.within(f, group)),
                                 key=lambda f: w.registry[f].context.get("order", 0)):
                ctx = w.registry[fig_id].context
                at = ids.point_place(ctx["point"], e.id, wl.id) if ctx.get("point") else None
                out.append((wl, e, partial(ids.timeline, wl.id, e.id, at=at),
                            _label(w, wl, ctx)))
    return out


SEEDED = ("tpot_steady_ms", "tpot_other_ms")


def timeline_section(w: Writer) -> Section | None:
    """One row per engine and workload with a request timeline, and the sentences its
    figures select."""
    t = w.t
    rows, notes, held = [], [], []
    points = _timelines(w)          # (workload, engine, id maker, label), read once
    for wl, engine, fid, label in points:
        held += [f for f in w.registry if ids.parent(f) == ids.parent(fid("requests"))]
        rows.append(_row(w, engine, wl, fid, label))
        notes += _sentences(w, engine, wl, fid, label)
    if not rows:
        return None
    notes = _estimates(w, points) + notes + _closures(w, points) + \
        _rounding(w, [fid for _, _, fid, _ in points])
    # the waits, stalls and gaps come from the engine model; the steady decode time and what
    # is left beside it from each point's steady phase, calibrated or drawn by the seed: each
    # note names its own inputs
    modelled = [f for f in held if ids.leaf(f) not in SEEDED]
    if modelled and w.generated(*modelled):
        notes.append(w.generated_note(t["timeline.generated"], *modelled))
    notes += _steady_notes(w, points)
    header = [t["table.engine"], t["server.col.workload"]] + \
        [t[f"timeline.col.{c}"] for c in ("wait_share", "wait", "stall", "shared", "tpot",
                                          "steady")]
    return Section(id="timeline", heading=t["timeline.heading"],
                   paragraphs=[sentence(t["timeline.intro"], factor=f"{STALL_FACTOR:g}")]
                   + notes,
                   tables=[Table(header=header, rows=rows, numeric=tuple(range(2, 8)))])
