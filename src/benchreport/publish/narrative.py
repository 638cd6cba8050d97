"""The article's content per language: sentences chosen by the figures, numbers linked to them.

Templates only lay this out. No number and no comparative word is written here or in a
template: numbers come from the registry; words come from the catalogue, picked by verdicts.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from ..core import ids
from ..core.figures import Figure
from ..core.i18n import format_value, sentence
from ..core.metrics import TIE
from ..core.provenance import ASSUMED, CALIBRATED, MEASURED
from ..core.records import WINDOW_METHODS, BenchWindow, Run
from ..core.verdicts import INCONSISTENT, YES
from .campaign import campaign_conclusion, campaign_sections, key_findings, single_run_findings
from .citations import Citation, citations
from .citations import names as source_names
from .claimtext import figures_text
from .headline import conclusion as one_engine_conclusion
from .headline import headline as run_headline
from .narrative_base import Writer, anchor
from .sections import (
    Finding,
    Items,
    Section,
    Table,
    arrival_gap_id,
    arrival_sentence,
    calibrated_durations,
    caveats_section,
    claims_section,
    conclusion_section,
    decode_section,
    finding,
    generated_tails,
    latency_notes,
    latency_table,
    mean_bounds,
    point_log_section,
    points_section,
    prefill_section,
    published_budget_values,
    resting_on_values,
    settings_section,
    spec_section,
)
from .server import server_section
from .state import state_section
from .stepmodel import stepmodel_section
from .timeline import timeline_section


@dataclass(frozen=True)
class Cell:
    label: str
    value: Markup


@dataclass(frozen=True)
class WorkloadResult:
    id: str
    heading: str
    sentence: Markup
    rows: list[list[Markup]]         # engine name, duration
    latency: Table | None = None
    latency_notes: list[Markup] = field(default_factory=list)


@dataclass(frozen=True)
class Derivation:
    anchor: str
    id: str
    value: str
    method: str
    notebook: str
    sources: list[dict[str, Any]]
    depends_on: list[tuple[str, str]]   # (anchor, id)
    cell: int | None = None
    # a group (one benchmark point's figures, one load of a curve): the figures that share
    # the sources above, each one line with its own anchor
    members: list[Member] = field(default_factory=list)


@dataclass(frozen=True)
class Member:
    anchor: str
    id: str
    value: str
    method: str
    where: str                          # its key (and lines) in the group's source
    depends_on: list[tuple[str, str]]


@dataclass(frozen=True)
class Article:
    """Everything one language's page shows."""

    lang: str
    other_lang: str
    t: dict[str, str]                       # catalogue (headings, labels)
    title: str
    date: str
    reconstruction: str | None
    headline: list[Markup]
    environment: list[Cell]
    assumed: list[Cell]
    generator: list[Cell]           # a reconstruction's generator inputs (else empty)
    results: list[WorkloadResult]
    derivations: list[Derivation]
    inputs: list[Cell]
    packages: list[Cell] = field(default_factory=list)
    finding: Finding | None = None
    settings: Table | None = None
    sections: list[Section] = field(default_factory=list)
    charts: dict[str, list[Markup]] = field(default_factory=dict)
    notebooks: list[str] = field(default_factory=list)   # rendered notebook pages (links)
    ingest_notes: list[str] = field(default_factory=list)  # warnings, "file:line: text"
    notes: str | None = None                # run.yaml notes, in this language
    sources: list[str] = field(default_factory=list)   # where the files came from, one line each
    writeups: list[Citation] = field(default_factory=list)  # the texts re-derived here
    # the input files the report folder holds a copy of (derived/inputs/: run.yaml, …)
    copies: list[str] = field(default_factory=list)

    @property
    def screen_only(self) -> list[Section]:
        """The sections the HTML edition alone shows (print and blog link to them)."""
        return [s for s in self.sections if s.screen_only]

    @property
    def printed(self) -> list[Section]:
        """The sections every edition shows."""
        return [s for s in self.sections if not s.screen_only]

    @property
    def data_folder(self) -> str:
        """The folder every input file is under (``data/<RUN>/``), as the inputs name them."""
        folders = [posixpath.dirname(str(c.label)) for c in self.inputs]
        return posixpath.commonpath(folders) + "/" if folders else ""


