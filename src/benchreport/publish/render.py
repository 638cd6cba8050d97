"""Render the article: one jinja2 environment, HTML per language, the same HTML to PDF."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import shutil
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from ..core import collector
from ..core.figures import Figure
from ..core.files import read_json, write_text_atomic
from ..core.i18n import load_catalogue
from ..core.records import Run
from ..core.runmeta import LANGS
from .blog import Post, write_blog
from .captions import alt_text, caption
from .codemarks import map_text, mark_code_html
from .fonts import FAMILY, MONO, font_face_css
from .narrative import Article, Given, build_article

__all__ = ["FONT_SLOT", "KEEP_LONGEST", "PDF_WORKERS", "blog_post", "code_breaks",
           "code_version", "excerpts", "input_checksums", "keep_words", "locked_packages",
           "make_env", "notebook_names", "notebook_pages", "pdf_job", "pdf_workers",
           "render_html", "render_pdf", "render_report", "run_epoch"]

FONT_SLOT = "/*@font-face@*/"


def make_env(templates: Path) -> Environment:
    """The one jinja2 environment: autoescape on, unknown names fail loudly; ``caption``
    gives a chart's caption (``captions``)."""
    env = Environment(loader=FileSystemLoader(str(templates)),
                      autoescape=select_autoescape(["html", "xml"], default=True),
                      undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["caption"] = lambda svg: caption(alt_text(svg))
    return env


def input_checksums(run: Run) -> list[tuple[str, str]]:
    """(repo-relative path, sha256) of every file under data/<RUN>/, in path order, as
    ingest recorded them."""
    from ..core.tables import read_rows

    return sorted((r["path"], r["sha256"]) for r in read_rows(run.paths.tables /
                                                                  "inputs.parquet"))


def code_version(project: Path) -> str:
    """benchreport's version and the git commit it was built from (and whether modified)."""
    import subprocess

    from .. import __version__

    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "notebooks",
                                "templates"], cwd=project, capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha, dirty = "", ""
    commit = f", commit {sha[:12]}" + (" (with local changes)" if dirty else "") if sha else ""
    return f"benchreport {__version__}{commit}"


def locked_packages(project: Path) -> list[tuple[str, str]]:
    lock = project / "requirements.lock"
    if not lock.is_file():
        return []
    out = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and not line.startswith("#"):
            out.append((name, version))
    return out


def render_html(env: Environment, article: Article, edition: str = "screen",
                base_url: str | None = None) -> str:
    """The page as self-contained HTML: fonts subset to the page's own characters, inlined.

    ``edition="print"`` is the PDF's: the appendix is the HTML edition's, where each
    number links (pages of figure ids are no reading), and Korean words are kept whole on
    a line, which WeasyPrint's
    ``word-break`` does not do by itself. In both, flags, paths and identifiers are set as
    code (``codemarks``) and a number is bound to its unit by a no-break space.
    ``base_url`` (where the pages will be served, ``--base-url``) makes the print edition's
    links to the HTML edition absolute, so a PDF read on its own still leads there."""
    page = f"report.{article.lang}.html"
    if base_url:
        page = f"{base_url.rstrip('/')}/{page}"
    # where a PDF read on its own finds the HTML edition: its address, else the file beside it
    html_at = page if base_url else article.t["notice.beside"].format(page=page)
    html = env.get_template("report.html").render(a=article, font_family=FAMILY,
                                                  mono_family=MONO, edition=edition,
                                                  page=page, html_at=html_at,
                                                  absolute=bool(base_url))
    html = mark_code_html(html)
    if edition == "print":      # the appendix a number links to is the HTML edition's
        html = html.replace('<a class="fig" href="#', f'<a class="fig" href="{page}#')
        html = code_breaks(html)
    # a number keeps its unit on the line in both editions; Korean words are kept whole in
    # print only (a browser does that itself, by CSS word-break: keep-all)
    html = keep_words(html, korean=edition == "print" and article.lang == "ko")
    return html.replace(FONT_SLOT, font_face_css(html), 1)


_CODE = re.compile(r"<code>([^<]*)</code>")
# where an identifier or a path may break in a narrow column: after an underscore or a
# slash, and after a dot between letters (a file's extension), never inside a word or a
# number
_CODE_BREAK = re.compile(r"(?<=[_/])(?=\w)|(?<=[A-Za-z]\.)(?=[A-Za-z])")


