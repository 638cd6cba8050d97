"""The headline and the one-engine conclusion, per shape of run (publish/headline.py).

Each shape is a generated run with known truth (synth.campaign), built without PDFs: the
headline is non-empty in both languages, states that run's own findings, flips when the
figure that chose a sentence flips, and names no second engine, interval or knee the run
does not have. A run where every request failed says so first and exits non-zero."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from html import unescape

import pytest

from benchreport.core.figures import Figure, load_registry
from benchreport.core.i18n import load_catalogue
from benchreport.core.runmeta import load_run
from benchreport.publish.headline import (
    ENGINES,
    FAILED,
    POINT,
    REPEATS,
    SWEEP,
    headline,
    shape_of,
)
from benchreport.publish.narrative_base import Writer

from .conftest import REAL_SAMPLES, ROOT, builds_a_report, needs_samples

SHAPES = {
    POINT: dict(engines=("alpha",), loads=(4,), repeats=1, requests=40),
    REPEATS: dict(engines=("alpha",), loads=(4,), repeats=2, requests=40),
    SWEEP: dict(engines=("alpha",), loads=(1, 4, 16), repeats=1, requests=48),
    ENGINES: dict(engines=("alpha", "beta"), loads=(4,), repeats=2, requests=40),
    FAILED: dict(engines=("alpha",), loads=(4,), repeats=1, requests=20, failures=20),
    "errors": dict(engines=("alpha",), loads=(4,), repeats=1, requests=40, failures=8),
    "engines_sweep": dict(engines=("alpha", "beta"), loads=(1, 4, 16), repeats=1,
                          requests=48),
    "sweep_slo": dict(engines=("alpha",), loads=(1, 4, 16), repeats=1, requests=48,
                      slo={"percentile": 99, "ttft_ms": 2000, "tpot_ms": 20}),
}
# the shape each generated run is (the name, where it is one)
KIND = {"errors": POINT, "engines_sweep": ENGINES, "sweep_slo": SWEEP}
# sentences about engines in the plural, in either language
PLURAL = re.compile(r"two engines|both engines|between the engines|the engines'|"
                    r"two frontiers|두 엔진|엔진 사이")


@pytest.fixture(scope="module")
@builds_a_report
def built(tmp_path_factory):
    """shape -> (run, registry, {lang: summary html}, {lang: whole page}, build exit code)."""
    from benchreport.cli import main
    from benchreport.synth.campaign import write_campaign

    project = ROOT
    root = tmp_path_factory.mktemp("shapes")
    out = {}
    for name, kw in SHAPES.items():
        write_campaign(root / "data" / name, **kw)
        code = main(["build", name, "--data-root", str(root / "data"), "--report-root",
                     str(root / "report"), "--project", str(project), "--no-pdf"])
        run = load_run(name, root / "data", root / "report")
        # read with a number's no-break space before its unit as a plain one
        pages = {lang: (root / "report" / name / f"report.{lang}.html").read_text()
                 .replace("\u00a0", " ") for lang in ("en", "ko")}
        summary = {lang: html[html.index('id="summary"'):html.index('id="environment"')]
                   for lang, html in pages.items()}
        out[name] = (run, load_registry(run.paths.figures_json), summary, pages, code)
    return out


def _writer(built, name, project, lang="en"):
    run, registry, *_ = built[name]
    return Writer(run, copy.deepcopy(registry), lang,
                  load_catalogue(project / "templates" / "labels", lang))


def _text(items) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", str(m)) for m in items)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_shape_has_a_headline_in_both_languages(built, project, name):
    run, registry, summary, pages, code = built[name]
    assert shape_of(_writer(built, name, project)).kind == KIND.get(name, name)
    for lang in ("en", "ko"):
        items = re.findall(r"<li>(.*?)</li>", summary[lang], re.S)
        assert 1 <= len(items) <= 6, (lang, items)
        # every sentence links its figures
        assert all('class="fig"' in i for i in items), items
        if len(run.meta.engines) == 1:
            assert not PLURAL.search(pages[lang]), PLURAL.search(pages[lang])
        # no empty section
        assert not re.search(r"<h2>[^<]*</h2>\s*</section>", pages[lang])
        blog = (run.paths.report / "blog" / f"index.{lang}.md").read_text()
        assert not re.search(r"^## .*\n\n## ", blog, re.M), lang
    assert code == (3 if name == FAILED else 0)


def test_a_point_states_its_figures_and_checks(built, project):
    _, registry, summary, *_ = built[POINT]
    pid = "alpha.1k.c4.r1"
    en = re.sub(r"<[^>]+>", "", summary["en"])
    thr = registry[f"point.{pid}.output_throughput"].value
    assert f"output throughput {thr:,.1f} tok/s" in en
    assert "median TTFT" in en and "(p99 " in en and "median TPOT" in en
    # 40 requests: under 100 for a p99, so the checks flag it and the headline says so
    assert registry[f"point.{pid}.validity"].value == "flagged"
    assert ("Read these figures with care (warning): too few requests for a reliable tail "
            "percentile") in en
    ko = re.sub(r"<[^>]+>", "", summary["ko"])
    assert "출력 처리량" in ko and "TTFT 중앙값" in ko and "해석에 주의해야 합니다(경고)" in ko


def test_a_sweep_says_where_throughput_peaks_and_how_ttft_grows(built, project):
    _, registry, summary, *_ = built[SWEEP]
    peak = registry["curve.1k.alpha.peak"]
    growth = registry["curve.1k.alpha.ttft_growth"]
    thr = {x: registry[f"curve.1k.alpha.c{x}.output_throughput"].value for x in (1, 4, 16)}
    assert peak.value == "c" + str(max(thr, key=thr.get))
    ttft = [registry[f"curve.1k.alpha.c{x}.median_ttft_ms"].value for x in (1, 16)]
    assert growth.value == pytest.approx(ttft[1] / ttft[0])
    en = re.sub(r"<[^>]+>", "", summary["en"])
    assert ("rises through the heaviest load measured" in en) == peak.context["at_heaviest"]
    assert ("output throughput peaks at" in en) != peak.context["at_heaviest"]
    assert "median TTFT grows" in en and " at c1 to " in en and " at c16." in en


def test_sentences_flip_when_their_figures_flip(built, project):
    w = _writer(built, SWEEP, project)
    peak = w.registry["curve.1k.alpha.peak"]
    before = _text(headline(w, [], []))
    w.registry[peak.id] = dataclasses.replace(
        peak, context={**peak.context, "at_heaviest": not peak.context["at_heaviest"]})
    after = _text(headline(w, [], []))
    assert ("rises through" in before) != ("rises through" in after)
    growth = w.registry["curve.1k.alpha.ttft_growth"]
    for grows, words in ((True, "median TTFT grows"), (False, "median TTFT stays within")):
        w.registry[growth.id] = dataclasses.replace(
            growth, context={**growth.context, "grows": grows})
        assert words in _text(headline(w, [], []))


def test_errors_lead_the_headline_and_a_small_share_does_not(built, project):
    _, registry, summary, *_ = built["errors"]
    share = registry["point.alpha.1k.c4.r1.failed_share"]
    assert share.value == pytest.approx(8 / 40 * 100)
    first = re.findall(r"<li>(.*?)</li>", summary["en"], re.S)[0]
    assert "20.0% of the requests failed" in re.sub(r"<[^>]+>", "", first)
    w = _writer(built, "errors", project)
    w.registry[share.id] = dataclasses.replace(share, value=0.5)
    assert "of the requests failed" not in _text(headline(w, [], []))


def test_cancellations_asked_are_said_as_such_not_as_failures(built, project):
    """The errors run: 8 of 40 requests errored. When they are the cancellations the
    client was asked for (the figures the analyses then make: a cancelled count and a rate,
    no failed share), the headline says how many were cancelled as asked, at what rate."""
    for lang, words in (("en", "8 of 40 requests were cancelled as asked (cancellation "
                               "rate 20%)"),
                        ("ko", "요청 40개 가운데 8개를 요청한 대로 취소했습니다(취소 비율 20%)")):
        w = _writer(built, "errors", project, lang)
        pid = "alpha.1k.c4.r1"
        assert "cancelled as asked" not in _text(headline(w, [], []))
        del w.registry[f"point.{pid}.failed_share"]
        ctx = w.registry[f"point.{pid}.failed"].context
        for name, value, unit in (("cancelled", 8, "req"), ("cancellation_rate", 20.0, "%")):
            fid = f"point.{pid}.{name}"
            w.registry[fid] = Figure(id=fid, value=value, unit=unit, method="m",
                                     context=ctx, decimals=1)
        text = _text(headline(w, [], []))
        assert words in text
        assert "of the requests failed" not in text and "실패했습니다" not in text


def test_an_unverified_point_says_no_check_could_run(built, project):
    w = _writer(built, POINT, project)
    fid = "point.alpha.1k.c4.r1.validity"
    f = w.registry[fid]
    checks = [{**c, "severity": "not evaluable"} for c in f.context["checks"]]
    w.registry[fid] = dataclasses.replace(f, value="unverified",
                                          context={**f.context, "checks": checks})
    text = _text(headline(w, [], []))
    assert "None of its checks could run (unverified; 8 of them lacked an input)" in text
    assert "Its checks found nothing" not in text and "Read these figures" not in text


@pytest.mark.slow
@needs_samples
def test_the_real_aiperf_headline_says_cancelled_as_asked(project, tmp_path):
    """The early AIPerf sample asked 10% cancellations of 100 requests and has 11 HTTP 499
    RequestCancellationError errors: cancelled as asked, not failures."""
    from benchreport.cli import main

    data, report = tmp_path / "data", tmp_path / "report"
    assert main(["init", "ap", str(REAL_SAMPLES / "aiperf"), "--data-root", str(data)]) == 0
    assert main(["build", "ap", "--data-root", str(data), "--report-root", str(report),
                 "--project", str(project), "--no-pdf"]) == 0
    for lang, cancelled, failed, unverified in (
            ("en", "11 of 100 requests were cancelled as asked (cancellation rate 10%)",
             "of the requests failed", "unverified"),
            ("ko", "요청 100개 가운데 11개를 요청한 대로 취소했습니다(취소 비율 10%)",
             "실패했습니다", "확인 불가")):
        page = (report / "ap" / f"report.{lang}.html").read_text().replace("\u00a0", " ")
        summary = re.sub(r"<[^>]+>", "",
                         page[page.index('id="summary"'):page.index('id="environment"')])
        assert cancelled in summary and failed not in summary
        validity = re.sub(r"<[^>]+>", "", page[page.index('id="validity"'):])
        assert validity.count(unverified) >= 2


def test_a_failed_run_says_so_first_and_exits_non_zero(built, project, tmp_path):
    from benchreport.cli import main

    _, registry, summary, pages, code = built[FAILED]
    assert code == 3
    items = re.findall(r"<li>(.*?)</li>", summary["en"], re.S)
    assert len(items) == 1 and "The run failed: no request succeeded" in items[0]
    assert "실행이 실패했습니다" in summary["ko"]
    assert "Nothing can be concluded about this server" in pages["en"]
    run = built[FAILED][0]
    assert main(["build", FAILED, "--data-root", str(run.paths.data.parent), "--report-root",
                 str(run.paths.report.parent), "--project", str(project), "--no-pdf",
                 "--allow-failed"]) == 0


def test_several_engines_keep_their_comparing_headline(built, project):
    _, registry, summary, *_ = built[ENGINES]
    en = re.sub(r"<[^>]+>", "", summary["en"])
    verdict = registry["compare.1k.alpha.beta.c4.output_throughput.verdict"]["value"] \
        if isinstance(registry["compare.1k.alpha.beta.c4.output_throughput.verdict"], dict) \
        else registry["compare.1k.alpha.beta.c4.output_throughput.verdict"].value
    if verdict == "tie":
        assert "cannot be told apart" in en or "a tie" in en
    else:
        assert "Key finding" in en
    assert "Alpha" in en and "Beta" in en


def test_figures_json_has_the_headline_figures(built):
    run = built[SWEEP][0]
    ids = {f["id"] for f in json.loads(run.paths.figures_json.read_text())["figures"]}
    assert {"curve.1k.alpha.peak", "curve.1k.alpha.ttft_growth"} <= ids


def test_repeats_of_one_load_share_one_sentence_with_their_spread(built, project):
    _, registry, summary, *_ = built[REPEATS]
    spread = registry["curve.1k.alpha.c4.spread"]
    runs = [registry[f"point.alpha.1k.c4.r{i}.output_throughput"].value for i in (1, 2)]
    assert spread.value == pytest.approx(max(runs) / min(runs))
    assert spread.context["differs"] == (spread.value > spread.context["within"])
    en = re.sub(r"<[^>]+>", "", summary["en"])
    assert en.count("over 2 runs:") == 1 and "run 1" not in en
    assert ("The runs differ" in en) == spread.context["differs"]
    assert "2회 실행 평균" in summary["ko"]
    w = _writer(built, REPEATS, project)
    for differs, words in ((True, "The runs differ"), (False, "lie within")):
        w.registry[spread.id] = dataclasses.replace(
            spread, context={**spread.context, "differs": differs})
        assert words in _text(headline(w, [], []))


def test_a_sweep_of_two_engines_compares_them_and_names_both(built, project):
    _, registry, summary, pages, code = built["engines_sweep"]
    assert code == 0
    en = re.sub(r"<[^>]+>", "", summary["en"])
    assert "Alpha" in en and "Beta" in en
    assert 'id="curves"' in pages["en"] and 'id="pareto"' in pages["en"]


def test_engines_that_share_no_workload_are_said_not_to_be_compared(built, project):
    from benchreport.core import ids
    from benchreport.publish.sections import conclusion_section

    w = _writer(built, ENGINES, project)
    text = _text(conclusion_section(w).paragraphs)
    assert "nothing in this report compares them" not in text
    w.registry = {k: f for k, f in w.registry.items() if ids.family(k) != "compare"}
    text = _text(conclusion_section(w).paragraphs)
    assert "Alpha and Beta were measured on different workloads" in text


def test_a_load_row_quotes_the_files_own_rate_and_says_which_it_is(built, project):
    """A saturated rate point: judged on the derived send rate (5.7 req/s), quoted as the
    file's own request throughput (4.4 req/s, what the points table shows), and named."""
    from benchreport.publish.campaign import _found

    check = {"code": "rate_saturated", "rule": "load", "severity": "saturated",
             "value": 4.4, "limit": 90.0, "unit": "req/s", "missing": [], "asked": None,
             "basis": "recorded"}
    for lang, words in (("en", "requests went through at 4.4 req/s (the client's own "
                               "request throughput)"),
                        ("ko", "요청이 초당 요청 4.4개로 처리되어"
                               "(클라이언트가 기록한 요청 처리량)")):
        w = _writer(built, POINT, project, lang)
        assert words in unescape(_text([_found(w, [check])]))
    w = _writer(built, POINT, project)
    derived = {**check, "value": 5.7, "basis": "derived"}
    assert "at 5.7 req/s (sent per second, derived from the counts" in _text([_found(w, [derived])])


def test_a_sweep_with_an_slo_states_its_capacity(built, project):
    _, registry, summary, *_ = built["sweep_slo"]
    cap = registry["slo.1k.alpha.capacity"]
    en = re.sub(r"<[^>]+>", "", summary["en"])
    assert "Alpha: highest load within the latency objectives: " in en
    words = {"interpolated": "interpolated between", "not reached": "every load measured "
             "meets the objectives", "below": "even the lowest load misses an objective"}
    assert words[cap.context["status"]] in en
    assert "지연 목표를 지키는 가장 높은 부하는" in summary["ko"]
    # no SLO, no capacity sentence
    assert "latency objectives" not in re.sub(r"<[^>]+>", "", built[SWEEP][2]["en"])
