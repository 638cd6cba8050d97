"""Benchmark windows placed by request count, for a client that records no time.

The real logs are the DGX Spark Laguna pair (MIT), as the reference run
data/2026-08-dgx-spark-laguna/ holds them: its client
sends one warm-up request, then 12 records of 3 × c requests (four scenarios, c = 1, 2, 4
in order), then two prefill stages of 3; a third stage failed with three 400s that no
result file records. Every line number and time below was read from the logs by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchreport.ingest import countplace as cp
from benchreport.ingest.io import read_raw
from benchreport.ingest.parsers.access import scan_access
from benchreport.ingest.windows import count_placements

RAW = Path(__file__).resolve().parents[1] / "data" / "2026-08-dgx-spark-laguna" / "raw"


def sample(name: str) -> Path:
    engine = "vllm" if name.startswith("vllm") else "sglang"
    return RAW / engine / "dgx-spark-laguna-vllm-vs-sglang" / name


SCENARIOS = ("prosa_decode", "code_decode", "prefill_8k", "prefill_8k_wiederholt")
needs_sample = pytest.mark.skipif(not RAW.is_dir(), reason="reference run not present")


def _expects(extra_last: int = 0) -> list[tuple[str, int, int]]:
    bench = [(f"{s}.c{c}", 3 * c, 0) for s in SCENARIOS for c in (1, 2, 4)]
    return bench + [("prefill.2k", 3, 0), ("prefill.8k", 3 + extra_last, 0)]


def _log(tmp_path: Path, name: str) -> tuple[Path, list[dict]]:
    copy = tmp_path / name
    shutil.copyfile(sample(name), copy)
    return copy, list(read_raw(copy, name, "auto", 2026))


def _place(tmp_path: Path, name: str, expects=None):
    path, records = _log(tmp_path, name)
    log = scan_access(path)
    reqs = cp.client_requests(log, [r["line"] for r in records if r["kind"] == "ready"])
    found = cp.place_by_count(expects or _expects(), [(a.line, a.status) for a in reqs], 1,
                              cp.activity_end(records), name)
    return found, cp.make_clock(records, log.accesses), reqs


# --- the pure function ---------------------------------------------------------------------
def test_consecutive_lines_go_to_each_point_after_the_warmup():
    reqs = [(10, 200), (12, 200), (13, 200), (20, 200), (21, 200), (22, 200), (30, 200)]
    found = cp.place_by_count([("a", 2, 0), ("b", 3, 0)], reqs, warmup=1,
                              end_after=lambda n: n + 5)
    assert found.warmup == (10,)
    assert [(p.key, p.lines, p.start_line, p.end_line) for p in found.placed] == [
        ("a", (12, 13), 12, 20), ("b", (20, 21, 22), 20, 27)]
    assert found.extra == (30,) and not found.not_placed


def test_the_last_point_ends_at_the_activity_after_its_last_request():
    found = cp.place_by_count([("a", 2, 0)], [(5, 200), (7, 200)], end_after=lambda n: 40)
    assert found.placed[0].end_line == 40
    assert cp.place_by_count([("a", 2, 0)], [(5, 200), (7, 200)]).placed[0].end_line == 7


def test_too_few_lines_place_nothing_from_that_point_on():
    found = cp.place_by_count([("a", 2, 0), ("b", 2, 0), ("c", 1, 0)],
                              [(1, 200), (2, 200), (3, 200), (4, 200)], file="x.log")
    assert [p.key for p in found.placed] == ["a", "b"]
    assert found.not_placed == {"c": "x.log has 4 client requests after the warm-up, "
                                     "the results expect 5"}


def test_an_error_where_a_success_is_expected_stops_the_placement():
    reqs = [(1, 200), (2, 200), (3, 500), (4, 200), (5, 200)]
    found = cp.place_by_count([("a", 2, 0), ("b", 2, 0), ("c", 1, 0)], reqs, file="x.log")
    assert [(p.key, p.end_line) for p in found.placed] == [("a", 3)]
    reason = ("x.log line 3 is a 500 response where the results expect 2 successful and "
              "0 failed requests for b")
    assert found.not_placed == {"b": reason, "c": reason}
    assert found.extra == ()


def test_failed_requests_the_file_counts_may_be_error_lines():
    found = cp.place_by_count([("a", 1, 1), ("b", 1, 0)], [(1, 200), (2, 503), (3, 200)])
    assert [p.lines for p in found.placed] == [(1, 2), (3,)] and not found.not_placed


def test_a_point_without_requests_is_not_placed_and_the_rest_still_are():
    found = cp.place_by_count([("a", 0, 0), ("b", 1, 0)], [(1, 200), (2, 200)],
                              end_after=lambda n: 9)
    assert found.not_placed == {"a": "the results record no request for a"}
    assert [(p.key, p.end_line) for p in found.placed] == [("b", 9)]
    assert found.extra == (2,)


def test_window_times_bound_a_line_without_its_own_time():
    clock = cp.Clock(((10, "2026-01-01T00:00:10"), (20, "2026-01-01T00:00:20"),
                      (30, "2026-01-01T00:00:30")))
    assert cp.window_times(clock, 15, 25) == ("2026-01-01T00:00:10", "2026-01-01T00:00:30")
    assert cp.window_times(clock, 20, 20) == ("2026-01-01T00:00:20", "2026-01-01T00:00:20")
    assert cp.window_times(clock, 5, 35) == ("2026-01-01T00:00:10", "2026-01-01T00:00:30")
    assert cp.window_times(cp.Clock(()), 1, 2) is None


def test_a_year_less_stamp_takes_the_year_of_its_neighbour():
    assert cp._with_year("08-01 23:30:43", "2026-08-01T23:25:19") == "2026-08-01T23:30:43"
    assert cp._with_year("01-01 00:00:05", "2025-12-31T23:59:50") == "2026-01-01T00:00:05"
    assert cp._with_year("2026-08-02 00:02:18", None) == "2026-08-02T00:02:18"


def test_only_the_last_server_run_after_its_ready_line_holds_client_requests(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "START 10:00:00 A\n"
        '[2026-01-01 10:00:01] INFO:     127.0.0.1:1 - '
        '"POST /v1/chat/completions HTTP/1.1" 200 OK\n'
        "START 11:00:00 B\n"
        '[2026-01-01 11:00:01] INFO:     127.0.0.1:2 - "POST /generate HTTP/1.1" 200 OK\n'
        "[2026-01-01 11:00:02] The server is fired up and ready to roll!\n"
        '[2026-01-01 11:00:03] INFO:     127.0.0.1:3 - "GET /v1/models HTTP/1.1" 200 OK\n'
        '[2026-01-01 11:00:04] INFO:     127.0.0.1:4 - "POST /v1/completions?x=1 HTTP/1.1" 200 OK\n'
        '[2026-01-01 11:00:05] INFO:     127.0.0.1:5 - "POST /tokenize HTTP/1.1" 200 OK\n')
    scanned = scan_access(log)
    assert [(m.line, m.clock, m.label) for m in scanned.markers] == [
        (1, "10:00:00", "A"), (3, "11:00:00", "B")]
    assert [(a.line, a.path) for a in cp.client_requests(scanned, [5])] == [
        (7, "/v1/completions")]


# --- the real logs -----------------------------------------------------------------------
@needs_sample
def test_vllm_access_lines_without_time_get_their_neighbours_stamps(tmp_path):
    path, _ = _log(tmp_path, "vllm-int4.log")
    scanned = scan_access(path)
    posts = [a for a in scanned.accesses if a.method == "POST"]
    assert len(posts) == 94 and all(a.ts is None for a in posts)
    first = posts[0]
    assert (first.line, first.before, first.after) == (
        158, (153, "08-01 23:25:19"), (159, "08-01 23:30:43"))
    assert [m.line for m in scanned.markers] == [1]          # START 23:19:49 INT4


@needs_sample
def test_vllm_first_benchmark_starts_at_the_second_client_request(tmp_path):
    found, clock, reqs = _place(tmp_path, "vllm-int4.log")
    assert len(reqs) == 94 and found.warmup == (158,) and not found.not_placed
    first = found.placed[0]
    assert (first.key, first.lines, first.start_line, first.end_line) == (
        "prosa_decode.c1", (163, 166, 171), 163, 174)
    # line 162 (WARNING 23:30:44) is the last stamp before 163; line 176 (Engine 000,
    # 23:31:30) the first after 174
    assert cp.window_times(clock, first.start_line, first.end_line) == (
        "2026-08-01T23:30:44", "2026-08-01T23:31:30")
    last = found.placed[-1]
    # the 8k stage: lines 320, 323, 324; the first idle Engine 000 line after it is 332
    assert (last.key, last.lines, last.end_line) == ("prefill.8k", (320, 323, 324), 332)
    assert cp.window_times(clock, last.start_line, last.end_line) == (
        "2026-08-01T23:36:30", "2026-08-01T23:37:10")
    assert found.extra == (327, 328, 329)


@needs_sample
def test_sglang_prosa_decode_c4_window(tmp_path):
    found, clock, reqs = _place(tmp_path, "sglang-int4.log")
    # 95 POST lines less the engine's own start-up POST /generate (line 179)
    assert len(reqs) == 94 and found.warmup == (185,) and not found.not_placed
    c4 = next(p for p in found.placed if p.key == "prosa_decode.c4")
    assert c4.lines == (218, 219, 220, 221, 226, 227, 228, 229, 233, 234, 235, 236)
    assert (c4.start_line, c4.end_line) == (218, 241)
    assert cp.window_times(clock, c4.start_line, c4.end_line) == (
        "2026-08-02T00:03:56", "2026-08-02T00:05:04")
    last = found.placed[-1]
    assert last.end_line == 386                  # the last Decode batch line
    assert found.extra == (389, 390, 391)


@needs_sample
def test_one_request_more_expected_is_not_placed_with_its_reason(tmp_path):
    found, _, _ = _place(tmp_path, "vllm-int4.log", _expects(extra_last=1))
    assert len(found.placed) == 13
    assert found.not_placed == {"prefill.8k": "vllm-int4.log line 327 is a 400 response "
                                "where the results expect 4 successful and 0 failed "
                                "requests for prefill.8k"}
    more = _expects() + [("prefill.32k", 4, 0)]
    found, _, _ = _place(tmp_path, "vllm-int4.log", more)
    assert found.not_placed == {"prefill.32k": "vllm-int4.log has 93 client requests after "
                                "the warm-up, the results expect 94"}


# --- the adapter and find_windows' side -----------------------------------------------------
def _entries(engine: str, file: str) -> list:
    out = []
    for i, (key, ok, failed) in enumerate(_expects()):
        rel, where = (file, f"laeufe[{i}]") if i < 12 else \
            ("prefill.json", f"stufen[{i - 12}]")
        out.append(SimpleNamespace(
            id=f"{engine}.{key}", engine=engine, workload=key.split(".")[0],
            file=SimpleNamespace(rel=rel),
            point=SimpleNamespace(date=None, where=where, line=None, client="declared",
                                  fields={"completed": ok, "failed": failed,
                                          "duration": 1.0})))
    return list(reversed(out))              # the order comes from the files, not the list


@needs_sample
def test_count_placements_gives_every_point_a_window_with_its_evidence(tmp_path):
    name = "raw/vllm/vllm-int4.log"
    (tmp_path / "raw/vllm").mkdir(parents=True)
    records = [{**r, "engine": "vllm", "file": name}
               for r in _log(tmp_path, "vllm-int4.log")[1]]
    shutil.copyfile(tmp_path / "vllm-int4.log", tmp_path / name)
    run = SimpleNamespace(paths=SimpleNamespace(root=tmp_path), meta=SimpleNamespace(
        engines=[SimpleNamespace(id="vllm")], windows={}))
    by_kind: dict[str, list] = {}
    for r in records:
        by_kind.setdefault(r["kind"], []).append(r)
    notes: list[str] = []
    windows = count_placements(run, by_kind, _entries("vllm", "ergebnisse.json"), 1, notes)
    assert len(windows) == 14
    w = windows[0]
    assert (w.point, w.workload, w.start, w.end, w.method, w.file, w.first_line,
            w.last_line) == ("vllm.prosa_decode.c1", "prosa_decode", "2026-08-01T23:30:44",
                             "2026-08-01T23:31:30", "request count", name, 163, 174)
    assert notes == [f"{name}: 3 client requests after the last benchmark's, which no result "
                     "records: line 327 (400), line 328 (400), line 329 (400)"]


# --- the report --------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_setup_says_how_each_engines_windows_were_found(lang):
    from benchreport.core.i18n import load_catalogue
    from benchreport.core.records import BenchWindow
    from benchreport.publish.narrative import window_cells
    from benchreport.publish.narrative_base import Writer

    root = Path(__file__).resolve().parents[1]
    t = load_catalogue(root / "templates/labels", lang)
    run = SimpleNamespace(meta=SimpleNamespace(engines=[
        SimpleNamespace(id="vllm", name="vLLM"), SimpleNamespace(id="sglang", name="SGLang"),
        SimpleNamespace(id="none", name="None")]))
    log = "raw/vllm/vllm-int4.log"
    windows = [BenchWindow("vllm", "a", "2026-08-01T23:30:44", "2026-08-01T23:31:30",
                           "request count", method="request count", file=log,
                           first_line=163, last_line=174),
               BenchWindow("vllm", "b", "2026-08-01T23:36:30", "2026-08-01T23:37:10",
                           "request count", method="request count", file=log,
                           first_line=320, last_line=332),
               BenchWindow("sglang", "a", "2026-08-02T00:02:19", "2026-08-02T00:03:01",
                           "activity burst", method="request bursts")]
    cells = window_cells(Writer(run, {}, lang, t), windows)
    assert [c.label for c in cells] == [t["window.label"].format(engine=n)
                                        for n in ("vLLM", "SGLang")]
    vllm, sglang = (str(c.value) for c in cells)
    assert log in vllm and "163" in vllm and "332" in vllm and "{" not in vllm
    assert str(sentence_of(t["window.request_bursts"], "1")) == sglang


def sentence_of(template: str, n: str):
    from benchreport.core.i18n import sentence
    return sentence(template, n=n, file="", first="–", last="–")


def test_a_phase_marker_takes_its_date_from_the_next_stamped_line():
    clock = cp.Clock(((5, "2026-08-02T00:02:04"), (9, "2026-08-02T00:09:40")))
    from benchreport.ingest.parsers.access import Marker
    assert cp.marker_time(clock, Marker(1, "23:37:33", "INT4")) == "2026-08-01T23:37:33"
    assert cp.marker_time(clock, Marker(1, "00:01:00", "B")) == "2026-08-02T00:01:00"
    assert cp.marker_time(clock, Marker(10, "00:10:00", "C")) == "2026-08-02T00:10:00"
    assert cp.marker_time(cp.Clock(()), Marker(1, "00:10:00", "C")) is None


@needs_sample
def test_the_real_logs_start_markers_are_dated_from_their_neighbours(tmp_path):
    for name, when in (("vllm-int4.log", "2026-08-01T23:19:49"),
                       ("sglang-int4.log", "2026-08-01T23:37:33")):
        path, records = _log(tmp_path, name)
        log = scan_access(path)
        assert cp.marker_time(cp.make_clock(records, log.accesses), log.markers[0]) == when



@needs_sample
def test_find_windows_places_a_declared_clients_points_by_count(tmp_path):
    from benchreport.ingest.windows import find_windows

    name = "raw/vllm/vllm-int4.log"
    (tmp_path / "raw/vllm").mkdir(parents=True)
    shutil.copyfile(sample("vllm-int4.log"), tmp_path / name)
    by_kind: dict[str, list] = {}
    for r in read_raw(tmp_path / name, name, "auto", 2026):
        by_kind.setdefault(r["kind"], []).append({**r, "engine": "vllm", "file": name})
    entries = _entries("vllm", "ergebnisse.json")
    for e in entries:                       # one workload each: every point is single
        e.workload = e.id.split(".", 1)[1]
        e.point.model = None
        e.load = SimpleNamespace(max_concurrency=None)
    run = SimpleNamespace(paths=SimpleNamespace(root=tmp_path), meta=SimpleNamespace(
        engines=[SimpleNamespace(id="vllm")], windows={},
        workloads=[SimpleNamespace(id=e.workload, is_sweep=False) for e in entries]))
    assert find_windows(run, by_kind, entries, []) == []      # no declared client: as before
    notes: list[str] = []
    windows = find_windows(run, by_kind, entries, notes, warmup=1)
    assert len(windows) == 14 and {w.method for w in windows} == {"request count"}
    first = next(w for w in windows if w.workload == "prosa_decode.c1")
    assert (first.start, first.end, first.first_line, first.last_line) == (
        "2026-08-01T23:30:44", "2026-08-01T23:31:30", 163, 174)
    assert notes == [f"{name}: 3 client requests after the last benchmark's, which no result "
                     "records: line 327 (400), line 328 (400), line 329 (400)"]



@needs_sample
def test_the_access_scan_reads_the_same_in_small_blocks(tmp_path, monkeypatch):
    from benchreport.ingest.parsers import access

    path, _ = _log(tmp_path, "sglang-int4.log")
    whole = scan_access(path)
    monkeypatch.setattr(access, "BLOCK", 4096)
    parts = scan_access(path)
    assert parts.lines == whole.lines == 397
    assert [(a.line, a.ts, a.status) for a in parts.accesses] == \
        [(a.line, a.ts, a.status) for a in whole.accesses]
    assert parts.markers == whole.markers


def test_windows_of_a_first_token_log_start_at_the_prefill_before_the_access_line():
    """SGLang writes a streamed request's access line at its first token: the window of a
    point starts at the first prefill line after the previous point's last request, and the
    previous window ends there; a log without prefill lines keeps its windows."""
    found = cp.Placement(placed=[cp.Placed("a", (12, 14), 12, 20),
                                 cp.Placed("b", (20, 22), 20, 30)], warmup=(5,))
    fills = [{"kind": "prefill_batch", "line": n} for n in (11, 13, 19, 21)]
    got = cp.first_token_starts(found, fills)
    assert [(p.key, p.start_line, p.end_line) for p in got] == [("a", 11, 19), ("b", 19, 30)]
    assert cp.first_token_starts(found, []) == found.placed
