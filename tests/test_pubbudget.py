"""The time budget of a published text's own figures (analyses.pubbudget): the published
steady prefill and decode rates against the published duration, for the workload run.yaml
declares; nothing the reconstruction's generator drew enters it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchreport.analyses.pubbudget import published_budget, published_values
from benchreport.core import ids
from benchreport.core.claims import Claim
from benchreport.core.figures import figure
from benchreport.core.provenance import CALIBRATED

SRC = {"path": "data/run/claims.yaml", "sha256": "ab"}


def _claim(cid, value, figures, source=("detailed",)):
    return Claim(id=cid, source=source, kind="figure", text={"ko": "", "en": ""},
                 value=value, check={"figures": figures}, line=3)


def _claims(sglang_duration=150.8, decode_mean=335):
    return [
        _claim("durations", {"vllm": 100.5, "sglang": sglang_duration},
               {"vllm": ids.e2e("64k", "vllm", "duration"),
                "sglang": ids.e2e("64k", "sglang", "duration")}, ("detailed", "summary")),
        _claim("prefill", {"min": 19000, "max": 23000},
               {"min": ids.prefill_range("min"), "max": ids.prefill_range("max")}),
        # the like-for-like id comes first; the alternatives after it are not the mean
        _claim("decode-sglang", {"mean": decode_mean, "max": 418},
               {"mean": [ids.decode("64k", "sglang", "mean"),
                         ids.decode("64k", "sglang", "mean_of_lines")],
                "max": ids.decode("64k", "sglang", "max")}),
        # vLLM's 64K gives a range and a peak, no mean: no budget for it
        _claim("decode-vllm", {"min": 439, "max": 537},
               {"min": ids.decode("64k", "vllm", "min"),
                "max": ids.decode("64k", "vllm", "max")}),
    ]


def _meta():
    return SimpleNamespace(workloads=[SimpleNamespace(id="64k", label="64K")],
                           engines=[SimpleNamespace(id="vllm"), SimpleNamespace(id="sglang")])


def _registry(requests=10):
    made = [figure(ids.workload("64k", "input_tokens"), 65536, "tokens", "declared"),
            figure(ids.workload("64k", "output_tokens"), 3072, "tokens", "declared")]
    if requests:
        made.append(figure(ids.workload("64k", "num_prompts"), requests, "count", "declared"))
    return {f.id: f for f in made}


def test_published_values_take_the_like_for_like_id_of_each_key():
    pub = published_values(_claims())
    assert pub[ids.decode("64k", "sglang", "mean")][0] == 335.0
    assert ids.decode("64k", "sglang", "mean_of_lines") not in pub
    assert pub[ids.prefill_range("max")][0] == 23000.0
    assert pub[ids.e2e("64k", "sglang", "duration")][1].id == "durations"


def test_the_published_rates_leave_sglangs_64k_time_unexplained():
    figs = {f.id: f for f in published_budget(_meta(), _claims(), _registry(), SRC)}
    name = lambda k: ids.budget("64k", "sglang", k)        # noqa: E731
    decode_s = 10 * 3072 / 335
    assert figs[name("published_expected_min_s")].value == pytest.approx(
        10 * 65536 / 23000 + decode_s)                                     # 120.2 s
    assert figs[name("published_expected_max_s")].value == pytest.approx(
        10 * 65536 / 19000 + decode_s)                                     # 126.2 s
    assert figs[name("published_unexplained_min_s")].value == pytest.approx(
        150.8 - 10 * 65536 / 19000 - decode_s)                             # 24.6 s
    assert figs[name("published_unexplained_max_s")].value == pytest.approx(
        150.8 - 10 * 65536 / 23000 - decode_s)                             # 30.6 s
    # the rates are the published text's, traceable to their claims
    assert figs[name("published_decode")].provenance == CALIBRATED
    assert figs[name("published_decode")].sources[0].key == "claims[id=decode-sglang]"
    assert ids.workload("64k", "num_prompts") in \
        figs[name("published_expected_min_s")].depends_on
    # vLLM: no published decode mean at 64K, so no budget
    assert not any(k.startswith(ids.budget("64k", "vllm", "")) for k in figs)
    count = figs[ids.CLAIMS_UNEXPLAINED]
    assert count.value == 1
    assert count.context == {"budgets": [["64k", "sglang"]], "sources": ["detailed"]}


@pytest.mark.parametrize("duration, counted", [
    (150.8, 1),      # 24.6 s even at the slowest prefill: 16 %
    (130.0, 0),      # 3.8 s at the slowest prefill: under 5 s
])
def test_only_a_remainder_past_both_thresholds_at_the_slowest_prefill_is_counted(duration,
                                                                                 counted):
    figs = {f.id: f for f in published_budget(_meta(), _claims(sglang_duration=duration),
                                              _registry(), SRC)}
    assert figs[ids.CLAIMS_UNEXPLAINED].value == counted
    assert ids.budget("64k", "sglang", "published_unexplained_min_s") in figs


def test_no_budget_without_the_number_of_requests():
    figs = published_budget(_meta(), _claims(), _registry(requests=0), SRC)
    assert [f.id for f in figs] == [ids.CLAIMS_UNEXPLAINED]
    assert figs[0].value == 0
