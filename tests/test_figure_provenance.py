"""Every figure knows where it comes from (core.provenance): measured, calibrated, assumed,
model-derived or free, computed from others as the weakest of its inputs; and the
reference run's sentences say no more than that."""

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from benchreport.core.errors import ConfigError
from benchreport.core.figures import Figure
from benchreport.core.provenance import (
    ASSUMED,
    CALIBRATED,
    FREE,
    KINDS,
    MEASURED,
    MODEL,
    Rule,
    assign,
    origins,
    weakest,
)
from benchreport.pipeline.explain import explain, registry_of


def _fig(fid: str, *deps: str, **ctx) -> Figure:
    return Figure(id=fid, value=1.0, unit="s", method="m", depends_on=deps, context=ctx)


def test_a_figure_takes_its_rule_else_the_weakest_of_its_inputs_else_the_default():
    reg = {f.id: f for f in (_fig("e2e.a.duration"), _fig("decode.a.mean"),
                             _fig("e2e.a.speedup", "e2e.a.duration"),
                             _fig("model.x", "e2e.a.speedup", "decode.a.mean"),
                             _fig("latency.a.ttft"))}
    rules = [Rule("e2e.*.duration", CALIBRATED, "target duration"),
             Rule("decode.*", FREE, "seed 7")]
    out = assign(reg, rules, MODEL, "the model")
    assert out["e2e.a.duration"].provenance == CALIBRATED
    assert out["e2e.a.speedup"].provenance == CALIBRATED           # from calibrated only
    assert out["model.x"].provenance == FREE                        # the weakest input
    assert out["model.x"].provenance_why == "@weakest | figures=decode.a.mean"
    assert out["latency.a.ttft"].provenance == MODEL
    assert out["latency.a.ttft"].provenance_why == "the model"
    # a real run: nothing named, everything measured
    assert {f.provenance for f in assign(reg, [], MEASURED).values()} == {MEASURED}
    # what set a free figure, followed through the figures it was computed from
    assert origins(out, ["model.x"], FREE) == ["seed 7"]
    assert weakest([MEASURED, ASSUMED, CALIBRATED]) == ASSUMED


def test_a_floor_weakens_but_never_strengthens_and_context_narrows_a_rule():
    reg = {f.id: f for f in (_fig("point.p1.duration", engine="vllm"),
                             _fig("point.p2.duration", engine="sglang"),
                             _fig("e2e.a.gap", "point.p1.duration"))}
    rules = [Rule("point.*.duration", CALIBRATED, "target", (("engine", "vllm"),)),
             Rule("e2e.a.gap", ASSUMED, "arrival spacing", floor=True),
             Rule("point.*", ASSUMED, "stated", floor=True)]
    out = assign(reg, rules, MEASURED)
    assert out["point.p1.duration"].provenance == ASSUMED    # the floor weakens calibrated
    assert out["point.p2.duration"].provenance == ASSUMED    # no rule: measured, floored
    assert out["e2e.a.gap"].provenance == ASSUMED
    # a figure computed with its provenance keeps it (a generator input states its own)
    given = {"g.x": replace(_fig("g.x"), provenance=FREE, provenance_why="seed")}
    assert assign(given, [Rule("g.*", CALIBRATED, "no")], MODEL)["g.x"].provenance == FREE
    with pytest.raises(ValueError, match="unknown provenance"):
        Rule("x", "guessed", "")


