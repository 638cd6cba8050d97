"""Blog export: one Markdown file per language with front matter, and an images folder.

Text is taken from the same Article the HTML is made of; everything that came from data is
escaped for Markdown (angle brackets, braces, table pipes, emphasis and link markers), so log
or config text cannot become markup, or template code of the blog engine, either.
"""

from __future__ import annotations

import json
import re

from markupsafe import Markup

from ..core.files import write_text_atomic
from .narrative import Article

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def plain(html: Markup | str) -> str:
    """Markup to Markdown-safe text: tags dropped, then < > & and Markdown marks escaped."""
    # a line break inside a cell (a claim and its article, a verdict and its basis) reads
    # as a separator in one Markdown line
    text = Markup(str(html).replace("<br>", " · ")).striptags() if isinstance(html, Markup) \
        else str(html)
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


def _table(header: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(plain(h) for h in header) + " |",
           "|" + "---|" * len(header)]
    out += ["| " + " | ".join(plain(c) for c in row) + " |" for row in rows]
    return out + [""]


_ALT = re.compile(r'aria-label="([^"]*)"')


def alt_text(svg: Markup | str) -> str:
    """A chart's own description (the aria-label its SVG carries), as plain text."""
    import html

    found = _ALT.search(str(svg))
    return html.unescape(found.group(1)) if found else ""


def markdown(article: Article, images: dict[str, list[tuple[str, str]]]) -> str:
    """The article as Markdown; ``images`` maps a section id to (image path, alt text)."""
    t = article.t
    fields = {"title": article.title, "date": article.date, "lang": article.lang}
    if article.reconstruction:
        fields["description"] = article.reconstruction
    lines = [*front_matter(fields), ""]
    if article.reconstruction:
        lines += [f"> **{plain(t['notice.reconstruction'])}** {plain(article.reconstruction)}",
                  ""]
    if article.notes:
        lines += [f"> **{plain(t['notice.notes'])}** {plain(article.notes)}", ""]
    lines += [f"## {plain(t['section.summary'])}", ""]
    lines += [f"- {plain(s)}" for s in article.headline]
    if article.finding:
        lines.append(f"- {plain(article.finding)}")
    lines += ["", f"## {plain(t['section.environment'])}", ""]
    lines += _table([t["table.setting"], ""], [[c.label, c.value] for c in article.environment])
    if article.settings:
        lines += [f"### {plain(t['heading.settings'])}", ""]
        lines += _table(article.settings.header, article.settings.rows)
    if article.assumed:
        lines += [f"### {plain(t['section.assumed'])}", ""]
        lines += _table([t["table.setting"], ""], [[c.label, c.value] for c in article.assumed])
    if article.generator:
        lines += [f"### {plain(t['section.generator'])}", "", plain(t["section.generator_intro"]),
                  ""]
        lines += _table([t["table.setting"], ""], [[c.label, c.value] for c in article.generator])
    if article.results:        # as the page: no heading over nothing
        lines += [f"## {plain(t['section.results'])}", ""]
        lines += [f"![{plain(alt)}]({p})" for p, alt in images.get("results", [])]
    for r in article.results:
        lines += ["", f"### {plain(r.heading)}", ""]
        lines += _table([t["table.engine"], t["table.duration"]], r.rows)
        lines += [plain(r.sentence), ""]
        if r.latency:
            lines += [f"#### {plain(t['heading.latency'])}", ""]
            lines += _table(r.latency.header, r.latency.rows)
        for note in r.latency_notes:
            lines += [plain(note), ""]
    if article.finding:
        lines += [f"## {plain(t['heading.finding'])}", "", plain(article.finding), ""]
    for s in article.sections:
        lines += [f"## {plain(s.heading)}", ""]
        lines += [f"![{plain(alt or s.heading)}]({p})" for p, alt in images.get(s.id, [])]
        for p in s.paragraphs:
            lines += [plain(p), ""]
        for table in s.tables:
            lines += _table(table.header, table.rows)
    # the Markdown sits in blog/, the article one folder up
    lines += [f"[{plain(t['section.derivation'])}](../report.{article.lang}.html#derivation)",
              ""]
    return "\n".join(lines)


def write_blog(folder, article: Article, charts: dict[str, list[Markup]]) -> list:
    """Write blog/report.<lang>.md and blog/images/<lang>-<section>-<n>.svg (and .png)."""
    images: dict[str, list[tuple[str, str]]] = {}
    written = []
    for section, svgs in sorted(charts.items()):
        for i, svg in enumerate(svgs, start=1):
            name = f"images/{article.lang}-{section}-{i}.svg"
            path = folder / name
            write_text_atomic(path, '<?xml version="1.0" encoding="utf-8"?>\n'
                              + str(svg).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
                              if 'xmlns="http://www.w3.org/2000/svg"' not in str(svg)
                              else '<?xml version="1.0" encoding="utf-8"?>\n' + str(svg))
            written.append(path)
            png = getattr(svg, "png", b"")
            if png:
                # the same chart at twice its size: what the Markdown shows, since a blog
                # serves an SVG without the page's fonts (Hangul labels would not render)
                write_text_atomic(path.with_suffix(".png"), png)
                written.append(path.with_suffix(".png"))
                name = name[:-len(".svg")] + ".png"
            images.setdefault(section, []).append((name, alt_text(svg)))
    md = folder / f"report.{article.lang}.md"
    write_text_atomic(md, markdown(article, images))
    return written + [md]