def _workload_result(w: Writer, workload) -> WorkloadResult | None:
    """One input length's durations, the sentence that compares them, its latency table
    (what the comparison rests on is said once, in the lede: ``lede``)."""
    wid = workload.id
    def e2e(engine: str | None, name: str) -> str:
        return ids.e2e(wid, engine, name)

    engines = [e.id for e in w.run.meta.engines if w.has(e2e(e.id, "duration"))]
    if not engines:
        return None
    rows = [[Markup(escape(w.engine_name(e))), w.fig(e2e(e, "duration")).html]
            for e in engines]
    heading = sentence(w.t["results.heading"], label=workload.label)
    tokens = ids.workload(wid, "input_tokens")      # a count a reconstruction assumed says so
    ctx = {"input": Markup("{}{}").format(w.fig(tokens).html, w.mark(tokens)),
           "concurrency": w.fig(ids.workload(wid, "concurrency"))}
    if not w.has(e2e(None, "faster")):
        text = sentence(w.t["results.single"], engine=w.name(engines[0]),
                        duration=w.fig(e2e(engines[0], "duration")), **ctx)
    else:
        faster = w.registry[e2e(None, "faster")].value
        slower = str(w.registry[e2e(None, "slower")].value)
        if faster == TIE:
            best = [e for e in engines if e != slower][0]
            text = sentence(w.t["results.tie"], a=w.engine_name(best),
                            a_s=w.fig(e2e(best, "duration")),
                            b=w.engine_name(slower), b_s=w.fig(e2e(slower, "duration")),
                            **ctx)
        else:
            text = sentence(w.t["results.faster"], faster=w.fig(e2e(None, "faster")),
                            slower=w.fig(e2e(None, "slower")),
                            faster_s=w.fig(e2e(faster, "duration")),
                            slower_s=w.fig(e2e(slower, "duration")),
                            ratio=w.fig(e2e(None, "speedup")), **ctx)
        for e in engines:       # a duration its own server log contradicts
            check = ids.consistency(wid, e, "duration")
            if w.has(check) and w.registry[check].value == INCONSISTENT:
                text = Markup(" ").join([text, sentence(
                    w.t["results.inconsistent"], engine=w.name(e),
                    client=w.fig(ids.consistency(wid, e, "duration", "client")),
                    server=w.fig(ids.consistency(wid, e, "duration", "server")))])
    if w.run.meta.reconstruction:       # generator output: the latency appendix has it
        return WorkloadResult(id=wid, heading=str(heading), sentence=text, rows=rows)
    return WorkloadResult(id=wid, heading=str(heading), sentence=text, rows=rows,
                          latency=latency_table(w, wid), latency_notes=latency_notes(w, wid))


def latency_appendix(w: Writer) -> Section | None:
    """A reconstruction's latency tables, every one of them the generator's output: not in
    the results beside the published durations, but as the first appendix, one table per
    input length with its notes (the appendix's opening says once what set them)."""
    if not w.run.meta.reconstruction:
        return None
    tables, notes, tails = [], [], []
    for wl in w.run.meta.workloads:
        table = latency_table(w, wl.id)
        if table is not None:
            tables.append(dataclasses.replace(table, caption=w.t["heading.latency_of"].format(
                label=wl.label)))
            notes += latency_notes(w, wl.id, tails=tails)
    if not tables:
        return None
    return Section("latency", w.t["heading.latency"],
                   [sentence(w.t["results.latency_intro"]), *notes,
                    *generated_tails(w, tails)], tables)


def _brief(w: Writer, workload) -> Markup | None:
    """One input length's result in the lede: who was faster and by how much, with both
    durations, then what the comparison rests on (how requests arrived, assumed values);
    the results section gives the rest."""
    wid = workload.id
    if not w.has(ids.e2e(wid, None, "faster")):
        return None
    faster = w.registry[ids.e2e(wid, None, "faster")].value
    slower = str(w.registry[ids.e2e(wid, None, "slower")].value)
    if faster == TIE:
        best = [e.id for e in w.run.meta.engines
                if e.id != slower and w.has(ids.e2e(wid, e.id, "duration"))][0]
        text = sentence(w.t["lede.tie"], label=workload.label, a=w.engine_name(best),
                        a_s=w.fig(ids.e2e(wid, best, "duration")), b=w.engine_name(slower),
                        b_s=w.fig(ids.e2e(wid, slower, "duration")))
    else:
        text = sentence(w.t["lede.faster"], label=workload.label,
                        faster=w.fig(ids.e2e(wid, None, "faster")),
                        ratio=w.fig(ids.e2e(wid, None, "speedup")),
                        faster_s=w.fig(ids.e2e(wid, str(faster), "duration")),
                        slower_s=w.fig(ids.e2e(wid, slower, "duration")))
    return Markup(" ").join([text, *_rests_on(w, wid)])


def _thesis(w: Writer, workloads: list) -> Markup | None:
    """The lede's first sentence where the faster engine changed between the shortest and
    the longest input: the reversal (the settings the engines were not run alike in follow
    it, in the headline's last line)."""
    if len(workloads) < 2:
        return None
    short, long_ = workloads[0], workloads[-1]
    first, last = (w.registry[ids.e2e(x.id, None, "faster")].value
                   if w.has(ids.e2e(x.id, None, "faster")) else None for x in (short, long_))
    if first in (None, TIE) or last in (None, TIE) or first == last:
        return None
    # durations a reconstruction was fitted to are the published text's result, said as such
    key = "lede.reversal_published" if calibrated_durations(w, [short, long_]) \
        else "lede.reversal"
    return sentence(w.t[key], short=short.label, long=long_.label,
                    short_engine=w.fig(ids.e2e(short.id, None, "faster")),
                    long_engine=w.fig(ids.e2e(long_.id, None, "faster")))


