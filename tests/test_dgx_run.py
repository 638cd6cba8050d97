"""The second reference run, a real A/B: vLLM 0.25.1 against SGLang 0.5.16 serving
Laguna-S-2.1-INT4 with DFlash on one DGX Spark (data/2026-08-dgx-spark-laguna/, MIT).

Built once per test session without PDFs (conftest.dgx_build, shared with test_server_state).
Every expected value was read from the raw files by
hand (line numbers of raw/<engine>/dgx-spark-laguna-vllm-vs-sglang/…), not from the code:

- ergebnisse_int4.json / ergebnisse_sglang.json: prosa_decode c=1 gesamt_tps 20.61 / 18.16,
  c=4 52.81 / 45.27 and ttft_s_median 0.513 / 0.193; prefill_8k_wiederholt c=4 39.49 / 70.58;
- prefill_*.json stage "8k": prefill_tps 2243 / 1686;
- vllm-int4.log: line 8 (non-default args: max_model_len 65536, max_num_seqs 32), line 100
  (GPU KV cache size: 950,420 tokens); prose c=4's window, lines 190-211 (212 starts the
  next): its Engine lines after the first (which reports the interval before the window's
  first request) generate 53.5 tok/s on average over four, and its SpecDecoding lines after
  the first accept 1,244 of 13,470 drafted over 15 positions: 1 + 1244 ÷ (13470 ÷ 15);
- sglang-int4.log: line 169 (max_total_num_tokens=185897), Prefill batch lines 374-386 of
  the cold 18K stage (138 cached of 55,976 prompt tokens: 0.2465%), line 186 the first
  Prefill batch of the first benchmark (its access line, 187, comes at the first token);
  Prefill batch lines 290-299 of prefill_8k c=1 (33,861 cached of 50,739 prompt tokens).
"""

from __future__ import annotations

import html
import json
import re

import pytest

from benchreport.pipeline.explain import registry_of


@pytest.fixture(scope="module")
def dgx(dgx_build):
    run = dgx_build
    figs = {f.id: f for f in registry_of(run).values()}
    claims = {c["claim"]: c for c in json.loads((run.paths.derived / "claims.json").read_text())}
    return run, figs, claims


def test_the_clients_figures_side_by_side(dgx):
    _, f, _ = dgx
    v = {k: x.value for k, x in f.items()}
    assert v["curve.prosa_decode.vllm.c1.output_throughput"] == 20.61
    assert v["curve.prosa_decode.sglang.c1.output_throughput"] == 18.16
    assert (v["curve.prosa_decode.vllm.c4.median_ttft_ms"],
            v["curve.prosa_decode.sglang.c4.median_ttft_ms"]) == (513.0, 193.0)
    assert round(v["compare.prosa_decode.vllm.sglang.c4.output_throughput"], 4) == \
        round(52.81 / 45.27, 4)
    assert v["point.vllm.cold_prefill_8k.c1.r1.input_throughput"] == 2243.0
    assert v["point.sglang.cold_prefill_8k.c1.r1.input_throughput"] == 1686.0


def test_the_log_wins_over_the_launch_script(dgx):
    run, f, _ = dgx
    assert f["setting.max_context.vllm"].value == "65536"
    assert (f["setting.max_sequences.vllm"].value, f["setting.max_sequences.sglang"].value) \
        == ("32", "48 (set by the engine)")
    caveats = json.loads((run.paths.derived / "caveats.json").read_text())
    page = (run.paths.report / "report.en.html").read_text()
    assert "262,144" in page and "start-vllm-int4.sh:33" in page
    differing = [c["id"] for c in caveats["differing"]]
    assert {"max_sequences", "kv_tokens", "kv_dtype", "memory", "draft_tokens"} <= \
        set(differing)
    assert "max_context" not in differing            # 65,536 on both, as the logs say
    launch = [c for c in caveats["differing"] if c["kind"] == "launch"]
    assert any("262144" in json.dumps(c) and "65536" in json.dumps(c) for c in launch)


def test_each_point_is_placed_by_its_request_count(dgx):
    run, _, _ = dgx
    windows = {w["point"]: w for w in json.loads(run.paths.windows_json.read_text())}
    first = windows["sglang.prosa_decode.c1.r1"]
    assert (first["first_line"], first["method"], first["level"]) == \
        (186, "request count", "point")
    assert (windows["sglang.cold_prefill_8k.c1.r1"]["first_line"],
            windows["sglang.cold_prefill_8k.c1.r1"]["last_line"]) == (374, 386)
    assert windows["vllm.prosa_decode.c1.r1"]["first_line"] == 163
    assert len(windows) == 28


def test_what_the_logs_say_per_point(dgx):
    _, f, _ = dgx
    assert f["point.vllm.prosa_decode.c4.r1.log_gen_tps"].value == pytest.approx(53.5)
    assert f["point.vllm.prosa_decode.c4.r1.log_accept_len"].value == \
        pytest.approx(1 + 1244 / (13470 / 15))
    hit = f["cache.cold_prefill_8k.sglang.prefix_hit_pct"]
    assert hit.value == pytest.approx(100 * 138 / 55976)
    assert hit.context["basis"] == "window"
    assert f["cache.cold_prefill_8k.vllm.prefix_hit_pct"].context["basis"] == "rolling"
    # the 17K prompt's first point: lines 290-299 (300 starts the next), the first request
    # cold and the two after it cached: 33,861 cached of 50,739 prompt tokens
    hit = f["point.sglang.prefill_8k.c1.r1.log_prefix_hit_pct"]
    assert (hit.value, hit.sources[0].lines[-1] < 300) == (pytest.approx(100 * 33861 / 50739),
                                                            True)


def test_the_claim_check_finds_which_kv_cache_figure_the_log_supports(dgx):
    _, f, claims = dgx
    assert f["limits.vllm.kv_capacity_tokens"].value == 950420
    assert f["limits.sglang.kv_capacity_tokens"].value == 185897
    assert claims["headline-kv-cache"]["verdict"] == "differs"
    assert claims["split-kv-cache"]["verdict"] == "confirmed"
    assert claims["headline-best-ttft"]["verdict"] == "confirmed"
    assert claims["lead-grows"]["verdict"] == "confirmed"
    # both engines cache prefixes (vLLM logs enable_prefix_caching=True): not what it says
    assert claims["radix-repeated-prefix"]["verdict"] == "differs"
    assert claims["split-cold-prefill"]["verdict"] == "confirmed"
    assert claims["same-requests"]["verdict"] == "not derivable"


def test_the_headline_compares_the_engines_and_names_what_differed(dgx):
    run, _, _ = dgx
    for lang, words in (("en", ("vLLM's output throughput measured", "Not controlled")),
                        ("ko", ("출력 처리량", "통제하지 못한 변수"))):
        page = (run.paths.report / f"report.{lang}.html").read_text()
        glance = html.unescape(re.sub(r"<[^>]+>", "",
                                      re.search(r'id="summary".*?</ul>', page, re.S)[0]))
        assert all(w in glance for w in words), (lang, glance[:400])
        assert "reconstruction" not in page.lower() and "재구성" not in page
