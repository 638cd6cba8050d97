"""Every malformed input is one clear line (issue 33, finding 11).

A probe fuzzed 520 real files and got 17 tracebacks: NaN or 1e309 in a log's numbers
(``cannot convert float NaN to integer``, ``OverflowError``), an impossible hour, JSON nested
100,000 deep and a recursive YAML alias (``RecursionError``); in a build each became a line
naming a notebook cell instead of the input file and line.

First the probe's cases, one test each. Then a seeded fuzz over the real samples
(``conftest.REAL_SAMPLES``) and the project's own inputs under data/: numbers become NaN,
infinite, negative or too large for any float, times impossible (hour 25, month 13),
values nest 100,000 deep, files are cut short or get bytes that are not UTF-8, and YAML
gets recursive aliases and alias bombs. Each mutated file goes through the entry points a
build and the command line use (``read_raw``: `benchreport parse` and ingest; ``load_run``
for run.yaml; ``init --dry-run`` for result files), and must either be read (warnings
allowed) or stop with the project's one-line error (``ReportError``) naming the file. No
other exception, ever.
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchreport.core.errors import ConfigError, ParseError, ReportError
from benchreport.core.runmeta import load_run
from benchreport.ingest.io import read_raw
from benchreport.ingest.parsers.logscan import Summary

from .conftest import REAL_SAMPLES, ROOT

SEED = 33
CASES = 200
CASE_SECONDS = 20
LONGEST_MESSAGE = 800            # characters of an error line: file, line, message, hint
YEAR = 2026

REF = ROOT / "data" / "2024-b300"
VLLM_LOG = ROOT / "data/2026-08-dgx-spark-laguna/raw/vllm/dgx-spark-laguna-vllm-vs-sglang" \
    "/vllm-int4.log"
SGLANG_LOG = ROOT / "data/2026-08-dgx-spark-laguna/raw/sglang/dgx-spark-laguna-vllm-vs-sglang" \
    "/sglang-int4.log"
VLLM_RESULT = REF / "raw/vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json"


def read(path: Path, shown: str | None = None) -> tuple[list[dict], Summary]:
    """Records of one raw file as `benchreport parse` and ingest read it."""
    shown = shown or path.name
    summary = Summary(file=shown, engine="auto")
    return read_raw(path, shown, "auto", YEAR, summary, workers=1), summary


def one_line(exc: ReportError, shown: str) -> str:
    """The error as the command line prints it, checked: one line that names the file."""
    text = exc.one_line()
    assert "\n" not in text and "\r" not in text, text[:300]
    assert len(text) <= LONGEST_MESSAGE, text[:300]
    assert shown in text, text[:300]
    return text


def write_run(tmp_path: Path, text: str, run_id: str = "fuzz") -> Path:
    (tmp_path / "data" / run_id).mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / run_id / "run.yaml").write_text(text)
    return tmp_path / "data"


def _first_line_with(path: Path, marker: str) -> tuple[list[str], int]:
    lines = path.read_text().splitlines(keepends=True)
    return lines, next(i for i, line in enumerate(lines) if marker in line)


# ------------------------------------------------------------------ the probe's cases

COUNTS = {"vllm": (VLLM_LOG, "Running: "), "sglang": (SGLANG_LOG, "#running-req: ")}


@pytest.mark.parametrize("bad", ["nan", "inf", "1e309", "9" * 5000],
                         ids=["nan", "inf", "1e309", "5000-digits"])
@pytest.mark.parametrize("engine", sorted(COUNTS))
def test_a_stats_line_with_an_impossible_count_is_skipped_with_a_warning(tmp_path, engine,
                                                                         bad):
    log, marker = COUNTS[engine]
    lines, i = _first_line_with(log, marker)
    lines[i] = re.sub(re.escape(marker) + r"\d+", f"{marker}{bad}", lines[i], count=1)
    path = tmp_path / f"{engine}.log"
    path.write_text("".join(lines))
    records, summary = read(path)
    assert not [r for r in records if r["line"] == i + 1]
    assert any(w.startswith(f"{engine}.log:{i + 1}: ") and "line skipped" in w
               for w in summary.warnings), summary.warnings


def test_an_impossible_hour_in_a_log_is_skipped_with_a_warning(tmp_path):
    lines, i = _first_line_with(VLLM_LOG, "Running: ")
    lines[i] = re.sub(r" \d\d:(\d\d:\d\d)", r" 25:\1", lines[i], count=1)
    path = tmp_path / "vllm.log"
    path.write_text("".join(lines))
    _, summary = read(path)
    assert any(w.startswith(f"vllm.log:{i + 1}: the time ") and "does not exist" in w
               for w in summary.warnings), summary.warnings


def test_json_nested_100000_deep_names_the_file_and_line(tmp_path):
    text = VLLM_RESULT.read_text()
    path = tmp_path / "result.json"
    path.write_text(text.replace('"duration":', '"nested": ' + "[" * 100_000 + "]" * 100_000
                                 + ',\n"duration":', 1))
    line = text[: text.index('"duration":')].count("\n") + 1
    with pytest.raises(ParseError) as caught:
        read(path)
    assert one_line(caught.value, "result.json").startswith(
        f"result.json:{line}: values nested 100,001 levels deep")


def test_a_json_lines_record_nested_too_deep_is_skipped_with_a_warning(tmp_path):
    source = REF / "raw/sglang/sglang_1120_10_65536_3072.jsonl"
    first = source.read_text().splitlines()[0]
    path = tmp_path / "bench.jsonl"
    path.write_text(f"{first}\n{first}\n" + '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    records, summary = read(path)
    assert len([r for r in records if r["kind"] == "bench_result"]) == 2
    assert any(w.startswith("bench.jsonl:3: values nested 50,001 levels deep")
               for w in summary.warnings), summary.warnings


@pytest.mark.parametrize("digits", ["1" + "0" * 400, "9" * 5000])
def test_an_integer_beyond_any_float_is_left_out_with_a_warning(tmp_path, digits):
    doc = json.loads(VLLM_RESULT.read_text())
    doc["total_output_tokens"] = "@"
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc).replace('"@"', digits))
    records, summary = read(path)
    result = next(r for r in records if r["kind"] == "bench_result")
    assert "total_output_tokens" not in result
    assert any("total_output_tokens is inf (infinite)" in w for w in summary.warnings)


@pytest.mark.parametrize("key, value, says", [
    ("max_concurrency", "1e309", "max_concurrency is inf (infinite)"),
    ("max_concurrency", "-4", "max_concurrency is -4 (negative)"),
    ("request_rate", "NaN", "request_rate is nan (not a number)"),
    ("request_rate", "0", "request_rate is 0.0 (zero)"),
])
def test_a_result_with_an_impossible_load_states_none(tmp_path, key, value, says):
    """A rate of 0 also made `init` draft a run.yaml that its own check refuses."""
    doc = json.loads(VLLM_RESULT.read_text())
    doc[key] = "@"
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc).replace('"@"', value))
    records, summary = read(path)
    result = next(r for r in records if r["kind"] == "bench_result")
    assert result["load_kind"] == "unstated"
    assert any(f"the load's {says}, which no client runs at" in w for w in summary.warnings)


def test_a_csv_cell_beyond_the_csv_module_s_limit_names_its_line(tmp_path):
    text = "Metric,avg,p50\nRequest Latency (ms),1.0,2.0\nTime to First Token (ms),@,1\n"
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_text(text.replace("@", '"' + "9" * 200_000 + '"'))
    with pytest.raises(ParseError) as caught:
        read(path)
    assert one_line(caught.value, "profile_export_aiperf.csv").startswith(
        "profile_export_aiperf.csv:3: not a CSV row (field larger than field limit")


def test_parse_shows_a_result_file_s_warnings(tmp_path):
    """`benchreport parse` printed none of a result file's warnings (they went to a copy)."""
    doc = json.loads(VLLM_RESULT.read_text())
    doc["p99_ttft_ms"] = 1.0
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    _, summary = read(path)
    assert any(w.startswith("result.json:1: the p99 of TTFT (1.0 ms) is below its p90")
               for w in summary.warnings), summary.warnings


