"""Secrets never published: one redaction (core/redact.py), applied where text enters.

Unit tests of ``redact`` (each kind of secret; ordinary text left exactly alone) and of the
allow-list of launch settings; then one build of the reference run with every kind of
secret planted in every input (launch files' env and flags, a shell launch line, vLLM's
``non-default args``, SGLang's ``server_args=ServerArgs(...)``, an ordinary log line, a
traceback, result files' dataset and per-request errors, run.yaml's title and sources), a
comparison of it, ``parse --json`` and ``explain``: no planted value in any output. (The
build is the session's ``planted_build``, which has tests/test_hostile.py's markup planted
as well: tests/planted.py.)
"""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path

import duckdb
import pytest

from benchreport.cli import main
from benchreport.core import redact as redact_module
from benchreport.core.redact import (
    REDACTED,
    redact,
    redact_settings,
    redact_value,
    safe_env,
    secret_name,
)
from benchreport.core.tables import read_rows, write_points, write_rows, write_settings

from .conftest import REAL_SAMPLES, ROOT, needs_samples
from .planted import MARK, MARKUP, RUN, TWIN

# --- redact(): each kind ------------------------------------------------------------------

KINDS = [
    # URL credentials: the host stays
    ("proxy http://admin:pass@proxy.internal:3128/x",
     "proxy http://[redacted]@proxy.internal:3128/x"),
    ("https://ghp_abcdefghijklmnopqrstuvwx@github.com/o/r.git",
     "https://[redacted]@github.com/o/r.git"),
    # Bearer / Basic / Authorization: the scheme word stays, the credential goes
    ("500 Bearer abcdef rejected", "500 Bearer [redacted] rejected"),
    ("-H 'Authorization: Basic YWRtaW46cGFzcw=='", "-H 'Authorization: Basic [redacted]'"),
    ('{"Authorization": "Bearer abc.def-ghi"}', '{"Authorization": "Bearer [redacted]"}'),
    ("Authorization: token 0123abcd", "Authorization: token [redacted]"),
    # query parameters
    ("GET /d.json?token=t0k&key=k3y&api_key=a&sig=s1g&signature=s&password=p&page=2",
     "GET /d.json?token=[redacted]&key=[redacted]&api_key=[redacted]&sig=[redacted]"
     "&signature=[redacted]&password=[redacted]&page=2"),
    # variables, flags and settings whose names say secret
    ("export HF_TOKEN=abc123", "export HF_TOKEN=[redacted]"),
    ("OPENAI_API_KEY='xyz' HUGGING_FACE_HUB_TOKEN=\"q\"",
     "OPENAI_API_KEY='[redacted]' HUGGING_FACE_HUB_TOKEN=\"[redacted]\""),
    ("vllm serve m --hf-token abc --api-key=def --port 8000",
     "vllm serve m --hf-token [redacted] --api-key=[redacted] --port 8000"),
    ("{'admin_api_key': 'adm', 'api_key': None, 'tp_size': 8}",
     "{'admin_api_key': '[redacted]', 'api_key': None, 'tp_size': 8}"),
    ("ServerArgs(api_key='k', ssl_keyfile_password='p', port=30000)",
     "ServerArgs(api_key='[redacted]', ssl_keyfile_password='[redacted]', port=30000)"),
    ("password: hunter2; client_secret=s3", "password: [redacted]; client_secret=[redacted]"),
    # well-known token shapes, wherever they stand
    ("token hf_abcdefghijklmnopqrstuvwx in text", "token [redacted] in text"),
    ("key sk-proj-abcdefghijklmnop1234 here", "key [redacted] here"),
    ("gh ghp_abcdefghijklmnopqrstuvwxyz0123 here", "gh [redacted] here"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "aws [redacted] here"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl here", "jwt [redacted] here"),
    ("random Xk9Lm2Qz8Wp4Rt6Yv1Bn3Hj5Kd7Fg0Sa here", "random [redacted] here"),
]


@pytest.mark.parametrize("text, expected", KINDS)
def test_redact_replaces_each_kind_of_secret(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected            # idempotent: a second pass changes nothing


ORDINARY = [
    "moonshotai/Kimi-K3",
    "max_model_len=262144 --max-num-batched-tokens 8192 --max-num-batched-tokens=8192",
    "{'max_num_batched_tokens': 32768, 'num_speculative_tokens': 7, 'tokenizer': 'x/y'}",
    "Avg prompt throughput: 8412.6 tokens/s, Avg generation throughput: 935.2 tokens/s",
    "output tokens 3072; total output tokens: 30720; token usage: 0.05",
    "Prefill batch, #new-seq: 1, #new-token: 8192, #cached-token: 0, #running-req: 0",
    "/models/Kimi-K3-DSpark and /data/ShareGPT_V3_unfiltered_cleaned_split.json",
    "sha256 3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550fdab836ed",
    "Using CompressedTensorsWNA16MarlinMoEMethod",
    "VLLM_ENABLE_K3_LATENT_MOE_TAIL_FUSION=1 TOKENIZERS_PARALLELISM=false",
    "ms_per_token: decode.200k.vllm.ms_per_token",
    "Missing key: model.layers.0.mlp.weight",
    '"auth_config": {},',
    "user@example.com wrote 12.5 ms, e2el_ms 100347.87, request_rate inf",
    "<script>alert(1)</script> {{ 7*7 }} {% for x in range(3) %}LOOP{% endfor %}",
    "gen throughput (token/s): 30.5, #token: 12345, Decode batch. #running-req: 10",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_redact_leaves_ordinary_text_exactly_alone(text):
    assert redact(text) == text


def test_the_module_doctests_hold():
    assert doctest.testmod(redact_module).failed == 0


def test_client_modules_call_the_same_redaction():
    from benchreport.ingest.clients import base

    assert base.redact is redact


def test_secret_names_and_the_environment_allow_list():
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "HUGGING_FACE_HUB_TOKEN", "--hf-token",
                 "admin_api_key", "api_key", "apiKey", "AWS_SECRET_ACCESS_KEY",
                 "AWS_ACCESS_KEY_ID", "db_password", "x-auth", "credentials"):
        assert secret_name(name), name
    for name in ("max_num_batched_tokens", "tokenizer", "tokenizer_mode", "bos_token_id",
                 "return_tokens_as_token_ids", "TOKENIZERS_PARALLELISM", "ssl_keyfile",
                 "new_token", "model"):
        assert not secret_name(name), name
    assert [safe_env(n) for n in ("CUDA_VISIBLE_DEVICES", "NCCL_DEBUG", "OMP_NUM_THREADS",
                                  "VLLM_USE_V1", "SGLANG_ENABLE_JIT", "HF_HOME")] == [True] * 6
    assert [safe_env(n) for n in ("HF_TOKEN", "VLLM_API_KEY", "HTTPS_PROXY", "MY_THING",
                                  "HF_ENDPOINT")] == [False] * 5


def test_settings_by_the_allow_list():
    env = redact_settings("env", {"HF_TOKEN": "hf_x", "CUDA_VISIBLE_DEVICES": "0,1",
                                  "HTTPS_PROXY": "http://u:p@proxy:3128", "MY_FLAG": "1",
                                  "VLLM_LOGGING_PREFIX": "see https://u:p@h/"})
    assert env == {"HF_TOKEN": REDACTED, "CUDA_VISIBLE_DEVICES": "0,1",
                   "HTTPS_PROXY": REDACTED, "MY_FLAG": REDACTED,
                   "VLLM_LOGGING_PREFIX": "see https://[redacted]@h/"}
    flags = redact_settings("flags", {
        "tokenizer": "https://u:p@hub.example.com/t", "hf_token": "hf_x", "api_key": None,
        "tensor_parallel_size": "8", "speculative_config": {"method": "dspark", "model": "/m",
                                                            "num_speculative_tokens": 7},
        "license_blob": "abc", "unknown_count": "12", "trust_remote_code": True,
        "_positional": ["serve", "/models/Kimi-K3"]})
    assert flags == {
        "tokenizer": "https://[redacted]@hub.example.com/t", "hf_token": REDACTED,
        "api_key": None, "tensor_parallel_size": "8",
        "speculative_config": {"method": "dspark", "model": "/m", "num_speculative_tokens": 7},
        "license_blob": REDACTED, "unknown_count": "12", "trust_remote_code": True,
        "_positional": ["serve", "/models/Kimi-K3"]}


def test_the_reference_runs_settings_are_all_on_the_allow_list(project):
    """Nothing of the reference run's launch files and logged arguments is hidden: the
    settings comparisons (caveats) see every value as launched."""
    from benchreport.ingest.io import read_raw

    seen = 0
    for engine in ("vllm", "sglang"):
        for name in ("launch.yaml", "server.log"):
            path = project / "data/2024-b300/raw" / engine / name
            for rec in read_raw(path, name, engine, 2026):
                for field in ("env", "flags", "args"):
                    for key, value in (rec.get(field) or {}).items():
                        seen += 1
                        assert REDACTED not in json.dumps(value), (engine, name, key)
    assert seen > 50


@needs_samples
def test_real_server_args_stay_visible():
    """The arguments real vLLM and SGLang logs print are on the allow-list (a handful of
    unknown names with text values would be hidden; none of these are)."""
    from benchreport.ingest.io import read_raw

    hidden, seen = [], 0
    for path in sorted(REAL_SAMPLES.rglob("*.log")):
        try:
            records = read_raw(path, path.name, "auto", 2026)
        except Exception:          # not a server log (a client's own log)
            continue
        for rec in records:
            if rec["kind"] == "server_args":
                seen += len(rec["args"])
                hidden += [k for k, v in rec["args"].items() if v == REDACTED]
    assert seen > 300 and hidden == []


def test_excerpts_redact_before_the_cut(tmp_path):
    from benchreport.ingest.run import line_texts

    log = tmp_path / "x.log"
    secret = "hf_" + "Q" * 30
    log.write_text("a" * 395 + f" HF_TOKEN={secret}\nok line\n")
    texts = line_texts(log, None)
    assert "hf_QQ" not in texts[1] and "QQQQ" not in texts[1] and texts[1].endswith("…")
    assert texts[2] == "ok line"
    launch = tmp_path / "launch.yaml"
    launch.write_text("args:\n- --api-key\n- k3y\n- --tp-size\n- '8'\n")
    assert line_texts(launch, None) == {1: "args:", 2: "- --api-key", 3: "- [redacted]",
                                        4: "- --tp-size", 5: "- '8'"}
    assert line_texts(launch, {3}) == {3: "- [redacted]"}


def test_table_writers_store_text_redacted(tmp_path):
    write_rows(tmp_path / "r.parquet", [{"file": "data/x/raw/hf_token.log", "line": 1,
                                         "message": "oom at http://a:b@h/ Bearer abc"}],
               ["file", "line", "message"])
    assert read_rows(tmp_path / "r.parquet") == [
        {"file": "data/x/raw/hf_token.log", "line": 1,
         "message": "oom at http://[redacted]@h/ Bearer [redacted]"}]
    write_points(tmp_path / "p.parquet", [{"point": "vllm.1k.c3", "engine": "vllm",
                                           "model": "m", "scenario_dataset":
                                           "https://u:p@data.example.com/d.jsonl?sig=s"}])
    (row,) = read_rows(tmp_path / "p.parquet")
    assert row["scenario_dataset"] == "https://[redacted]@data.example.com/d.jsonl?sig=[redacted]"
    assert row["point"] == "vllm.1k.c3"
    write_settings(tmp_path / "s.parquet", {"launch_config": [
        {"engine": "vllm", "file": "l.yaml", "line": 1,
         "env": {"HF_TOKEN": "x", "NCCL_DEBUG": "INFO"},
         "flags": {"api_key": "k", "port": "8000"}}]})
    values = {r["key"]: json.loads(r["value"]) for r in read_rows(tmp_path / "s.parquet")}
    assert values == {"HF_TOKEN": REDACTED, "NCCL_DEBUG": "INFO", "api_key": REDACTED,
                      "port": "8000"}


def test_init_drafts_run_yaml_values_redacted():
    from benchreport.pipeline.init import drafted_text
    from benchreport.pipeline.yamldraft import dump

    text = dump({"dataset": drafted_text("https://u:p@data.example.com/d.jsonl"),
                 "model": drafted_text("moonshotai/Kimi-K3")})
    assert text == 'dataset: "https://[redacted]@data.example.com/d.jsonl"\n' \
        'model: "moonshotai/Kimi-K3"\n'


def test_run_metadata_keeps_its_shape():
    from benchreport.ingest.io import load_run

    run = load_run("2024-b300", ROOT / "data")
    assert redact_value(run.meta) == run.meta


# --- every input planted, every output searched -------------------------------------------
# (tests/planted.py plants them; the session's ``planted_build`` is that one build, which has
# tests/test_hostile.py's markup planted as well)


@pytest.fixture(scope="module")
def planted(planted_build):
    """The reference run with secrets planted, built (with PDFs, as test_hostile reads
    them), a copy exported under another id, and the comparison of the two: (workspace,
    the Run, the comparison's paths, the launch script). Read-only."""
    from benchreport.core.paths import compare_paths
    from benchreport.ingest.io import load_run
    from benchreport.pipeline.compare import default_name

    ws = planted_build
    run = load_run(RUN, ws / "data", ws / "report")
    compare = compare_paths(ws / "report", default_name([RUN, TWIN]))
    return ws, run, compare, ws / "launch.sh"


def _parquet_text(path: Path) -> str:
    con = duckdb.connect()
    rows = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
    return repr(rows)


def _pdf_text(path: Path) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    return "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))


def _leaks(folder: Path, skip=()) -> dict[str, int]:
    """Every file under ``folder`` holding the mark (Parquet read through DuckDB, PDFs by
    their text layer, everything else as bytes), with the count of files searched."""
    found, searched = [], 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if any(rel.startswith(s) for s in skip):
            continue
        searched += 1
        if path.suffix == ".parquet":
            hit = MARK in _parquet_text(path)
        elif path.suffix == ".pdf":
            hit = MARK in re.sub(r"\s+", "", _pdf_text(path))
        else:
            hit = MARK.encode() in path.read_bytes()
        if hit:
            found.append(rel)
    return {"found": found, "searched": searched}


def test_the_planted_inputs_really_hold_the_secrets(planted):
    ws, *_ = planted
    raw = ws / "data/2024-b300"
    for rel in ("raw/vllm/launch.yaml", "raw/sglang/launch.yaml", "raw/vllm/server.log",
                "raw/sglang/server.log", "run.yaml"):
        assert MARK in (raw / rel).read_text(), rel
    assert "server_args=ServerArgs(" in (raw / "raw/sglang/server.log").read_text()


def test_no_planted_secret_in_any_output_of_the_build(planted):
    ws, run, _, _ = planted
    report = run.paths.report
    # derived/inputs/ holds byte copies of the user's own run.yaml and claims.yaml (the
    # steps after ingest read those instead of data/), checked below to be exactly those
    leaks = _leaks(report, ("derived/inputs/",))
    assert leaks["found"] == [] and leaks["searched"] > 40
    for name in ("report.en.html", "report.ko.html", "report.en.pdf", "report.ko.pdf",
                 "blog/index.en.md", "derived/figures.json"):
        assert (report / name).is_file(), name
    assert list((report / "notebooks").glob("*.ipynb")) and \
        list((report / "notebooks").glob("*.html"))
    for copy in (report / "derived/inputs").iterdir():
        assert copy.read_bytes() == (run.paths.data / copy.name).read_bytes()
    # the search finds what is there: the user's own copy, the PDF's redacted title
    assert _leaks(report / "derived/inputs")["found"] == ["run.yaml"]
    assert "[redacted]" in _pdf_text(report / "report.en.pdf")
    assert "[redacted]" in _parquet_text(report / "derived/tables/settings.parquet")


def test_no_planted_secret_in_the_store_or_the_comparison(planted):
    ws, _, compare, _ = planted
    store = _leaks(ws / "report/_store")
    assert store["found"] == [] and store["searched"] >= 14
    out = _leaks(compare.report)
    assert out["found"] == [] and out["searched"] > 5
    assert (compare.report / "report.en.html").is_file()
    assert (compare.report / "report.en.pdf").is_file()


def test_what_is_kept_around_the_secrets(planted):
    """Names, hosts and the scheme words stay: the reader sees that a token was set."""
    _, run, _, _ = planted
    tables = run.paths.tables
    settings = {(r["engine"], r["field"], r["key"]): json.loads(r["value"])
                for r in read_rows(tables / "settings.parquet")}
    assert settings[("vllm", "env", "HF_TOKEN")] == REDACTED
    assert settings[("vllm", "env", "HTTPS_PROXY")] == REDACTED
    assert settings[("vllm", "env", "VLLM_ENABLE_K3_LATENT_MOE_TAIL_FUSION")] == "1"
    assert settings[("vllm", "env", "VLLM_LOGGING_PREFIX")] == \
        "see https://[redacted]@logs.example.com/"
    assert settings[("vllm", "flags", "hf_token")] == REDACTED
    assert settings[("vllm", "flags", "admin_api_key")] == REDACTED
    assert settings[("vllm", "flags", "tokenizer")] == \
        "https://[redacted]@hub.example.com/tok"
    assert settings[("vllm", "args", "api_key")] == REDACTED
    assert settings[("sglang", "args", "admin_api_key")] == REDACTED
    assert settings[("sglang", "args", "tokenizer_path")] == \
        "https://[redacted]@hub.example.com/tok"
    # as launched: an ordinary flag (tests/planted.py gives it test_hostile's markup)
    assert settings[("vllm", "flags", "moe_backend")] == MARKUP
    assert settings[("sglang", "args", "chunked_prefill_size")] == 32768
    excerpts = [r["text"] for r in read_rows(tables / "excerpts.parquet")]
    assert any("HF_TOKEN=[redacted] via http://[redacted]@proxy.internal:3128/" in t
               for t in excerpts)
    assert any("(Authorization: Bearer [redacted])" in t for t in excerpts)
    (tb,) = read_rows(tables / "records_traceback.parquet")
    assert "https://[redacted]@huggingface.co/api?token=[redacted]" in tb["exception"]
    points = read_rows(tables / "points.parquet")
    datasets = [p["scenario_dataset"] for p in points if p.get("scenario_dataset")]
    assert sorted(datasets) == [              # the planted vLLM and SGLang file, and 'random'
        "https://[redacted]@data.example.com/prompts.jsonl?sig=[redacted]"] * 2 + ["random"]
    errors = [r["error"] for r in read_rows(tables / "requests.parquet") if r.get("error")]
    assert errors == ["401 Unauthorized: Authorization: Bearer [redacted] for "
                      "https://[redacted]@api.example.com/v1 (api_key=[redacted])"]
    en = (run.paths.report / "report.en.html").read_text()
    assert "https://[redacted]@x.example.com [redacted] A published benchmark" in en
    assert "files.example.com/d?token=[redacted]" in en


def test_the_settings_comparison_still_sees_the_launch_values(planted):
    _, run, _, _ = planted
    caveats = json.loads((run.paths.caveats_json).read_text())
    text = json.dumps(caveats)
    assert MARK not in text
    assert "32768" in text and "dspark" in text.lower()


def test_parse_json_and_explain_print_no_secret(planted, capsys):
    ws, run, _, shell = planted
    raw = ws / "data/2024-b300/raw"
    files = [raw / "vllm/launch.yaml", raw / "sglang/launch.yaml", raw / "vllm/server.log",
             raw / "sglang/server.log", *raw.glob("vllm/*.json"), *raw.glob("sglang/*.jsonl")]
    for path in files:
        assert main(["parse", str(path), "--json"]) == 0, path
        captured = capsys.readouterr()
        json.loads(captured.out)
        assert MARK not in captured.out and MARK not in captured.err, path
    main(["parse", str(shell), "--json", "--engine", "vllm"])
    captured = capsys.readouterr()
    assert MARK not in captured.out + captured.err
    from benchreport.pipeline.explain import Explainer, list_ids

    lines: list[str] = []
    list_ids(run, lines.append)
    explainer = Explainer(run)
    for fid in explainer.registry:
        explainer.show(fid, lines.append)
    text = "\n".join(lines)
    assert len(lines) > 1000 and MARK not in text
    assert "HF_TOKEN=[redacted]" in text         # the quoted log line, cleaned
    assert main(["explain", run.id, "events.64k.vllm.oom_retries", "--data-root",
                 str(ws / "data"), "--report-root", str(ws / "report")]) == 0
    out = capsys.readouterr().out
    assert "http://[redacted]@proxy.internal" in out and MARK not in out
