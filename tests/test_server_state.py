"""The server's state over each benchmark window from the engines' own log lines
(analyses.state), the hit-rate sentence it picks (publish.state), and the hardware table
the step model's bound falls back on (core.hardware).

The small logs below are written in the engines' real line shapes and read by the real
parsers, so every expected value is worked out by hand from the lines."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import re
from pathlib import Path

import pytest

from benchreport.analyses import state
from benchreport.core import hardware, ids
from benchreport.core.figures import Figure
from benchreport.core.records import BenchWindow, Ingested, Run
from benchreport.core.runmeta import parse_run_yaml
from benchreport.core.verdicts import NOT_MEASURED
from benchreport.ingest.parsers.logscan import scan

from .conftest import ROOT, needs_samples

FIXTURE = (Path(__file__).parent / "fixtures" / "runs" / "mini" / "run.yaml").read_text()

# vLLM 0.33 (prints "Preemptions: N" when N > 0): three lines with requests waiting, 10 s
# apart, then none; 3 preemptions in the third interval
VLLM_NEW = "\n".join([
    "(APIServer pid=1) INFO 01-15 10:10:00 [api_server.py:1] vLLM API server version 0.33.0",
    *(f"(APIServer pid=1) INFO 01-15 10:10:{s:02d} [loggers.py:302] Engine 000: Avg prompt "
      f"throughput: 100.0 tokens/s, Avg generation throughput: 10.0 tokens/s, Running: {r} "
      f"reqs, Waiting: {w} reqs, {p}GPU KV cache usage: {kv}%, Prefix cache hit rate: 0.0%"
      for s, r, w, p, kv in ((10, 1, 2, "", 5.0), (20, 2, 1, "", 10.0),
                             (30, 3, 1, "Preemptions: 3, ", 40.5), (40, 3, 0, "", 12.0),
                             (50, 0, 0, "", 0.0))),
]) + "\n"
# vLLM 0.9 (V1, no Preemptions part yet): its preemptions are not measured
VLLM_OLD = "\n".join([
    "INFO 01-15 10:10:00 [api_server.py:1] vLLM API server version 0.9.2",
    *(f"INFO 01-15 10:10:{s:02d} [loggers.py:111] Engine 000: Avg prompt throughput: 1.0 "
      f"tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: {w} "
      f"reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%"
      for s, w in ((10, 0), (20, 0))),
]) + "\n"
# SGLang: batch lines 2 s apart, a queue of 4 then 1 (4 s queued), 30% of prompt tokens
# found in the cache (300 of 1,000), and one retraction of 2 requests
SGLANG = "\n".join([
    "[2026-01-15 10:20:00 TP0] Prefill batch, #new-seq: 1, #new-token: 500, #cached-token: "
    "100, token usage: 0.10, #running-req: 0, #queue-req: 4, #pending-token: 0, cuda graph: "
    "False, input throughput (token/s): 100.00",
    "[2026-01-15 10:20:02 TP0] Prefill batch, #new-seq: 1, #new-token: 200, #cached-token: "
    "200, token usage: 0.25, #running-req: 1, #queue-req: 1, #pending-token: 0, cuda graph: "
    "False, input throughput (token/s): 100.00",
    "[2026-01-15 10:20:04 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, "
    "#new_tokens_gained: 100, #new_token_ratio: 0.4000 -> 0.5000",
    "[2026-01-15 10:20:04 TP0] Decode batch, #running-req: 2, #token: 900, token usage: 0.90, "
    "cuda graph: True, gen throughput (token/s): 50.00, #queue-req: 0",
    "[2026-01-15 10:20:06 TP0] Decode batch, #running-req: 2, #token: 950, token usage: 0.95, "
    "cuda graph: True, gen throughput (token/s): 50.00, #queue-req: 0",
]) + "\n"


def _records(text: str, engine: str, name: str) -> dict[str, list[dict]]:
    sha = hashlib.sha256(text.encode()).hexdigest()
    out: dict[str, list[dict]] = {}
    for rec in scan(io.BytesIO(text.encode()), name, engine=engine, year=2026):
        out.setdefault(rec["kind"], []).append({**rec, "engine": engine, "file": name,
                                                 "sha256": sha})
    return out


def _ingested(vllm_log: str = VLLM_NEW) -> Ingested:
    records: dict[str, list[dict]] = {}
    for kind, recs in [*_records(vllm_log, "vllm", "raw/vllm/server.log").items(),
                       *_records(SGLANG, "sglang", "raw/sglang/server.log").items()]:
        records.setdefault(kind, []).extend(recs)
    windows = [BenchWindow("vllm", "1k", "2026-01-15T10:10:05", "2026-01-15T10:10:55",
                           "run.yaml"),
               BenchWindow("sglang", "1k", "2026-01-15T10:19:59", "2026-01-15T10:20:07",
                           "run.yaml")]
    return Ingested(records=records, summaries=[], results=[], windows=windows)


def _run(yaml: str = FIXTURE) -> Run:
    return Run(paths=None, meta=parse_run_yaml(yaml, "run.yaml"))


def _figures(ing: Ingested) -> dict[str, Figure]:
    return {f.id: f for f in state.state_figures(_run(), ing)}


def test_series_has_one_row_per_stats_line_with_its_source_and_line():
    rows = state.state_series(_run(), _ingested())
    vllm = [r for r in rows if r["engine"] == "vllm"]
    sglang = [r for r in rows if r["engine"] == "sglang"]
    assert [(r["running"], r["waiting"], r["kv_usage"]) for r in vllm] == \
        [(1, 2, 0.05), (2, 1, 0.1), (3, 1, 0.405), (3, 0, 0.12), (0, 0, 0.0)]
    assert [(r["running"], r["waiting"], r["kv_usage"]) for r in sglang] == \
        [(0, 4, 0.1), (1, 1, 0.25), (2, 0, 0.9), (2, 0, 0.95)]
    assert {r["source"] for r in rows} == {state.LOG}
    assert [r["line"] for r in sglang] == [1, 2, 4, 5]
    assert rows == state.state_series(_run(), _ingested())        # deterministic


def test_time_queued_peak_and_counts_from_the_lines():
    figs = _figures(_ingested())
    # vLLM: waiting at 10:10:10, :20 and :30, none at :40 -> 30 s, lines 10 s apart
    assert figs[ids.state("1k", "vllm", "queued_s")].value == 30
    assert figs[ids.state("1k", "vllm", "line_spacing_s")].value == 10
    assert "resolved to the lines' spacing" in figs[ids.state("1k", "vllm", "queued_s")].method
    assert figs[ids.state("1k", "vllm", "preemptions")].value == 3
    # its first line (10:10:10) already shows 2 waiting, 5 s after the window's start
    # (10:10:05): up to 5 s more a request may have waited, uncounted
    assert figs[ids.state("1k", "vllm", "queued_lead_s")].value == 5
    # SGLang: waiting at 10:20:00 and :02, none at :04 -> 4 s; one retraction line of 2
    assert figs[ids.state("1k", "sglang", "queued_s")].value == 4
    assert figs[ids.state("1k", "sglang", "queued_lead_s")].value == 1   # 10:19:59 -> 10:20:00
    assert figs[ids.state("1k", "sglang", "retractions")].value == 2
    assert figs[ids.state("1k", "sglang", "retractions")].context["events"] == 1
    src = figs[ids.state("1k", "sglang", "queued_s")].sources[0]
    assert src.path == "raw/sglang/server.log" and src.lines == (1, 2, 4, 5)


def test_peak_waiting_peak_kv_and_hit_rate_come_from_the_existing_figures():
    from benchreport.analyses.arrival import engine_figures
    from benchreport.analyses.cache import cache_figures

    ing = _ingested()
    cache = {f.id: f.value for f in cache_figures(_run(), ing)}
    assert cache[ids.cache("1k", "vllm", "kv_usage_peak_pct")] == 40.5
    assert cache[ids.cache("1k", "sglang", "kv_usage_peak_pct")] == 95.0
    assert cache[ids.cache("1k", "sglang", "prefix_hit_pct")] == pytest.approx(30.0)
    waiting = {f.id: f.value for f in engine_figures(ing, "vllm", "1k")}
    assert waiting[ids.arrival("1k", "vllm", "max_waiting")] == 2


def test_peak_kv_usage_shows_no_more_digits_than_the_log_printed():
    """SGLang prints token usage to two decimals of a fraction (0.95): 95%, not 95.0%;
    vLLM prints a percentage to one decimal (40.5%)."""
    from benchreport.analyses.cache import cache_figures

    figs = {f.id: f for f in cache_figures(_run(), _ingested())}
    assert figs[ids.cache("1k", "sglang", "kv_usage_peak_pct")].decimals == 0
    assert figs[ids.cache("1k", "vllm", "kv_usage_peak_pct")].decimals == 1


def test_a_log_era_without_the_counter_gives_not_measured_never_zero():
    figs = _figures(_ingested(VLLM_OLD))
    fig = figs[ids.state("1k", "vllm", "preemptions")]
    assert fig.value == NOT_MEASURED and fig.unit == "verdict"
    assert figs[ids.state("1k", "vllm", "queued_s")].value == 0
    assert ids.state("1k", "vllm", "queued_lead_s") not in figs     # its first line: none


def test_a_newer_release_without_preemptions_counts_a_measured_zero():
    quiet = re.sub(r"Preemptions: 3, ", "", VLLM_NEW)
    assert _figures(_ingested(quiet))[ids.state("1k", "vllm", "preemptions")].value == 0


def _writer(value: float, provenance: str = "measured"):
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative_base import Writer

    fid = ids.cache("1k", "sglang", "prefix_hit_pct")
    fig = Figure(id=fid, value=value, unit="%", method="m", decimals=1,
                 provenance=provenance)
    return Writer(_run(), {fid: fig}, "en", load_catalogue(ROOT / "templates" / "labels",
                                                           "en")), fid


@pytest.mark.parametrize("value, key", [(0.0, "state.hit_none"), (1.4, "state.hit_some"),
                                        (49.9, "state.hit_some"), (50.0, "state.hit_most"),
                                        (92.0, "state.hit_most")])
def test_the_hit_rate_picks_its_sentence(value, key):
    from benchreport.publish.state import hit_key

    w, fid = _writer(value)
    assert hit_key(w, fid) == key


@pytest.mark.parametrize("value, key", [(0.0, "state.hit_none"), (93.1, "state.hit_rolling"),
                                        (1.4, "state.hit_rolling")])
def test_a_rolling_hit_rate_is_not_read_as_the_windows_own(value, key):
    """vLLM's rate covers its last ~1000 requests, earlier benchmarks included: only its 0
    says something of the window (none reused in the span means none in the window)."""
    from benchreport.publish.state import hit_key

    w, fid = _writer(value)
    w.registry[fid] = dataclasses.replace(w.registry[fid], context={"basis": "rolling"})
    assert hit_key(w, fid) == key


def test_a_hit_rate_the_generator_set_is_no_finding():
    from benchreport.publish.state import hit_key

    w, fid = _writer(0.0, "model-derived")
    assert hit_key(w, fid) == "state.hit_set"


# --- the hardware table ---------------------------------------------------------------

@pytest.mark.parametrize("model, name, tb_s", [
    ("NVIDIA B300", "NVIDIA B300", 8.0), ("B200", "NVIDIA B200", 8.0),
    ("NVIDIA GB200 NVL72", "NVIDIA GB200", 8.0), ("NVIDIA H200", "NVIDIA H200", 4.8),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM", 3.35), ("H100 SXM5", "NVIDIA H100 SXM", 3.35),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe", 2.0), ("NVIDIA H20", "NVIDIA H20", 4.0),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB SXM", 2.039),
    ("NVIDIA A100 80GB PCIe", "NVIDIA A100 80GB PCIe", 1.935),
    ("NVIDIA L40S", "NVIDIA L40S", 0.864),
    ("NVIDIA GB10 (DGX Spark), 121 GB unified memory", "NVIDIA GB10 (DGX Spark)", 0.273),
    ("GB10", "NVIDIA GB10 (DGX Spark)", 0.273), ("DGX Spark", "NVIDIA GB10 (DGX Spark)", 0.273),
    ("MI355X", "AMD Instinct MI355X", 8.0), ("AMD Instinct MI325X", "AMD Instinct MI325X", 6.0),
    ("amd mi300x", "AMD Instinct MI300X", 5.3),
])
def test_the_table_matches_gpu_names_as_run_yaml_writes_them(model, name, tb_s):
    gpu = hardware.lookup(model)
    assert gpu is not None and gpu.name == name and gpu.hbm_tb_s == tb_s
    assert gpu.source and gpu.memory_gb > 0


@pytest.mark.parametrize("model", ["Test GPU", "NVIDIA GB300", "NVIDIA A100 40GB",
                                   "NVIDIA H100 NVL", "MI300A", "", None])
def test_an_unknown_gpu_is_not_guessed(model):
    assert hardware.lookup(model) is None
    assert hardware.hbm_bandwidth(None, model) is None


def test_run_yaml_wins_over_the_table():
    bw = hardware.hbm_bandwidth(7.7, "NVIDIA B300")
    assert bw.tb_s == 7.7 and not bw.from_table
    bw = hardware.hbm_bandwidth(None, "NVIDIA B300")
    assert bw.tb_s == 8.0 and bw.from_table


def _step_yaml(gpu: str, hbm: str = "") -> str:
    from .test_stepmodel import _yaml

    text = _yaml([("short", 1000, 200, 4), ("long", 9000, 200, 4)], hbm=hbm)
    return text.replace("hardware:\n  gpus: 2\n", f"hardware:\n  gpus: 2\n  gpu_model: {gpu}\n")


@pytest.mark.parametrize("gpu, hbm, expect", [
    ("NVIDIA H100 PCIe", "", "table"), ("NVIDIA H100 PCIe", "  hbm_tb_s: 0.000001\n", "yaml"),
    ("Test GPU", "", "missing")])
def test_the_bound_takes_the_table_only_without_run_yaml(gpu, hbm, expect):
    from benchreport.analyses import stepmodel as sm

    run = _run(_step_yaml(gpu, hbm))
    bw = sm.hbm_of(run)
    if expect == "missing":
        assert bw is None and "hbm" in sm._missing(run, None, "vllm", [])
        return
    assert bw.from_table == (expect == "table")
    assert bw.tb_s == (2.0 if expect == "table" else 0.000001)
    from benchreport.core.methods import english

    words = english(sm._hbm_words(bw))
    prov = sm._hbm_provenance(bw)
    if expect == "table":
        assert "hardware table" in words and "not measured" in words
        assert prov["provenance"] == "assumed" and "hardware_table" in prov["provenance_why"]
    else:
        assert "run.yaml, declared" in words and prov == {}


# --- real logs --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def aiperf(aiperf_sample_build):
    from benchreport.pipeline.explain import registry_of

    run = aiperf_sample_build
    return run, {f.id: f for f in registry_of(run).values()}


@needs_samples
def test_the_aiperf_runs_state_comes_from_its_own_server_log(aiperf):
    """Read by hand from server.log inside the window 18:10:42-18:41:13 (grep and awk):
    890 Prefill/Decode batch lines; 539 Prefill lines with 8,335,360 new and 122,368
    cached tokens (1.4468%); the highest token usage 1.00 and #queue-req 12; 1,819 s from
    a line with #queue-req > 0 to the next; no Retract line."""
    from benchreport.core.tables import read_rows

    run, figs = aiperf
    w = next(f.context["workload"] for f in figs.values() if ids.family(f.id) == "state")
    hit = figs[ids.cache(w, "sglang", "prefix_hit_pct")]
    assert hit.context["cached"] == 122_368 and hit.context["computed"] == 8_335_360
    assert hit.value == pytest.approx(1.4468, abs=1e-4)
    assert hit.sources[0].path.endswith("server.log")
    assert figs[ids.cache(w, "sglang", "kv_usage_peak_pct")].value == 100.0
    assert figs[ids.arrival(w, "sglang", "max_waiting")].value == 12
    assert figs[ids.state(w, "sglang", "queued_s")].value == 1819
    assert figs[ids.state(w, "sglang", "retractions")].value == 0
    rows = [r for r in read_rows(run.paths.server_series) if r["source"] == "log"]
    assert len(rows) == 890 and all(r["file"].endswith("server.log") for r in rows)
    page = run.paths.html("en").read_text()
    assert "found part of its prompt tokens in its prefix cache" in page


