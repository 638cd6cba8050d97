"""Check each published claim against the recomputed figures.

Each claim in claims.yaml says how it is checked (``check:``); this module knows the kinds:

- ``figures: {key: id | [id, alternative ids…]}`` (or ``figure: id``): compare the published
  value(s) within half the published rounding; a match on an alternative only is
  "different method" (for example a ratio on a mixed peak/mean basis).
- ``sequence: id``: a published list against a figure holding a list.
- ``settings: {setting: {engine: value}}``: launch settings as recorded.
- ``differs: [setting…]``: the caveats table lists these as differing.
- ``identical: true``: nothing but the engine changed (contradicted by any difference).
- ``zero: [id…]`` / ``nonzero: [id…]``: event counts.
- ``every_engine: [event…]``: each engine logged at least one of these events.
- ``similar: [[id, id], …]`` with ``within``: pairs no more than that share apart.
- ``equals: {id: value}``: a verdict figure has this value.
Claims without ``check`` are "not derivable" from benchmark data, with ``why``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .claims import Claim
from .figures import Figure

CONFIRMED, DIFFERS, METHOD, CONTRADICTED, NOT_DERIVABLE = (
    "confirmed", "differs", "different method", "contradicted by the data", "not derivable")


# One sentence per reason (English; the report words them from its catalogues).
SENTENCES = {
    "within_rounding": "The recomputed value lies within half the published rounding.",
    "other_basis": "The published {keys} matches {alternatives}, not the like-for-like basis.",
    "differs": "The recomputed {keys} falls outside the published rounding.",
    "missing": "This run has no figure to check it against ({ids}).",
    "setting_differs": "The launch settings say otherwise: {which}.",
    "settings_match": "The launch settings match.",
    "differs_listed": "The launch settings and logs show these differences: {which}.",
    "not_all_differ": "Not all of these differ between the engines: {missing}.",
    "settings_differ": "Besides the engine, these settings differ: {which}.",
    "nothing_differs": "No compared setting differs between the engines.",
    "events_match": "The event counts in the logs agree.",
    "events_differ": "The logs show otherwise: {which}.",
    "engine_without_events": "No such event appears in the logs of: {which}.",
    "similar": "The values are within {within} of each other.",
    "not_similar": "More than {within} apart: {which}.",
    "equals": "The data shows exactly this.",
    "not_derivable": "Not derivable from this run's data: {why}.",
}


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

    @property
    def sentence(self) -> str:
        params = {k: (f"{v:.0%}" if k == "within" else v) for k, v in self.params.items()}
        params.setdefault("keys", "value")
        try:
            return SENTENCES[self.reason].format(**params)
        except KeyError:
            return self.reason


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


GROUPS = (("figure", "figures"), ("sequence",), ("settings",), ("differs",), ("identical",),
          ("zero", "nonzero"), ("every_engine",), ("similar", "within"), ("equals",))
ORDER = (CONTRADICTED, DIFFERS, METHOD, NOT_DERIVABLE, CONFIRMED)


def check_claim(claim: Claim, registry: dict[str, Figure],
                setting_values: dict[str, dict[str, str]], differing: set[str]) -> Verdict:
    """Evaluate every part of the claim's check; the worst verdict wins."""
    parts = [{k: claim.check[k] for k in group if k in claim.check}
             for group in GROUPS if claim.check and any(k in claim.check for k in group)]
    if not parts:
        return _check_one(claim, None, claim.why, registry, setting_values, differing)
    results = [_check_one(claim, part, claim.why, registry, setting_values, differing)
               for part in parts]
    worst = min(results, key=lambda r: ORDER.index(r.verdict))
    if len(results) > 1:
        worst.recomputed = [r.recomputed for r in results]
        worst.figures = [f for r in results for f in r.figures]
    return worst


def _tolerance(claim: Claim, key: str | None = None) -> float:
    """Half the published rounding (per key when rounding is a mapping); else 0.5%."""
    r = claim.rounding
    if isinstance(r, dict):
        r = r.get(key)
    return r / 2 if r else 0.005


