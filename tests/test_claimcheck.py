"""Each claim-check kind against a registry of a few figures."""

from benchreport.analyses.claimcheck import (
    CONFIRMED,
    CONSISTENT,
    CONTRADICTED,
    DIFFERS,
    FITTED,
    METHOD,
    check_claim,
)
from benchreport.core.claims import Claim
from benchreport.core.figures import Figure


def _reg(**values) -> dict[str, Figure]:
    out = {}
    for key, value in values.items():
        fid = key.replace("__", ".")
        out[fid] = Figure(id=fid, value=value, unit="x", method="test")
    return out


def _claim(check, value=None, rounding=None, causal=False) -> Claim:
    return Claim(id="c", source=("a",), kind="figure", text={"ko": "k", "en": "e"},
                 value=value, rounding=rounding, check=check, causal=causal)


def test_an_alternative_resting_on_fitted_means_only_matches_by_construction():
    from dataclasses import replace

    from benchreport.core.provenance import reason

    mean = reason("target_lines", name="steady_mean", value="335")
    peak = reason("target_tps", name="steady_max", value="537")
    reg = _reg(d__mean=332.0, d__lines=335.0, r__mean=3.02, r__peak=3.29)
    # the per-line mean the generator was fitted to the published 335
    v = check_claim(_claim({"figure": ["d.mean", "d.lines"]}, 335, 1), reg, {}, set(),
                    {"d.lines": mean})
    assert (v.verdict, v.reason) == (FITTED, "other_basis_fitted")
    # a ratio made of a fitted peak and a fitted mean is the published text's arithmetic
    reg["r.peak"] = replace(reg["r.peak"], depends_on=("p.max", "p.mean"))
    v = check_claim(_claim({"figure": ["r.mean", "r.peak"]}, 3.29, 0.01), reg, {}, set(),
                    {"p.max": peak, "p.mean": mean})
    assert (v.verdict, v.reason) == (METHOD, "other_basis")
    # a ratio of two fitted means is by construction again
    reg["r.peak"] = replace(reg["r.peak"], depends_on=("p.mean", "q.mean"))
    v = check_claim(_claim({"figure": ["r.mean", "r.peak"]}, 3.29, 0.01), reg, {}, set(),
                    {"p.mean": mean, "q.mean": mean})
    assert v.reason == "other_basis_fitted"
    # and with no calibration at all (a measured run) it stays another basis
    v = check_claim(_claim({"figure": ["d.mean", "d.lines"]}, 335, 1), reg, {}, set())
    assert (v.verdict, v.reason) == (METHOD, "other_basis")


def test_a_value_the_text_computed_from_another_rounded_value_takes_that_rounding_too():
    """"26.8 tok/s, i.e. 37.3 ms/token": 1000 / 26.8 = 37.31 ms; a rate of 26.76 tok/s
    (26.8 as printed) gives 37.37 ms, outside 37.3 ± 0.05 but inside what the rate's
    rounding carries into it (1000 / 26.85 … 1000 / 26.75, widened by 0.05)."""
    from dataclasses import replace

    from benchreport.analyses.claimcheck import _propagated

    value = {"per_request": 26.8, "ms_per_token": 37.3}
    check = {"figures": {"per_request": "d.pr", "ms_per_token": "d.ms"}}
    plain = _claim(check, value, {"per_request": 0.1, "ms_per_token": 0.1})
    derived = replace(plain, derived={"ms_per_token": {"per_request": -1}})
    reg = _reg(d__pr=26.76, d__ms=1000 / 26.76)
    assert check_claim(plain, reg, {}, set()).verdict == DIFFERS
    v = check_claim(derived, reg, {}, set())
    assert (v.verdict, v.reason, v.params) == (
        CONFIRMED, "within_propagated", {"keys": ["ms_per_token"], "sources": ["per_request"]})
    lo, hi = _propagated(derived, value, "ms_per_token")
    assert (round(lo, 3), round(hi, 3)) == (37.181, 37.42)
    # beyond what the rate's rounding carries: a difference still
    assert check_claim(derived, _reg(d__pr=26.76, d__ms=37.45), {}, set()).verdict == DIFFERS
    # a value within its own rounding needs no widening
    v = check_claim(derived, _reg(d__pr=26.8, d__ms=37.31), {}, set())
    assert (v.verdict, v.reason) == (CONFIRMED, "within_rounding")


