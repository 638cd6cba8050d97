"""The article's body sections, each assembled from figures, caveats and claim verdicts.

Every number is a link to its derivation; every sentence is picked by the data (which engine
is faster, whether a steady phase or a crossover exists) and worded by the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePosixPath
from typing import Any

from markupsafe import Markup, escape

from ..core import ids
from ..core.claims import CONFIRMED as CLAIM_CONFIRMED
from ..core.claims import CONTRADICTED as CLAIM_CONTRADICTED
from ..core.claims import DIFFERS as CLAIM_DIFFERS
from ..core.claims import FITTED as CLAIM_FITTED
from ..core.claims import METHOD as CLAIM_METHOD
from ..core.claims import REASONS
from ..core.i18n import format_value, sentence
from ..core.metrics import TIE
from ..core.provenance import ASSUMED, CALIBRATED, FREE, MEASURED, MODEL
from ..core.provenance import origins as provenance_origins
from ..core.records import DECLARED_CLIENT, declared_text
from ..core.verdicts import (
    BOTH,
    DECODE,
    DURATION_CHECKS,
    FIRST_TOKENS,
    FOUND,
    INCONSISTENT,
    MIXED,
    NO_CROSSING,
    NO_LOG,
    NONE,
    UNKNOWN,
    VALID,
    YES,
)
from . import citations
from .claimtext import key_label, key_units, reason_text, value_text
from .narrative_base import Writer


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Markup]]
    numeric: tuple[int, ...] = ()        # columns aligned right
    caption: str = ""
    cls: str = ""                        # a class for the print stylesheet's column widths
    # rows the PDF and the blog leave out (the HTML keeps them), and the line said instead
    collapsed: tuple[int, ...] = ()
    collapsed_note: Markup | str = ""
    # columns the PDF and the blog leave out (the HTML keeps them): file:line evidence a
    # print reader cannot follow, a reconstruction's generated values
    screen_columns: tuple[int, ...] = ()


@dataclass(frozen=True)
class Items:
    """A paragraph that is a lead-in and a list (a legend, read item by item). Print (the
    PDF and the blog) leaves out the items at ``screen`` (the HTML edition's only: they
    explain what only its rows show), and the whole paragraph where ``screen_only``."""
    lead: Markup
    items: list[Markup]
    screen: tuple[int, ...] = ()
    screen_only: bool = False

    def printed(self) -> list[Markup]:
        """The items print keeps."""
        return [x for i, x in enumerate(self.items) if i not in self.screen]


@dataclass(frozen=True)
class Section:
    id: str
    heading: str
    paragraphs: list[Markup] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Markup] = field(default_factory=list)
    # the HTML edition's only: the print edition and the blog name it and link to it (a
    # reconstruction's analyses of the generator's output, publish.narrative.reading_order)
    screen_only: bool = False
    # said in print and in the blog after the tables: where what they leave out is
    print_note: Markup | str = ""


def figure_cell(w: Writer, fid: str) -> Markup:
    """A table cell: the figure as the page shows it, or a dash where there is none."""
    return w.fig(fid).html if w.has(fid) else Markup("–")


_PER_RUN = {"decode": ids.decode, "prefill": ids.prefill, "spec": ids.spec}


def engines_with(w: Writer, workload: str, prefix: str) -> list[str]:
    """Engines with any figure of family ``prefix`` (decode, prefill, spec) at ``workload``."""
    make = _PER_RUN[prefix]
    return [e.id for e in w.run.meta.engines if w.has(make(workload, e.id, "steady"))
            or any(ids.within(k, ids.parent(make(workload, e.id, "steady")))
                   for k in w.registry)]


# Every catalogue sentence that compares, concludes or explains, and the figure (id
# pattern) whose value picks it. tests/test_sentences.py checks that no such sentence is
# missing here.
CHOSEN_BY = {
    # the headline of each shape of run (publish/headline.py)
    "headline.failed": "point.<p>.validity",
    "headline.errors": "point.<p>.failed_share",
    **{f"headline.{k}": "point.<p>.validity"
       for k in ("trust_valid", "trust_valid_unrun", "trust_flagged", "trust_invalid",
                 "conclusion_failed", "conclusion_one")},
    **{f"headline.{k}": "curve.<w>.<s>.peak" for k in ("sweep_rising", "sweep_peak")},
    **{f"headline.{k}": "curve.<w>.<s>.ttft_growth" for k in ("ttft_grows", "ttft_flat")},
    "headline.saturated": "curve.<w>.<s>.knee",
    "headline.capacity": "slo.<w>.<s>.capacity",
    **{f"headline.{k}": "curve.<w>.<s>.<l>.spread" for k in ("repeats_agree",
                                                               "repeats_differ")},
    "finding.gap_inconsistent": "e2e.<w>.gap.where",
    "conclusion.doubtful": "consistency.<w>.<e>.duration",
    "server.agree": "consistency.<w>.<e>.output_tokens",
    # where each request's time went (publish/timeline.py)
    "timeline.stall": "timeline.<w>.<e>.longest_stall_s",
    "timeline.shared": "timeline.<w>.<e>.shared_gaps",
    "timeline.estimate": "timeline.<w>.<e>.prefill_basis",
    "timeline.unplaced": "timeline.<w>.<e>.prefill_basis",
    "timeline.generated": "timeline.<w>.<e>.requests",
    "timeline.outside_queue": "state.<w>.<e>.queued_s",
    "timeline.outside_queue_generated": "arrival.<w>.<e>.burst_gap_s",
    "timeline.substituted": "timeline.<w>.<e>.prefill_substituted",
    "timeline.closure_after": "timeline.<w>.<e>.tpot_closure_ms",
    "timeline.closure_before": "timeline.<w>.<e>.tpot_closure_ms",
    "timeline.rounding": "timeline.<w>.<e>.tpot_sum_ms",
    "timeline.none": "timeline.<w>.<e>.stalls",
    "results.inconsistent": "consistency.<w>.<e>.duration",
    "why.inconsistent_duration": "consistency.<w>.<e>.duration",
    "xrun.same": "diff.<rk>.groups",
    "xrun.one_factor": "diff.<rk>.groups",
    "xrun.many_factors": "diff.<rk>.groups",
    "xrun.largest_improved": "delta.<ra>.<rb>.<e>.<w>.<load>.<metric>.verdict",
    "xrun.largest_regressed": "delta.<ra>.<rb>.<e>.<w>.<load>.<metric>.verdict",
    "results.faster": "e2e.<w>.faster",
    # the lede (narrative.lede): each input length in brief, and the reversal
    "lede.faster": "e2e.<w>.faster",
    "lede.tie": "e2e.<w>.faster",
    "lede.reversal": "e2e.<w>.faster",
    "lede.reversal_published": "e2e.<w>.faster",
    "lede.contradicted": "claims.contradicted",
    "lede.mixed": "claims.mixed",
    "lede.contradicted_published": "claims.contradicted",
    "results.arrival_differs": "arrival.<w>.<e>.max_waiting",
    "results.arrival_differs_nogap": "arrival.<w>.<e>.max_waiting",
    "results.arrival_reconstructed": "arrival.<w>.<e>.burst_gap_s",
    "results.arrival_fitted": "arrival.<w>.<e>.burst_gap_s",
    "results.arrival_budget": "budget.<w>.<e>.unexplained_s",
    "results.published_budget": "claims.unexplained",
    "limit.published_budget": "budget.<w>.<e>.published_unexplained_min_s",
    "lede.mixed_common": "claims.mixed",
    "conclusion.found_mixed_common": "claims.mixed",
    "conclusion.found_mixed_bounds_common": "decode.degradation.<e>.min_over_mean",
    "lede.mean_bounds_holds": "decode.degradation.<e>.min_over_mean",
    "lede.contradicted_against": "claims.contradicted",
    "conclusion.found_published_budget": "claims.unexplained",
    "results.tie": "e2e.<w>.faster",
    "results.single_run": "limits.repeats",
    "results.single_run_assumed": "limits.repeats",
    "lede.calibrated": "e2e.<w>.<e>.duration",
    "pointlog.bases_differ": "point.<p>.log_gen_tps",
    "conclusion.takeaway": "e2e.<w>.faster",
    "conclusion.takeaway_repeated": "e2e.<w>.faster",
    "results.itl_tail": "latency.<w>.<e>.itl.mean",
    "results.itl_tail_per_token": "latency.<w>.<e>.itl.mean",
    "results.itl_tail_generated": "latency.<w>.<e>.itl.mean",
    "results.itl_tail_generated_all": "latency.<w>.<e>.itl.mean",
    "results.itl_bases": "latency.<w>.<e>.itl.mean",
    "results.itl_bases_tpot": "latency.<w>.<e>.tpot.mean",
    "finding.gap_first": "e2e.<w>.gap.where",
    "finding.gap_decode": "e2e.<w>.gap.where",
    "finding.gap_both": "e2e.<w>.gap.where",
    "finding.gap_decode_all": "e2e.<w>.gap.first_tokens_lead_s",
    "finding.gap_unknown": "e2e.<w>.gap.where",
    "finding.cross": "model.crossover.<a>.<b>.lengths",
    "finding.cross_fit": "model.crossover.<a>.<b>.lengths",
    "finding.extrapolated": "model.crossover.<a>.<b>.beyond",
    "finding.same": "decode.<w>.<e>.ms_per_token",
    "decode.degradation_over": "decode.degradation.<e>.peak_over_mean",
    "decode.degradation_under": "decode.degradation.<e>.peak_over_mean",
    "decode.mean_basis": "decode.<w>.<e>.mean_of_lines",
    "prefill.chunks_decay": "prefill.<w>.<e>.r1.decay_pct",
    "prefill.chunks_rise": "prefill.<w>.<e>.r1.decay_pct",
    "prefill.chunks_calibrated": "prefill.<w>.<e>.r1.sequence",
    "prefill.next_mixed": "prefill.<w>.<e>.r1.recovery",
    "prefill.next_pure": "prefill.<w>.<e>.r1.recovery",
    "conclusion.per_workload": "e2e.<w>.faster",
    "conclusion.tie": "e2e.<w>.faster",
    "conclusion.guidance_cross": "e2e.<w>.faster",
    "conclusion.guidance_reversed": "e2e.<w>.faster",
    "conclusion.guidance_reversed_published": "e2e.<w>.faster",
    "conclusion.guidance_one": "e2e.<w>.faster",
    "conclusion.caveat": "caveats.settings_differing",
    "conclusion.arrival": "arrival.<w>.<e>.max_waiting",
    "conclusion.arrival_reconstructed": "arrival.<w>.<e>.burst_gap_s",
    "conclusion.single_run": "limits.repeats",
    "conclusion.found_mixed": "claims.mixed",
    "conclusion.found_mixed_bounds": "decode.degradation.<e>.min_over_mean",
    "conclusion.found_mixed_holds": "decode.degradation.<e>.min_over_mean",
    "claims.mean_bounds": "decode.degradation.<e>.min_over_mean",
    "lede.mean_bounds": "decode.degradation.<e>.min_over_mean",
    "lede.differs_published": "claims.differs_published",
    "conclusion.found_differs_published": "claims.differs_published",
    "conclusion.found_contradicted_against": "claims.contradicted",
    "conclusion.found_budget": "budget.<w>.<e>.unexplained_s",
    "conclusion.found_budget_reconstructed": "budget.<w>.<e>.unexplained_s",
    "conclusion.found_contradicted": "claims.contradicted",
    "conclusion.found_contradicted_published": "claims.contradicted",
    "conclusion.found_spec": "limits.spec_max_accept_len",
    "conclusion.not_compared": "campaign.series",
    "limit.kv_fits_yes": "limits.kv_fits",
    "limit.kv_fits_no": "limits.kv_fits",
    "limit.kv_fits_yes_assumed": "limits.kv_fits",
    "limit.kv_fits_no_assumed": "limits.kv_fits",
    "why.spec_overhead": "limits.spec_max_accept_len",
    "why.spec_overhead_differs": "limits.spec_max_accept_len",
    "why.arrival_reconstructed": "arrival.<w>.<e>.max_waiting",
    "why.event_stall_reconstructed": "limits.<w>.<e>.stall_s",
    "claims.intro_reconstruction": "claims.informative",
    "claims.intro_reconstruction_none": "claims.informative",
    # what a reconstruction's generator set, in place of a finding (narrative_base.Writer)
    "generated.cross": "model.crossover.<a>.<b>",
    "claims.generated_reason": "claim.<id>",
    "claims.designed_reason": "claim.<id>",
    "claims.collapsed_differs": "claim.<id>",
    "claims.contradicted_texts": "claim.<id>",
    "claims.share_over": "e2e.<w>.gap.decode_share",
    "generated.table": "latency.<w>.<e>.<metric>.median",
    "generated.table_targets": "decode.<w>.<e>.min",
    "stepmodel.seeded": "stepmodel.<e>.<w>.step_ms",
    "section.generator_intro": "generator.<key>",
    "points.all_failed": "point.<p>.completed",
    # campaigns (publish/campaign.py)
    "campaign.with_repeats": "campaign.repeats",
    "campaign.single_runs": "campaign.repeats",
    "campaign.knee": "curve.<w>.<s>.knee",
    **{f"campaign.{k}": "curve.<w>.<s>.peak" for k in ("knee_rising", "knee_unclear")},
    "campaign.knee_falls": "curve.<w>.<s>.fall_pct",
    **{f"campaign.{k}": "compare.<w>.<a>.<b>.<metric>.<verdict>"
       for k in ("compare_unknown", "compare_all_tie", "compare_counts")},
    **{f"campaign.{k}": "compare.<w>.<a>.<b>.<load>.<metric>.verdict"
       for k in ("ratio_higher", "ratio_lower", "ratio_tie", "ratio_unknown", "finding",
                 "finding_tie", "finding_slo", "finding_tie_slo")},
    "campaign.pareto_segment": "pareto.<w>.<a>.<b>.seg<i>.leader",
    **{f"campaign.single_{k}": "compare.<w>.<a>.<b>.<load>.<metric>"
       for k in ("pair", "join", "all_higher", "all_lower", "mixed", "note")},
    "headline.not_controlled": "caveats.settings_differing",
    "headline.not_controlled_assumed": "caveats.settings_differing",
    "headline.not_controlled_where": "caveats.settings_differing",
    "headline.not_controlled_published": "claim.<id>",
    **{f"headline.apart_{k}": "caveats.settings_apart" for k in ("unlike", "outcome")},
    **{f"campaign.{k}": "pareto.<w>.<a>.<b>.crossings"
       for k in ("pareto_cross", "pareto_no_cross", "pareto_disjoint", "conclusion_front_one",
                 "conclusion_front_one_noslo", "conclusion_front_one_single",
                 "conclusion_front_one_noslo_single",
                 "conclusion_front_cross")},
    **{f"campaign.{k}": "slo.<w>.<s>.capacity"
       for k in ("capacity_interpolated", "capacity_not_reached", "capacity_below",
                 "capacity_none", "conclusion_capacity", "conclusion_capacity_tie",
                 "conclusion_cost")},
    "campaign.conclusion_beyond": "pareto.<w>.<s>.top",
    "campaign.pareto_ttft": "pareto.<w>.<s>.frontier",
    **{f"validity.{k}": "point.<p>.validity"
       for k in ("all_failed", "failed", "load_not_driven", "few_for_p99", "few_for_p90",
                 "short_output", "short_run", "short_run_slots", "warmup")},
    # the step model of decode against its bound (publish/stepmodel.py)
    "stepmodel.below": "stepmodel.<e>.line_vs_bound",
    "stepmodel.above": "stepmodel.<e>.fixed_vs_bound",
    "stepmodel.above_generated": "stepmodel.<e>.fixed_vs_bound",
    "stepmodel.not_fitted": "stepmodel.<e>.fit",
    "stepmodel.no_bound": "stepmodel.<e>.bound",
    "stepmodel.model_derived": "stepmodel.<e>.generator_fixed_ms",
    "stepmodel.below_until": "stepmodel.<e>.line_vs_bound",
    "stepmodel.below_beyond": "stepmodel.<e>.line_vs_bound",
    "stepmodel.points_above": "stepmodel.<e>.points_above_bound",
    "stepmodel.points_below": "stepmodel.<e>.points_above_bound",
    "stepmodel.points_mixed": "stepmodel.<e>.points_above_bound",
    "stepmodel.point_vs_bound": "stepmodel.<e>.points_above_bound",
    "stepmodel.fixed_generated": "stepmodel.<e>.generator_fixed_ms",
    "stepmodel.pinned": "stepmodel.<e>.bound_fixed_fits",
    # a claim's reason is the outcome of its check: the verdict figure claim.<id> carries it
    **{f"reason.{code}": "claim.<id>" for code in REASONS},
    "reason.cold_start_reconstruction": "claim.<id>",
    "validity.reconstruction": "point.<p>.validity",
    # the server's state in each window (publish/state.py)
    **{f"state.hit_{k}": "cache.<w>.<e>.prefix_hit_pct"
       for k in ("none", "some", "most", "rolling", "set")},
    "state.queued": "state.<w>.<e>.queued_s",
    "state.never_queued": "state.<w>.<e>.queued_s",
    "state.queued_lead": "state.<w>.<e>.queued_lead_s",
    "stepmodel.bound_table": "stepmodel.<e>.bound_weights_ms",
}




def gap_sentences(w: Writer) -> tuple[list[Markup], list[Markup]]:
    """Per workload: where the duration gap accrued, picked by its split; and apart, one
    note for the workloads whose split a reconstruction's model produced."""
    t, out, generated = w.t, [], []
    for wl in w.run.meta.workloads:
        def g(name: str, wid: str = wl.id) -> str:
            return ids.e2e(wid, None, name)

        key = g("gap.where")
        if not w.has(key) or w.registry[g("faster")].value == TIE:
            continue
        where = w.registry[key].value
        if where == UNKNOWN:
            out.append(sentence(t["finding.gap_unknown"], label=wl.label))
            continue
        if where == INCONSISTENT:
            engine = w.registry[key].context["engine"]
            out.append(sentence(t["finding.gap_inconsistent"], label=wl.label,
                                engine=w.name(engine), client=w.fig(ids.consistency(
                                    wl.id, engine, "duration", "client")),
                                server=w.fig(ids.consistency(wl.id, engine, "duration",
                                                             "server"))))
            continue
        code = {FIRST_TOKENS: "gap_first", DECODE: "gap_decode", BOTH: "gap_both"}[where]
        assumed = resting_on(w, g("gap.first_tokens_s"))
        if where == DECODE and w.has(g("gap.first_tokens_lead_s")):
            code = "gap_decode_all"
        split = (g("gap.first_tokens_s"), g("gap.decode_tail_s"))
        if w.generated(*split):
            # a reconstruction's model or seed split the gap: no finding, and what set it
            generated.append((wl.label, split, assumed))
            continue
        out.append(sentence(t[f"finding.{code}"], label=wl.label,
                            faster=w.fig(g("faster")),
                            slower=w.fig(g("slower")), gap=w.fig(g("gap_s")),
                            first=w.fig(g("gap.first_tokens_s")),
                            first_share=w.fig(g("gap.first_tokens_share")),
                            tail=w.fig(g("gap.decode_tail_s")),
                            decode_share=w.fig(g("gap.decode_share")),
                            lead=w.fig(g("gap.first_tokens_lead_s"))
                            if code == "gap_decode_all" else ""))
        if assumed:
            out.append(sentence(t["finding.gap_assumed"], label=wl.label,
                                assumed="; ".join(assumed)))
    if not generated:
        return out, []
    labels = w.and_list([label for label, _, _ in generated])
    return out, [w.unanswered(sentence(t["generated.gap"], label=labels),
                              *(f for _, split, _ in generated for f in split),
                              also=[a for *_, also in generated for a in also])]


