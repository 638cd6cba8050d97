"""The article of a comparison across runs, per language, and its HTML and PDF.

Every sentence is picked by a computed figure: how many factors differ
(``diff.<rk>.groups``), how many metrics changed for the better, the worse or within the
noise (``delta.<ra>.<rb>.<name>``), and each change's verdict. Numbers are registry figures
linked to the audit appendix, which cites each run's own input files.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from ..core import ids
from ..core.figures import Figure
from ..core.files import read_json, write_text_atomic
from ..core.i18n import format_value, load_catalogue, sentence
from ..core.paths import ComparePaths
from ..core.runmeta import LANGS
from ..core.verdicts import (
    IMPROVED,
    INTERVAL_LEVEL,
    NO_INTERVAL,
    REGRESSED,
    SAME_DATA,
    TIE_IN_NOISE,
)
from .charts import OVERLAY_PANELS
from .narrative import Article, Cell, derivations
from .narrative_base import Writer
from .sections import Section, Table

__all__ = ["VERDICT_COUNTS", "build_compare_article", "changes_section", "curves_section",
           "points_section", "render_compare", "trends_section"]

VERDICT_COUNTS = (("improved", IMPROVED), ("regressed", REGRESSED),
                  ("within_noise", TIE_IN_NOISE), ("no_interval", NO_INTERVAL),
                  ("same_data", SAME_DATA))


@dataclass(frozen=True)
class _Engine:
    id: str
    name: str


class _Meta:
    """Engine names of the compared runs, for the Writer."""

    def __init__(self, runs: list[dict[str, Any]]) -> None:
        self._names = {e["id"]: e["name"] for r in runs for e in r["engines"]}

    def engine(self, engine_id: str) -> _Engine:
        return _Engine(engine_id, self._names[engine_id])


@dataclass(frozen=True)
class _Subject:
    """The compared runs as a Writer's subject (``narrative_base.Subject``)."""

    meta: _Meta


def _factor(t: dict[str, str], group: str, w: Writer) -> str:
    kind, _, engine = group.partition("-")
    name = w.engine_name(engine) if engine else ""
    return str(sentence(t[f"xrun.factor.{kind}"], engine=name))


def _level(lang: str) -> str:
    return format_value(INTERVAL_LEVEL * 100, "%", lang, 0)


def _label(rec: dict[str, Any], workload: str) -> str:
    """A workload as run.yaml labels it (the base run's label, else the first run's)."""
    for run in rec["runs"]:
        if workload in run.get("workloads", {}):
            return run["workloads"][workload]
    return workload


def _verdict_key(verdict: str) -> str:
    return "xrun.verdict." + verdict.replace(" ", "_")


def _metric(t: dict[str, str], metric: str) -> str:
    """A metric's name; a tail statistic is named by its percentile (``p99``)."""
    parsed = ids.parse_latency_field(metric)
    return str(sentence(t[f"xrun.metric.{metric}"], p=parsed[0] if parsed else ""))


def changes_section(w: Writer, rec: dict[str, Any]) -> tuple[list[Markup], Section]:
    """The headline sentence per compared run (how many factors differ) and the table."""
    t = w.t
    base = rec["base"]
    headline: list[Markup] = []
    rows: list[list[Markup]] = []
    for run in rec["runs"][1:]:
        rk = run["key"]
        groups_id = ids.diff(rk, "groups")
        groups = w.registry[groups_id].context.get("groups", [])
        n = w.registry[groups_id].value
        if n == 0:
            headline.append(sentence(t["xrun.same"], run=run["id"], base=base))
        elif n == 1:
            headline.append(sentence(t["xrun.one_factor"], run=run["id"], base=base,
                                     factor=_factor(t, groups[0], w)))
        else:
            headline.append(sentence(t["xrun.many_factors"], run=run["id"], base=base,
                                     count=w.fig(groups_id),
                                     factors=", ".join(_factor(t, g, w) for g in groups)))
        for c in (c for c in rec["changes"] if c["run"] == run["id"]):
            rows.append([Markup(escape(run["id"])), Markup(escape(_factor(t, c["group"], w))),
                         Markup('<span class="mono">{}</span>').format(c["key"]),
                         w.fig(ids.diff(rk, c["item"], "from")).html,
                         w.fig(ids.diff(rk, c["item"], "to")).html])
    tables = [Table(header=[t["xrun.col.run"], t["xrun.col.factor"], t["xrun.col.key"],
                            sentence(t["xrun.col.in"], run=base), t["xrun.col.there"]],
                    rows=rows)] if rows else []
    return headline, Section(id="changes", heading=t["xrun.changes_heading"],
                             paragraphs=list(headline), tables=tables)