def test_derived_must_name_the_claims_own_keys():
    import pytest

    from benchreport.core.claims import parse_claims
    from benchreport.core.errors import ConfigError

    doc = ("schema: 1\narticles: {a: a.txt}\nclaims:\n- id: c\n  source: [a]\n"
           "  kind: figure\n  text: {ko: k, en: e}\n  value: {rate: 26.8, ms: 37.3}\n"
           "  derived: {ms: {%s: -1}}\n")
    assert parse_claims(doc % "rate", "c.yaml")[1][0].derived == {"ms": {"rate": -1.0}}
    with pytest.raises(ConfigError, match="derived"):
        parse_claims(doc % "speed", "c.yaml")


def test_a_match_on_the_alternative_basis_only_is_a_different_method():
    reg = _reg(d__mean=3.02, d__peak=3.29)
    v = check_claim(_claim({"figure": ["d.mean", "d.peak"]}, 3.29, 0.01), reg, {}, set())
    assert v.verdict == METHOD and v.params["alternatives"] == ["d.peak"]
    v = check_claim(_claim({"figure": ["d.mean", "d.peak"]}, 3.02, 0.01), reg, {}, set())
    assert v.verdict == CONFIRMED


def test_linear_says_when_the_data_are_closer_to_proportional_than_published():
    reg = _reg(deg=3.02, ctx=3.05)
    check = {"linear": {"change": "deg", "context": "ctx"}, "within": 0.1}
    v = check_claim(_claim(check, {"degradation": 3.29, "context_ratio": 3.1}), reg, {}, set())
    assert (v.verdict, v.reason, v.params["ratio"]) == (CONFIRMED, "linear_closer", "0.99")
    # published pair already closer than the data: plain "linear"
    v = check_claim(_claim(check, {"degradation": 3.05, "context_ratio": 3.05}), reg, {}, set())
    assert v.reason == "linear"
    v = check_claim(_claim(check), _reg(deg=1.5, ctx=3.05), {}, set())
    assert (v.verdict, v.reason) == (DIFFERS, "not_linear")


def test_at_least():
    check = {"at_least": {"a": 50, "b": 50}}
    assert check_claim(_claim(check), _reg(a=56.0, b=103.0), {}, set()).verdict == CONFIRMED
    v = check_claim(_claim(check), _reg(a=44.0, b=103.0), {}, set())
    assert v.verdict == DIFFERS and v.params["which"] == "a 44.00"


def test_verdict_params_stay_lists_and_mappings_through_json():
    """What a check compared is recorded as data, not joined into one line: claims.json
    keeps lists and mappings; the English sentence and the figure context join them."""
    import json

    check = {"settings": {"speculative": {"vllm": "eagle", "sglang": "eagle"}}}
    v = check_claim(_claim(check), {}, {"speculative": {"vllm": "dspark", "sglang": "eagle"}},
                    set())
    want = [{"sid": "speculative", "engine": "vllm", "have": "dspark"}]
    assert (v.reason, v.params["which"]) == ("setting_differs", want)
    assert json.loads(json.dumps(v.params)) == v.params
    assert v.flat_params()["which"] == "speculative (vllm: dspark)"
    v = check_claim(_claim({"similar": [["a", "c"], ["b", "c"]], "within": 0.15}),
                    _reg(a=100.0, b=110.0, c=200.0), {}, set())
    assert v.params["which"] == ["a vs c", "b vs c"]
    assert v.flat_params()["which"] == "a vs c; b vs c"
    v = check_claim(_claim({"figure": ["d.mean", "d.peak"]}, 3.29, 0.01),
                    _reg(d__mean=3.02, d__peak=3.29), {}, set())
    assert v.params == {"alternatives": ["d.peak"], "keys": ["value"]}
    assert v.flat_params() == {"alternatives": "d.peak", "keys": "value"}