def resting_on_values(w: Writer, fig_id: str, without: str | None = None) -> list[str]:
    """As ``resting_on``, each assumption with its value: "arrival spacing …, about 6.3 s";
    ``without``: leave out the assumptions that also name this figure (a sentence nearby
    states it already)."""
    return [f"{a.setting[w.lang]}, {a.value[w.lang]}" for a in w.run.meta.assumed
            if any(ids.named_by(fig_id, f) for f in a.figures)
            and not (without and any(ids.named_by(without, f) for f in a.figures))]


def calibrated_durations(w: Writer, workloads) -> bool:
    """A reconstruction whose durations at ``workloads`` are all published targets."""
    durations = [ids.e2e(wl.id, e.id, "duration") for wl in workloads
                 for e in w.run.meta.engines if w.has(ids.e2e(wl.id, e.id, "duration"))]
    return bool(w.run.meta.reconstruction and durations) and all(
        w.registry[d].provenance == CALIBRATED for d in durations)


def resting_on(w: Writer, fig_id: str, without: str | None = None) -> list[str]:
    """The assumptions of run.yaml whose ``figures`` name ``fig_id`` (or a prefix of it), in
    the reader's language: a sentence stating the figure says what it rests on (``without``:
    as in ``resting_on_values``)."""
    return [a.setting[w.lang] for a in w.run.meta.assumed
            if any(ids.named_by(fig_id, f) for f in a.figures)
            and not (without and any(ids.named_by(without, f) for f in a.figures))]


@dataclass(frozen=True)
class Finding:
    """The key finding: what the data says (``said``), and apart, the questions whose answer
    in this run a reconstruction's model or seed set (``unanswered``: the data cannot say)."""

    said: list[Markup]
    unanswered: list[Markup]

    def __bool__(self) -> bool:
        return bool(self.said or self.unanswered)


def finding(w: Writer) -> Finding | None:
    """The key finding: where each gap accrued, who decodes faster where, and where the
    per-token decode times cross."""
    wl = w.run.meta.workloads
    if not any(w.has(ids.e2e(x.id, e.id, "duration")) for x in wl for e in w.run.meta.engines):
        return None                 # no single-point result: the campaign sections speak
    if w.one_engine():
        return None                 # gaps and crossovers compare two engines
    parts, unanswered = gap_sentences(w)
    said = _crossing(w, parts, unanswered)
    return Finding(said, unanswered) if said or unanswered else None


def _crossing(w: Writer, parts: list[Markup], unanswered: list[Markup]) -> list[Markup]:
    """``parts`` and, after them, who decodes faster per request where, and where the two
    cross (a crossing the reconstruction's model set goes to ``unanswered``)."""
    t, wl = w.t, w.run.meta.workloads
    pair = ids.first_crossover(w.registry)
    if pair is None or len(wl) < 2:
        return parts + [sentence(t["finding.nomodel"])]
    a, b = pair
    key = ids.crossover(a, b)
    short, long_ = wl[0], wl[-1]

    def quicker(workload) -> str | None:
        times = {e: w.registry[ids.decode(workload.id, e, "ms_per_token")].value
                 for e in (a, b) if w.has(ids.decode(workload.id, e, "ms_per_token"))}
        return min(times, key=times.get) if len(times) == 2 else None

    qs, ql = quicker(short), quicker(long_)
    if qs is None or ql is None:
        return parts + [sentence(t["finding.nomodel"])]
    per_token_ids = [ids.decode(x.id, e, "ms_per_token") for x in (short, long_) for e in (a, b)]
    if w.generated(key, *per_token_ids):
        unanswered.append(w.unanswered(t["generated.cross"], key, *per_token_ids))
        return parts
    if qs == ql or w.registry[key].value == NO_CROSSING:
        return parts + [sentence(t["finding.same"], engine=w.name(qs))]
    lengths = w.registry[ids.crossover(a, b, "lengths")].value

    def per_token(workload, engine) -> Markup:
        return w.fig(ids.decode(workload.id, engine, "ms_per_token")).html

    other = {a: b, b: a}
    parts.append(sentence(t["finding.cross" if lengths < 3 else "finding.cross_fit"],
                          short_engine=w.name(qs), long_engine=w.name(ql),
                          short_fast=per_token(short, qs), short_slow=per_token(short, other[qs]),
                          long_fast=per_token(long_, ql), long_slow=per_token(long_, other[ql]),
                          short_label=short.label, long_label=long_.label,
                          x=w.fig(key), rounded=w.fig(ids.crossover(a, b, "rounded")),
                          n=w.fig(ids.crossover(a, b, "lengths")),
                          how=t["crossover.how." + w.registry[key].context["interpolation"]],
                          others=other_crossings(w, a, b),
                          concurrency=w.fig(ids.workload(long_.id, "concurrency"))))
    beyond = ids.crossover(a, b, "beyond")
    if w.has(beyond) and w.registry[beyond].value == YES:
        parts.append(sentence(t["finding.extrapolated"]))
    return parts