@needs_samples
def test_the_dgx_runs_state_per_engine(dgx_build):
    from benchreport.pipeline.explain import registry_of

    run = dgx_build
    figs = {f.id: f for f in registry_of(run).values()}
    # vLLM 0.25.1 prints Preemptions when non-zero: a measured count; SGLang retractions
    counts = [f for f in figs.values() if ids.family(f.id) == "state"
              and ids.leaf(f.id) in ("preemptions", "retractions")]
    assert counts and all(isinstance(f.value, int) for f in counts)
    # read by hand: sglang-int4.log Prefill lines 367-374 (175 cached of 22,305 prompt
    # tokens) and vllm-int4.log's Engine line 321 (KV 2.1%, rolling hit rate 93.1%)
    w = "cold_prefill_2k"
    assert figs[ids.cache(w, "sglang", "prefix_hit_pct")].value == pytest.approx(0.7846, abs=1e-4)
    assert figs[ids.cache(w, "vllm", "prefix_hit_pct")].value == 93.1
    assert figs[ids.cache(w, "vllm", "kv_usage_peak_pct")].value == 2.1
    assert figs[ids.state(w, "vllm", "queued_s")].value == 0
    assert figs[ids.state(w, "vllm", "line_spacing_s")].value == 10


# --- one preemption count: the runtime-event rows follow the server state's rule ----------