def test_settings_compare_normalised():
    check = {"settings": {"speculative": {"vllm": "dspark, 7 draft tokens"}}}
    v = check_claim(_claim(check), {}, {"speculative": {"vllm": "DSPARK, 7 draft tokens"}},
                    set())
    assert v.verdict == CONFIRMED


def test_a_causal_claim_the_data_agree_with_is_only_consistent():
    reg = _reg(events__64k__vllm__oom_retries=32)
    reg["limits.vllm.warmup_records"] = Figure(id="limits.vllm.warmup_records", value=0,
                                               unit="count", method="t",
                                               context={"first_workload": "64k"})
    check = {"nonzero": ["events.64k.vllm.oom_retries"]}
    v = check_claim(_claim(check, causal=True), reg, {}, set())
    assert (v.verdict, v.reason) == (CONSISTENT, "cold_start")
    # warm engine, or events in a later benchmark: no cold start to point at
    reg["limits.vllm.warmup_records"] = Figure(id="limits.vllm.warmup_records", value=5,
                                               unit="count", method="t",
                                               context={"first_workload": "64k"})
    v = check_claim(_claim(check, causal=True), reg, {}, set())
    assert (v.verdict, v.reason) == (CONSISTENT, "cause_not_measured")
    assert check_claim(_claim(check), reg, {}, set()).verdict == CONFIRMED


def test_calibration_follows_what_a_figure_is_computed_from():
    reg = _reg(e2e__w__a__duration=100.0, e2e__w__b__duration=150.0)
    reg["e2e.w.speedup"] = Figure(id="e2e.w.speedup", value=1.5, unit="x", method="t",
                                  depends_on=("e2e.w.a.duration", "e2e.w.b.duration"))
    patterns = {"e2e.w.a.duration": "target duration"}
    v = check_claim(_claim({"figure": "e2e.w.speedup"}, 1.5, 0.1), reg, {}, set(), patterns)
    assert v.calibrated == ["target duration"]
    v = check_claim(_claim({"figure": "e2e.w.speedup"}, 1.5, 0.1), reg, {}, set(), {})
    assert v.calibrated == []


def test_sequence():
    reg = {"s": Figure(id="s", value="22,265 → 21,064", unit="tok/s", method="t")}
    v = check_claim(_claim({"sequence": "s"}, [22265, 21064], 1), reg, {}, set())
    assert v.verdict == CONFIRMED and v.recomputed == [22265.0, 21064.0]
    v = check_claim(_claim({"sequence": "s"}, [22265, 21000], 1), reg, {}, set())
    assert v.verdict == DIFFERS


def test_differs_and_identical_read_the_differing_settings():
    differing = {"dcp", "memory"}
    v = check_claim(_claim({"differs": ["dcp", "memory"]}), {}, {}, differing)
    assert (v.verdict, v.params["which"]) == (CONFIRMED, ["dcp", "memory"])
    v = check_claim(_claim({"differs": ["dcp", "verification"]}), {}, {}, differing)
    assert (v.verdict, v.params["missing"]) == (DIFFERS, ["verification"])
    v = check_claim(_claim({"identical": True}), {}, {}, differing)
    assert v.verdict == CONTRADICTED and v.params["which"] == ["dcp", "memory"]
    assert check_claim(_claim({"identical": True}), {}, {}, set()).verdict == CONFIRMED


def test_every_engine_and_zero():
    reg = _reg(events__w__a__oom_retries=32, events__w__b__oom_retries=0)
    v = check_claim(_claim({"every_engine": ["oom_retries"]}), reg, {}, set())
    assert (v.verdict, v.params["which"]) == (CONTRADICTED, ["b"])
    v = check_claim(_claim({"zero": ["events.w.b.oom_retries"]}), reg, {}, set())
    assert v.verdict == CONFIRMED
    v = check_claim(_claim({"zero": ["events.w.a.oom_retries"]}), reg, {}, set())
    assert v.verdict == CONTRADICTED


