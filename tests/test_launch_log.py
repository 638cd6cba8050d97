"""Whose account of a setting counts: the engine's log (vLLM's ``non-default args`` and its
engine configuration line, SGLang's ``server_args``) over the launch script in the folder,
and where the two differ, the report says so with both values and file:line.

The expected values are read by hand from the DGX Spark run (vLLM 0.25.1 and SGLang 0.5.16
serving Laguna-S-2.1-INT4 with DFlash): vllm-int4.log lines 8, 26, 32-34, 95, 96, 100;
sglang-int4.log lines 11-13, 38, 152, 169; start-vllm-int4.sh lines 26-36."""

from __future__ import annotations

import pytest

from .conftest import REAL_SAMPLES, needs_samples

DGX = REAL_SAMPLES / "paired" / "dgx-spark-laguna-vllm-vs-sglang"
RAW = "data/dgx/raw/{engine}/dgx-spark-laguna-vllm-vs-sglang/"
VLOG, SLOG = RAW.format(engine="vllm") + "vllm-int4.log", RAW.format(engine="sglang") + \
    "sglang-int4.log"
VSH = RAW.format(engine="vllm") + "start-vllm-int4.sh"


@pytest.fixture(scope="module")
def dgx(tmp_path_factory):
    """The DGX folder drafted by init and ingested (no notebooks, no HTML): (rows, compared)."""
    from benchreport.analyses.caveats import setting_caveats
    from benchreport.cli import main
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.run import ingest_run

    if not DGX.is_dir():
        pytest.skip(f"no real samples at {DGX}")
    data = tmp_path_factory.mktemp("dgx") / "data"
    assert main(["init", "dgx", str(DGX), "--data-root", str(data)]) == 0
    run = load_run("dgx", data)
    ing = ingest_run(run)
    rows, compared = setting_caveats(run, ing)
    return run, ing, rows, compared


@needs_samples
def test_the_log_wins_over_the_launch_script(dgx):
    _, _, rows, compared = dgx
    ctx = compared["max_context"]
    assert ctx.values == {"vllm": "65536", "sglang": "65536"}
    assert VLOG + ":8" in ctx.evidence and SLOG + ":13" in ctx.evidence
    assert "max_context" not in {r.id for r in rows}         # the same once the log counts
    assert compared["tensor_parallel"].values == {"vllm": "1", "sglang": "1"}
    assert compared["memory"].values == {"vllm": "--gpu-memory-utilization 0.89",
                                         "sglang": "--mem-fraction-static 0.85"}
    assert VLOG + ":8" in compared["memory"].evidence


@needs_samples
def test_launch_differences_name_both_values_and_lines(dgx):
    _, _, rows, _ = dgx
    launch = {r.setting: r for r in rows if r.kind == "launch"}
    assert set(launch) == {"max_model_len", "revision", "speculative_config"}
    ctx = launch["max_model_len"]
    assert ctx.engine == "vllm" and ctx.values == {"log": "65536", "launch": "262144"}
    assert ctx.evidence == [VLOG + ":8", VSH + ":33"]
    assert ctx.counts["passes_args"] == 36 and ctx.file == VSH       # the script's "$@"
    rev = launch["revision"]
    assert rev.values == {"log": "None", "launch": "67dbeda456e68139f281c40831f9d12049d8fc11"}
    assert rev.evidence == [VLOG + ":26", VSH + ":27"]
    # the draft's revision pin is in the script, not in what vLLM logged it was given
    assert "f6b32f4fb7ef2fb2ad481bb4c05433a2bf8b0ed1" in launch["speculative_config"].values[
        "launch"] and "revision" not in launch["speculative_config"].values["log"]
    # SGLang's script says what its server_args say
    assert not [r for r in rows if r.kind == "launch" and r.engine == "sglang"]


@needs_samples
def test_speculative_settings_in_each_engines_terms(dgx):
    _, _, rows, compared = dgx
    spec = compared["speculative"]
    assert spec.values == {"vllm": "dflash", "sglang": "DFLASH"}
    assert VLOG + ":26" in spec.evidence
    assert "speculative" not in {r.id for r in rows}                  # the same method
    drafts = compared["draft_tokens"]
    assert drafts.values == {"vllm": "num_speculative_tokens 15",
                             "sglang": "speculative_num_draft_tokens 16 (default)"}
    assert "draft_tokens" in {r.id for r in rows}          # different terms: never equal