def lede(w: Writer, workloads: list) -> list[Markup]:
    """The lede's findings of an engine comparison, each said once in the article: the
    reversal where there is one, then each input length's result in brief with what it
    rests on."""
    briefs = [b for b in (_brief(w, x) for x in workloads) if b is not None]
    thesis = _thesis(w, workloads)
    return ([thesis] if thesis is not None else []) + briefs \
        + _standing(w, workloads, briefs) + _mixed(w) + _differs_published(w) \
        + _contradicted(w)


def _mixed(w: Writer) -> list[Markup]:
    """The claim check's finding from the published figures alone: published values that
    mix bases (a peak over a mean), each with what it matches."""
    fig = _counted(w, ids.CLAIMS_MIXED)
    if fig is None:
        return []
    common = _common_input(w, fig.context["alternatives"])
    said = sentence(w.t["lede.mixed_common" if common else "lede.mixed"],
                    n=w.fig(ids.CLAIMS_MIXED),
                    m=format_value(len(fig.context["alternatives"]), "count", w.lang),
                    sources=_write_ups(w, fig.context["sources"]),
                    which=figures_text(w, fig.context["alternatives"]),
                    # the values alone where their one source is named: their labels say it
                    values=Markup(", ").join(w.fig(a).html for a in fig.context["alternatives"]
                                             if w.has(a)),
                    common=figures_text(w, [common]) if common else "")
    bounds = mean_bounds(w, fig.context["alternatives"])
    if bounds:            # what the like-for-like value can be, from the published extremes
        below = _declines_below(w, bounds)      # and whether the point still holds at it
        more = {"other": w.name(below[0][0]), "other_value": w.fig(below[0][1])} \
            if below else {}
        said = Markup(" ").join([said, sentence(
            w.t["lede.mean_bounds_holds" if below else "lede.mean_bounds"],
            engine=w.name(bounds[0]), lo=w.fig(bounds[1]), hi=w.fig(bounds[2]), **more)])
    return [said]


def _common_input(w: Writer, alternatives: list[str]) -> str | None:
    """The one figure every mixed-basis value is computed from (a peak), if there is one."""
    deps = [set(w.registry[a].depends_on) for a in alternatives if w.has(a)]
    shared = set.intersection(*deps) if deps and len(deps) == len(alternatives) else set()
    return shared.pop() if len(shared) == 1 and w.has(*shared) else None


def _differs_published(w: Writer) -> list[Markup]:
    """The claim check's other finding from the published figures alone: published values
    their own figures do not give, quoted."""
    fig = _counted(w, ids.CLAIMS_DIFFERS_PUBLISHED)
    if fig is None:
        return []
    said = [w.registry[ids.claim(c)].context.get("text", {}).get(w.lang)
            for c in fig.context["claims"] if w.has(ids.claim(c))]
    return [sentence(w.t["lede.differs_published"], n=w.fig(fig.id),
                     sources=_write_ups(w, fig.context["sources"]),
                     which=w.gist(said), values=_recomputed(w, fig))]


def _recomputed(w: Writer, fig: Figure) -> Markup:
    """The recomputed values a count of claims rests on, each with its engine."""
    return Markup(", ").join(
        Markup("{} {}").format(w.name(str(w.registry[f].context["engine"])), w.fig(f).html)
        for f in fig.depends_on if w.has(f) and w.registry[f].context.get("engine"))


def _counted(w: Writer, fid: str) -> Figure | None:
    """A count of claims the claim check made (``claims.mixed``, …) where it is not zero."""
    return w.registry[fid] if w.has(fid) and w.registry[fid].value else None


def _by_published_texts(w: Writer, fig: Figure) -> bool:
    """Whether every verdict a count names was set by what a reconstruction took from the
    published texts (calibrated or assumed): then the texts disagree, not an engine."""
    verdicts = [ids.claim(c) for c in fig.context.get("claims", [])]
    return bool(w.run.meta.reconstruction) and w.has(*verdicts) and \
        w.provenance(*verdicts) in (CALIBRATED, ASSUMED)


def _write_ups(w: Writer, keys: list[str]) -> str:
    """claims.yaml's source keys as the text calls the write-ups (run.yaml ``sources:``)."""
    named = source_names(w.run.meta, w.lang)
    return w.and_list([named.get(k, k) for k in keys])


def _contradicted(w: Writer) -> list[Markup]:
    """The claim check's finding for the lede: how many published claims the data
    contradicts, and from which write-ups; where every one of those verdicts was set by
    what a reconstruction took from the published texts, that the texts disagree among
    themselves, not that an engine did something."""
    fig = _counted(w, ids.CLAIMS_CONTRADICTED)
    if fig is None:
        return []
    sources = _write_ups(w, fig.context.get("sources", []))
    verdicts = [ids.claim(c) for c in fig.context.get("claims", [])]
    said = [w.registry[v].context.get("text", {}).get(w.lang) for v in verdicts if w.has(v)]
    key = "lede.contradicted"
    others = fig.context.get("against", [])
    if _by_published_texts(w, fig):     # the other write-up claims.yaml cites, if any
        key = "lede.contradicted_against" if others else "lede.contradicted_published"
    return [sentence(w.t[key], n=w.fig(fig.id), sources=sources, which=w.gist(said),
                     against=_write_ups(w, others))]


