"""The decode step model (fixed + per KV token) and its memory-bandwidth lower bound: the fit
on figures made from a known step model, the bound on a config small enough to work out by
hand, the "not evaluable" paths, and run.yaml's validation of the bound's inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreport.analyses import stepmodel as sm
from benchreport.core import ids
from benchreport.core.errors import ConfigError
from benchreport.core.figures import Figure
from benchreport.core.records import Run
from benchreport.core.runmeta import Architecture, parse_run_yaml
from benchreport.core.verdicts import (
    ABOVE_BOUND,
    BELOW_BOUND,
    EVALUATED,
    FIT_EXACT,
    FIT_LEAST_SQUARES,
    FOUND,
    NOT_EVALUABLE,
)

FIXTURE = (Path(__file__).parent / "fixtures" / "runs" / "mini" / "run.yaml").read_text()

# A tiny model, small enough to work the bound out by hand.
ARCH = """\
  architecture:
    layers: 2
    moe_layers: 1
    routed_experts: 4
    experts_per_token: 2
    expert_params: 1000
    dense_params: 500
    bytes_per_param: 1
    kv_bytes_per_token_per_layer: 10
"""


def _yaml(workloads: list[tuple[str, int, int, int]], arch: str = ARCH,
          hbm: str = "  hbm_tb_s: 0.000001\n") -> str:
    """The mini fixture with its workloads replaced (id, input, output, concurrency) and the
    bound's inputs declared (1e-6 TB/s = 10^6 bytes/s: a byte is a microsecond)."""
    head = FIXTURE.split("workloads:")[0]
    head = head.replace("hardware: {servers: 1, gpus: 2, gpu_model: Test GPU}\n",
                        "hardware:\n  gpus: 2\n" + hbm)
    head = head.replace("model: {name: Tiny-MoE, quantization: FP8}\n",
                        "model:\n  name: Tiny-MoE\n" + arch)
    rows = "".join(f"  - {{id: {w}, label: {w.upper()}, input_tokens: {i}, output_tokens: {o}, "
                   f"concurrency: {c}, num_prompts: {c}}}\n" for w, i, o, c in workloads)
    return head + "workloads:\n" + rows


def _run(text: str) -> Run:
    return Run(paths=None, meta=parse_run_yaml(text, "run.yaml"))


def _registry(run: Run, engine: str, fixed_s: float, per_kv_s: float, accept: float | None,
              jitter: dict[str, float] | None = None) -> dict[str, Figure]:
    """Decode and spec figures of an engine whose every step takes exactly fixed + per_kv ×
    kv_tokens, kv_tokens = batch × (input + output ÷ 2) (times ``jitter[w]``, if given)."""
    reg = {}
    for w in run.meta.workloads:
        b = w.concurrency
        kv = b * (w.input_tokens + w.output_tokens / 2)
        step = (fixed_s + per_kv_s * kv) * (jitter or {}).get(w.id, 1.0)
        tps = b * (accept or 1.0) / step
        for name, value, unit, ctx in (("steady", FOUND, "verdict", {"requests": b}),
                                       ("mean", tps, "tok/s", {})):
            fid = ids.decode(w.id, engine, name)
            reg[fid] = Figure(id=fid, value=value, unit=unit, method="test", context=ctx)
        if accept is not None:
            fid = ids.spec(w.id, engine, "accept_len")
            reg[fid] = Figure(id=fid, value=accept, unit="tokens/step", method="test")
    return reg


def _by_id(figures: list[Figure]) -> dict[str, Figure]:
    return {f.id: f for f in figures}


TWO = [("1k", 1000, 200, 8), ("16k", 16000, 200, 8)]
THREE = [("1k", 1000, 200, 8), ("4k", 4000, 200, 8), ("16k", 16000, 200, 8)]


