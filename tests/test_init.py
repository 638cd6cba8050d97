"""`benchreport init` on folders as they come: one series per model (test, engine version),
files that are not results skipped with a line each, engines guessed from what the files
say, workloads labelled with the lengths really sent, and `--dry-run`."""

import json
import re
import shutil
from html import unescape

import pytest

from benchreport.core.errors import ReportError

from .conftest import REAL_SAMPLES, needs_samples

REAL = REAL_SAMPLES
INFERENCEMAX = "paired/inferencemax-glm51-mi355x-sglang-aiperf"
DGX = "paired/dgx-spark-laguna-vllm-vs-sglang"


def _main(*argv) -> int:
    from benchreport.cli import main

    return main([str(a) for a in argv])


def _points(run_id, data):
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.points import load_points

    return load_points(load_run(run_id, data, data.parent / "report"))


def _nightly(path, models=(("qwen2_5_7B", 30.0), ("qwen2_5_vl_7B", 45.0))):
    """A vLLM nightly benchmark_results.json: a request-rate sweep of each model, the
    model named only in each row's Test name; TTFT known per row."""
    rows = []
    for tag, ttft in models:
        for q in (1, 4, "inf"):
            rows.append({"Test name": f"serving_{tag}_tp1_qps_{q}", "GPU": "A2",
                         "Request rate (req/s)": q, "Tput (req/s)": 0.9,
                         "Output Tput (tok/s)": 200.0,
                         "TTFT (ms)": ttft + (100.0 if q == "inf" else 0.0),
                         "ITL (ms)": 8.0, "TPOT (ms)": 8.5, "# of req.": 200})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=1))
    return rows