@needs_samples
@pytest.mark.parametrize("sid, vllm, sglang, differs", [
    ("max_sequences", "32", "48 (set by the engine)", True),
    ("kv_tokens", "950420", "185897", True),
    ("kv_dtype", "float8_e4m3fn (auto)", "bfloat16 (auto)", True),
    ("attention_backend", "FLASHINFER", "flashinfer (default)", False),
    ("moe_kernel", "CompressedTensorsWNA16MarlinMoEMethod",
     "CompressedTensorsWNA16MarlinMoEMethod", False),
    ("prefix_caching", "on", "on", False),
    ("revision", "unpinned", "unpinned", False),
    ("cuda_graph", "PIECEWISE=51 (largest=512)", "8", True),
])
def test_uncontrolled_factors_the_logs_reveal(dgx, sid, vllm, sglang, differs):
    _, _, rows, compared = dgx
    assert compared[sid].values == {"vllm": vllm, "sglang": sglang}
    assert (sid in {r.id for r in rows}) is differs
    assert len(compared[sid].evidence) == 2


@needs_samples
def test_evidence_lines_of_the_logged_factors(dgx):
    _, _, _, compared = dgx
    assert compared["kv_tokens"].evidence == [SLOG + ":169", VLOG + ":100"]
    assert compared["kv_dtype"].evidence == [SLOG + ":152", VLOG + ":95"]
    assert compared["max_sequences"].evidence == [SLOG + ":13", VLOG + ":8"]
    assert compared["attention_backend"].evidence == [SLOG + ":13", VLOG + ":32"]
    assert compared["page_size"].values == {"sglang": "1"}       # vLLM logs no block size


def test_setting_words_for_the_new_notes():
    from benchreport.core.i18n import load_catalogue
    from benchreport.core.paths import LABELS

    for lang in ("ko", "en"):
        t = load_catalogue(LABELS, lang)
        for key in ("settingword.unpinned", "settingword.on", "settingword.off",
                    "settingword.set_by_the_engine", "caveats.launch_intro",
                    "caveats.launch_passes", "caveats.launch_changed", "table.in_log",
                    "table.in_launch", "table.launch_setting", "why.launch_differs"):
            assert t[key] and not any(ch.isdigit() for ch in t[key]), (lang, key)
        for sid in ("max_sequences", "moe_kernel", "kv_dtype", "page_size", "cuda_graph",
                    "kv_tokens", "prefix_caching", "revision", "draft_tokens"):
            assert t["setting." + sid] and t["why." + sid], (lang, sid)


# --- shell launch scripts and saved command lines ------------------------------------------

def _shell(text: str):
    from benchreport.ingest.parsers.launch import shell_launch

    launch = shell_launch(text)
    assert launch is not None, text
    return launch


def test_double_quoted_json_with_escaped_quotes_and_a_variable_decodes():
    s = _shell('REV=abc123\nexec vllm serve org/m \\\n  --speculative-config '
               '"{\\"model\\":\\"org/d\\",\\"revision\\":\\"$REV\\",\\"num_speculative_tokens'
               '\\":15}" \\\n  "$@"\n')
    assert s.config.flags["speculative_config"] == {
        "model": "org/d", "revision": "abc123", "num_speculative_tokens": 15}
    assert s.config.lines["speculative_config"] == 3 and s.config.passes_args == 4


def test_single_quoted_json_decodes():
    s = _shell("vllm serve m --speculative-config '{\"method\": \"eagle\", "
               "\"num_speculative_tokens\": 3}'")
    assert s.config.flags["speculative_config"] == {"method": "eagle",
                                                     "num_speculative_tokens": 3}
    assert s.config.passes_args == 0


@pytest.mark.parametrize("prefix", ["exec ", "", "nohup ", "exec env CUDA_VISIBLE_DEVICES=0 ",
                                    "env A=1 B=2 "])
def test_exec_env_and_bare_commands(prefix):
    s = _shell(f"{prefix}python3 -m sglang.launch_server --model-path org/m --tp-size 2\n")
    assert s.engine == "sglang" and s.config.flags["tp_size"] == "2"
    assert s.config.flags["model_path"] == "org/m"
    if "env " in prefix:                    # `env VAR=…` assignments are the command's env
        assert set(s.config.env) >= ({"A", "B"} if "A=1" in prefix
                                     else {"CUDA_VISIBLE_DEVICES"})