def _standing(w: Writer, workloads: list, briefs: list) -> list[Markup]:
    """After the briefs, once for them all: whether the durations are the published ones a
    reconstruction was fitted to (then the lede restates, it does not test), and that each
    result is one run."""
    parts = []
    if briefs and calibrated_durations(w, workloads):
        parts.append(sentence(w.t["lede.calibrated"]))
    if briefs and w.has(ids.REPEATS) and w.registry[ids.REPEATS].value == 1:
        # one run is what a reconstruction assumed of the published results: said as such
        key = "results.single_run_assumed" if w.provenance(ids.REPEATS) == ASSUMED \
            else "results.single_run"
        parts.append(sentence(w.t[key], n=w.fig(ids.REPEATS)))
    return [Markup(" ").join(parts)] if parts else []


def generator_cells(w: Writer) -> list[Cell]:
    """A reconstruction's generator inputs: what each is and drives, its value, and whether
    it was copied from the published text, assumed, fitted, modelled or drawn."""
    figs = sorted((f for fid, f in w.registry.items() if ids.family(fid) == "generator"),
                  key=lambda f: f.context.get("order", 0))
    return [Cell(w.t["generator." + str(f.provenance_why)],
                 Markup("{} ({})").format(_generator_value(w, f),
                                          w.t["provtag." + f.provenance.replace("-", "_")]))
            for f in figs]


def _generator_value(w: Writer, fig: Figure) -> Markup:
    """A generator input's value: per engine (and workload) where it has one each, the
    engine's name and the scenario's own text in a code face."""
    parts = []
    for engine, workload, text in fig.context.get("parts") or [["", "", str(fig.value)]]:
        who = " ".join(x for x in (w.engine_name(engine) if engine else "",
                                   w.run.meta.workload(workload).label if workload else "")
                       if x)
        parts.append(Markup("{} <code>{}</code>").format(who, text) if who
                     else Markup("<code>{}</code>").format(text))
    return Markup("; ").join(parts)


def _rests_on(w: Writer, wid: str) -> list[Markup]:
    """After a workload's comparison: that the engines received its requests differently
    (in a reconstruction, the time the published rates leave unexplained instead: what its
    generator filled that time with is no finding), and the assumptions of run.yaml the
    comparison rests on."""
    short = _published_short(w, wid) if w.run.meta.reconstruction else []
    arrival = _published_budget(w, wid, short[0]) if short else arrival_sentence(w, wid)
    out = [arrival] if arrival is not None else []
    # an assumption the arrival sentence already states (it names the same spacing figure);
    # the reconstruction's spacing is the generator's, said in the caveats, not here
    said = arrival_gap_id(w, wid) if arrival is not None else None
    assumed = [a for a in resting_on_values(w, ids.e2e(wid, None, "speedup"), without=said)]
    if assumed:
        out.append(sentence(w.t["results.rests_on"], assumed="; ".join(assumed)))
    return out


def _published_short(w: Writer, wid: str) -> list[str]:
    """The engines whose published rates leave time of workload ``wid``'s published
    duration unexplained (``claims.unexplained``)."""
    fig = _counted(w, ids.CLAIMS_UNEXPLAINED)
    return [e for x, e in fig.context["budgets"] if x == wid] if fig else []


def _published_budget(w: Writer, wid: str, engine: str) -> Markup:
    """The time one engine's published steady rates take for the workload, against its
    published duration (analyses.pubbudget)."""
    fig = w.registry[ids.CLAIMS_UNEXPLAINED]
    return sentence(w.t["results.published_budget"], engine=w.name(engine),
                    sources=_write_ups(w, fig.context.get("sources", [])),
                    **published_budget_values(w, wid, engine))


def _conclusion(w: Writer, caveats: dict | None = None) -> Section:
    """The conclusion: a campaign's findings first (the frontiers and capacities, or, for
    engines compared at shared loads only, the key finding), then what the check of the
    files found (``found_here``), then the single-point ones."""
    single = conclusion_section(w)
    found = one_engine_conclusion(w) or campaign_conclusion(w) or key_findings(w)
    found = found + found_here(w, (caveats or {}).get("limits", []))
    return dataclasses.replace(single, paragraphs=found + single.paragraphs) if found \
        else single


def found_here(w: Writer, limits: list[dict]) -> list[Items]:
    """What the check of the files found, each in one hedged sentence: published values
    on mixed bases, time the steady rates leave unexplained, claims the data contradicts,
    and speculative decoding that accepts next to nothing where the engines verify it
    differently. None of them where the data shows none."""
    items = _found_mixed(w) + _found_differs(w) + _found_published_budget(w) \
        + [_found_budget(w, c) for c in limits if c["id"] == "time_budget"] \
        + _found_contradicted(w) \
        + [_found_spec(w, c) for c in limits if c["id"] == "spec_overhead"
           and c["params"].get("applied_differently") == YES]
    items = [i for i in items if i is not None]
    if not items:
        return []
    lead = "conclusion.found_reconstructed" if w.run.meta.reconstruction else "conclusion.found"
    return [Items(sentence(w.t[lead]), items)]


