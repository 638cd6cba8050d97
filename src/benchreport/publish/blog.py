"""Blog export: a page bundle, one Markdown file per language, the images and the report.

Layout (``report/<RUN>/blog/``)::

    index.ko.md  index.en.md        the post, front matter first (Hugo's multilingual names)
    images/<lang>-<section>-<n>.png the charts (and .svg), each its own numbered figure
    report.ko.html  report.en.html  the article the post links to for its appendix

The folder is a Hugo leaf bundle as it is (copy it under ``content/posts/<slug>/``). For a
Jekyll post, give ``--base-url`` (where the folder will be served): image and report links
are then absolute, and ``index.<lang>.md`` can be saved as ``_posts/<date>-<slug>.md``.
Hugo does not publish an ``.html`` file inside a bundle either, so a Hugo site that should
serve the report gives ``--base-url`` too.

Text is taken from the same Article the HTML is made of; everything that came from data is
escaped for Markdown (angle brackets, braces, table pipes, emphasis and link markers), so log
or config text cannot become markup, or template code of the blog engine, either. Flags,
paths and identifiers are code spans, so a typographer (SmartyPants, Hugo's and Jekyll's)
leaves their ``--`` and quotes alone. Every image is a paragraph of its own, with a blank
line before and after it, and a numbered caption under it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from markupsafe import Markup

from ..core.files import write_text_atomic
from .captions import alt_text, caption
from .codemarks import split_code
from .narrative import Article
from .sections import Items

__all__ = ["DESCRIPTION_CHARS", "Post", "description", "front_matter", "markdown", "plain",
           "write_blog"]

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def plain(html: Markup | str) -> str:
    """Markup to Markdown-safe text: tags dropped; flags, paths and identifiers in backticks
    (``codemarks``: a code span is taken literally, so no typographer makes ``--`` a dash),
    the rest with < > & and Markdown marks escaped. A code token never holds a brace, a
    backtick or a pipe."""
    # a line break inside a cell (a claim and its article, a verdict and its basis) reads
    # as a separator in one Markdown line
    text = Markup(str(html).replace("<br>", " · ")).striptags() if isinstance(html, Markup) \
        else str(html)
    return "".join(f"`{piece}`" if code else _escaped(piece) for piece, code in split_code(text))


def _escaped(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # Braces as character references: blog engines run templates over Markdown (Jekyll's
    # Liquid evaluates {{ }} and {% %}, Hugo's shortcodes are {{< >}} and {{% %}}).
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return text.replace("{", "&#123;").replace("}", "&#125;")


# characters that YAML 1.1 readers (Jekyll's, PyYAML) take as line breaks, which JSON leaves as
# they are
_YAML_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _quoted(text: str) -> str:
    """One line, double-quoted: a JSON string is a YAML double-quoted scalar, with newlines,
    quotes and control characters escaped, so no value can end the front matter."""
    out = json.dumps(text, ensure_ascii=False)
    for char, escape in _YAML_BREAKS.items():
        out = out.replace(char, escape)
    return out


def front_matter(fields: dict[str, str]) -> list[str]:
    """The Markdown's front matter, every value on its own line and quoted (a date in ISO
    form stays a bare YAML date, as blog engines expect)."""
    lines = ["---"]
    for key, value in fields.items():
        bare = key == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value)
        lines.append(f"{key}: {value if bare else _quoted(value)}")
    return [*lines, "---"]


def _table(header: list[str], rows: list[list], collapsed: tuple[int, ...] = (),
           note: Markup | str = "", hidden: tuple[int, ...] = ()) -> list[str]:
    """A Markdown table; the ``collapsed`` rows and the ``hidden`` columns (the HTML
    edition's only) left out, and ``note`` said after it."""
    def kept(cells: list) -> list:
        return [c for i, c in enumerate(cells) if i not in hidden]

    out = ["| " + " | ".join(plain(h) for h in kept(header)) + " |",
           "|" + "---|" * len(kept(header))]
    out += ["| " + " | ".join(plain(c) for c in kept(row)) + " |"
            for i, row in enumerate(rows) if i not in collapsed]
    return out + [""] + ([plain(note), ""] if note else [])


@dataclass(frozen=True)
class Post:
    """What a blog needs beyond the article: the post's slug and tags, and where the bundle
    will be served (None: links stay relative to the bundle)."""

    slug: str
    tags: tuple[str, ...] = ()
    base_url: str | None = None

    def link(self, path: str) -> str:
        """``path`` (inside the bundle) as the post links to it."""
        return f"{self.base_url.rstrip('/')}/{path}" if self.base_url else path


def _text(markup: Markup | str) -> str:
    return Markup(str(markup)).striptags() if isinstance(markup, Markup) else str(markup)


DESCRIPTION_CHARS = 200


def description(article: Article) -> str:
    """The post's description (a social preview): the lede's first sentence, whole if it is
    short enough, else cut at a word."""
    first = _text(article.headline[0]) if article.headline else article.title
    if len(first) <= DESCRIPTION_CHARS:
        return first
    cut = first[:DESCRIPTION_CHARS].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


class _Figures:
    """The post's images in order, each its own paragraph with a numbered caption."""

    def __init__(self, t: dict[str, str], post: Post) -> None:
        self.t, self.post, self.n = t, post, 0

    def lines(self, images: list[tuple[str, str]], fallback: str = "") -> list[str]:
        out: list[str] = []
        for path, alt in images:
            self.n += 1
            text = self.t["figure.caption"].format(n=self.n, caption=caption(alt or fallback))
            out += ["", f"![{plain(alt or fallback)}]({self.post.link(path)})", "",
                    f"*{plain(text)}*", ""]
        return out


def _front(article: Article, post: Post) -> list[str]:
    """Title, date, language, description, slug and tags. The date is the run's, and only
    when run.yaml gives one and the files are a real run's: a reconstruction's files carry
    a date they were made for, not one a post should be dated by (and "not stated" is no
    date a blog engine can read); without it the blog takes the file's name or its own."""
    fields = {"title": article.title, "date": article.date, "lang": article.lang,
              "description": description(article), "slug": post.slug}
    if article.reconstruction or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", article.date):
        del fields["date"]
    lines = front_matter(fields)
    tags = "tags: " + json.dumps(list(post.tags), ensure_ascii=False)
    return [*lines[:-1], tags, lines[-1]]


def _setup(article: Article) -> list[str]:
    t = article.t
    lines = ["", f"## {plain(t['section.environment'])}", ""]
    lines += _table([t["table.setting"], ""], [[c.label, c.value] for c in article.environment])
    if article.settings:
        heading = "heading.settings_reconstructed" if article.reconstruction \
            else "heading.settings"
        lines += [f"### {plain(t[heading])}", ""]
        lines += _table(article.settings.header, article.settings.rows)
    if article.assumed:
        lines += [f"### {plain(t['section.assumed'])}", ""]
        lines += _table([t["table.setting"], ""], [[c.label, c.value] for c in article.assumed])
    return lines


def _finding(article: Article) -> list[str]:
    """The key finding, and apart the questions the data of a reconstruction cannot answer."""
    f, t = article.finding, article.t
    if not f:
        return []
    lines = [f"## {plain(t['heading.finding'] if f.said else t['heading.unanswered'])}", ""]
    if f.said:
        lines += [" ".join(plain(p) for p in f.said), ""]
    if f.unanswered:
        lines += [f"### {plain(t['heading.unanswered'])}", ""] if f.said else []
        lines += [plain(t["finding.unanswered_intro"]), ""]
        lines += [f"- {plain(q)}" for q in f.unanswered] + [""]
    return lines


def _screen_only(article: Article, post: Post) -> list[str]:
    """The sections the HTML edition alone shows, named and linked."""
    t, page = article.t, post.link(f"report.{article.lang}.html")
    if not article.screen_only and not article.generator:
        return []
    named = [(s.heading, s.id) for s in article.screen_only] + \
        ([(t["section.generator_appendix"], "generator")] if article.generator else [])
    return [f"## {plain(t['section.screen_only'])}", "", plain(t["section.screen_only_intro"]),
            "", *(f"- [{plain(h)}]({page}#{sid})" for h, sid in named), ""]


def _results(article: Article, images: dict, figures: _Figures) -> list[str]:
    t = article.t
    lines: list[str] = []
    if article.results:        # as the page: no heading over nothing
        lines += [f"## {plain(t['section.results'])}", ""]
        lines += figures.lines(images.get("results", []))
    for r in article.results:
        lines += ["", f"### {plain(r.heading)}", ""]
        lines += _table([t["table.engine"], t["table.duration"]], r.rows)
        lines += [plain(r.sentence), ""]
        if r.latency:
            lines += [f"#### {plain(t['heading.latency'])}", ""]
            lines += _table(r.latency.header, r.latency.rows)
        for note in r.latency_notes:
            lines += [plain(note), ""]
    return lines


def markdown(article: Article, images: dict[str, list[tuple[str, str]]],
             post: Post | None = None) -> str:
    """The article as Markdown; ``images`` maps a section id to (image path, alt text)."""
    post = post or Post(slug="report")
    t = article.t
    figures = _Figures(t, post)
    lines = [*_front(article, post), ""]
    if article.reconstruction:
        lines += [f"> **{plain(t['notice.reconstruction'])}** {plain(article.reconstruction)} "
                  f"{plain(t['notice.marks'])}",
                  ""]
    if article.writeups:
        lines += [f"**{plain(t['writeups.heading'])}** {plain(t['writeups.intro'])}", ""]
        lines += [f"- {c.markdown(_escaped)}" for c in article.writeups] + [""]
    if article.notes:
        lines += [f"> **{plain(t['notice.notes'])}** {plain(article.notes)}", ""]
    lines += [f"## {plain(t['section.summary'])}", ""]
    lines += [f"- {plain(s)}" for s in article.headline]
    lines += _setup(article) + _results(article, images, figures)
    lines += _finding(article)
    for s in article.printed:
        lines += [f"## {plain(s.heading)}", ""]
        lines += figures.lines(images.get(s.id, []), s.heading)
        for p in s.paragraphs:
            if isinstance(p, Items) and p.screen_only:      # the HTML edition's only
                continue
            lines += [plain(p.lead), "", *(f"- {plain(i)}" for i in p.printed()), ""] \
                if isinstance(p, Items) else [plain(p), ""]
        for table in s.tables:
            lines += _table(table.header, table.rows, table.collapsed, table.collapsed_note,
                            table.screen_columns)
            if table.collapsed:         # the note says the HTML edition has every row: link it
                lines += [f"[{plain(t['blog.full_table'])}]"
                          f"({post.link(f'report.{article.lang}.html')}#{s.id})", ""]
        lines += [plain(s.print_note), ""] if s.print_note else []
    lines += _screen_only(article, post)
    lines += [f"[{plain(t['section.derivation'])}]"
              f"({post.link(f'report.{article.lang}.html')}#derivation)", ""]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))


