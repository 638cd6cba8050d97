"""Campaigns: sweeps and repeats matched to run.yaml, points of any client in the derived
tables and the article, and `benchreport init` starting a run from real files."""

import json
import re
import shutil
from pathlib import Path

import pytest

from benchreport.core.i18n import load_catalogue
from benchreport.ingest.clients import base, genai_bench, guidellm, llmperf
from benchreport.publish.sections import definition_label

from .conftest import REAL_SAMPLES, builds_a_report, needs_samples
from .test_provenance import _grounded

REAL = REAL_SAMPLES


def test_every_definition_code_has_a_label_in_both_languages(project):
    codes = set(base.DEFINITIONS) | set(guidellm.DEFINITIONS) | set(llmperf.DEFINITIONS) | \
        set(getattr(genai_bench, "DEFINITIONS", {}))
    for lang in ("en", "ko"):
        t = load_catalogue(project / "templates" / "labels", lang)
        missing = [c for c in sorted(codes) if definition_label(c) not in t]
        assert not missing, (lang, missing)


def _init(tmp_path, run_id, paths, *extra):
    from benchreport.cli import main

    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    code = main(["init", run_id, *map(str, paths), "--data-root", str(data), *extra])
    assert code == 0
    return data / run_id


def _build(tmp_path, run_id, project, pdf=False):
    """A build of the run; without PDFs unless the test reads them (they take half a
    build's time, and the print edition has tests of its own)."""
    from benchreport.pipeline.run import build

    return build(run_id, data_root=tmp_path / "data", report_root=tmp_path / "report",
                 project=project, out=lambda line: None, pdf=pdf)


def _points(run):
    from benchreport.core.tables import load_ingested

    return load_ingested(run).points


def _copy(tmp_path, names, folder="in"):
    out = tmp_path / folder
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(REAL / name, out / Path(name).name)
    return out


# (case, files to give init, --engine, expected (load, repeat) per point, a checked figure)
CLIENT_CASES = [
    # the six appended records of one SGLang file: rates 2, 2, 100, 100, 1000, 1000 (each
    # rate twice, so init declares repeats: 2); median TTFT of the first record, as written
    ("sglang-rate-sweep", ["sglang-multi/sglang-lora_bench-1115_100_1024_128-6records.jsonl"],
     "sglang", [("r2", 1), ("r2", 2), ("r100", 1), ("r100", 2), ("r1000", 1), ("r1000", 2)]),
    ("vllm-qps-folder", [f"vllm-sweep/vllm-ascend-nightly-2025-05-serving_qwen2_5_7B_tp1_qps_{q}"
                         ".json" for q in (1, 4, 16, "inf")], None,
     [("r1", 1), ("r4", 1), ("r16", 1), ("rinf", 1)]),
    # GuideLLM's one synchronous benchmark: one request at a time
    ("guidellm", ["guidellm/guidellm-0.5.0dev-gpt-oss-20b-synchronous.json"], "vllm",
     [("c1", 1)]),
    # AIPerf's JSON, CSV and per-request JSON Lines of one run at concurrency 100: one point
    ("aiperf", ["aiperf/aiperf-early-examples-run1-profile_export_aiperf.json",
                "aiperf/aiperf-early-examples-run1-profile_export_aiperf.csv",
                "aiperf/aiperf-early-examples-run1-profile_export.jsonl"], "vllm",
     [("c100", 1)]),
    ("genai-bench", ["genai-bench/genai-bench-0.0.2-qwen3-30b-N2000-experiment_metadata.json",
                     "genai-bench/genai-bench-0.0.2-qwen3-30b-N2000_200_200_20_text-to-text_"
                     "num_concurrency_2_time_63s.json",
                     "genai-bench/genai-bench-0.0.2-qwen3-30b-N2000_200_200_20_text-to-text_"
                     "num_concurrency_16_time_15s.json"], "vllm", [("c2", 1), ("c16", 1)]),
]


