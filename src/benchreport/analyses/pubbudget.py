"""The time budget a published text's own figures give (analyses.budget, from claims).

Where claims.yaml holds an engine's published steady decode mean at a workload, a published
steady prefill rate (the engine's own mean, else the range the text gives for all engines)
and the published duration, the run's workload (tokens per request and number of requests)
gives what those rates take:

    expected = input tokens ÷ prefill rate + output tokens ÷ decode mean

seconds, from the fastest and the slowest published prefill rate, and the published
duration less that is time the published rates do not account for. It rests on no value
a reconstruction's generator drew, only on the published text and the workload run.yaml
declares (whose provenance it carries). A remainder of at least ``UNEXPLAINED_MIN_S``
seconds and ``UNEXPLAINED_MIN_PCT`` percent of the duration even at the slowest prefill
rate is counted in ``claims.unexplained``, whose context lists the workloads and engines.
"""

from __future__ import annotations

from typing import Any

from ..core import ids
from ..core.claims import Claim
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.provenance import CALIBRATED, reason
from ..core.runmeta import RunMeta
from .budget import UNEXPLAINED_MIN_PCT, UNEXPLAINED_MIN_S, unexplained

__all__ = ["published_budget"]

RATES = ("published_prefill_min", "published_prefill_max", "published_decode",
         "published_duration")


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def published_values(claims: list[Claim]) -> dict[str, tuple[float, Claim]]:
    """Each figure id a claim checks a published number against (the first, like-for-like
    id of its ``check.figures`` entry), with that number and the claim."""
    out: dict[str, tuple[float, Claim]] = {}
    for c in claims:
        figs = (c.check or {}).get("figures")
        if not isinstance(figs, dict) or not isinstance(c.value, dict):
            continue
        for key, fid in figs.items():
            first = fid[0] if isinstance(fid, list) and fid else fid
            value = _number(c.value.get(key))
            if isinstance(first, str) and value is not None and value > 0:
                out.setdefault(first, (value, c))
    return out


def _rates(w: str, e: str, pub: dict) -> dict[str, tuple[float, Claim]] | None:
    """The published rates and duration of one engine at one workload, or None."""
    own = pub.get(ids.prefill(w, e, "mean"))
    low, high = (own, own) if own else (pub.get(ids.prefill_range("min")),
                                        pub.get(ids.prefill_range("max")))
    held = dict(zip(RATES, (low, high, pub.get(ids.decode(w, e, "mean")),
                            pub.get(ids.e2e(w, e, "duration"))), strict=True))
    return held if all(held.values()) else None


def _tokens(w: str, registry: dict[str, Figure]) -> tuple[float, float] | None:
    """The workload's input and output tokens in all, as run.yaml declares them."""
    vals = [_number(registry[f].value) if f in registry else None
            for f in (ids.workload(w, n) for n in ("input_tokens", "output_tokens",
                                                   "num_prompts"))]
    if any(v is None or v <= 0 for v in vals):
        return None
    return vals[0] * vals[2], vals[1] * vals[2]


def _published(fid: str, value: float, c: Claim, unit: str, src: dict, ctx: dict) -> Figure:
    return figure(fid, value, unit, said("budget.published_value", claim=c.id),
                  sources=(Source(key=f"claims[id={c.id}]", lines=(c.line,), **src),),
                  decimals=1 if unit == "s" else 0, provenance=CALIBRATED, context=ctx,
                  provenance_why=reason("published_value", claim=c.id))


def _engine(w: str, e: str, held: dict, tokens: tuple[float, float],
            src: dict) -> list[Figure]:
    name = {k: ids.budget(w, e, k) for k in (*RATES, "published_expected_min_s",
                                             "published_expected_max_s",
                                             "published_unexplained_min_s",
                                             "published_unexplained_max_s")}
    ctx = {"engine": e, "workload": w}
    made = [_published(name[k], v, c, "s" if k == "published_duration" else "tok/s", src, ctx)
            for k, (v, c) in held.items()]
    inputs = tuple(ids.workload(w, n) for n in ("input_tokens", "output_tokens",
                                                "num_prompts"))
    rate = {k: v for k, (v, _) in held.items()}
    decode_s = tokens[1] / rate["published_decode"]
    lo = tokens[0] / rate["published_prefill_max"] + decode_s
    hi = tokens[0] / rate["published_prefill_min"] + decode_s
    dur = rate["published_duration"]
    for key, value, deps in (
            ("published_expected_min_s", lo, ("published_prefill_max", "published_decode")),
            ("published_expected_max_s", hi, ("published_prefill_min", "published_decode")),
            ("published_unexplained_min_s", dur - hi,
             ("published_duration", "published_expected_max_s")),
            ("published_unexplained_max_s", dur - lo,
             ("published_duration", "published_expected_min_s"))):
        made.append(figure(name[key], value, "s", said("budget." + key), decimals=1,
                           depends_on=(*(name[d] for d in deps), *inputs), context=ctx))
    return made


def published_budget(meta: RunMeta, claims: list[Claim], registry: dict[str, Figure],
                     src: dict) -> list[Figure]:
    """The published-rate budget of every engine and workload the claims give rates for,
    and ``claims.unexplained``: those whose remainder passes the thresholds."""
    pub = published_values(claims)
    figures, short, cited = [], [], []
    for wl in meta.workloads:
        tokens = _tokens(wl.id, registry)
        for eng in meta.engines:
            held = _rates(wl.id, eng.id, pub) if tokens else None
            if held is None:
                continue
            made = _engine(wl.id, eng.id, held, tokens, src)
            figures += made
            left = next(f.value for f in made
                        if f.id == ids.budget(wl.id, eng.id, "published_unexplained_min_s"))
            if unexplained(left, held["published_duration"][0]):
                short.append([wl.id, eng.id])
                # the write-ups of the rates (the duration is every write-up's)
                cited += [a for k, (_, c) in held.items() if k != "published_duration"
                          for a in c.source]
    figures.append(figure(
        ids.CLAIMS_UNEXPLAINED, len(short), "count", said("claims.unexplained",
                                                         seconds=UNEXPLAINED_MIN_S,
                                                         share=UNEXPLAINED_MIN_PCT),
        decimals=0, sources=(Source(key="claims", **src),),
        depends_on=tuple(ids.budget(w, e, "published_unexplained_min_s") for w, e in short),
        context={"budgets": short, "sources": list(dict.fromkeys(cited))}))
    return figures