def test_impossible_token_lengths_are_left_out_with_a_warning(tmp_path):
    doc = json.loads(VLLM_RESULT.read_text())
    del doc["input_lens"]                         # the mean then comes from the totals
    doc["total_input_tokens"] = "@"
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc).replace('"@"', "Infinity"))
    records, summary = read(path)
    result = next(r for r in records if r["kind"] == "bench_result")
    assert result.get("scenario_input_tokens") is None
    assert any("the mean of input tokens is inf, which no benchmark sends" in w
               for w in summary.warnings), summary.warnings


def test_a_request_rate_that_is_no_number_is_not_read_as_one():
    from benchreport.ingest.clients.base import rate_value

    assert rate_value([[1]]) is None and rate_value({"a": 1}) is None


@pytest.mark.parametrize("stamp", ["1e30", "99999999999999999999999", "-5"])
def test_a_time_past_any_calendar_gives_no_date(tmp_path, stamp):
    source = REAL_SAMPLES / "llmperf" / "llmperf-leaderboard-summary-groq_70b.json"
    if not source.is_file():
        pytest.skip(f"no real samples at {REAL_SAMPLES}")
    doc = json.loads(source.read_text())
    doc["timestamp"] = "@"
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(doc).replace('"@"', stamp))
    records, _ = read(path)
    assert next(r for r in records if r["kind"] == "bench_result").get("date") is None