def test_every_reference_figure_has_a_provenance_and_explain_prints_it(reference_build):
    figs = registry_of(reference_build)
    kinds = {fid: f.provenance for fid, f in figs.items()}
    assert set(kinds.values()) <= set(KINDS) and all(kinds.values())
    # what the scenario fitted, copied, assumed, modelled and drew
    assert kinds["e2e.64k.vllm.duration"] == CALIBRATED           # target duration 100.5
    assert kinds["e2e.64k.speedup"] == CALIBRATED
    assert kinds["decode.64k.vllm.min"] == CALIBRATED             # steady_min 439
    assert kinds["decode.64k.vllm.mean"] == FREE                  # no mean target at 64K
    assert kinds["decode.200k.vllm.mean"] == CALIBRATED           # steady_mean 163
    assert kinds["decode.64k.sglang.mean_of_lines"] == CALIBRATED  # steady_mean 335
    assert kinds["decode.64k.sglang.mean"] == FREE                # token-weighted: seeded
    assert kinds["decode.degradation.vllm.mean_over_mean"] == FREE
    assert kinds["model.crossover.sglang.vllm"] == FREE
    assert kinds["spec.64k.sglang.accept_len"] == ASSUMED         # accept_prob 0.06
    assert kinds["setting.memory.sglang"] == ASSUMED              # run.yaml: assumed 0.88
    assert kinds["setting.dcp.sglang"] == CALIBRATED              # the published --dcp-size
    assert kinds["limits.kv_capacity_ratio.sglang.vllm"] == ASSUMED
    assert kinds["latency.64k.vllm.ttft.median"] == MODEL
    assert kinds["generator.decode_step"] == MODEL and kinds["generator.seed"] == FREE
    assert figs["decode.64k.vllm.mean"].provenance_why == "seed 20261120"
    lines: list[str] = []
    explain(reference_build, "e2e.64k.speedup", lines.append)
    assert "  provenance: calibrated (the weakest of its inputs: e2e.64k.vllm.duration, " \
        "e2e.64k.sglang.duration)" in lines
    assert "    provenance: calibrated (target duration 100.5 s)" in lines


def test_no_verdict_on_calibrated_or_assumed_inputs_is_evidence(reference_build):
    claims = json.loads(reference_build.paths.claims_json.read_text(encoding="utf-8"))
    basis = {c["claim"]: c["basis"] for c in claims}
    assert basis["e2e-64k-speedup"] == CALIBRATED
    assert basis["dspark-acceptance-low"] == ASSUMED
    # a verdict other than "confirmed" on calibrated figures is by construction too
    assert basis["only-engine-changed"] in (CALIBRATED, ASSUMED)
    assert basis["decode-degradation-vllm"] == FREE
    assert basis["dcp-cause"] == ""                              # not derivable
    assert MEASURED not in basis.values()
    figs = registry_of(reference_build)
    assert figs["claims.informative"].value == 0
    raw = reference_build.paths.html("en").read_text(encoding="utf-8")
    assert "None of the 33 verdicts rests on a measured figure" in html.unescape(raw)
    # each verdict's basis, as the claims table marks it
    asides = re.findall(r'<span class="aside">(evidence|by construction|the reconstruction'
                        r'&#39;s model)</span>', raw)
    assert "evidence" not in asides
    # but those the published figures alone decide (mixed bases, a value its own figures
    # do not give), which say so instead
    published = set(figs["claims.mixed"].context["claims"]) | \
        set(figs["claims.differs_published"].context["claims"])
    assert figs["claims.differs_published"].context["claims"] == ["summary-throughput-decline"]
    assert asides.count("by construction") == sum(
        b in (CALIBRATED, ASSUMED) for c, b in basis.items() if c not in published) > 0


