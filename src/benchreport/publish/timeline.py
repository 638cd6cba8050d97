"""The "Where each request's time went" section: per engine and workload, the queue wait
against each request's own prefill, the stall before token 2, the gaps shared with another
request's prefill, and the client's mean TPOT split into those parts (analyses.timeline)."""

from __future__ import annotations

from functools import partial

from markupsafe import Markup, escape

from ..core import ids
from ..core.i18n import sentence
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


def _row(w: Writer, engine, wl, fid) -> list[Markup]:
    shared = _pair(w, fid("shared_gaps"), fid("shared_gap_max_s")) \
        if w.has(fid("shared_gaps")) else Markup("–")
    return [Markup(escape(engine.name)), Markup(escape(wl.label)),
            w.fig(fid("wait_share")).html if w.has(fid("wait_share")) else Markup("–"),
            _pair(w, fid("longest_wait_s"), fid("longest_wait_prefill_s")),
            _pair(w, fid("longest_stall_s"), fid("longest_stall_token2_s")),
            shared, _tpot(w, fid, ids.latency(wl.id, engine.id, "tpot", "mean")),
            _pair(w, fid("tpot_steady_ms"), fid("tpot_other_ms"))]


def _sentences(w: Writer, engine, wl, fid) -> list[Markup]:
    """What the figures select, for one engine and workload (none for a reconstruction:
    its note says what set them)."""
    t, out = w.t, []
    words = {"engine": w.name(engine.id), "label": wl.label}
    basis = w.registry[fid("prefill_basis")].value
    if basis == ESTIMATE:
        out.append(sentence(t["timeline.estimate"], **words,
                            link=w.link(fid("prefill_basis"), t["timeline.how"])))
    elif basis == UNPLACED:
        out.append(sentence(t["timeline.unplaced"], **words))
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


def _timelines(w: Writer) -> list[tuple]:
    """(workload, engine, id maker) of every engine and workload with a request timeline."""
    return [(wl, e, partial(ids.timeline, wl.id, e.id)) for wl in w.run.meta.workloads
            for e in w.run.meta.engines if w.has(ids.timeline(wl.id, e.id, "requests"))]


SEEDED = ("tpot_steady_ms", "tpot_other_ms")


def timeline_section(w: Writer) -> Section | None:
    """One row per engine and workload with a request timeline, and the sentences its
    figures select."""
    t = w.t
    rows, notes, held = [], [], []
    for wl, engine, fid in _timelines(w):
        held += [f for f in w.registry if ids.within(f, ids.parent(fid("requests")))]
        rows.append(_row(w, engine, wl, fid))
        notes += _sentences(w, engine, wl, fid)
    if not rows:
        return None
    # the steady decode time and what is left beside it come from the seed's steady windows;
    # the waits, stalls and gaps from the engine model: each note names its own inputs
    seeded = [f for f in held if ids.leaf(f) in SEEDED]
    modelled = [f for f in held if f not in seeded]
    for what, figs in ((t["timeline.generated"], modelled), (t["timeline.col.steady"], seeded)):
        if figs and w.generated(*figs):
            notes.append(w.generated_note(what, *figs))
    header = [t["table.engine"], t["server.col.workload"]] + \
        [t[f"timeline.col.{c}"] for c in ("wait_share", "wait", "stall", "shared", "tpot",
                                          "steady")]
    return Section(id="timeline", heading=t["timeline.heading"],
                   paragraphs=[sentence(t["timeline.intro"], factor=f"{STALL_FACTOR:g}")]
                   + notes,
                   tables=[Table(header=header, rows=rows, numeric=tuple(range(2, 8)))])
