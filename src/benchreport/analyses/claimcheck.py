"""Check each published claim against the recomputed figures.

Each claim in claims.yaml says how it is checked (``check:``); one function per kind:

- ``figures: {key: id | [id, alternative ids…]}`` (or ``figure: id``): compare the published
  value(s) within half the published rounding; a match on an alternative only is
  "different method" (for example a ratio on a mixed peak/mean basis). The first id is the
  like-for-like basis, always. A value outside the rounding but inside the figure's own
  interval (``<id>.low`` … ``<id>.high``, from repeats) is "indistinguishable", whether or
  not an alternative matches: the measured spread covers it. Without an interval, an
  alternative that matches within the rounding explains the value better than a declared
  ``noise_floor`` (a share of the recomputed value, with why) does; with no alternative
  that matches, a gap below that floor is "indistinguishable". The reason names which
  floor it was. In a reconstruction, a match on an alternative that rests on the
  generator's fitted means alone (``MEAN_TARGETS``) is by construction: verdict
  "matches by construction", reason ``other_basis_fitted`` (the match says how the
  reconstruction was made, not how the published text computed its value); one that mixes
  an extreme with a mean stays a different method, ``other_basis``. A published value the
  text computed from its other rounded values (``derived:``) is judged within what their
  rounding carries into it too (reason ``within_propagated``).
- ``sequence: id``: a published list against a figure holding a list.
- ``settings: {setting: {engine: value}}``: launch settings as recorded.
- ``differs: [setting…]``: the caveats table lists these as differing.
- ``identical: true``: nothing but the engine changed (contradicted by any difference).
- ``zero: [id…]`` / ``nonzero: [id…]``: event counts.
- ``every_engine: [event…]``: each engine logged at least one of these events.
- ``similar: [[id, id], …]`` with ``within``: pairs no more than that share apart.
- ``equals: {id: value}``: a verdict figure has this value.
- ``linear: {change: id, context: id}`` with ``within``: a quantity changed in proportion
  to the context (change ÷ context within ``within`` of 1).
- ``at_least: {id: value}``: each figure is at least the value (for example a share).
- ``lowest: {key: pattern}`` / ``highest: {key: pattern}``: the published value against the
  least (greatest) of the figures whose ids match the pattern (``*`` as in a file glob), for
  a claim such as "best TTFT" that names no one point.
- ``exceeds: [[a, b], …]``: figure a is greater than figure b in every pair (an order the
  claim states, such as "SGLang leads on the repeated prefix").

A claim marked ``causal: true`` states a cause. Data that agree with it make it
"consistent with the data", never "confirmed": a cause is not measured.
Claims without ``check`` are "not derivable" from benchmark data, with ``why``.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..core import ids as figure_ids
from ..core.claims import (  # noqa: F401 (verdicts re-exported)
    AGREES,
    CONFIRMED,
    CONSISTENT,
    CONTRADICTED,
    DIFFERS,
    FITTED,
    INDISTINGUISHABLE,
    METHOD,
    NOT_DERIVABLE,
    REASONS,
    SHARE_PARAMS,
    Claim,
    parse_claims,
)
from ..core.figures import Figure, Source, figure, merge
from ..core.files import read_json, read_text
from ..core.i18n import english, load_catalogue
from ..core.methods import Said, given, said
from ..core.paths import LABELS
from ..core.provenance import (
    BY_CONSTRUCTION,
    CALIBRATED,
    MEASURED,
    parse_reason,
    reason_words,
    strongest,
    weakest,
)
from ..core.provenance import of as provenance_of
from ..core.records import Run
from ..core.tables import input_checksum
from ..core.verdicts import DURATION_CHECKS, INCONSISTENT
from ..synth.scenario import calibrated_patterns, load_scenario
from .provenance import rules_for, with_provenance
from .pubbudget import published_budget

__all__ = ["CHECKS", "CONFIRMED", "CONSISTENT", "CONTRADICTED", "Claim", "ClaimCheck", "Context",
           "DIFFERS", "FITTED", "INDISTINGUISHABLE", "METHOD", "NOT_DERIVABLE", "ORDER", "REASONS",
           "SHARE_PARAMS", "Verdict", "check_at_least", "check_claim", "check_differs",
           "check_equals", "check_events", "check_every_engine", "check_exceeds", "check_extreme",
           "check_figures", "check_identical", "check_linear", "check_sequence", "check_settings",
           "check_similar", "check_winner", "claim_basis", "claim_check",
           "contradicted_figure", "indistinguishable_figure", "informative_figure",
           "mixed_published_figure", "parse_claims"]


@dataclass
class Verdict:
    claim: str
    verdict: str
    published: Any
    recomputed: Any
    tolerance: float | None
    reason: str                      # reason code: claim.reason.<code> in the catalogues
    params: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    calibrated: list[str] = field(default_factory=list)   # what set the figures, if anything
    # the figures of each part of a check of several parts (similar, then at_least, …)
    parts: list[list[str]] = field(default_factory=list)
    # of a figures check, each key's figures that agree with its published value (the
    # like-for-like one and any alternative): claim_basis takes the strongest of each
    agreeing: dict[str, list[str]] = field(default_factory=dict)

    def sentence(self, t: dict[str, str]) -> str:
        """The reason in the words of catalogue ``t``."""
        params = {k: (SHARE_PARAMS[k].format(float(v)) if k in SHARE_PARAMS else v)
                  for k, v in self.flat_params().items()}
        params.setdefault("alternatives", "")
        return t[f"reason.{self.reason}"].format(**params)

    def flat_params(self) -> dict[str, str]:
        """The params as one line each, as the English sentence and a claim figure's
        context show them; ``params`` itself keeps the lists and dicts (claims.json)."""
        return {k: _flat(self.reason, v) for k, v in self.params.items()}


# A reason whose list is of pairs or settings reads best with its items apart by "; "
_LIST_JOIN = {"setting_differs": "; ", "not_similar": "; ", "lowest_within": "; ",
              "lowest_differs": "; ", "highest_within": "; ", "highest_differs": "; ",
              "order_same": "; ", "order_differs": "; "}


def _flat(reason: str, value: Any) -> str:
    """One param on one line: a list joined, a setting that differs as ``sid (engine:
    have)``."""
    if not isinstance(value, list):
        return str(value)
    return _LIST_JOIN.get(reason, ", ").join(
        f"{x['sid']} ({x['engine']}: {x['have']})" if isinstance(x, dict) else str(x)
        for x in value)


@dataclass(frozen=True)
class Context:
    """What every check may look at."""

    claim: Claim
    registry: dict[str, Figure]
    settings: dict[str, dict[str, str]]      # setting id -> engine -> value as compared
    differing: set[str]                      # setting ids that differ

    def fig(self, fid: str) -> Any:
        return self.registry[fid].value if fid in self.registry else None


def _num(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float):
        return float(x)
    if isinstance(x, str):
        m = re.match(r"^\s*([\d,]+(?:\.\d+)?)", x)
        if m:
            return float(m[1].replace(",", ""))
    return None


def _close(published: Any, value: Any, tol: float) -> bool:
    a, b = _num(published), _num(value)
    if a is None or b is None:
        return str(published).strip().lower() == str(value).strip().lower()
    return abs(a - b) <= tol + 1e-9


def _tolerance(claim: Claim, key: str | None = None) -> float:
    """Half the published rounding (per key when rounding is a mapping); else 0.5%."""
    r = claim.rounding
    if isinstance(r, dict):
        r = r.get(key)
    return r / 2 if r else 0.005


def _new(cx: Context) -> Verdict:
    tol = _tolerance(cx.claim)
    return Verdict(cx.claim.id, NOT_DERIVABLE, cx.claim.value, None,
                   tol if isinstance(cx.claim.rounding, int | float) else None,
                   "not_derivable", {"why": cx.claim.why_text("en")})


def _missing(v: Verdict, ids) -> Verdict:
    v.verdict, v.reason, v.params = NOT_DERIVABLE, "missing", {"ids": list(ids)}
    return v


def _lookup(cx: Context, v: Verdict, ids) -> dict[str, Any]:
    """The figures' values by id, recorded on the verdict as what it rests on."""
    got = {i: cx.fig(i) for i in ids}
    v.figures += list(got)
    v.recomputed = got
    return got