def _bench_serve(path, model, ttft, rate=4.0):
    """A `vllm bench serve` result of ``model`` at one request rate: 100 requests of 256
    tokens in and 128 out."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "date": "20250507-100754", "backend": "vllm", "model_id": model,
        "tokenizer_id": model, "num_prompts": 100, "request_rate": rate,
        "burstiness": 1.0, "max_concurrency": None, "duration": 30.0, "completed": 100,
        "failed": 0, "total_input_tokens": 25600, "total_output_tokens": 12800,
        "request_throughput": 3.3, "output_throughput": 426.0,
        "mean_ttft_ms": ttft, "median_ttft_ms": ttft, "p99_ttft_ms": ttft * 2,
        "mean_tpot_ms": 9.0, "median_tpot_ms": 9.0, "p99_tpot_ms": 12.0,
        "mean_itl_ms": 9.0, "median_itl_ms": 9.0, "p99_itl_ms": 15.0}, indent=4))


# ---------------------------------------------------------------------------------------
# one series per model

@pytest.mark.slow
def test_a_nightly_aggregate_of_two_models_is_two_series_and_builds(tmp_path, project):
    from benchreport.core.tables import load_ingested
    from benchreport.pipeline.run import build

    rows = _nightly(tmp_path / "in" / "benchmark_results.json")
    data = tmp_path / "data"
    assert _main("init", "nt", tmp_path / "in", "--data-root", data) == 0
    text = (data / "nt/run.yaml").read_text()
    assert "repeats" not in text
    assert "serving_qwen2_5_7B_tp1 and serving_qwen2_5_vl_7B_tp1" in text
    run = build("nt", data_root=data, report_root=tmp_path / "report", project=project,
                out=lambda line: None, pdf=False)
    points = load_ingested(run).points
    assert sorted((p["variant"], p["load"], p["repeat"]) for p in points) == sorted(
        (f"test-serving_{m}_tp1", load, 1) for m in ("qwen2_5_7b", "qwen2_5_vl_7b")
        for load in ("r1", "r4", "rinf"))
    # each row is its own point with its own median, never a mean over the two models
    by = {(p["variant"], p["load"]): p["median_ttft_ms"] for p in points}
    assert by[("test-serving_qwen2_5_vl_7b_tp1", "rinf")] == rows[5]["TTFT (ms)"] == 145.0
    assert by[("test-serving_qwen2_5_7b_tp1", "r1")] == rows[0]["TTFT (ms)"] == 30.0


def test_two_files_of_two_models_are_two_series(tmp_path, capsys):
    _bench_serve(tmp_path / "in" / "a.json", "Qwen/Qwen3-32B", 40.0)
    _bench_serve(tmp_path / "in" / "b.json", "openai/gpt-oss-120b", 70.0)
    data = tmp_path / "data"
    assert _main("init", "two", tmp_path / "in", "--data-root", data) == 0
    text = (data / "two/run.yaml").read_text()
    assert "repeats" not in text
    assert 'en: "Qwen3-32B and gpt-oss-120b: vLLM benchmark (two)"' in text or \
        'en: "gpt-oss-120b and Qwen3-32B: vLLM benchmark (two)"' in text
    points = _points("two", data)
    assert [(p.variant, p.repeat, p.point.fields["mean_ttft_ms"]) for p in points] == [
        ("model-gpt-oss-120b", 1, 70.0), ("model-qwen3-32b", 1, 40.0)]
    assert "series: model-gpt-oss-120b, model-qwen3-32b" in capsys.readouterr().out


def test_declared_repeats_over_two_models_stop_with_both_named(tmp_path):
    data = tmp_path / "data"
    raw = data / "r" / "raw" / "vllm"
    _bench_serve(raw / "a.json", "Qwen/Qwen3-32B", 40.0)
    _bench_serve(raw / "b.json", "openai/gpt-oss-120b", 70.0)
    (data / "r" / "run.yaml").write_text(
        "schema: 1\ntitle: {ko: t, en: t}\ndate: 2025-05-07\nhardware: TODO\nmodel: TODO\n"
        "engines:\n  - {id: vllm, name: vLLM}\nworkloads:\n"
        "  - {id: w, label: W, input_tokens: 256, request_rate: 4, repeats: 2}\n")
    with pytest.raises(ReportError) as err:
        _points("r", data)
    line = err.value.one_line()
    assert "\n" not in line
    assert "repeats: 2" in line and "two models" in line
    assert "Qwen/Qwen3-32B (data/r/raw/vllm/a.json:1)" in line
    assert "openai/gpt-oss-120b (data/r/raw/vllm/b.json:1)" in line


def test_repeats_of_one_model_beside_another_model_stay_repeats(tmp_path):
    """Two runs of one model and one of another, repeats: 2: the model with two runs has
    repeats 1 and 2, the other is a series of its own with one."""
    data = tmp_path / "data"
    raw = data / "r" / "raw" / "vllm"
    _bench_serve(raw / "a1.json", "m/A", 40.0)
    _bench_serve(raw / "a2.json", "m/A", 42.0)
    _bench_serve(raw / "b.json", "m/B", 70.0)
    (data / "r" / "run.yaml").write_text(
        "schema: 1\ntitle: {ko: t, en: t}\ndate: 2025-05-07\nhardware: TODO\nmodel: TODO\n"
        "engines:\n  - {id: vllm, name: vLLM}\nworkloads:\n"
        "  - {id: w, label: W, input_tokens: 256, request_rate: 4, repeats: 2}\n")
    assert [(p.variant, p.repeat) for p in _points("r", data)] == [
        ("model-a", 1), ("model-a", 2), ("model-b", 1)]


# ---------------------------------------------------------------------------------------
# tolerant folders, engines from content, lengths as sent

@needs_samples
def test_a_shell_launch_script_is_read_into_launch_settings():
    from benchreport.ingest.parsers.anyfile import parse_any
    from benchreport.ingest.parsers.launch import shell_launch

    path = REAL / DGX / "start-vllm-int4.sh"
    with open(path, "rb") as fh:
        (rec,) = list(parse_any(fh, str(path)))
    assert rec["kind"] == "launch_config" and rec["line"] == 26
    assert rec["flags"]["max_num_seqs"] == "32" and rec["flag_lines"]["max_num_seqs"] == 32
    assert rec["flags"]["_positional"] == ["serve", "poolside/Laguna-S-2.1-INT4"]
    # the shell variable the script sets is expanded into the JSON value
    assert rec["flags"]["speculative_config"] == {
        "model": "poolside/Laguna-S-2.1-DFlash-INT4",
        "revision": "f6b32f4fb7ef2fb2ad481bb4c05433a2bf8b0ed1", "num_speculative_tokens": 15}
    assert rec["env"]["VLLM_LOGGING_LEVEL"] == "INFO"
    sg = shell_launch((REAL / DGX / "start-sglang-int4.sh").read_text())
    assert sg.engine == "sglang" and sg.line == 15
    assert sg.config.flags["model_path"] == "poolside/Laguna-S-2.1-INT4"
    assert sg.config.flags["context_length"] == "65536" and sg.config.lines["port"] == 26
    # InferenceX's benchmark_command.txt starts the client, not a server
    command = next((REAL / INFERENCEMAX).rglob("benchmark_command.txt")).read_text()
    assert command.startswith("aiperf profile") and shell_launch(command) is None


@needs_samples
def test_a_saved_launch_command_in_a_txt_is_a_launch_record(tmp_path, capsys):
    # the vllm_command.txt style of other harnesses: a short text file holding the command
    from benchreport.ingest.parsers.anyfile import is_launch, parse_any

    folder = tmp_path / "in"
    folder.mkdir()
    sweep = REAL / "vllm-sweep"
    shutil.copy(sweep / "vllm-ascend-nightly-2025-05-serving_qwen2_5_7B_tp1_qps_1.json",
                folder / "serving_qps_1.json")
    command = folder / "vllm_command.txt"
    command.write_text("vllm serve Qwen/Qwen2.5-7B-Instruct \\\n  --tensor-parallel-size 1 \\\n"
                       "  --max-num-seqs 256\n")
    notes = folder / "notes.txt"
    notes.write_text("ran on the nightly image, nothing special\n")
    assert is_launch(command) and not is_launch(notes)
    with open(command, "rb") as fh:
        (rec,) = list(parse_any(fh, str(command)))
    assert rec["kind"] == "launch_config" and rec["flags"]["max_num_seqs"] == "256"
    assert rec["flag_lines"]["tensor_parallel_size"] == 2
    assert _main("init", "t", folder, "--dry-run", "--data-root", tmp_path / "d") == 0
    out = capsys.readouterr().out
    assert "in/vllm_command.txt → vllm, Qwen/Qwen2.5-7B-Instruct: used (vLLM launch command)" \
        in out
    assert "in/notes.txt → skipped" in out


def test_a_broken_result_of_a_known_client_still_stops_init(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "README.md").write_text("# notes\n")
    (folder / "r.json").write_text(json.dumps({
        "date": "20250507-100754", "backend": "vllm", "num_prompts": 8, "duration": 0,
        "completed": 8, "mean_ttft_ms": 1.0}))
    assert _main("init", "x", folder, "--data-root", tmp_path / "data") != 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {folder / 'r.json'}:1: 'duration' must be > 0 s, found 0")
    assert not (tmp_path / "data" / "x").exists()


@needs_samples
def test_lengths_are_the_ones_sent_not_the_configured_maximum(tmp_path):
    """lora_bench's records ask for random_input_len 1024 and random_output_len 128 with
    random_range_ratio 0; the requests had 40315 ÷ 100 and 25466 ÷ 100 tokens."""
    data = tmp_path / "data"
    assert _main("init", "s", REAL / "sglang-multi", "--data-root", data) == 0
    text = (data / "s/run.yaml").read_text()
    assert '  - id: "in403-out255"\n    label: "403 → 255"\n    input_tokens: 403\n' \
           "    output_tokens: 255\n" in text
    assert [(p.workload, p.load.id, p.repeat) for p in _points("s", data)][:2] == [
        ("in403-out255", "r2", 1), ("in403-out255", "r2", 2)]


# ---------------------------------------------------------------------------------------
# every folder of the real samples, as a new user gives it

# folder -> (extra arguments, lines the dry run prints, the error it ends with or None)
DRY_RUNS = {
    "aiperf": (["--engine", "vllm"], [
        "aiperf/aiperf-early-examples-run1-profile_export_aiperf.json → vllm, "
        "openai/gpt-oss-20b, in550-out243, c100 (client-aiperf,model-gpt-oss-20b), repeat 1",
        "aiperf/genai-perf-llama3-8b-nim-c10-profile_export_genai_perf.json → vllm, "
        "meta/llama3-8b-instruct, in200-out50, c10 (client-genai-perf,model-llama3-8b-"
        "instruct), repeat 1"], None),
    "genai-bench": ([], [
        "genai-bench/genai-bench-0.0.2-qwen3-30b-N2000-experiment_metadata.json → baseten: "
        "used (genai-bench's experiment description)",
        "_num_concurrency_16_time_15s.json → baseten, model not stated, in1960-out201, c16, "
        "repeat 1: used (genai-bench result; engine guessed from the hosted API genai-bench's "
        "api_backend names (baseten)"], None),
    "guidellm": ([], ["guidellm/guidellm-0.5.0dev-gpt-oss-20b-synchronous.json → vllm, "
                      "openai/gpt-oss-20b, in93-out1024, c1, repeat 1: used (guidellm result; "
                      "engine guessed from the endpoint URL http://0.0.0.0:8000: port 8000 is "
                      "vLLM's default)"], None),
    "llmperf": ([], ["llmperf/llmperf-leaderboard-summary-groq_70b.json → groq, "
                     "llama2-70b-4096, in550-out150, c5, repeat 1",
                     "llmperf/llmperf-leaderboard-individual-groq_70b.json → groq: used "
                     "(llmperf result), the same run as "
                     "llmperf/llmperf-leaderboard-summary-groq_70b.json"], None),
    "prometheus": ([], ["prometheus/vllm-0.25.1-opt125m-tp2-idle-metrics.txt → vllm: used "
                        "(a /metrics dump)",
                        "no benchmark result among the given files (only 3 /metrics dumps): "
                        "a run of the servers' own files only (results: none)"],
                   None),
    "sglang-multi": ([], ["sglang-multi/sglang-lora_bench-1115_100_1024_128-6records.jsonl → "
                          "sglang, model not stated, in403-out255, r1000, repeat 2"], None),
    "vllm-sweep": ([], [
        "vllm-sweep/vllm-bench-sweep-0.25.1-mns4-c2-run1.json → vllm, facebook/opt-125m, "
        "in32-out16, c2 (model-opt-125m), repeat 2: used (vllm-bench-serve result; engine "
        "guessed from the vllm bench sweep layout (run_number with serve parameters))",
        "vllm-sweep/vllm-ascend-nightly-2025-05-serving_qwen2_5_7B_tp1_qps_inf.json → vllm, "
        "/root/.cache/modelscope/models/Qwen/Qwen2___5-7B-Instruct, in218-out223, rinf "
        "(model-qwen2___5-7b-instruct), repeat 1"], None),
    DGX: ([], [
        "dgx-spark-laguna-vllm-vs-sglang/LICENSE → skipped: text, not a result",
        "dgx-spark-laguna-vllm-vs-sglang/ergebnisse_int4.json → skipped: JSON, not a result "
        "of a known client",
        "dgx-spark-laguna-vllm-vs-sglang/sglang-int4.log → sglang, poolside/Laguna-S-2.1-INT4: "
        "used (SGLang server log)",
        "dgx-spark-laguna-vllm-vs-sglang/start-vllm-int4.sh → vllm, poolside/Laguna-S-2.1-INT4: "
        "used (vLLM launch script)",
        "dgx-spark-laguna-vllm-vs-sglang/start-vllm-int4.sh.at-a30decd → skipped: a vLLM "
        "launch command, but the build reads launch commands only from files named *.sh or "
        "*.txt",
        "no benchmark result among the given files (only 2 launch files, 2 server logs, "
        "8 skipped): a run of the servers' own files only (results: none)"], None),
    INFERENCEMAX: ([], [
        "inferencemax-glm51-mi355x-sglang-aiperf/README.repo.md → skipped: text, not a result",
        "/metrics_plots.png → skipped: an image",
        "/aiperf_artifacts/logs/aiperf.log → skipped: AIPerf's own log",
        "/benchmark.log → skipped: AIPerf's own log",
        "/benchmark_command.txt → skipped: the benchmark client's command line (aiperf …), "
        "not a server launch",
        "/profile_export_aiperf_timeslices.json → skipped: AIPerf's per-time-slice export",
        "/server_metrics_export.csv → skipped: AIPerf's summary of the server's /metrics",
        "conc16_mi355x-amds_05/server.log → sglang, amd/GLM-5.1-MXFP4: used (SGLang server log)",
        "server_logs_glm5.1_tp2_conc16_offloadnone_fp4_sglang_tp2-ep1-dpafalse_disagg-false_"
        "spec-none_conc16_mi355x-amds_05/server.log → skipped: the same bytes as",
        "/aiperf_artifacts/profile_export_aiperf.json → sglang, amd/GLM-5.1-MXFP4, "
        "in89018-out820, c16, repeat 1: used (aiperf result; engine guessed from server.log "
        "beside the results)"], None),
}


@needs_samples
@pytest.mark.parametrize("folder", sorted(DRY_RUNS))
def test_dry_run_of_every_real_folder(tmp_path, capsys, folder):
    extra, expected, error = DRY_RUNS[folder]
    data = tmp_path / "data"
    args = ["init", "x", REAL / folder, "--data-root", data, "--dry-run", *extra]
    code = _main(*args)
    captured = capsys.readouterr()
    if error:
        (line,) = captured.err.splitlines()           # one line
        assert code != 0 and line.startswith(f"error: {error}"), line
    else:
        assert code == 0, captured.err
    printed = captured.out
    lines = printed.splitlines()
    assert lines[0] == "file → engine, model, workload, load, repeat: used or skipped, and why"
    for want in expected:
        assert any(want in line for line in lines), (want, printed)
    # one line per file at least, and nothing written anywhere under the data root
    files = [p for p in (REAL / folder).rglob("*") if p.is_file()]
    assert len([ln for ln in lines if " → " in ln]) >= len(files)
    assert not data.exists()


@needs_samples
def test_a_result_nothing_names_the_engine_of_is_an_unnamed_server(tmp_path, capsys):
    """The early AIPerf file names only localhost:9000: its results are kept under an
    engine that says it is unnamed (never refused, never guessed), and the run builds."""
    assert _main("init", "x", REAL / "aiperf", "--data-root", tmp_path / "data") == 0
    printed = capsys.readouterr().out
    assert "engine: server (not stated in the files: an unnamed server; pass --engine to " \
           "name it)" in printed
    assert "engine: nim (guessed from the host name in the endpoint URL nim:8000)" in printed
    run_yaml = (tmp_path / "data/x/run.yaml").read_text()
    assert '  - id: server\n    name: "unnamed server"' in run_yaml
    assert 'ko: "llama3-8b-instruct 및 gpt-oss-20b: NVIDIA NIM 및 unnamed server' in run_yaml
    assert (tmp_path / "data/x/raw/server/aiperf/"
            "aiperf-early-examples-run1-profile_export_aiperf.json").is_file()


@needs_samples
@pytest.mark.parametrize("folder, said", [
    (INFERENCEMAX, "engine: sglang (guessed from server.log beside the results)"),
    ("vllm-sweep", "series: model-opt-125m, model-qwen2___5-7b-instruct"),
    ("llmperf", "engine: groq (guessed from the hosted API llmperf's framework names (groq)"),
])
def test_init_then_check_of_real_folders(tmp_path, capsys, folder, said):
    data = tmp_path / "data"
    assert _main("init", "r", REAL / folder, "--data-root", data) == 0
    out = capsys.readouterr().out
    assert said in out
    if folder == INFERENCEMAX:
        assert "skipped inferencemax-glm51-mi355x-sglang-aiperf/README.repo.md: text, not " \
               "a result" in out
        copied = {p.name for p in (data / "r/raw/sglang").rglob("*") if p.is_file()}
        assert copied == {"server.log", "profile_export.jsonl", "profile_export_aiperf.csv",
                          "profile_export_aiperf.json"}
    assert _main("check", "r", "--data-root", data) == 0
    shutil.rmtree(data)


def _no_todo_in_the_report(tmp_path, run_id, source, *extra):
    data, report = tmp_path / "data", tmp_path / "report"
    assert _main("init", run_id, str(source), "--data-root", str(data), *extra) == 0
    run_yaml = (data / run_id / "run.yaml").read_text()
    _main("build", run_id, "--data-root", str(data), "--report-root", str(report), "--no-pdf",
          "--allow-failed")
    for lang in ("en", "ko"):
        html = (report / run_id / f"report.{lang}.html").read_text()
        assert "TODO" not in html, (lang, html[max(0, html.find("TODO") - 200):][:300])
    return run_yaml


@pytest.mark.slow
@needs_samples
def test_a_run_whose_files_name_no_model_gets_a_title_without_todo(tmp_path):
    run_yaml = _no_todo_in_the_report(tmp_path, "s", REAL_SAMPLES / "sglang-multi")
    assert ('title:   # the files name no model: edit the title\n'
            '  ko: "SGLang 벤치마크 (s)"\n  en: "SGLang benchmark (s)"\n') in run_yaml
    assert "model: TODO" in run_yaml                 # still "not stated" in the report


@pytest.mark.slow
def test_a_run_whose_every_request_failed_gets_a_workload_label_of_words(tmp_path):
    # vLLM when every request failed: no input tokens recorded, so no input length
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "vllm-failed.json").write_text(json.dumps({
        "date": "20260101-120000", "backend": "vllm", "model_id": "org/m",
        "tokenizer_id": "org/m", "num_prompts": 4, "request_rate": 1.0, "burstiness": 1.0,
        "max_concurrency": None, "duration": 2.0, "completed": 0, "failed": 4,
        "total_input_tokens": 0, "total_output_tokens": 0, "request_throughput": 0.0,
        "output_throughput": 0.0, "mean_ttft_ms": 0.0, "median_ttft_ms": 0.0,
        "p99_ttft_ms": 0.0, "mean_e2el_ms": 0.0, "median_e2el_ms": 0.0}))
    run_yaml = _no_todo_in_the_report(tmp_path, "f", folder, "--engine", "vllm")
    assert '    label: "input length not stated / 입력 길이 밝히지 않음"   # the files ' \
           'record no input length: edit the label\n' in run_yaml
    # run.yaml keeps the length it needs, marked for the user
    assert "    input_tokens: 0   # TODO: the files record no input length\n" in run_yaml
    html = (tmp_path / "report/f/report.en.html").read_text()
    assert "vLLM · input length not stated / 입력 길이 밝히지 않음 · r1" in html


@pytest.mark.slow
@needs_samples
@pytest.mark.parametrize("folder", ["prometheus", DGX])
def test_server_files_alone_make_a_run_that_says_it_measured_nothing(tmp_path, folder):
    """Only /metrics dumps, or only server logs and launch scripts (the DGX folder, whose
    client is the author's own): init drafts a run with ``results: none`` and the build
    shows the servers' settings, and says in both languages that no throughput or latency
    was measured, with no TODO and no section about runs or gaps."""
    data, report = tmp_path / "data", tmp_path / "report"
    assert _main("init", "s", REAL / folder, "--data-root", data) == 0
    run_yaml = (data / "s/run.yaml").read_text()
    assert "results: none" in run_yaml and "workloads: []" in run_yaml
    assert "  - id: sglang\n" in run_yaml and "  - id: vllm\n" in run_yaml
    assert _main("build", "s", "--data-root", data, "--report-root", report, "--no-pdf") == 0
    for lang, words in (("en", "No benchmark client's result was given"),
                        ("ko", "벤치마크 클라이언트의 결과 파일이 없습니다")):
        html = unescape((report / f"s/report.{lang}.html").read_text())
        summary = html[html.index('id="summary"'):html.index('id="environment"')]
        assert words in summary and "TODO" not in html
        assert "repeated runs would show" not in html and 'id="points"' not in html
    en = re.sub(r"</?code>", "", (report / "s/report.en.html").read_text())   # as read
    if folder == DGX:       # the logs' account is shown; the launch file's where it differs
        assert "Maximum context (tokens)" in en and "65,536" in en and "262,144" in en
        # vLLM's --speculative-config names no method, but its engine configuration line does
        assert "(method not stated)" not in en and "None, 15" not in en
        assert "num_speculative_tokens 15" in en and "speculative_num_draft_tokens 16" in en
        ko = unescape(re.sub(r"</?code>", "", (report / "s/report.ko.html").read_text()))
        assert "speculative_num_draft_tokens 16 (기본값)" in ko and "\"$@\"(줄 36)" in ko


def test_results_none_and_workloads_must_agree():
    from benchreport.core.runmeta import parse_run_yaml

    base = ("schema: 1\ntitle: {ko: t, en: t}\ndate: 2026-01-01\nhardware: TODO\n"
            "model: TODO\ndeployment: TODO\nengines:\n  - {id: vllm, name: vLLM}\n")
    with pytest.raises(ReportError, match="run.workloads is empty.*results: none"):
        parse_run_yaml(base + "workloads: []\n", "run.yaml")
    with pytest.raises(ReportError, match="run.results: none says the run holds no client"):
        parse_run_yaml(base + "results: none\nworkloads:\n  - {id: w, label: w, "
                       "input_tokens: 1, concurrency: 1}\n", "run.yaml")
    with pytest.raises(ReportError, match="run.results can only be none"):
        parse_run_yaml(base + "results: some\nworkloads: []\n", "run.yaml")
    meta = parse_run_yaml(base + "results: none\nworkloads: []\n", "run.yaml")
    assert meta.server_only and meta.workloads == ()