def test_two_context_lengths_give_back_the_step_model_exactly():
    run = _run(_yaml(TWO))
    reg = _registry(run, "vllm", fixed_s=5e-3, per_kv_s=20e-9, accept=1.5)
    figs = _by_id(sm.step_figures(run, reg, {"vllm": sm.Setup(tp=1, drafts=3)}))
    assert figs["stepmodel.vllm.fit"].value == FIT_EXACT
    assert figs["stepmodel.vllm.fixed_ms"].value == pytest.approx(5.0)
    assert figs["stepmodel.vllm.ns_per_kv_token"].value == pytest.approx(20.0)
    assert figs["stepmodel.vllm.points"].value == 2
    # the point: 8 requests × (1,000 input + 200 output ÷ 2), and the step from the tok/s
    assert figs["stepmodel.vllm.1k.kv_tokens"].value == 8 * 1100
    assert figs["stepmodel.vllm.1k.step_ms"].value == pytest.approx(5.0 + 20e-6 * 8800)
    assert "output tokens ÷ 2" in figs["stepmodel.vllm.fixed_ms"].method
    # it rests on the figures it came from
    assert set(figs["stepmodel.vllm.1k.step_ms"].depends_on) >= {
        "decode.1k.vllm.mean", "decode.1k.vllm.steady", "spec.1k.vllm.accept_len"}
    assert set(figs["stepmodel.vllm.fixed_ms"].depends_on) == {
        ids.step_point("vllm", w, n) for w in ("1k", "16k") for n in ("step_ms", "kv_tokens")}


def test_three_lengths_are_a_least_squares_fit():
    run = _run(_yaml(THREE))
    # the middle point 2% slow: the least-squares line misses every point a little
    reg = _registry(run, "vllm", fixed_s=5e-3, per_kv_s=20e-9, accept=None,
                    jitter={"4k": 1.02})
    figs = _by_id(sm.step_figures(run, reg, {"vllm": sm.Setup(tp=1)}))
    assert figs["stepmodel.vllm.fit"].value == FIT_LEAST_SQUARES
    import numpy as np
    xs = [8 * (i + 100) for i in (1000, 4000, 16000)]
    ys = [(5e-3 + 20e-9 * x) * j for x, j in zip(xs, (1, 1.02, 1), strict=True)]
    slope, intercept = np.polyfit(xs, ys, 1)
    assert figs["stepmodel.vllm.fixed_ms"].value == pytest.approx(1e3 * intercept)
    assert figs["stepmodel.vllm.ns_per_kv_token"].value == pytest.approx(1e9 * slope)
    assert figs["stepmodel.vllm.fixed_ms"].value != pytest.approx(5.0, abs=1e-3)
    # no speculation: one token per request per step
    assert "1 token (no speculative decoding)" in figs["stepmodel.vllm.1k.step_ms"].method


def test_the_bound_of_a_hand_computed_config():
    arch = Architecture(layers=2, moe_layers=1, routed_experts=4, experts_per_token=2,
                        expert_params=1000, dense_params=500, bytes_per_param=1,
                        kv_bytes_all=10)
    # one token picks 2 of 4 experts: 4 × (1 − (1 − 2/4)^1) = 2; 500 + 2 × 1000 bytes at
    # 10^6 bytes/s is 2.5 ms; KV: 10 bytes × 2 layers = 20 bytes = 20,000 ns per token
    b = sm.bound(arch, 1e-6, sm.Setup(tp=1), 10, batch=1)
    assert (b.tokens_per_step, b.experts_per_layer) == (1, 2.0)
    assert b.weights_ms == pytest.approx(2.5)
    assert b.ns_per_kv_token == pytest.approx(20_000)
    # two tokens (one request, one draft): 4 × (1 − 1/4) = 3 experts; TP 2 halves the
    # weights (3,500 / 2 bytes), DCP 2 halves the KV
    b = sm.bound(arch, 1e-6, sm.Setup(tp=2, dcp=2, drafts=1), 10, batch=1)
    assert (b.tokens_per_step, b.experts_per_layer) == (2, 3.0)
    assert b.weights_ms == pytest.approx(1.75)
    assert b.ns_per_kv_token == pytest.approx(10_000)
    # many tokens activate every expert, none activate none
    assert sm.expected_experts(384, 8, 10_000) == pytest.approx(384)
    assert sm.expected_experts(384, 8, 0) == 0
    assert sm.expected_experts(384, 8, 80) == pytest.approx(384 * (1 - (1 - 8 / 384) ** 80))


