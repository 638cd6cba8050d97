"""ITL as each client defines it: sglang.bench_serving's native backend records one entry per
token (each chunk's gap divided over the tokens it brought), vLLM one per chunk. The
reconstruction writes both as the real clients do; the report names each and never compares
the two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreport.core import ids
from benchreport.core.figures import load_registry
from benchreport.synth.model import Request
from benchreport.synth.results import ClientView, client_view

ROOT = Path(__file__).resolve().parent.parent


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_reference_sglang_files_hold_one_gap_per_token():
    for path in sorted((ROOT / "data/2024-b300/raw/sglang").glob("*.jsonl")):
        (rec,) = _records(path)
        assert rec["backend"] == "sglang"
        for out_len, gaps in zip(rec["output_lens"], rec["itls"], strict=True):
            assert len(gaps) == out_len - 1          # every token after the first has one


def test_the_reference_vllm_files_hold_one_gap_per_chunk():
    for path in sorted((ROOT / "data/2024-b300/raw/vllm").glob("*.json")):
        rec = json.loads(path.read_text())
        # speculative decoding: chunks carry several tokens, so fewer gaps than tokens
        assert sum(map(len, rec["itls"])) < sum(n - 1 for n in rec["output_lens"])


def test_a_chunk_gap_is_split_evenly_over_its_tokens():
    class TL:                                       # the two fields client_view reads
        start, end = 0.0, 10.0
        requests = [Request(index=0, arrival=0.0, input_len=8, output_len=6, generated=6,
                            chunk_times=[1.0, 1.3, 2.2], chunk_tokens=[1, 2, 3],
                            finish=2.2, sent=0.0)]

    v: ClientView = client_view(TL(), duration=10.0)
    assert v.itls == [[0.3, 0.9]]
    assert v.token_itls == [[0.15, 0.15, 0.3, 0.3, 0.3]]


@pytest.fixture(scope="module")
def registry(reference_build):
    return load_registry(reference_build.paths.figures_json)


def test_sglang_itl_is_per_token_and_not_compared_with_vllm(registry):
    for w in ("64k", "200k"):
        assert registry[ids.latency(w, "sglang", "itl", "mean")].context["definition"] == \
            "itl.per-token"
        assert registry[ids.latency(w, "vllm", "itl", "mean")].context["definition"] == \
            "itl.per-chunk"
        assert ids.latency_compare(w, "itl", "ratio") not in registry
        # TTFT is recomputed the same way for both, so it is still compared
        assert ids.latency_compare(w, "ttft", "ratio") in registry


def test_the_article_names_each_engines_itl(reference_build):
    html = (reference_build.paths.report / "report.en.html").read_text()
    assert "ITL (per token)" in html and "ITL (between streamed chunks)" in html
    # the reconstruction's long gaps are its model's, which the latency table's note says
    # once (the per-token sentence a measured run gets: test_sentences.py)
    assert "The gaps longer than the p99" not in html
    assert "The long gaps between SGLang&#39;s streamed chunks at 200K" not in html
    # the latency tables sit in the appendix whose opening says once what set them: no
    # note of their own; the per-point table says only which inputs set it
    assert html.count("In this reconstruction the values of this table come from the "
                      "generator&#39;s engine model") == 0
    assert html.count("The values of this table come from the generator&#39;s "
                      "engine model") == 1
    latency = html[html.index('<section id="latency">'):]
    latency = latency[:latency.index("</section>")]
    assert "Appendix: Latency" in latency and "values of this table" not in latency
    # a mean above its p99 is explained without stating the model's gaps as found, once
    # for every input length, after the note on how each client measures ITL
    assert html.count("a few gaps longer than the p99 pull the mean up") == 1
    assert "(vLLM at 64K; vLLM and SGLang at 200K)" in latency
    assert latency.index("pull the mean up") > latency.index("so the ITL rows do not compare")
    ko = (reference_build.paths.report / "report.ko.html").read_text()
    assert "ITL(토큰당)" in ko


@pytest.fixture(scope="module")
def glm(tmp_path_factory):
    """The real AIPerf run with the SGLang log of the same run (InferenceX harness)."""
    from tests.conftest import REAL_SAMPLES
    if not REAL_SAMPLES.is_dir():
        pytest.skip(f"no real samples at {REAL_SAMPLES}")
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.run import ingest_run
    from tests.test_windows import _glm_run

    tmp = tmp_path_factory.mktemp("glm")
    run_dir = _glm_run(tmp)
    run = load_run("glm", tmp / "data")
    return run, ingest_run(run), run_dir / "raw/sglang/server.log"


def test_a_log_inside_another_clients_benchmark_gives_server_figures(glm):
    """An AIPerf point is no vLLM/SGLang result, but its window in the SGLang log is found,
    so the log's own figures (prefill throughput, the decode phase) are made from it."""
    from benchreport.analyses.decode import decode_figures
    from benchreport.analyses.prefill import prefill_figures

    run, ing, log = glm
    assert ing.results == [] and ing.has_benchmark("sglang", "c16")
    prefill = {f.id: f for f in prefill_figures(run, ing)[0]}
    top = prefill[ids.prefill("c16", "sglang", "max")]
    lines = log.read_bytes().decode().split("\n")   # numbered by newlines, as the parsers do
    cited = [float(lines[n - 1].rsplit("input throughput (token/s): ", 1)[1].rstrip(", "))
             for n in top.sources[0].lines if "Prefill batch" in lines[n - 1]]
    assert top.value == max(cited) and len(cited) > 100
    steady = next(f for f in decode_figures(run, ing)[0]
                  if f.id == ids.decode("c16", "sglang", "steady"))
    # 16 requests in flight with prefill nearly always queued: no stretch of pure decode,
    # said so rather than a number from a mixed phase
    assert steady.value == "none" and "all 16 requests decoding" in steady.method
