"""Each figure's method is a sentence of the methods catalogue (core.methods): the English
text the registry keeps is that sentence, and the Korean appendix prints its Korean one, so
no method line of the Korean page is English prose."""

import ast
import html
import re
from pathlib import Path

import pytest

from benchreport.core.figures import figure, load_registry
from benchreport.core.i18n import load_catalogue
from benchreport.core.methods import Said, english, given, joined, said, words
from benchreport.publish.narrative import cited_closure
from benchreport.publish.narrative_base import Writer

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "templates" / "labels"
FIELD = re.compile(r"\{(\w+)")


def _catalogues() -> tuple[dict[str, str], dict[str, str]]:
    return (load_catalogue(LABELS, "en", kind="methods"),
            load_catalogue(LABELS, "ko", kind="methods"))


def test_both_languages_have_every_sentence_with_the_same_placeholders():
    en, ko = _catalogues()
    assert set(en) == set(ko), set(en) ^ set(ko)
    for key in en:
        assert set(FIELD.findall(en[key])) == set(FIELD.findall(ko[key])), key


def test_method_sentences_type_no_numbers():
    """Numbers come in as arguments (a formula's constants too), as in the article's
    catalogue (test_i18n: E2E is a name)."""
    for lang, cat in zip(("en", "ko"), _catalogues(), strict=True):
        for key, text in cat.items():
            plain = re.sub(r"\{[^}]*\}", "", text).replace("E2E", "E")
            assert not re.search(r"\d", plain), (lang, key, text)


def _keys_in_code() -> set[str]:
    """Every method key the analyses name as a literal (said("...") and said("a" + x))."""
    found = set()
    for path in (ROOT / "src" / "benchreport").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "said" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
    return found


def test_every_key_the_code_names_is_in_both_catalogues():
    en, ko = _catalogues()
    keys = _keys_in_code()
    assert len(keys) > 200
    missing = sorted(k for k in keys if k not in en or k not in ko)
    assert not missing, missing


def test_a_sentence_keeps_its_english_and_renders_korean():
    f = figure("e2e.w.e.x", 1.0, "s", said("latency.over_pooled", n=30710,
                                               gaps=said("latency.gaps_chunk"), k=10))
    assert f.method == "the 30710 chunk gaps pooled over the 10 requests"
    back = Said.from_json(f.to_json()["said"])
    assert english(back) == f.method
    assert str(words(back, "ko")) == "요청 10개에서 모은 청크 간격 30710개"


def test_joins_capitals_and_given_texts_follow_the_language():
    s = said("prefill.left", items=joined([said("prefill.line_paren", line=3,
                                                 why=[said("prefill.event")]),
                                            said("prefill.line_paren", line=5, why=[])]))
    assert english(s) == "; left out: line 3 (a runtime event ran in it); line 5 ()"
    assert "줄 3(구간 안에 런타임 이벤트가 일어남); 줄 5" in str(words(s, "ko"))
    g = said("claims.calibrated", what=given(en="the x", ko="엑스"))
    assert "(the x)" in english(g) and "(엑스)" in str(words(g, "ko"))


def test_a_missing_sentence_is_a_build_error():
    with pytest.raises(Exception, match="not in templates/labels/methods.en.yaml"):
        figure("a.b", 1, "s", said("no.such_sentence"))


# --- built runs ----------------------------------------------------------------------------

# English prose: three lowercase English words in a row, outside code and quoted names
PROSE = re.compile(r"(?<![\w-])[a-z]{2,}(?: [a-z]{2,}){2,}(?![\w-])")


def _untranslated(run) -> list[str]:
    """The figures the Korean appendix shows whose method has no catalogue sentence."""
    registry = load_registry(run.paths.figures_json)
    w = Writer(run, registry, "ko", load_catalogue(LABELS, "ko"))
    return sorted(f for f in cited_closure(w) if not registry[f].said)


def _method_lines(page: str) -> list[str]:
    start = page.index('id="derivations"') if 'id="derivations"' in page else \
        page.index("부록: 각 수치를 얻은 방법")
    part = page[start:]
    lines = re.findall(r"계산 방법: (.*?)</p>", part)
    lines += re.findall(r"</strong>: (.*?)(?:<span class=\"mono\">|; 바탕이 된 수치|</li>)", part)
    return lines


def _prose(line: str) -> list[str]:
    text = re.sub(r"<code>.*?</code>", " ", line)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = re.sub(r"'[^']*'", " ", text)                 # quoted names from the files
    text = re.sub(r"\S*[_./#]\S*", " ", text)            # ids, files, keys, flags
    return PROSE.findall(text)


@pytest.mark.parametrize("build", ["reference_build", "mini_build"])
def test_every_method_the_korean_page_shows_is_korean(build, request):
    run = request.getfixturevalue(build)
    run = run[0] if isinstance(run, tuple) else run
    assert _untranslated(run) == []
    page = (run.paths.report / "report.ko.html").read_text(encoding="utf-8")
    lines = _method_lines(page)
    assert len(lines) > 20
    english_lines = [(line[:120], found) for line in lines if (found := _prose(line))]
    assert not english_lines, english_lines[:5]
    assert 'lang="en"' not in "".join(lines)


def test_the_registry_keeps_each_sentence_as_its_english_method(reference_build):
    """figures.json's method is the catalogue sentence's English, byte for byte, so
    `benchreport explain` and the English page read as before."""
    registry = load_registry(reference_build.paths.figures_json)
    said_ = [f for f in registry.values() if f.said]
    assert len(said_) == len(registry)
    for f in said_:
        assert english(Said.from_json(f.said)) == f.method, f.id
