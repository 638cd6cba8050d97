"""The blog export pastes into a blog: rendered by a CommonMark renderer (markdown-it-py) with
its typographer on, as Hugo's and Jekyll's are, nothing of the article's code turns into a
dash or emphasis, every image is its own paragraph with a numbered caption, and the front
matter carries a description from the lede, tags and a slug."""

from __future__ import annotations

import re

import pytest
from markupsafe import Markup

from benchreport.publish.blog import Post, description, markdown, plain
from benchreport.publish.codemarks import is_code, mark_code_html, split_code
from benchreport.publish.narrative import Article

pytest.importorskip("markdown_it")


def _render(md: str) -> str:
    from markdown_it import MarkdownIt

    body = md.split("---\n", 2)[2]        # the front matter is the blog engine's, not Markdown
    return MarkdownIt("commonmark", {"typographer": True}).enable(
        ["replacements", "smartquotes", "table"]).render(body)


@pytest.mark.parametrize("token, code", [
    ("--gpu-memory-utilization", True), ("--dcp-size=8", True), ("kv_lora_rank", True),
    ("decode_context_parallel_size=1", True), ("data/2024-b300/raw/", True),
    ("vllm/vllm-openai:v0.11.0", True), ("moonshotai/Kimi-K2-Instruct", True),
    ("/models/Kimi-K3-DSpark", True), ("config.json", True), ("fp8_e4m3", True),
    ("tok/s", False), ("TB/s", False), ("64K/200K", False), ("Kimi-K3", False),
    ("v0.11.0", False), ("1.17", False), ("https://example.org/a/b", False), ("p99", False),
])
def test_what_reads_as_code(token, code):
    assert is_code(token) is code


def test_a_flag_keeps_its_number_and_a_korean_particle_stays_text():
    assert split_code("SGLang --dcp-size 8로, vLLM --gpu-memory-utilization 0.95.") == [
        ("SGLang ", False), ("--dcp-size 8", True), ("로, vLLM ", False),
        ("--gpu-memory-utilization 0.95", True), (".", False)]


def test_html_code_marks_leave_tags_drawings_and_existing_code_alone():
    html = ('<p title="a_b">set x_y, see <code>q_r</code> <svg><text>m_n</text></svg>'
            '<a class="fig" href="#f">0.95</a> in data/x/</p>')
    assert mark_code_html(html) == (
        '<p title="a_b">set <code>x_y</code>, see <code>q_r</code> <svg><text>m_n</text></svg>'
        '<a class="fig" href="#f">0.95</a> in <code>data/x/</code></p>')


def _article(**kw) -> Article:
    t = {"notice.reconstruction": "About the data:", "notice.marks": "Marks.",
         "notice.notes": "Note:",
         "section.summary": "At a glance", "section.environment": "Test setup",
         "table.setting": "Setting", "section.results": "Results", "table.engine": "Engine",
         "table.duration": "Duration", "heading.finding": "Finding",
         "section.derivation": "Appendix", "figure.caption": "Figure {n}. {caption}",
         "heading.settings": "Settings", "section.assumed": "Assumed",
         "section.generator_appendix": "Generator", "section.generator_intro": "Intro",
         "heading.latency": "Latency"}
    values = dict(lang="en", other_lang="ko", t=t, title="A run", date="2026-01-15",
                  reconstruction=None,
                  headline=[Markup("SGLang ran with <b>--dcp-size 8</b> and vLLM with "
                                   "decode_context_parallel_size=1: the order reversed.")],
                  environment=[], assumed=[], generator=[], results=[], derivations=[],
                  inputs=[])
    values.update(kw)
    return Article(**values)


