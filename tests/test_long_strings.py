"""Very long strings (issue 33, finding 10): a 200,000-character model name kept the build
rendering past 600 s. The print edition's pass that keeps Korean words whole backtracked
over the whole name at every one of its characters. The report now shows names and values
from the inputs shortened (``core.display.DISPLAY_CHARS``), and the audit trail keeps them
whole: run.yaml's copy under derived/inputs/ and the results store's ``runs`` table.
"""

from __future__ import annotations

import time

import pytest

from benchreport.core.display import DISPLAY_CHARS, ELLIPSIS, shorten
from benchreport.publish.render import keep_words

from .conftest import CLI_BUILD_BOUND_S as BUILD_BOUND_S
from .conftest import LONG_NAME as LONG

SHOWN = LONG[: DISPLAY_CHARS - len(ELLIPSIS)] + ELLIPSIS


@pytest.fixture(scope="module")
def long_name(cli_build):
    """The session's command-line build of the mini run, whose model name is ``LONG``
    (tests/conftest.py's cli_build, in a child process with a time bound): (the
    workspace, the seconds it took)."""
    ws, code, output, seconds = cli_build
    assert code == 0, output
    return ws, seconds


def test_a_200000_character_model_name_builds_in_bounded_time(long_name):
    ws, seconds = long_name
    report = ws / "report" / "mini"
    for lang in ("ko", "en"):
        assert (report / f"report.{lang}.pdf").stat().st_size > 0
    assert seconds < BUILD_BOUND_S


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_report_shows_the_name_shortened(long_name, lang):
    import pypdfium2 as pdfium

    report = long_name[0] / "report" / "mini"
    for page in (report / f"report.{lang}.html", report / "blog" / f"index.{lang}.md"):
        text = page.read_text()
        assert SHOWN in text, page.name
        assert LONG[: DISPLAY_CHARS + 1] not in text, page.name
    pdf = pdfium.PdfDocument(report / f"report.{lang}.pdf")
    layer = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    # pdfium gives a hyphen where a line ends as U+FFFE
    squeezed = "".join(layer.replace("\ufffe", "-").split())
    assert SHOWN[:-1] in squeezed and LONG[: DISPLAY_CHARS + 1] not in squeezed


def test_the_audit_trail_keeps_the_whole_name(long_name):
    from benchreport.core.store import run_query, store_path

    ws = long_name[0]
    assert LONG in (ws / "report/mini/derived/inputs/run.yaml").read_text()
    _, rows = run_query(store_path(ws / "report"), "select model from runs")
    assert rows == [(LONG,)]


def test_shorten_keeps_short_text_and_cuts_long_text_to_the_limit():
    assert shorten("Kimi-K3") == "Kimi-K3"
    assert shorten("x" * DISPLAY_CHARS) == "x" * DISPLAY_CHARS
    assert len(shorten("x" * (DISPLAY_CHARS + 1))) == DISPLAY_CHARS
    assert shorten(LONG) == SHOWN


def test_korean_words_are_kept_whole_in_time_linear_in_the_text():
    """The pass that caused the hours: 20,000 characters without a Hangul syllable took
    about 12 s before (four times as long for each doubling); now milliseconds."""
    html = "<p>" + "x" * 20_000 + " 모델의 결과 5 ms</p>"
    started = time.monotonic()
    out = keep_words(html, korean=True)
    assert time.monotonic() - started < 2.0
    assert out.endswith('<span class="kw">모델의</span> <span class="kw">결과</span> 5\u00a0ms</p>')


def test_the_doctests_hold():
    import doctest

    from benchreport.core import display

    result = doctest.testmod(display)
    assert result.failed == 0 and result.attempted > 0
