"""Each figure's method is a sentence of the methods catalogue (core.methods): the English
text the registry keeps is that sentence, and the Korean appendix prints its Korean one, so
no method line of the Korean page is English prose."""

import ast
import html
import re
from pathlib import Path

import pytest

from benchreport.analyses import history as hist
from benchreport.analyses.compare import METRICS, VERDICT_NAMES, compare_runs
from benchreport.analyses.gate import Noise
from benchreport.core.figures import figure, load_registry
from benchreport.core.i18n import load_catalogue
from benchreport.core.methods import Said, english, given, joined, said, words
from benchreport.core.verdicts import CANNOT_TELL, LEVEL_CHANGED, NO_LEVEL_CHANGE
from benchreport.publish.narrative import cited_closure
from benchreport.publish.narrative_base import Writer

from .sources import syntax_tree
from .test_history import nightly, noisy, store_point, write_run

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
        for node in ast.walk(syntax_tree(path)):
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


def test_every_method_the_korean_reference_page_shows_is_korean(reference_build):
    _every_method_shown_is_korean(reference_build)


def test_every_method_the_korean_mini_page_shows_is_korean(mini_build):
    # named as arguments, not fetched by name: a test that reads a session build is marked
    # slow and grouped with the others that read it (tests/conftest.py), so it neither
    # builds in `make test-fast` nor waits for the other worker's build
    _every_method_shown_is_korean(mini_build[0])


def _every_method_shown_is_korean(run) -> None:
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


# --- comparisons and histories (a store written directly: no build) ----------------------

def _comparison_store(root: Path) -> Path:
    """Three dated runs of one configuration (a point with three repeats, one with one,
    one that only the last run measured) and a fourth run that read the first run's
    files (same sha256: same data)."""
    store = root / "report" / "_store"
    for day, (run, ttft) in enumerate((("run-a", 200.0), ("run-b", 240.0),
                                       ("run-c", 230.0)), 1):
        points = [store_point(run, "vllm", "1k", 16, r, ttft * (1 + r / 100), 12.0 + r)
                  for r in (1, 2, 3)] + [store_point(run, "vllm", "1k", 32, 1, ttft, 12.0)]
        if run == "run-c":
            points.append(store_point(run, "vllm", "2k", 64, 1, ttft, 12.0))
        write_run(store, run, f"2026-01-{day:02d}", points)
    write_run(store, "run-twin", "2026-01-04",
              [store_point("run-a", "vllm", "1k", 32, 1, 200.0, 12.0)])
    return store


def _korean_or_english_prose(figures) -> list[tuple[str, str]]:
    """The figures with no catalogue sentence, or whose Korean method reads as English."""
    bad = []
    for f in figures:
        if not f.said:
            bad.append((f.id, f.method))
            continue
        s = Said.from_json(f.to_json()["said"])
        assert english(s) == f.method, f.id
        if found := _prose(str(words(s, "ko"))):
            bad.append((f.id, str(found)))
    return bad


def test_every_comparison_method_is_a_sentence_in_both_languages(tmp_path):
    """Each way a comparison finds an interval (repeats, a declared floor, the history,
    none, the same files) and its counts, trends and differences say their method in
    Korean too (the paired-request one: test_store's built comparison)."""
    store = _comparison_store(tmp_path)
    floors = Noise(floors=dict.fromkeys(METRICS, 0.05), requests=False)
    history = Noise(history=lambda group, metric: 0.03, requests=False)
    comps = [compare_runs(store, ["run-a", "run-b", "run-c"]),
             compare_runs(store, ["run-a", "run-b"], noise={"run-b": floors}),
             compare_runs(store, ["run-a", "run-b"], noise={"run-b": history}),
             compare_runs(store, ["run-a", "run-twin"])]
    figures = [f for c in comps for f in c.figures]
    keys = {f.said["key"] for f in figures if f.said}
    assert {"compare.ratio", "compare.trend", "compare.only_in", "compare.matched"} <= keys
    hows = {f.said["args"]["how"]["key"] for f in figures if f.said
            and f.said["key"] == "compare.ratio"}
    assert hows == {"compare.repeats", "compare.floor", "compare.no_interval",
                    "compare.same_file"}
    assert not _korean_or_english_prose(figures)


def test_every_history_method_is_a_sentence_in_both_languages(tmp_path):
    store = tmp_path / "report" / "_store"
    nightly(store, noisy(25, seed=3, step_at=21))
    short = tmp_path / "short" / "report" / "_store"
    nightly(short, noisy(5, seed=1))
    trends = hist.history(store) + hist.history(short, metrics=["p99_ttft_ms"])
    assert {t.verdict for t in trends} == {LEVEL_CHANGED, NO_LEVEL_CHANGE, CANNOT_TELL}
    figures = [f for t in trends for f in hist.history_figures(t)]
    assert any(f.said.get("key") == "history.change_part" for f in figures)
    assert not _korean_or_english_prose(figures)


def test_verdict_names_in_methods_are_the_verdicts_own():
    """The methods name the verdicts as the figures' values spell them."""
    for name in VERDICT_NAMES.values():
        assert english(said("compare.verdict_" + name)) == name.replace("_", " ")
    for key, value in (("level_changed", LEVEL_CHANGED), ("no_level_change", NO_LEVEL_CHANGE),
                       ("cannot_tell", CANNOT_TELL)):
        assert english(said("history." + key)) == value


@pytest.mark.slow
def test_a_built_comparison_shows_every_method_in_korean(tmp_path):
    from benchreport.pipeline.compare import build_compare

    store = _comparison_store(tmp_path)
    paths = build_compare(["run-a", "run-b", "run-c"], report_root=store.parent, project=ROOT,
                          out=lambda line: None, build_runs=False, pdf=False)
    registry = load_registry(paths.figures_json)
    assert registry and all(f.said for f in registry.values())
    assert not paths.pdf("ko").exists() and not paths.pdf("en").exists()
    page = paths.html("ko").read_text(encoding="utf-8")
    marker = load_catalogue(LABELS, "ko")["derivation.untranslated"].split("{")[0].strip()
    assert marker not in page
    lines = _method_lines(page)
    assert len(lines) > 20
    assert not [line for line in lines if _prose(line)]
