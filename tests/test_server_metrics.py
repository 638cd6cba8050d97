"""The server's /metrics in a run: window figures against the generator's truth, a counter
reset, and the client checked against the server (issue 16)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchreport.analyses.consistency import duration_checks, metric_checks
from benchreport.analyses.server import server_figures
from benchreport.cli import main
from benchreport.core import ids
from benchreport.core.verdicts import CONSISTENT, INCONSISTENT
from benchreport.ingest.io import load_run
from benchreport.ingest.run import ingest_run
from benchreport.pipeline.run import build
from benchreport.synth import make_run
from benchreport.synth.metrics import benchmark_truth

from .conftest import ROOT, builds_a_report

SCENARIO = ROOT / "tests" / "fixtures" / "scenarios" / "metrics.yaml"


def _generated(root: Path) -> list:
    (root / "report").mkdir(parents=True, exist_ok=True)
    return make_run(SCENARIO, root / "data" / "met")


def _truth(sims) -> dict[tuple[str, str], object]:
    engines = {s.engine.id: s.engine for s in sims}
    return {(t.workload, t.engine): t for e in engines.values()
            for t in benchmark_truth(e, sims)}


def _results(root: Path) -> dict[tuple[str, str], dict]:
    """(workload, engine) -> the client's totals, read from the generated result files."""
    out = {}
    for path in (root / "data" / "met" / "raw").rglob("*"):
        if path.suffix == ".json":
            doc = json.loads(path.read_text())
            wl = "4k" if doc["total_input_tokens"] == 4 * 4096 else "16k"
            out[(wl, "vllm")] = doc
        elif path.suffix == ".jsonl":
            doc = json.loads(path.read_text().splitlines()[0])
            wl = "4k" if doc["total_input_tokens"] == 4 * 4096 else "16k"
            out[(wl, "sglang")] = doc
    return out


@pytest.fixture(scope="module")
@builds_a_report
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("metrics")
    sims = _generated(root)
    run = build("met", data_root=root / "data", report_root=root / "report", project=ROOT,
                out=lambda line: None, pdf=False)
    return root, run, sims


def test_window_figures_match_the_truth(built):
    root, run, sims = built
    figures = {f["id"]: f for f in json.loads(run.paths.figures_json.read_text())["figures"]}
    truth, client = _truth(sims), _results(root)
    assert sorted(truth) == sorted(client) == [("16k", "sglang"), ("16k", "vllm"),
                                               ("4k", "sglang"), ("4k", "vllm")]
    for (wl, engine), t in truth.items():
        assert figures[ids.server(wl, engine, "generation_tokens")]["value"] == \
            t.generation_tokens == client[(wl, engine)]["total_output_tokens"]
        assert figures[ids.server(wl, engine, "prompt_tokens")]["value"] == \
            t.prompt_tokens == client[(wl, engine)]["total_input_tokens"]
    for wl in ("4k", "16k"):
        t = truth[(wl, "vllm")]
        assert t.spec_draft_tokens > 0
        assert figures[ids.server(wl, "vllm", "spec_acceptance_pct")]["value"] == \
            pytest.approx(100 * t.spec_accepted_tokens / t.spec_draft_tokens)
    assert figures[ids.server("4k", "vllm", "requests_finished")]["value"] == 4
    assert figures[ids.server("16k", "vllm", "requests_finished")]["value"] == 3
    assert figures[ids.server("4k", "vllm", "preemptions")]["value"] == 0
    # the counter window: from the last scrape before the token counters grew for the 4K
    # benchmark to the first after they stopped, whole seconds on vLLM's 1 s grid; it holds
    # the server's work, so the server's throughput is close to the client's 183.5 tok/s
    assert figures[ids.server("4k", "vllm", "interval_s")]["value"] == 2.0
    assert figures[ids.server("4k", "vllm", "throughput")]["value"] == pytest.approx(384 / 2.0)
    # gauges stay inside what the run allows: concurrency 2
    assert 1 <= figures[ids.server("4k", "vllm", "running_max")]["value"] <= 2
    assert 0 <= figures[ids.server("16k", "vllm", "kv_usage_max")]["value"] <= 100
    # latency from the server's histogram: with 3 requests, not a point interpolated inside a
    # bucket but the bucket itself, which holds the client's slowest TTFT (1,789 ms)
    p99 = figures[ids.server("16k", "vllm", "ttft_p99_ms")]
    assert p99["value"] == "1,000–2,500" and "fewer than 20" in p99["method"]
    slowest = 1000 * max(client[("16k", "vllm")]["ttfts"])
    assert 1000 < slowest <= 2500
    # every source that can be compared agrees: no warning, every check consistent
    checks = {f["id"]: f["value"] for f in figures.values()
              if f["id"].startswith("consistency.") and f["unit"] == "verdict"}
    # duration, counter span, tokens: 4 each; requests: vLLM's 2. Speculative acceptance is
    # not checked: in runs this short the log's first and last lines (which may reach outside
    # the benchmark) hold most of the drafting, so the two figures cannot test each other
    assert len(checks) == 4 + 4 + 4 + 2
    assert not any(".spec_acceptance" in c for c in checks)
    assert set(checks.values()) == {CONSISTENT}