def test_a_launch_command_of_a_megabyte_is_not_split_word_by_word(tmp_path):
    """shlex builds a word a character at a time, in time growing with its square: a line
    of a million characters took minutes in `init`. It is no command."""
    path = tmp_path / "start.sh"
    path.write_text("#!/bin/sh\nexport X=" + "x" * 1_000_000 + "\n")
    started = time.monotonic()
    with pytest.raises(ParseError, match="no command that starts vLLM or SGLang"):
        read(path)
    assert time.monotonic() - started < 5


def test_an_error_quoting_a_huge_value_stays_one_short_line():
    exc = ParseError(f"{'x' * 200_000!r}\nis not a number; expected ms", path="f.csv", line=3)
    text = exc.one_line()
    assert "\n" not in text and len(text) < 600
    assert text.startswith("f.csv:3: 'xxx") and text.endswith("is not a number; expected ms")
    assert str(exc) == text


YAML_CASES = {
    "recursive alias": ("  name: Kimi-K3\n", "  name: &x [*x]\n",
                        "an alias refers to the value that holds it"),
    "alias bomb": ("  name: Kimi-K3\n", "  name: *a9\n", "aliases repeat more than 10,000"),
    "deep nesting": ("  name: Kimi-K3\n", "  name: " + "[" * 100_000 + "]" * 100_000 + "\n",
                     "values nested more than 100 levels deep"),
    "month 13": ("date: 2026-11-20\n", "date: 2026-13-20\n",
                 "'2026-13-20' is not a valid timestamp (month must be in 1..12)"),
    "5,000 digits": ("  gpus: 8\n", "  gpus: " + "9" * 5000 + "\n",
                     "is not a valid int (Exceeds the limit (4300 digits)"),
}
BOMB = "".join([f"a0: &a0 [{', '.join(['lol'] * 9)}]\n"] + [
    f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 9)}]\n" for k in range(1, 10)])


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_run_yaml_that_cannot_be_read_names_its_line(tmp_path, case):
    old, new, says = YAML_CASES[case]
    text = (REF / "run.yaml").read_text()
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    text = text.replace(old, new, 1)
    if case == "alias bomb":
        text = BOMB + text
        line += BOMB.count("\n")
    data = write_run(tmp_path, text)
    started = time.monotonic()
    with pytest.raises(ConfigError) as caught:
        load_run("fuzz", data, tmp_path / "report")
    assert time.monotonic() - started < 10
    message = one_line(caught.value, "run.yaml")
    # a bomb is named where the value it repeats is anchored, among the bomb's own lines
    assert f"run.yaml:{line}: " in message if case != "alias bomb" else \
        re.search(r"run\.yaml:([1-9]|10): ", message), message
    assert says in message