@pytest.mark.slow
@needs_samples
@pytest.mark.parametrize("case, names, engine, expected", CLIENT_CASES,
                         ids=[c[0] for c in CLIENT_CASES])
def test_init_gives_a_run_that_builds_with_no_edits(tmp_path, project, case, names, engine,
                                                    expected):
    folder = _copy(tmp_path, names, case)
    _init(tmp_path, "r", [folder], *(["--engine", engine] if engine else []))
    run_yaml = (tmp_path / "data/r/run.yaml").read_text()
    if case == "genai-bench":            # its experiment_metadata.json states the GPUs
        assert '  gpus: 1\n  gpu_model: "H100"\n' in run_yaml
    else:
        assert "hardware: TODO" in run_yaml
    pdf = case == CLIENT_CASES[0][0]         # one client's PDF; the pages for all of them
    run = _build(tmp_path, "r", project, pdf=pdf)
    points = _points(run)
    assert [(p["load"], p["repeat"]) for p in points] == expected
    html = (tmp_path / "report/r/report.en.html").read_text()
    assert 'id="points"' in html and "not stated" in html
    # a column's header names the definition its numbers follow
    heads = {"guidellm": "TPOT incl. first token, median (ms)",
             "aiperf": "ITL (E2E − TTFT) per token after the first, median (ms)"}
    if case in heads:
        assert heads[case] in html
    else:
        assert "incl. first token" not in html
    if pdf:
        assert (tmp_path / "report/r/report.ko.pdf").stat().st_size > 10_000
    else:
        assert not (tmp_path / "report/r/report.ko.pdf").exists()
    _check_headline(tmp_path / "report/r", case)


# what each real run's headline must say (its own findings), and how many charts it has
HEADLINES = {
    # not streamed: no TTFT, the queue read from E2E latency
    "sglang-rate-sweep": (["output throughput peaks at", "the server could not keep up"], 1),
    "vllm-qps-folder": (["median TTFT grows", "to 3,082.9 ms at the unbounded rate"], 2),
    # one point with per-request rows: its request timeline (the Gantt chart)
    "guidellm": (["output throughput 33.4 tok/s", "median TPOT"], 1),
    "aiperf": (["c100", "median TTFT"], 1),
    "genai-bench": (["to 845.1 tok/s at c16", "median TTFT grows"], 2),
}
PLURAL = re.compile(r"two engines|both engines|between the engines|the engines'|"
                    r"two frontiers|두 엔진|엔진 사이")


def _check_headline(report: Path, case: str) -> None:
    """The headline states the run's own findings in both languages; a run of one engine
    names no second one; no section is empty; every chart drew something."""
    words, charts = HEADLINES[case]
    for lang in ("en", "ko"):
        # a number's no-break space before its unit read as a plain one
        html = (report / f"report.{lang}.html").read_text().replace("\u00a0", " ")
        summary = html[html.index('id="summary"'):html.index('id="environment"')]
        items = re.findall(r"<li>(.*?)</li>", summary, re.S)
        assert 1 <= len(items) <= 6, (case, lang, items)
        text = re.sub(r"<[^>]+>", "", summary)
        if lang == "en":
            assert all(word in text for word in words), (case, text)
        if case == "sglang-rate-sweep":          # its "TTFT" is the whole response time
            assert "TTFT" not in text, (case, lang, text)
        assert not PLURAL.search(html), (case, lang, PLURAL.search(html))
        assert not re.search(r"<h2>[^<]*</h2>\s*</section>", html), (case, lang)
        assert html.count('<figure class="chart">') == charts, case
        # a section is there only with what it shows: the Pareto chart needs TPOT at two
        # loads; decode and prefill need a server log
        assert ('id="pareto"' in html) == (case in ("vllm-qps-folder", "genai-bench")), case
        assert 'id="decode"' not in html and 'id="prefill"' not in html, case


def _run_yaml(folder: Path, workload: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.yaml").write_text(
        "schema: 1\ntitle: {ko: t, en: t}\ndate: 2025-11-15\nhardware: TODO\nmodel: TODO\n"
        "engines:\n  - {id: sglang, name: SGLang}\n  - {id: vllm, name: vLLM}\n"
        f"workloads:\n  - {workload}\n")