def _found_mixed(w: Writer) -> list[Markup]:
    fig = _counted(w, ids.CLAIMS_MIXED)
    if fig is None:
        return []
    bounds = mean_bounds(w, fig.context["alternatives"])
    extra = {"engine": w.name(bounds[0]), "lo": w.fig(bounds[1]),
             "hi": w.fig(bounds[2])} if bounds else {}
    common = _common_input(w, fig.context["alternatives"])   # the peak they all come from
    key = "conclusion.found_mixed_bounds" if bounds else "conclusion.found_mixed"
    said = sentence(w.t[key + "_common" if common else key],
                    m=format_value(len(fig.context["alternatives"]), "count", w.lang),
                    common=figures_text(w, [common]) if common else "",
                    sources=_write_ups(w, fig.context["sources"]), **extra)
    below = _declines_below(w, bounds) if bounds else []
    if below:         # the comparison the published ratio made still holds at its floor
        said = Markup(" ").join([said, sentence(
            w.t["conclusion.found_mixed_holds"], engine=extra["engine"], lo=extra["lo"],
            other=w.name(below[0][0]), other_value=w.fig(below[0][1]))])
    return [said]


def _declines_below(w: Writer, bounds: tuple[str, str, str]) -> list[tuple[str, str]]:
    """Other engines whose like-for-like decline (on a basis no generator set: the mean of
    lines over the mean of lines, else mean over mean) lies below the lower bound of
    ``bounds``' engine."""
    engine, lo, _ = bounds
    out = []
    for e in w.run.meta.engines:
        if e.id == engine:
            continue
        for name in ("lines_over_lines", "mean_over_mean"):
            fid = ids.degradation(e.id, name)
            if w.has(fid) and not w.generated(fid):
                if w.registry[fid].value < w.registry[lo].value:
                    out.append((e.id, fid))
                break
    return out


def _found_differs(w: Writer) -> list[Markup]:
    fig = _counted(w, ids.CLAIMS_DIFFERS_PUBLISHED)
    if fig is None:
        return []
    return [sentence(w.t["conclusion.found_differs_published"], n=w.fig(fig.id),
                     sources=_write_ups(w, fig.context["sources"]),
                     values=_recomputed(w, fig))]


def _found_published_budget(w: Writer) -> list[Markup]:
    """Time of a published duration the same text's steady rates leave unexplained."""
    fig = _counted(w, ids.CLAIMS_UNEXPLAINED)
    if fig is None:
        return []
    out = []
    for wid, engine in fig.context["budgets"]:
        out.append(sentence(w.t["conclusion.found_published_budget"], engine=w.name(engine),
                            sources=_write_ups(w, fig.context.get("sources", [])),
                            label=w.run.meta.workload(wid).label,
                            **published_budget_values(w, wid, engine)))
    return out


def _found_budget(w: Writer, c: dict) -> Markup | None:
    p = c["params"]
    if not w.has(p["unexplained_s"], p["duration"]) or w.generated(p["unexplained_s"]):
        return None         # a remainder the generator's model or seed set is no finding
    key = "conclusion.found_budget_reconstructed" if w.run.meta.reconstruction \
        else "conclusion.found_budget"
    return sentence(w.t[key], engine=w.name(c["engine"]),
                    label=w.run.meta.workload(c["workload"]).label,
                    duration=w.fig(p["duration"]), unexplained=w.fig(p["unexplained_s"]))


def _found_contradicted(w: Writer) -> list[Markup]:
    fig = _counted(w, ids.CLAIMS_CONTRADICTED)
    if fig is None:
        return []
    others = fig.context.get("against", [])
    key = "conclusion.found_contradicted"
    if _by_published_texts(w, fig):
        # the other write-up claims.yaml cites, else the texts in general
        key = "conclusion.found_contradicted_against" if others \
            else "conclusion.found_contradicted_published"
    return [sentence(w.t[key], n=w.fig(fig.id),
                     sources=_write_ups(w, fig.context.get("sources", [])),
                     against=_write_ups(w, others))]


def _found_spec(w: Writer, c: dict) -> Markup | None:
    fid = c["params"].get("max")
    if not fid or not w.has(fid):
        return None
    if w.provenance(fid) != MEASURED:      # what a reconstruction assumed is no finding
        return None
    return sentence(w.t["conclusion.found_spec"], max=w.fig(fid))


def cited_closure(w: Writer) -> set[str]:
    """The figures the text links to, and every figure they are computed from."""
    todo, seen = list(w.cited), set()
    while todo:
        fig_id = todo.pop()
        if fig_id in seen or fig_id not in w.registry:
            continue
        seen.add(fig_id)
        todo.extend(w.registry[fig_id].depends_on)
    return seen


# Families whose figures come in many siblings (a campaign's points, curves, comparisons):
# their entries are grouped by id prefix, one block per group with the shared source once.
GROUPED = ("point", "curve", "compare", "cost", "slo", "diff", "delta", "trend")