def marked_assumed(w: Writer, sid: str, engine: str, value: str | Markup) -> Markup:
    """A setting's value for a table cell, marked (``Writer.cell_tag``) when it was
    assumed: run.yaml lists it, or its figure's provenance says so (a reconstruction's
    scenario filled it in)."""
    listed = f"{sid}.{engine}" in {s for a in w.run.meta.assumed for s in a.settings}
    fid = ids.setting(sid, engine)
    if listed or (w.has(fid) and w.provenance(fid) == ASSUMED):
        return escape(value) + w.cell_tag("assumed")
    return escape(value)


def other_crossings(w: Writer, a: str, b: str) -> Markup:
    """Where the crossover of ``a`` and ``b`` lies under each interpolation but the point
    estimate's (its figure's context names them), one sentence each."""
    t, out = w.t, []
    for name in w.registry[ids.crossover(a, b)].context.get("others", {}):
        fid = ids.crossover(a, b, name)
        if not w.has(fid):
            continue
        how = t["crossover.how." + name]
        out.append(sentence(t["crossover.other_none"], how=how)
                   if w.registry[fid].value == NO_CROSSING
                   else sentence(t["crossover.other_at"], how=how, x=w.fig(fid)))
    return Markup(" ").join(out)


def settings_section(w: Writer, compared: dict[str, dict[str, str]]) -> Table | None:
    """Every compared setting per engine; a value run.yaml lists as assumed is marked."""
    engines = [e.id for e in w.run.meta.engines]
    rows = []
    for sid, values in compared.items():
        cells = []
        for e in engines:
            value = w.setting_words(values[e]) if e in values else "–"
            cells.append(marked_assumed(w, sid, e, value))
        rows.append([Markup(escape(w.t["setting." + sid]))] + cells)
    if not rows:
        return None
    return Table(header=[w.t["table.setting"]] + [w.engine_name(e) for e in engines], rows=rows)


def client_name(w: Writer, client: str, marked: bool = True) -> str:
    """How the report names a points' client: as the file's client id, or, for the user's
    own client, the name run.yaml declares (``marked``: and that the user declared it)."""
    if client == DECLARED_CLIENT and w.run.meta.client is not None:
        name = w.run.meta.client.name
        # plain text (the callers escape it once): the template has no particle
        return w.t["table.client_declared"].format(name=name) if marked else name
    return client


def definition_text(w: Writer, code: str) -> str:
    """A latency definition as the report prints it: the catalogue's words for a code of
    ``base.DEFINITIONS``, the user's own words (marked as declared) for a declared one."""
    text = declared_text(code)
    if text is not None:
        return w.t["definition.declared"].format(text=text)   # plain text, escaped once
    return w.t[definition_label(code)]


def metric_name(w: Writer, metric: str, code: str | None) -> str:
    """The metric's name as its definition ``code`` has it ("ITL (per token)" for SGLang's
    native client), or its plain name (``metric.<m>`` with HEADER_SUFFIX's suffix)."""
    suffix = "declared" if declared_text(code) is not None else HEADER_SUFFIX.get(code or "")
    key = f"metric.{metric}_{suffix}" if suffix else f"metric.{metric}"
    return w.t[key] if key in w.t else w.t[f"metric.{metric}"]


def _definition_of(w: Writer, fid: str) -> str | None:
    return w.registry[fid].context.get("definition") if w.has(fid) else None


def latency_table(w: Writer, workload: str) -> Table | None:
    engines = [e.id for e in w.run.meta.engines
               if w.has(ids.latency(workload, e.id, "ttft", "mean"))]
    if not engines:
        return None
    rows: list[list[Markup]] = []
    noted: dict[str, str] = {}      # per engine, the note its rows have given so far
    for metric in ("ttft", "tpot", "itl", "e2el"):
        for e in engines:
            def stat(s: str, e: str = e, metric: str = metric) -> str:
                return ids.latency(workload, e, metric, s)

            spread = Markup("–")
            if w.has(stat("min"), stat("max")):
                # both ends in one unit: Writer.in_seconds decides by the metric's max
                spread = Markup("{}–{}").format(w.fig(stat("min")).html,
                                                w.fig(stat("max")).html)
            rows.append([Markup(escape(metric_name(w, metric, _definition_of(w, stat("mean"))))),
                         _engine_cell(w, workload, e, stat("mean"), noted)]
                        + [figure_cell(w, stat(s)) for s in ("mean", "median", "p90", "p99")]
                        + [spread])
    return Table(header=[w.t["table.metric"], w.t["table.engine"], w.t["table.mean"],
                         w.t["table.median"], "p90", "p99", w.t["table.spread"]], rows=rows,
                 numeric=(2, 3, 4, 5, 6))


def _engine_cell(w: Writer, workload: str, engine: str, fid: str,
                 noted: dict[str, str]) -> Markup:
    """An engine's name in a latency row, with what its figures rest on besides the
    measurement: requests that reached it spaced out, and run.yaml's assumptions; given
    at the engine's first row, and again only where a later row rests on something else
    (``noted``: per engine, the note given last)."""
    spaced = engine in spaced_engines(w, workload)
    notes = [w.t["results.arrived_spaced"]] if spaced else []
    # the spacing's own assumption is what "arrived spaced" says already
    note = "; ".join(notes + resting_on(w, fid, without=arrival_gap_id(w, workload)
                                        if spaced else None))
    name = Markup(escape(w.engine_name(engine)))
    if not note or noted.get(engine) == note:
        return name
    noted[engine] = note
    return Markup('{}<br><span class="aside">{}</span>').format(name, note)


def arrival_split(w: Writer, workload: str) -> tuple[list[str], list[str]]:
    """The engines at which requests of ``workload`` waited, and those at which none ever
    did (analyses.arrival): both non-empty only when they received the load differently."""
    waited, never = [], []
    for e in w.run.meta.engines:
        fid = ids.arrival(workload, e.id, "max_waiting")
        if w.has(fid):
            (waited if w.registry[fid].value > 0 else never).append(e.id)
    return (waited, never) if waited and never else ([], [])


def spaced_engines(w: Writer, workload: str) -> list[str]:
    return arrival_split(w, workload)[1]


def arrival_gap_id(w: Writer, workload: str) -> str | None:
    """The spacing figure of the engine whose requests never waited (arrival_sentence's)."""
    waited, never = arrival_split(w, workload)
    return ids.arrival(workload, never[0], "burst_gap_s") if waited else None


def arrival_sentence(w: Writer, workload: str) -> Markup | None:
    """Beside a comparison of one workload: the engines did not receive its requests alike."""
    waited, never = arrival_split(w, workload)
    if not waited:
        return None
    gap = ids.arrival(workload, never[0], "burst_gap_s")
    key = "results.arrival_differs" if w.has(gap) else "results.arrival_differs_nogap"
    duration = ids.e2e(workload, never[0], "duration")
    budget = partial(ids.budget, workload, never[0])
    if w.has(gap) and w.provenance(gap) != MEASURED:   # a reconstruction's spacing
        # fitted to the published duration: at the steady rates the run finishes sooner
        key = "results.arrival_fitted" if w.provenance(gap) == CALIBRATED and \
            w.has(duration) else "results.arrival_reconstructed"
        if key == "results.arrival_fitted" and w.has(budget("unexplained_s")) \
                and w.registry[budget("unexplained_s")].value > 0:
            key = "results.arrival_budget"      # how much sooner, in seconds
    held = {k: w.fig(budget(k)) for k in ("expected_s", "prefill_s", "decode_s",
                                          "unexplained_s") if w.has(budget(k))}
    return sentence(w.t[key],
                    waited=w.name(waited[0]), never=w.name(never[0]),
                    queued=w.fig(ids.arrival(workload, waited[0], "max_waiting")),
                    gap=w.fig(gap) if w.has(gap) else "",
                    duration=w.fig(duration) if w.has(duration) else "", **held)


def table_note(w: Writer, fig_ids: list[str]) -> list[Markup]:
    """Beside a table of a reconstruction whose values its generator's model or seed
    produced: one sentence saying so, and what set them (none for measured values)."""
    held = [f for f in fig_ids if w.has(f)]
    if not held or not w.generated(*held):
        return []
    return [sentence(w.t[w.once("generated.table")], **w.set_by(*held))]


def _mean_basis(w: Writer, engine: str) -> Markup | None:
    """One sentence per engine whose steady mean (Σ tokens ÷ Σ time) differs from the plain
    mean of its lines, with both at every workload where they differ."""
    pairs = []
    for wl in w.run.meta.workloads:
        base = partial(ids.decode, wl.id, engine)
        if w.has(base("mean_of_lines"), base("mean")) and w.text(w.registry[base("mean")]) \
                != w.text(w.registry[base("mean_of_lines")]):
            pairs.append((wl.label, base("mean"), base("mean_of_lines")))
    if not pairs:
        return None
    at = Markup(escape(w.t["decode.at_label"]))
    return sentence(w.t["decode.mean_basis"], engine=w.name(engine),
                    mean=Markup(", ").join(at.format(value=w.fig(m).html, label=lb)
                                           for lb, m, _ in pairs),
                    lines=Markup(", ").join(at.format(value=w.fig(x).html, label=lb)
                                            for lb, _, x in pairs))


def decode_table_note(w: Writer) -> list[Markup]:
    """The decode table's note in a reconstruction: the extremes (and a mean) it was fitted
    to are the published targets; the rest its model or seed produced."""
    cells = [ids.decode(wl.id, e.id, n) for wl in w.run.meta.workloads
             for e in w.run.meta.engines for n in ("min", "max", "mean", "median")]
    held = [f for f in cells if w.has(f)]
    targets = [f for f in held if w.provenance(f) == CALIBRATED]
    rest = [f for f in held if f not in targets]
    if not targets or not rest or not w.generated(*rest):
        return table_note(w, held)
    return [sentence(w.t["generated.table_targets"], **w.set_by(*rest))]


