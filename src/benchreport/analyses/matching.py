"""Which points of two runs measured the same thing: matching by what was measured.

A *group* is one engine's points at one workload, load and variant of a run, its repeats
pooled (invalid points left out). Two groups of two runs match when they measured the same:

1. the same engine, by name (``vLLM`` and ``vllm`` alike; the run's engine id is only a
   label in its run.yaml);
2. the same model: the last part of its path or name (``Qwen/Qwen2.5-7B`` and
   ``/models/Qwen2.5-7B`` alike), when both runs state one;
3. the same variant (a setting the points of one engine were run under);
4. the same load: the same concurrency cap and the same request rate (the run.yaml target,
   else what the client was told; an unbounded rate matches an unbounded rate);
5. input and output lengths (tokens per request: the scenario's, else the file's totals ÷
   completed requests) within ``tolerance`` of the larger of the two, when both runs state
   them;
6. the same number of requests asked, when both clients record it (a benchmark of twice
   the prompts takes twice as long).

The workload id is not a criterion: two sweeps of the same rates and lengths whose run.yaml
names them ``in218-out223`` and ``nightly`` match point by point. Among several candidates a
group takes the one with its own engine id (two engines of a run may share a name), then its
own workload id, then the closest lengths; each group is matched once. Every group left
without a partner carries the reason, in words a user can check against the files: the
first criterion no candidate met, with the nearest candidate's value
(``vLLM r=16: no point in run B at this load (B has r=1, r=4)``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..core import ids

__all__ = ["DEFAULT_TOLERANCE", "Group", "GroupKey", "Match", "Matching", "groups_of",
           "load_columns", "match_groups", "model_name", "point_lengths"]

DEFAULT_TOLERANCE = 0.10      # lengths within 10% of the larger match
GroupKey = tuple[str, str, str]    # (engine id, workload id, load part): a group in one run


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def load_columns(point: dict[str, Any]) -> tuple[float | None, float | None]:
    """(concurrency cap, request rate) a point ran at: run.yaml's targets, else what the
    client was told (its own settings); None where neither says. A cap of 0 or less is no
    cap; an unbounded rate is ``inf``."""
    conc = _num(point.get("max_concurrency_target"))
    rate = _num(point.get("request_rate_target"))
    if conc is None:
        conc = _num(point.get("max_concurrency"))
    if rate is None:
        rate = _num(point.get("request_rate"))
    if conc is not None and conc <= 0:
        conc = None
    return conc, rate


def point_lengths(point: dict[str, Any]) -> tuple[float | None, float | None]:
    """(input, output) tokens per request: the scenario's, else the file's totals ÷ the
    requests completed; None where neither is known."""
    done = _num(point.get("completed"))
    out = []
    for side in ("input", "output"):
        value = _num(point.get(f"scenario_{side}_tokens"))
        total = _num(point.get(f"total_{side}_tokens"))
        if value is None and total is not None and done:
            value = total / done
        out.append(value)
    return out[0], out[1]


def model_name(model: Any) -> str | None:
    """A model as matching compares it: the last part of its path or name, lower case."""
    if not model:
        return None
    return re.split(r"[/\\]", str(model).rstrip("/\\"))[-1].lower() or None


def _mean(values: list[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


@dataclass(frozen=True)
class Group:
    """One engine's points at one workload, load and variant of a run (repeats pooled)."""

    run: str
    key: GroupKey
    engine: str                   # the engine's name as run.yaml gives it
    model: str | None
    concurrency: float | None
    rate: float | None
    input_tokens: float | None
    output_tokens: float | None
    variant: str
    points: tuple[dict[str, Any], ...] = field(repr=False, default=())
    requests: float | None = None      # requests the client was asked to send (None: unstated)

    @property
    def label(self) -> str:
        """``vLLM in218-out223 r16``: how the lists name the group."""
        return f"{self.engine} {self.key[1]} {self.key[2]}"

    @property
    def load(self) -> str:
        """The load as the lists say it: ``c=16``, ``r=4``, ``r=inf``, ``c=8 r=2``."""
        parts = [f"c={_short(self.concurrency)}" if self.concurrency is not None else "",
                 f"r={_short(self.rate)}" if self.rate is not None else ""]
        return " ".join(p for p in parts if p) or "load not stated"


def _short(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:g}"


def groups_of(run_id: str, points: list[dict[str, Any]], engines: dict[str, str],
              model: str | None, skip: set[str] | None = None) -> dict[GroupKey, Group]:
    """The run's groups: ``engines`` maps engine id to name, ``model`` is the run's (a
    point's own wins), ``skip`` holds point ids to leave out (invalid points)."""
    pooled: dict[GroupKey, list[dict[str, Any]]] = {}
    for p in points:
        if skip and p["point"] in skip:
            continue
        load = ids.load_part(p["load"], p.get("variant") or "")
        pooled.setdefault((p["engine"], p["workload"], load), []).append(p)
    out = {}
    for key, pts in pooled.items():
        first = pts[0]
        conc, rate = load_columns(first)
        lengths = [point_lengths(p) for p in pts]
        out[key] = Group(run=run_id, key=key, engine=engines.get(key[0], key[0]),
                         model=model_name(first.get("model") or model),
                         concurrency=conc, rate=rate,
                         input_tokens=_mean([x for x, _ in lengths]),
                         output_tokens=_mean([y for _, y in lengths]),
                         variant=first.get("variant") or "", points=tuple(pts),
                         requests=_num(first.get("requests_asked")))
    return out


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b or math.isclose(a, b, rel_tol=1e-9)