def _ratio_cell(w: Writer, fid_of) -> Markup:
    ratio = w.fig(fid_of(None)).html
    if w.has(fid_of("low")):
        return sentence(w.t["xrun.ratio_interval"], ratio=ratio, low=w.fig(fid_of("low")),
                        high=w.fig(fid_of("high")))
    return ratio


def points_section(w: Writer, rec: dict[str, Any]) -> tuple[list[Markup], Section]:
    t = w.t
    paragraphs: list[Markup] = []
    headline: list[Markup] = []
    tables: list[Table] = []
    base = rec["runs"][0]
    for run in rec["runs"][1:]:
        ra, rb = base["key"], run["key"]
        counts = {name: w.fig(ids.delta_count(ra, rb, name)) for name, _ in VERDICT_COUNTS}
        text = sentence(t["xrun.counts"], run=run["id"], base=base["id"],
                        matched=w.fig(ids.delta_count(ra, rb, "matched")), **counts)
        paragraphs.append(text)
        headline.append(text)
        found = _largest(w, rec, base["id"], run["id"])
        if found:
            headline.append(found)
        only = [o for o in rec["only"] if o["base"] == base["id"] and o["other"] == run["id"]]
        for who in (base, run):
            mine = [o for o in only if o["run"] == who["id"]]
            if mine:
                paragraphs.append(sentence(
                    t["xrun.only"], run=who["id"], n=w.fig(ids.delta_count(ra, rb,
                                                                         "only_" + who["key"])),
                    points=", ".join(f"{w.engine_name(o['engine'])} "
                                     f"{_label(rec, o['workload'])} {o['load']}"
                                     for o in mine)))
        rows = []
        same: dict[tuple[str, str, str], None] = {}
        for m in (m for m in rec["matched"] if m["base"] == base["id"] and m["run"] == run["id"]):
            def fid_of(part, m=m):
                return ids.delta(ra, rb, m["engine"], m["workload"], m["load"], m["metric"],
                                 part)
            verdict = w.registry[fid_of("verdict")].value
            if verdict == SAME_DATA:       # listed once below the table, not row by row
                same.setdefault((m["engine"], m["workload"], m["load"]))
                continue
            rows.append([Markup(escape(w.engine_name(m["engine"]))),
                         Markup(escape(_label(rec, m["workload"]))),
                         Markup(escape(m["load"])),
                         Markup(escape(_metric(t, m["metric"]))),
                         w.fig(fid_of("from")).html, w.fig(fid_of("to")).html,
                         _ratio_cell(w, fid_of),
                         w.link(fid_of("verdict"), t[_verdict_key(verdict)])])
        if same:
            paragraphs.append(sentence(
                t["xrun.same_files"], n=w.fig(ids.delta_count(ra, rb, "same_data")),
                points=", ".join(f"{w.engine_name(e)} {_label(rec, wl)} {ld}"
                                 for e, wl, ld in same)))
        if rows:
            tables.append(Table(
                header=[t["xrun.col.engine"], t["xrun.col.workload"], t["xrun.col.load"],
                        t["xrun.col.metric"], sentence(t["xrun.col.in"], run=base["id"]),
                        sentence(t["xrun.col.in"], run=run["id"]), t["xrun.col.ratio"],
                        t["xrun.col.verdict"]],
                rows=rows, numeric=(4, 5, 6),
                caption=str(sentence(t["xrun.table_caption"], run=run["id"], base=base["id"],
                                     level=_level(w.lang)))))
    intro = sentence(t["xrun.points_intro"], level=_level(w.lang))
    return headline, Section(id="points", heading=t["xrun.points_heading"],
                             paragraphs=[intro] + paragraphs, tables=tables)