def test_the_command_line_prints_one_line_and_no_traceback(tmp_path):
    path = tmp_path / "result.json"
    path.write_text('{"duration": ' + "[" * 100_000 + "]" * 100_000 + "}")
    out = subprocess.run([sys.executable, "-m", "benchreport", "parse", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1, out.stderr[:500]
    assert out.stderr.startswith(f"error: {path}:1: values nested 100,001 levels deep")


@pytest.mark.parametrize("module", ["benchreport.core.figures", "benchreport.core.jsontext",
                                    "benchreport.ingest.clients.base",
                                    "benchreport.pipeline.init"])
def test_the_doctests_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


# ------------------------------------------------------------------ the seeded fuzz

NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
BAD_NUMBERS = [b"NaN", b"Infinity", b"-Infinity", b"nan", b"inf", b"-inf", b"1e309",
               b"-1e309", b"-1", b"-0.5", b"0", b"1e-400", b"99999999999999999999999999",
               b"1" + b"0" * 400, b"9" * 5000]
TIMES: list[tuple[re.Pattern, Callable[[re.Match, random.Random], bytes]]] = [
    (re.compile(rb"\b([01]\d|2[0-3])(:\d\d:\d\d)"),
     lambda m, r: r.choice([b"24", b"25", b"99"]) + m[2]),
    (re.compile(rb"\b(\d{4}-)(\d\d)(-\d\d)"), lambda m, r: m[1] + r.choice([b"13", b"00"]) + m[3]),
    (re.compile(rb"\b(\d{4}-\d\d-)(\d\d)"), lambda m, r: m[1] + r.choice([b"32", b"00"])),
    (re.compile(rb"\b(\d\d)(-\d\d \d\d:)"), lambda m, r: r.choice([b"13", b"00"]) + m[2]),
    (re.compile(rb"(\d\d:)(\d\d)(:\d\d)"), lambda m, r: m[1] + b"61" + m[3]),
    (re.compile(rb"\b1[5-7]\d{8,17}(?:\.\d+)?\b"),                  # Unix times, s to ns
     lambda m, r: r.choice([b"1e309", b"-5", b"99999999999999999999999"])),
]
YAML_KEY = re.compile(rb"^([A-Za-z_][\w-]*):[ ]*(\S.*)?$", re.M)


def _pick(pattern: re.Pattern, data: bytes, r: random.Random) -> re.Match | None:
    found = list(pattern.finditer(data))
    return r.choice(found) if found else None


def _replace_some(data: bytes, found: list[re.Match], r: random.Random,
                  new: Callable[[re.Match], bytes]) -> bytes:
    out = bytearray(data)
    for m in sorted(r.sample(found, min(len(found), r.choice([1, 3, 20, 1000]))),
                    key=lambda m: -m.start()):
        out[m.start():m.end()] = new(m)
    return bytes(out)


def m_numbers(data: bytes, r: random.Random) -> bytes | None:
    found = list(NUMBER.finditer(data))
    bad = r.choice(BAD_NUMBERS)
    return _replace_some(data, found, r, lambda m: bad) if found else None


def m_times(data: bytes, r: random.Random) -> bytes | None:
    pattern, new = r.choice(TIMES)
    found = list(pattern.finditer(data))
    return _replace_some(data, found, r, lambda m: new(m, r)) if found else None


def m_nesting(data: bytes, r: random.Random) -> bytes | None:
    m = _pick(NUMBER, data, r)
    if m is None:
        return None
    depth = r.choice([100_000, 990, 400])
    opened, closed = r.choice([(b"[", b"]"), (b'{"a":', b"}"), (b"{'a': ", b"}")])
    return data[:m.start()] + opened * depth + b"1" + closed * depth + data[m.end():]


def m_truncated(data: bytes, r: random.Random) -> bytes | None:
    return data[: r.randrange(1, max(2, len(data)))]


def m_not_utf8(data: bytes, r: random.Random) -> bytes | None:
    at = r.randrange(len(data))
    return data[:at] + r.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xfe\xff"]) + data[at:]


def y_recursive(data: bytes, r: random.Random) -> bytes | None:
    m = _pick(YAML_KEY, data, r)
    return data[:m.start()] + m[1] + b": &x [*x]" + data[m.end():] if m else None


def y_bomb(data: bytes, r: random.Random) -> bytes | None:
    m = _pick(YAML_KEY, data, r)
    if m is None:
        return None
    bomb = BOMB.encode()
    return data[:m.start()] + bomb + m[1] + b": *a9" + data[m.end():] if r.random() < 0.5 \
        else bomb + data


def y_chain(data: bytes, r: random.Random) -> bytes | None:
    chain = b"c0: &c0 [1]\n" + b"".join(b"c%d: &c%d [*c%d]\n" % (k, k, k - 1)
                                        for k in range(1, 300))
    return chain + data


def y_deep(data: bytes, r: random.Random) -> bytes | None:
    m = _pick(YAML_KEY, data, r)
    if m is None:
        return None
    depth = r.choice([100_000, 2000])
    return data[:m.start()] + m[1] + b": " + b"[" * depth + b"1" + b"]" * depth + data[m.end():]


MUTATIONS = {f.__name__: f for f in (m_numbers, m_times, m_nesting, m_truncated, m_not_utf8)}
YAML_MUTATIONS = {f.__name__: f for f in (y_recursive, y_bomb, y_chain, y_deep)}
SKIPPED = {".md", ".png"}
BIGGEST = 400_000        # bytes: the larger samples add time, not kinds of content


def _inputs() -> list[Path]:
    """The files the fuzz starts from: every real sample small enough, and the project's
    own inputs (run.yaml, launch records, logs, results) under data/."""
    samples = sorted(p for p in REAL_SAMPLES.rglob("*") if p.is_file()) \
        if REAL_SAMPLES.is_dir() else []
    own = sorted(p for p in (ROOT / "data").rglob("*") if p.is_file()
                 and p.name not in ("SHA256SUMS", "claims.yaml", "scenario.yaml")
                 and "source" not in p.parts)
    return [p for p in samples + own if p.suffix not in SKIPPED and p.name != "LICENSE"
            and p.stat().st_size <= BIGGEST]


def _case(r: random.Random, files: list[Path]) -> tuple[Path, str, bytes] | None:
    path = r.choice(files)
    data = path.read_bytes()
    mutations = {**MUTATIONS, **(YAML_MUTATIONS if path.suffix == ".yaml" else {})}
    name = r.choice(sorted(mutations))
    mutated = mutations[name](data, r)
    return None if mutated is None or mutated == data else (path, name, mutated)


def _read_through_entry_points(path: Path, tmp: Path, shown: str) -> None:
    """As a build, `benchreport parse` and `benchreport init` read the file."""
    if path.name == "run.yaml":
        load_run("fuzz", path.parent.parent, tmp / "report")
        return
    read(path, shown)
    if path.suffix in (".json", ".jsonl", ".csv"):
        from benchreport.pipeline.init import init_run

        init_run("fuzzed", [path], tmp / "init", dry_run=True, out=lambda line: None)


class _NoAnswer(Exception):
    pass


def _no_answer(signum, frame):
    raise _NoAnswer(f"no answer in {CASE_SECONDS} s")


def _check(path: Path, tmp: Path) -> str | None:
    """None when the file is read or refused in one clear line; else what went wrong. A
    case that does not end (an alias bomb expanding) fails in CASE_SECONDS."""
    shown = path.name
    previous = signal.signal(signal.SIGALRM, _no_answer)
    signal.alarm(CASE_SECONDS)
    try:
        _read_through_entry_points(path, tmp, shown)
    except ReportError as exc:
        text = exc.one_line()
        if "\n" in text or len(text) > LONGEST_MESSAGE:
            return f"an error of {len(text)} characters or several lines: {text[:200]!r}"
        if shown not in text and "given files" not in text:
            return f"an error that does not name the file: {text[:200]!r}"
    except Exception as exc:               # noqa: BLE001 - what the fuzz is looking for
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return None


@pytest.mark.slow
def test_seeded_fuzz_of_real_files_gives_no_traceback(tmp_path):
    files = _inputs()
    assert files
    r = random.Random(SEED)
    failures, ran, started = [], 0, time.monotonic()
    while ran < CASES:
        case = _case(r, files)
        if case is None:
            continue
        source, name, data = case
        here = tmp_path / f"{ran:03d}"
        path = here / "data" / "fuzz" / source.name if source.name == "run.yaml" \
            else here / source.name
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        problem = _check(path, here)
        if problem:
            failures.append(f"case {ran} ({name} of {source.relative_to(source.parents[1])}): "
                            f"{problem}")
        ran += 1
    assert not failures, "\n".join(failures)
    assert time.monotonic() - started < 120