def test_the_fixed_cost_is_compared_with_the_bound():
    run = _run(_yaml(TWO))
    setup = {"vllm": sm.Setup(tp=1, deps=("setting.tensor_parallel.vllm",))}
    # batch 8 × 1 token: 4 × (1 − (1/2)^8) experts → (500 + 3,984.375) bytes = 4.484 ms
    bound_ms = (500 + 1000 * 4 * (1 - 0.5 ** 8)) / 1e6 * 1e3
    low = _by_id(sm.step_figures(run, _registry(run, "vllm", 1e-3, 20e-9, None), setup))
    assert low["stepmodel.vllm.bound"].value == EVALUATED
    assert low["stepmodel.vllm.bound_weights_ms"].value == pytest.approx(bound_ms)
    assert low["stepmodel.vllm.fixed_vs_bound"].value == BELOW_BOUND
    assert low["stepmodel.vllm.fixed_over_bound"].value == pytest.approx(1.0 / bound_ms)
    assert "setting.tensor_parallel.vllm" in low["stepmodel.vllm.bound_weights_ms"].depends_on
    high = _by_id(sm.step_figures(run, _registry(run, "vllm", 9e-3, 20e-9, None), setup))
    assert high["stepmodel.vllm.fixed_vs_bound"].value == ABOVE_BOUND
    assert high["stepmodel.vllm.fixed_minus_bound_ms"].value == pytest.approx(9.0 - bound_ms)


def test_one_context_length_is_not_evaluable_and_gives_no_number():
    run = _run(_yaml(TWO[:1]))
    reg = _registry(run, "vllm", 5e-3, 20e-9, None)
    figs = _by_id(sm.step_figures(run, reg, {"vllm": sm.Setup(tp=1)}))
    assert figs["stepmodel.vllm.fit"].value == NOT_EVALUABLE
    assert not {"stepmodel.vllm.fixed_ms", "stepmodel.vllm.ns_per_kv_token",
                "stepmodel.vllm.fixed_vs_bound"} & set(figs)
    # the bound needs only one point (its batch)
    assert figs["stepmodel.vllm.bound"].value == EVALUATED
    # an engine with no decode figures gets nothing at all
    assert not any(ids.within(f, "stepmodel.sglang") for f in figs)


def test_speculation_without_an_accepted_length_is_no_point():
    run = _run(_yaml(TWO))
    reg = _registry(run, "vllm", 5e-3, 20e-9, None)
    figs = _by_id(sm.step_figures(run, reg, {"vllm": sm.Setup(tp=1, drafts=7)}))
    assert figs["stepmodel.vllm.fit"].value == NOT_EVALUABLE
    assert figs["stepmodel.vllm.bound"].context["missing"] == ["steady"]


@pytest.mark.parametrize("arch, hbm, setup, missing", [
    ("", "", sm.Setup(tp=1), ["hbm", "architecture"]),
    (ARCH, "", sm.Setup(tp=1), ["hbm"]),
    (ARCH.replace("kv_bytes_per_token_per_layer: 10", "kv_bytes_per_token_per_layer: "
                  "{sglang: 10}"), "  hbm_tb_s: 1\n", sm.Setup(tp=1), ["kv_bytes"]),
    (ARCH, "  hbm_tb_s: 1\n", sm.Setup(tp=None), ["tensor_parallel"]),
])
def test_a_bound_without_its_inputs_is_not_evaluable(arch, hbm, setup, missing):
    run = _run(_yaml(TWO, arch=arch, hbm=hbm))
    figs = _by_id(sm.step_figures(run, _registry(run, "vllm", 5e-3, 20e-9, None),
                                  {"vllm": setup}))
    bound = figs["stepmodel.vllm.bound"]
    assert bound.value == NOT_EVALUABLE and bound.context["missing"] == missing
    assert not {"stepmodel.vllm.bound_weights_ms", "stepmodel.vllm.fixed_vs_bound"} & set(figs)
    assert figs["stepmodel.vllm.fit"].value == FIT_EXACT     # the fit does not need them


def test_the_generator_is_shown_on_the_fits_basis():
    run = _run(_yaml(TWO))
    figs = _by_id(sm.step_figures(run, _registry(run, "vllm", 5e-3, 20e-9, None),
                                  {"vllm": sm.Setup(tp=1)},
                                  {"vllm": sm.Generator(fixed_ms=28.4, ns_per_kv_token=38.7,
                                                        dcp=8)}))
    assert figs["stepmodel.vllm.generator_fixed_ms"].value == 28.4
    assert figs["stepmodel.vllm.generator_ns_per_kv_token"].value == pytest.approx(38.7 / 8)