def _group(fig) -> str | None:
    return ids.parent(fig.id) if ids.family(fig.id) in GROUPED else None


def _grouped(w: Writer, figs: list) -> Derivation:
    """One entry for sibling figures: their common sources (path and sha256) once, then one
    line per figure with its value, method and key."""
    def where(s) -> str:
        lines = ", ".join(str(n) for n in s.lines[:12]) + (" …" if len(s.lines) > 12 else "")
        return f"{s.key or ''}{':' + lines if lines else ''}"

    common: dict[tuple[str, str], None] = {}
    for f in figs:
        for s in f.sources:
            common.setdefault((s.path, s.sha256))
    members = [Member(anchor=anchor(f.id), id=ids.leaf(f.id), value=w.text(f),
                      method=_with_provenance(w, f), where="; ".join(where(s) for s in f.sources
                                                       if where(s)),
                      depends_on=[(anchor(d), d) for d in f.depends_on]) for f in figs]
    prefix = ids.parent(figs[0].id)
    return Derivation(anchor="group-" + anchor(prefix), id=prefix, value="", method="",
                      notebook=figs[0].notebook, cell=figs[0].cell, depends_on=[],
                      sources=[{"path": p, "sha256": h, "key": None, "lines": "",
                                "excerpt": None} for p, h in common],
                      members=members)


def _with_provenance(w: Writer, fig: Figure) -> str | Markup:
    """A figure's method, and, unless it was measured, where its value comes from."""
    if not fig.provenance or fig.provenance == "measured":
        return w.method_text(fig)
    return sentence(w.t["derivation.provenance"], method=w.method_text(fig),
                    kind=w.t["provtag." + fig.provenance.replace("-", "_")],
                    why=w.why_text(fig.provenance_why))


def derivations(w: Writer, excerpts: dict[tuple[str, int], str]) -> list[Derivation]:
    """Entries for the numbers the article shows and everything they rest on, in registry
    order. (Every figure, shown or not, is in derived/figures.json and `benchreport
    explain`.)"""
    out: list[Derivation] = []
    shown_ids = cited_closure(w)
    groups: dict[str, list] = {}
    for fig in (f for f in w.registry.values() if f.id in shown_ids):
        key = _group(fig)
        if key is not None:
            if key not in groups:
                groups[key] = []
                out.append(key)          # its place: where its first figure is
            groups[key].append(fig)
            continue
        sources = []
        for s in fig.sources:
            shown = ", ".join(str(n) for n in s.lines[:12]) + (" …" if len(s.lines) > 12 else "")
            sources.append({"path": s.path, "sha256": s.sha256, "key": s.key, "lines": shown,
                            "excerpt": excerpts.get((s.path, s.lines[0])) if s.lines else None})
        out.append(Derivation(anchor=anchor(fig.id), id=fig.id, value=w.text(fig),
                              method=_with_provenance(w, fig), notebook=fig.notebook,
                              sources=sources,
                              depends_on=[(anchor(d), d) for d in fig.depends_on],
                              cell=fig.cell))
    return [_grouped(w, groups[d]) if isinstance(d, str) else d for d in out]




def _window_clause(w: Writer, method: str, of: list[BenchWindow]) -> Markup:
    files = sorted({x.file for x in of if x.file})
    lines = [n for x in of for n in (x.first_line, x.last_line) if n]
    return sentence(w.t["window." + method.replace(".", "_").replace(" ", "_")],
                    n=format_value(len(of), "count", w.lang), file=", ".join(files),
                    first=str(min(lines, default="–")), last=str(max(lines, default="–")))


def window_cells(w: Writer, windows: list[BenchWindow]) -> list[Cell]:
    """Per engine with benchmark windows, how they were found in its log: one clause per
    method (``WINDOW_METHODS``), with how many windows and, by request count, the log
    and the lines the windows rest on."""
    cells = []
    for engine in w.run.meta.engines:
        mine = [x for x in windows if x.engine == engine.id]
        parts = [_window_clause(w, m, of) for m in WINDOW_METHODS
                 for of in [[x for x in mine if x.method == m]] if of]
        if parts:
            cells.append(Cell(w.t["window.label"].format(engine=engine.name),
                              Markup("; ").join(parts)))
    return cells


@dataclass(frozen=True)
class Given:
    """What a page shows besides the registry: the inputs as (path, sha256), the pinned
    packages as (name, version), the caveats and claim verdicts as the notebooks wrote
    them, the charts per section, the raw lines the derivations quote, the executed
    notebooks' pages, ingest's warnings and the benchmark windows ingest found."""

    inputs: list[tuple[str, str]] = field(default_factory=list)
    packages: list[tuple[str, str]] = field(default_factory=list)
    caveats: dict = field(default_factory=dict)
    claims: list = field(default_factory=list)
    charts: dict[str, list[Markup]] = field(default_factory=dict)
    excerpts: dict[tuple[str, int], str] = field(default_factory=dict)
    notebooks: list[str] = field(default_factory=list)
    ingest_notes: list[str] = field(default_factory=list)
    windows: list[BenchWindow] = field(default_factory=list)


