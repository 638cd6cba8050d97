import pytest

from benchreport.core.metrics import TIE, compare_lower_is_better


def test_published_durations_give_published_speedups():
    c64 = compare_lower_is_better({"vllm": 100.5, "sglang": 150.8})
    assert (c64.faster, c64.slower) == ("vllm", "sglang")
    assert c64.ratio == pytest.approx(150.8 / 100.5)
    assert round(c64.ratio, 2) == 1.50
    c200 = compare_lower_is_better({"vllm": 295.2, "sglang": 225.3})
    assert (c200.faster, c200.slower) == ("sglang", "vllm")
    assert round(c200.ratio, 2) == 1.31


def test_three_engines_rank_best_first_and_compare_with_runner_up():
    c = compare_lower_is_better({"a": 30.0, "b": 10.0, "c": 12.0})
    assert c.ranking == ("b", "c", "a")
    assert c.faster == "b"
    assert c.ratio == pytest.approx(1.2)


def test_ratio_rounding_to_one_is_a_tie():
    c = compare_lower_is_better({"a": 100.0, "b": 100.4})
    assert c.faster == TIE
    assert c.slower == "b"
    assert compare_lower_is_better({"a": 100.0, "b": 101.0}).faster == "a"


@pytest.mark.parametrize("values", [{"a": 1.0}, {"a": 0.0, "b": 1.0}, {"a": -1.0, "b": 2.0}])
def test_rejects_what_cannot_be_compared(values):
    with pytest.raises(ValueError):
        compare_lower_is_better(values)
