"""Generated Prometheus /metrics scrapes with known truth (issue 16).

The generator writes raw/<engine>/metrics.prom for the engines of
fixtures/scenarios/metrics.yaml. The checks read it back with the package's Prometheus
parser and compare it with what other sources say independently: the scenario file (read
with plain yaml), the client result files (plain json) and the server logs (the KV
capacity). Token totals are also worked out by hand from the workloads in the comments.
"""

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchreport.core.errors import ConfigError
from benchreport.ingest.parsers.prometheus import (
    counter_delta,
    histogram_delta,
    parse_scrapes,
)
from benchreport.synth import generate, load_scenario, make_run, metrics_truth
from benchreport.synth.metrics import LEAD_S

SCENARIOS = Path(__file__).parent / "fixtures" / "scenarios"
METRICS = SCENARIOS / "metrics.yaml"
SMALL = SCENARIOS / "small.yaml"
DOC = yaml.safe_load(METRICS.read_text())
T = dt.datetime.fromisoformat

# engine -> (metric prefix, running gauge, waiting gauge, KV gauge)
NAMES = {"vllm": ("vllm:", "vllm:num_requests_running", "vllm:num_requests_waiting",
                  "vllm:kv_cache_usage_perc"),
         "sglang": ("sglang:", "sglang:num_running_reqs", "sglang:num_queue_reqs",
                    "sglang:token_usage")}
# Per workload, by hand from the scenario: num_prompts x input_len, num_prompts x output_len.
TOKENS = {"4k": (4 * 4096, 4 * 96), "16k": (3 * 16384, 3 * 64)}     # 16384/384, 49152/192


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    run = tmp_path_factory.mktemp("data") / "metrics"
    return run, make_run(METRICS, run)


def scrapes(run, engine):
    path = run / "raw" / engine / "metrics.prom"
    return parse_scrapes(path.read_text(encoding="utf-8"), str(path))


def results(run, engine):
    """workload -> the client's result record, matched by its input length."""
    by_len = {w["input_len"]: wid for wid, w in DOC["workloads"].items()}
    out = {}
    for path in sorted((run / "raw" / engine).glob("*.json*")):
        d = json.loads(path.read_text().splitlines()[0])
        out[by_len[d["input_lens"][0]]] = d
    return out


def windows(run, engine):
    """workload -> (start from the scenario, start + the client's duration)."""
    res = results(run, engine)
    return {w: (r["start"], r["start"] + dt.timedelta(seconds=res[w]["duration"]))
            for w, r in DOC["engines"][engine]["runs"].items()}


def bracket(scs, start, end):
    before = [s for s in scs if s.time < start][-1]
    after = [s for s in scs if s.time > end][0]
    return before, after


def value(scrape, name, **labels):
    (s,) = scrape.select(name, labels)
    return s.value


def test_only_engines_with_the_key_write_metrics(generated):
    run, _ = generated
    names = sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file())
    assert [n for n in names if n.endswith(".prom")] == ["raw/sglang/metrics.prom",
                                                         "raw/vllm/metrics.prom"]
    assert len(names) == 1 + 2 * (2 + 3)      # run.yaml; per engine 2 results, log, launch, prom


def test_scenarios_without_the_key_write_no_metrics(tmp_path, project):
    # The reference run: its raw files regenerate byte for byte (tests/test_synth.py checks
    # the exact file set), and neither its scenario nor its committed files have metrics.
    reference = load_scenario(project / "data/2024-b300/scenario.yaml")
    assert [e.metrics for e in reference.engines] == [None, None]
    assert not list((project / "data/2024-b300/raw").rglob("*.prom"))
    written = generate(SMALL, tmp_path / "small")
    assert len(written) == 8 and not list((tmp_path / "small").rglob("*.prom"))