def _check_one(claim: Claim, check: dict | None, why: str | None,
                registry: dict[str, Figure], setting_values: dict[str, dict[str, str]],
                differing: set[str]) -> Verdict:
    tol = _tolerance(claim)
    v = Verdict(claim.id, NOT_DERIVABLE, claim.value, None,
                tol if isinstance(claim.rounding, int | float) else None,
                "not_derivable", {"why": why or ""})
    if not check:
        return v

    def fig(fid: str) -> Any:
        return registry[fid].value if fid in registry else None

    if "figure" in check or "figures" in check:
        spec = check.get("figures") or {"value": check["figure"]}
        published = claim.value if isinstance(claim.value, dict) else {"value": claim.value}
        got, method_only, missing, wrong = {}, [], [], []
        for key, ids in spec.items():
            ids = [ids] if isinstance(ids, str) else list(ids)
            v.figures += ids
            if fig(ids[0]) is None:
                missing.append(ids[0])
                continue
            got[key] = fig(ids[0])
            k_tol = _tolerance(claim, key)
            if key not in published or _close(published[key], got[key], k_tol):
                continue
            alt = next((a for a in ids[1:] if fig(a) is not None
                        and _close(published[key], fig(a), k_tol)), None)
            (method_only if alt else wrong).append((key, alt))
        v.recomputed = got if len(got) != 1 or "value" not in got else got["value"]
        if missing and not got:
            v.reason, v.params = "missing", {"ids": ", ".join(missing)}
        elif wrong:
            v.verdict, v.reason = DIFFERS, "differs"
            v.params = {"keys": ", ".join(k for k, _ in wrong)}
        elif method_only:
            v.verdict, v.reason = METHOD, "other_basis"
            v.params = {"alternatives": ", ".join(a for _, a in method_only),
                        "keys": ", ".join(k for k, _ in method_only)}
        else:
            v.verdict, v.reason = CONFIRMED, "within_rounding"
        return v
    if "sequence" in check:
        fid = check["sequence"]
        v.figures.append(fid)
        got = [float(x.replace(",", "")) for x in re.findall(r"[\d,]+(?:\.\d+)?", str(fig(fid)))]
        v.recomputed = got
        ok = len(got) == len(claim.value) and all(
            abs(a - b) <= tol + 1e-9 for a, b in zip(claim.value, got, strict=False))
        v.verdict, v.reason = (CONFIRMED, "within_rounding") if ok else (DIFFERS, "differs")
        return v
    if "settings" in check:
        got, wrong = {}, []
        for sid, per_engine in check["settings"].items():
            for engine, want in per_engine.items():
                have = setting_values.get(sid, {}).get(engine)
                got[f"{sid}.{engine}"] = have
                if have is None or (str(have) != str(want)
                                    and str(have).split(" ")[0] != str(want)):
                    wrong.append(f"{sid} ({engine}: {have})")
        v.recomputed = got
        if all(x is None for x in got.values()):
            v.reason = "missing"
            v.params = {"ids": ", ".join(got)}
        elif wrong:
            v.verdict, v.reason, v.params = CONTRADICTED, "setting_differs", {"which": "; ".join(wrong)}
        else:
            v.verdict, v.reason = CONFIRMED, "settings_match"
        return v
    if "differs" in check:
        want = set(check["differs"])
        v.recomputed = sorted(differing)
        missing = sorted(want - differing)
        v.verdict, v.reason = (CONFIRMED, "differs_listed") if not missing else \
            (DIFFERS, "not_all_differ")
        v.params = {"which": ", ".join(sorted(want & differing)), "missing": ", ".join(missing)}
        return v
    if check.get("identical"):
        v.recomputed = sorted(differing)
        if differing:
            v.verdict, v.reason, v.params = CONTRADICTED, "settings_differ", {
                "which": ", ".join(sorted(differing))}
        else:
            v.verdict, v.reason = CONFIRMED, "nothing_differs"
        return v
    if "zero" in check or "nonzero" in check:
        ids = list(check.get("zero", [])) + list(check.get("nonzero", []))
        v.figures += ids
        got = {i: fig(i) for i in ids}
        v.recomputed = got
        bad = [i for i in check.get("zero", []) if got[i]] + \
              [i for i in check.get("nonzero", []) if not got[i]]
        unknown = [i for i in ids if got[i] is None]
        if len(unknown) == len(ids):
            v.reason, v.params = "missing", {"ids": ", ".join(unknown)}
        elif bad:
            v.verdict, v.reason, v.params = CONTRADICTED, "events_differ", {"which": ", ".join(bad)}
        else:
            v.verdict, v.reason = CONFIRMED, "events_match"
        return v
    if "every_engine" in check:
        per_engine: dict[str, int] = {}
        for fid, f in registry.items():
            parts = fid.split(".")
            if parts[0] == "events" and parts[-1] in check["every_engine"]:
                per_engine[parts[2]] = per_engine.get(parts[2], 0) + int(f.value or 0)
                v.figures.append(fid)
        v.recomputed = per_engine
        without = sorted(e for e, n in per_engine.items() if n == 0)
        if not per_engine:
            v.reason, v.params = "missing", {"ids": "events.*"}
        elif without:
            v.verdict, v.reason, v.params = CONTRADICTED, "engine_without_events", {
                "which": ", ".join(without)}
        else:
            v.verdict, v.reason = CONFIRMED, "events_match"
        return v
    if "similar" in check:
        within = float(check.get("within", 0.15))
        got, far = {}, []
        for a, b in check["similar"]:
            v.figures += [a, b]
            va, vb = _num(fig(a)), _num(fig(b))
            if va is None or vb is None:
                continue
            gap = abs(va - vb) / max(va, vb)
            got[f"{a} vs {b}"] = round(gap, 3)
            if gap > within:
                far.append(f"{a} vs {b}")
        v.recomputed = got
        if not got:
            v.reason, v.params = "missing", {"ids": ", ".join(v.figures)}
        elif far:
            v.verdict, v.reason, v.params = DIFFERS, "not_similar", {"which": "; ".join(far),
                                                                    "within": within}
        else:
            v.verdict, v.reason, v.params = CONFIRMED, "similar", {"within": within}
        return v
    if "equals" in check:
        got = {i: fig(i) for i in check["equals"]}
        v.figures += list(got)
        v.recomputed = got
        ok = all(str(got[i]) == str(want) for i, want in check["equals"].items())
        v.verdict, v.reason = (CONFIRMED, "equals") if ok else (DIFFERS, "differs")
        return v
    return v
