"""Text from logs and configs is data, never markup or template code.

One build of the reference run, with markup and Jinja syntax planted in a server-log line
(an out-of-memory warning the caveats quote), in a launch flag (the MoE backend the
settings table compares) and in the model name of run.yaml. Each must come out as the
same visible text in the HTML, the PDF and the blog Markdown, and nothing may run. (The
build is the session's ``planted_build``, which has tests/test_redaction.py's secrets
planted as well: tests/planted.py.)
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .planted import EXPR, HOSTILE, LOG_SHOWN, RUN, SCRIPT, YAML_SHOWN


@pytest.fixture(scope="module")
def hostile(planted_build) -> Path:
    """The planted reference run's report folder (read-only)."""
    return planted_build / "report" / RUN


class Elements(HTMLParser):
    """Tags and attributes of an HTML page, and its visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> Elements:
    parser = Elements()
    parser.feed(page)
    return parser


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def assert_inert(page: str) -> Elements:
    """No element the planted text could have made; the planted text visible verbatim."""
    doc = parse(page)
    assert not [t for t, _ in doc.tags if t == "script"]
    assert not [a for t, a in doc.tags if t == "img" and a.get("src") == "x"]
    assert not [a for _, a in doc.tags if "onerror" in a]
    assert "LOOPLOOP" not in " ".join(doc.text)          # the for loop never ran
    return doc


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_html_shows_the_planted_text_as_text(hostile, lang):
    page = (hostile / f"report.{lang}.html").read_text()
    doc = assert_inert(page)
    visible = " ".join(doc.text)
    for bad in HOSTILE:
        # in the quoted log line, the settings table and the model name
        assert visible.count(bad) >= 3, bad
    assert html.escape(SCRIPT, quote=False) in page


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_pdf_text_layer_shows_the_planted_text(hostile, lang):
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(hostile / f"report.{lang}.pdf")
    text = squeeze("".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf))))
    for bad in HOSTILE:
        assert text.count(squeeze(bad)) >= 3, bad


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_blog_markdown_renders_the_planted_text_as_text(hostile, lang):
    import mistune

    source = (hostile / "blog" / f"index.{lang}.md").read_text()
    body = source.split("\n---\n", 1)[1]               # after the front matter
    # Static-site generators run their own templates over Markdown (Jekyll's Liquid
    # evaluates {{ }} and {% %}; Hugo's shortcodes are {{< >}} / {{% %}}): no braces.
    assert "{{" not in body and "{%" not in body
    page = mistune.html(body)
    doc = assert_inert(page)
    visible = " ".join(doc.text)
    for bad in HOSTILE:
        assert bad in visible, bad


def test_executed_notebook_pages_are_inert(hostile):
    for page in sorted((hostile / "notebooks").glob("*.html")):
        text = page.read_text()
        assert SCRIPT not in text and "<img src=x" not in text, page.name


def test_no_value_can_end_the_blog_front_matter():
    """A title with a newline used to end the front matter, putting what followed (a raw
    <script>, Liquid's {{ }}) in the blog's body."""
    import datetime

    import yaml

    from benchreport.publish.blog import front_matter

    title = f"Kimi-K3\n---\n{SCRIPT} {EXPR}\u2028\x1b[31m \"quoted\" \\ end"
    lines = front_matter({"title": title, "date": "2026-11-20", "lang": "ko",
                          "description": "a: b # not a comment"})
    assert [i for i, line in enumerate(lines) if line == "---"] == [0, len(lines) - 1]
    assert len(lines) == 6                          # one line per value
    assert yaml.safe_load("\n".join(lines[1:-1])) == {
        "title": title, "date": datetime.date(2026, 11, 20), "lang": "ko",
        "description": "a: b # not a comment"}


def test_control_characters_are_shown_never_passed_on(hostile):
    """ESC, NUL and U+202E from a log line and run.yaml's title reached the HTML, the
    Markdown and the terminal (via the store's runs and explain) as they were."""
    import yaml

    raw = ("\x1b", "\x00", "\u202e")
    outputs = [p for p in sorted(hostile.rglob("*")) if p.is_file() and p.suffix in
               (".html", ".md", ".json", ".ipynb", ".parquet")]
    assert len(outputs) > 20
    for path in outputs:
        if path.suffix == ".parquet":         # compressed: read its values
            import duckdb

            text = repr(duckdb.sql(f"select * from read_parquet('{path}')").fetchall())
            data = text.encode().decode("unicode_escape").encode("utf-8", "surrogatepass")
        else:
            data = path.read_bytes()
        for char in raw:
            assert char.encode() not in data, (path.name, char)
    for lang in ("ko", "en"):
        page = (hostile / f"report.{lang}.html").read_text()
        assert YAML_SHOWN in page and LOG_SHOWN in page, lang          # the title, the log
        md = (hostile / "blog" / f"index.{lang}.md").read_text()
        front = yaml.safe_load(md.split("\n---\n", 1)[0].removeprefix("---\n"))
        assert front["title"].startswith(YAML_SHOWN + " "), lang