@needs_samples
def test_appended_sglang_records_are_one_point_each_and_repeats_need_saying(tmp_path):
    """The six records of the SGLang file are rates 2, 2, 100, 100, 1000, 1000: without
    `repeats:` two results of one point stop the build; with it, they are repeats 1 and 2."""
    from benchreport.core.errors import ReportError
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.points import load_points

    name = "sglang-lora_bench-1115_100_1024_128-6records.jsonl"
    run_dir = tmp_path / "data" / "s"
    (run_dir / "raw" / "sglang").mkdir(parents=True)
    shutil.copyfile(REAL / "sglang-multi" / name, run_dir / "raw" / "sglang" / name)
    _run_yaml(run_dir, "{id: w, label: W, input_tokens: 1024, request_rate: [2, 100, 1000]}")
    with pytest.raises(ReportError, match=r"two results for engine 'sglang', workload 'w' and "
                       r"load r2: data/s/raw/sglang/sglang-lora.*:1 and .*:2; declare "):
        load_points(load_run("s", tmp_path / "data", tmp_path / "report"))
    _run_yaml(run_dir, "{id: w, label: W, input_tokens: 1024, request_rate: [2, 100, 1000], "
                       "repeats: 2}")
    points = load_points(load_run("s", tmp_path / "data", tmp_path / "report"))
    assert [(p.load.id, p.repeat, p.point.line) for p in points] == [
        ("r2", 1, 1), ("r2", 2, 2), ("r100", 1, 3), ("r100", 2, 4), ("r1000", 1, 5),
        ("r1000", 2, 6)]
    raw = [json.loads(line) for line in (REAL / "sglang-multi" / name).read_text().splitlines()]
    # each point's figures are its own record's, e.g. the median E2E latency as written (ms)
    assert [p.point.fields["median_e2el_ms"] for p in points] == \
        [r["median_e2e_latency_ms"] for r in raw]


@needs_samples
def test_a_file_and_run_yaml_that_disagree_stop_with_both_values(tmp_path):
    from benchreport.core.errors import ParseError
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.points import load_points

    name = "vllm-ascend-nightly-2025-05-serving_qwen2_5_7B_tp1_qps_4.json"
    run_dir = tmp_path / "data" / "v"
    (run_dir / "raw" / "vllm").mkdir(parents=True)
    shutil.copyfile(REAL / "vllm-sweep" / name, run_dir / "raw" / "vllm" / name)
    _run_yaml(run_dir, "{id: w, label: W, input_tokens: 218, request_rate: [1, 2]}")
    with pytest.raises(ParseError) as err:
        load_points(load_run("v", tmp_path / "data", tmp_path / "report"))
    assert err.value.one_line() == (
        f"data/v/raw/vllm/{name}:1: the file records request rate 4, but run.yaml's workload "
        "'w' declares request rate 1, request rate 2; correct run.yaml's concurrency / "
        "request_rate, or move the file")


@needs_samples
def test_a_vllm_bench_sweep_folder_gives_repeats_from_its_layout(tmp_path):
    """run=0.json and run=1.json are two repeats of one point (concurrency 2 at
    max_num_seqs 4); summary.json repeats them as an array and adds no point."""
    sweep = tmp_path / "in" / "SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8"
    sweep.mkdir(parents=True)
    for src, dst in (("run0", "run=0.json"), ("run1", "run=1.json"), ("summary", "summary.json")):
        shutil.copyfile(REAL / "vllm-sweep" / f"vllm-bench-sweep-0.25.1-mns4-c2-{src}.json",
                        sweep / dst)
    _init(tmp_path, "sw", [tmp_path / "in"], "--engine", "vllm")
    text = (tmp_path / "data/sw/run.yaml").read_text()
    assert "    concurrency: 2\n" in text and "      max_num_seqs: 4\n" in text
    assert "    repeats: 2\n" in text
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.points import load_points

    points = load_points(load_run("sw", tmp_path / "data", tmp_path / "report"))
    assert [(p.load.id, p.repeat, Path(p.file.rel).name) for p in points] == [
        ("c2", 1, "run=0.json"), ("c2", 2, "run=1.json")]
    assert all(any(a.endswith("summary.json [0]") or a.endswith("summary.json [1]")
                   for a in p.also) for p in points)
    run0 = json.loads((sweep / "run=0.json").read_text())
    assert points[0].point.fields["output_throughput"] == run0["output_throughput"]


