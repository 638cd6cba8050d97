"""run.yaml ``sources:``: the write-ups a report re-derives are named, with their titles,
where the report leans on them (beside the reconstruction notice, in the claim check, in the
blog export); a provenance entry stays a line of where the files came from."""

from __future__ import annotations

import re

import pytest

from benchreport.core.errors import ConfigError
from benchreport.core.runmeta import parse_run_yaml
from benchreport.core.sources import NOT_PUBLISHED, NOT_RECORDED

BASE = """schema: 1
title: {ko: 시험, en: trial}
date: 2026-01-02
hardware: {gpus: 1, gpu_model: X}
model: {name: m}
engines: [{id: vllm, name: vLLM}]
workloads: [{id: w, label: W, input_tokens: 10, output_tokens: 5, concurrency: 1, num_prompts: 2}]
"""


def _meta(sources: str):
    return parse_run_yaml(BASE + "sources:\n" + sources, "run.yaml")


def test_a_writeup_is_read_with_every_field_and_a_provenance_entry_as_written():
    meta = _meta("""  - id: post
    title: {ko: 글 제목, en: The title}
    outlet: Example Blog
    date: 2025-03-04
    url: https://example.org/post
    called: {ko: 본문, en: the post}
  - what: result files
    repository: github.com/a/b
""")
    post, files = meta.sources
    assert post.is_writeup and not files.is_writeup
    assert (post.id, post.outlet, post.date, post.url) == (
        "post", "Example Blog", "2025-03-04", "https://example.org/post")
    assert post.name("ko") == "본문" and post.title_text("en") == "The title"
    assert files.fields == (("what", "result files"), ("repository", "github.com/a/b"))


def test_a_supplied_title_is_bracketed_and_missing_details_are_not_recorded():
    meta = _meta("""  - id: a
    title: {ko: 붙인 제목, en: supplied}
    title_supplied: true
    url: not published
""")
    (a,) = meta.sources
    assert a.title_text("ko") == "[붙인 제목]"
    assert (a.outlet, a.date, a.url) == (NOT_RECORDED, NOT_RECORDED, NOT_PUBLISHED)
    assert a.name("en") == "supplied"          # no short name: the title


@pytest.mark.parametrize("entry, message", [
    ("  - id: a\n    title: {ko: x, en: x}\n    url: example.org/a\n",
     "sources[].url must be an http(s) address"),
    ("  - id: a\n    title: {ko: x, en: x}\n  - id: a\n    title: {ko: y, en: y}\n",
     "two entries with id 'a'"),
    ("  - id: a\n    title: {ko: x}\n", "missing key 'en'"),
    ("  - id: a\n    title: {ko: x, en: x}\n    publisher: p\n", "unknown key sources[].publisher"),
])
def test_a_bad_writeup_is_one_line_naming_the_line(entry, message):
    with pytest.raises(ConfigError) as err:
        _meta(entry)
    assert message in str(err.value) and "run.yaml" in str(err.value.path)
    assert err.value.line >= 9


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).replace("\u00a0", " ")


@pytest.mark.parametrize("lang, name, title", [
    ("ko", "상세편", "[Kimi-K3를 8×B300 한 대에서: 64K·200K 입력의 vLLM과 SGLang (상세한 글)]"),
    ("en", "The detailed post", "[Kimi-K3 on one 8×B300 server: vLLM and SGLang at 64K and "
                                "200K input (the detailed article)]"),
])
def test_the_reference_report_cites_its_writeups_by_title(reference_build, lang, name, title):
    page = (reference_build.paths.report / f"report.{lang}.html").read_text()
    aside = re.search(r'<aside class="notice" id="writeups">(.*?)</aside>', page, re.S)
    assert aside, "no list of the write-ups re-derived"
    text = _text(aside.group(1))
    assert f"{name}: {title}" in text
    # the notice comes first, before the summary
    assert page.index('id="writeups"') < page.index('id="summary"')
    claims = _text(page[page.index('<section id="claims">'):])
    called = {"ko": "상세편·요약편에서", "en": "in the detailed post and the summary post"}
    assert called[lang] in claims[:600]
    blog = (reference_build.paths.report / "blog" / f"index.{lang}.md").read_text()
    assert f"- **{name}**: \\{title[:-1]}\\]" in blog
