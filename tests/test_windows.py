"""Benchmark windows from points of any client, and logs and /metrics dumps checked against
the results: another model stops the build, another clock is found, another time warns."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest

from benchreport.core.errors import ReportError
from benchreport.core.tables import warnings_of
from benchreport.ingest.io import load_run
from benchreport.ingest.run import check_windows, ingest_run
from benchreport.ingest.windows import clock_offset, same_model
from benchreport.synth import make_run

from .conftest import REAL_SAMPLES, needs_samples

SCENARIOS = Path(__file__).parent / "fixtures" / "scenarios"
GLM = (REAL_SAMPLES / "paired" / "inferencemax-glm51-mi355x-sglang-aiperf" / "results" / "0604"
       / "glm5.1-fp4-mi355x-sglang-agentic-hicache" /
       "agentic_glm5.1_tp2_conc16_offloadnone_fp4_sglang_tp2-ep1-dpafalse_disagg-false_"
       "spec-none_conc16_mi355x-amds_05")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("win")
    make_run(SCENARIOS / "small.yaml", root / "small")
    return root / "small"


@pytest.fixture(scope="module")
def metrics_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("winm")
    make_run(SCENARIOS / "metrics.yaml", root / "metrics")
    return root / "metrics"


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "data" / src.name
    shutil.copytree(src, dst)
    return dst


def _windows(ing):
    return {(w.engine, w.workload): w for w in ing.windows}


def _shift_vllm_log(path: Path, hours: int) -> None:
    """Every 'MM-DD HH:MM:SS' stamp of a vLLM log moved by ``hours``."""
    def move(m: re.Match) -> str:
        t = dt.datetime.strptime(f"2026-{m[1]}", "%Y-%m-%d %H:%M:%S") + dt.timedelta(hours=hours)
        return f"{t:%m-%d %H:%M:%S}"
    path.write_text(re.sub(r"(\d\d-\d\d \d\d:\d\d:\d\d)", move, path.read_text()))


def test_same_model_is_lenient_but_tells_sizes_apart():
    assert same_model("/models/Kimi-K3", "moonshotai/Kimi-K3")
    assert same_model("kimi-k3", "moonshotai/Kimi-K3")
    assert same_model("/root/.cache/modelscope/models/Qwen/Qwen2___5-7B-Instruct",
                      "Qwen/Qwen2.5-7B-Instruct")
    assert not same_model("Qwen/Qwen3-8B", "Qwen/Qwen3-32B")
    assert not same_model("amd/GLM-5.1-MXFP4", "Qwen/Qwen3-32B")


def test_clock_offset_is_the_quarter_hour_that_puts_the_benchmarks_in_the_log():
    t = dt.datetime(2025, 7, 2, 14, 3)
    log = [(t + dt.timedelta(hours=9, minutes=30), t + dt.timedelta(hours=9, minutes=33))]
    bench = [(t, t + dt.timedelta(minutes=2))]
    assert clock_offset(bench, log) == dt.timedelta(hours=9, minutes=30)
    assert clock_offset(bench, [(t, t + dt.timedelta(minutes=3))]) == dt.timedelta(0)
    far = [(t - dt.timedelta(days=120), t - dt.timedelta(days=120) + dt.timedelta(minutes=40))]
    assert clock_offset(bench, far) == dt.timedelta(0)      # no shift fits: none is made


def test_a_log_of_another_model_is_an_error_naming_both(small, tmp_path):
    run_dir = _copy(small, tmp_path)
    log = run_dir / "raw/alpha/server.log"
    log.write_text(log.read_text().replace("'model': '/models/tiny'",
                                           "'model': 'Qwen/Qwen3-8B'"))
    result = next((run_dir / "raw/alpha").glob("vllm-*.json"))
    run = load_run("small", tmp_path / "data")
    with pytest.raises(ReportError) as err:
        ingest_run(run)
    text = err.value.one_line()
    assert text.startswith("data/small/raw/alpha/server.log: this log serves Qwen/Qwen3-8B, "
                           "but the results record test/Tiny-MoE (data/small/raw/alpha/")
    assert result.name in text.split("; ")[0]            # which result, by name
    assert "move it out of raw/alpha/" in text and "windows:" in text


def test_another_model_in_a_log_is_a_warning_where_run_yaml_states_the_windows(small,
                                                                                tmp_path):
    run_dir = _copy(small, tmp_path)
    log = run_dir / "raw/alpha/server.log"
    log.write_text(log.read_text().replace("'model': '/models/tiny'",
                                           "'model': 'Qwen/Qwen3-8B'"))
    (run_dir / "run.yaml").write_text((run_dir / "run.yaml").read_text() + (
        "windows:\n  alpha:\n    8k: {start: 2026-03-01T09:09:58, end: 2026-03-01T09:10:17}\n"))
    ing = ingest_run(load_run("small", tmp_path / "data"))
    notes = warnings_of(ing.summaries)
    assert any(n.startswith("data/small/raw/alpha/server.log: this log serves Qwen/Qwen3-8B")
               for n in notes)


def test_a_metrics_dump_of_another_model_is_an_error(metrics_run, tmp_path):
    run_dir = _copy(metrics_run, tmp_path)
    prom = run_dir / "raw/vllm/metrics.prom"
    prom.write_text(prom.read_text().replace('model_name="tiny"', 'model_name="Llama-3-70B"'))
    with pytest.raises(ReportError, match=r"^data/metrics/raw/vllm/metrics\.prom: this /metrics "
                                          r"dump serves Llama-3-70B, but the results record "
                                          r"test/Tiny-Dense \(data/metrics/raw/vllm/vllm-"):
        ingest_run(load_run("metrics", tmp_path / "data"))


def test_a_log_shifted_by_a_time_zone_is_found_and_the_offset_said(small, tmp_path):
    run_dir = _copy(small, tmp_path)
    before = _windows(ingest_run(load_run("small", small.parent)))
    _shift_vllm_log(run_dir / "raw/alpha/server.log", 9)
    run = load_run("small", tmp_path / "data")
    ing = ingest_run(run)
    after = _windows(ing)
    for wl in ("8k", "32k"):
        w, was = after[("alpha", wl)], before[("alpha", wl)]
        assert w.source == "result date, shifted by +9 h to the log's clock"
        assert dt.datetime.fromisoformat(w.start) - dt.datetime.fromisoformat(was.start) == \
            dt.timedelta(hours=9)
        assert len(ing.in_window("engine_stats", "alpha", wl)) >= 5
    assert after[("beta", "8k")] == before[("beta", "8k")]       # the other engine as it was
    assert not [n for n in warnings_of(ing.summaries) if "alpha" in n]
    check_windows(run, ing)


def test_a_log_of_another_time_is_a_warning_with_both_spans(small, tmp_path):
    run_dir = _copy(small, tmp_path)
    old = run_dir / "raw/alpha/stats.log"
    old.write_text("".join(
        f"(APIServer pid=7) INFO 11-01 10:{m:02d}:00 [loggers.py:271] Engine 000: Avg prompt "
        "throughput: 900.0 tokens/s, Avg generation throughput: 80.0 tokens/s, Running: 2 "
        "reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n"
        for m in range(0, 41, 10)))
    ing = ingest_run(load_run("small", tmp_path / "data"))
    notes = [n for n in warnings_of(ing.summaries) if n.startswith("data/small/raw/alpha/stats")]
    assert notes == ["data/small/raw/alpha/stats.log: its lines span 2026-11-01 10:00–10:40, "
                     "no benchmark's time (2026-03-01 09:09–09:10, 2026-03-01 09:11–09:12) "
                     "lies in it; its runtime records are not used for any benchmark"]
    summary = next(s for s in ing.summaries if s["file"] == "data/small/raw/alpha/stats.log")
    assert summary["warnings"] == notes                  # on the file: make check prints it


def test_a_request_count_the_log_does_not_match_is_a_warning(small, tmp_path):
    run_dir = _copy(small, tmp_path)
    result = next((run_dir / "raw/alpha").glob("vllm-*32768*.json"), None) or \
        sorted((run_dir / "raw/alpha").glob("vllm-*.json"))[-1]
    doc = json.loads(result.read_text())
    log = run_dir / "raw/alpha/server.log"
    lines = log.read_text().splitlines(keepends=True)
    access = [i for i, ln in enumerate(lines) if '"POST /v1/completions' in ln]
    extra = [lines[access[-1]]] * 20        # 20 more requests the result never sent
    log.write_text("".join(lines[:access[-1] + 1] + extra + lines[access[-1] + 1:]))
    ing = ingest_run(load_run("small", tmp_path / "data"))
    notes = [n for n in warnings_of(ing.summaries) if "requests (access lines)" in n]
    assert len(notes) == 1 and notes[0].startswith("data/small/raw/alpha/server.log: the log "
                                                   "saw 24 requests (access lines) in the ")
    assert f"the result records {doc['completed']} (completed + failed)" in notes[0]


@needs_samples
def test_the_real_aiperf_result_finds_its_window_in_the_sglang_log(tmp_path):
    run_dir = _glm_run(tmp_path)
    run = load_run("glm", tmp_path / "data")
    ing = ingest_run(run)
    check_windows(run, ing)
    # AIPerf's start_time (2026-06-03T18:10:43.439911) and benchmark_duration
    # (1818.697814784 s), both on the client's clock, which is the log's here
    summary = json.loads((run_dir / "raw/sglang/profile_export_aiperf.json").read_text())
    start = dt.datetime.fromisoformat(summary["start_time"]).replace(microsecond=0)
    end = start + dt.timedelta(seconds=summary["benchmark_duration"]["avg"]
                               if isinstance(summary["benchmark_duration"], dict)
                               else summary["benchmark_duration"])
    (w,) = ing.windows
    assert (w.engine, w.workload, w.source) == ("sglang", "c16", "result start time")
    assert w.start == "2026-06-03T18:10:42" == (start - dt.timedelta(seconds=1)).isoformat()
    assert w.end == "2026-06-03T18:41:13" == (end + dt.timedelta(seconds=12)).replace(
        microsecond=0).isoformat()
    # the log's Prefill lines inside it: the first after 18:10:42, the last before 18:41:13
    inside = ing.in_window("prefill_batch", "sglang", "c16")
    assert len(inside) > 400 and inside[0]["ts"] >= w.start and inside[-1]["ts"] <= w.end
    # its 95 access lines against 87 completed at concurrency 16: within the tolerance
    assert warnings_of(ing.summaries) == []


@needs_samples
def test_the_real_pair_with_its_log_in_another_time_zone(tmp_path):
    run_dir = _glm_run(tmp_path)
    log = run_dir / "raw/sglang/server.log"

    def move(m: re.Match) -> str:
        t = dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S") + dt.timedelta(hours=5, minutes=30)
        return f"[{t:%Y-%m-%d %H:%M:%S}"
    log.write_text(re.sub(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", move,
                          log.read_text(errors="replace")))
    ing = ingest_run(load_run("glm", tmp_path / "data"))
    (w,) = ing.windows
    assert w.source == "result start time, shifted by +5 h 30 min to the log's clock"
    assert (w.start, w.end) == ("2026-06-03T23:40:42", "2026-06-04T00:11:13")


def _glm_run(tmp_path: Path) -> Path:
    """The AIPerf results and SGLang server.log of one InferenceX run, as a run by hand."""
    if not GLM.is_dir():
        pytest.skip(f"no paired sample at {GLM}")
    run_dir = tmp_path / "data" / "glm"
    raw = run_dir / "raw" / "sglang"
    raw.mkdir(parents=True)
    for name in ("profile_export_aiperf.json", "profile_export.jsonl"):
        shutil.copyfile(GLM / "aiperf_artifacts" / name, raw / name)
    shutil.copyfile(GLM / "server.log", raw / "server.log")
    (run_dir / "run.yaml").write_text(
        "schema: 1\n"
        "title: {ko: \"GLM-5.1 실행\", en: \"A GLM-5.1 run\"}\n"
        "date: 2026-06-03\n"
        "hardware: {servers: 1, gpus: 2, gpu_model: MI355X}\n"
        "model: {name: amd/GLM-5.1-MXFP4}\n"
        "deployment: docker\n"
        "engines:\n  - {id: sglang, name: SGLang}\n"
        "workloads:\n"
        "  - {id: c16, label: C16, input_tokens: 89018, output_tokens: 820, concurrency: 16}\n")
    return run_dir


def _caveats_text(run, registry, lang: str) -> str:
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.sections import caveats_section

    root = Path(__file__).resolve().parents[1]
    t = load_catalogue(root / "templates" / "labels", lang)
    section = caveats_section(Writer(run, registry, lang, t), {})
    import html

    return html.unescape(" ".join(str(p) for p in section.paragraphs))


@pytest.mark.parametrize("covered", [False, True])
def test_the_report_says_logs_were_given_but_cover_no_benchmark(small, tmp_path, covered):
    """Not "no server logs" when logs were given: where none covers a benchmark's time
    (the event counts cite no stretch of a log), the report says so and names them."""
    from benchreport.core.figures import Figure, Source
    from benchreport.core.tables import write_rows

    _copy(small, tmp_path)
    run = load_run("small", tmp_path / "data", tmp_path / "report")
    run.paths.tables.mkdir(parents=True)
    write_rows(run.paths.tables / "inputs.parquet",
               [{"path": "data/small/raw/alpha/server.log", "sha256": "0", "role": "log"},
                {"path": "data/small/run.yaml", "sha256": "0", "role": "run"}],
               ["path", "sha256", "role"])
    src = (Source(path="data/small/raw/alpha/server.log", sha256="0", lines=(3, 9)),)
    fig = Figure(id="events.8k.alpha.jit_compiles", value=0, unit="count", method="m",
                 sources=src if covered else ())
    en = _caveats_text(run, {fig.id: fig}, "en")
    ko = _caveats_text(run, {fig.id: fig}, "ko")
    if covered:
        assert "alpha/server.log" not in en and "no server logs" not in en
        assert en.startswith("No setting differs")
    else:
        assert en.startswith("Server logs or /metrics dumps were given (alpha/server.log), "
                             "but none of them covers a benchmark's time")
        assert "no server logs" not in en
        assert ko.startswith("서버 로그 또는 /metrics 덤프(alpha/server.log)가 주어졌지만")


def test_a_file_that_understates_its_duration_keeps_its_requests_in_the_window():
    """Issue 33, finding 17: a vllm bench serve file that says 50 s while its requests took
    about 100 s used to shrink the window to 50 s, so the run's log events fell outside."""
    from types import SimpleNamespace

    from benchreport.ingest.windows import point_span

    def point(duration, e2els):
        return SimpleNamespace(date="2026-11-20T10:13:45", client="vllm-bench-serve",
                               fields={"duration": duration},
                               requests=[{"e2el_ms": ms, "start_s": None, "error": None}
                                         for ms in e2els] + [{"e2el_ms": 0.0,
                                                              "error": "Internal Server Error"}])

    start, end = point_span(point(50.0, [99_359.3, 99_866.1]))
    assert (end - start).total_seconds() == pytest.approx(99.8661 + 1)
    start, end = point_span(point(100.5, [99_359.3, 99_866.1]))       # as written: its own
    assert (end - start).total_seconds() == pytest.approx(100.5 + 1)
    assert point_span(point(None, [99_359.3])) is None               # no duration: no span