def test_the_markdown_pastes(tmp_path):
    from benchreport.publish.narrative import Section

    section = Section(id="decode", heading="Decode", paragraphs=[
        Markup("Set by --mem-fraction-static 0.88 and --max-running-requests 10 -- as "
               "logged in data/run/raw/sglang/server.log, with kv_lora_rank 512.")])
    article = _article(sections=[section])
    images = {"decode": [("images/en-decode-1.png", "Decode throughput over the run: vLLM 400"),
                         ("images/en-decode-2.png", "Server state. 64K vLLM: queued 8")]}
    md = markdown(article, images, Post(slug="a-run", tags=("Kimi-K3", "vLLM")))
    front = md.split("---\n")[1]
    assert 'slug: "a-run"' in front and 'tags: ["Kimi-K3", "vLLM"]' in front
    assert 'description: "SGLang ran with --dcp-size 8 and vLLM with ' in front
    # every image a paragraph of its own, a blank line around it, a numbered caption under it
    for n, path in enumerate(("images/en-decode-1.png", "images/en-decode-2.png"), start=1):
        block = re.search(r"\n\n(!\[[^\]]*\]\(" + re.escape(path) + r"\))\n\n(\*[^\n]*\*)\n\n",
                          md)
        assert block, path
        assert block.group(2).startswith(f"*Figure {n}. ")
    assert "*Figure 1. Decode throughput over the run*" in md
    assert "*Figure 2. Server state*" in md
    html = _render(md)
    assert len(re.findall(r"<p><img [^>]*></p>", html)) == 2
    # code survives the typographer; the prose's own " -- " may become a dash
    for code in ("--dcp-size 8", "--mem-fraction-static 0.88", "--max-running-requests 10",
                 "data/run/raw/sglang/server.log", "kv_lora_rank",
                 "decode_context_parallel_size=1"):
        assert f"<code>{code}</code>" in html, code
    assert html.count("–") == 1 and "</code> – as" in html
    assert '<a href="report.en.html#derivation">' in html


@pytest.mark.parametrize("date, reconstruction, line", [
    ("2026-01-15", None, "date: 2026-01-15"),
    ("2026-01-15", Markup("Reconstructed."), None),     # the files' date, not the post's
    ("not stated", None, None),                          # no date a blog engine can read
])
def test_the_front_matter_dates_a_post_only_by_a_real_runs_date(date, reconstruction, line):
    md = markdown(_article(date=date, reconstruction=reconstruction), {"results": []},
                  Post(slug="x"))
    dated = [x for x in md.split("---\n")[1].splitlines() if x.startswith("date:")]
    assert dated == ([line] if line else [])


def test_base_url_makes_links_absolute():
    article = _article()
    md = markdown(article, {"results": []}, Post(slug="x", base_url="https://blog.example/p/"))
    assert "(https://blog.example/p/report.en.html#derivation)" in md
    assert Post(slug="x", base_url="https://b.example/p").link("images/a.png") == \
        "https://b.example/p/images/a.png"


def test_a_long_lede_is_cut_at_a_word_for_the_description():
    long = Markup(" ".join(["word"] * 80))
    text = description(_article(headline=[long]))
    assert text.endswith("word…") and len(text) <= 201


def test_code_spans_never_carry_template_syntax():
    # braces, pipes and backticks are never part of a code token: Liquid and Hugo
    # shortcodes stay escaped, and a table cell cannot be split
    assert plain("a {{ x_y }} b|c `d_e`") == "a &#123;&#123; `x_y` &#125;&#125; b\\|c \\``d_e`\\`"


def test_built_bundle_pastes(built_blog):
    md, html_page = built_blog
    lines = md.split("\n")
    images = [i for i, line in enumerate(lines) if line.startswith("![")]
    assert images
    for i in images:
        assert lines[i - 1] == "" and lines[i + 1] == "" and lines[i + 2].startswith("*Figure ")
    rendered = _render(md)
    assert len(re.findall(r"<p><img [^>]*></p>", rendered)) == len(images)
    assert html_page.startswith("<!DOCTYPE html>")


@pytest.fixture(scope="module")
def built_blog(mini_build):
    run, _ = mini_build
    blog = run.paths.report / "blog"
    return (blog / "index.en.md").read_text(), (blog / "report.en.html").read_text()


