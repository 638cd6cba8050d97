"""No conclusion is typed into a template: every sentence that compares, concludes or
explains is picked by a computed figure, and flipping the figure flips the sentence."""

import re
from pathlib import Path

import pytest

from benchreport.analyses.gap import BOTH, DECODE, FIRST_TOKENS, split_figures, where
from benchreport.core.i18n import load_catalogue
from benchreport.core.metrics import compare_lower_is_better
from benchreport.core.records import PointResult, RawFile
from benchreport.core.runmeta import Workload
from benchreport.publish.sections import CHOSEN_BY

LABELS = Path(__file__).resolve().parent.parent / "templates" / "labels"


def as_measured(registry: dict) -> dict:
    """The reference run's figures as if they were measured: its sentences as a real run
    with these values would print them (the reconstruction's own provenance replaces the
    findings with what the generator set: tested in test_figure_provenance.py)."""
    from dataclasses import replace

    return {k: replace(f, provenance="measured", provenance_why="") for k, f in registry.items()}
# Words that compare engines, draw a conclusion or give a cause.
CLAIMING = re.compile(
    r"\b(faster|slower|quicker|wins?|first at|finished first|completed the benchmark first|"
    r"decides?|because|explains?|overstates?|understates?|most of|closer|prefer|"
    r"did not limit|may have limited|is mixed into|dominat\w*|favours?|ahead|sustains? more|"
    r"a tie|more output throughput|stops rising)\b", re.I)


def test_every_claiming_sentence_is_chosen_by_a_figure():
    en = load_catalogue(LABELS, "en")
    claiming = {k for k, v in en.items() if CLAIMING.search(v)}
    # sentences that only define a metric or a table column are not claims
    defining = {k for k in claiming if k.startswith(("metric.", "table.", "setting."))}
    missing = sorted(claiming - defining - set(CHOSEN_BY))
    assert not missing, f"sentences with a comparison or conclusion no figure selects: {missing}"


def test_every_listed_sentence_exists_in_both_languages():
    en, ko = load_catalogue(LABELS, "en"), load_catalogue(LABELS, "ko")
    for key, figure in CHOSEN_BY.items():
        assert key in en and key in ko, key
        assert re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_<>]+)+", figure), figure


def test_no_fixed_causal_sentence_is_left():
    en = load_catalogue(LABELS, "en")
    assert not any("decides the outcome" in v for v in en.values())


def _entry(engine: str, duration: float, ttfts: list[float]) -> PointResult:
    raw = RawFile(path=Path(f"/x/{engine}.json"), rel=f"data/r/raw/{engine}/{engine}.json",
                  sha256="0" * 64)
    row = {"engine": engine, "workload": "w", "point": f"{engine}.w.c4.r1", "line": 1,
           "client": "vllm-bench-serve", "duration": duration, "completed": len(ttfts)}
    requests = [{"point": row["point"], "index": i, "ttft_ms": t * 1000.0}
                for i, t in enumerate(ttfts)]
    return PointResult.from_rows(row, requests, raw)


WL = Workload(id="w", label="W", input_tokens=1000, output_tokens=100, concurrency=4,
              num_prompts=4)


def _split(a: tuple[float, list[float]], b: tuple[float, list[float]]) -> dict:
    entries = [_entry("a", *a), _entry("b", *b)]
    cmp = compare_lower_is_better({"a": a[0], "b": b[0]})
    return {f.id: f.value for f in split_figures(WL, entries, cmp)}


def test_gap_split_follows_the_first_token_times():
    # b is 30 s slower; 25 s of it before its last first token
    figs = _split((100.0, [1, 2, 3, 10]), (130.0, [1, 5, 20, 35]))
    assert figs["e2e.w.gap_s"] == 30.0
    assert figs["e2e.w.gap.first_tokens_s"] == 25.0
    assert figs["e2e.w.gap.decode_tail_s"] == 5.0
    assert figs["e2e.w.gap.where"] == FIRST_TOKENS
    assert round(figs["e2e.w.gap.decode_share"], 1) == 16.7
    # the same gap, but b reached its first tokens as early as a: all of it is decode
    figs = _split((100.0, [1, 2, 3, 10]), (130.0, [1, 2, 3, 10]))
    assert figs["e2e.w.gap.where"] == DECODE and figs["e2e.w.gap.decode_share"] == 100.0