def _noise(cx: Context, fid: str, published: Any, value: Any) -> tuple[str, float] | None:
    """Whether ``published`` is below the noise of figure ``fid`` (``value``): ("interval",
    0) when it lies inside the figure's own interval, ("declared", gap share) within the
    claim's declared floor; None otherwise. A figure with an interval is judged by it only."""
    a, b = _num(published), _num(value)
    if a is None or b is None:
        return None
    low, high = _num(cx.fig(fid + ".low")), _num(cx.fig(fid + ".high"))
    if low is not None and high is not None:
        return ("interval", 0.0) if low <= a <= high else None
    floor = cx.claim.noise_floor
    gap = abs(a - b) / abs(b) if b else None
    return ("declared", gap) if floor and gap is not None and gap <= floor else None


def _in_noise(v: Verdict, cx: Context, quiet: list[tuple[str, str, float]]) -> None:
    """The verdict of keys that differ by less than the noise: which floor, and by how much."""
    by = {src: [k for k, s, _ in quiet if s == src] for src in ("interval", "declared")}
    v.verdict = INDISTINGUISHABLE
    v.reason = "below_noise_mixed" if all(by.values()) else \
        ("below_noise_interval" if by["interval"] else "below_noise_declared")
    v.params = {"keys": by["interval"] or by["declared"]}
    if by["declared"]:
        v.params.update({"declared_keys": by["declared"], "floor": cx.claim.noise_floor,
                         "gap": round(max(g for _, s, g in quiet if s == "declared"), 4)})