def _page(run, lang: str = "en") -> str:
    text = run.paths.html(lang).read_text(encoding="utf-8")
    text = re.sub(r"<(script|style|svg)[^>]*>.*?</\1>", "", text, flags=re.S)
    text = re.sub(r"</?(a|code|sup|span)\b[^>]*>", "", text)   # links, code, tags read inline
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def test_no_sentence_states_a_finding_from_what_the_generator_drew(reference_build):
    page = _page(reference_build)
    # the findings the seed and the engine model produced are gone ...
    for finding in ("Per request, vLLM decodes faster at 64K", "fell by 3.02×",
                    "even closer to proportional", "Of that gap, 22.2 s",
                    "their decode speeds are equal at about", "The gaps longer than the p99"):
        assert finding not in page, finding
    # ... and say what set them instead
    assert "Where, in the reconstruction, the engine that decodes one request faster " \
        "changes between the two input lengths (each is the faster at one of them): set by " \
        "the generator's random seed (seed 20261120)" in page
    # which engine decodes faster restates the published ranges: no longer put on the seed
    assert "Which engine decodes faster" not in page
    assert "How far the steady decode throughput of vLLM and SGLang fell from 64K to 200K: " \
        "set by the generator's random seed" in page
    # the decode table's extremes are the published targets, the rest the seed's
    assert "the minima and maxima of this table, and any mean the published text gives, " \
        "are the published targets the generator was fitted to; the other values come " \
        "from the generator's random seed (seed 20261120)" in page
    # the published per-chunk sequence is the generator's input curve: restated
    assert "the first request's full prefill chunks reproduce the published sequence" in page
    assert "full prefill chunks ran at" not in page
    # the checks of a reconstruction's points read files the generator wrote
    assert "In this reconstruction the generator wrote the result files these checks read" \
        in page
    # a claim reason does not weigh where the generator put the events as evidence
    assert "a cold start explains them as well as the stated cause" not in page
    assert "In this reconstruction the generator placed the events in the first steps" in page
    # the differing settings whose values were assumed are no count of findings: the
    # headline gives what the detailed post says differed, and that the rest was assumed
    assert "Not controlled: the detailed post states that the engines did not run alike " \
        "(in gist: It was not a controlled A/B test; DCP, memory allocation, kernel backends " \
        "and acceptance criteria differed). Values it does not give the reconstruction " \
        "assumed" in page.split("At a glance")[2].split("Test setup")[0]
    assert "Decode context parallel size (assumed)" not in page
    # where the events fell and what they cost is the generator's input; the FP8 argument
    # and the non-adaptive verification line rest on what it wrote
    assert "In this reconstruction the generator put the events in the first requests' " \
        "prefill steps (assumed)" in page
    assert "The events ran while the first requests were prefilling" not in page
    assert "FP8 KV for both engines is assumed too" in page
    assert "so the settings table shows '–' for vLLM's KV-cache data type): the " \
        "reconstruction filled in its start-up lines to agree with it" in page
    assert "the SGLang log's non-adaptive verification line is one the reconstruction wrote " \
        "after the published text" in page
    # the event rows restate the published counts, without the times the generator placed
    # them at (the eleventh editor read)
    assert "32 retries on 8 workers (calibrated)" in page and "10:12:05–10:12:24" not in page
    # hit rates and KV usage rest on what the generator filled in
    assert "In this reconstruction the prefix-cache hit rates and KV-cache usage are not " \
        "measurements: the generator filled in the cached tokens and the KV capacity its logs " \
        "print" in page
    # a capacity the reconstruction filled in says so beside the conclusion it allows
    assert "with the capacities this reconstruction filled in (assumed), both engines " \
        "hold it" in page
    # SGLang's fixed step above the bandwidth bound is the generator's constant, not an
    # overhead found; the acceptance in the per-point log section is an input too
    assert "in this reconstruction that excess is the generator's decode_step_fixed_ms, " \
        "not a measured cost of compute or communication" in page
    assert "the time left after the weight reads goes to" not in page
    # in full once (the spec section), then short (the point log)
    assert page.count("In this reconstruction the acceptance is an input of the generator") == 1
    assert page.count("Here too the acceptance lengths and rates follow from the acceptance "
                      "probability given to the generator") == 1
    # one assumed prefill curve for both engines: their prefill agrees by design
    # (the scenario's keys in words: the generator appendix keeps the keys themselves)
    assert "In this reconstruction every engine prefills on one assumed curve " \
        "(prefill speed curve × per-engine prefill speed, prefill slowdown at long context)" \
        in page
    figs = registry_of(reference_build)
    assert figs["prefill.200k.vllm.mean"].provenance == ASSUMED
    assert figs["cache.64k.vllm.kv_usage_peak_pct"].provenance == ASSUMED   # KV capacity
    # what the published text fixed still reads as a result
    assert "That makes vLLM 1.50× as fast on this workload (see Figure 1)." in page
    ko = _page(reference_build, "ko")
    assert "생성기의 난수 시드(seed 20261120)에 따라 정해졌습니다" in ko
    assert "재구성본을 맞춘 공개 수치" not in ko        # the fit ran the other way


