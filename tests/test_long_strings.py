"""Very long strings (issue 33, finding 10): a 200,000-character model name kept the build
rendering past 600 s. The print edition's pass that keeps Korean words whole backtracked
over the whole name at every one of its characters.
"""

from __future__ import annotations

import time

from benchreport.publish.render import keep_words


def test_korean_words_are_kept_whole_in_time_linear_in_the_text():
    """The pass that caused the hours: 20,000 characters without a Hangul syllable took
    about 12 s before (four times as long for each doubling); now milliseconds."""
    html = "<p>" + "x" * 20_000 + " 모델의 결과 5 ms</p>"
    started = time.monotonic()
    out = keep_words(html, korean=True)
    assert time.monotonic() - started < 2.0
    assert out.endswith('<span class="kw">모델의</span> <span class="kw">결과</span> 5\u00a0ms</p>')