def _propagated(claim: Claim, published: dict, key: str) -> tuple[float, float] | None:
    """The interval a published value the text computed from its other published, rounded
    values (``claim.derived``) may stand for: its own rounding, widened by what theirs
    carries into it. For ``37.3 ms`` from ``26.8 tok/s`` (both to 0.1) as 1000 ÷ rate: the
    rate lies in 26.75–26.85, so 1000 ÷ rate in 37.24–37.38, and 37.3 ± 0.05 widened by
    that much is 37.18–37.42. None for a value not so derived (or not positive)."""
    spec = (claim.derived or {}).get(key)
    p = _num(published.get(key))
    tol = _tolerance(claim, key)
    if not spec or p is None or p - tol <= 0:
        return None
    lo = hi = 1.0
    for src, power in spec.items():
        q, half = _num(published.get(src)), _tolerance(claim, src)
        if q is None or q - half <= 0:
            return None
        ends = (((q - half) / q) ** power, ((q + half) / q) ** power)
        lo, hi = lo * min(ends), hi * max(ends)
    return (p - tol) * lo, (p + tol) * hi


def _matches(cx: Context, published: dict, key: str, value: Any) -> str | None:
    """Whether the published value of ``key`` stands for ``value``: "rounding" within half
    its rounding, "propagated" only within what its sources' rounding carries into it
    (``_propagated``), else None."""
    if _close(published[key], value, _tolerance(cx.claim, key)):
        return "rounding"
    bounds, x = _propagated(cx.claim, published, key), _num(value)
    return "propagated" if bounds and x is not None and \
        bounds[0] - 1e-9 <= x <= bounds[1] + 1e-9 else None


