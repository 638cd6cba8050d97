"""Where each request's time went (analyses.timeline): on hand-made points with known truth
(wait against own prefill, the stall before token 2, the TPOT decomposition closing, a
phase no file places, a failed request), on the reference run, and on a real AIPerf run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreport.analyses import timeline as tl
from benchreport.core import ids
from benchreport.core.paths import RunPaths
from benchreport.core.records import BenchWindow, Ingested, Run
from benchreport.core.runmeta import parse_run_yaml
from benchreport.core.verdicts import PHASE_UNPLACED, PREFILL_CHUNKS, PREFILL_ESTIMATE

from .conftest import REAL_SAMPLES, ROOT, needs_samples

FIXTURE = (Path(__file__).parent / "fixtures" / "runs" / "mini" / "run.yaml").read_text()
SHA = "0" * 64
LOG = "data/t/raw/vllm/server.log"


def _run(num_prompts: int = 2) -> Run:
    text = FIXTURE.split("workloads:")[0] + (
        "workloads:\n  - {id: w, label: W, input_tokens: 1000, output_tokens: 11, "
        f"concurrency: 2, num_prompts: {num_prompts}}}\n")
    paths = RunPaths(run_id="t", data=Path("/x/data/t"), report=Path("/x/report/t"))
    return Run(paths=paths, meta=parse_run_yaml(text, "run.yaml"))


def _stats(line: int, prompt_tps: float, running: int = 2, gen_tps: float = 0.0) -> dict:
    return {"engine": "vllm", "file": LOG, "sha256": SHA, "line": line, "kind": "engine_stats",
            "ts": f"2026-01-01T00:00:{line:02d}", "prompt_tps": prompt_tps, "gen_tps": gen_tps,
            "running": running, "waiting": 0}


# Two requests of 1,000 tokens sent at once; the engine's full prefill speed 500 tok/s
# (line 3), so each prefills for 2 s. Request 0: TTFT 2 s, then a 1 s stall, then 10 ms
# gaps; request 1 waits 3 s (TTFT 5 s); its gaps are 10 ms. A third request failed.
REQUESTS = [
    {"index": 0, "ttft_ms": 2000.0, "e2el_ms": 2000.0 + 1000.0 + 9 * 10.0,
     "input_tokens": 1000, "output_tokens": 11, "itl_ms": [1000.0] + [10.0] * 9},
    {"index": 1, "ttft_ms": 5000.0, "e2el_ms": 5000.0 + 10 * 10.0, "input_tokens": 1000,
     "output_tokens": 11, "itl_ms": [10.0] * 10},
    {"index": 2, "ttft_ms": None, "e2el_ms": None, "input_tokens": 1000, "output_tokens": 0,
     "error": "Internal Server Error", "itl_ms": None},
]
# the client's mean TPOT: ((1000 + 90) / 10 + 100 / 10) / 2
CLIENT_TPOT = (109.0 + 10.0) / 2


def _ing(log: bool = True, num_prompts: int = 2, starts: list | None = None) -> Ingested:
    point = {"point": "vllm.w.c2.r1", "engine": "vllm", "workload": "w", "load": "c2",
             "client": "vllm-bench-serve", "file": "data/t/raw/vllm/r.json", "sha256": SHA,
             "line": 1, "duration": 6.0, "completed": 2, "failed": 1,
             "mean_tpot_ms": CLIENT_TPOT}
    reqs = [{**r, "point": point["point"], "start_s": (starts or [None] * 3)[i]}
            for i, r in enumerate(REQUESTS)]
    stats = [_stats(1, 300.0, 1), _stats(3, 500.0), _stats(5, 0.0, gen_tps=100.0)] if log else []
    window = BenchWindow(engine="vllm", workload="w", start="2026-01-01T00:00:00",
                         end="2026-01-01T00:00:59", source="run.yaml")
    return Ingested(records={"engine_stats": stats}, summaries=[], results=[],
                    windows=[window] if log else [], points=[point], requests=reqs)


def _figs(figures) -> dict:
    return {f.id: f for f in figures}


def test_wait_and_own_prefill_split_from_the_full_prefill_speed():
    rows, figures = tl.timeline(_run(), _ing())
    assert [r["index"] for r in rows] == [0, 1]            # the failed request has no row
    one = rows[1]
    assert one["prefill_s"] == pytest.approx(2.0) and one["wait_s"] == pytest.approx(3.0)
    assert one["arrival_s"] == 0.0 and one["arrival_basis"] == tl.SENT_AT_ONCE
    assert one["prefill_basis"] == PREFILL_ESTIMATE
    f = _figs(figures)
    fid = lambda name: ids.timeline("w", "vllm", name)    # noqa: E731
    assert f[fid("longest_wait_s")].value == pytest.approx(3.0)
    assert f[fid("longest_wait_prefill_s")].value == pytest.approx(2.0)
    assert f[fid("longest_wait_request")].value == 2
    assert f[fid("wait_share")].value == pytest.approx((0 + 3 / 5) / 2)
    assert f[fid("longest_wait_s")].sources[1].lines == (3,)     # the 500 tok/s line
    assert f[fid("requests")].value == 2


def test_stall_before_token_two_and_the_gaps_shared_with_a_prefill():
    rows, figures = tl.timeline(_run(), _ing())
    f = _figs(figures)
    fid = lambda name: ids.timeline("w", "vllm", name)    # noqa: E731
    zero = rows[0]
    assert zero["stall_s"] == pytest.approx(1.0)
    assert zero["second_token_s"] == pytest.approx(3.0)
    assert zero["finish_s"] == pytest.approx(3.09) and zero["decode_s"] == pytest.approx(0.09)
    assert f[fid("longest_stall_s")].value == pytest.approx(1.0)
    assert f[fid("longest_stall_token2_s")].value == pytest.approx(3.0)
    # the stall began while request 1's prompt was still pending (until 5 s): it is the
    # request's stall, counted there and not again among the prefill-overlapping gaps, so
    # the count agrees with the TPOT split (its shared part is 0)
    assert f[fid("shared_gaps")].value == 0
    assert f[fid("shared_gaps")].context["first_gaps"] == 1
    assert f[fid("tpot_shared_ms")].value == 0.0
    assert rows[1]["stall_s"] == 0.0 and rows[1]["second_token_s"] is None


def test_tpot_parts_add_up_to_the_clients_mean_tpot():
    _, figures = tl.timeline(_run(), _ing())
    f = _figs(figures)
    fid = lambda name: ids.timeline("w", "vllm", name)    # noqa: E731
    assert f[fid("tpot_stall_ms")].value == pytest.approx((1000 / 10 + 0) / 2)
    assert f[fid("tpot_shared_ms")].value == pytest.approx(0.0)
    assert f[fid("tpot_gaps_ms")].value == pytest.approx((9.0 + 10.0) / 2)
    assert f[fid("tpot_sum_ms")].value == pytest.approx(CLIENT_TPOT)
    assert f[fid("tpot_closure_ms")].value == pytest.approx(0.0, abs=1e-9)
    # the steady line: 100 tok/s for 2 requests, 20 ms per token; the other gaps are 9.5
    assert f[fid("tpot_steady_ms")].value == pytest.approx(20.0)
    assert f[fid("tpot_other_ms")].value == pytest.approx(9.5 - 20.0)


def test_without_a_log_or_send_times_the_phases_are_unplaced():
    rows, figures = tl.timeline(_run(num_prompts=4), _ing(log=False))
    f = _figs(figures)
    fid = lambda name: ids.timeline("w", "vllm", name)    # noqa: E731
    assert all(r["prefill_s"] is None and r["wait_s"] is None for r in rows)
    assert all(r["arrival_basis"] == tl.NOT_MEASURED and r["arrival_s"] is None for r in rows)
    assert rows[0]["unplaced"] == "engine arrival, own prefill, time before own prefill, arrival"
    assert f[fid("prefill_basis")].value == PHASE_UNPLACED
    assert fid("wait_share") not in f and fid("shared_gaps") not in f
    assert fid("tpot_sum_ms") not in f               # shared gaps cannot be placed
    assert f[fid("longest_stall_s")].value == pytest.approx(1.0)   # the stall still is


def _sweep() -> tuple[Run, Ingested]:
    """The same requests at two loads of a sweep (concurrency 2 and 4)."""
    text = FIXTURE.split("workloads:")[0] + (
        "workloads:\n  - {id: w, label: W, input_tokens: 1000, output_tokens: 11, "
        "concurrency: [2, 4]}\n")
    paths = RunPaths(run_id="t", data=Path("/x/data/t"), report=Path("/x/report/t"))
    run = Run(paths=paths, meta=parse_run_yaml(text, "run.yaml"))
    one = _ing()
    points, reqs = [], []
    for load, conc in (("c2", 2), ("c4", 4)):
        p = {**one.points[0], "point": f"vllm.w.{load}.r1", "load": load,
             "max_concurrency_target": conc, "repeat": 1, "variant": ""}
        points.append(p)
        reqs += [{**r, "point": p["point"]} for r in one.requests]
    return run, Ingested(records=one.records, summaries=[], results=[], windows=one.windows,
                         points=points, requests=reqs)


def test_each_point_of_a_sweep_gets_its_own_timeline():
    run, ing = _sweep()
    rows, figures = tl.timeline(run, ing)
    f = _figs(figures)
    at = lambda load, name: ids.timeline("w", "vllm", name, at=f"{load}.r1")  # noqa: E731
    assert {r["point"] for r in rows} == {"vllm.w.c2.r1", "vllm.w.c4.r1"} and len(rows) == 4
    for load in ("c2", "c4"):
        assert f[at(load, "requests")].value == 2
        assert f[at(load, "requests")].context["load"] == load
        # the stall is the request's own: 1 s, token 2 at 3 s
        assert f[at(load, "longest_stall_s")].value == pytest.approx(1.0)
        # the sweep's log window is shared by its points: no own prefill is matched
        assert f[at(load, "prefill_basis")].value == PHASE_UNPLACED
        assert at(load, "wait_share") not in f and at(load, "tpot_steady_ms") not in f
    # three requests (two succeeded, one failed) sent at concurrency 4: all at once, placed;
    # at concurrency 2 they are not
    assert f[at("c4", "tpot_sum_ms")].value == pytest.approx(CLIENT_TPOT)
    assert at("c2", "tpot_sum_ms") not in f
    assert ids.timeline("w", "vllm", "requests") not in f


def test_a_sweeps_points_are_rows_of_the_page():
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.timeline import timeline_section

    run, ing = _sweep()
    _, figures = tl.timeline(run, ing)
    w = Writer(run, {f.id: f for f in figures}, "en",
               load_catalogue(ROOT / "templates" / "labels", "en"))
    sec = timeline_section(w)
    assert [str(r[1]) for r in sec.tables[0].rows] == ["W · c2", "W · c4"]


def test_gaps_that_overlap_a_prefill_are_placed_for_the_chart():
    from benchreport.publish.charts import _gantt_spans

    rows, _ = tl.timeline(_run(), _ing())
    # request 0: TTFT 2 s, gaps 1 s then 10 ms; request 1 pending until 5 s. A later gap of
    # request 0 above 5 × its median (10 ms) that starts before 5 s would overlap: none here
    assert rows[0]["shared_at_s"] == [] and rows[0]["shared_len_s"] == []
    row = {**rows[0], "shared_at_s": [3.0], "shared_len_s": [0.5]}
    assert ("overlap", 3.0, 0.5) in _gantt_spans(row)
    split = tl.gap_split({"first_token_s": 1.0}, [10.0, 500.0, 10.0, 10.0, 10.0],
                         [(0.0, 5.0)])
    assert split["shared_at_s"] == [pytest.approx(1.01)]
    assert split["shared_len_s"] == [pytest.approx(0.5)]


def test_the_state_chart_counts_from_the_benchmark_windows_start():
    from benchreport.publish.charts import seconds_from

    rows = [{"ts": "2026-01-01T10:12:14"}, {"ts": "2026-01-01T10:12:24"}]
    assert seconds_from(rows, "2026-01-01T10:12:03") == [11.0, 21.0]
    assert seconds_from(rows, None) == [0.0, 10.0]


def test_the_gantt_axis_says_arrival_order_only_where_the_client_timed_the_sends():
    from benchreport.publish.charts import gantt_order

    at_once, _ = tl.timeline(_run(), _ing())
    timed, _ = tl.timeline(_run(num_prompts=4), _ing(starts=[0.0, 1.5, None]))
    assert gantt_order(at_once) == "chart.gantt_requests_file"
    assert gantt_order(timed) == "chart.gantt_requests"


def test_the_clients_send_times_place_the_requests():
    rows, _ = tl.timeline(_run(num_prompts=4), _ing(starts=[0.0, 1.5, None]))
    assert [r["arrival_s"] for r in rows] == [0.0, 1.5]
    assert rows[1]["first_token_s"] == pytest.approx(6.5)
    assert rows[1]["arrival_basis"] == tl.CLIENT_TIMES


# --- the reference run -------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference(reference_build):
    data = json.loads(reference_build.paths.figures_json.read_text())
    return {f["id"]: f for f in data["figures"]}, reference_build


def test_reference_vllm_64k_waits_and_shared_gaps(reference):
    f, run = reference
    fid = lambda name: ids.timeline("64k", "vllm", name)   # noqa: E731
    assert f[fid("longest_wait_request")]["value"] == 10
    assert f[fid("longest_wait_s")]["value"] == pytest.approx(34.64, abs=0.01)
    assert f[fid("longest_wait_prefill_s")]["value"] == pytest.approx(65536 / 21499.2)
    assert f[fid("longest_wait_prefill_s")]["sources"][1]["lines"] == [69]
    # 82 gaps overlap a pending prompt, 9 of them first gaps (stalls): 73 after token 2
    assert f[fid("shared_gaps")]["value"] == 73
    assert f[fid("shared_gaps")]["context"]["first_gaps"] == 9
    assert 1.4 < f[fid("shared_gap_min_s")]["value"] < f[fid("shared_gap_max_s")]["value"] < 3.2
    assert run.paths.timeline.is_file()


def test_reference_sglang_64k_times_batches_that_held_decode_at_the_prefill_speed(reference):
    """SGLang logs a Prefill line's throughput over the time since the previous Prefill line.
    Requests 2-10 arrive 6.3 s apart, after decode steps of the one before: their first
    chunk's logged 6,870-6,900 tok/s holds decode time. Timed instead at the prefill-only
    speed at the same context (request 1's first chunk: 22,265 tok/s, line 11), request 10's
    own prefill is 32,768 ÷ 22,265 + 32,768 ÷ its second chunk's 21,064 tok/s."""
    f, _ = reference
    fid = lambda name: ids.timeline("64k", "sglang", name)   # noqa: E731
    assert f[fid("prefill_substituted")]["value"] == 9
    assert f[fid("longest_wait_request")]["value"] == 10
    assert f[fid("longest_wait_prefill_s")]["value"] == pytest.approx(32768 / 22265 +
                                                                        32768 / 21064)
    assert f[fid("longest_wait_s")]["value"] == pytest.approx(56.85, abs=0.01)
    # SGLang's client divides a two-token chunk's gap over its tokens: requests 1-3 each
    # have one 3.05 s gap written as two equal entries; counted as chunks, 9 + 8 + … + 1
    assert f[fid("shared_gaps")]["value"] == 45
    assert f[fid("shared_gap_max_s")]["value"] == pytest.approx(3.06, abs=0.01)
    # SGLang 200K runs its prefills back to back: nothing to substitute
    assert f[ids.timeline("200k", "sglang", "prefill_substituted")]["value"] == 0


def test_reference_sglang_200k_stall_and_tpot(reference):
    f, _ = reference
    fid = lambda name: ids.timeline("200k", "sglang", name)   # noqa: E731
    assert f[fid("longest_stall_s")]["value"] == pytest.approx(97.6, abs=0.05)
    assert f[fid("longest_stall_token2_s")]["value"] == pytest.approx(109.5, abs=0.05)
    assert f[fid("prefill_basis")]["value"] == PREFILL_CHUNKS
    assert f[fid("tpot_steady_ms")]["value"] == pytest.approx(
        f[ids.decode("200k", "sglang", "ms_per_token")]["value"])
    parts = sum(f[fid(k)]["value"] for k in ("tpot_stall_ms", "tpot_shared_ms",
                                             "tpot_gaps_ms"))
    assert parts + f[fid("tpot_closure_ms")]["value"] == pytest.approx(
        f[ids.latency("200k", "sglang", "tpot", "mean")]["value"])
    assert abs(f[fid("tpot_closure_ms")]["value"]) < 0.5
    # its 9 overlapping gaps are all first gaps (the stalls): none after token 2, as the
    # TPOT split's shared part of 0.0 ms says
    assert f[fid("shared_gaps")]["value"] == 0
    assert f[fid("shared_gaps")]["context"]["first_gaps"] == 9
    assert f[fid("tpot_shared_ms")]["value"] == 0.0


def _plain(paragraphs) -> str:
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", " ".join(str(p) for p in paragraphs)))


def _section(reference, lang: str = "en"):
    from benchreport.core.figures import load_registry
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.timeline import timeline_section

    _, run = reference
    registry = load_registry(run.paths.figures_json)
    w = Writer(run, registry, lang, load_catalogue(ROOT / "templates" / "labels", lang))
    return timeline_section(w), w


def test_reference_page_words_what_its_figures_select(reference):
    sec, w = _section(reference)
    rows = {(r[0], r[1]): [str(c) for c in r] for r in sec.tables[0].rows}
    text = _plain(sec.paragraphs)
    # SGLang 64K: gaps read, none a stall: "none", never "–" (not held)
    assert ">none<" in rows[("SGLang", "64K")][4]
    assert "–" not in rows[("SGLang", "64K")][4]
    assert ">none<" in rows[("SGLang", "200K")][5]        # a count of 0 overlapping gaps
    # the parts fall short of SGLang's client TPOT (E2E − TTFT runs past the last chunk);
    # vLLM's client TPOT is the parts' sum
    assert "SGLang, 64K and 200K: the client's mean TPOT is 0.12 ms, 0.22 ms respectively " \
           "(the generator's model) above the sum of the parts: its end-to-end time runs " \
           "past the request's last" in text
    assert "vLLM, 64K: the client's mean TPOT is" not in text
    # one sentence for both vLLM rows whose own prefill is an estimate
    assert text.count("each request's own prefill is an estimate") == 1
    assert "vLLM 64K, vLLM 200K: the log gives prompt throughput only per stats interval" in text
    # its engine lines show no queue, yet time passed before own prefill: said, marked
    assert "SGLang, 64K: no request was waiting on any of the engine's stats lines, yet the " \
           "time before own prefill averages 79.1% of TTFT: in this reconstruction the " \
           "generator makes the requests reach the engine 6.3 s (calibrated) apart" in text
    assert "vLLM, 64K: no request was waiting" not in text      # vLLM's lines show a queue
    # vLLM 200K's parts 0.5 + 15.2 + 60.6 print 76.2: the rounding note is there
    assert "0.5 ms</a> + <a" in rows[("vLLM", "200K")][6]
    assert w.t["timeline.rounding"] in text
    # a value that rounds to zero has no sign; a negative one a minus sign
    assert ">0.0 ms<" in rows[("SGLang", "200K")][7]
    sglang = rows[("SGLang", "64K")]
    assert "−0.6 ms" in sglang[7] and "-0." not in " ".join(sglang)


def test_no_rounding_note_where_the_parts_add_up(reference):
    import dataclasses

    sec, w = _section(reference)
    # vLLM's parts print 0.5 + 3.7 + 20.2 (24.4) against 24.5, and 0.5 + 15.2 + 60.6 (76.3)
    # against 76.2; with sums that match, no note
    for wl, total in (("64k", 24.4), ("200k", 76.3)):
        fid = ids.timeline(wl, "vllm", "tpot_sum_ms")
        w.registry[fid] = dataclasses.replace(w.registry[fid], value=total)
    from benchreport.publish.timeline import timeline_section

    assert w.t["timeline.rounding"] not in _plain(timeline_section(w).paragraphs)


def test_the_korean_note_takes_the_particle_of_the_word_before_the_parenthesis(reference):
    sec, _ = _section(reference, "ko")
    text = _plain(sec.paragraphs)
    assert "안정 구간 디코드의 토큰당 시간(vLLM 64K, SGLang 64K, SGLang 200K)은" in text


# --- a real AIPerf run ----------------------------------------------------------------------

AIPERF = REAL_SAMPLES / "paired" / "inferencemax-glm51-mi355x-sglang-aiperf"


def test_aiperf_records_keep_send_times_and_chunk_gaps():
    from benchreport.ingest.clients.aiperf import _requests_point
    from benchreport.ingest.clients.base import Doc

    rec = {"metadata": {"request_start_ns": 2_500_000_000}, "error": None,
           "metrics": {"time_to_first_token": {"value": 5.0, "unit": "ms"},
                       "inter_chunk_latency": {"value": [1.0, 2.0], "unit": "ms"}}}
    first = {**rec, "metadata": {"request_start_ns": 1_000_000_000}}
    p = _requests_point(Doc(path="x.jsonl", name="x.jsonl", kind="jsonl",
                            value=[(1, first), (2, rec)]))
    assert [r["start_s"] for r in p.requests] == [0.0, 1.5]
    assert p.requests[1]["itl_ms"] == [1.0, 2.0]


@needs_samples
@pytest.mark.skipif(not AIPERF.is_dir(), reason=f"no AIPerf sample at {AIPERF}")
def test_a_real_aiperf_run_gets_its_timeline_from_its_own_files(aiperf_sample_build):
    """The sample made a run by ``init`` and built (the session's shared build, run id
    'aip')."""
    report = aiperf_sample_build.paths.report
    figs = {f["id"]: f for f in json.loads(
        (report / "derived/figures.json").read_text())["figures"]}
    mine = {k: v for k, v in figs.items() if ids.family(k) == "timeline"}
    requests = next(v for k, v in mine.items() if ids.leaf(k) == "requests")
    assert requests["value"] == 87
    assert all(s["path"].startswith("data/aip/raw/") for v in mine.values()
               for s in v["sources"])
    import duckdb

    rows = duckdb.sql(f"select * from '{report / 'derived/tables/timeline.parquet'}'").df()
    assert (rows["arrival_basis"] == tl.CLIENT_TIMES).all() and len(rows) == 87