def _svg_file(svg: Markup) -> str:
    text = str(svg)
    if 'xmlns="http://www.w3.org/2000/svg"' not in text:
        text = text.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + text


def write_blog(folder, article: Article, charts: dict[str, list[Markup]], html: str,
               post: Post) -> list:
    """Write the bundle: index.<lang>.md, images/<lang>-<section>-<n>.svg (and .png), and
    report.<lang>.html (``html``, the page the post links to)."""
    images: dict[str, list[tuple[str, str]]] = {}
    written = []
    hidden = {s.id for s in article.screen_only}      # the HTML page beside it has them
    for section, svgs in sorted(charts.items()):
        if section in hidden:
            continue
        for i, svg in enumerate(svgs, start=1):
            name = f"images/{article.lang}-{section}-{i}.svg"
            path = folder / name
            write_text_atomic(path, _svg_file(svg))
            written.append(path)
            png = getattr(svg, "png", b"")
            if png:
                # the same chart at twice its size: what the Markdown shows, since a blog
                # serves an SVG without the page's fonts (Hangul labels would not render)
                write_text_atomic(path.with_suffix(".png"), png)
                written.append(path.with_suffix(".png"))
                name = name[:-len(".svg")] + ".png"
            images.setdefault(section, []).append((name, alt_text(svg)))
    md = folder / f"index.{article.lang}.md"
    write_text_atomic(md, markdown(article, images, post))
    page = folder / f"report.{article.lang}.html"
    write_text_atomic(page, _unlinked_notebooks(html))
    return written + [md, page]


_NOTEBOOK_LINK = re.compile(r'<a href="notebooks/[^"]*">(.*?)</a>')


def _unlinked_notebooks(html: str) -> str:
    """The page as the bundle ships it: the executed notebooks stay in the report folder,
    not in the bundle, so their links become their names (a link would lead nowhere)."""
    return _NOTEBOOK_LINK.sub(
        lambda m: m[1] if m[1].startswith("<code") else f"<code>{m[1]}</code>", html)
