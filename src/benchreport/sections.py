"""The article's body sections, each assembled from figures, caveats and claim verdicts.

Every number is a link to its derivation; every sentence is picked by the data (which engine
is faster, whether a steady phase or a crossover exists) and worded by the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup, escape

from .i18n import format_value, sentence
from .metrics import TIE
from .narrative_base import Writer


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Markup]]
    numeric: tuple[int, ...] = ()        # columns aligned right


@dataclass(frozen=True)
class Section:
    id: str
    heading: str
    paragraphs: list[Markup] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Markup] = field(default_factory=list)


def _cell(w: Writer, fid: str) -> Markup:
    return w.fig(fid).html if w.has(fid) else Markup("–")


def engines_with(w: Writer, workload: str, prefix: str) -> list[str]:
    return [e.id for e in w.run.meta.engines if w.has(f"{prefix}.{workload}.{e.id}.steady")
            or any(k.startswith(f"{prefix}.{workload}.{e.id}.") for k in w.registry)]


def finding(w: Writer) -> Markup | None:
    """The key finding: who decodes faster where, and the modelled crossover."""
    t, wl = w.t, w.run.meta.workloads
    pairs = [k for k, f in w.registry.items() if k.startswith("model.crossover.")
             and k.count(".") == 3]
    if not pairs or len(wl) < 2:
        return sentence(t["finding.nomodel"])
    key = pairs[0]
    a, b = key.split(".")[2:4]
    short, long_ = wl[0], wl[-1]

    def quicker(workload) -> str | None:
        times = {e: w.registry[f"decode.{workload.id}.{e}.ms_per_token"].value for e in (a, b)
                 if w.has(f"decode.{workload.id}.{e}.ms_per_token")}
        return min(times, key=times.get) if len(times) == 2 else None

    qs, ql = quicker(short), quicker(long_)
    if qs is None or ql is None:
        return sentence(t["finding.nomodel"])
    if qs == ql or w.registry[key].value == "none":
        return sentence(t["finding.same"], engine=w.name(qs))
    rng = w.registry.get(f"{key}.range")
    lo, hi = (rng.value.split("–") if rng else ("–", "–"))
    return sentence(t["finding.cross"], short_engine=w.name(qs), long_engine=w.name(ql),
                    short_label=short.label, long_label=long_.label, x=w.fig(key),
                    lo=lo, hi=hi)


def settings_section(w: Writer, compared: dict[str, dict[str, str]]) -> Table | None:
    engines = [e.id for e in w.run.meta.engines]
    rows = []
    for sid, values in compared.items():
        rows.append([Markup(escape(w.t.get(f"setting.{sid}", sid)))]
                    + [Markup(escape(values.get(e, "–"))) for e in engines])
    if not rows:
        return None
    return Table(header=[w.t["table.setting"]] + [w.engine_name(e) for e in engines], rows=rows)


def latency_table(w: Writer, workload: str) -> Table | None:
    engines = [e.id for e in w.run.meta.engines if w.has(f"latency.{workload}.{e.id}.ttft.mean")]
    if not engines:
        return None
    rows = []
    for metric in ("ttft", "tpot", "itl", "e2el"):
        for e in engines:
            base = f"latency.{workload}.{e}.{metric}"
            rows.append([Markup(escape(w.t[f"metric.{metric}"])), Markup(escape(w.engine_name(e)))]
                        + [_cell(w, f"{base}.{s}") for s in ("mean", "median", "p90", "p99")])
    return Table(header=[w.t["table.metric"], w.t["table.engine"], w.t["table.mean"],
                         w.t["table.median"], "p90", "p99"], rows=rows, numeric=(2, 3, 4, 5))


def decode_section(w: Writer) -> Section:
    t = w.t
    rows, notes = [], []
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            base = f"decode.{wl.id}.{e.id}"
            if not w.has(f"{base}.steady"):
                continue
            steady = w.registry[f"{base}.steady"]
            if steady.value != "found":
                why = t["decode.why_nolog"] if steady.value == "no log" else \
                    t["decode.why_none"].format(
                        records=format_value(steady.context.get("window_records", 0), "count",
                                             w.lang),
                        n=format_value(steady.context.get("requests", 0), "count", w.lang))
                notes.append(sentence(t["decode.nosteady"], engine=w.name(e.id),
                                      label=wl.label, why=why))
                continue
            rows.append([Markup(escape(wl.label)), Markup(escape(e.name))]
                        + [_cell(w, f"{base}.{k}") for k in ("min", "max", "mean", "median",
                                                             "per_request", "ms_per_token",
                                                             "records")])
    paras = [sentence(t["decode.intro"])]
    for e in w.run.meta.engines:
        key = f"decode.degradation.{e.id}.mean_over_mean"
        if w.has(key):
            ctx = w.registry[key].context
            paras.append(sentence(
                t["decode.degradation"], engine=w.name(e.id),
                short=w.run.meta.workload(ctx["from"]).label,
                long=w.run.meta.workload(ctx["to"]).label, mm=w.fig(key),
                pm=w.fig(f"decode.degradation.{e.id}.peak_over_mean")))
    table = Table(header=[t["table.workload"], t["table.engine"], t["table.min"], t["table.max"],
                          t["table.mean"], t["table.median"], t["table.per_request"],
                          t["table.ms_per_token"], t["table.records"]],
                  rows=rows, numeric=(2, 3, 4, 5, 6, 7, 8))
    return Section("decode", t["heading.decode"], paras + notes, [table] if rows else [])


def prefill_section(w: Writer) -> Section:
    t = w.t
    rows, paras = [], [sentence(t["prefill.intro"])]
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            base = f"prefill.{wl.id}.{e.id}"
            if w.has(f"{base}.mean"):
                rows.append([Markup(escape(wl.label)), Markup(escape(e.name))]
                            + [_cell(w, f"{base}.{k}") for k in ("min", "max", "mean")])
    longest = w.run.meta.workloads[-1]
    for e in w.run.meta.engines:
        base = f"prefill.{longest.id}.{e.id}"
        if w.has(f"{base}.r1.sequence"):
            paras.append(sentence(t["prefill.chunks"], engine=w.name(e.id),
                                  label=longest.label, sequence=w.fig(f"{base}.r1.sequence"),
                                  pct=w.fig(f"{base}.r1.decay_pct"),
                                  recovery=w.fig(f"{base}.r1.recovery")
                                  if w.has(f"{base}.r1.recovery") else "–"))
        elif w.has(f"{base}.chunks"):
            paras.append(sentence(t["prefill.coarse"], engine=w.name(e.id)))
    table = Table(header=[t["table.workload"], t["table.engine"], t["table.min"], t["table.max"],
                          t["table.mean"]], rows=rows, numeric=(2, 3, 4))
    return Section("prefill", t["heading.prefill"], paras, [table] if rows else [])


def spec_section(w: Writer) -> Section | None:
    t = w.t
    rows = []
    for wl in w.run.meta.workloads:
        for e in w.run.meta.engines:
            base = f"spec.{wl.id}.{e.id}"
            if w.has(f"{base}.accept_len"):
                rows.append([Markup(escape(wl.label)), Markup(escape(e.name)),
                             _cell(w, f"{base}.accept_len"), _cell(w, f"{base}.acceptance_pct")])
    if not rows:
        return None
    return Section("spec", t["heading.spec"], [sentence(t["spec.intro"])],
                   [Table(header=[t["table.workload"], t["table.engine"], t["table.accept_len"],
                                  t["table.acceptance"]], rows=rows, numeric=(2, 3))])


def caveats_section(w: Writer, caveats: dict) -> Section:
    t = w.t
    engines = [e.id for e in w.run.meta.engines]
    rows = []
    for c in caveats.get("differing", []):
        label = t.get(f"setting.{c['id']}", c["id"])
        if c.get("workload"):
            label = f"{label} ({w.run.meta.workload(c['workload']).label})"
        rows.append([Markup(escape(label))]
                    + [Markup(escape(c["values"].get(e, "–"))) for e in engines]
                    + [Markup(escape(t.get(f"why.{c['id']}", c.get("why", "")))),
                       Markup(escape("; ".join(c["evidence"][:2])))])
    if not rows:
        return Section("caveats", t["heading.caveats"], [sentence(t["caveats.none"])])
    return Section("caveats", t["heading.caveats"], [sentence(t["caveats.intro"])],
                   [Table(header=[t["table.what"]] + [w.engine_name(e) for e in engines]
                          + [t["table.why"], t["table.evidence"]], rows=rows)])


def _short(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_short(v)}" for k, v in value.items())
    if isinstance(value, list):
        return " → ".join(_short(v) for v in value) if len(value) <= 8 else f"{len(value)} values"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return "–" if value is None else str(value)


def claims_section(w: Writer, claims: list[dict]) -> Section | None:
    if not claims:
        return None
    t, lang = w.t, w.lang
    rows = []
    for c in claims:
        params = {k: str(v) for k, v in (c.get("params") or {}).items()}
        params.setdefault("alternatives", "")
        if "within" in params:
            params["within"] = f"{float(params['within']):.0%}"
        try:
            reason = t[f"reason.{c['reason']}"].format(**params)
        except (KeyError, IndexError):
            reason = c.get("sentence", "")
        fid = f"claim.{c['claim']}"
        verdict = w.link(fid, t.get(f"verdict.{c['verdict']}", c["verdict"])) \
            if w.has(fid) else Markup(escape(c["verdict"]))
        rows.append([Markup(escape(c["text"][lang])), Markup(escape(", ".join(c["source"]))),
                     Markup(escape(_short(c["published"]))),
                     Markup(escape(_short(c["recomputed"]))), verdict, Markup(escape(reason))])
    return Section("claims", t["heading.claims"], [sentence(t["claims.intro"])],
                   [Table(header=[t["table.claim"], t["table.source"], t["table.published"],
                                  t["table.recomputed"], t["table.verdict"], t["table.reason"]],
                          rows=rows)])


def conclusion_section(w: Writer) -> Section:
    t = w.t
    paras = []
    for wl in w.run.meta.workloads:
        key = f"e2e.{wl.id}.faster"
        if not w.has(key):
            continue
        if w.registry[key].value == TIE:
            paras.append(sentence(t["conclusion.tie"], label=wl.label))
        else:
            paras.append(sentence(t["conclusion.per_workload"], label=wl.label,
                                  engine=w.fig(key), ratio=w.fig(f"e2e.{wl.id}.speedup")))
    winners = {w.registry[f"e2e.{wl.id}.faster"].value for wl in w.run.meta.workloads
               if w.has(f"e2e.{wl.id}.faster")}
    pairs = [k for k in w.registry if k.startswith("model.crossover.") and k.count(".") == 3
             and isinstance(w.registry[k].value, float | int)]
    wl = w.run.meta.workloads
    short_w = w.registry.get(f"e2e.{wl[0].id}.faster")
    long_w = w.registry.get(f"e2e.{wl[-1].id}.faster")
    if pairs and short_w and long_w and short_w.value != long_w.value and TIE not in winners:
        paras.append(sentence(t["conclusion.guidance_cross"], x=w.fig(pairs[0]),
                              short_engine=w.name(str(short_w.value)),
                              long_engine=w.name(str(long_w.value))))
    elif len(winners) == 1 and TIE not in winners:
        paras.append(sentence(t["conclusion.guidance_one"], engine=w.name(winners.pop())))
    if any(k.startswith("setting.") for k in w.registry) and \
            w.has("caveats.settings_differing") and w.registry["caveats.settings_differing"].value:
        paras.append(sentence(t["conclusion.caveat"]))
    return Section("conclusion", t["heading.conclusion"], paras)