def check_figures(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    spec = check.get("figures") or {"value": check["figure"]}
    published = cx.claim.value if isinstance(cx.claim.value, dict) else {"value": cx.claim.value}
    got, method_only, missing, wrong, quiet, carried = {}, [], [], [], [], []
    for key, ids in spec.items():
        ids = [ids] if isinstance(ids, str) else list(ids)
        v.figures += ids
        if cx.fig(ids[0]) is None:
            missing.append(ids[0])
            continue
        got[key] = cx.fig(ids[0])
        match = _matches(cx, published, key, got[key]) if key in published else "absent"
        if match:
            carried += [key] if match == "propagated" else []
            if key in published:
                v.agreeing[key] = [ids[0]] + [a for a in ids[1:] if cx.fig(a) is not None
                                              and _matches(cx, published, key, cx.fig(a))]
            continue
        alt = next((a for a in ids[1:] if cx.fig(a) is not None
                    and _matches(cx, published, key, cx.fig(a))), None)
        noise = _noise(cx, ids[0], published[key], got[key])
        if noise and (noise[0] == "interval" or not alt):
            quiet.append((key, *noise))
            continue
        (method_only if alt else wrong).append((key, alt))
    v.recomputed = got if len(got) != 1 or "value" not in got else got["value"]
    if missing and not got:
        return _missing(v, missing)
    if wrong:
        v.verdict, v.reason = DIFFERS, "differs"
        v.params = {"keys": [k for k, _ in wrong]}
    elif method_only:
        v.verdict, v.reason = METHOD, "other_basis"
        v.params = {"alternatives": [a for _, a in method_only],
                    "keys": [k for k, _ in method_only]}
    elif quiet:
        _in_noise(v, cx, quiet)
    elif carried:
        v.verdict, v.reason = CONFIRMED, "within_propagated"
        v.params = {"keys": carried,
                    "sources": list(dict.fromkeys(s for k in carried
                                                  for s in cx.claim.derived[k]))}
    else:
        v.verdict, v.reason = CONFIRMED, "within_rounding"
    return v


def check_sequence(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    fid = check["sequence"]
    v.figures.append(fid)
    if cx.fig(fid) is None:
        return _missing(v, [fid])
    got = [float(x.replace(",", "")) for x in re.findall(r"[\d,]+(?:\.\d+)?", str(cx.fig(fid)))]
    v.recomputed = got
    ok = len(got) == len(cx.claim.value) and all(
        abs(a - b) <= v.tolerance + 1e-9 if v.tolerance else a == b
        for a, b in zip(cx.claim.value, got, strict=False))
    v.verdict, v.reason = (CONFIRMED, "within_rounding") if ok else (DIFFERS, "differs")
    return v


def check_settings(cx: Context, check: dict) -> Verdict:
    from .caveats import normalise

    v = _new(cx)
    got, wrong = {}, []
    for sid, per_engine in check["settings"].items():
        for engine, want in per_engine.items():
            have = cx.settings.get(sid, {}).get(engine)
            got[f"{sid}.{engine}"] = have
            v.figures.append(figure_ids.setting(sid, engine))
            if have is None or normalise(have) != normalise(want):
                wrong.append({"sid": sid, "engine": engine, "have": have})
    v.recomputed = got
    if all(x is None for x in got.values()):
        return _missing(v, list(got))
    if wrong:
        v.verdict, v.reason, v.params = CONTRADICTED, "setting_differs", {"which": wrong}
    else:
        v.verdict, v.reason = CONFIRMED, "settings_match"
    return v


def _setting_ids(cx: Context, sids) -> list[str]:
    return sorted(f for f in cx.registry
                  if (s := figure_ids.parse_setting(f)) is not None and s[0] in sids)


def check_differs(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    want = set(check["differs"])
    v.recomputed = sorted(cx.differing)
    v.figures += [figure_ids.SETTINGS_DIFFERING, *_setting_ids(cx, want)]
    missing = sorted(want - cx.differing)
    v.verdict, v.reason = (CONFIRMED, "differs_listed") if not missing else \
        (DIFFERS, "not_all_differ")
    v.params = {"which": sorted(want & cx.differing), "missing": missing}
    return v


def check_identical(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    v.recomputed = sorted(cx.differing)
    v.figures += [figure_ids.SETTINGS_DIFFERING, *_setting_ids(cx, cx.differing)]
    if cx.differing:
        v.verdict, v.reason = CONTRADICTED, "settings_differ"
        v.params = {"which": sorted(cx.differing)}
    else:
        v.verdict, v.reason = CONFIRMED, "nothing_differs"
    return v


def check_events(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    ids = list(check.get("zero", [])) + list(check.get("nonzero", []))
    got = _lookup(cx, v, ids)
    bad = [i for i in check.get("zero", []) if got[i]] + \
          [i for i in check.get("nonzero", []) if not got[i]]
    unknown = [i for i in ids if got[i] is None]
    if len(unknown) == len(ids):
        return _missing(v, unknown)
    if bad:
        v.verdict, v.reason, v.params = CONTRADICTED, "events_differ", {"which": bad}
    else:
        v.verdict, v.reason = CONFIRMED, "events_match"
    return v


def check_every_engine(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    per_engine: dict[str, int] = {}
    for fid, f in cx.registry.items():
        ev = figure_ids.parse_events(fid)
        if ev is not None and ev[2] in check["every_engine"]:
            per_engine[ev[1]] = per_engine.get(ev[1], 0) + int(f.value or 0)
            v.figures.append(fid)
    v.recomputed = per_engine
    without = sorted(e for e, n in per_engine.items() if n == 0)
    if not per_engine:
        return _missing(v, ["events.*"])
    if without:
        v.verdict, v.reason = CONTRADICTED, "engine_without_events"
        v.params = {"which": without}
    else:
        v.verdict, v.reason = CONFIRMED, "events_match"
    return v


def check_similar(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    within = float(check.get("within", 0.15))
    got, far = {}, []
    for a, b in check["similar"]:
        v.figures += [a, b]
        va, vb = _num(cx.fig(a)), _num(cx.fig(b))
        if va is None or vb is None:
            continue
        gap = abs(va - vb) / max(va, vb)
        got[f"{a} vs {b}"] = round(gap, 3)
        if gap > within:
            far.append(f"{a} vs {b}")
    v.recomputed = got
    if not got:
        return _missing(v, v.figures)
    if far:
        v.verdict, v.reason = DIFFERS, "not_similar"
        v.params = {"which": far, "within": within}
    else:
        v.verdict, v.reason, v.params = CONFIRMED, "similar", {"within": within}
    return v


def check_equals(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    got = _lookup(cx, v, check["equals"])
    ok = all(str(got[i]) == str(want) for i, want in check["equals"].items())
    v.verdict, v.reason = (CONFIRMED, "equals") if ok else (DIFFERS, "differs")
    return v


def check_winner(cx: Context, check: dict) -> Verdict:
    """Who the claim says came first (``winner: {e2e.64k.faster: vllm}``): another engine
    first in the data contradicts the claim, whatever its ratio."""
    v = _new(cx)
    got = _lookup(cx, v, check["winner"])
    if any(x is None for x in got.values()):
        return _missing(v, [i for i, x in got.items() if x is None])
    wrong = [str(got[i]) for i, want in check["winner"].items() if str(got[i]) != str(want)]
    v.verdict, v.reason = (CONTRADICTED, "winner_differs") if wrong else \
        (CONFIRMED, "winner_same")
    v.params = {"which": wrong}
    v.recomputed = None           # the figure part shows the number; this part only judges
    return v


def check_linear(cx: Context, check: dict) -> Verdict:
    """change ÷ context near 1; compared with the published pair when the claim gives one."""
    v = _new(cx)
    spec = check["linear"]
    within = float(check.get("within", 0.1))
    change, context = cx.fig(spec["change"]), cx.fig(spec["context"])
    v.figures += [spec["change"], spec["context"]]
    if _num(change) is None or _num(context) is None:
        return _missing(v, v.figures)
    ratio = change / context
    v.recomputed = {"change": change, "context": context, "ratio": round(ratio, 3)}
    v.params = {"change": f"{change:.2f}", "context": f"{context:.2f}",
                "ratio": f"{ratio:.2f}", "within": within}
    pub = cx.claim.value if isinstance(cx.claim.value, dict) else {}
    pub_ratio = (pub["degradation"] / pub["context_ratio"]
                 if {"degradation", "context_ratio"} <= set(pub) else None)
    if pub_ratio is not None:
        v.params["published_ratio"] = f"{pub_ratio:.2f}"
    if abs(ratio - 1) > within:
        v.verdict, v.reason = DIFFERS, "not_linear"
    elif pub_ratio is not None and abs(ratio - 1) < abs(pub_ratio - 1):
        v.verdict, v.reason = CONFIRMED, "linear_closer"
    else:
        v.verdict, v.reason = CONFIRMED, "linear"
    return v


def check_at_least(cx: Context, check: dict) -> Verdict:
    v = _new(cx)
    got = _lookup(cx, v, check["at_least"])
    if all(_num(x) is None for x in got.values()):
        return _missing(v, list(got))
    low = [i for i, want in check["at_least"].items()
           if _num(got[i]) is None or _num(got[i]) < float(want)]
    shown = "; ".join(f"{i} {got[i]:.2f}" if isinstance(got[i], float) else f"{i} {got[i]}"
                      for i in (low or got))
    v.verdict, v.reason = (DIFFERS, "below") if low else (CONFIRMED, "at_least")
    v.params = {"which": shown}
    return v


def check_extreme(cx: Context, check: dict) -> Verdict:
    """The least (``lowest``) or greatest (``highest``) figure of each key's pattern against
    the published value of that key; the verdict names the figure that holds it."""
    v = _new(cx)
    which = "lowest" if "lowest" in check else "highest"
    published = cx.claim.value if isinstance(cx.claim.value, dict) else {"value": cx.claim.value}
    got, held, wrong = {}, [], []
    for key, pattern in check[which].items():
        found = [(_num(f.value), fid) for fid, f in sorted(cx.registry.items())
                 if fnmatch.fnmatchcase(fid, pattern) and _num(f.value) is not None]
        if not found:
            continue
        value, fid = (min if which == "lowest" else max)(found)
        got[key] = value
        v.figures.append(fid)
        held.append(f"{key}: {fid}")
        if key in published and not _close(published[key], value, _tolerance(cx.claim, key)):
            wrong.append(key)
    v.recomputed = got
    if not got:
        return _missing(v, list(check[which].values()))
    v.params = {"which": held, "keys": wrong}
    v.verdict, v.reason = (DIFFERS, f"{which}_differs") if wrong else \
        (CONFIRMED, f"{which}_within")
    return v


def check_exceeds(cx: Context, check: dict) -> Verdict:
    """Each pair's first figure is greater than its second."""
    v = _new(cx)
    got, wrong = {}, []
    for a, b in check["exceeds"]:
        v.figures += [a, b]
        va, vb = _num(cx.fig(a)), _num(cx.fig(b))
        if va is None or vb is None:
            continue
        got[f"{a} vs {b}"] = [va, vb]
        if not va > vb:
            wrong.append(f"{a} {va:g} ≤ {b} {vb:g}")
    v.recomputed = got
    if not got:
        return _missing(v, v.figures)
    v.params = {"which": wrong or list(got)}
    v.verdict, v.reason = (CONTRADICTED, "order_differs") if wrong else (CONFIRMED, "order_same")
    return v


CHECKS: dict[tuple[str, ...], Callable[[Context, dict], Verdict]] = {
    ("figure", "figures"): check_figures,
    ("sequence",): check_sequence,
    ("settings",): check_settings,
    ("differs",): check_differs,
    ("identical",): check_identical,
    ("zero", "nonzero"): check_events,
    ("every_engine",): check_every_engine,
    ("similar", "within"): check_similar,
    ("equals",): check_equals,
    ("winner",): check_winner,
    ("linear",): check_linear,
    ("at_least",): check_at_least,
    ("lowest", "highest"): check_extreme,
    ("exceeds",): check_exceeds,
}
# A reconstruction's targets that are means (synth.scenario): an alternative resting on
# them alone matches the published value by construction (see _fitted_alternatives).
MEAN_TARGETS = {"steady_mean"}
# worst first: the worst verdict of a claim's parts is its verdict
ORDER = (CONTRADICTED, DIFFERS, METHOD, NOT_DERIVABLE, INDISTINGUISHABLE, CONSISTENT, FITTED,
         CONFIRMED)


def check_claim(claim: Claim, registry: dict[str, Figure],
                setting_values: dict[str, dict[str, str]], differing: set[str],
                calibrated: dict[str, str] | None = None) -> Verdict:
    """Evaluate every part of the claim's check; the worst verdict wins. ``calibrated`` maps
    figure-id patterns to what a reconstruction fitted them to (see synth.scenario)."""
    cx = Context(claim, registry, setting_values, differing)
    check = claim.check or {}
    parts = [(fn, {k: check[k] for k in keys if k in check})
             for keys, fn in CHECKS.items() if any(k in check for k in keys)
             and not (keys == ("similar", "within") and "similar" not in check)]
    if not parts:
        return _new(cx)
    results = [fn(cx, part) for fn, part in parts]
    worst = min(results, key=lambda r: ORDER.index(r.verdict))
    worst.parts = [list(dict.fromkeys(r.figures)) for r in results] if len(results) > 1 else []
    if len(results) > 1:
        shown = [r.recomputed for r in results if r.recomputed is not None]
        worst.recomputed = shown[0] if len(shown) == 1 else shown
        worst.figures = [f for r in results for f in r.figures]
    if claim.causal and worst.verdict == CONFIRMED:
        worst.verdict = CONSISTENT
        worst.reason = "cold_start" if _cold_start(cx, worst.figures) else "cause_not_measured"
    disputed = _disputed(registry, [f for r in results for f in r.figures])
    if disputed:
        # a figure the claim rests on comes from a duration the run's other sources
        # contradict: the claim cannot be judged on it
        worst.verdict, worst.reason = NOT_DERIVABLE, "sources_disagree"
        worst.params = {"which": disputed}
    worst.calibrated = sorted(_calibrated(registry, worst.figures, calibrated or {}))
    if worst.reason == "other_basis" and _fitted_alternatives(registry, worst, calibrated or {}):
        # the generator was fitted to that basis: the match is the reconstruction's, by
        # design, and tells nothing of how the published text computed its value
        worst.verdict, worst.reason = FITTED, "other_basis_fitted"
    return worst


def _fitted_alternatives(registry: dict[str, Figure], v: Verdict,
                         patterns: dict[str, str]) -> bool:
    """Whether every alternative a published value matched rests on a reconstruction's
    mean targets alone (``MEAN_TARGETS``): the generator was fitted to those published
    means, so the match says how the reconstruction was made. A value made of an extreme
    and a mean (a peak over a mean) is the published text's own mixed arithmetic instead,
    whatever the generator was fitted to."""
    alternatives = list(v.params.get("alternatives") or [])
    names = [{_target_name(why) for why in _calibrated(registry, [a], patterns)}
             for a in alternatives]
    return bool(alternatives) and all(n and n <= MEAN_TARGETS for n in names)


def _target_name(why: str) -> str:
    """The scenario target a calibration reason names ("" for none)."""
    parsed = parse_reason(why)
    return parsed[1].get("name", "") if parsed else ""


def _disputed(registry: dict[str, Figure], fig_ids: list[str]) -> list[str]:
    """The workloads of the figures ``fig_ids`` that rest on a duration a consistency check
    contradicts: an end-to-end or throughput figure of that engine and workload (or of the
    workload, for a figure of no one engine such as a speedup), one computed from such a
    figure, or an id of such a workload the run could not compute."""
    bad = {(f.context.get("workload"), f.context.get("engine")) for f in registry.values()
           if f.id.startswith("consistency.") and f.unit == "verdict"
           and f.value == INCONSISTENT and f.id.split(".")[3] in DURATION_CHECKS}
    if not bad:
        return []
    workloads = {w for w, _ in bad}

    def rests(f: Figure) -> bool:
        if f.id.split(".")[0] not in ("e2e", "throughput"):
            return False
        w, e = f.context.get("workload"), f.context.get("engine")
        return (w, e) in bad if e else w in workloads

    found: set[str] = set()
    for fid in fig_ids:
        fig = registry.get(fid)
        if fig is None:
            found.update(p for p in fid.split(".")[1:2] if p in workloads)
            continue
        todo, seen = [fig], set()
        while todo:
            f = todo.pop()
            if f.id in seen:
                continue
            seen.add(f.id)
            if rests(f):
                found.add(f.context["workload"])
            todo += [registry[d] for d in f.depends_on if d in registry]
    return sorted(found)


def _cold_start(cx: Context, ids: list[str]) -> bool:
    """Every nonzero event count the claim rests on falls in its engine's first benchmark
    after the server started, and nothing ran before that benchmark."""
    events = [parsed for i in ids
              if (parsed := figure_ids.parse_events(i)) is not None and cx.fig(i)]
    if not events:
        return False
    for workload, engine, _ in events:
        warm = cx.registry.get(figure_ids.limits_engine(engine, "warmup_records"))
        if warm is None or warm.value != 0 or warm.context.get("first_workload") != workload:
            return False
    return True


def _calibrated(registry: dict[str, Figure], ids: list[str],
                patterns: dict[str, str]) -> set[str]:
    """What set the figures ``ids`` rest on (themselves or what they are computed from)."""
    found, todo, seen = set(), list(ids), set()
    while todo:
        fid = todo.pop()
        if fid in seen:
            continue
        seen.add(fid)
        found |= {why for pat, why in patterns.items() if fnmatch.fnmatchcase(fid, pat)}
        if fid in registry:
            todo.extend(registry[fid].depends_on)
    return found


# --- the run's claims.yaml, checked (the claims notebook) ---------------------------------

@dataclass(frozen=True)
class ClaimCheck:
    """Every claim's verdict: a table to show, the figures (one per claim, and the counts
    of informative and indistinguishable verdicts), and what ``save_claims`` writes."""

    table: pd.DataFrame
    figures: list[Figure]
    record: list = ()            # what save_claims writes for the article


def claim_check(run: Run) -> ClaimCheck:
    """Every claim of data/<RUN>/claims.yaml against the figures of the earlier notebooks."""
    path = run.paths.data / "claims.yaml"
    copy = run.paths.described("claims.yaml")
    if not copy.is_file():
        return ClaimCheck(table=pd.DataFrame(), figures=[])
    articles, claims = parse_claims(read_text(copy, run.paths.rel(path)), run.paths.rel(path))
    fragments = {p.name: json.loads(p.read_text(encoding="utf-8"))
                 for p in sorted(run.paths.figure_fragments.glob("*.json"))
                 if not p.name.startswith("80-")}
    registry = with_provenance(run, merge(fragments))
    cav = read_json(run.paths.caveats_json)
    differing = {c["id"] for c in cav["differing"]
                 if c["kind"] == "setting" and not c.get("apart")}
    calibrated = _calibration(run)
    verdicts = [check_claim(c, registry, cav["compared"], differing, calibrated)
                for c in claims]
    en = english()
    src = {"path": run.paths.rel(path), "sha256": input_checksum(run, path)}
    default = rules_for(run)[1]
    bases = [claim_basis(registry, v, default) for v in verdicts]
    figures = []
    methods = [_claim_method(v, run.meta.assumed) for v in verdicts]
    for v in verdicts:       # what set the figures, in words (core.provenance.reason)
        v.calibrated = [reason_words(x, en, "en", run.meta.assumed) for x in v.calibrated]
    for c, v, basis, method in zip(claims, verdicts, bases, methods, strict=True):
        figures.append(figure(
            id=figure_ids.claim(c.id), value=v.verdict, unit="verdict",
            sources=(Source(key=f"claims[id={c.id}]", lines=(c.line,), **src),),
            depends_on=tuple(f for f in dict.fromkeys(v.figures) if f in registry),
            context={"reason": v.reason, "sentence": v.sentence(en),
                     "params": v.flat_params(),
                     "published": json.dumps(c.value, ensure_ascii=False),
                     "recomputed": json.dumps(v.recomputed, ensure_ascii=False, default=str),
                     "tolerance": v.tolerance, "source": list(c.source),
                     "calibrated": ", ".join(v.calibrated), "basis": basis,
                     "text": dict(c.text)},
            method=method))
    figures += [informative_figure(claims, bases, src), indistinguishable_figure(verdicts, src),
                contradicted_figure(claims, verdicts, src),
                mixed_published_figure(claims, verdicts, registry, src),
                differs_published_figure(claims, verdicts, registry, src)]
    figures += published_budget(run.meta, claims, registry, src)
    record = [
        {"claim": v.claim, "verdict": v.verdict, "basis": basis, "published": c.value,
         "unit": c.unit, "recomputed": v.recomputed, "tolerance": v.tolerance, "reason": v.reason,
         "sentence": v.sentence(en), "calibrated": v.calibrated,
         "params": v.params, "figures": v.figures, "designed": designed_part(registry, v),
         "text": c.text, "source": list(c.source),
         "source_titles": [articles[a]["title"] for a in c.source],
         "scope": c.scope, "why": c.why, "noise_floor": c.noise_floor,
         "noise_why": c.noise_why, "against": c.against}
        for c, v, basis in zip(claims, verdicts, bases, strict=True)]
    table = pd.DataFrame([{"claim": v.claim, "verdict": v.verdict, "published": c.value,
                           "recomputed": v.recomputed, "reason": v.sentence(en),
                           "calibrated": ", ".join(v.calibrated)}
                          for c, v in zip(claims, verdicts, strict=True)])
    return ClaimCheck(table=table, figures=figures, record=record)




@functools.cache
def _labels(lang: str) -> dict[str, str]:
    return load_catalogue(LABELS, lang)


def _claim_method(v, assumed) -> Said:
    """A verdict's method: the check's reason and, where the reconstruction was calibrated
    to the figures it rests on, to what (in each language's words: core.provenance)."""
    if not v.calibrated:
        return said("claims.checked", reason=said("claims.reason_" + v.reason), calibrated="")
    what = given(**{lang: ", ".join(reason_words(x, _labels(lang), lang, assumed)
                                    for x in v.calibrated) for lang in ("en", "ko")})
    return said("claims.checked", reason=said("claims.reason_" + v.reason),
                calibrated=said("claims.calibrated", what=what))


def _calibration(run: Run) -> dict[str, str]:
    """For a reconstruction: the figure-id patterns its generator was calibrated to."""
    if not run.meta.reconstruction or not run.meta.scenario:
        return {}
    return calibrated_patterns(load_scenario(run.paths.described(run.meta.scenario)))


def claim_basis(registry: dict[str, Figure], verdict, default: str) -> str:
    """What a verdict's agreement or disagreement tells: the weakest provenance of the
    figures it rests on (core.provenance), ``default`` (the run's) when it rests on none of
    them; "" for a claim the data cannot judge."""
    if verdict.verdict == NOT_DERIVABLE:
        return ""
    if verdict.reason == "other_basis_fitted":
        # the match rests on the alternatives alone, which the generator was fitted to
        return provenance_of(registry, list(verdict.params["alternatives"]))
    designed = designed_part(registry, verdict)
    if designed:
        return provenance_of(registry, designed)
    if verdict.verdict == CONFIRMED and verdict.agreeing and all(
            f in registry for fs in verdict.agreeing.values() for f in fs):
        # each value agrees on the strongest of the bases that give it: where a basis the
        # generator was fitted to gives it too, the agreement is by design, whatever
        # the seed made of the like-for-like one
        return weakest(strongest(registry[f].provenance or MEASURED for f in fs)
                       for fs in verdict.agreeing.values())
    held = [f for f in verdict.figures if f in registry]
    return provenance_of(registry, held) if held else default


def designed_part(registry: dict[str, Figure], verdict) -> list[str]:
    """Of an agreement that every part of a check of several parts must give, the figures
    of the parts that agree by design (resting on calibrated or assumed figures only): the
    verdict is set by design as soon as one part is, whatever the generator's model gave the
    rest ("prefill was similar, and the gap arose in decode": both engines prefill on the
    one curve a reconstruction assumed). None for any other verdict."""
    if verdict.verdict not in (*AGREES, CONSISTENT) or len(verdict.parts) < 2:
        return []
    return [f for part in verdict.parts
            if part and all(f in registry for f in part)
            and provenance_of(registry, part) in BY_CONSTRUCTION for f in part]


def informative_figure(claims, bases: list[str], src) -> Figure:
    """How many verdicts carry information: those resting on measured figures only."""
    telling = [c.id for c, basis in zip(claims, bases, strict=True) if basis == MEASURED]
    return figure(id=figure_ids.CLAIMS_INFORMATIVE, value=len(telling), unit="count", decimals=0,
                  sources=(Source(key="claims", **src),),
                  depends_on=tuple(figure_ids.claim(c) for c in telling),
                  context={"claims": telling},
                  method=said("claims.informative"))


def contradicted_figure(claims, verdicts, src) -> Figure:
    """How many verdicts the data contradicts, with the claims and the write-ups they
    come from (in the order claims.yaml names them)."""
    against = [(c, v) for c, v in zip(claims, verdicts, strict=True)
               if v.verdict == CONTRADICTED]
    return figure(id=figure_ids.CLAIMS_CONTRADICTED, value=len(against), unit="count",
                  decimals=0, sources=(Source(key="claims", **src),),
                  depends_on=tuple(figure_ids.claim(c.id) for c, _ in against),
                  context={"claims": [c.id for c, _ in against],
                           "sources": list(dict.fromkeys(a for c, _ in against
                                                         for a in c.source)),
                           # what other write-up each contradicted claim is set against
                           "against": list(dict.fromkeys(c.against["source"]
                                                         for c, _ in against if c.against))},
                  method=said("claims.contradicted"))


def differs_published_figure(claims, verdicts, registry: dict[str, Figure], src) -> Figure:
    """How many published values differ from what the published figures themselves give
    (in a reconstruction, a recomputed value resting only on the figures it was calibrated
    to): the published text disagrees with its own numbers, whatever the reconstruction's
    model or seed set. None in a real run, whose figures are measured."""
    differ = [(c, v) for c, v in zip(claims, verdicts, strict=True)
              if v.verdict == DIFFERS and v.figures
              and all(f in registry for f in v.figures)
              and provenance_of(registry, v.figures) == CALIBRATED]
    return figure(id=figure_ids.CLAIMS_DIFFERS_PUBLISHED, value=len(differ), unit="count",
                  decimals=0, sources=(Source(key="claims", **src),),
                  depends_on=tuple(f for _, v in differ for f in v.figures),
                  context={"claims": [c.id for c, _ in differ],
                           "sources": list(dict.fromkeys(x for c, _ in differ
                                                         for x in c.source))},
                  method=said("claims.differs_published"))


def mixed_published_figure(claims, verdicts, registry: dict[str, Figure], src) -> Figure:
    """How many published values match another basis made of published figures alone (in a
    reconstruction, the figures it was calibrated to): a finding about the published text's
    arithmetic that holds whatever the reconstruction's model or seed set."""
    mixed = [(c, v) for c, v in zip(claims, verdicts, strict=True)
             if v.reason == "other_basis" and v.params.get("alternatives")
             and all(a in registry for a in v.params["alternatives"])
             and provenance_of(registry, v.params["alternatives"]) == CALIBRATED]
    return figure(id=figure_ids.CLAIMS_MIXED, value=len(mixed), unit="count", decimals=0,
                  sources=(Source(key="claims", **src),),
                  depends_on=tuple(a for _, v in mixed for a in v.params["alternatives"]),
                  context={"claims": [c.id for c, _ in mixed],
                           "alternatives": [a for _, v in mixed
                                            for a in v.params["alternatives"]],
                           "sources": list(dict.fromkeys(x for c, _ in mixed
                                                         for x in c.source))},
                  method=said("claims.mixed"))


def indistinguishable_figure(verdicts, src) -> Figure:
    """How many verdicts found a difference below a stated noise floor."""
    quiet = [v.claim for v in verdicts if v.verdict == INDISTINGUISHABLE]
    return figure(id=figure_ids.CLAIMS_INDISTINGUISHABLE, value=len(quiet), unit="count",
                  decimals=0, sources=(Source(key="claims", **src),),
                  depends_on=tuple(figure_ids.claim(c) for c in quiet),
                  context={"claims": quiet},
                  method=said("claims.indistinguishable"))