def test_base_url_makes_the_print_editions_links_to_the_html_edition_absolute():
    """The PDF names the appendices the HTML edition alone shows and links each number
    there: with --base-url those links are absolute, so a PDF read on its own leads there;
    without it they stay beside the PDF."""
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative import Section
    from benchreport.publish.render import make_env, render_html

    from .conftest import ROOT

    t = load_catalogue(ROOT / "templates" / "labels", "en")
    article = _article(t=t, sections=[
        Section(id="conclusion", heading="Conclusion", paragraphs=[
            Markup('It took <a class="fig" href="#fig-e2e">100.5 s</a>.')]),
        Section(id="decode", heading="Appendix: Decode", screen_only=True)])
    env = make_env(ROOT / "templates")
    served = render_html(env, article, "print", "https://blog.example/posts/run/")
    assert 'href="https://blog.example/posts/run/report.en.html#decode"' in served
    assert 'href="https://blog.example/posts/run/report.en.html#fig-e2e"' in served
    assert "(https://blog.example/posts/run/report.en.html)" in served   # the ledger pointer
    # the appendix of what the HTML edition alone shows says where that edition is
    assert "The HTML edition is at https://blog.example/posts/run/report.en.html." in served
    local = render_html(env, article, "print")
    assert 'href="report.en.html#fig-e2e"' in local
    # the appendix list is plain text without an address: a printed link leads nowhere
    # (the eleventh editor read)
    assert 'href="report.en.html#decode"' not in local and "<li>Appendix: Decode</li>" in local
    assert "The HTML edition is at <code>report.<wbr>en.<wbr>html</code>, in the same folder " \
           "as this PDF." in local
    screen = render_html(env, article, "screen", "https://blog.example/posts/run/")
    assert 'href="#fig-e2e"' in screen and 'id="decode"' in screen


def test_print_and_blog_leave_out_a_tables_screen_columns_and_say_where_they_are():
    """A table's evidence column (file:line) is the HTML edition's: the PDF and the blog
    post leave it out and say so once, under the tables; the HTML keeps it."""
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative import Section
    from benchreport.publish.render import make_env, render_html
    from benchreport.publish.sections import Table

    from .conftest import ROOT

    t = load_catalogue(ROOT / "templates" / "labels", "en")
    table = Table(header=["What", "Found", "Evidence"],
                  rows=[[Markup("Warm-up"), Markup("none before it"),
                         Markup("raw/vllm/server.log:2")]], screen_columns=(2,))
    article = _article(t=t, sections=[Section(id="caveats", heading="Not controlled",
                                              tables=[table], print_note=Markup("In HTML."))])
    env = make_env(ROOT / "templates")
    printed = render_html(env, article, "print")
    assert "<th>Found</th>" in printed and "none before it" in printed   # the value stays
    assert "server.log" not in printed and "<th>Evidence</th>" not in printed
    assert "<p>In HTML.</p>" in printed
    screen = render_html(env, article, "screen")
    assert "<th>Evidence</th>" in screen and "In HTML." not in screen
    md = markdown(article, {})
    assert "| What | Found |\n|---|---|\n| Warm-up | none before it |" in md
    assert "server.log" not in md and "In HTML." in md


def test_print_code_breaks_at_underscores_slashes_and_extensions_only():
    from benchreport.publish.render import code_breaks

    assert code_breaks("<p><code>speculative_num_draft_tokens</code> 0.95</p>") == \
        "<p><code>speculative_<wbr>num_<wbr>draft_<wbr>tokens</code> 0.95</p>"
    assert code_breaks("<code>raw/sglang/a_1.jsonl</code> <code>0.95</code>") == \
        "<code>raw/<wbr>sglang/<wbr>a_<wbr>1.jsonl</code> <code>0.95</code>"


def test_print_leaves_out_the_legend_items_and_paragraphs_only_the_html_rows_need():
    """A legend item (``Items.screen``) or a whole paragraph (``screen_only``) that explains
    what only the HTML edition's rows show is left out of the PDF and the blog post, and
    kept in the HTML."""
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative import Section
    from benchreport.publish.render import make_env, render_html
    from benchreport.publish.sections import Items

    from .conftest import ROOT

    t = load_catalogue(ROOT / "templates" / "labels", "en")
    legend = Items(Markup("Verdicts:"), [Markup("printed-verdict"), Markup("html-verdict")],
                   screen=(1,))
    share = Items(Markup("html-only-share"), [], screen_only=True)
    article = _article(t=t, sections=[Section(id="claims", heading="Claims",
                                              paragraphs=[legend, share])])
    env = make_env(ROOT / "templates")
    printed, screen = render_html(env, article, "print"), render_html(env, article, "screen")
    assert "printed-verdict" in printed and "html-verdict" not in printed
    assert "html-only-share" not in printed
    assert all(x in screen for x in ("printed-verdict", "html-verdict", "html-only-share"))
    md = markdown(article, {"results": []}, Post(slug="x"))
    assert "- printed-verdict" in md and "html-verdict" not in md
    assert "html-only-share" not in md