def _apart(a: float | None, b: float | None) -> float:
    """Relative distance of two lengths (of the larger); 0 when either is unknown."""
    if a is None or b is None or max(a, b) <= 0:
        return 0.0
    return abs(a - b) / max(a, b)


def _length_gap(a: Group, b: Group) -> float:
    return max(_apart(a.input_tokens, b.input_tokens), _apart(a.output_tokens, b.output_tokens))


@dataclass(frozen=True)
class Match:
    base: Group
    other: Group
    notes: tuple[str, ...] = ()     # what could not be checked (a length neither run states)


@dataclass
class Matching:
    base_run: str
    other_run: str
    tolerance: float
    matched: list[Match] = field(default_factory=list)
    unmatched: list[tuple[Group, str]] = field(default_factory=list)   # (group, why)

    def lines(self) -> list[str]:
        """What matched and what did not, one line each, for a terminal or a CI log."""
        out = [f"matched {m.base.label} ({m.base.load}) of {self.base_run} with "
               f"{m.other.label} of {self.other_run}"
               + (f" [{'; '.join(m.notes)}]" if m.notes else "") for m in self.matched]
        out += [f"not matched: {g.label} ({g.load}) of {g.run}: {why}"
                for g, why in self.unmatched]
        return out


def _criteria(tolerance: float):
    """(name, test) in the order the reasons name them."""
    return (
        ("engine", lambda a, b: a.engine.lower() == b.engine.lower()),
        ("model", lambda a, b: a.model is None or b.model is None or a.model == b.model),
        ("variant", lambda a, b: a.variant == b.variant),
        ("load", lambda a, b: _same(a.concurrency, b.concurrency) and _same(a.rate, b.rate)),
        ("lengths", lambda a, b: _length_gap(a, b) <= tolerance + 1e-12),
        ("requests", lambda a, b: a.requests is None or b.requests is None
         or _same(a.requests, b.requests)),
    )


def _why(group: Group, others: list[Group], other_run: str, tolerance: float) -> str:
    """The first criterion that no candidate met, with what the nearest had."""
    left = others
    for name, test in _criteria(tolerance):
        kept = [o for o in left if test(group, o)]
        if kept:
            left = kept
            continue
        if name == "engine":
            return f"no {group.engine} point in run {other_run}"
        if name == "model":
            return f"model {group.model} vs {left[0].model}"
        if name == "variant":
            return f"variant {group.variant or 'none'} vs {left[0].variant or 'none'}"
        if name == "load":
            loads = ", ".join(sorted({o.load for o in left}))
            return f"no point in run {other_run} at this load ({other_run} has {loads})"
        if name == "requests":
            return (f"{_short(group.requests)} vs {_short(left[0].requests)} requests asked "
                    "(a duration and its throughputs depend on how many)")
        near = min(left, key=lambda o: _length_gap(group, o))
        return _length_reason(group, near, tolerance)
    return f"its match in run {other_run} was taken by another point"


def _length_reason(a: Group, b: Group, tolerance: float) -> str:
    side = "input" if _apart(a.input_tokens, b.input_tokens) > tolerance else "output"
    x, y = (a.input_tokens, b.input_tokens) if side == "input" else \
        (a.output_tokens, b.output_tokens)
    return f"{side} length {x:.0f} vs {y:.0f} beyond {tolerance:.0%}"


def _notes(a: Group, b: Group) -> tuple[str, ...]:
    notes = []
    for side in ("input", "output"):
        x, y = getattr(a, f"{side}_tokens"), getattr(b, f"{side}_tokens")
        if x is None or y is None:
            notes.append(f"{side} length not stated in both runs: not compared")
    if a.model is None or b.model is None:
        notes.append("model not stated in both runs: not compared")
    return tuple(notes)


def _order(g: Group) -> tuple:
    """Groups in the order a reader expects: engine, workload, variant, then load by
    number (r1, r4, r16, not r1, r16, r4)."""
    rate = g.rate if g.rate is not None else -1.0
    conc = g.concurrency if g.concurrency is not None else -1.0
    return (g.key[0], g.key[1], g.variant, rate, conc, g.key[2])


def match_groups(base: dict[GroupKey, Group], other: dict[GroupKey, Group],
                 tolerance: float = DEFAULT_TOLERANCE) -> Matching:
    """Pair each group of ``base`` with the group of ``other`` that measured the same
    (see the module docstring); the rest, with the reason, in ``unmatched``."""
    base_run = next(iter(base.values())).run if base else ""
    other_run = next(iter(other.values())).run if other else ""
    result = Matching(base_run, other_run, tolerance)
    free = dict(other)
    tests = [t for _, t in _criteria(tolerance)]
    for key in sorted(base, key=lambda k: _order(base[k])):
        group = base[key]
        fits = [o for o in free.values() if all(t(group, o) for t in tests)]
        if not fits:
            result.unmatched.append((group, _why(group, list(other.values()), other_run,
                                                 tolerance)))
            continue
        best = min(fits, key=lambda o: (o.key[0] != key[0], o.key[1] != key[1],
                                        _length_gap(group, o), o.key))
        del free[best.key]
        result.matched.append(Match(group, best, _notes(group, best)))
    for key in sorted(free, key=lambda k: _order(free[k])):
        group = free[key]
        result.unmatched.append((group, _why(group, list(base.values()), base_run,
                                             tolerance)))
    return result
