"""The command line and the Makefile fail with one line that says what to do."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchreport.cli import main

from .conftest import copy_run

# a goal that runs the tool needs the project's .venv: in a checkout without one, make would
# install it first (a pip install from inside a test), so those tests skip there
NEEDS_VENV = pytest.mark.skipif(
    not (Path(__file__).resolve().parents[1] / ".venv" / ".installed").exists(),
    reason="this make goal needs the project's .venv (make install); a checkout without "
           "one would install it from inside the test")


def _make(project, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(["make", "--no-print-directory", "-C", str(project), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_make_report_of_a_missing_run_prints_one_line(project):
    out = _make(project, "report", "RUN=does-not-exist")
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "data/does-not-exist/run.yaml not found" in lines[0]
    assert "[setup]" not in out.stdout     # nothing was installed first


@pytest.mark.parametrize("run", ["../x", "", "a/b", ".."])
def test_make_report_with_a_malformed_run_prints_usage(project, run):
    out = _make(project, "report", f"RUN={run}")
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "Usage: make report RUN=<run-id>" in lines[0]


@pytest.mark.parametrize("goal", ["report", "check", "clean", "init"])
@pytest.mark.parametrize("payload", ["x'; touch {p}; echo '", 'x"; touch {p}; echo "',
                                     "$(shell touch {p})", "`touch {p}`"])
def test_make_runs_no_code_given_as_a_run_id(project, tmp_path, goal, payload):
    planted = tmp_path / "planted"
    out = _make(project, goal, "RUN=" + payload.format(p=planted))
    assert out.returncode != 0
    assert "is not a run id" in out.stderr
    assert not planted.exists()


@NEEDS_VENV
@pytest.mark.parametrize("var", ["SQL", "FORMAT", "RUNS", "BASE", "FILES", "GATE_FILE",
                                 "STORE"])
def test_make_passes_other_values_as_text_not_shell_code(project, tmp_path, var):
    planted = tmp_path / "planted"
    goal = {"SQL": "query", "FORMAT": "query", "RUNS": "compare", "BASE": "compare",
            "FILES": "init", "GATE_FILE": "gate", "STORE": "query"}[var]
    given = {"query": ["SQL=select 1"], "compare": ["RUNS=nope"], "init": ["RUN=nope"],
             "gate": ["RUNS=nope other"]}[goal]
    for payload in (f"x\"; touch {planted}; echo \"", f"$(shell touch {planted})",
                    f"$$(touch {planted})"):
        _make(project, goal, *given, f"{var}={payload}")
        assert not planted.exists(), payload


@NEEDS_VENV
def test_make_check_reads_the_reference_run(project):
    out = _make(project, "check", "RUN=2024-b300")
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.splitlines()[-1] == ("data/2024-b300: 8 files, 411 records, 4 benchmark "
                                           "windows found, 0 warnings")


def test_plain_make_lists_the_targets(project):
    out = _make(project)
    assert out.returncode == 0
    for target in ("report", "check", "test", "clean", "install"):
        assert f"  {target} " in out.stdout


def test_cli_error_is_one_line_and_exit_code_is_nonzero(workspace, capsys):
    code = main(["build", "nope", "--data-root", str(workspace / "data"),
                 "--report-root", str(workspace / "report")])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "nope/run.yaml not found" in err[0]


def test_cli_rejects_run_ids_that_leave_the_data_folder(workspace, capsys):
    assert main(["build", "../etc", "--data-root", str(workspace / "data")]) == 1
    assert "is not a run id" in capsys.readouterr().err


def test_bad_result_file_stops_the_build_naming_file_and_line(workspace, project, capsys):
    run = copy_run(workspace, "mini")
    (run / "raw/sglang/sglang_0115_3.jsonl").write_text('{"duration": 3, "completed": 1}\n')
    code = main(["build", "mini", "--data-root", str(workspace / "data"),
                 "--report-root", str(workspace / "report"), "--project", str(project)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[-1].startswith(
        "error: data/mini/raw/sglang/sglang_0115_3.jsonl:1: JSON is not a benchmark result")
    assert "(in 05-ingest.ipynb, cell 3); the failing notebook, with the error at its top: " \
           f"{workspace}/report/mini.failed/05-ingest.ipynb" in err[-1]
    assert (workspace / "report/mini.failed/05-ingest.ipynb").is_file()
    assert not (workspace / "report/mini").exists()      # no first report: nothing appears


def test_debug_shows_the_traceback(workspace):
    out = subprocess.run([sys.executable, "-m", "benchreport", "--debug", "build", "nope",
                          "--data-root", str(workspace / "data")], capture_output=True, text=True)
    assert out.returncode != 0
    assert "Traceback" in out.stderr


def test_changed_raw_file_stops_the_build_and_says_how_to_re_record(workspace, project, capsys):
    run = copy_run(workspace, "mini")
    data = ["--data-root", str(workspace / "data")]
    assert main(["checksums", "mini", "--write", *data]) == 0
    assert main(["checksums", "mini", *data]) == 0
    assert "4 files match SHA256SUMS" in capsys.readouterr().out
    log = run / "raw/vllm/vllm-infqps-concurrency3-tiny-20260115-102000.json"
    log.write_text(log.read_text().replace('"duration": 30.0', '"duration": 3.0'))
    code = main(["build", "mini", *data, "--report-root", str(workspace / "report"),
                 "--project", str(project)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 2          # the step's start line, then the error
    assert err[-1].startswith(
        "error: data/mini/raw/vllm/vllm-infqps-concurrency3-tiny-20260115-102000.json: "
        "sha256 is ")
    assert "re-record with: make checksums RUN=mini" in err[-1]
    assert not (workspace / "report/mini/report.en.html").exists()


def test_notebook_parameters_are_literals_that_read_back_as_themselves():
    from benchreport.core.errors import BuildError
    from benchreport.pipeline.kernels import check_parameters

    # quotes and backslashes are escaped by papermill's translator: still plain data
    check_parameters({"report_root": 'rep"ort\\\'; import os; os.system("x") #'})
    for bad in ["rep\nort", "rep\x00ort"]:
        with pytest.raises(BuildError, match="is not a plain string"):
            check_parameters({"run_id": "r", "report_root": bad})


def test_a_file_that_cannot_be_read_is_one_line(workspace, capsys, monkeypatch):
    from benchreport.core import files

    copy_run(workspace, "mini")

    def denied(path, rel=None):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(files, "read_text", denied)
    assert main(["check", "mini", "--data-root", str(workspace / "data")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: {workspace}/data/mini/run.yaml: Permission denied"]


def test_a_reader_that_leaves_early_gets_no_complaint(tmp_path):
    """`benchreport parse … --json | head -1`: the pipe closes while the command writes; it
    stops quietly (exit 141, as cat does), with nothing on stderr."""
    import json

    big = tmp_path / "r.json"       # a vLLM result with enough per-request rows to fill a pipe
    n = 20_000
    big.write_text(json.dumps({"date": "20260101-000000", "backend": "vllm", "model_id": "m",
                               "completed": n, "num_prompts": n, "duration": 10.0,
                               "max_concurrency": 4, "request_rate": "inf",
                               "ttfts": [0.1] * n, "itls": [[0.01]] * n,
                               "input_lens": [10] * n, "output_lens": [2] * n}))
    proc = subprocess.Popen([sys.executable, "-m", "benchreport", "parse", str(big), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert first and "Broken pipe" not in err and "Traceback" not in err
