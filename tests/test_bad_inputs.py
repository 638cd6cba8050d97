"""The bad-input corpus: each case spoils a copy of the reference run in one way and
asserts the exact outcome through ``benchreport check`` (the same reading a build does):

* an error: exit code 1 and one line naming the file, the line when there is one, what
  was expected and what to do;
* or a warning naming file and line, exit code 0, and every headline figure equal to
  the unspoilt run's.

Static inputs live in tests/badinputs/; the rest is cut from the reference run here, so
each case shows exactly what it changes. Full builds of a spoilt run are in
test_faults.py and test_cli.py.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from benchreport.analyses.decode import decode_figures
from benchreport.analyses.notebook import caveats, end_to_end, workload_figures
from benchreport.analyses.prefill import prefill_figures
from benchreport.analyses.spec import spec_figures
from benchreport.cli import main
from benchreport.ingest.io import load_run
from benchreport.ingest.run import ingest_run

from .conftest import ROOT

CORPUS = Path(__file__).parent / "badinputs"
VLOG, SLOG = "raw/vllm/server.log", "raw/sglang/server.log"
V64 = "raw/vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json"
V200 = "raw/vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-102135.json"
S64 = "raw/sglang/sglang_1120_10_65536_3072.jsonl"
S200 = "raw/sglang/sglang_1120_10_200000_3072.jsonl"


def fresh(root: Path) -> Path:
    """A copy of the reference run as data/r/ under ``root`` (no checksums: we edit it)."""
    run = root / "data" / "r"
    shutil.copytree(ROOT / "data" / "2024-b300", run)
    (run / "SHA256SUMS").unlink()
    return run


def figures(root: Path) -> dict[str, float]:
    """Every figure the notebooks compute from the inputs, by id."""
    run = load_run("r", root / "data", root / "report")
    ing = ingest_run(run)
    figs = workload_figures(run) + end_to_end(run, ing).figures + caveats(run, ing).figures + \
        decode_figures(run, ing)[0] + prefill_figures(run, ing)[0] \
        + spec_figures(run, ing)
    return {f.id: f.value for f in figs}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> dict[str, float]:
    root = tmp_path_factory.mktemp("baseline")
    fresh(root)
    return figures(root)


def check(root: Path, capsys) -> tuple[int, list[str], list[str]]:
    code = main(["check", "r", "--data-root", str(root / "data")])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


# --- helpers that spoil a run ----------------------------------------------------------

def edit(rel: str, change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        (run / rel).write_bytes(change((run / rel).read_bytes()))
    return apply


def replace_once(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def change(data: bytes) -> bytes:
        assert old.encode() in data, old
        return data.replace(old.encode(), new.encode(), 1)
    return edit(rel, change)


def put(rel: str, corpus_file: str) -> Callable[[Path], None]:
    return lambda run: shutil.copyfile(CORPUS / corpus_file, run / rel)


def move(src: str, dst: str) -> Callable[[Path], None]:
    return lambda run: shutil.move(run / src, run / dst)


def link_outside(run: Path) -> None:
    outside = run.parent.parent.with_name(run.parent.parent.name + "-elsewhere.log")
    shutil.copyfile(run / VLOG, outside)
    (run / VLOG).unlink()
    (run / VLOG).symlink_to(outside)


def jsonl_with_a_bad_record(run: Path) -> None:
    """Both SGLang records in one JSON Lines file, a broken line between them (as an
    interrupted bench_serving run appends it)."""
    good = (run / S64).read_text() + '{"backend": "sglang", "dataset_name": "ran\n' + \
        (run / S200).read_text()
    (run / S64).write_text(good)
    (run / S200).unlink()


def restart_between_benchmarks(changed: bool) -> Callable[[Path], None]:
    """The vLLM server stops after the 64K benchmark and starts again before the 200K one."""
    def apply(run: Path) -> None:
        lines = (run / VLOG).read_text().splitlines(keepends=True)
        start = [re.sub(r"pid=2185\) INFO 11-20 09:49:31", "pid=3301) INFO 11-20 10:15:10", x)
                 for x in lines[:2]]
        if changed:
            start[1] = start[1].replace("'gpu_memory_utilization': 0.95",
                                        "'gpu_memory_utilization': 0.9")
        (run / VLOG).write_text("".join(lines[:97] + start + lines[97:]))
    return apply


def clock_back(run: Path) -> None:
    """A stats line from an hour earlier in the middle of the 64K benchmark (two logs
    spliced together)."""
    lines = (run / VLOG).read_text().splitlines(keepends=True)
    stray = lines[66].replace("11-20 10:12:24", "11-20 09:12:30")
    (run / VLOG).write_text("".join(lines[:70] + [stray] + lines[70:]))


def shift_clock(delta: dt.timedelta) -> Callable[[Path], None]:
    """Move every time stamp of both logs and the vLLM result dates by ``delta``."""
    def vllm(m: re.Match) -> str:
        t = dt.datetime.strptime(f"2026-{m[2]}", "%Y-%m-%d %H:%M:%S") + delta
        return f"{m[1]} {t:%m-%d %H:%M:%S}"

    def sglang(m: re.Match) -> str:
        return f"[{dt.datetime.fromisoformat(m[1]) + delta:%Y-%m-%d %H:%M:%S}"

    def result(m: re.Match) -> str:
        return f'"date": "{dt.datetime.strptime(m[1], "%Y%m%d-%H%M%S") + delta:%Y%m%d-%H%M%S}"'

    def library(m: re.Match) -> str:          # FlashInfer's logger inside the vLLM log
        return f"{dt.datetime.fromisoformat(m[1]) + delta:%Y-%m-%d %H:%M:%S},"

    def apply(run: Path) -> None:
        log = (run / VLOG).read_text()
        log = re.sub(r"(INFO|WARNING|ERROR|DEBUG) (\d\d-\d\d \d\d:\d\d:\d\d)", vllm, log)
        log = re.sub(r"(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),", library, log)
        (run / VLOG).write_text(log)
        log = (run / SLOG).read_text()
        (run / SLOG).write_text(re.sub(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", sglang, log))
        for rel in (V64, V200):
            text = (run / rel).read_text()
            (run / rel).write_text(re.sub(r'"date": "(\d{8}-\d{6})"', result, text))
    return apply


def no_logs(run: Path) -> None:
    (run / VLOG).unlink()
    (run / SLOG).unlink()


# The vLLM 200K benchmark runs 10:16:44-10:21:35 on 2026-11-20; these shifts put its
# middle at midnight, and at midnight of New Year's Eve (vLLM stamps carry no year).
ACROSS_MIDNIGHT = dt.timedelta(hours=13, minutes=41)
ACROSS_NEW_YEAR = dt.timedelta(days=41, hours=13, minutes=41)

ERRORS = [
    ("empty log", edit(VLOG, lambda b: b""),
     "data/r/raw/vllm/server.log: empty file, expected a vLLM or SGLang server log"),
    ("empty result", edit(V64, lambda b: b""),
     f"data/r/{V64}: empty file, expected a benchmark result (JSON or JSON Lines)"),
    ("binary garbage as a log", put(VLOG, "garbage.bin"),
     "data/r/raw/vllm/server.log: binary content, expected a server log"),
    ("binary garbage as a result", put(V64, "garbage.bin"),
     f"data/r/{V64}: binary content, expected a benchmark result (JSON or JSON Lines)"),
    ("a text file that is no log", put("raw/vllm/notes.txt", "notes.txt"),
     "data/r/raw/vllm/notes.txt:1: no vLLM or SGLang log lines found (expected lines such as "
     "'INFO 11-29 07:14:57 [loggers.py:271] …' or '[2026-11-29 07:14:57 TP0] Prefill batch, "
     "…')"),
    ("result JSON cut in half", edit(V64, lambda b: b[: len(b) // 2]),
     f"data/r/{V64}:1: the JSON stops before the record is complete (after 143862 "
     "characters; the file looks cut off); expected a benchmark result"),
    ("SGLang result in vLLM's folder", move(S64, "raw/vllm/sglang_1120_10_65536_3072.jsonl"),
     "data/r/raw/vllm/sglang_1120_10_65536_3072.jsonl:1: a result of SGLang (backend "
     "'sglang') in vLLM's folder raw/vllm/; move it to raw/sglang/"),
    ("SGLang log in vLLM's folder", lambda run: shutil.copyfile(run / SLOG, run / VLOG),
     "data/r/raw/vllm/server.log: this is SGLang's server log (by its line prefixes), in "
     "vLLM's folder raw/vllm/; move it to the folder of the engine that wrote it"),
    ("two results for one workload", lambda run: shutil.copyfile(run / V64,
                                                                 run / "raw/vllm/again.json"),
     f"two results for engine 'vllm' and workload '64k': data/r/raw/vllm/again.json:1 and "
     f"data/r/{V64}:1; keep one result per engine and workload under raw/<engine>/, or "
     "declare `repeats:` in run.yaml if they are repeats"),
    ("run.yaml without a date", replace_once("run.yaml", "date: 2026-11-20\n", ""),
     "data/r/run.yaml:1: run: missing key 'date'"),
    ("run.yaml with an unknown key", replace_once("run.yaml", "deployment:", "deploymnet:"),
     "data/r/run.yaml:28: unknown key run.deploymnet; did you mean 'deployment'?"),
    ("run.yaml with a wrong type", replace_once("run.yaml", "concurrency: 10", "concurrency: ten"),
     "data/r/run.yaml:42: workloads[].concurrency must be an integer > 0 (or a list of them), "
     "got 'ten'"),
    ("a symlink to a file outside the project", link_outside,
     "data/r/raw/vllm/server.log: a symbolic link to {outside}, outside the project; refused; "
     "copy the file into the run's folder instead"),
]


@pytest.mark.parametrize("spoil, expected", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_bad_input_stops_with_one_line(tmp_path, capsys, spoil, expected):
    spoil(fresh(tmp_path))
    code, out, err = check(tmp_path, capsys)
    outside = tmp_path.with_name(tmp_path.name + "-elsewhere.log").as_posix()
    assert (code, out, err) == (1, [], [f"error: {expected.format(outside=outside)}"])


WARNINGS = [
    ("bytes that are not UTF-8 in a log line",
     edit(VLOG, lambda b: b.replace(b"moonshotai/Kimi-K3", b"moonshotai/Kimi\xff-K3", 1)),
     ["data/r/raw/vllm/server.log:1: bytes that are not UTF-8 were replaced"]),
    ("log cut off in its last line", edit(VLOG, lambda b: b[:-60]),
     ["data/r/raw/vllm/server.log:169: the last line has no line end: the file looks cut off "
      "here (read as it is)"]),
    ("a 10 MB line", edit(SLOG, lambda b: b + b"x" * (10 << 20) + b"\n"),
     ["data/r/raw/sglang/server.log:284: a line of 10.0 MiB (no log record is that long; "
      "read as one line)"]),
    ("JSON Lines with one bad record among good ones", jsonl_with_a_bad_record,
     [f"data/r/{S64}:2: the JSON stops before the record is complete (after 42 characters; "
      "the file looks cut off); this line is skipped, the file's other records are used"]),
    ("a clock that goes back", clock_back,
     ["data/r/raw/vllm/server.log:71: the clock goes back 3603 s here (from "
      "2026-11-20T10:12:33 at line 70 to 2026-11-20T09:12:30); records are placed by their "
      "own time stamps"]),
    ("a log across midnight", shift_clock(ACROSS_MIDNIGHT), []),
    ("a log across New Year (vLLM stamps have no year)", shift_clock(ACROSS_NEW_YEAR), []),
    ("a server that starts again, same settings", restart_between_benchmarks(False),
     ["data/r/raw/vllm/server.log:99: the server starts again here (previous start at line "
      "2); same settings"]),
    ("a server that starts again, other settings", restart_between_benchmarks(True),
     ["data/r/raw/vllm/server.log:99: the server starts again here (previous start at line "
      "2); settings changed: gpu_memory_utilization"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("spoil, expected", [c[1:] for c in WARNINGS],
                         ids=[c[0] for c in WARNINGS])
def test_bad_input_warns_and_the_figures_stay_right(tmp_path, capsys, baseline, spoil, expected):
    spoil(fresh(tmp_path))
    code, out, err = check(tmp_path, capsys)
    assert code == 0
    assert err == [f"warning: {w}" for w in expected]
    assert out[0].endswith(f"{len(set(err))} warnings")
    got = figures(tmp_path)
    windows = {k for k in got if k.endswith(".window")}     # time spans: they move along
    assert {k: v for k, v in got.items() if k not in windows} == \
        {k: v for k, v in baseline.items() if k not in windows}
    assert windows == {k for k in baseline if k.endswith(".window")}


@pytest.mark.slow
@pytest.mark.parametrize("delta, first, last", [
    (ACROSS_MIDNIGHT, "2026-11-20T23:57:44", "2026-11-21T00:02:43"),
    (ACROSS_NEW_YEAR, "2026-12-31T23:57:44", "2027-01-01T00:02:43")])
def test_time_stamps_across_midnight_and_new_year_get_the_right_day(tmp_path, baseline, delta,
                                                                     first, last):
    shift_clock(delta)(fresh(tmp_path))
    ing = ingest_run(load_run("r", tmp_path / "data"))
    stats = [r["ts"] for r in ing.in_window("engine_stats", "vllm", "200k")]
    assert (stats[0], stats[-1]) == (first, last)
    assert stats == sorted(stats)
    window = figures(tmp_path)["decode.200k.vllm.window"]
    start, end = (dt.datetime.fromisoformat(t) - delta
                  for t in window.split(" – "))
    assert f"{start:%Y-%m-%dT%H:%M:%S} – {end:%Y-%m-%dT%H:%M:%S}" == \
        baseline["decode.200k.vllm.window"]


@pytest.mark.slow
def test_a_run_without_logs_reads_its_results_only(tmp_path, capsys, baseline):
    no_logs(fresh(tmp_path))
    code, out, err = check(tmp_path, capsys)
    assert (code, out, err) == (0, ["data/r: 6 files, 6 records, 2 benchmark windows found, "
                                    "0 warnings"], [])
    got = figures(tmp_path)
    results = {k for k in got if k.startswith(("e2e.", "workload."))}
    assert {k: got[k] for k in results} == {k: baseline[k] for k in results}
    assert "e2e.64k.speedup" in got
    decode = {k: v for k, v in got.items() if k.startswith("decode.")}
    assert decode == {f"decode.{w}.{e}.steady": "no log" for w in ("64k", "200k")
                      for e in ("vllm", "sglang")}


@pytest.mark.slow
def test_settings_are_those_of_the_start_in_effect_at_the_first_benchmark(tmp_path, capsys):
    """The server failed to come up with one memory setting and was restarted with another
    before the benchmarks: the settings compared are the restarted server's."""
    run = fresh(tmp_path)
    (run / "raw/vllm/launch.yaml").unlink()            # settings from the log alone
    lines = (run / VLOG).read_text().splitlines(keepends=True)
    again = [re.sub(r"pid=2185\) INFO 11-20 09:49:31", "pid=3301) INFO 11-20 10:05:00", x)
             for x in lines[:2]]
    again[1] = again[1].replace("'gpu_memory_utilization': 0.95", "'gpu_memory_utilization': 0.9")
    (run / VLOG).write_text("".join(lines[:24] + again + lines[24:]))
    code, _, err = check(tmp_path, capsys)
    assert code == 0 and err == [
        "warning: data/r/raw/vllm/server.log:26: the server starts again here (previous start "
        "at line 2); settings changed: gpu_memory_utilization"]
    loaded = load_run("r", tmp_path / "data", tmp_path / "report")
    memory = next(f for f in caveats(loaded, ingest_run(loaded)).figures
                  if f.id == "setting.memory.vllm")
    assert "0.9" in str(memory.value) and "0.95" not in str(memory.value)