def test_the_headline_and_sglangs_64k_rows_carry_how_requests_arrived(reference_build):
    page = _page(reference_build)
    glance = page.split("At a glance")[2].split("Test setup")[0]
    # the spacing is the generator's fit, and why it needed one is what it tells the reader:
    # the time the published steady rates leave unexplained (analyses.pubbudget), not the
    # time the reconstruction's seed-drawn rates leave (the tenth editor read)
    assert "At SGLang's steady rates as the detailed post gives them (prefill 19,000 tok/s " \
        "to 23,000 tok/s, a decode mean of 335 tok/s), 10 requests received at once (65,536 " \
        "tokens in and 3,072 tokens out each), prefilled and then decoded, take 120.2 s to " \
        "126.2 s: 24.6 s to 30.6 s less than the published 150.8 s. Where that time went, " \
        "the published texts do not say; the number of requests and their tokens are not in " \
        "them and were assumed, so the remainder rests on that assumption too." in glance
    assert "27.4 s" not in glance
    # the spacing the generator filled it with is the caveats table's, not the lede's
    assert "6.3 s apart" not in glance
    # how many waited at vLLM is the generator's output, not stated in the lede
    assert "waited at once at vLLM" not in glance
    # the spacing is said once: not again as a value the published text did not state
    assert "arrival spacing of SGLang's 64K requests, about 6.3 s" not in glance
    # the durations are the published targets: restated, not tested, said once for both
    assert glance.count("Every duration here is a published figure the reconstruction was "
                        "fitted to: this summary restates the published result") == 1
    # the latency tables are the generator's: in the latency appendix, not the results
    latency = page.split("Appendix: Latency")[2]
    results_64k = latency.split("Latency at 64K input")[1].split("Latency at 200K input")[0]
    # once, at SGLang's first row (TTFT), and not again as the spacing's assumption label
    assert results_64k.count("SGLang requests arrived spaced out") == 1
    assert "arrival spacing of SGLang's 64K requests" not in results_64k
    assert "vLLM requests arrived spaced out" not in results_64k
    caveats = page.split("What was not controlled")[2]
    # one row for both engines (the same why), each engine's value on a line of its own
    assert "How requests reached the engines, 64K" in caveats
    assert "SGLang: no request waiting on any line (0); the prefill of one newly arrived " \
        "request began every 6.3 s on average (calibrated)" in caveats
    figs = registry_of(reference_build)
    assert figs["arrival.64k.sglang.burst_gap_s"].provenance == CALIBRATED    # arrival_gap
    assert figs["arrival.64k.sglang.burst_gap_s"].provenance_why == \
        "@fitted_duration | knob=arrival_gap 6.3125 s"
    assert "vLLM: at most 8 requests waiting at once" in caveats
    # the lede says it at 64K, where the engines received the load differently; the
    # conclusion does not repeat the lede's per-workload results and their caveats
    conclusion = page.split("Conclusion")[-1].split("Appendix")[0]
    assert "received this workload's requests differently" not in conclusion
    assert "At 200K" not in conclusion
    # the caveat rows say the generator set it, not that the engines did
    assert caveats.count("in this reconstruction the requests reached them differently, as "
                         "the generator's model and its fitted spacing set it") == 1


def test_how_requests_arrived_is_read_off_the_logs(reference_build):
    """vLLM's 64K window: 'Waiting: 8 reqs' on its first stats line (server.log:43);
    SGLang's: '#queue-req: 0' on every line, and a burst of prefill after decode lines at
    14:05:13 (line 11) ... 14:06:10 (the tenth): 57 s over 9 gaps."""
    figs = registry_of(reference_build)
    assert figs["arrival.64k.vllm.max_waiting"].value == 8
    assert 43 in figs["arrival.64k.vllm.max_waiting"].sources[0].lines
    assert figs["arrival.64k.sglang.max_waiting"].value == 0
    gap = figs["arrival.64k.sglang.burst_gap_s"]
    lines = gap.sources[0].lines
    assert len(lines) == 10 and lines[0] == 11
    raw = (reference_build.paths.data / "raw" / "sglang" / "server.log").read_text(
        encoding="utf-8").splitlines()
    stamp = [re.match(r"\[\S+ (\d\d):(\d\d):(\d\d)", raw[n - 1]).groups() for n in lines]
    secs = [int(h) * 3600 + int(m) * 60 + int(s) for h, m, s in stamp]
    assert gap.value == pytest.approx((secs[-1] - secs[0]) / 9)
    assert all("Prefill batch" in raw[n - 1] and "Decode batch" in raw[n - 2]
               for n in lines[1:])
    # at 200K both engines queue requests: no row
    assert figs["arrival.200k.sglang.max_waiting"].value > 0
    assert "arrival.200k.sglang.burst_gap_s" not in figs