def latency_notes(w: Writer, workload: str, tails: list | None = None) -> list[Markup]:
    """A sentence per engine whose mean chunk gap lies above its p99: what the mean comes
    from (the few long gaps, their share of the time, the longest). Where a reconstruction's
    model set the gaps, no figure of them is stated as found: one sentence for those
    engines says only how a mean can lie above its p99 (and, unless the table's note has,
    what set them). With ``tails`` given (the latency appendix, whose opening says what set
    its tables), those engines are added to it, (label, engines), for one sentence over
    every workload (``generated_tails``), and neither the table's note nor theirs is said."""
    label = w.run.meta.workload(workload).label
    table = table_note(w, [ids.latency(workload, e.id, m, "median")
                           for e in w.run.meta.engines
                           for m in ("ttft", "tpot", "itl", "e2el")]) if tails is None else []
    notes, generated = list(table), []
    for e in w.run.meta.engines:
        def itl(stat: str, e: str = e.id) -> str:
            return ids.latency(workload, e, "itl", stat)

        if not w.has(itl("mean"), itl("p99"), itl("longest"), itl("tail_share")) \
                or w.registry[itl("mean")].value <= w.registry[itl("p99")].value:
            continue
        if w.generated(itl("mean"), itl("longest")):
            generated.append(e.id)
            continue
        per_token = _definition_of(w, itl("mean")) == "itl.per-token"
        notes.append(sentence(w.t["results.itl_tail_per_token" if per_token
                                  else "results.itl_tail"],
                              engine=w.name(e.id), label=label, p="p99",
                              mean=w.fig(itl("mean")), p99=w.fig(itl("p99")),
                              share=w.fig(itl("tail_share")), longest=w.fig(itl("longest"))))
    notes += _no_spread(w, workload)
    if generated and tails is not None:
        tails.append((label, [w.engine_name(e) for e in generated]))
    elif generated:
        notes.append(sentence(w.t["results.itl_tail_generated"], p="p99", label=label,
                              engines=w.and_list([w.engine_name(e) for e in generated])))
        if not table:
            notes.append(w.generated_note(sentence(
                w.t["generated.itl_tail"], engine=w.and_list([w.engine_name(e) for e in generated]),
                label=label), *(ids.latency(workload, e, "itl", "mean") for e in generated)))
    return notes + _itl_bases(w, workload)


def generated_tails(w: Writer, tails: list[tuple[str, list[str]]]) -> list[Markup]:
    """One sentence for every workload and engine whose generated mean gap lies above its
    p99 (``latency_notes``' ``tails``): how a mean can, said once."""
    if not tails:
        return []
    which = [w.t["results.itl_tail_at"].format(
        label=label, engines=w.t["results.itl_tail_engines_sep"].join(engines))
             for label, engines in tails]
    return [sentence(w.t["results.itl_tail_generated_all"], p="p99",
                     which=w.t["results.itl_tail_sep"].join(which))]


def _no_spread(w: Writer, workload: str) -> list[Markup]:
    """Where a latency row's range of per-request values is a dash (the client's file keeps
    no per-request values of that metric): said once in the article, at the first table
    that has one."""
    dashed = any(w.has(ids.latency(workload, e.id, m, "mean"))
                 and not w.has(ids.latency(workload, e.id, m, "min"))
                 for e in w.run.meta.engines for m in ("ttft", "tpot", "itl", "e2el"))
    if not dashed or not w.first("results.no_spread"):
        return []
    return [sentence(w.t["results.no_spread"])]


def _itl_bases(w: Writer, workload: str) -> list[Markup]:
    """Where the engines' clients define ITL differently at ``workload``: one sentence
    saying each engine's and that the ITL rows do not compare across engines."""
    defs = {e.id: _definition_of(w, ids.latency(workload, e.id, "itl", "mean"))
            for e in w.run.meta.engines}
    defs = {e: d for e, d in defs.items() if d}
    said = "itl_bases " + repr(sorted(defs.items()))      # said once per article
    if len(set(defs.values())) < 2 or not w.first(said):
        return []
    each = Markup("; ").join(
        sentence(w.t["limit.engine_value"], engine=w.name(e),
                 value=w.t["definition." + d.replace(".", "_").replace("-", "_")])
        for e, d in defs.items())
    tpot = {_definition_of(w, ids.latency(workload, e, "tpot", "mean")) for e in defs}
    key = "results.itl_bases_tpot" if len(tpot) == 1 and None not in tpot \
        else "results.itl_bases"
    return [sentence(w.t[key], each=each)]


def decode_section(w: Writer) -> Section | None:
    t = w.t
    rows, notes, nolog = [], [], []
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            base = partial(ids.decode, wl.id, e.id)
            if not w.has(base("steady")):
                continue
            steady = w.registry[base("steady")]
            if steady.value != FOUND:
                why = t["decode.why_nolog"] if steady.value == NO_LOG else \
                    t["decode.why_none"].format(
                        records=format_value(steady.context.get("window_records", 0), "count",
                                             w.lang),
                        n=format_value(steady.context.get("requests", 0), "count", w.lang))
                (nolog if steady.value == NO_LOG else notes).append(sentence(
                    t["decode.nosteady"], engine=w.name(e.id), label=wl.label, why=why))
                continue
            rows.append([Markup(escape(wl.label)), Markup(escape(e.name))]
                        + [figure_cell(w, base(k)) for k in ("min", "max", "mean", "median",
                                                                   "per_request", "ms_per_token",
                                                                   "records")])
    paras = [sentence(t["decode.intro"])]
    paras += [p for e in w.run.meta.engines if (p := _mean_basis(w, e.id)) is not None]
    fell: list[tuple[str, dict, str]] = []
    for e in w.run.meta.engines:
        key = ids.degradation(e.id, "mean_over_mean")
        if w.has(key):
            ctx = w.registry[key].context
            pm = w.registry[ids.degradation(e.id, "peak_over_mean")]
            code = "degradation_over" if pm.value > w.registry[key].value \
                else "degradation_under"
            labels = {"engine": w.name(e.id), "short": w.run.meta.workload(ctx["from"]).label,
                      "long": w.run.meta.workload(ctx["to"]).label}
            if w.generated(key):        # one note for every engine, after the loop
                fell.append((e.id, labels, key))
                continue
            paras.append(sentence(
                t["decode." + code], engine=w.name(e.id),
                short=w.run.meta.workload(ctx["from"]).label,
                long=w.run.meta.workload(ctx["to"]).label, mm=w.fig(key),
                pm=w.fig(pm.id)))
    if fell:
        labels = {**fell[0][1], "engine": w.and_list([w.engine_name(e) for e, _, _ in fell])}
        paras.append(w.generated_note(sentence(t["generated.degradation"], **labels),
                                      *[k for _, _, k in fell]))
    table = Table(header=[t["table.workload"], t["table.engine"], t["table.min"], t["table.max"],
                          t["table.mean"], t["table.median"], t["table.per_request"],
                          t["table.ms_per_token"], t["table.records"]],
                  rows=rows, numeric=(2, 3, 4, 5, 6, 7, 8))
    if not rows and not notes and len(paras) == 1:
        return None                 # nothing measured (no log at all): no section
    notes = decode_table_note(w) + notes
    return Section("decode", t["heading.decode"], paras + notes + nolog,
                   [table] if rows else [])


def prefill_section(w: Writer) -> Section | None:
    t = w.t
    if not w.run.meta.workloads:
        return None
    rows, paras = [], [sentence(t["prefill.intro"])]
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            base = partial(ids.prefill, wl.id, e.id)
            if w.has(base("mean")):       # one interval: no min or max, its value only
                rows.append([Markup(escape(wl.label)), Markup(escape(e.name))]
                            + [figure_cell(w, base(k)) for k in ("intervals", "min", "max",
                                                                 "mean")])
    means = [ids.prefill(wl.id, e.id, "mean") for wl in w.run.meta.workloads
             for e in w.run.meta.engines if w.has(ids.prefill(wl.id, e.id, "mean"))]
    if means and w.provenance(*means) == ASSUMED:    # one assumed curve for every engine
        paras.append(sentence(t["prefill.assumed"], inputs=w.inputs_text(
            provenance_origins(w.registry, means, ASSUMED))))
    longest = w.run.meta.workloads[-1]
    for e in w.run.meta.engines:
        base = partial(ids.prefill, longest.id, e.id)
        r1 = partial(ids.prefill_request, longest.id, e.id, 1)
        if w.has(r1("sequence")):
            code = "chunks_decay" if w.registry[r1("decay_pct")].value > 0 \
                else "chunks_rise"
            if w.provenance(r1("sequence")) == CALIBRATED:   # the generator's input curve
                code = "chunks_calibrated"
            paras.append(sentence(t["prefill." + code], engine=w.name(e.id),
                                  label=longest.label, sequence=w.fig(r1("sequence")),
                                  pct=w.fig(r1("decay_pct"))))
            if w.has(r1("recovery")) and w.provenance(r1("recovery")) != MEASURED:
                paras.append(w.generated_note(t["generated.recovery"], r1("recovery")))
            elif w.has(r1("recovery")):
                mixed = w.registry[r1("recovery")].context.get("batch") == MIXED
                if mixed and w.has(r1("recovery_clean")):
                    paras.append(sentence(t["prefill.next_mixed"],
                                          recovery=w.fig(r1("recovery")),
                                          clean=w.fig(r1("recovery_clean"))))
                else:
                    paras.append(sentence(t["prefill.next_pure"],
                                          recovery=w.fig(r1("recovery"))))
            if w.has(base("excluded_batches")) and \
                    w.registry[base("excluded_batches")].value:
                paras.append(sentence(t["prefill.excluded"], engine=w.name(e.id),
                                      label=longest.label,
                                      n=w.fig(base("excluded_batches"))))
        elif w.has(base("chunks")):
            paras.append(sentence(t["prefill.coarse"], engine=w.name(e.id)))
    nolog = []
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            phase = ids.prefill(wl.id, e.id, "phase")
            if w.has(phase) and w.registry[phase].value in (NO_LOG, NONE):
                no_log = w.registry[phase].value == NO_LOG
                (nolog if no_log else paras).append(sentence(
                    t["decode.nosteady"], engine=w.name(e.id), label=wl.label,
                    why=t["decode.why_nolog" if no_log else "prefill.why_none"]))
    table = Table(header=[t["table.workload"], t["table.engine"], t["table.intervals"],
                          t["table.min"], t["table.max"], t["table.mean"]], rows=rows,
                  numeric=(2, 3, 4, 5))
    if not rows and len(paras) == 1:
        return None                 # nothing measured (no log at all): no section
    if not rows:                    # the intro speaks of the table below
        paras = paras[1:]
    return Section("prefill", t["heading.prefill"], paras + nolog, [table] if rows else [])


def _per_position(w: Writer) -> list[Markup]:
    """Per engine that logs acceptance by draft position: one sentence with every
    workload's shares, in workload order."""
    out = []
    for e in w.run.meta.engines:
        at = [sentence(w.t["spec.at_label"], label=wl.label,
                       values=w.fig(ids.spec(wl.id, e.id, "per_position")))
              for wl in w.run.meta.workloads if w.has(ids.spec(wl.id, e.id, "per_position"))]
        if at:
            out.append(sentence(w.t["spec.per_position"], engine=w.name(e.id),
                                values=Markup("; ").join(at)))
    return out


def spec_section(w: Writer) -> Section | None:
    t = w.t
    rows, paras = [], [sentence(t["spec.intro"])]
    if any(wl.dataset == "random" for wl in w.run.meta.workloads):
        paras.append(sentence(t["spec.random"]))
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            base = partial(ids.spec, wl.id, e.id)
            if w.has(base("accept_len")):
                rows.append([Markup(escape(wl.label)), Markup(escape(e.name)),
                             figure_cell(w, base("accept_len")),
                             figure_cell(w, base("acceptance_pct"))])
    if not rows:
        return None
    paras += _per_position(w)
    lengths = [ids.spec(wl.id, e.id, "accept_len") for wl in w.run.meta.workloads
               for e in w.run.meta.engines if w.has(ids.spec(wl.id, e.id, "accept_len"))]
    if w.provenance(*lengths) == ASSUMED:       # a reconstruction's input, not a reading
        paras.append(sentence(t[w.once("spec.assumed")], inputs=w.inputs_text(
            provenance_origins(w.registry, lengths, ASSUMED))))
    return Section("spec", t["heading.spec"], paras,
                   [Table(header=[t["table.workload"], t["table.engine"], t["table.accept_len"],
                                  t["table.acceptance"]], rows=rows, numeric=(2, 3))])