def test_comments_source_set_and_continuations():
    s = _shell("#!/usr/bin/env bash\n# a comment with --max-num-seqs 1\nset -euo pipefail\n"
               "source ~/venv/bin/activate\n. ~/other/env.sh\nexport VLLM_LOGGING_LEVEL=INFO\n"
               "M=org/m\n\nexec vllm serve \"$M\" \\\n  --max-num-seqs 32 \\\n"
               "  # --max-model-len 1\n")
    assert s.engine == "vllm" and s.line == 9
    assert s.config.flags["max_num_seqs"] == "32" and s.config.lines["max_num_seqs"] == 10
    assert "max_model_len" not in s.config.flags         # commented out
    assert s.config.args[:2] == ("serve", "org/m")
    assert s.config.env == {"VLLM_LOGGING_LEVEL": "INFO"}


@pytest.mark.parametrize("word", ['"$@"', "$@", '"${@}"', "$*"])
def test_passing_the_scripts_arguments_on_is_recorded(word):
    s = _shell(f"exec vllm serve m --port 8000 {word}\n")
    assert s.config.passes_args == 1 and word.strip('"') not in s.config.args


def test_a_saved_command_line_without_exec():
    s = _shell("python -m vllm.entrypoints.openai.api_server --model org/m "
               "--tensor-parallel-size 4 --max-model-len=32768\n")
    assert s.engine == "vllm" and s.config.flags["tensor_parallel_size"] == "4"
    assert s.config.flags["max_model_len"] == "32768" and s.line == 1


def test_the_dgx_head_script():
    s = _shell((DGX / "start-vllm-int4.sh").read_text()) if DGX.is_dir() else None
    if s is None:
        pytest.skip(f"no real samples at {DGX}")
    assert s.line == 26 and s.config.passes_args == 36
    assert s.config.flags["revision"] == "67dbeda456e68139f281c40831f9d12049d8fc11"
    assert s.config.flags["speculative_config"]["revision"] == \
        "f6b32f4fb7ef2fb2ad481bb4c05433a2bf8b0ed1"
    assert s.config.lines["max_model_len"] == 33


# --- init drafts the model the server files name -------------------------------------------

@needs_samples
def test_init_drafts_the_model_the_logs_and_launch_files_agree_on(tmp_path):
    from benchreport.cli import main

    assert main(["init", "d", str(DGX), "--data-root", str(tmp_path / "data")]) == 0
    run_yaml = (tmp_path / "data/d/run.yaml").read_text()
    assert 'model:\n  name: "poolside/Laguna-S-2.1-INT4"\n' in run_yaml
    assert "model: TODO" not in run_yaml


@needs_samples
def test_init_says_when_the_engines_serve_different_models(tmp_path, capsys):
    from benchreport.cli import main

    src = tmp_path / "src"
    src.mkdir()
    (src / "start-vllm.sh").write_text((DGX / "start-vllm-int4.sh").read_text())
    (src / "start-sglang.sh").write_text((DGX / "start-sglang-int4.sh").read_text().replace(
        "--model-path poolside/Laguna-S-2.1-INT4", "--model-path poolside/Laguna-XS"))
    assert main(["init", "d", str(src), "--data-root", str(tmp_path / "data")]) == 0
    run_yaml = (tmp_path / "data/d/run.yaml").read_text()
    assert "model: TODO" in run_yaml
    out = capsys.readouterr().out
    assert "the server files name different models (sglang: poolside/Laguna-XS; vllm: " \
           "poolside/Laguna-S-2.1-INT4)" in out


@pytest.mark.parametrize("module", ["benchreport.ingest.parsers.launch",
                                    "benchreport.ingest.parsers.vllm_log",
                                    "benchreport.pipeline.initfiles",
                                    "benchreport.analyses.caveats"])
def test_the_doctests_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


@needs_samples
def test_a_script_that_passes_no_arguments_on_was_changed_since(tmp_path):
    """The same run with the vLLM script's trailing "$@" removed: the differences stay, and
    nothing but a change since can explain them (passes_args 0)."""
    from benchreport.analyses.caveats import setting_caveats
    from benchreport.cli import main
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.run import ingest_run

    src = tmp_path / "src"
    src.mkdir()
    script = (DGX / "start-vllm-int4.sh").read_text()
    (src / "start-vllm.sh").write_text(script.replace('  --host 0.0.0.0 --port 8000 \\\n'
                                                      '  "$@"\n', "  --host 0.0.0.0\n"))
    (src / "vllm.log").write_bytes((DGX / "vllm-int4.log").read_bytes())
    assert main(["init", "v", str(src), "--data-root", str(tmp_path / "data")]) == 0
    run = load_run("v", tmp_path / "data")
    rows, _ = setting_caveats(run, ingest_run(run))
    launch = {r.setting: r for r in rows if r.kind == "launch"}
    assert set(launch) == {"max_model_len", "revision", "speculative_config"}
    assert {r.counts["passes_args"] for r in launch.values()} == {0}