def test_the_section_says_what_is_not_evaluable_and_shows_no_table_of_dashes():
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.stepmodel import stepmodel_section

    labels = Path(__file__).parent.parent / "templates" / "labels"
    run = _run(_yaml(TWO[:1], arch="", hbm=""))
    reg = _registry(run, "vllm", 5e-3, 20e-9, None)
    reg.update(_by_id(sm.step_figures(run, reg, {"vllm": sm.Setup(tp=None)})))
    sec = stepmodel_section(Writer(run, reg, "en", load_catalogue(labels, "en")))
    text = " ".join(p.striptags() for p in sec.paragraphs)
    assert "vLLM: the step model is not evaluable" in text and "and has 1." in text
    assert "without the HBM bandwidth per GPU" in text and "tensor-parallel size" in text
    assert "fitted fixed cost" not in text and sec.tables == []
    # with two lengths the fit is there: a table, and no "not evaluable" for the fit
    run = _run(_yaml(TWO, arch="", hbm=""))
    reg = _registry(run, "vllm", 5e-3, 20e-9, None)
    reg.update(_by_id(sm.step_figures(run, reg, {"vllm": sm.Setup(tp=None)})))
    sec = stepmodel_section(Writer(run, reg, "ko", load_catalogue(labels, "ko")))
    (table,) = sec.tables
    assert [c.striptags() for c in table.rows[0]] == ["vLLM", "5.00 ms", "20.0 ns", "–", "–"]
    assert not any("스텝 모델을 평가할 수 없습니다" in p for p in sec.paragraphs)


# --- run.yaml --------------------------------------------------------------------------

def test_the_bound_inputs_are_read_from_run_yaml():
    meta = parse_run_yaml(_yaml(TWO), "run.yaml")
    assert meta.hbm_tb_s == 1e-6
    a = meta.architecture
    assert (a.layers, a.moe_layers, a.routed_experts, a.experts_per_token) == (2, 1, 4, 2)
    assert a.kv_bytes_per_token_per_layer("vllm") == 10
    per = parse_run_yaml(_yaml(TWO, arch=ARCH.replace(
        "kv_bytes_per_token_per_layer: 10", "kv_bytes_per_token_per_layer: {vllm: 1152, "
        "sglang: 576}")), "run.yaml").architecture
    assert (per.kv_bytes_per_token_per_layer("vllm"),
            per.kv_bytes_per_token_per_layer("sglang")) == (1152, 576)
    plain = parse_run_yaml(FIXTURE, "run.yaml")
    assert plain.hbm_tb_s is None and plain.architecture is None


@pytest.mark.parametrize("old, new, message", [
    ("  hbm_tb_s: 0.000001", "  hbm_tb_s: 0", "hardware.hbm_tb_s must be a number > 0, got 0"),
    ("  hbm_tb_s: 0.000001", "  hbm_tb_s: fast",
     "hardware.hbm_tb_s must be a number > 0, got 'fast'"),
    ("    layers: 2\n", "", "model.architecture: missing key 'layers'"),
    ("    layers: 2", "    layers: 2.5", "model.architecture.layers must be an integer > 0, "
                                         "got 2.5"),
    ("    bytes_per_param: 1", "    bytes_per_param: -1",
     "model.architecture.bytes_per_param must be a number > 0, got -1"),
    ("    layers: 2", "    layers: 2\n    layer: 3", "unknown key model.architecture.layer"),
    ("    experts_per_token: 2", "    experts_per_token: 5",
     r"model.architecture.experts_per_token \(5\) exceeds model.architecture.routed_experts"),
    ("    moe_layers: 1", "    moe_layers: 3",
     r"model.architecture.moe_layers \(3\) exceeds model.architecture.layers"),
    ("kv_bytes_per_token_per_layer: 10", "kv_bytes_per_token_per_layer: {tgi: 10}",
     "model.architecture.kv_bytes_per_token_per_layer names unknown engine 'tgi'"),
    ("kv_bytes_per_token_per_layer: 10", "kv_bytes_per_token_per_layer: {}",
     "model.architecture.kv_bytes_per_token_per_layer is empty"),
    ("kv_bytes_per_token_per_layer: 10", "kv_bytes_per_token_per_layer: {vllm: 0}",
     "model.architecture.kv_bytes_per_token_per_layer.vllm must be a number > 0, got 0"),
])
def test_bad_bound_inputs_are_one_line_errors_naming_the_key(old, new, message):
    text = _yaml(TWO).replace(old, new, 1)
    assert text != _yaml(TWO)
    with pytest.raises(ConfigError, match=message) as info:
        parse_run_yaml(text, "data/x/run.yaml")
    line = info.value.one_line()
    assert "\n" not in line and line.startswith("data/x/run.yaml:")