POINT_LOG = ("log_gen_tps", "log_accept_len", "log_prefix_hit_pct")


def _point_log_context(w: Writer, pid: str) -> dict:
    """The context of a point's first log figure (workload, load, engine, concurrency)."""
    return next(w.registry[ids.point(pid, n)].context for n in POINT_LOG
                if w.has(ids.point(pid, n)))


def _point_log_row(w: Writer, pid: str) -> list[Markup]:
    ctx = _point_log_context(w, pid)
    hit = ids.point(pid, "log_prefix_hit_pct")
    basis = w.registry[hit].context.get("basis") if w.has(hit) else None
    return [Markup(escape(w.run.meta.workload(ctx["workload"]).label)),
            Markup(escape(str(ctx.get("load") or ""))),
            Markup(escape(w.run.meta.engine(ctx["engine"]).name)),
            figure_cell(w, ids.point(pid, "output_throughput")),
            *(figure_cell(w, ids.point(pid, n)) for n in POINT_LOG),
            Markup(escape(w.t[f"cache.basis_{basis}"])) if basis else Markup("")]


def _gen_bases(w: Writer) -> list[Markup]:
    """Where the engines' server generation throughputs are means over different lines
    (decode lines only, or every stats interval that generated tokens): say they do not
    compare, naming which engine is on which basis."""
    bases: dict[str, set[str]] = {}
    for fid, fig in w.registry.items():
        if ids.leaf(fid) == "log_gen_tps" and fig.context.get("basis"):
            bases.setdefault(fig.context["basis"], set()).add(fig.context["engine"])
    if set(bases) != {"decode_lines", "stats_lines"}:
        return []
    return [sentence(w.t["pointlog.bases_differ"],
                     decode=w.and_list([w.engine_name(e) for e in sorted(bases["decode_lines"])]),
                     stats=w.and_list([w.engine_name(e) for e in sorted(bases["stats_lines"])]))]


def point_log_section(w: Writer) -> Section | None:
    """Per point placed in its engine's log: the client's output throughput beside the
    server's generation throughput, accepted length and prefix-cache hits."""
    t = w.t
    pids = sorted({f.context["point"] for f in w.registry.values()
                   if ids.family(f.id) == "point" and ids.leaf(f.id) in POINT_LOG},
                  key=lambda p: _point_order(w, p))
    if not pids:
        return None
    table = Table(header=[t["table.workload"], t["table.load"], t["table.engine"],
                          t["table.out_tok_per_s"], t["table.log_gen_tps"],
                          t["table.accept_len"], t["table.prefix_hit"], t["table.hit_basis"]],
                  rows=[_point_log_row(w, p) for p in pids], numeric=(3, 4, 5, 6))
    paras = [sentence(t["pointlog.intro"])]
    for e in w.run.meta.engines:
        if w.has(ids.spec_run(e.id, "log_accept_len")):
            paras.append(sentence(t["pointlog.run_accept"], engine=w.name(e.id),
                                  value=w.fig(ids.spec_run(e.id, "log_accept_len"))))
        if w.has(ids.spec_run(e.id, "per_position")):
            paras.append(sentence(t["pointlog.run_per_position"], engine=w.name(e.id),
                                  values=w.fig(ids.spec_run(e.id, "per_position"))))
    paras += _gen_bases(w)
    paras += table_note(w, [f for f in w.registry if ids.family(f) == "point"
                            and ids.leaf(f) == "log_gen_tps"])
    runs = [ids.spec_run(e.id, "log_accept_len") for e in w.run.meta.engines
            if w.has(ids.spec_run(e.id, "log_accept_len"))]
    if runs and w.provenance(*runs) == ASSUMED:      # a reconstruction's acceptance input
        paras.append(sentence(t[w.once("spec.assumed")], inputs=w.inputs_text(
            provenance_origins(w.registry, runs, ASSUMED))))
    return Section("pointlog", t["heading.pointlog"], paras, [table])


def _point_order(w: Writer, pid: str) -> tuple:
    ctx = _point_log_context(w, pid)
    wids = [x.id for x in w.run.meta.workloads]
    eids = [e.id for e in w.run.meta.engines]
    return (wids.index(ctx["workload"]) if ctx["workload"] in wids else len(wids),
            ctx.get("concurrency") or 0, ctx.get("rate") or 0, str(ctx.get("load") or ""),
            eids.index(ctx["engine"]) if ctx["engine"] in eids else len(eids))


def caveats_section(w: Writer, caveats: dict, claims: list | None = None) -> Section:
    """What was not controlled: the settings and events that differ between the engines,
    what the run cannot tell (limits; in a reconstruction, with what the published texts
    say of each, from ``claims``), launch files that are not what ran; or, with none, that
    nothing was found, or nothing could be looked at."""
    t = w.t
    rows = _differing_rows(w, caveats.get("differing", []))
    limits = merged_limits(w, [(c, r) for c in caveats.get("limits", [])
                               for r in [limit_row(w, c, claims or [])] if r])
    # nothing found is only news when something was looked at
    looked = bool(caveats.get("compared")) or any(ids.parse_events(fid) is not None
                                                  for fid in w.registry)
    unused = _logs_outside(w)
    launch_paras, launch_table = launch_section(w, caveats.get("differing", []))
    one = "_one" if w.one_engine() else ""
    if not rows and not limits and not launch_table:
        para = sentence(t["caveats.logs_unused"], files=", ".join(unused)) if unused else \
            sentence(t[("caveats.none" if looked else "caveats.unchecked") + one])
        return Section("caveats", t["heading.caveats"], [para])
    # a reconstruction's files are its generator's: what they hold is not found
    found = "_reconstructed" if w.run.meta.reconstruction else ""
    intro = sentence(t["caveats.intro" + one + found]) if looked else \
        sentence(t["caveats.logs_unused"], files=", ".join(unused)) if unused else \
        sentence(t["caveats.unchecked" + one])
    tables = _caveat_tables(w, rows, limits) + ([launch_table] if launch_table else [])
    note = sentence(t["caveats.print_note" + found]) \
        if any(x.screen_columns for x in tables) else ""
    return Section("caveats", t["heading.caveats"], [intro] + launch_paras, tables,
                   print_note=note)


def _differing_rows(w: Writer, differing: list[dict]) -> list[list[Markup]]:
    """A row per setting or event that differs: its name (and workload), each engine's
    value (an assumed one marked), why it matters, the evidence (the launch file against
    the log is launch_section's)."""
    engines = [e.id for e in w.run.meta.engines]
    rows = []
    for c in differing:
        if c.get("kind") == "launch":
            continue
        label = w.t["setting." + c["id"]]
        if c.get("workload"):
            label = f"{label} ({w.run.meta.workload(c['workload']).label})"
        rows.append([Markup(escape(label))]
                    + [marked_assumed(w, c["id"], e, caveat_value(w, c, e))
                       if c.get("kind") == "setting" and e in c["values"]
                       else escape(caveat_value(w, c, e)) for e in engines]
                    + [Markup(escape(w.t[_own_key(w, f"why.{c['id']}")])),
                       w.evidence(c["evidence"][:2])])
    return rows


def _caveat_tables(w: Writer, rows: list, limits: list) -> list[Table]:
    t, engines = w.t, [e.id for e in w.run.meta.engines]
    tables = []
    if rows:
        tables.append(Table(header=[t["table.what"]] + [w.engine_name(e) for e in engines]
                            + [t["table.why"], t["table.evidence"]], rows=rows,
                            cls="differing" if len(engines) == 2 else "",
                            screen_columns=(len(engines) + 2,)))
    if limits and w.run.meta.reconstruction:
        # a reconstruction's values are its generator's, not found in an engine's files:
        # print says only what the published texts say of each limit, the HTML has the rest
        tables.append(Table(header=[t["table.limit"], t["table.published_says"],
                                    t["table.found_reconstructed"], t["table.why"],
                                    t["table.evidence"]],
                            rows=[[r[0], r[4], *r[1:4]] for r in limits],
                            screen_columns=(2, 3, 4)))
    elif limits:
        tables.append(Table(header=[t["table.limit"], t["table.found"], t["table.why"],
                                    t["table.evidence"]], rows=limits, screen_columns=(3,)))
    return tables


def launch_section(w: Writer, differing: list[dict]) -> tuple[list[Markup], Table | None]:
    """Launch files that are not what ran as written: which setting, the log's value and the
    launch file's, each with file:line; and, per file, whether its "$@" could explain it."""
    t = w.t
    found = [c for c in differing if c.get("kind") == "launch"]
    if not found:
        return [], None
    paras = [sentence(t["caveats.launch_intro"])]
    for file in dict.fromkeys(c["file"] for c in found):
        passes = next(c["counts"].get("passes_args", 0) for c in found if c["file"] == file)
        name = PurePosixPath(file).name
        paras.append(sentence(t["caveats.launch_passes"], file=name, line=passes) if passes
                     else sentence(t["caveats.launch_changed"], file=name))
    rows = [[Markup(escape(w.engine_name(c["engine"]))),
             Markup(escape("--" + c["setting"].replace("_", "-"))),
             Markup(escape(w.setting_words(c["values"]["log"]))),
             Markup(escape(w.setting_words(c["values"]["launch"]))),
             w.evidence(c["evidence"][:2])] for c in found]
    return paras, Table(header=[t["table.engine"], t["table.launch_setting"], t["table.in_log"],
                                t["table.in_launch"], t["table.evidence"]], rows=rows,
                        screen_columns=(4,))


def _logs_outside(w: Writer) -> list[str]:
    """The server logs and /metrics dumps the run was given (raw/<engine>/<file>), when
    none of them holds a record inside any benchmark's window: the event counts then cite
    no stretch of a log, or no benchmark has a window at all. Empty when a log covers a
    benchmark, when that could not be looked at, or when none was given."""
    from ..core.tables import read_rows

    events = [w.registry[f] for f in w.registry if ids.parse_events(f) is not None]
    if any(f.sources for f in events):
        return []
    folder = w.run.paths.tables
    if not events and (not (folder / "windows.parquet").is_file()
                       or read_rows(folder / "windows.parquet")):
        return []
    rows = read_rows(folder / "inputs.parquet") if (folder / "inputs.parquet").is_file() \
        else []
    return ["/".join(r["path"].split("/")[-2:]) for r in rows if r["role"] == "log"]


def caveat_value(w: Writer, c: dict, engine: str) -> str | Markup:
    """One engine's cell of a caveat row: a setting's value, or an event's counts and
    time span, in the reader's words."""
    if engine not in c["values"]:
        return "–"
    if c.get("kind") == "event" and c.get("counts") and len(c.get("span") or ()) == 2:
        first, last = c["span"]
        text = w.t[_own_key(w, f"event.{c['id']}")].format(**c["counts"])
        # a reconstruction's counts are the published ones, but where in time its generator
        # put the events is its own assumption: no time span beside the published counts
        if not w.run.meta.reconstruction:
            text = w.t["event.span"].format(what=text, first=first[11:], last=last[11:])
        group = ids.events(c["workload"], engine, "")       # "events.<w>.<e>." names them
        return escape(text) + w.cell_mark(*(f for f in w.registry if ids.named_by(f, group)))
    return w.setting_words(c["values"][engine])


def _own_key(w: Writer, key: str) -> str:
    """A reconstruction's own wording of a catalogue entry (``<key>_reconstructed``), where
    the entry reads its generator's log lines as evidence; else the entry."""
    own = key + "_reconstructed"
    return own if w.run.meta.reconstruction and own in w.t else key