def test_similar_and_equals():
    reg = _reg(a=100.0, b=110.0, c=200.0)
    check = {"similar": [["a", "b"]], "within": 0.15}
    assert check_claim(_claim(check), reg, {}, set()).verdict == CONFIRMED
    check = {"similar": [["a", "c"]], "within": 0.15}
    assert check_claim(_claim(check), reg, {}, set()).verdict == DIFFERS
    reg = {"v": Figure(id="v", value="not logged per chunk", unit="verdict", method="t")}
    assert check_claim(_claim({"equals": {"v": "not logged per chunk"}}), reg, {},
                       set()).verdict == CONFIRMED
    assert check_claim(_claim({"equals": {"v": "found"}}), reg, {}, set()).verdict == DIFFERS


def test_a_claim_without_a_figure_to_check_is_not_derivable():
    v = check_claim(_claim({"figure": "nowhere"}, 1.0, 0.1), {}, {}, set())
    assert (v.verdict, v.reason) == ("not derivable", "missing")


def test_another_engine_first_contradicts_a_speedup_claim():
    """'vLLM about 1.5x faster' against data where SGLang finished first at 1.5x: the ratio
    matches, the winner does not, so the claim is contradicted, not confirmed."""
    check = {"figure": "e2e.64k.speedup", "winner": {"e2e.64k.faster": "vllm"}}
    reg = {**_reg(e2e__64k__speedup=1.5), "e2e.64k.faster": Figure(
        id="e2e.64k.faster", value="sglang", unit="engine", method="test")}
    v = check_claim(_claim(check, 1.5, 0.1), reg, {}, set())
    assert (v.verdict, v.reason, v.params["which"], v.recomputed) == \
        (CONTRADICTED, "winner_differs", ["sglang"], 1.5)
    reg["e2e.64k.faster"] = Figure(id="e2e.64k.faster", value="vllm", unit="engine",
                                   method="test")
    assert check_claim(_claim(check, 1.5, 0.1), reg, {}, set()).verdict == CONFIRMED


def test_lowest_and_highest_name_the_figure_that_holds_the_extreme():
    """"Best TTFT 0.260 s" names no point: the least of the matching figures is checked,
    and the verdict says which figure holds it."""
    reg = _reg(c__a__v__c1__ttft=260.0, c__b__v__c4__ttft=480.0, c__a__s__c1__ttft=194.0,
               c__b__s__c4__ttft=193.0)
    check = {"lowest": {"vllm": "c.*.v.*.ttft", "sglang": "c.*.s.*.ttft"}}
    v = check_claim(_claim(check, {"vllm": 260, "sglang": 193}, 1), reg, {}, set())
    assert (v.verdict, v.reason) == (CONFIRMED, "lowest_within")
    assert v.recomputed == {"vllm": 260.0, "sglang": 193.0}
    assert v.params["which"] == ["vllm: c.a.v.c1.ttft", "sglang: c.b.s.c4.ttft"]
    v = check_claim(_claim(check, {"vllm": 250, "sglang": 193}, 1), reg, {}, set())
    assert (v.verdict, v.reason, v.params["keys"]) == (DIFFERS, "lowest_differs", ["vllm"])
    v = check_claim(_claim({"highest": {"x": "c.*.v.*.ttft"}}, {"x": 480}, 1), reg, {}, set())
    assert (v.verdict, v.recomputed) == (CONFIRMED, {"x": 480.0})
    v = check_claim(_claim({"lowest": {"x": "nothing.*"}}, {"x": 1}, 1), reg, {}, set())
    assert v.reason == "missing"


def test_exceeds_checks_an_order_the_claim_states():
    reg = _reg(a=70.6, b=39.5, c=10.0)
    v = check_claim(_claim({"exceeds": [["a", "b"], ["b", "c"]]}), reg, {}, set())
    assert (v.verdict, v.reason) == (CONFIRMED, "order_same")
    v = check_claim(_claim({"exceeds": [["b", "a"]]}), reg, {}, set())
    assert (v.verdict, v.params["which"]) == (CONTRADICTED, ["b 39.5 ≤ a 70.6"])
    assert check_claim(_claim({"exceeds": [["x", "a"]]}), reg, {}, set()).reason == "missing"