def test_the_server_view_in_both_languages(built, capsys):
    root, run, _ = built
    en = run.paths.html("en").read_text()
    ko = run.paths.html("ko").read_text()
    # a reconstruction's analyses are appendices
    assert '<section id="server">' in en and re.search(r"<h2>(Appendix: )?Server view</h2>", en)
    assert re.search(r"<h2>(부록: )?서버 관점</h2>", ko)
    section = en[en.index('<section id="server">'):]
    section = section[:section.index("</section>")]
    assert "<svg" in section                              # KV and queue over time
    assert "TTFT p99 (bucket estimate)" in section
    row = re.search(r"<tr><td>vllm</td><td>4K</td>(.*?)</tr>", section).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    # a number and its unit are kept together by a no-break space
    texts = [re.sub(r"<[^>]+>", "", c) for c in cells]
    assert texts[2:6] == ["384\u00a0tokens", "2.0\u00a0s", "192.0\u00a0tok/s", "384\u00a0tokens"]
    assert main(["check", "met", "--data-root", str(root / "data")]) == 0
    assert capsys.readouterr().err == ""


def _copy(tmp_path: Path) -> Path:
    _generated(tmp_path)
    return tmp_path


def test_a_counter_reset_is_never_differenced(tmp_path):
    root = _copy(tmp_path)
    prom = root / "data" / "met" / "raw" / "vllm" / "metrics.prom"
    text = prom.read_text()
    # a restart at the third scrape after the 16k benchmark started: its counters fall back
    parts = re.split(r"(?m)^(?=# scrape )", text)
    head = [p for p in parts if p.startswith("# scrape 2026-03-01T09:10:1")]
    victim = head[2]
    reset = re.sub(r"(?m)^(vllm:generation_tokens_total\{[^}]*\}) (\S+)$", r"\1 3.0", victim)
    assert reset != victim
    prom.write_text(text.replace(victim, reset))
    run = load_run("met", root / "data", root / "report")
    ing = ingest_run(run)
    figures, _ = server_figures(run, ing)
    by_id = {f.id: f for f in figures}
    gen = by_id[ids.server("16k", "vllm", "generation_tokens")]
    assert gen.value is None and gen.context["status"] == "reset"
    assert "the server restarted; not differenced" in gen.method
    assert ids.server("16k", "vllm", "throughput") not in by_id
    # the other benchmark, before the restart, is differenced as before
    assert by_id[ids.server("4k", "vllm", "generation_tokens")].value == 384
    # no token check where the counter cannot be differenced: no false alarm
    names = {(c.workload, c.engine, c.name) for c in metric_checks(run, ing)}
    assert ("16k", "vllm", "output_tokens") not in names
    assert ("4k", "vllm", "output_tokens") in names


def test_a_duration_longer_than_the_scrapes_around_it_is_flagged(tmp_path, capsys):
    root = _copy(tmp_path)
    result = next((root / "data" / "met" / "raw" / "vllm").glob("*091002.json"))
    doc = json.loads(result.read_text())
    assert doc["total_input_tokens"] == 4 * 4096
    result.write_text(result.read_text().replace(f'"duration": {doc["duration"]}',
                                                 '"duration": 9.0'))
    run = load_run("met", root / "data", root / "report")
    ing = ingest_run(run)
    checks = {(c.workload, c.engine, c.name): c for c in
              duration_checks(run, ing) + metric_checks(run, ing)}
    span = checks[("4k", "vllm", "metrics_span")]
    assert span.status == INCONSISTENT and span.client == 9.0
    # vLLM's 1 s grid: the counters grew over a few whole seconds around the 2.1 s benchmark,
    # so the longest the server can have worked is far below the 9.0 s claimed
    assert span.server + span.tolerance - 2.0 <= 3.0
    assert checks[("4k", "vllm", "duration")].status == INCONSISTENT
    assert checks[("16k", "vllm", "metrics_span")].status == CONSISTENT
    assert main(["check", "met", "--data-root", str(root / "data")]) == 0
    err = capsys.readouterr().err
    assert "the client's duration (9.0 s) disagrees with vllm's /metrics " \
           "data/met/raw/vllm/metrics.prom" in err
    shutil.rmtree(root / "data")