def merged_limits(w: Writer, found: list[tuple[dict, list[Markup]]]) -> list[list[Markup]]:
    """The limit rows, where one limit found for several engines says the same why: one
    row (the catalogue's ``limit.<id>.what_merged``) with each engine's value on a line of
    its own, the why and the evidence once; other rows as they are."""
    groups: list[list[tuple[dict, list[Markup]]]] = []
    for c, row in found:
        last = groups[-1][-1] if groups else None
        if last and c.get("engine") and last[0].get("engine") \
                and (last[0]["id"], last[0].get("workload"), str(last[1][2])) \
                == (c["id"], c.get("workload"), str(row[2])) \
                and f"limit.{c['id']}.what_merged" in w.t:
            groups[-1].append((c, row))
        else:
            groups.append([(c, row)])
    return [g[0][1] if len(g) == 1 else _merged_row(w, g) for g in groups]


def _merged_row(w: Writer, group: list[tuple[dict, list[Markup]]]) -> list[Markup]:
    first = group[0][0]
    label = {"label": w.run.meta.workload(first["workload"]).label} \
        if first.get("workload") else {}
    values = Markup("<br>").join(sentence(w.t["limit.engine_value"], engine=w.name(c["engine"]),
                                          value=row[1]) for c, row in group)
    evidence = list(dict.fromkeys(e for c, _ in group for e in c.get("evidence", [])[:2]))
    row = [sentence(w.t[f"limit.{first['id']}.what_merged"], **label), values,
           group[0][1][2], w.evidence(evidence)]
    if len(group[0][1]) > 4:     # a reconstruction's: what the published texts say, once each
        row.append(Markup("<br>").join(dict.fromkeys(r[4] for _, r in group)))
    return row


def limit_row(w: Writer, c: dict, claims: list | None = None) -> list[Markup] | None:
    """One row about what the run cannot tell: its figures, linked, in the catalogue's words
    (None when a figure it names is not held); in a reconstruction, then what the published
    texts say of it (``claims``: claims.json's verdicts, which carry their text)."""
    t, p = w.t, c["params"]
    if any(isinstance(v, str) and "." in v and not w.has(v) for v in p.values()):
        return None
    # params hold figure ids and plain values (engine ids, "yes"): only ids are looked up
    held = {k: v for k, v in p.items() if isinstance(v, str) and ids.well_formed(v)
            and w.has(v)}
    values = _limit_values(w, c, held)
    value_key = f"limit.{c['id']}.value" + ("_spaced" if c["id"] == "arrival" and "gap" in p
                                             else "")
    value = sentence(t[value_key], **values)
    # e.g. a KV capacity filled in, a fitted knob; inside a closing full stop
    mark = w.cell_mark(*held.values())
    value = Markup(value[:-1]) + mark + "." if mark and value[-1:] == "." else value + mark
    return [sentence(t[f"limit.{c['id']}.what"], **values), value,
            sentence(t[_limit_why(w, c, list(held.values()))], **values),
            w.evidence(c.get("evidence", [])[:2])] \
        + ([published_on(w, c, claims or [])] if w.run.meta.reconstruction else [])


# the published statements a limit is about, by the figures a claim's check reads (all of
# them: a claim that also reads a setting or another engine's events is about more): a
# runtime event's counts at the limit's workload and engine; speculative decoding's
# accepted length
_SPEAKS_TO = {
    "event_stall": lambda c, fid: bool(c.get("workload") and c.get("engine")) and ids.named_by(
        fid, ids.events(c["workload"], c["engine"], "")),
    "spec_overhead": lambda c, fid: ids.family(fid) == "spec" and ids.leaf(fid) == "accept_len",
}


def published_on(w: Writer, c: dict, claims: list[dict]) -> Markup:
    """What the published texts say of a limit: each claim about it that no other write-up
    contradicts, in claims.yaml's words and with its article's name; where none is, that
    the original value is not known."""
    about = _SPEAKS_TO.get(c["id"])
    said = [k for k in claims if about and k.get("figures") and not k.get("against")
            and all(about(c, f) for f in k["figures"])]
    budget = _published_budget_said(w, c)
    if budget is not None:          # the published figures' own budget (analyses.pubbudget)
        return budget
    if not said:
        return Markup(escape(w.t["limit.not_published"]))
    return Markup("<br>").join(sentence(w.t["limit.published"], text=k["text"][w.lang],
                                        article="·".join(x[w.lang] for x in k.get(
                                            "source_titles") or [])) for k in said)


def _published_budget_said(w: Writer, c: dict) -> Markup | None:
    """For the time the steady rates leave unexplained: what the published rates leave
    of the published duration, where the claims give both."""
    if c["id"] != "time_budget":
        return None
    fid = partial(ids.budget, c["workload"], c["engine"])
    if not w.has(fid("published_unexplained_min_s"), fid("published_unexplained_max_s")):
        return None
    return sentence(w.t["limit.published_budget"],
                    **published_budget_values(w, c["workload"], c["engine"]))


# the placeholders of the published-rate budget's sentences, by figure name
_PUBLISHED_BUDGET = {"prefill_min": "published_prefill_min",
                     "prefill_max": "published_prefill_max", "decode": "published_decode",
                     "low": "published_expected_min_s", "high": "published_expected_max_s",
                     "duration": "published_duration",
                     "short_min": "published_unexplained_min_s",
                     "short_max": "published_unexplained_max_s"}


def published_budget_values(w: Writer, wid: str, engine: str) -> dict[str, Any]:
    """The published-rate budget of one engine at one workload (analyses.pubbudget) as
    sentence placeholders, with the workload's requests and tokens per request that it
    rests on (the sentences say in words that those were assumed)."""
    held = {k: w.fig(ids.budget(wid, engine, v)) for k, v in _PUBLISHED_BUDGET.items()
            if w.has(ids.budget(wid, engine, v))}
    return held | {"requests": w.fig(ids.workload(wid, "num_prompts")),
                   "input": w.fig(ids.workload(wid, "input_tokens")),
                   "output": w.fig(ids.workload(wid, "output_tokens"))}


def _limit_values(w: Writer, c: dict, held: dict[str, str]) -> dict[str, Any]:
    """A limit row's placeholders: its figures linked, engine names, the workload's label,
    the engine's name, and what ``_limit_extra`` adds."""
    return {**{k: w.fig(v) for k, v in held.items()},
            **{k: w.name(v) for k, v in c["params"].items() if k.endswith("engine")},
            **({"label": w.run.meta.workload(c["workload"]).label}
               if c.get("workload") else {}),
            **({"engine": w.name(c["engine"])} if c.get("engine") else {}),
            **_limit_extra(w, c)}


def _limit_extra(w: Writer, c: dict) -> dict[str, Markup]:
    """A limit's values besides its figures: whether the longest input fits the KV
    capacities (the assumed ones said as such)."""
    if c["id"] != "kv_capacity":
        return {}
    fits = "limit.kv_fits_" + w.registry[c["params"]["fits"]].value
    if w.provenance(c["params"]["fits"]) == ASSUMED:   # capacities a reconstruction filled in
        fits += "_assumed"
    return {"fits": sentence(w.t[fits])}


def _limit_why(w: Writer, c: dict, figs: list[str]) -> str:
    """The catalogue key of why a limit matters: for speculative decoding applied
    differently, or for an arrival or event a generator set, its own."""
    if c["id"] == "spec_overhead" and c["params"].get("applied_differently") == YES:
        return "why.spec_overhead_differs"
    if c["id"] in ("arrival", "event_stall", "time_budget") \
            and w.provenance(*figs) != MEASURED:
        return f"why.{c['id']}_reconstructed"        # a generator's input
    return f"why.{c['id']}"


# what a verdict tells, by the weakest provenance of the figures it rests on
BASIS = {MEASURED: "claims.evidence", CALIBRATED: "claims.by_construction",
         ASSUMED: "claims.by_construction", MODEL: "claims.generated", FREE: "claims.generated"}


def claim_reason(w: Writer, c: dict, floors: set[str]) -> Markup:
    """Why a claim got its verdict; for one resting on what a reconstruction's model or
    seed produced, what set the recomputed value instead (the check states no finding).
    A declared noise floor's reason is given once, at its first row (``floors``: seen)."""
    t = w.t
    reason = _checked_reason(w, c, floors)
    if w.run.meta.reconstruction and c["verdict"] == CLAIM_CONTRADICTED \
            and c.get("basis") in (CALIBRATED, ASSUMED):
        # the logs and settings it contradicts were made after the published texts: the
        # evidence is the other text, cited where claims.yaml gives what it says, and said
        # once, at the first such row
        if c.get("against"):
            named = citations.names(w.run.meta, w.lang)
            reason = _checked_reason(w, c, floors, sentence(
                t["claims.against"], text=c["against"][w.lang],
                article=named.get(c["against"]["source"], c["against"]["source"])))
        if w.first("claims.contradicted_texts"):
            return Markup(" ").join([reason, sentence(t["claims.contradicted_texts"])])
        return reason
    if from_published(w, c):
        bounds = _mean_bounds(w, c)
        return Markup(" ").join([reason, bounds]) if bounds else reason
    if c.get("basis") not in (MODEL, FREE):
        designed = _designed_reason(w, c)
        return Markup(" ").join([reason, designed]) if designed else reason
    # the check's own reason (which basis, which noise) still holds of the published text;
    # what set the recomputed value follows it, in full once, then short
    figs = [f for f in c.get("figures") or [] if w.has(f)]
    generated = sentence(t[w.once("claims.generated_reason")],
                         kind=t["provenance." + c["basis"].replace("-", "_")],
                         inputs=w.inputs_text(provenance_origins(w.registry, figs,
                                                                  c["basis"])))
    if c["reason"] in INFORMATIVE_REASONS:
        return Markup(" ").join([reason, generated])
    if c["reason"] in ("linear", "linear_closer") and \
            (c.get("params") or {}).get("published_ratio"):
        # what the published figures say of the claim; the recomputed ratio is the seed's
        return Markup(" ").join([reason_text(w, "linear_published", c["params"]), generated])
    return generated


def _designed_reason(w: Writer, c: dict) -> Markup | None:
    """For an agreement set by design by some parts of its check (analyses.claimcheck.
    designed_part) while the generator's model or seed gave the rest: what set each."""
    designed = [f for f in c.get("designed") or [] if w.has(f)]
    rest = [f for f in c.get("figures") or [] if w.has(f) and f not in designed]
    if not designed or not rest or not w.generated(*rest):
        return None
    families = [w.t.get("claimfamily." + ids.family(f), "") for f in designed]
    what = ", ".join(dict.fromkeys(families)) if all(families) else \
        ", ".join(key_label(w, f) for f in designed)
    made, rest_made = w.set_by(*designed), w.set_by(*rest)
    return sentence(w.t["claims.designed_reason"], what=what, kind=made["kind"],
                    inputs=made["inputs"], rest_kind=rest_made["kind"],
                    rest_inputs=rest_made["inputs"])


def mean_bounds(w: Writer, alternatives: list[str]) -> tuple[str, str, str] | None:
    """Where a published decline matches the peak over the mean (one of ``alternatives``)
    and the like-for-like mean over mean is the generator's: the engine and the ids of the
    bounds of the latter that the published extremes give (the least and the most record
    over the mean), when those rest on published figures."""
    for alt in alternatives:
        engine = w.registry[alt].context.get("engine") if w.has(alt) else None
        if engine is None or alt != ids.degradation(engine, "peak_over_mean"):
            continue
        lo = ids.degradation(engine, "min_over_mean")
        like = ids.degradation(engine, "mean_over_mean")
        if w.has(lo, like) and w.generated(like) and not w.generated(lo, alt):
            return engine, lo, alt
    return None


def _mean_bounds(w: Writer, c: dict) -> Markup | None:
    found = mean_bounds(w, (c.get("params") or {}).get("alternatives", []))
    return sentence(w.t["claims.mean_bounds"], lo=w.fig(found[1]), hi=w.fig(found[2])) \
        if found else None