def _machine_cells(w: Writer) -> list[Cell]:
    """Hardware, model, draft model, deployment and each engine's image or version."""
    meta, t = w.run.meta, w.t
    hw = meta.hardware
    unstated = Markup(escape(t["env.not_stated"]))
    env = [
        Cell(t["env.hardware"], unstated if "hardware" in meta.not_stated else
             sentence(t["env.hardware_value"], servers=hw.get("servers", 1),
                      gpus=hw.get("gpus", ""), gpu_model=hw.get("gpu_model", ""))),
        Cell(t["env.model"], unstated if "model" in meta.not_stated else Markup(escape(
            " / ".join(str(meta.model[k]) for k in ("name", "quantization")
                       if k in meta.model)))),
    ]
    if "draft_model" in meta.model:
        env.append(Cell(t["env.draft_model"], Markup(escape(str(meta.model["draft_model"])))))
    if meta.deployment or "deployment" in meta.not_stated:
        env.append(Cell(t["env.deployment"], unstated if "deployment" in meta.not_stated
                        else Markup(escape(meta.deployment))))
    for engine in meta.engines:
        # the image when run.yaml names one (it fixes the version), else the version
        key = "env.engine" if engine.image or not engine.version else "env.engine_version"
        env.append(Cell(t[key].format(name=engine.name),
                        Markup(escape(engine.image or engine.version or "–"))))
    return env


def _workload_cell(w: Writer, wl) -> Cell:
    """A workload's lengths, load and prompts (a sweep: its loads and repeats)."""
    t = w.t
    if wl.is_sweep or not w.has(ids.workload(wl.id, "concurrency"),
                                ids.workload(wl.id, "num_prompts"),
                                ids.workload(wl.id, "output_tokens")):
        return Cell(sentence(t["env.workload"], label=wl.label),
                    sentence(t["env.workload_sweep"], dataset=t["env.not_stated"]
                             if wl.dataset == "TODO" else wl.dataset,
                             input=w.fig(ids.workload(wl.id, "input_tokens")),
                             loads=", ".join(x.id for x in wl.loads),
                             repeats=w.fig(ids.workload(wl.id, "repeats"))
                             if w.has(ids.workload(wl.id, "repeats")) else "–"))
    def tagged(name: str) -> Markup:       # a value a reconstruction assumed says so
        fid = ids.workload(wl.id, name)
        return Markup("{}{}").format(w.fig(fid).html, w.cell_mark(fid))

    return Cell(sentence(t["env.workload"], label=wl.label),
                sentence(t["env.workload_value"], input=tagged("input_tokens"),
                         output=tagged("output_tokens"),
                         concurrency=w.fig(ids.workload(wl.id, "concurrency")),
                         prompts=tagged("num_prompts"), dataset=wl.dataset))


def _sections(w: Writer, given: Given) -> list[Section]:
    """The analysis sections, in reading order, each where its figures exist."""
    return [s for s in (
        points_section(w), *campaign_sections(w), decode_section(w), stepmodel_section(w),
        prefill_section(w), timeline_section(w), spec_section(w), state_section(w),
        point_log_section(w), server_section(w),
        caveats_section(w, given.caveats, given.claims), claims_section(w, given.claims),
        _conclusion(w, given.caveats)) if s is not None]


# in a reconstruction, what the article is about: the check of the published text, what
# was not controlled, what follows; the other analyses come after them as appendices
RECONSTRUCTION_BODY = ("claims", "caveats", "conclusion")


def reading_order(w: Writer, sections: list[Section]) -> list[Section]:
    """The sections in the order the page gives them. In a reconstruction every analysis
    figure comes from the generator's model, seed or assumptions: the claim check, the
    settings not controlled and the conclusion follow the results, and the analyses come
    after them as appendices ("Appendix: …"; ``_appendix_intro`` says once what they
    are), in the HTML edition only: pages of the generator's output are no reading in print
    or in a blog post, which name them and link to them (``Section.screen_only``)."""
    if not w.run.meta.reconstruction:
        return sections
    body = [s for k in RECONSTRUCTION_BODY for s in sections if s.id == k]
    rest = [s for s in sections if s.id not in RECONSTRUCTION_BODY]
    return body + [dataclasses.replace(s, heading=w.t["section.appendix_of"].format(
        heading=s.heading), screen_only=True) for s in rest]


def _appendix_intro(w: Writer, sections: list[Section]) -> list[Section]:
    """The first appendix of a reconstruction's analyses opens with what they all are (after
    the charts are referred to: the reference stays with the section's own first sentence)."""
    if not w.run.meta.reconstruction:
        return sections
    out, said = [], False
    for s in sections:
        if not said and s.id not in RECONSTRUCTION_BODY:
            s, said = dataclasses.replace(s, paragraphs=[
                sentence(w.t["section.appendix_intro"]), *s.paragraphs]), True
        out.append(s)
    return out