def code_breaks(html: str) -> str:
    """Code (flags, paths, identifiers) in print with a break opportunity (``<wbr>``) at
    each ``_``, ``/`` and a file's ``.``: a narrow column breaks it there rather than in the
    middle of a word (the print CSS breaks anywhere only where a piece is still too long)."""
    return _CODE.sub(lambda m: "<code>" + _CODE_BREAK.sub("<wbr>", m[1]) + "</code>", html)


_RAW = ("style", "script", "svg", "title")          # elements whose text is left alone
# A run of text with no space, tag or bare '&' (an entity counts as one character); one
# that holds a Hangul syllable is a Korean word. (Matching the Hangul inside the pattern,
# as `(?:…)*[가-힣](?:…)*`, backtracks over every start in a run without any: hours for a
# 200,000-character model name.)
_RUN = re.compile(r"(?:&#?\w+;|[^\s<>&])+")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
KEEP_LONGEST = 24     # longer tokens (a path with a Korean word in it) may still break
# a linked number and the Korean word right after it ("5" + "개는")
_LINKED = re.compile(r'(<a class="fig"[^>]*>[^<]{1,14}</a>)([\uac00-\ud7a3]+)')


# a number and the unit after it stay on one line ("100,347.9 ms", "3,072 tokens")
_UNIT = re.compile(r"(?<=\d) (?=(?:ms|s|ns|tok/s|req/s|tokens?|requests?|GPUs?|records|×|"
                   r"[KMGT]i?B|[KMGT]B/s|GB/s|TB/s|W|토큰|개|회|배)"
                   r"(?![A-Za-z0-9/]))")


def keep_words(html: str, korean: bool = True) -> str:
    """Keep what belongs together on one line in the page's text: a number and its unit,
    and (``korean``) each Korean word (eojeol), wrapped in a span that does not break.

    CSS ``word-break: keep-all`` does the latter in a browser; WeasyPrint breaks Hangul
    between any two syllables, so the print edition says it per word."""
    if korean:
        html = _LINKED.sub(r'<span class="kw">\1\2</span>', html)

    def kept(text: str) -> str:
        text = _UNIT.sub("\u00a0", text)
        return _RUN.sub(_kept_word, text) if korean else text

    return map_text(html, kept, _RAW)


# the Korean part of a long token ("10:12:05.050–10:12:15.367(보정값)"), kept whole on its own
_HANGUL_PART = re.compile(r"[(\[]?[\uac00-\ud7a3]+[)\]]?")


def _kept_word(m: re.Match) -> str:
    word = m.group(0)
    if not _HANGUL.search(word):
        return word
    if len(word) > KEEP_LONGEST:
        return _HANGUL_PART.sub(lambda h: f'<span class="kw">{h.group(0)}</span>', word)
    return f'<span class="kw">{word}</span>'


def render_pdf(html: str, path: Path, epoch: int) -> None:
    """HTML to PDF. ``epoch`` (seconds) stands in for "now" wherever a timestamp would be
    written (fontTools stamps re-subset fonts), so the same input gives the same bytes."""
    import logging
    import os

    import weasyprint

    # Fonts are subset by fontTools before WeasyPrint sees them; its notice about
    # HarfBuzz-Subset is not actionable here.
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    # No base_url: the page references nothing outside itself, so nothing can be fetched.
    previous = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        # a document's boxes hold reference cycles: one collection when it is written, not
        # one every time their number grows by a quarter
        with collector.paused(collect=True):
            document = weasyprint.HTML(string=html, base_url=None).render()
            data = document.write_pdf()
            del document
    finally:
        if previous is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = previous
    write_text_atomic(path, data)


def run_epoch(run: Run) -> int:
    """The run's date as a Unix time (UTC midnight): the only clock the outputs may show.
    A run whose date is not stated gets 1980-01-01, the earliest time a ZIP entry holds."""
    import calendar
    import datetime as dt

    return calendar.timegm((run.meta.date or dt.date(1980, 1, 1)).timetuple())