def _basis_mark(w: Writer, c: dict) -> Markup:
    """The recomputed value's provenance tag (the weakest of the figures it rests on, as the
    settings tables mark theirs): none for a measured value or where nothing was
    recomputed."""
    word = w.kind_word(c.get("basis") or None)
    if not word or c.get("recomputed") is None or not w.run.meta.reconstruction:
        return Markup("")
    return w.cell_tag(word)


def from_published(w: Writer, c: dict) -> bool:
    """A reconstruction's claim whose published value matches another basis made of the
    published figures alone (the ones it was calibrated to): the verdict is the published
    text's own arithmetic, whatever the generator set for the like-for-like value."""
    # the claim check names them (analyses.claimcheck.mixed_published_figure, and
    # differs_published_figure: a published value its own figures do not give)
    return any(w.has(f) and c.get("claim") in w.registry[f].context.get("claims", [])
               for f in (ids.CLAIMS_MIXED, ids.CLAIMS_DIFFERS_PUBLISHED))


# verdicts that, on a reconstruction's model or seed, say how the reconstruction came out
GENERATED_VERDICTS = (CLAIM_CONFIRMED, "differs")

# reasons that say something of the published value itself (the basis it matches, the
# noise it is within, the rounding of the published values it was computed from), which a
# reconstruction's model does not make moot
INFORMATIVE_REASONS = ("other_basis", "below_noise_interval", "below_noise_declared",
                       "below_noise_mixed", "within_propagated")


def _checked_reason(w: Writer, c: dict, floors: set[str], base: Markup | None = None
                    ) -> Markup:
    """The claim check's reason in words (or ``base`` instead), with its scope, the rest of
    the claim, and a declared noise floor's reason at its first row."""
    t, lang = w.t, w.lang
    reason = base or reason_text(w, c["reason"], c.get("params") or {})
    if c.get("scope"):
        reason = sentence(t["claims.scope"], scope=c["scope"][lang], reason=reason)
    if c.get("why") and c["reason"] != "not_derivable":
        reason = sentence(t["claims.rest"], reason=reason, why=c["why"][lang])
    elif c.get("why"):
        reason = sentence(t["claims.not_derivable"], why=c["why"][lang])
    why = (c.get("noise_why") or {}).get(lang)
    if why and why not in floors and c["reason"] in ("below_noise_declared",
                                                     "below_noise_mixed"):
        floors.add(why)
        reason = sentence(t["claims.noise_why"], reason=reason, why=why)
    return reason


def _once(w: Writer, reason: Markup, said: set[str], folded: bool) -> Markup:
    """A claim's reason, or "as above" where a row shown before it gave the same long
    reason (a folded row's reason is not on the printed page, so it is never the one
    referred to)."""
    text = str(reason)
    if folded or len(reason.striptags()) < LONG_REASON:
        return reason
    if text in said:
        return sentence(w.t["claims.same_reason"])
    said.add(text)
    return reason


# a reason this long is said once in the claims table; later rows say "as above"
LONG_REASON = 80


def claims_section(w: Writer, claims: list[dict]) -> Section | None:
    """Each claim with where it was published, the published and recomputed values in
    words, the verdict (with whether it is evidence or agrees by construction) and why."""
    if not claims:
        return None
    t, lang = w.t, w.lang
    rows, floors, collapsed, said = [], set(), [], set()
    named = citations.names(w.run.meta, lang)     # run.yaml write-ups by claims.yaml key
    for i, c in enumerate(claims):
        # set by construction, whichever way the verdict went: folded in print; a claim the
        # data contradict (the published texts disagree with each other) stays in view
        # (a different method stays too: which basis a published value used is the
        # published text's own arithmetic, whatever the reconstruction was fitted to)
        if c.get("basis") in (CALIBRATED, ASSUMED) and \
                c["verdict"] not in (CLAIM_CONTRADICTED, CLAIM_METHOD) \
                and not from_published(w, c):
            collapsed.append(i)
        reason = _once(w, claim_reason(w, c, floors), said, i in collapsed)
        fid = ids.claim(c["claim"])
        basis = t["claims.from_published"] if from_published(w, c) \
            else t[BASIS[c["basis"]]] if c.get("basis") else None
        verdict = w.link(fid, t[verdict_key(c)])
        if basis:
            verdict = Markup('{}<br><span class="aside">{}</span>').format(verdict, basis)
        titles = [named.get(key) or (x or {}).get(lang) or key for key, x in
                  zip(c["source"], c.get("source_titles") or [None] * len(c["source"]),
                      strict=True)]
        claim = Markup('{}<br><span class="aside">{}</span>').format(
            c["text"][lang], t["claims.articles_sep"].join(titles))
        units = key_units(w, c.get("figures") or [])
        rows.append([claim, value_text(w, c["published"], unit=c.get("unit"), units=units),
                     value_text(w, c["recomputed"], like=c["published"], unit=c.get("unit"),
                                units=units) + _basis_mark(w, c),
                     verdict, reason])
    cited = [named[k] for k in dict.fromkeys(k for c in claims for k in c["source"])
             if k in named]
    paras = [sentence(t["claims.intro_named"], articles=t["claims.articles_and"].join(cited))
             if cited else sentence(t["claims.intro"])]
    if any(c.get("reason") == "within_propagated" for c in claims):
        paras[0] = Markup(" ").join([paras[0], sentence(t["claims.intro_propagated"])])
    if w.run.meta.reconstruction and w.has(ids.CLAIMS_INFORMATIVE):
        none = w.registry[ids.CLAIMS_INFORMATIVE].value == 0
        paras.append(sentence(t["claims.intro_reconstruction_none" if none
                                else "claims.intro_reconstruction"],
                              n=w.fig(ids.CLAIMS_INFORMATIVE),
                              total=format_value(len(claims), "count", lang),
                              **{k: f'"{t[v]}"' for k, v in (
                                  ("constructed", "claims.by_construction"),
                                  ("generated", "claims.generated"),
                                  ("evidence", "claims.evidence"))}))
    quiet = ids.CLAIMS_INDISTINGUISHABLE
    if w.has(quiet) and w.registry[quiet].value:
        paras.append(sentence(t["claims.noise_legend"], n=w.fig(quiet)))
    printed = [c for i, c in enumerate(claims) if i not in collapsed]
    paras += _verdict_legend(w, claims, printed)
    paras += _share_legend(w, claims, printed)
    # set by construction, these rows say nothing of the engines: one line in print and blog
    note = _collapsed_note(w, [claims[i] for i in collapsed])
    return Section("claims", t["heading.claims"], paras,
                   [Table(header=[t["table.claim"], t["table.published"],
                                  t["table.recomputed"], t["table.verdict"],
                                  t["table.reason"]], rows=rows, cls="claims",
                          collapsed=tuple(collapsed), collapsed_note=note)])


def _collapsed_note(w: Writer, folded: list[dict]) -> Markup | str:
    """The line said in print for the folded claims: how many, why, and how many of them
    the reconstruction did not reproduce (a "differs" made by its assumptions)."""
    if not folded:
        return ""
    n = format_value(len(folded), "count", w.lang)
    differs = [c for c in folded if c["verdict"] == CLAIM_DIFFERS]
    if not differs:
        return sentence(w.t["claims.collapsed"], n=n)
    return sentence(w.t["claims.collapsed_differs"], n=n,
                    d=format_value(len(differs), "count", w.lang),
                    which=w.gist([c["text"][w.lang] for c in differs]))


def verdict_key(c: dict) -> str:
    """A claim's verdict label: where the recomputed value comes from a reconstruction's
    model or seed, an agreement or a difference is the reconstruction's, not the claim's
    (``verdict_generated.*``)."""
    slug = c["verdict"].replace(" ", "_")
    if c.get("basis") in (MODEL, FREE) and c["verdict"] in GENERATED_VERDICTS:
        return f"verdict_generated.{slug}"
    if c["verdict"] == CLAIM_FITTED:     # agrees in the reconstruction, which was made so
        return "verdict_generated.confirmed"
    return f"verdict.{c['verdict']}"


def _verdict_legend(w: Writer, claims: list[dict], printed: list[dict]) -> list[Markup]:
    """What each verdict label in the table means, for the labels it uses (one with a
    legend of its own, "indistinguishable", apart), then the mark "checked on the published
    figures alone" where a row has it: a list of definitions, each its label and what it
    says. Print keeps the definitions of what its rows (``printed``) show."""
    legends = {k: "claims.legend_" + k.replace(".", "_").replace(" ", "_")
               for k in dict.fromkeys(verdict_key(c) for c in claims)}
    used = {verdict_key(c) for c in printed}
    keys = [k for k, legend in legends.items() if legend in w.t]
    items = [sentence(w.t[legends[k]], label=f'"{w.t[k]}"') for k in keys]
    screen = [i for i, k in enumerate(keys) if k not in used]
    if any(from_published(w, c) for c in claims):
        if not any(from_published(w, c) for c in printed):
            screen.append(len(items))
        items.append(sentence(w.t["claims.legend_tag_from_published"],
                              label=f'"{w.t["claims.from_published"]}"'))
    return [Items(sentence(w.t["claims.legend"]), items, screen=tuple(screen))] \
        if items else []


# a gap's decode share above this (in %) means the slower engine was ahead before the
# first tokens
WHOLE_GAP = 100


def _share_legend(w: Writer, claims: list[dict], printed: list[dict]) -> list[Markup]:
    """Where a claim row shows a gap's decode share above 100%: what that means (the
    slower engine was ahead before the first tokens); the HTML edition's only where no
    printed row shows one."""
    def over(rows: list[dict]) -> bool:
        return any(w.has(f) and ids.leaf(f) == "decode_share"
                   and w.registry[f].value > WHOLE_GAP
                   for c in rows for f in c.get("figures") or [])

    if not over(claims):
        return []
    said = sentence(w.t["claims.share_over"], hundred=format_value(WHOLE_GAP, "%", w.lang, 0))
    return [Items(said, [], screen_only=not over(printed))]


def doubtful(w: Writer, wid: str) -> list[str]:
    """Engines whose duration at workload ``wid`` a consistency check contradicts."""
    return [e.id for e in w.run.meta.engines
            if any(w.has(ids.consistency(wid, e.id, name)) and
                   w.registry[ids.consistency(wid, e.id, name)].value == INCONSISTENT
                   for name in DURATION_CHECKS)]


def conclusion_section(w: Writer) -> Section:
    """What the run lets a reader conclude: a workload's result again only where another
    record contradicts its duration, the guidance the trusted workloads give, the limits
    (a single run, nothing compared), and where settings differed the caveat and a hedged
    takeaway."""
    paras = _doubted_results(w)
    trusted = [wl for wl in w.run.meta.workloads if not doubtful(w, wl.id)]
    winners = {w.registry[ids.e2e(wl.id, None, "faster")].value for wl in trusted
               if w.has(ids.e2e(wl.id, None, "faster"))}
    wl = trusted or w.run.meta.workloads
    short_w = w.registry.get(ids.e2e(wl[0].id, None, "faster")) if wl else None
    long_w = w.registry.get(ids.e2e(wl[-1].id, None, "faster")) if wl else None
    paras += _guidance(w, wl, short_w, long_w, winners,
                       all_trusted=len(trusted) == len(w.run.meta.workloads))
    differing = _settings_differ(w)
    takeaway = _takeaway(w, short_w, long_w, winners) if differing else []
    paras += _limits_said(w, asks_repeats=bool(takeaway))
    if differing:
        paras.append(Markup(" ").join([sentence(w.t["conclusion.caveat"]), *takeaway]))
    return Section("conclusion", w.t["heading.conclusion"], paras)