def _see(w: Writer, first: int, count: int) -> Markup:
    """" (see Figure 3)" / " (see Figures 7–10)"; in Korean without the leading space."""
    numbers = str(first) if count == 1 else f"{first}, {first + 1}" if count == 2 \
        else f"{first}–{first + count - 1}"
    return sentence(w.t["figure.see_one" if count == 1 else "figure.see_many"], n=numbers)


def _ending_with(paragraph: Markup, see: Markup) -> Markup:
    """``see`` at the end of the paragraph's last sentence, before its full stop."""
    text = str(paragraph)
    if text.endswith("."):
        return Markup(text[:-1]) + see + Markup(".")
    return Markup(text) + see


def _first_sentence_with(paragraph: Markup, see: Markup) -> Markup:
    """``see`` at the end of the paragraph's first sentence, before its full stop: the
    sentence that says what the section is about, not a later one about a table's rows. A
    full stop inside parentheses or a tag does not end a sentence."""
    text, depth, tag = str(paragraph), 0, False
    for i, ch in enumerate(text):
        tag = (ch == "<") or (tag and ch != ">")
        depth += (ch == "(") - (ch == ")") if not tag else 0
        if ch == "." and not tag and depth == 0 and text[i + 1:i + 2] == " ":
            return Markup(text[:i]) + see + Markup(text[i:])
    return _ending_with(paragraph, see)


def _refer_to_charts(w: Writer, results: list[WorkloadResult], sections: list[Section],
                     charts: dict[str, list[Markup]]
                     ) -> tuple[list[WorkloadResult], list[Section]]:
    """The text refers to each chart by the number the page gives it (the results' charts
    first, then each section's, in order): the first sentence of a section with charts
    ends by pointing at them."""
    n = 1
    if results and charts.get("results"):
        count = len(charts["results"])
        results = [dataclasses.replace(results[0], sentence=_ending_with(
            results[0].sentence, _see(w, n, count))), *results[1:]]
        n += count
    out = []
    for s in sections:
        count = len(charts.get(s.id, []))
        if count and s.paragraphs:
            s = dataclasses.replace(s, paragraphs=[
                _first_sentence_with(s.paragraphs[0], _see(w, n, count)), *s.paragraphs[1:]])
        n += count
        out.append(s)
    return results, out


def build_article(run: Run, registry: dict[str, Figure], lang: str, t: dict[str, str],
                  given: Given | None = None) -> Article:
    """The page content for ``lang``: the text the figures select, with what ``given``
    adds (inputs, charts, caveats and claims as the notebooks wrote them)."""
    given = given or Given()
    meta = run.meta
    w = Writer(run, registry, lang, t)
    results = [r for r in (_workload_result(w, wl) for wl in meta.workloads) if r]
    env = _machine_cells(w) + [_workload_cell(w, wl) for wl in meta.workloads] \
        + window_cells(w, given.windows)
    headline = run_headline(w, lede(w, [wl for wl in meta.workloads
                                        if any(r.id == wl.id for r in results)]),
                            key_findings(w) + single_run_findings(w))
    found = finding(w)
    settings = settings_section(w, given.caveats.get("compared", {}))
    body = [s for s in (latency_appendix(w), *_sections(w, given)) if s is not None]
    results, sections = _refer_to_charts(w, results, reading_order(w, body), given.charts)
    sections = _appendix_intro(w, sections)
    return Article(
        lang=lang, other_lang="en" if lang == "ko" else "ko", t=t,
        headline=headline, environment=env, generator=generator_cells(w), results=results,
        inputs=[Cell(p, Markup(escape(h))) for p, h in given.inputs],
        packages=[Cell(n, Markup(escape(v))) for n, v in given.packages],
        finding=found, settings=settings, sections=sections,
        # last: the entries cover what the text above cited
        derivations=derivations(w, given.excerpts),
        charts=given.charts, notebooks=given.notebooks, ingest_notes=given.ingest_notes,
        copies=_copies(run), **_run_fields(w))


def _copies(run) -> list[str]:
    """The input files the report folder holds a copy of (derived/inputs/)."""
    folder = run.paths.inputs_copy
    return sorted(p.name for p in folder.glob("*") if p.is_file()) if folder.is_dir() else []


def _run_fields(w: Writer) -> dict[str, Any]:
    """What run.yaml itself gives the page, in the reader's language: title, date, the
    reconstruction notice, the assumptions, notes, and the sources (write-ups apart)."""
    meta, lang, t = w.run.meta, w.lang, w.t
    return dict(
        title=meta.title[lang],
        date=meta.date.isoformat() if meta.date else t["env.not_stated"],
        reconstruction=meta.reconstruction[lang] if meta.reconstruction else None,
        assumed=[Cell(a.setting[lang], Markup(escape(f"{a.value[lang]} — {a.why[lang]}")))
                 for a in meta.assumed],
        notes=meta.notes[lang] if meta.notes else None,
        sources=["; ".join(f"{k}: {v}" for k, v in src.fields) for src in meta.sources
                 if not src.is_writeup],
        writeups=citations(meta, t, lang))