def test_the_assumed_section_lists_every_generator_input(reference_build):
    from benchreport.synth.scenario import generator_inputs, load_scenario

    scenario = load_scenario(reference_build.paths.data / "scenario.yaml")
    keys = [g.key for g in generator_inputs(scenario)]
    assert {"decode_step", "accept_prob", "fitted", "events", "prefill_speed", "scheduler",
            "client_tail", "seed"} <= set(keys)
    page = _page(reference_build)
    part = page.split("Appendix: the reconstruction generator's inputs")[2].split(
        "Appendix: how each number was derived")[0]
    assert "vLLM decode_step_fixed_ms 1.3, decode_ns_per_kv_token 30.4, dcp 1; SGLang " \
        "decode_step_fixed_ms 28.4, decode_ns_per_kv_token 38.7, dcp 8 (model-derived)" in part
    assert "SGLang 64K arrival_gap 6.3125" in part and "vLLM 64K event_scale 1.125" in part
    assert "vLLM 64K 0.06; vLLM 200K 0.02; SGLang 64K 0.06; SGLang 200K 0.02 (assumed)" in part
    # the step model fitted to the decode figures takes the weakest of them: vLLM's 64K
    # steady mean was drawn by the seed, so the fit is free; the generator's own is its model
    figs = registry_of(reference_build)
    assert figs["decode.64k.vllm.mean"].provenance == FREE
    assert figs["stepmodel.vllm.fixed_ms"].provenance == FREE
    assert figs["stepmodel.vllm.generator_fixed_ms"].provenance == MODEL
    assert figs["stepmodel.vllm.generator_fixed_ms"].provenance_why == \
        "decode_step_fixed_ms 1.3, decode_ns_per_kv_token 30.4"
    assert "The steady decode throughput of vLLM 64K, SGLang 64K, SGLang 200K is a mean the " \
        "seed drew between the published extremes" in page
    # the caveat tables mark what was assumed
    caveats = page.split("What was not controlled")[2].split("What the published text got")[0]
    assert "MoE backend FLASHINFER_CUTLASS (auto) (assumed) flashinfer_trtllm (assumed)" in \
        caveats
    assert "(8.00×) (assumed)" in caveats


def test_a_scenario_must_state_the_fitted_value_the_fit_finds():
    from benchreport.synth import _check_fitted
    from benchreport.synth.scenario import RunSpec

    spec = RunSpec.__new__(RunSpec)
    for k, v in {"engine": "sglang", "workload": "64k", "calibrate": "arrival_gap",
                 "fitted": 6.3125}.items():
        object.__setattr__(spec, k, v)
    _check_fitted(spec, 6.3125)
    with pytest.raises(ConfigError, match="states fitted arrival_gap 6.3125, but the fit "
                                          "finds 6.25"):
        _check_fitted(spec, 6.25)


def test_an_assumption_states_assumed_or_calibrated(project):
    from benchreport.core.runmeta import parse_run_yaml

    src = (project / "data" / "2024-b300" / "run.yaml").read_text(encoding="utf-8")
    bad = src.replace("    provenance: calibrated\n", "    provenance: guessed\n", 1)
    with pytest.raises(ConfigError, match="assumed\\[\\].provenance must be assumed or "
                                          "calibrated, got 'guessed'") as e:
        parse_run_yaml(bad, "run.yaml")
    assert e.value.line == bad.splitlines().index("    provenance: guessed") + 1


