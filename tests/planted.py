"""The reference run with hostile inputs planted, built once per test session for the two
modules that read it (conftest's ``planted_build``), since a build of the reference run with
its PDFs is the suite's costliest:

- markup and template syntax, and control characters (tests/test_hostile.py): text from logs
  and configs is data, never markup or template code;
- every kind of secret (tests/test_redaction.py): secrets are never published.

Each planting leaves the other's text where that one put it: the markup goes into the first
out-of-memory line of vLLM's log, the secrets into the second (an excerpt keeps 400
characters, and the first line with both would pass that), and each prefixes the English
title where the other leaves it, so both open it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import shutil
from pathlib import Path

# --- markup (tests/test_hostile.py) --------------------------------------------------------

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'
EXPR = "{{ 7*7 }}"
STMT = "{% for x in range(3) %}LOOP{% endfor %}"
HOSTILE = [SCRIPT, IMG, EXPR, STMT]
MARKUP = " ".join(HOSTILE)
# a terminal colour escape, a NUL and a right-to-left override: shown, never acted on (a
# log with a NUL is binary content, refused as such: the log gets the other two)
YAML_CONTROL = "\\e[31mRED\\0NUL\\u202eRTL"             # run.yaml's escapes
YAML_SHOWN = "\\x1b[31mRED\\x00NUL\\u202eRTL"
LOG_CONTROL = "\x1b[31mRED\u202eRTL"
LOG_SHOWN = "\\x1b[31mRED\\u202eRTL"
OOM = "CUDA out of memory while allocating the MoE workspace"
TITLE_EN = '  en: "'          # the English title's line in run.yaml, up to its text


def plant_markup(run: Path) -> None:
    """Markup and Jinja syntax in a server-log line (an out-of-memory warning the caveats
    quote), in a launch flag (the MoE backend the settings table compares) and in the model
    name of run.yaml; control characters in that log line and in run.yaml's titles."""
    (run / "SHA256SUMS").unlink(missing_ok=True)
    log = run / "raw/vllm/server.log"
    text = log.read_text()
    assert OOM in text
    # the engine's own account of --moe-backend (its non-default args) is what the report
    # compares and shows, so the text is planted there as well as in the launch file
    assert "'moe_backend': 'auto'" in text
    text = text.replace("'moe_backend': 'auto'", f"'moe_backend': '{MARKUP}'", 1)
    log.write_text(text.replace(OOM, f"{OOM} {MARKUP} {LOG_CONTROL}", 1))
    launch = run / "raw/vllm/launch.yaml"
    flags = launch.read_text()
    assert "- --moe-backend\n- auto\n" in flags
    launch.write_text(flags.replace("- --moe-backend\n- auto\n",
                                    f"- --moe-backend\n- '{MARKUP}'\n"))
    meta = run / "run.yaml"
    text = meta.read_text()
    assert "  name: Kimi-K3\n" in text and 'title:\n  ko: "' in text and TITLE_EN in text
    meta.write_text(text.replace(
        "  name: Kimi-K3\n", f"  name: 'Kimi-K3 {MARKUP}'\n", 1).replace(
        'title:\n  ko: "', f'title:\n  ko: "{YAML_CONTROL} ', 1).replace(
        TITLE_EN, f"{TITLE_EN}{YAML_CONTROL} ", 1))


# --- secrets (tests/test_redaction.py) -----------------------------------------------------

MARK = "PLANTED"          # every planted secret value holds it; nothing else does
HF = f"hf_{MARK}hfTOKEN0123456789ab"
SHELL = (f"+ HF_TOKEN={HF} vllm serve /models/Kimi-K3 --hf-token hf_{MARK}flagTOKEN0123 "
         f"--api-key sk-{MARK}shellKEY0123456789 "
         f"--tokenizer https://tok:tok{MARK}@hub.example.com/t")
ENV = {"HF_TOKEN": HF, "OPENAI_API_KEY": f"sk-{MARK}openaiKEY0123456789",
       "HUGGING_FACE_HUB_TOKEN": f"hub{MARK}secret", "AWS_ACCESS_KEY_ID": f"AKIA{MARK}123456789",
       "HTTPS_PROXY": f"http://proxyuser:proxy{MARK}pass@proxy.internal:3128",
       "VLLM_LOGGING_PREFIX": f"see https://pfx:pfx{MARK}@logs.example.com/"}
FLAGS = ["--hf-token", f"hf_{MARK}flagTOKEN0123", "--api-key", f"api{MARK}key",
         "--tokenizer", f"https://tokuser:tok{MARK}pass@hub.example.com/tok",
         f"--admin-api-key=admin{MARK}key"]
LOG_LINE = f" HF_TOKEN={HF} via http://admin:admin{MARK}pass@proxy.internal:3128/"
TRACEBACK = [
    "(EngineCore pid=2429) ERROR 11-20 10:21:58 [core.py:700] Traceback (most recent call last):",
    '(EngineCore pid=2429) ERROR 11-20 10:21:58 [core.py:700]   File "/usr/lib/python3/'
    'dist-packages/vllm/hub.py", line 88, in fetch',
    "(EngineCore pid=2429) ERROR 11-20 10:21:58 [core.py:700] requests.exceptions.HTTPError: "
    f"401 for url https://tbuser:tb{MARK}pass@huggingface.co/api?token=tb{MARK}query "
    f"(Authorization: Bearer tb{MARK}bearer)",
]
DATASET = f"https://datauser:data{MARK}pass@data.example.com/prompts.jsonl?sig=data{MARK}sig"
ERROR = (f"401 Unauthorized: Authorization: Bearer err{MARK}bearer for "
         f"https://erruser:err{MARK}pass@api.example.com/v1 (api_key=err{MARK}key)")