DEMO = "2025-05-qwen7b-ascend-qps"


@pytest.fixture(scope="module")
@builds_a_report
def demo(tmp_path_factory):
    """The demo run of real data, built once for this module: (workspace, its Run)."""
    from .conftest import ROOT

    tmp_path = tmp_path_factory.mktemp("demo")
    shutil.copytree(ROOT / "data" / DEMO, tmp_path / "data" / DEMO)
    return tmp_path, _build(tmp_path, DEMO, ROOT)


def test_the_demo_run_of_real_data_builds(demo):
    """data/2025-05-qwen7b-ascend-qps: four real vLLM result files (rates 1, 4, 16, inf),
    built; each point's figures are the files' values."""
    tmp_path, run = demo
    points = _points(run)
    assert [p["load"] for p in points] == ["r1", "r4", "r16", "rinf"]
    for p in points:
        raw = json.loads((tmp_path / p["file"]).read_text())
        assert p["output_throughput"] == raw["output_throughput"]
        assert p["p99_ttft_ms"] == raw["p99_ttft_ms"]
        assert p["completed"] == raw["completed"] == 200
    figures = json.loads(run.paths.figures_json.read_text())
    fig = next(f for f in figures["figures"] if f["id"] ==
               "point.vllm.in218-out223.rinf.r1.median_ttft_ms")
    assert fig["sources"][0]["key"] == "median_ttft_ms"
    assert fig["value"] == pytest.approx(3082.94, abs=0.005)
    html = (tmp_path / "report/2025-05-qwen7b-ascend-qps/report.en.html").read_text()
    assert "github.com/Potabk/vllm-ascend" in html and "Real measurements" in html


def test_the_demo_run_shows_its_campaign_without_inventing_noise(demo):
    """One run per rate and no SLO: the campaign sections say so, and name no winner."""
    tmp_path, run = demo
    report = tmp_path / "report" / DEMO
    en = (report / "report.en.html").read_text()
    ko = (report / "report.ko.html").read_text()
    for html in (en, ko):
        for section in ("curves", "capacity", "validity"):
            assert f'id="{section}"' in html
        assert 'id="pareto"' in html         # one engine: its frontier, nothing to compare
    assert "Each load ran once" in en and "부하마다 한 번씩만 실행했으므로" in ko
    assert "No latency objective was set" in en and "지연 목표를 정하지 않아" in ko
    assert "The run holds no launch settings and no server logs" in en
    # the file's request throughputs: 0.93, 2.82, 4.48, 5.13 req/s — still rising at rinf
    assert "vLLM: output throughput was still rising" in en
    figures = {f["id"]: f for f in json.loads(
        (report / "derived/figures.json").read_text())["figures"]}
    assert figures["campaign.points"]["value"] == 4
    assert not [k for k in figures if not _grounded(figures, k)]   # all explain to inputs
    assert figures["limits.repeats"]["value"] == 1
    assert figures["point.vllm.in218-out223.r4.r1.validity"]["value"] == "valid"
    # 200 requests at 16 req/s end after 44.6 s: under a minute
    assert figures["point.vllm.in218-out223.r16.r1.validity"]["value"] == "flagged"
    # marked in the points table, not dropped from it
    assert 'href="#fig-point-vllm-in218-out223-r16-r1-validity">(warning)</a>' in en
    assert 'href="#fig-point-vllm-in218-out223-r16-r1-validity">(경고)</a>' in ko