# --- differences below the noise ---------------------------------------------------------------

def _noisy(value, rounding, floor=None) -> Claim:
    return Claim(id="c", source=("a",), kind="figure", text={"ko": "k", "en": "e"},
                 value=value, rounding=rounding, check={"figure": ["d.mean", "d.lines"]},
                 noise_floor=floor, noise_why={"ko": "k", "en": "e"} if floor else None)


def test_a_gap_below_a_declared_floor_is_indistinguishable_unless_another_basis_matches():
    from benchreport.analyses.claimcheck import INDISTINGUISHABLE
    from benchreport.core.i18n import english

    # published 1.25 (to 0.01), like-for-like 1.2425: 0.0075 apart, outside ±0.005; the
    # per-line basis matches exactly, which says more than a floor the author declared
    reg = _reg(d__mean=1.2425, d__lines=1.25)
    assert check_claim(_noisy(1.25, 0.01), reg, {}, set()).verdict == METHOD
    v = check_claim(_noisy(1.25, 0.01, floor=0.01), reg, {}, set())
    assert (v.verdict, v.reason, v.params["alternatives"]) == (METHOD, "other_basis", ["d.lines"])
    # no alternative that matches: the gap below the declared floor is indistinguishable
    reg = _reg(d__mean=1.2425, d__lines=1.2)
    v = check_claim(_noisy(1.25, 0.01, floor=0.01), reg, {}, set())
    assert (v.verdict, v.reason) == (INDISTINGUISHABLE, "below_noise_declared")
    assert v.params == {"keys": ["value"], "declared_keys": ["value"], "floor": 0.01,
                        "gap": round(0.0075 / 1.2425, 4)}
    assert v.sentence(english()) == ("At most 0.6% apart (value): below the noise floor of 1.0% "
                                     "declared in claims.yaml.")
    # a floor smaller than the gap leaves the alternative basis as the explanation
    reg = _reg(d__mean=1.2425, d__lines=1.25)
    assert check_claim(_noisy(1.25, 0.01, floor=0.005), reg, {}, set()).verdict == METHOD
    # within the rounding it is confirmed whatever the floor
    v = check_claim(_noisy(1.24, 0.01, floor=0.01), reg, {}, set())
    assert v.verdict == CONFIRMED
    # a gap above the floor with no alternative that matches differs
    v = check_claim(_noisy(1.27, 0.01, floor=0.01), _reg(d__mean=1.2425, d__lines=1.2425),
                    {}, set())
    assert v.verdict == DIFFERS


def test_the_figures_own_interval_is_the_floor_where_it_has_one():
    from benchreport.analyses.claimcheck import INDISTINGUISHABLE

    reg = _reg(d__mean=1.2425, d__lines=1.25, d__mean__low=1.21, d__mean__high=1.27)
    v = check_claim(_noisy(1.25, 0.01), reg, {}, set())
    assert (v.verdict, v.reason, v.params) == (INDISTINGUISHABLE, "below_noise_interval",
                                               {"keys": ["value"]})
    # the interval, measured, overrides a declared floor: outside it, not below the noise
    reg = _reg(d__mean=1.2425, d__lines=1.25, d__mean__low=1.24, d__mean__high=1.245)
    assert check_claim(_noisy(1.25, 0.01, floor=0.01), reg, {}, set()).verdict == METHOD