def plant_secrets(run: Path, shell: Path) -> None:
    """Every kind of secret in every input: launch files' env and flags, a shell launch
    line, vLLM's ``non-default args``, SGLang's ``server_args=ServerArgs(...)``, an ordinary
    log line (vLLM's second out-of-memory warning), a traceback, result files' dataset and
    per-request errors, run.yaml's title and sources; and a launch script beside the run."""
    import yaml

    (run / "SHA256SUMS").unlink(missing_ok=True)
    for engine, extra_env in (("vllm", ENV), ("sglang", {"SGLANG_API_KEY": f"sg{MARK}key"})):
        launch = run / "raw" / engine / "launch.yaml"
        doc = yaml.safe_load(launch.read_text())
        doc["env"] = {**(doc.get("env") or {}), **extra_env}
        doc["args"] += FLAGS
        launch.write_text(yaml.safe_dump(doc, sort_keys=False))
    log = run / "raw/vllm/server.log"
    lines = log.read_text().splitlines()
    nda = next(i for i, line in enumerate(lines) if "non-default args: {" in line)
    lines[nda] = lines[nda].replace(
        "non-default args: {", f"non-default args: {{'hf_token': '{HF}', 'api_key': "
        f"'api{MARK}key', 'tokenizer': 'https://tokuser:tok{MARK}pass@hub.example.com/tok', ")
    oom = [i for i, line in enumerate(lines) if "CUDA out of memory" in line][1]
    lines[oom] += LOG_LINE
    log.write_text("\n".join([SHELL] + lines + TRACEBACK) + "\n")
    slog = run / "raw/sglang/server.log"
    head, rest = slog.read_text().split("\n", 1)
    prefix, args = head.split("server_args=", 1)
    args = {**ast.literal_eval(args), "api_key": f"sk-{MARK}sglangKEY0123456789",
            "admin_api_key": f"admin{MARK}key", "tokenizer_path":
            f"https://tokuser:tok{MARK}pass@hub.example.com/tok"}
    call = ", ".join(f"{k}={v!r}" for k, v in args.items())
    slog.write_text(f"{prefix}server_args=ServerArgs({call})\n{rest}")
    result = next((run / "raw/vllm").glob("*.json"))
    data = json.loads(result.read_text())
    data["dataset_name"] = DATASET
    data["errors"][0] = ERROR
    result.write_text(json.dumps(data))
    jsonl = next((run / "raw/sglang").glob("*.jsonl"))
    jsonl.write_text(jsonl.read_text().replace('"dataset_name": "random"',
                                               f'"dataset_name": "{DATASET}"'))
    meta = run / "run.yaml"
    text = meta.read_text()
    assert "A published benchmark" in text
    text = text.replace(
        "A published benchmark", f"https://t:title{MARK}@x.example.com ghp_{MARK}"
        "githubTOKEN012345 A published benchmark", 1)
    planted = ("  - what: \"the raw files\"\n    url: "
               f"\"https://srcuser:src{MARK}pass@files.example.com/d?token=src{MARK}tok\"\n")
    # into the run's own sources list (the reference run.yaml has one: its write-ups)
    meta.write_text(text.replace("\nsources:\n", "\nsources:\n" + planted, 1)
                    if "\nsources:\n" in text else text + "sources:\n" + planted)
    shell.write_text(f"#!/bin/sh\nexport HF_TOKEN={HF}\n{SHELL[2:]}\n")


# --- the build -----------------------------------------------------------------------------

RUN = "2024-b300"
TWIN = "2024-b300-twin"


def build_planted(ws: Path, root: Path) -> None:
    """Into ``ws``: the reference run (from ``root``) with both plantings, built with PDFs
    (each module reads them), a copy of it exported under another id, and the comparison
    of the two (tests/test_redaction.py reads its outputs); the launch script is
    ``ws/launch.sh``."""
    from benchreport.pipeline.compare import build_compare
    from benchreport.pipeline.run import build
    from benchreport.pipeline.store import export_run

    run_dir = ws / "data" / RUN
    shutil.copytree(root / "data" / RUN, run_dir)
    plant_markup(run_dir)
    plant_secrets(run_dir, ws / "launch.sh")
    report_root = ws / "report"
    run = build(RUN, data_root=ws / "data", report_root=report_root, project=root,
                out=lambda line: None)
    twin_paths = dataclasses.replace(run.paths, run_id=TWIN, report=report_root / TWIN)
    shutil.copytree(run.paths.derived, twin_paths.derived)
    export_run(dataclasses.replace(run, paths=twin_paths))
    build_compare([RUN, TWIN], report_root=report_root, project=root, out=lambda line: None,
                  build_runs=False)