def excerpts(ing, registry: dict[str, Figure]) -> dict[tuple[str, int], str]:
    """The raw text of each source's first line, from what ingest kept, for the appendix."""
    out: dict[tuple[str, int], str] = {}
    wanted = [(src.path, src.lines[0]) for fig in registry.values() for src in fig.sources
              if src.lines]
    known = ing.excerpts.texts(wanted) if hasattr(ing.excerpts, "texts") else \
        {k: ing.excerpts[k] for k in wanted if k in ing.excerpts}   # one query, not one a line
    for fig in registry.values():
        for src in fig.sources:
            if src.lines and (src.path, src.lines[0]) in known:
                text = known[(src.path, src.lines[0])]
                out[(src.path, src.lines[0])] = text if len(text) <= 300 else \
                    text[:300] + "…"
    return out


def notebook_names(run: Run) -> list[str]:
    """Names of the notebook pages notebook_pages() writes (the article links to them)."""
    if not run.paths.notebooks.is_dir():
        return []
    return [p.with_suffix(".html").name for p in sorted(run.paths.notebooks.glob("*.ipynb"))]


def notebook_pages(folder: Path) -> list[str]:
    """The executed notebooks in ``folder`` as HTML pages next to them (nbconvert, no
    external assets)."""
    import nbformat

    exporter = _page_exporter()
    names = []
    for nb_path in sorted(folder.glob("*.ipynb")):
        body = exporter.page(nbformat.read(nb_path, as_version=4))
        title = nb_path.stem
        page = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}"
                f"</title></head><body>{body}</body></html>\n")
        write_text_atomic(nb_path.with_suffix(".html"), page)
        names.append(nb_path.with_suffix(".html").name)
    return names


@functools.cache
def _page_exporter():
    """One nbconvert exporter (its templates compiled once) for the notebook pages of every
    build in this process."""
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    class Pages(HTMLExporter):
        def page(self, nb) -> str:
            """``nb`` in the 'basic' template. HTMLExporter then parses the page with
            BeautifulSoup (most of its time) to give an image without alt text one and to
            make JupyterLab's cells focusable; the basic template has no JupyterLab cells,
            so only a page with an image takes that path."""
            lang = nb.metadata.get("language_info", {})
            lexer = lang.get("pygments_lexer", lang.get("name", None))
            resources = self._init_resources(None)
            self.register_filter("highlight_code", Highlight2HTML(pygments_lexer=lexer,
                                                                  parent=self))
            self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            html, _ = TemplateExporter.from_notebook_node(self, nb, resources)
            return self.from_notebook_node(nb)[0] if "<img" in html else html

    return Pages(template_name="basic")


def blog_post(run: Run, base_url: str | None = None) -> Post:
    """The blog post's slug (run.yaml's ``slug``, else the run id) and tags (the model,
    each engine, the GPU), as run.yaml names them."""
    names = [run.meta.model.get("name"), *(e.name for e in run.meta.engines),
             run.meta.hardware.get("gpu_model")]
    tags = tuple(dict.fromkeys(str(n) for n in names if n))
    return Post(slug=run.meta.slug or run.id, tags=tags, base_url=base_url)