def test_keys_below_different_floors_and_the_worst_part_decides():
    from benchreport.analyses.claimcheck import INDISTINGUISHABLE

    reg = _reg(a=100.0, a__low=95.0, a__high=105.0, b=200.0)
    claim = Claim(id="c", source=("x",), kind="figure", text={"ko": "k", "en": "e"},
                  value={"a": 103, "b": 201}, rounding=1, check={"figures": {"a": "a", "b": "b"}},
                  noise_floor=0.01, noise_why={"ko": "k", "en": "e"})
    v = check_claim(claim, reg, {}, set())
    assert (v.verdict, v.reason) == (INDISTINGUISHABLE, "below_noise_mixed")
    assert v.params == {"keys": ["a"], "declared_keys": ["b"], "floor": 0.01, "gap": 0.005}
    # an indistinguishable part makes a claim whose other part is confirmed indistinguishable
    both = Claim(id="c", source=("x",), kind="figure", text={"ko": "k", "en": "e"},
                 value=201, rounding=1, noise_floor=0.01, noise_why={"ko": "k", "en": "e"},
                 check={"figure": "b", "equals": {"v": "yes"}})
    reg["v"] = Figure(id="v", value="yes", unit="verdict", method="t")
    assert check_claim(both, reg, {}, set()).verdict == INDISTINGUISHABLE
    # and a causal claim within the noise stays indistinguishable, not "consistent"
    causal = Claim(id="c", source=("x",), kind="figure", text={"ko": "k", "en": "e"},
                   value=201, rounding=1, noise_floor=0.01, noise_why={"ko": "k", "en": "e"},
                   check={"figure": "b"}, causal=True)
    assert check_claim(causal, reg, {}, set()).verdict == INDISTINGUISHABLE


def test_indistinguishable_on_a_calibrated_figure_is_not_counted_as_evidence():
    """Evidence is a verdict on measured figures only, whatever the verdict: an
    indistinguishable or different-method verdict on calibrated figures is not."""
    from types import SimpleNamespace

    from benchreport.analyses.claimcheck import (
        INDISTINGUISHABLE,
        indistinguishable_figure,
        informative_figure,
    )

    src = {"path": "claims.yaml", "sha256": "0" * 64}
    verdicts = [SimpleNamespace(claim="a", verdict=INDISTINGUISHABLE, calibrated=["t"]),
                SimpleNamespace(claim="b", verdict=INDISTINGUISHABLE, calibrated=[]),
                SimpleNamespace(claim="c", verdict=CONFIRMED, calibrated=["t"]),
                SimpleNamespace(claim="d", verdict=METHOD, calibrated=["t"])]
    claims = [SimpleNamespace(id=v.claim) for v in verdicts]
    bases = ["calibrated", "measured", "calibrated", "calibrated"]
    informative = informative_figure(claims, bases, src)
    assert (informative.value, informative.context["claims"]) == (1, ["b"])
    quiet = indistinguishable_figure(verdicts, src)
    assert (quiet.value, quiet.depends_on) == (2, ("claim.a", "claim.b"))


def test_an_agreement_that_a_fitted_basis_gives_too_is_by_design():
    """Each value agrees on the strongest of the bases that give it: where the basis the
    generator was fitted to agrees as well as the seed's like-for-like one, the agreement
    is by design (SGLang's 200K decode: the line mean 268 was fitted, the time-weighted
    267.6 drawn by the seed; the eleventh editor read); where only the seed's agrees, the
    seed set it."""
    from dataclasses import replace

    from benchreport.analyses.claimcheck import claim_basis

    reg = _reg(d__mean=267.6, d__lines=268.0, d__min=252.0)
    reg = {k: replace(f, provenance="calibrated" if k != "d.mean" else "free")
           for k, f in reg.items()}
    claim = _claim({"figures": {"mean": ["d.mean", "d.lines"], "min": "d.min"}},
                   {"mean": 268, "min": 252}, 1)
    v = check_claim(claim, reg, {}, set())
    assert v.verdict == CONFIRMED and v.agreeing == {"mean": ["d.mean", "d.lines"],
                                                     "min": ["d.min"]}
    assert claim_basis(reg, v, "model-derived") == "calibrated"
    # the fitted basis off by more than the rounding: only the seed's value agrees
    reg["d.lines"] = replace(reg["d.lines"], value=270.0)
    v = check_claim(claim, reg, {}, set())
    assert v.agreeing["mean"] == ["d.mean"] and claim_basis(reg, v, "model-derived") == "free"
    # a measured run: measured either way
    plain = {k: replace(f, provenance="measured") for k, f in reg.items()}
    assert claim_basis(plain, check_claim(claim, plain, {}, set()), "measured") == "measured"