@pytest.mark.slow
def test_a_generated_campaign_builds_its_sections_in_both_languages(tmp_path, project):
    """2 engines × 3 loads × 3 repeats with an SLO and a price: every campaign section in ko
    and en, each number linked to its derivation, each ratio with its interval and n, and
    the tie sentence exactly where the verdict is a tie."""
    from benchreport.synth.campaign import write_campaign

    write_campaign(tmp_path / "data" / "camp", engines=("gamma", "beta"), loads=(2, 8, 32),
                   repeats=3, requests=100, gpus=8,
                   slo={"percentile": 99, "ttft_ms": 2000, "tpot_ms": 20},
                   cost={"gpu_hour_usd": 2.5})
    _build(tmp_path, "camp", project)
    report = tmp_path / "report/camp"
    figures = {f["id"]: f for f in json.loads(
        (report / "derived/figures.json").read_text())["figures"]}
    # every figure explains down to a file with its sha256 and a key or line
    assert not [k for k in figures if not _grounded(figures, k)]
    for lang in ("en", "ko"):
        html = (report / f"report.{lang}.html").read_text()
        for section in ("curves", "pareto", "capacity", "validity"):
            assert f'id="{section}"' in html, (lang, section)
        anchors = set(re.findall(r'id="([^"]+)"', html))
        assert set(re.findall(r'href="#([^"]+)"', html)) <= anchors
        assert html.count("<svg") == 2                  # the load curves and the frontier
    en = (report / "report.en.html").read_text()
    ko = (report / "report.ko.html").read_text()
    assert "Gamma: output throughput stops rising beyond load" in en
    for load in ("c2", "c8", "c32"):
        verdict = figures[f"compare.1k.gamma.beta.{load}.output_throughput.verdict"]["value"]
        ratio = figures[f"compare.1k.gamma.beta.{load}.output_throughput"]
        shown = format(ratio["value"], ".2f")
        tie_en = f"At {load}, Gamma's output throughput is {shown}× Beta's, a tie"
        tie_ko = f"부하 {load}에서 Gamma의 출력 처리량은 Beta의 {shown}배이지만"
        assert (tie_en in en) == (verdict == "tie") and (tie_ko in ko) == (verdict == "tie")
        # with repeats, every ratio in the prose carries its interval and n
        low, high = (format(ratio["context"][k], ".2f") for k in ("low", "high"))
        assert f"interval {low}–{high}; n = 3 and 3" in en
        assert f"구간 {low}–{high}, 반복 3회·3회" in ko
    assert "interpolated between" in en and "선형 보간한 값" in ko
    # the summary leads with the key finding, chosen among loads within the objectives
    glance = en[en.index('id="summary"'):en.index('id="environment"')]
    assert "Key finding, input 1K: among the loads where both engines meet the objectives" \
        in glance
    assert "per million output tokens" in en


@pytest.mark.slow
@needs_samples
def test_a_third_of_the_requests_failing_leads_the_headline(tmp_path, project):
    """llmperf's summary of a run where 50 of 150 requests failed (the leaderboard file
    with its error counts changed): the headline's first sentence names the failures."""
    d = json.loads((REAL / "llmperf/llmperf-leaderboard-summary-groq_70b.json").read_text())
    d.update(results_number_errors=50, results_error_rate=50 / 150,
             results_num_completed_requests=100, results_error_code_frequency="{'500': 50}")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "groq_70b_summary.json").write_text(json.dumps(d))
    _init(tmp_path, "r", [folder], "--engine", "vllm")
    _build(tmp_path, "r", project)
    for lang, words in (("en", "33.3% of the requests failed (50 requests failed, 100 "
                               "requests completed)"), ("ko", "요청의 33.3%가 실패했습니다")):
        html = (tmp_path / f"report/r/report.{lang}.html").read_text().replace("\u00a0", " ")
        first = re.findall(r"<li>(.*?)</li>", html[html.index('id="summary"'):], re.S)[0]
        assert words in re.sub(r"<[^>]+>", "", first), (lang, first)
