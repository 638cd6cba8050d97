"""data/<RUN>/claims.yaml: what the published text says, to be checked against the data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import ConfigError
from ..core.yamlio import Located, load_yaml

__all__ = ["AGREES", "CONFIRMED", "CONSISTENT", "CONTRADICTED", "DIFFERS", "FITTED",
           "INDISTINGUISHABLE", "KINDS", "METHOD", "NOT_DERIVABLE", "REASONS", "SHARE_PARAMS",
           "Claim", "parse_claims"]

KINDS = ("figure", "qualitative", "setting")
# What a check can conclude, and why: codes; the words are in the catalogues
# (verdict.<verdict>, reason.<code>). analyses.claimcheck decides them.
CONFIRMED, CONSISTENT, DIFFERS, METHOD, CONTRADICTED, NOT_DERIVABLE = (
    "confirmed", "consistent with the data", "differs", "different method",
    "contradicted by the data", "not derivable")
# A difference outside half the published rounding but below a stated noise floor (the
# figure's own interval of repeats, or a floor claims.yaml declares): the data cannot tell
# the published value from the recomputed one, so neither "confirmed" nor another basis.
INDISTINGUISHABLE = "indistinguishable"
# In a reconstruction, a published value that matches only a basis the generator was fitted
# to (another than the like-for-like one): the match is the reconstruction's, set by design,
# and says nothing of how the published text computed it (a real run's is "different method")
FITTED = "matches by construction"
# The verdicts that agree with the published value: on a figure the reconstruction was
# calibrated to, they agree by construction and carry no information.
AGREES = (CONFIRMED, INDISTINGUISHABLE, FITTED)
# Reason params that are shares, and how a sentence prints them.
SHARE_PARAMS = {"within": "{:.0%}", "gap": "{:.1%}", "floor": "{:.1%}"}
# Why a verdict is what it is: a code; the sentences live in the catalogues (reason.<code>).
REASONS = ("within_rounding", "other_basis", "other_basis_fitted", "differs", "missing",
           "setting_differs", "settings_match", "differs_listed", "not_all_differ",
           "settings_differ", "nothing_differs", "events_match", "events_differ",
           "engine_without_events",
           "similar", "not_similar", "equals", "linear_closer", "linear", "not_linear",
           "at_least", "below", "cold_start", "cause_not_measured", "not_derivable",
           "sources_disagree", "winner_differs", "winner_same", "lowest_within",
           "lowest_differs", "highest_within", "highest_differs", "order_same",
           "order_differs", "below_noise_interval", "below_noise_declared",
           "below_noise_mixed", "within_propagated")



def _noise_floor(item: Located, cid: str, path: str, line: int) -> dict[str, Any]:
    """``noise_floor: {share: 0.01, why: {ko: …, en: …}}``: a declared floor must say why."""
    if "noise_floor" not in item:
        return {}
    nf = item["noise_floor"]
    share = nf.get("share") if isinstance(nf, dict) else None
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < 1:
        raise ConfigError(f"claim {cid}: noise_floor.share must be a share between 0 and 1",
                          path=path, line=line)
    why = nf.get("why")
    if not isinstance(why, dict) or set(why) != {"ko", "en"}:
        raise ConfigError(f"claim {cid}: noise_floor.why needs ko and en", path=path, line=line)
    return {"noise_floor": float(share), "noise_why": dict(why)}


@dataclass(frozen=True)
class Claim:
    id: str
    source: tuple[str, ...]        # article keys
    kind: str
    text: dict[str, str]           # ko/en paraphrase (ours)
    value: Any = None
    unit: str | None = None
    rounding: float | None = None  # published precision: half of it is the tolerance
    figure: str | None = None      # registry id (pattern) it is checked against
    line: int = 0
    check: dict | None = None      # how it is checked (see claimcheck)
    why: dict[str, str] | None = None   # ko/en: why the data cannot tell (all or the rest)
    scope: dict[str, str] | None = None  # ko/en: the part of the claim the check covers
    causal: bool = False           # states a cause: agreeing data make it "consistent"
    # a declared noise floor (a share of the recomputed value) and, ko/en, why it is that;
    # used only where the figure has no interval of its own
    noise_floor: float | None = None
    noise_why: dict[str, str] | None = None
    # what another write-up says against the claim, in our words: {source, ko, en}
    against: dict[str, str] | None = None
    # published values the text computed from its other published, rounded values: key ->
    # {source key: power} (``ms_per_token: {per_request: -1}`` for "26.8 tok/s, i.e.
    # 37.3 ms"); the check widens such a value's tolerance by what their rounding carries
    derived: dict[str, dict[str, float]] | None = None

    def why_text(self, lang: str) -> str:
        return (self.why or {}).get(lang, "")


def _against(item: Located, cid: str, articles: dict, path: str, line: int
             ) -> dict[str, str] | None:
    """``against: {source: <article>, ko: ..., en: ...}``: what another write-up says
    against the claim, in our words (the claims table cites it where a reconstruction's
    data, made from that write-up, is no evidence of its own)."""
    if "against" not in item:
        return None
    a = item["against"]
    if not isinstance(a, dict) or set(a) != {"source", "ko", "en"} \
            or a["source"] not in articles:
        raise ConfigError(f"claim {cid}: against needs source (an article key), ko and en",
                          path=path, line=line)
    return {k: str(v) for k, v in a.items()}


def _derived(item: Located, cid: str, path: str, line: int) -> dict[str, dict[str, float]] | None:
    """``derived: {key: {source key: power}}``: each key and source a key of the claim's
    value, each power a nonzero number (the published key is a constant times the product
    of its sources raised to their powers)."""
    if "derived" not in item:
        return None
    spec, value = item["derived"], item.get("value")
    keys = set(value) if isinstance(value, dict) else set()
    ok = isinstance(spec, dict) and all(
        k in keys and isinstance(src, dict) and src and all(
            s in keys and s != k and isinstance(p, int | float) and not isinstance(p, bool)
            and p != 0 for s, p in src.items())
        for k, src in spec.items())
    if not ok:
        raise ConfigError(f"claim {cid}: derived maps a key of its value to {{key: power}} "
                          "of its other keys", path=path, line=line)
    return {str(k): {str(s): float(p) for s, p in src.items()} for k, src in spec.items()}


def parse_claims(text: str, path: str) -> tuple[dict[str, dict[str, Any]], list[Claim]]:
    """Validate claims.yaml; return (articles, claims). An article is {"file": name,
    "title": {ko, en} or None}."""
    doc = load_yaml(text, path)
    if not isinstance(doc, Located) or doc.get("schema") != 1:
        raise ConfigError("expected a mapping with schema: 1", path=path, line=1)
    articles = doc.get("articles")
    if not isinstance(articles, dict) or not articles:
        raise ConfigError("'articles' must map keys to article files", path=path, line=doc.line)
    for key, art in articles.items():
        # an article is its file name, or {file: ..., title: {ko: ..., en: ...}}: the title
        # is what the claims table shows a reader
        if isinstance(art, dict) and not (isinstance(art.get("title"), dict)
                                          and set(art["title"]) == {"ko", "en"}):
            raise ConfigError(f"article {key!r}: title needs ko and en", path=path,
                              line=art.line if isinstance(art, Located) else doc.line)
    claims, seen = [], set()
    for item in doc.get("claims") or []:
        line = item.line if isinstance(item, Located) else doc.lines.get("claims", 1)
        if not isinstance(item, Located):
            raise ConfigError("each claim must be a mapping", path=path, line=line)
        for key in ("id", "source", "kind", "text"):
            if key not in item:
                raise ConfigError(f"claim is missing {key!r}", path=path, line=line)
        cid = str(item["id"])
        if cid in seen:
            raise ConfigError(f"duplicate claim id {cid!r}", path=path, line=line)
        seen.add(cid)
        if item["kind"] not in KINDS:
            raise ConfigError(f"claim {cid}: kind must be one of {KINDS}", path=path, line=line)
        unknown = [s for s in item["source"] if s not in articles]
        if unknown:
            raise ConfigError(f"claim {cid}: unknown article {unknown[0]!r}", path=path, line=line)
        text_ = item["text"]
        if not isinstance(text_, dict) or set(text_) != {"ko", "en"}:
            raise ConfigError(f"claim {cid}: text needs ko and en", path=path, line=line)
        extras = {}
        for key in ("why", "scope"):
            if key in item and (not isinstance(item[key], dict)
                                or set(item[key]) != {"ko", "en"}):
                raise ConfigError(f"claim {cid}: {key} needs ko and en", path=path, line=line)
            extras[key] = dict(item[key]) if key in item else None
        extras.update(_noise_floor(item, cid, path, line))
        extras["against"] = _against(item, cid, articles, path, line)
        extras["derived"] = _derived(item, cid, path, line)
        if not isinstance(item.get("causal", False), bool):
            raise ConfigError(f"claim {cid}: causal must be true or false", path=path, line=line)
        claims.append(Claim(id=cid, source=tuple(item["source"]), kind=item["kind"],
                            text=dict(text_), value=item.get("value"), unit=item.get("unit"),
                            rounding=item.get("rounding"), figure=item.get("figure"),
                            line=line, check=item.get("check"), causal=item.get("causal", False),
                            **extras))
    if not claims:
        raise ConfigError("no claims listed", path=path, line=doc.line)
    return {k: {"file": str(v["file"]), "title": dict(v["title"])} if isinstance(v, dict)
            else {"file": str(v), "title": None} for k, v in articles.items()}, claims