def test_one_file_per_scrape_with_its_time_in_run_yaml(tmp_path):
    """Scrapes saved one per file, with nothing in them or their names saying when: run.yaml
    gives the times, and the window figures are the same as from the concatenated file."""
    root = _copy(tmp_path)
    folder = root / "data" / "met" / "raw" / "vllm"
    text = (folder / "metrics.prom").read_text()
    parts = [p for p in re.split(r"(?m)^(?=# scrape )", text) if p.strip()]
    (folder / "metrics.prom").unlink()
    times = {}
    (folder / "scrapes").mkdir()
    for i, part in enumerate(parts):
        stamp, body = part.split("\n", 1)
        name = f"scrapes/s{i:03d}.prom"
        (folder / name).write_text(body)
        times[name] = stamp.removeprefix("# scrape ").strip()
    run_yaml = root / "data" / "met" / "run.yaml"
    run_yaml.write_text(run_yaml.read_text() + "scrapes:\n  vllm:\n" + "".join(
        f"    {name}: '{when}'\n" for name, when in times.items()))
    run = load_run("met", root / "data", root / "report")
    assert run.meta.scrapes["vllm"]["scrapes/s000.prom"] == times["scrapes/s000.prom"]
    ing = ingest_run(run)
    figures = {f.id: f for f in server_figures(run, ing)[0]}
    assert figures[ids.server("4k", "vllm", "generation_tokens")].value == 384
    assert figures[ids.server("16k", "vllm", "generation_tokens")].value == 192
    assert {c.status for c in metric_checks(run, ing) if c.engine == "vllm"} == {CONSISTENT}


def test_speculative_acceptance_from_the_log_against_the_counters(tmp_path, monkeypatch):
    """In a run this short the edge lines of the log hold most of the drafting, so the check
    is made only when allowed to be wide; then tripling the accepted-token counter's growth
    (a server of another run) is caught, and the unchanged run is not."""
    import benchreport.analyses.consistency as consistency

    monkeypatch.setattr(consistency, "SPEC_TESTABLE_PP", 100.0)
    root = _copy(tmp_path)
    run = load_run("met", root / "data", root / "report")
    checks = {(c.workload, c.name): c for c in metric_checks(run, ingest_run(run))
              if c.engine == "vllm"}
    spec = checks[("16k", "spec_acceptance")]
    assert spec.status == CONSISTENT and spec.server == pytest.approx(100 * 70 / 357)
    prom = root / "data" / "met" / "raw" / "vllm" / "metrics.prom"
    lines = prom.read_text().splitlines(keepends=True)
    base = None
    for i, line in enumerate(lines):
        if line.startswith("vllm:spec_decode_num_accepted_tokens_total{"):
            name, value = line.rsplit(" ", 1)
            base = float(value) if base is None else base
            lines[i] = f"{name} {base + 3 * (float(value) - base)}\n"   # grows three times as fast
    prom.write_text("".join(lines))
    checks = {(c.workload, c.name): c for c in metric_checks(run, ingest_run(run))
              if c.engine == "vllm"}
    assert checks[("16k", "spec_acceptance")].status == INCONSISTENT


def test_the_bucket_a_quantile_falls_in():
    from benchreport.analyses.server import rank_bucket

    buckets = {0.1: 2.0, 0.5: 7.0, 1.0: 9.0, float("inf"): 10.0}     # cumulative
    assert rank_bucket(buckets, 0.5) == (0.1, 0.5)       # rank 5: between 2 and 7
    assert rank_bucket(buckets, 0.9) == (0.5, 1.0)       # rank 9
    assert rank_bucket(buckets, 0.99) == (1.0, 1.0)      # rank 9.9: the +Inf bucket
    assert rank_bucket(buckets, 0.1) == (0.0, 0.1)
