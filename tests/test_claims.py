import pytest

from benchreport.core.claims import parse_claims
from benchreport.core.errors import ConfigError


@pytest.fixture(scope="module")
def reference(request):
    path = request.config.rootpath / "data/2024-b300/claims.yaml"
    return parse_claims(path.read_text(), "claims.yaml")


def test_reference_claims_cover_both_articles_and_the_known_contradictions(reference):
    articles, claims = reference
    assert set(articles) == {"detailed", "summary"}
    by_id = {c.id: c for c in claims}
    assert {s for c in claims for s in c.source} == {"detailed", "summary"}
    # the claims a later issue must flag
    assert by_id["only-engine-changed"].source == ("summary",)
    assert by_id["both-oom-at-095"].source == ("summary",)
    assert by_id["decode-degradation-vllm"].value == 3.29
    assert by_id["e2e-200k-speedup"].rounding == 0.01
    assert by_id["prefill-chunk-decay-sglang"].value == [22265, 21064, 19628, 18475, 17243, 16408]
    assert all(c.text["ko"] and c.text["en"] for c in claims)
    figures = [c for c in claims if c.kind == "figure"]
    assert all(c.value is not None for c in figures)


HEAD = "schema: 1\narticles: {a: x}\nclaims:\n"


@pytest.mark.parametrize("text, message", [
    (HEAD + "  - {id: x, source: [b], kind: figure, text: {ko: a, en: b}}\n",
     "unknown article 'b'"),
    (HEAD + "  - {id: x, source: [a], kind: guess, text: {ko: a, en: b}}\n",
     "kind must be one of"),
    (HEAD + "  - {id: x, source: [a], kind: figure, text: {ko: a}}\n",
     "text needs ko and en"),
    (HEAD + "  - {id: x, source: [a], kind: figure, text: {ko: a, en: b}}\n"
     "  - {id: x, source: [a], kind: figure, text: {ko: a, en: b}}\n", "duplicate claim id 'x'"),
])
def test_bad_claims_are_refused_with_the_line(text, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_claims(text, "claims.yaml")
    assert info.value.line >= 4


@pytest.mark.parametrize("floor, message", [
    ("{share: 2, why: {ko: a, en: b}}", "noise_floor.share must be a share"),
    ("{share: 0.01}", "noise_floor.why needs ko and en"),
    ("0.01", "noise_floor.share must be a share"),
])
def test_a_declared_noise_floor_needs_a_share_and_why(floor, message):
    text = ("schema: 1\narticles: {a: x}\nclaims:\n  - {id: x, source: [a], kind: figure, "
            f"text: {{ko: a, en: b}}, noise_floor: {floor}}}\n")
    with pytest.raises(ConfigError, match=message):
        parse_claims(text, "claims.yaml")


def test_the_reference_declares_its_decode_floor_with_why(reference):
    _, claims = reference
    floors = {c.id: c.noise_floor for c in claims if c.noise_floor}
    assert floors == {k: 0.01 for k in ("decode-degradation-vllm", "decode-degradation-sglang",
                                        "decode-vllm-64k", "decode-vllm-200k",
                                        "decode-sglang-64k", "decode-sglang-200k")}
    assert all(c.noise_why["ko"] and c.noise_why["en"] for c in claims if c.noise_floor)


@pytest.mark.parametrize("against", [
    "{source: b, ko: a, en: b}",          # no such article
    "{source: a, ko: a}",                 # no English
    "plain words",
])
def test_what_another_write_up_says_against_a_claim_needs_its_article_and_both_languages(
        against):
    text = ("schema: 1\narticles: {a: x}\nclaims:\n  - {id: x, source: [a], kind: qualitative, "
            f"text: {{ko: a, en: b}}, against: {against}}}\n")
    with pytest.raises(ConfigError, match="against needs source"):
        parse_claims(text, "claims.yaml")


def test_the_reference_cites_the_detailed_post_against_the_summarys_contradictions(reference):
    _, claims = reference
    against = {c.id: c.against["source"] for c in claims if c.against}
    assert against == {"only-engine-changed": "detailed", "both-oom-at-095": "detailed"}