def test_the_generator_list_holds_the_clock_the_prefill_and_step_rules_and_each_runs_tail(
        reference_build):
    """The review's missing inputs, each with its value from the scenario or the fit."""
    from benchreport.synth.scenario import generator_inputs, load_scenario

    scenario = load_scenario(reference_build.paths.data / "scenario.yaml")
    got = {g.key: g for g in generator_inputs(scenario)}
    clock = dict(((e, w), text) for e, w, text in got["clock"].parts)
    assert clock["vllm", ""] == "server_start 09:49:31"
    # the timer starts 552.4 s after 09:49:31 and ticks every 10 s: 10:12:05 is 8.4 s early
    assert clock["vllm", "64k"] == "start 10:12:05, phase 8.4 s"
    assert clock["sglang", "200k"] == "start 14:10:31"
    assert got["prefill_rule"].value == "tps = max(22,265 / 3 = 7,422, lerp(prefill_knots, " \
        "cached₀)); index ≥ 1: tps × max(0.2, 1 − prefill_decay × cached₀ / 200,000)"
    assert got["mixed_step"].value == "vllm step = prefill_s + decode_s + event_s; sglang " \
        "step = (prefill_s or decode_s) + event_s"
    # what the fits left beyond the engine's last token, not the 0.3 s they aimed at
    assert got["client_tail"].value == "vllm 64k 0.63 s; vllm 200k 0.70 s; sglang 64k " \
        "0.37 s; sglang 200k 0.69 s; 0.3 s (0.02–0.8 s)"
    # (4 × 1.2 s + 32 × 0.4 s ÷ 8) × the fitted event_scale 1.125 = 7.2 s
    assert got["event_time"].value == "vllm 64k (4 × jit_s 1.2 + 32 × oom_retry_s 0.4 / 8) " \
        "× event_scale 1.125 = 7.2 s"
    kinds = {k: g.kind for k, g in got.items()}
    assert (kinds["clock"], kinds["prefill_rule"], kinds["mixed_step"], kinds["event_time"],
            kinds["client_tail"]) == (ASSUMED, MODEL, MODEL, CALIBRATED, ASSUMED)
    part = _page(reference_build).split("Appendix: the reconstruction generator's inputs")[2]
    assert "vLLM 64K 0.63 s; vLLM 200K 0.70 s; SGLang 64K 0.37 s; SGLang 200K 0.69 s; " \
        "0.3 s (0.02–0.8 s) (assumed)" in part
    assert "vLLM 64K start 10:12:05, phase 8.4 s" in part


def test_the_request_count_is_assumed_everywhere_and_the_concurrency_calibrated(
        reference_build):
    """The seed article gives the requests in flight only: num_prompts is assumed in the
    figures, the generator list and the per-point rows alike."""
    figs = registry_of(reference_build)
    for w in ("64k", "200k"):
        assert figs[f"workload.{w}.num_prompts"].provenance == ASSUMED
        assert figs[f"workload.{w}.num_prompts"].provenance_why == "num_prompts"
        assert figs[f"workload.{w}.concurrency"].provenance == CALIBRATED
        assert figs[f"latency.{w}.vllm.requests"].provenance == ASSUMED
    asked = [f for f in figs.values() if f.id.endswith(".requests_asked")]
    assert asked and {f.provenance for f in asked} == {ASSUMED}
    assert figs["generator.workload"].provenance == ASSUMED


def test_the_korean_appendix_gives_every_reason_in_korean(reference_build):
    """A provenance reason is the scenario's own keys and values (in a code face) or words
    in the reader's language: no run of three English words outside code."""
    text = reference_build.paths.html("ko").read_text(encoding="utf-8")
    reasons = re.findall(r"출처: (.*?)</(?:li|p)>", text)
    assert len(reasons) > 300
    english = [r for r in (html.unescape(re.sub(r"<[^>]+>", "", re.sub(
        r"<code>.*?</code>", "", x))) for x in reasons)
        if re.search(r"\b(?:[A-Za-z][a-z]+[\s,:;]+){2}[A-Za-z][a-z]+\b", r)]
    assert english == []          # (names such as vLLM, MoE or trtllm_mla are no prose)
    assert "보정값(공개된 실행 설정)" in text
    assert "보정값(목표 소요 시간 <code>100.5</code>초)" in text
    assert "입력 중 근거가 가장 약한 것: <code>e2e.64k.vllm.duration" in text
    # figures.json keeps the reason in a stable form; the English edition words it
    figs = registry_of(reference_build)
    assert figs["e2e.64k.vllm.duration"].provenance_why == "@target_duration | duration=100.5"
    assert "calibrated (target duration <code>100.5</code> s)" in \
        reference_build.paths.html("en").read_text(encoding="utf-8")


def test_a_scenario_why_reads_in_words_and_an_unknown_key_stays_code():
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative_base import why_text

    root = Path(__file__).resolve().parents[1] / "templates" / "labels"
    ko, en = load_catalogue(root, "ko"), load_catalogue(root, "en")
    assert str(why_text("decode_step_fixed_ms 1.3, decode_ns_per_kv_token 30.4", en, "en")) \
        == "fixed cost per decode step 1.3 ms, decode cost per KV token 30.4 ns"
    assert str(why_text("arrival_gap 6.3125", ko, "ko")) == "요청 도착 간격 6.3125초"
    # what the catalogue does not name is shown as the scenario wrote it
    assert str(why_text("seed 20261120", en, "en")) == "<code>seed 20261120</code>"