def test_an_architecture_that_is_not_a_mapping_is_an_error():
    with pytest.raises(ConfigError, match="model.architecture must be a mapping, got an integer"):
        parse_run_yaml(_yaml(TWO, arch="  architecture: 3\n"), "run.yaml")


# --- the reference run -------------------------------------------------------------------

def test_the_reference_fit_recovers_the_generators_step_model(reference_build):
    """The reconstruction's decode was generated with a known step model (scenario.yaml):
    the fit from the report's own figures gives it back, within what the output ÷ 2
    approximation and the generator's noise allow, and the article's table shows both."""
    from benchreport.core.i18n import load_catalogue
    from benchreport.pipeline.explain import registry_of
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.stepmodel import stepmodel_section
    from benchreport.synth.scenario import load_scenario

    run = reference_build
    reg = dict(registry_of(run))
    scenario = {e.id: e.model for e in load_scenario(run.paths.data / "scenario.yaml").engines}
    for e, model in scenario.items():
        fixed = reg[ids.step_model(e, "fixed_ms")].value
        per_kv = reg[ids.step_model(e, "ns_per_kv_token")].value
        assert reg[ids.step_model(e, "generator_fixed_ms")].value == \
            pytest.approx(1e3 * model.step_fixed_s)
        assert per_kv == pytest.approx(1e9 * model.step_per_kv_token_s / model.dcp, rel=0.1)
        assert fixed == pytest.approx(1e3 * model.step_fixed_s, abs=0.6)
    # vLLM's fitted 1.2 ms is below what reading the weights of a step takes at 8 TB/s
    assert reg["stepmodel.vllm.fixed_vs_bound"].value == BELOW_BOUND
    assert reg["stepmodel.sglang.fixed_vs_bound"].value == ABOVE_BOUND
    arch = run.meta.architecture
    tokens = 10 * 8                      # 10 requests × (7 drafts + the verified token)
    experts = 384 * (1 - (1 - 8 / 384) ** tokens)
    weights = (arch.dense_params + 60 * experts * arch.expert_params) * 0.53125 / 8
    assert reg["stepmodel.vllm.bound_weights_ms"].value == pytest.approx(weights / 8e12 * 1e3)
    assert reg["stepmodel.sglang.bound_ns_per_kv_token"].value == \
        pytest.approx(576 * 61 / 8 / 8e12 * 1e9)
    for lang in ("en", "ko"):
        t = load_catalogue(Path(__file__).parent.parent / "templates" / "labels", lang)
        sec = stepmodel_section(Writer(run, reg, lang, t))
        rows = [[c.striptags() for c in r] for r in sec.tables[0].rows]
        assert [r[0] for r in rows] == ["vLLM", "SGLang"]
        assert rows[0][1] == f"{reg['stepmodel.vllm.fixed_ms'].value:.2f} ms"
        assert rows[1][3] == f"{reg['stepmodel.sglang.generator_fixed_ms'].value:.2f} ms"
        assert rows[0][6] == f"{reg['stepmodel.vllm.bound_ns_per_kv_token'].value:.2f} ns"
        text = " ".join(p.striptags() for p in sec.paragraphs)
        # the bound columns rest on run.yaml's assumed hardware and architecture; the fit
        # and the generator are the reconstruction's model
        header = sec.tables[0].header
        generated = (t["words.model"], t["words.seed"])
        assert header[1].endswith(generated) and header[3].endswith(generated) \
            and header[5].endswith(t["words.assumed"])
        if lang == "en":
            # only the zero-context intercept is below the bound: the whole vLLM step is under
            # it below ~222K KV tokens per step, and both points lie above it
            assert "only below 221,982 tokens of KV cache per step" in text
            assert "about 22,198 tokens of context per request at batch 10" in text
            assert "(64K: 21.58 ms against 9.89 ms; 200K: 62.50 ms against 15.80 ms)" in text
            assert "decode_step_fixed_ms (1.30 ms), not a property of the engine" in text
            assert "gives 25.4 ms at 64K (418 tok/s)" in text
            assert "physically implausible" not in text
        else:
            assert "221,982 토큰 미만일 때" in text and "물리적으로" not in text
    assert reg["stepmodel.vllm.line_vs_bound"].value == "below the bound up to the crossover"
    assert reg["stepmodel.vllm.crossover_kv_tokens"].value == pytest.approx(222_000, rel=0.01)
    assert reg["stepmodel.vllm.points_above_bound"].value == 2
    assert reg["stepmodel.vllm.64k.bound_ms"].value == pytest.approx(9.89, abs=0.01)
    assert reg["stepmodel.vllm.200k.bound_ms"].value == pytest.approx(15.80, abs=0.01)
    assert reg["stepmodel.vllm.bound_fixed_fits"].value == "no"
    assert reg["stepmodel.sglang.line_vs_bound"].value == "never below the bound"
    # the crossing rests on vLLM's 64K steady mean, which the seed drew: free
    assert reg["stepmodel.vllm.crossover_kv_tokens"].provenance == "free"