def _largest(w: Writer, rec: dict[str, Any], base: str, run: str) -> Markup | None:
    """The change beyond the noise with the ratio farthest from 1 (either way)."""
    import math

    best = None
    for m in rec["matched"]:
        if m["base"] != base or m["run"] != run:
            continue
        verdict = w.registry[m["id"] + ".verdict"].value if \
            w.has(m["id"] + ".verdict") else None
        ratio = w.registry[m["id"]].value
        if verdict in (IMPROVED, REGRESSED) and ratio:
            size = abs(math.log(ratio))
            if best is None or size > best[0]:
                best = (size, m, verdict)
    if best is None:
        return None
    _, m, verdict = best
    fid = m["id"]
    return sentence(w.t[f"xrun.largest_{verdict}"], engine=w.engine_name(m["engine"]),
                    workload=_label(rec, m["workload"]), load=m["load"],
                    metric=_metric(w.t, m["metric"]),
                    before=w.fig(fid + ".from"), after=w.fig(fid + ".to"), ratio=w.fig(fid),
                    low=w.fig(fid + ".low"), high=w.fig(fid + ".high"), run=run, base=base)


def trends_section(w: Writer, rec: dict[str, Any]) -> Section | None:
    if not rec["trends"]:
        return None
    t = w.t
    order = rec["ordered"]
    keys = {r["id"]: r["key"] for r in rec["runs"]}
    rows = []
    for tr in rec["trends"]:
        cells = {}
        prev = None
        for run_id, fid in tr["values"]:
            cell = w.fig(fid).html
            if prev is not None:
                vid = ids.delta(keys[prev], keys[run_id], tr["engine"], tr["workload"],
                                tr["load"], tr["metric"], "verdict")
                if w.has(vid):
                    verdict = w.registry[vid].value
                    cell = Markup("{} ({})").format(cell, w.link(vid, t[_verdict_key(verdict)]))
            cells[run_id] = cell
            prev = run_id
        rows.append([Markup(escape(w.engine_name(tr["engine"]))),
                     Markup(escape(_label(rec, tr["workload"]))),
                     Markup(escape(tr["load"])), Markup(escape(_metric(t, tr["metric"])))]
                    + [cells.get(r, Markup("–")) for r in order])
    table = Table(header=[t["xrun.col.engine"], t["xrun.col.workload"], t["xrun.col.load"],
                          t["xrun.col.metric"], *order], rows=rows,
                  numeric=tuple(range(4, 4 + len(order))))
    return Section(id="trends", heading=t["xrun.trends_heading"],
                   paragraphs=[Markup(escape(t["xrun.trends_intro"]))], tables=[table])


def curves_section(w: Writer, rec: dict[str, Any]) -> Section | None:
    """Per engine and workload that two runs or more measured, their load curves overlaid
    (``charts.overlay_charts``), one colour per run."""
    from .charts import overlay_charts

    def title(curve: dict[str, Any]) -> str:
        return str(sentence(w.t["xrun.chart.title"], engine=w.engine_name(curve["engine"]),
                            workload=_label(rec, curve["workload"])))

    drawn = overlay_charts(rec, w.registry, w.t, title)
    if not drawn:
        return None
    tail = (ids.parse_latency_field(OVERLAY_PANELS[1][0]) or ("",))[0]
    return Section(id="curves", heading=w.t["xrun.curves_heading"],
                   paragraphs=[sentence(w.t["xrun.curves_intro"], p=tail)],
                   charts=[chart for _, chart in drawn])