def render_report(run: Run, registry: dict[str, Figure], *, project: Path,
                  pdf: bool = True, base_url: str | None = None) -> list[Path]:
    """Write report.<lang>.html and (``pdf``) report.<lang>.pdf for every language, and the
    blog bundle (``base_url``: where it will be served, for absolute links); return
    the paths. What run.yaml declares (title, sources, model, …) is the user's own text and
    is shown through ``core.redact`` (credentials in URLs, tokens)."""
    from ..core.display import display_meta
    from ..core.redact import redact_value
    from ..core.tables import load_ingested, read_rows, warnings_of
    from .charts import (
        acceptance_chart,
        chunk_chart,
        curve_charts,
        decode_chart,
        durations_chart,
        gantt_chart,
        latency_chart,
        pareto_charts,
        server_chart,
        state_charts,
    )

    # run.yaml's text as the report shows it: redacted, and its names shortened
    run = dataclasses.replace(run, meta=display_meta(redact_value(run.meta)))
    templates = project / "templates"
    with pdf_workers() if pdf else contextlib.nullcontext((None, [])) as (pool, warm):
        # The workers import WeasyPrint while this process draws charts and writes HTML;
        # each language's PDF starts as soon as its HTML exists.
        env = make_env(templates)
        inputs = input_checksums(run)
        packages = [("code", code_version(project))] + locked_packages(project)
        caveats = read_json(run.paths.caveats_json) if run.paths.caveats_json.is_file() \
            else {}
        claims = read_json(run.paths.claims_json) if run.paths.claims_json.is_file() else []
        ing = load_ingested(run) if run.paths.ingest_json.is_file() else None
        lines = excerpts(ing, registry) if ing else {}
        chunks = read_rows(run.paths.prefill_chunks) if run.paths.prefill_chunks.is_file() \
            else []
        scraped = read_rows(run.paths.server_series) if run.paths.server_series.is_file() \
            else []
        timed = read_rows(run.paths.timeline) if run.paths.timeline.is_file() else []
        notebook_html = notebook_names(run)
        ingest_notes = warnings_of(ing.summaries) if ing else []
        written = []
        pdfs = []
        # the bundle is made whole each time: no image or page of an earlier build stays in it
        shutil.rmtree(run.paths.report / "blog", ignore_errors=True)
        for lang in LANGS:
            t = load_catalogue(templates / "labels", lang)
            durations = [c for c in [durations_chart(run, registry, t)] if c]
            latency = [c for c in [latency_chart(run, registry, t)] if c]
            # a reconstruction's latency is generator output: its chart goes with the table
            # to the latency appendix (publish.narrative.latency_appendix)
            charts = {"results": durations if run.meta.reconstruction else durations + latency,
                      "latency": latency if run.meta.reconstruction else [],
                      "spec": [c for c in [acceptance_chart(run, registry, t)] if c],
                      "curves": curve_charts(run, registry, t),
                      "pareto": pareto_charts(run, registry, t),
                      "server": [c for c in [server_chart(run, scraped, t)] if c],
                      "cache": state_charts(run, scraped, t,
                                            ing.windows if ing is not None else ()),
                      "timeline": [c for c in [gantt_chart(run, timed, t)] if c]}
            if ing is not None:
                charts["decode"] = [c for c in [decode_chart(run, ing, registry, t)] if c]
                charts["prefill"] = [c for c in [chunk_chart(run, chunks, t)] if c]
            article = build_article(run, registry, lang, t, Given(
                inputs=inputs, packages=packages, caveats=caveats or {}, claims=claims or [],
                charts=charts, excerpts=lines or {}, notebooks=notebook_html or [],
                ingest_notes=ingest_notes,
                windows=ing.windows + ing.point_windows if ing else []))
            html = render_html(env, article)
            if pdf:
                pdfs.append(pool.submit(pdf_job, (render_html(env, article, "print",
                                                              base_url),
                                                   run.paths.pdf(lang), run_epoch(run))))
                written.append(run.paths.pdf(lang))
            written += write_blog(run.paths.report / "blog", article, charts, html,
                                  blog_post(run, base_url))
            write_text_atomic(run.paths.html(lang), html)
            written.append(run.paths.html(lang))
        notebook_pages(run.paths.notebooks)
        for future in warm + pdfs:
            future.result()
    return written


PDF_WORKERS = 2


@contextlib.contextmanager
def pdf_workers():
    """Worker processes for the PDFs. They ignore Ctrl-C, which the main process handles:
    when it stops the render (Ctrl-C or an error), it ends them at once rather than wait
    for a PDF nobody will keep, and no worker prints a traceback of its own."""
    import multiprocessing
    import signal
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(PDF_WORKERS, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_ignore_interrupt, initargs=(os.getpid(),))
    try:
        # The workers start with the first tasks (the warm-up), with SIGINT blocked until
        # their initializer ignores it: a Ctrl-C at that moment reaches no worker.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            warm = [pool.submit(_warm_up) for _ in range(PDF_WORKERS)]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        yield pool, warm
    except BaseException:
        # The pool's own handles (it has no public way to end its workers before Python
        # 3.14), taken before shutdown() drops them.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join()
        raise
    pool.shutdown(wait=True)


def _ignore_interrupt(parent: int) -> None:
    import signal

    from ..core.children import die_with_parent

    die_with_parent(parent)     # a build killed with kill -9 leaves no PDF worker behind
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _warm_up() -> None:
    import weasyprint  # noqa: F401

    collector.freeze()      # what every PDF's collection would walk again


def pdf_job(job: tuple) -> None:
    html, path, epoch = job
    render_pdf(html, path, epoch)


