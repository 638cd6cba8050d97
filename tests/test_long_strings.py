"""Very long strings (issue 33, finding 10): a 200,000-character model name kept the build
rendering past 600 s. The print edition's pass that keeps Korean words whole backtracked
over the whole name at every one of its characters. The report now shows names and values
from the inputs shortened (``core.display.DISPLAY_CHARS``), and the audit trail keeps them
whole: run.yaml's copy under derived/inputs/ and the results store's ``runs`` table.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from benchreport.core.display import DISPLAY_CHARS, ELLIPSIS, shorten
from benchreport.publish.render import keep_words

from .conftest import ROOT, builds_a_report, copy_run

LONG = "Tiny-MoE-" + "x" * 200_000
SHOWN = LONG[: DISPLAY_CHARS - len(ELLIPSIS)] + ELLIPSIS
# a build of the mini run takes well under a minute; before the fix it took hours
BUILD_BOUND_S = 300


@pytest.fixture(scope="module")
@builds_a_report
def long_name(tmp_path_factory):
    ws = tmp_path_factory.mktemp("long")
    (ws / "data").mkdir()
    run = copy_run(ws, "mini")
    meta = run / "run.yaml"
    text = meta.read_text()
    assert "model: {name: Tiny-MoE," in text
    meta.write_text(text.replace("model: {name: Tiny-MoE,", f"model: {{name: {LONG},", 1))
    # a child process, so that a build that never ends fails the test instead of hanging it
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "benchreport", "build", "mini",
                          "--data-root", str(ws / "data"), "--report-root", str(ws / "report"),
                          "--project", str(ROOT)],
                         capture_output=True, text=True, cwd=ws, timeout=BUILD_BOUND_S)
    assert out.returncode == 0, out.stderr
    return ws, time.monotonic() - started


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