def build_compare_article(paths: ComparePaths, registry: dict[str, Figure], lang: str,
                          t: dict[str, str], rec: dict[str, Any],
                          packages: list[tuple[str, str]],
                          excerpts: dict | None = None) -> Article:
    w = Writer(_Subject(_Meta(rec["runs"])), registry, lang, t)
    run_ids = [r["id"] for r in rec["runs"]]
    factor_lines, changes = changes_section(w, rec)
    point_lines, points = points_section(w, rec)
    trends = trends_section(w, rec)
    curves = curves_section(w, rec)
    derived = [r["id"] for r in rec["runs"] if r["reconstruction"]]
    env = [Cell(sentence(t["xrun.run_label"], run=r["id"], role=t["xrun.base"]
                         if r["id"] == rec["base"] else ""),
                sentence(t["xrun.run_cell"], title=r["title"].get(lang) or r["id"],
                         date=r["date"] or t["env.not_stated"],
                         sha_label="sha256", sha=(r["inputs_sha256"] or "")[:12]))
           for r in rec["runs"]]
    sections = [s for s in (changes, points, curves, trends) if s is not None]
    dates = sorted(r["date"] for r in rec["runs"] if r["date"])
    return Article(
        lang=lang, other_lang="en" if lang == "ko" else "ko", t=t,
        title=str(sentence(t["xrun.title"], runs=", ".join(run_ids))),
        date=" – ".join(dict.fromkeys([dates[0], dates[-1]])) if dates
        else t["env.not_stated"],
        reconstruction=str(sentence(t["xrun.reconstruction"], runs=", ".join(derived)))
        if derived else None,
        headline=[sentence(t["xrun.intro"], others=", ".join(run_ids[1:]), base=rec["base"],
                           level=_level(lang))] + factor_lines + point_lines,
        environment=env, assumed=[], generator=[], results=[],
        inputs=[Cell(p, Markup(escape(h))) for p, h in rec["inputs"]],
        packages=[Cell(n, Markup(escape(v))) for n, v in packages],
        sections=sections, charts={s.id: s.charts for s in sections if s.charts},
        derivations=derivations(w, excerpts or {}),
        notebooks=sorted(p.with_suffix(".html").name
                         for p in paths.notebooks.glob("*.ipynb")),
    )


def render_compare(paths: ComparePaths, registry: dict[str, Figure], *,
                   project: Path, pdf: bool = True) -> list[Path]:
    """Write report.<lang>.html and (unless ``pdf`` is false) .pdf of the comparison, and
    its notebook pages."""
    from .render import (
        code_version,
        locked_packages,
        make_env,
        notebook_pages,
        pdf_job,
        pdf_workers,
        render_html,
    )

    rec = read_json(paths.compare_json)
    env = make_env(project / "templates")
    packages = [("code", code_version(project))] + locked_packages(project)
    epoch = _epoch(rec)
    written = []

    notebook_pages(paths.notebooks)
    for lang in LANGS if not pdf else ():   # no earlier PDF beside pages it does not match
        paths.pdf(lang).unlink(missing_ok=True)
    with pdf_workers() if pdf else _no_workers() as (pool, warm):   # one PDF per language
        pdfs = []
        for lang in LANGS:
            t = load_catalogue(project / "templates" / "labels", lang)
            article = build_compare_article(paths, registry, lang, t, rec, packages)
            html = render_html(env, article)
            write_text_atomic(paths.html(lang), html)
            written.append(paths.html(lang))
            if pdf:
                pdfs.append(pool.submit(pdf_job, (render_html(env, article, "print"),
                                                   paths.pdf(lang), epoch)))
                written.append(paths.pdf(lang))
        for future in warm + pdfs:
            future.result()
    return written


@contextlib.contextmanager
def _no_workers():
    """What ``pdf_workers`` gives when no PDF is rendered: no pool, nothing warming up."""
    yield None, []


def _epoch(rec: dict[str, Any]) -> int:
    """The latest run date as a Unix time: the only clock the outputs may show."""
    import calendar
    import datetime as dt

    dates = [dt.date.fromisoformat(r["date"]) for r in rec["runs"] if r["date"]]
    return calendar.timegm((max(dates) if dates else dt.date(1980, 1, 1)).timetuple())