# --- the whole step line against the whole bound ------------------------------------------

@pytest.mark.parametrize("fixed, per_kv, where, kv", [
    (1.0, 30.0, "below the bound up to the crossover", 6e6 / 26),     # 230,769 tokens
    (1.0, 3.0, "always below the bound", None),
    (9.0, 30.0, "never below the bound", None),
    (9.0, 2.0, "below the bound beyond the crossover", 2e6 / 2),      # 1,000,000 tokens
])
def test_where_the_step_line_crosses_its_bound(fixed, per_kv, where, kv):
    got, at = sm.crossover(fixed, per_kv, 7.0, 4.0)
    assert got == where
    assert at == (None if kv is None else pytest.approx(kv))
    if kv is not None:          # the two lines meet there
        assert fixed + per_kv * at / 1e6 == pytest.approx(7.0 + 4.0 * at / 1e6)
    assert round(sm.crossover(1.0, 30.0, 7.0, 4.0)[1]) == 230_769


def _section_text(run, reg, lang):
    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.stepmodel import stepmodel_section

    t = load_catalogue(Path(__file__).parent.parent / "templates" / "labels", lang)
    sec = stepmodel_section(Writer(run, reg, lang, t))
    return " ".join(p.striptags() for p in sec.paragraphs), sec


def test_a_fixed_cost_below_the_bound_is_bounded_only_up_to_the_crossover():
    run = _run(_yaml(TWO))
    setup = {"vllm": sm.Setup(tp=1)}
    # bound: 4.484 ms + 20,000 ns per KV token (10 bytes × 2 layers at 10^6 bytes/s); the
    # fit: 1 ms + 30,000 ns → crossover (4.484375 − 1) ÷ (30,000 − 20,000) ns = 348.4 tokens
    bound_ms = (500 + 1000 * 4 * (1 - 0.5 ** 8)) / 1e3
    reg = _registry(run, "vllm", 1e-3, 30e-6, None)
    figs = _by_id(sm.step_figures(run, reg, setup))
    assert figs["stepmodel.vllm.fixed_vs_bound"].value == BELOW_BOUND
    assert figs["stepmodel.vllm.line_vs_bound"].value == "below the bound up to the crossover"
    kv = (bound_ms - 1.0) * 1e6 / (30_000 - 20_000)
    assert figs["stepmodel.vllm.crossover_kv_tokens"].value == pytest.approx(kv)
    assert figs["stepmodel.vllm.crossover_context"].value == pytest.approx(kv / 8)
    # both points (8,800 and 128,800 KV tokens) lie far beyond it: above their bound
    assert figs["stepmodel.vllm.1k.bound_ms"].value == pytest.approx(bound_ms + 0.02 * 8800)
    assert figs["stepmodel.vllm.1k.vs_bound"].value == ABOVE_BOUND
    assert figs["stepmodel.vllm.points_above_bound"].value == 2
    # pinned at the bound's 4.48 ms, the line through the 16k step gives at 1k a step of
    # 4.484 + (1 + 0.03 × 128,800 − 4.484) × 8,800 ÷ 128,800 ms: slower than the fitted one
    far, near = 1 + 0.03 * 128_800, 1 + 0.03 * 8_800
    pinned = bound_ms + (far - bound_ms) * 8_800 / 128_800
    assert figs["stepmodel.vllm.pinned_step_ms"].value == pytest.approx(pinned)
    assert pinned > near and figs["stepmodel.vllm.bound_fixed_fits"].value == "no"
    assert figs["stepmodel.vllm.pinned_tps"].value == pytest.approx(8 / (pinned / 1e3))
    reg.update(figs)
    en, _ = _section_text(run, reg, "en")
    assert "only below 348 tokens of KV cache per step" in en
    assert "about 44 tokens of context per request at batch 8" in en
    assert "Every benchmark point lies above its bound (1K:" in en
    assert "physically implausible" not in en and "No fixed cost at or above" in en
    ko, _ = _section_text(run, reg, "ko")
    assert "348 토큰 미만일 때" in ko and "모두 각자의 하한보다 위에 있습니다" in ko
    assert "두 지점을 함께 맞추지 못합니다" in ko