def _doubted_results(w: Writer) -> list[Markup]:
    """The lede gave each result and how its requests arrived: the conclusion repeats one
    only where another record contradicts its duration, with how its requests arrived."""
    paras = []
    for wl in w.run.meta.workloads:
        key = ids.e2e(wl.id, None, "faster")
        if not w.has(key) or not doubtful(w, wl.id):
            continue
        if w.registry[key].value == TIE:
            para = sentence(w.t["conclusion.tie"], label=wl.label)
        else:
            para = sentence(w.t["conclusion.per_workload"], label=wl.label, engine=w.fig(key),
                            ratio=w.fig(ids.e2e(wl.id, None, "speedup")))
        waited, never = arrival_split(w, wl.id)
        if waited:                        # the engines received its requests differently
            gap = [ids.arrival(wl.id, e, "burst_gap_s") for e in never]
            fitted = w.has(*gap) and w.provenance(*gap) != MEASURED   # a fitted spacing
            para = Markup(" ").join([para, sentence(
                w.t["conclusion.arrival_reconstructed" if fitted else "conclusion.arrival"])])
        paras.append(Markup(" ").join([para, sentence(
            w.t["conclusion.doubtful"], engine=w.name(doubtful(w, wl.id)[0]))]))
    return paras


def _guidance(w: Writer, wl: list, short_w, long_w, winners: set, *,
              all_trusted: bool) -> list[Markup]:
    """Which engine finished first where: reversed between the shortest and the longest
    trusted input (with the per-request crossing, unless a generator placed it), or one
    engine everywhere."""
    pair = ids.first_crossover(w.registry)
    if pair and isinstance(w.registry[ids.crossover(*pair)].value, float | int) and short_w \
            and long_w and short_w.value != long_w.value and TIE not in winners:
        # a crossover the reconstruction's model or seed placed is no guidance: left out
        cross = not w.generated(ids.crossover(*pair))
        return [sentence(w.t["conclusion.guidance_cross" if cross else _reversed_key(w, wl)],
                         rounded=w.fig(ids.crossover(*pair, "rounded")) if cross else "",
                         concurrency=w.fig(ids.workload(wl[-1].id, "concurrency")),
                         short_engine=_with_first_setting(w, str(short_w.value)),
                         long_engine=_with_first_setting(w, str(long_w.value)),
                         short=wl[0].label, long=wl[-1].label)]
    if len(winners) == 1 and TIE not in winners and all_trusted:
        return [sentence(w.t["conclusion.guidance_one"], engine=w.name(winners.pop()))]
    return []


def _with_first_setting(w: Writer, engine: str) -> Markup:
    """An engine's name with its value of the first setting the engines ran differently
    (vLLM (DCP 1)), where that setting has a tag (``setting_tag.<sid>``); else the name."""
    which = w.registry[ids.SETTINGS_DIFFERING].context.get("which") or [] \
        if _settings_differ(w) else []
    sid = next((s for s in which if "setting_tag." + s in w.t), None)
    if sid is None or not w.has(ids.setting(sid, engine)):
        return w.name(engine)
    return sentence(w.t["conclusion.engine_setting"], engine=w.name(engine),
                    setting=w.t["setting_tag." + sid],
                    value=w.setting_words(str(w.registry[ids.setting(sid, engine)].value)))


def _settings_differ(w: Writer) -> bool:
    """Whether the engines ran with settings that differ (none to tell for server logs
    alone)."""
    return not w.run.meta.server_only and any(
        ids.parse_setting(k) is not None for k in w.registry) and \
        w.has(ids.SETTINGS_DIFFERING) and bool(w.registry[ids.SETTINGS_DIFFERING].value)


def _limits_said(w: Writer, *, asks_repeats: bool) -> list[Markup]:
    """A single run said as such (unless the takeaway asks for repeats itself); engines
    measured on different workloads said to be compared nowhere."""
    # gaps need two engines measured on a workload they share
    compared = any(w.has(ids.e2e(x.id, None, "faster")) for x in w.run.meta.workloads) or \
        any(ids.family(fid) == "compare" for fid in w.registry)
    if compared and w.has(ids.REPEATS) and w.registry[ids.REPEATS].value == 1 \
            and not asks_repeats:
        return [sentence(w.t["conclusion.single_run"])]
    if not compared and len(w.measured_engines()) > 1:
        return [sentence(w.t["conclusion.not_compared"], engines=w.and_list(
            [w.engine_name(e) for e in w.measured_engines()]))]
    return []


def _reversed_key(w: Writer, workloads: list) -> str:
    """The reversal in the conclusion's words: attributed to the published text where the
    durations it rests on are the published figures a reconstruction was fitted to."""
    durations = [ids.e2e(x.id, e.id, "duration") for x in workloads
                 for e in w.run.meta.engines if w.has(ids.e2e(x.id, e.id, "duration"))]
    if durations and w.run.meta.reconstruction and w.provenance(*durations) == CALIBRATED:
        return "conclusion.guidance_reversed_published"
    return "conclusion.guidance_reversed"


def _takeaway(w: Writer, short_w, long_w, winners: set) -> list[Markup]:
    """Where the faster engine changed with the input length and settings differed: what a
    reader can take from it (that the length can change the choice, and to measure at their
    own lengths with the first differing setting set alike, over several runs if this was
    one), hedged to what a single uncontrolled comparison allows."""
    if not (short_w and long_w) or short_w.value == long_w.value or TIE in winners:
        return []
    which = w.registry[ids.SETTINGS_DIFFERING].context.get("which") or []
    named = [sid for sid in which if "setting." + sid in w.t]
    names = [w.t["setting." + sid] for sid in named]
    if not names:
        return []
    single = w.has(ids.REPEATS) and w.registry[ids.REPEATS].value == 1
    return [sentence(w.t["conclusion.takeaway" if single else "conclusion.takeaway_repeated"],
                     first=w.inside(names[0])),
            _combine(w, w.t.get("setting_short." + named[0]) or w.inside(names[0]),
                     w.t.get("setting_tag." + named[0]) or w.inside(names[0]))]


def _combine(w: Writer, first: str, tag: str) -> Markup:
    """If an engine cannot combine the setting to align with another feature the run
    enabled: compare without it first. Speculative decoding, where the run enabled it, is
    the feature named (the sentence is conditional: it does not say that it is the one)."""
    spec = [f for f in w.registry if ids.parse_setting(f) is not None
            and ids.parse_setting(f)[0] == "speculative" and w.registry[f].value]
    if not spec:
        return sentence(w.t["conclusion.combine"], first=first, tag=tag)
    return sentence(w.t["conclusion.combine_feature"], first=first, tag=tag,
                    feature=w.inside(w.t["setting.speculative"]))


POINT_STATS = (("median_ttft_ms", "ttft"), ("p99_ttft_ms", "ttft"), ("median_tpot_ms", "tpot"),
               ("median_itl_ms", "itl"), ("median_e2el_ms", "e2el"))


def _point_ids(w: Writer) -> dict[str, dict[str, str]]:
    """point id -> its context, for every point with figures in the registry."""
    out: dict[str, dict] = {}
    for fid, fig in w.registry.items():
        parsed = ids.parse_point(fid)
        if parsed and "load" in fig.context:
            out.setdefault(parsed[0], fig.context)
    return out


def definition_label(code: str) -> str:
    """The catalogue key of a latency definition code (``tpot.excl-first`` →
    ``definition.tpot_excl_first``)."""
    return "definition." + code.replace(".", "_").replace("-", "_")


# A column header names the definition its numbers follow when the client's own differs from
# the header's plain name: the catalogue key gets this suffix ("table.tpot_median" →
# "table.tpot_median_incl_first"). Columns mixing definitions keep the plain header; the
# definitions table below says which row follows which.
HEADER_SUFFIX = {"tpot.guidellm": "incl_first", "itl.per-token": "per_token",
                 "itl.excl-first": "excl_first", "itl.unknown": "unknown"}


def metric_header(w: Writer, key: str, metric: str, workload: str, engine: str | None = None,
                  variant: str | None = None, **fields: Any) -> str:
    """The header ``key`` of a column of ``metric``, named after the one definition its
    points follow (of ``workload``, and of ``engine`` / ``variant`` when given)."""
    codes = {fig.context.get("definition") for fid, fig in w.registry.items()
             if ids.family(fid) == "point" and fig.context.get("metric") == metric
             and fig.context.get("workload") == workload
             and engine in (None, fig.context.get("engine"))
             and variant in (None, fig.context.get("variant"))}
    suffix = HEADER_SUFFIX.get(next(iter(codes))) if len(codes) == 1 else None
    chosen = f"{key}_{suffix}" if suffix and f"{key}_{suffix}" in w.t else key
    return str(sentence(w.t[chosen], **fields)) if fields else w.t[chosen]


def points_section(w: Writer) -> Section | None:
    """The benchmark points of the workloads the single-point analyses do not cover
    (sweeps, repeats, other clients): one row per point, its client's definitions beside."""
    t = w.t
    points = _point_ids(w)
    shown = {wl.id for wl in w.run.meta.workloads
             if not any(w.has(ids.e2e(wl.id, e.id, "duration")) for e in w.run.meta.engines)}
    mine = dict(sorted(((pid, ctx) for pid, ctx in points.items()
                        if ctx["workload"] in shown), key=lambda kv: kv[1].get("order", 0)))
    if not mine:
        return None
    tables = []
    for wl in w.run.meta.workloads:
        rows = []
        for pid, ctx in mine.items():
            if ctx["workload"] != wl.id:
                continue
            fid = partial(ids.point, pid)
            load = Markup(escape(ctx["load"] + (f" ({ctx['variant']})" if ctx["variant"]
                                                 else "")))
            repeat = Markup(escape(str(ctx["repeat"])))
            check = fid("validity")
            if w.has(check) and w.registry[check].value != VALID:   # marked, not dropped
                repeat = repeat + Markup(" ") + w.link(
                    check, f"({t['validity.verdict.' + str(w.registry[check].value)]})")
            rows.append([Markup(escape(w.engine_name(ctx["engine"]))), load,
                         repeat, Markup(escape(client_name(w, ctx["client"], marked=False))),
                         figure_cell(w, fid("completed")), figure_cell(w, fid("failed")),
                         figure_cell(w, fid("request_throughput")),
                         figure_cell(w, fid("output_throughput"))]
                        + [figure_cell(w, fid(name)) for name, _ in POINT_STATS])
        if not rows:
            continue
        tables.append(Table(
            caption=str(sentence(t["points.workload"], label=wl.label)),
            header=[t["table.engine"], t["table.load"], t["table.repeat"], t["table.client"],
                    t["table.completed"], t["table.failed"], t["table.req_per_s"],
                    t["table.out_tok_per_s"], t["table.ttft_median"],
                    str(sentence(t["table.ttft_tail"], p="p99")),
                    metric_header(w, "table.tpot_median", "tpot", wl.id),
                    metric_header(w, "table.itl_median", "itl", wl.id), t["table.e2el_median"]],
            rows=rows, numeric=tuple(range(4, 13))))
    codes: dict[tuple[str, str], str] = {}
    for fid, fig in w.registry.items():
        ctx = fig.context
        if ids.family(fid) == "point" and ctx.get("workload") in shown and ctx.get("definition"):
            codes.setdefault((ctx["client"], ctx["metric"]), ctx["definition"])
    if codes:
        tables.append(Table(
            header=[t["table.client"], t["table.metric"], t["table.definition"]],
            rows=[[Markup(escape(client_name(w, client))),
                   Markup(escape(metric_name(w, metric, code))),
                   Markup(escape(definition_text(w, code)))]
                  for (client, metric), code in sorted(codes.items())]))
    failed = [pid for pid in mine if w.has(ids.point(pid, "completed"))
              and w.registry[ids.point(pid, "completed")].value == 0]
    intro = [sentence(t["points.intro"])]
    if failed:
        intro.append(sentence(t["points.all_failed"], points=", ".join(sorted(failed))))
    return Section(id="points", heading=t["section.points"], paragraphs=intro,
                   tables=tables)