# vLLM V0: a warning per preemption, which is no memory error
VLLM_V0 = "\n".join([
    "INFO 01-15 10:10:00 api_server.py:1] vLLM API server version 0.6.3",
    "INFO 01-15 10:10:10 metrics.py:345] Avg prompt throughput: 1.0 tokens/s, Avg generation "
    "throughput: 1.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache "
    "usage: 99.0%, CPU KV cache usage: 0.0%.",
    "WARNING 01-15 10:10:12 scheduler.py:1481] Sequence group 7 is preempted by "
    "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can "
    "affect the end-to-end performance. Increase gpu_memory_utilization or "
    "tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1",
    "INFO 01-15 10:10:20 metrics.py:345] Avg prompt throughput: 1.0 tokens/s, Avg generation "
    "throughput: 1.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache "
    "usage: 50.0%, CPU KV cache usage: 0.0%.",
]) + "\n"


def _events(vllm_log: str):
    from benchreport.analyses.caveats import event_caveats

    rows, figures = event_caveats(_run(), _ingested(vllm_log))
    return ({r.id: r for r in rows if r.engine == "vllm"},
            {f.id: f.value for f in figures if f.context.get("engine") == "vllm"})


@pytest.mark.parametrize("log, n", [(VLLM_NEW, 3), (VLLM_V0, 1)])
def test_the_event_rows_count_preemptions_as_the_server_state_does(log, n):
    rows, counts = _events(log)
    assert rows["event_preemption"].counts["n"] == n
    assert _figures(_ingested(log))[ids.state("1k", "vllm", "preemptions")].value == n
    # a V0 preemption warning is no memory error, and no events.* count of preemptions is
    # kept beside the state's (the one that knows when silence is not 0)
    assert counts[ids.events("1k", "vllm", "oom_errors")] == 0
    assert ids.events("1k", "vllm", "preemptions") not in counts


def test_a_silent_log_era_makes_no_preemption_row_and_no_zero():
    rows, counts = _events(VLLM_OLD)
    assert "event_preemption" not in rows
    assert ids.events("1k", "vllm", "preemptions") not in counts
    assert _figures(_ingested(VLLM_OLD))[ids.state("1k", "vllm", "preemptions")].value \
        == NOT_MEASURED
