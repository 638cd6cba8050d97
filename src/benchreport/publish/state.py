"""The "server state" section: the prefix cache, KV-cache usage, the queue and preemptions
(vLLM) or retractions (SGLang) of each engine in each benchmark window, from its own log.

One table row and one short paragraph per engine and workload; a chart per engine and
workload sits beside them (``charts.state_charts``). The hit-rate sentence is picked by the
hit rate (none, part, most of the prompt tokens found in the cache), the queue sentence by
the time queued; a value a reconstruction's generator set is marked as such, and the
hit-rate sentence then says what set it instead of reading it as a finding.
"""

from __future__ import annotations

from functools import partial

from markupsafe import Markup, escape

from ..core import ids
from ..core.i18n import sentence
from ..core.provenance import ASSUMED, MEASURED
from ..core.provenance import origins as provenance_origins
from .narrative_base import Writer
from .sections import Section, Table, figure_cell

# a hit rate at or above this share of prompt tokens reads as "most" of them
MOST_PCT = 50.0
COUNTS = ("preemptions", "retractions")


def _count_id(w: Writer, wid: str, eid: str) -> str | None:
    return next((ids.state(wid, eid, n) for n in COUNTS if w.has(ids.state(wid, eid, n))),
                None)


def _row(w: Writer, wl, e) -> list[Markup] | None:
    cache = partial(ids.cache, wl.id, e.id)
    state = partial(ids.state, wl.id, e.id)
    cells = [cache("prefix_hit_pct"), cache("kv_usage_peak_pct"),
             ids.arrival(wl.id, e.id, "max_waiting"), state("queued_s")]
    if not any(w.has(c) for c in cells):
        return None
    basis = w.registry[cells[0]].context.get("basis") if w.has(cells[0]) else None
    count = _count_id(w, wl.id, e.id)
    return [Markup(escape(wl.label)), Markup(escape(e.name)), figure_cell(w, cells[0]),
            Markup(escape(w.t[f"cache.basis_{basis}"])) if basis else Markup(""),
            *(figure_cell(w, c) for c in cells[1:]),
            figure_cell(w, count) if count else Markup("–")]


def hit_key(w: Writer, fid: str) -> str:
    """The hit-rate sentence the figure picks: what set it where the generator or an
    assumption did, else none, part or most of the prompt tokens found in the cache."""
    if w.provenance(fid) != MEASURED:
        return "state.hit_set"
    fig = w.registry[fid]
    value = float(fig.value)
    if value == 0:
        return "state.hit_none"          # none over the rolling span: none in the window
    if fig.context.get("basis") == "rolling":
        return "state.hit_rolling"       # earlier requests count too: not this window's
    return "state.hit_most" if value >= MOST_PCT else "state.hit_some"


def _hit_sentence(w: Writer, wl, e) -> list[Markup]:
    fid = ids.cache(wl.id, e.id, "prefix_hit_pct")
    if not w.has(fid):
        return []
    key = hit_key(w, fid)
    if key == "state.hit_set" and w.provenance(fid) == ASSUMED:
        return []           # the section's note says what set it (cache.assumed)
    extra = w.set_by(fid) if key == "state.hit_set" else {}
    return [sentence(w.t[key], engine=w.name(e.id), label=wl.label, value=w.fig(fid),
                     **extra)]


def _queue_sentence(w: Writer, wl, e) -> list[Markup]:
    queued, kv = ids.state(wl.id, e.id, "queued_s"), ids.cache(wl.id, e.id, "kv_usage_peak_pct")
    peak, spacing = ids.arrival(wl.id, e.id, "max_waiting"), \
        ids.state(wl.id, e.id, "line_spacing_s")
    if not w.has(queued, kv):
        return []
    if w.registry[queued].value == 0 or not w.has(peak, spacing):
        return [sentence(w.t["state.never_queued"], engine=w.name(e.id), label=wl.label,
                         qmark=w.mark(queued), kv=w.fig(kv), mark=w.mark(kv))]
    lead = ids.state(wl.id, e.id, "queued_lead_s")
    extra = {"lead": w.fig(lead)} if w.has(lead) else {}
    return [sentence(w.t["state.queued_lead" if extra else "state.queued"], engine=w.name(e.id),
                     label=wl.label, seconds=w.fig(queued), spacing=w.fig(spacing),
                     peak=w.fig(peak), qmark=w.mark(queued, peak), kv=w.fig(kv),
                     mark=w.mark(kv), **extra)]


def _assumed_note(w: Writer) -> list[Markup]:
    held = [f for f in (ids.cache(wl.id, e.id, n) for wl in w.run.meta.workloads
                        for e in w.run.meta.engines
                        for n in ("prefix_hit_pct", "kv_usage_peak_pct")) if w.has(f)]
    if not held or w.provenance(*held) != ASSUMED:
        return []
    return [sentence(w.t["cache.assumed"], inputs=w.inputs_text(provenance_origins(
        w.registry, held, ASSUMED)))]


def state_section(w: Writer) -> Section | None:
    """Per workload and engine with log lines in its window: the table of the prefix-cache
    hit rate, peak KV usage, peak waiting, time queued and preemptions or retractions, and
    a paragraph that states them."""
    t = w.t
    rows, paras = [], []
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            row = _row(w, wl, e)
            if row is None:
                continue
            rows.append(row)
            parts = _queue_sentence(w, wl, e) + _hit_sentence(w, wl, e)
            if parts:
                paras.append(Markup(" ").join(parts))
    if not rows:
        return None
    header = [t["table.workload"], t["table.engine"], t["table.prefix_hit"],
              t["table.hit_basis"], t["table.kv_peak"], t["table.peak_waiting"],
              t["table.queued"], t["table.preempt_retract"]]
    return Section("cache", t["heading.cache"],
                   [sentence(t["cache.intro"]), sentence(t["state.intro"]), *paras,
                    *_assumed_note(w)],
                   [Table(header=header, rows=rows, numeric=(2, 4, 5, 6, 7))])