def test_a_line_below_the_bound_everywhere_is_implausible_and_above_it_is_not():
    run = _run(_yaml(TWO))
    setup = {"vllm": sm.Setup(tp=1)}
    low = _by_id(sm.step_figures(run, _registry(run, "vllm", 1e-3, 10e-6, None), setup))
    assert low["stepmodel.vllm.line_vs_bound"].value == "always below the bound"
    assert "stepmodel.vllm.crossover_kv_tokens" not in low
    assert low["stepmodel.vllm.points_above_bound"].value == 0
    reg = _registry(run, "vllm", 1e-3, 10e-6, None) | low
    en, _ = _section_text(run, reg, "en")
    assert "at every context" in en and "Every benchmark point lies below its bound" in en
    ko, _ = _section_text(run, reg, "ko")
    assert "어떤 컨텍스트에서든" in ko and "모두 각자의 하한보다 아래에" in ko
    high = _by_id(sm.step_figures(run, _registry(run, "vllm", 9e-3, 30e-6, None), setup))
    assert high["stepmodel.vllm.line_vs_bound"].value == "never below the bound"
    assert "stepmodel.vllm.pinned_step_ms" not in high      # the fixed cost is above it
    en, _ = _section_text(run, _registry(run, "vllm", 9e-3, 30e-6, None) | high, "en")
    assert "compute, communication and overheads" in en and "KV cache per step" not in en
    beyond = _by_id(sm.step_figures(run, _registry(run, "vllm", 9e-3, 10e-6, None), setup))
    assert beyond["stepmodel.vllm.line_vs_bound"].value == "below the bound beyond the crossover"
    en, _ = _section_text(run, _registry(run, "vllm", 9e-3, 10e-6, None) | beyond, "en")
    assert "the whole step would be under the bound" in en


def test_the_table_marks_its_columns_by_the_figures_provenance():
    from dataclasses import replace

    run = _run(_yaml(TWO))
    reg = _registry(run, "vllm", 1e-3, 30e-6, None)
    reg.update(_by_id(sm.step_figures(run, reg, {"vllm": sm.Setup(tp=1)})))
    _, sec = _section_text(run, reg, "en")
    assert not any("(" in h and "assumed" in h for h in sec.tables[0].header)   # measured
    marked = {k: replace(f, provenance="assumed" if "bound" in k else "model-derived")
              for k, f in reg.items()}
    _, sec = _section_text(run, marked, "en")
    assert sec.tables[0].header[1] == "Fitted fixed cost (per step) (the generator's model)"
    assert sec.tables[0].header[-1] == "Bound: per KV token (assumed)"
    _, sec = _section_text(run, marked, "ko")
    assert sec.tables[0].header[-1] == "하한: KV 토큰당(가정값)"