@pytest.mark.parametrize("engine, interval, first", [
    # vLLM: ready at 09:00:00 + 60 s, grid every 1 s; the first benchmark starts 09:10:00,
    # the scrapes LEAD_S (5 s) before it.
    ("vllm", 1.0, "2026-03-01T09:09:54"),
    # SGLang: ready at 10:00:50.3, so the grid starts 10:00:51 and runs every 0.5 s.
    ("sglang", 0.5, "2026-03-01T10:09:54.500"),
])
def test_scrape_count_and_times(generated, engine, interval, first):
    run, _ = generated
    assert DOC["engines"][engine]["metrics"] == {"interval_s": interval}
    text = (run / "raw" / engine / "metrics.prom").read_text()
    separators = re.findall(r"^# scrape (\S+)$", text, flags=re.MULTILINE)
    assert separators[0] == first
    scs = scrapes(run, engine)
    assert len(scs) == len(separators)
    assert all(s.time_from == "separator" for s in scs)
    times = [s.time for s in scs]
    assert times[0] == T(first)
    step = dt.timedelta(seconds=interval)
    assert all(b - a == step for a, b in zip(times, times[1:], strict=False))
    wins = windows(run, engine)
    start = min(w[0] for w in wins.values())
    end = max(w[1] for w in wins.values())
    lead = dt.timedelta(seconds=LEAD_S)
    assert times[0] < start - lead <= times[0] + step    # LEAD_S before the first
    assert times[-1] - step <= end + lead < times[-1]    # and after the last
    assert len(scs) == (times[-1] - times[0]) / step + 1
    for s, e in wins.values():                           # each benchmark is bracketed
        assert any(t < s for t in times) and any(t > e for t in times)
    if engine == "vllm":                                 # whole seconds print without a fraction
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", x) for x in separators)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_token_deltas_around_each_benchmark_equal_the_client_totals(generated, engine):
    run, _ = generated
    scs = scrapes(run, engine)
    prefix = NAMES[engine][0]
    res = results(run, engine)
    for workload, (start, end) in windows(run, engine).items():
        before, after = bracket(scs, start, end)
        r = res[workload]
        gen = counter_delta(before, after, prefix + "generation_tokens_total")
        prompt = counter_delta(before, after, prefix + "prompt_tokens_total")
        assert gen.reason is None and prompt.reason is None
        assert gen.value == sum(r["output_lens"]) == r["total_output_tokens"]
        assert prompt.value == sum(r["input_lens"]) == r["total_input_tokens"]
        assert (prompt.value, gen.value) == TOKENS[workload]
        n = r["completed"]
        for hist in ("time_to_first_token_seconds", "e2e_request_latency_seconds"):
            assert counter_delta(before, after, f"{prefix}{hist}_count").value == n
            buckets = histogram_delta(before, after, prefix + hist).value
            assert buckets[-1] == (float("inf"), n)
        if engine == "vllm":
            success = counter_delta(before, after, "vllm:request_success_total")
            assert success.value == n == len(r["output_lens"])
            assert counter_delta(before, after, "vllm:request_success_total",
                                 {"finished_reason": "length"}).value == n
            assert counter_delta(before, after, "vllm:num_preemptions_total").value == 0
            drafts = counter_delta(before, after, "vllm:spec_decode_num_drafts_total").value
            assert drafts == r["spec_decode_num_drafts"]
            assert counter_delta(before, after, "vllm:spec_decode_num_draft_tokens_total"
                                 ).value == r["spec_decode_draft_tokens"] == 3 * drafts
            assert counter_delta(before, after, "vllm:spec_decode_num_accepted_tokens_total"
                                 ).value == r["spec_decode_accepted_tokens"]
            per_pos = [counter_delta(before, after,
                                     "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                                     {"position": str(p)}).value for p in range(3)]
            assert [a / drafts for a in per_pos] == pytest.approx(
                r["spec_decode_per_position_acceptance_rates"], abs=1e-12)


def test_truth_api_names_the_bracketing_scrapes_and_the_deltas(generated):
    run, sims = generated
    truth = metrics_truth(load_scenario(METRICS), sims)
    assert [(t.engine, t.workload) for t in truth] == [
        ("vllm", "4k"), ("vllm", "16k"), ("sglang", "4k"), ("sglang", "16k")]
    for t in truth:
        start, end = windows(run, t.engine)[t.workload]
        assert t.start == start and abs(t.end - end) < dt.timedelta(microseconds=1)
        before, after = bracket(scrapes(run, t.engine), start, end)
        assert (t.before, t.after) == (before.time, after.time)
        r = results(run, t.engine)[t.workload]
        assert (t.prompt_tokens, t.generation_tokens, t.requests) == (
            r["total_input_tokens"], r["total_output_tokens"], r["completed"])
        if t.engine == "vllm":
            assert (t.spec_drafts, t.spec_draft_tokens, t.spec_accepted_tokens) == (
                r["spec_decode_num_drafts"], r["spec_decode_draft_tokens"],
                r["spec_decode_accepted_tokens"])


def _kv_capacity(log: Path) -> int:
    text = log.read_text()
    m = re.search(r"GPU KV cache size: ([\d,]+) tokens", text) or \
        re.search(r"KV Cache is allocated\..*#tokens: (\d+)", text)
    return int(m.group(1).replace(",", ""))


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_gauges_stay_within_their_bounds(generated, engine):
    run, _ = generated
    scs = scrapes(run, engine)
    _, running, waiting, kv = NAMES[engine]
    concurrency = DOC["concurrency"]                                   # 2
    prompts = max(w["num_prompts"] for w in DOC["workloads"].values())  # 4
    seen = []
    for s in scs:
        r, w, u = value(s, running), value(s, waiting), value(s, kv)
        assert r == int(r) and w == int(w)
        assert 0 <= r <= concurrency and 0 <= w <= prompts and 0 <= u <= 1
        assert r + w <= concurrency          # the client keeps at most 2 requests in flight
        seen.append(r)
    assert max(seen) == concurrency          # the bound is reached, so it is no empty check
    for s in (scs[0], scs[-1]):              # idle before the first and after the last
        assert (value(s, running), value(s, waiting), value(s, kv)) == (0, 0, 0)
    if engine == "sglang":                   # usage = used tokens / the capacity it logged
        capacity = _kv_capacity(run / "raw/sglang/server.log")
        assert capacity == 25_690_112
        for s in scs:
            assert value(s, kv) == value(s, "sglang:num_used_tokens") / capacity
    else:
        assert _kv_capacity(run / "raw/vllm/server.log") == 3_211_264
        assert max(value(s, kv) for s in scs) > 0


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_counters_never_decrease(generated, engine):
    run, _ = generated
    scs = scrapes(run, engine)
    for a, b in zip(scs, scs[1:], strict=False):
        cumulative = [s for s in a.samples if s.type == "counter" or s.name.endswith(
            ("_bucket", "_count"))]
        assert cumulative
        assert {(s.name, tuple(sorted(s.labels.items()))) for s in a.samples} == \
            {(s.name, tuple(sorted(s.labels.items()))) for s in b.samples}
        for s in cumulative:
            assert b.get(s.name, s.labels).value >= s.value, (s.name, s.labels, a.time)
    prefix = NAMES[engine][0]
    total = counter_delta(scs[0], scs[-1], prefix + "generation_tokens_total").value
    assert total == sum(gen for _, gen in TOKENS.values())              # 384 + 192 = 576


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_parse_cli_reads_the_scrapes_as_metric_records(generated, project, engine):
    run, _ = generated
    path = run / "raw" / engine / "metrics.prom"
    out = subprocess.run([sys.executable, "-m", "benchreport", "parse", str(path), "--json"],
                         capture_output=True, text=True, cwd=project)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    text = path.read_text()
    samples = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert doc["engine"] == engine and doc["unrecognised"] == 0
    assert doc["counts"] == {"metric": len(samples)}
    assert all(r["kind"] == "metric" for r in doc["records"])
    assert {r["scrape"] for r in doc["records"]} == set(range(text.count("# scrape ")))
    first = doc["records"][0]
    assert first["ts"] == T(re.search(r"# scrape (\S+)", text).group(1)).isoformat()
    assert first["labels"]["model_name"] == ("tiny" if engine == "vllm" else "/models/tiny")
    if engine == "vllm":
        assert first["labels"]["engine"] == "0"


def _variant(tmp_path, edit):
    doc = yaml.safe_load(METRICS.read_text())
    edit(doc)
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("metrics, message", [
    ({"interval_s": 0}, "interval_s must be at least 0.001 s"),
    ({"every": 5}, "unknown key 'every' in metrics"),
    ({"interval_s": "5s"}, "interval_s must be float"),
])
def test_bad_metrics_keys_are_refused_with_their_line(tmp_path, metrics, message):
    path = _variant(tmp_path, lambda d: d["engines"]["vllm"].update(metrics=metrics))
    with pytest.raises(ConfigError, match=message) as err:
        load_scenario(path)
    assert err.value.line is not None


def test_an_interval_that_brackets_no_benchmark_alone_is_refused(tmp_path):
    # the vLLM runs start 10 s apart: a 20 s grid cannot fall between them
    path = _variant(tmp_path, lambda d: d["engines"]["vllm"].update(metrics={"interval_s": 20}))
    with pytest.raises(ConfigError, match="no scrape between benchmark 4k"):
        generate(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()             # refused before writing anything