def test_swapping_the_first_token_share_changes_the_sentence(reference_build):
    """On the reference article: 64K splits about 44/56; swap the engines' first-token
    times so the slower engine's lag lies before its first tokens, and the sentence
    changes."""
    from benchreport.core.i18n import load_catalogue
    from benchreport.pipeline.explain import registry_of
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.sections import gap_sentences

    run = reference_build
    registry = as_measured(registry_of(run))    # read as a real run's figures
    t = load_catalogue(LABELS, "en")
    said, unanswered = gap_sentences(Writer(run, registry, "en", t))
    assert not unanswered                       # measured figures: findings, no open question
    text = " ".join(s.striptags() for s in said)
    assert "At 64K, SGLang finished 50.3 s after vLLM. Of that gap, 22.2 s (44%)" in text
    # at 200K the slower engine had its first tokens sooner: the whole gap is decode
    assert "At 200K, vLLM finished 69.9 s after SGLang, although it had every request's " \
        "first token 1.8 s sooner: all of the gap, and more (71.7 s)" in text
    assert registry["e2e.64k.gap.where"].value == BOTH
    # the slower engine's lag lies before its first tokens: another sentence
    from dataclasses import replace
    registry["e2e.64k.gap.where"] = replace(registry["e2e.64k.gap.where"], value=FIRST_TOKENS)
    flipped = " ".join(s.striptags() for s in gap_sentences(Writer(run, registry, "en", t))[0])
    assert "it lies before the first tokens, not in the decode tail" in flipped
    assert "Of that gap, 22.2 s (44%)" not in flipped


@pytest.mark.parametrize("share, expect", [(0.9, FIRST_TOKENS), (0.5, BOTH), (0.2, DECODE),
                                           (-0.03, DECODE), (2 / 3, FIRST_TOKENS)])
def test_where_thresholds(share, expect):
    assert where(share) == expect


def test_the_mixed_basis_sentence_follows_its_direction(reference_build):
    """Peak over mean above mean over mean overstates the drop; below, it understates it."""
    from dataclasses import replace

    from benchreport.pipeline.explain import registry_of
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.sections import decode_section

    run = reference_build
    registry = as_measured(registry_of(run))    # read as a real run's figures
    t = load_catalogue(LABELS, "en")

    def text(reg) -> str:
        return " ".join(p.striptags() for p in decode_section(Writer(run, reg, "en", t))
                        .paragraphs)

    assert "gives 3.29×, which overstates the drop" in text(registry)
    key = "decode.degradation.vllm.peak_over_mean"
    registry[key] = replace(registry[key], value=2.5)
    assert "gives 2.50×, which understates the drop" in text(registry)


def test_a_mean_chunk_gap_above_its_p99_is_explained_and_only_then(reference_build):
    """On the reference run every engine's mean gap between chunks lies above its p99:
    the sentence says what carries it (the share of time in the gaps above the p99, the
    longest gap). Put the mean below the p99 and the sentence goes."""
    from dataclasses import replace

    from benchreport.pipeline.explain import registry_of
    from benchreport.publish.narrative_base import Writer
    from benchreport.publish.sections import latency_notes

    run = reference_build
    registry = as_measured(registry_of(run))    # read as a real run's figures
    t = load_catalogue(LABELS, "en")

    def notes(reg, lang="en", cat=t) -> list[str]:
        return [" ".join(n.striptags().split()) for n in latency_notes(Writer(run, reg, lang,
                                                                              cat), "200k")]

    bases = ("The engines' clients measure ITL differently (vLLM: gap between consecutive "
             "streamed chunks, pooled over all requests; SGLang: gap between consecutive "
             "streamed chunks divided evenly over the tokens")
    assert notes(registry)[-1].startswith(bases)
    assert notes(registry)[-1].endswith("so the ITL rows do not compare across engines; the "
                                        "TPOT rows, defined alike, do.")
    # SGLang's file keeps no per-request TPOT or E2E: the dash in their range is explained
    assert notes(registry)[-2] == ("A range of per-request values shown as '–' means the "
                                   "client's result file keeps no per-request values of "
                                   "that metric.")
    assert notes(registry)[:-2] == [
        "vLLM at 200K: the mean gap between streamed chunks (77.7 ms) is above its p99 "
        "(64.8 ms). The gaps longer than the p99 (one in a hundred) hold 21% of all the time "
        "between chunks; the longest is 2,049.2 ms.",
        "SGLang at 200K: the mean gap per token (53.2 ms; its client divides each streamed "
        "chunk's gap over the tokens it brought) is above its p99 (40.6 ms). The gaps longer "
        "than the p99 (one in a hundred) hold 30% of all the time between tokens; the longest "
        "is 97.6 s."]
    assert notes(registry, "ko", load_catalogue(LABELS, "ko"))[1].startswith(
        "200K에서 SGLang의 토큰당 평균 간격(53.2 ms, 이 클라이언트는")
    key = "latency.200k.sglang.itl.mean"
    registry[key] = replace(registry[key], value=38.0)
    assert [n.split(":")[0] for n in notes(registry)[:-2]] == ["vLLM at 200K"]
    # the clients' ITL definitions made alike: the sentence on their bases goes
    for key in ("latency.200k.vllm.itl.mean", "latency.200k.sglang.itl.mean"):
        registry[key] = replace(registry[key], context={**registry[key].context,
                                                        "definition": "itl.per-chunk"})
    assert not any(n.startswith("The engines' clients") for n in notes(registry))
