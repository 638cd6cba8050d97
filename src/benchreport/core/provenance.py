"""Where each figure's value comes from, and how that passes from figure to figure.

Five kinds, strongest first:

``measured``       read from a real input file;
``calibrated``     a published target a reconstruction was fitted to, or copied from the
                   published text (agreeing with that text is by construction);
``assumed``        a value run.yaml or a reconstruction's scenario states without a source;
``model-derived``  follows from the engine model a reconstruction's generator assumes;
``free``           set by the generator's random seed within the calibrated bounds.

A figure computed from others takes the weakest kind among its inputs, unless a rule names
the figure itself (a reconstruction's scenario knows that a steady-phase mean it was fitted
to is calibrated, although the lines it averages are free). A leaf figure no rule names takes
the run's default: ``measured`` for a real run, ``model-derived`` for a reconstruction.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from .figures import Figure

MEASURED = "measured"
CALIBRATED = "calibrated"
ASSUMED = "assumed"
MODEL = "model-derived"
FREE = "free"
KINDS = (MEASURED, CALIBRATED, ASSUMED, MODEL, FREE)      # strongest first
# A why in words is stored (figures.json) in a stable form: "@<key>", then " | name=value"
# per parameter; the report renders catalogue key provwhy.<key> in the reader's language, its
# parameters (scenario keys and values, figure ids) as they are. Any other why is the
# scenario's own text (keys and values), shown as it is.
KEYED = "@"
_PARAM = " | "


def reason(key: str, /, **params: object) -> str:
    """A why in words: catalogue key ``provwhy.<key>`` with its parameters, in a stable form.

    >>> reason("target_duration", duration=12.5)
    '@target_duration | duration=12.5'
    """
    return KEYED + key + "".join(f"{_PARAM}{k}={v}" for k, v in params.items())


def parse_reason(why: str) -> tuple[str, dict[str, str]] | None:
    """``(key, parameters)`` of a why in words; None for the scenario's own text.

    >>> parse_reason("@target_duration | duration=12.5"), parse_reason("seed 7")
    (('target_duration', {'duration': '12.5'}), None)
    """
    if not why.startswith(KEYED):
        return None
    key, *params = why[len(KEYED):].split(_PARAM)
    return key, dict(p.split("=", 1) for p in params)


def reason_words(why: str, t: Mapping[str, str], lang: str = "en", assumed=()) -> str:
    """A why as plain text in ``lang`` (``t``: its catalogue; ``assumed``: run.yaml's
    assumptions, which a why may name by index); the scenario's own text as it is."""
    parsed = parse_reason(why)
    if parsed is None:
        return why
    key, params = parsed
    if key == "assumption":
        a = assumed[int(params["index"])]
        return f"{a.setting.get(lang, a.setting['en'])}: {a.value.get(lang, a.value['en'])}"
    return t["provwhy." + key].format(**params)


PROPAGATED = KEYED + "weakest"    # a why that names figures, not an input
GENERATED = (MODEL, FREE)          # what a reconstruction's generator produced, not a finding
BY_CONSTRUCTION = (CALIBRATED, ASSUMED)   # agreement with the published text is by design


@dataclass(frozen=True)
class Rule:
    """Figures whose id matches ``pattern`` (fnmatch) and whose context holds every pair of
    ``context`` have provenance ``kind``, set by ``why`` (the input's name and value)."""

    pattern: str
    kind: str
    why: str
    context: tuple[tuple[str, str], ...] = ()
    # a floor: the figure rests on this input among others, so it is at most this strong
    # (run.yaml's assumed[].figures); the figure's own provenance still applies
    floor: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown provenance {self.kind!r}; expected one of {KINDS}")

    def matches(self, fig: Figure) -> bool:
        return fnmatch.fnmatchcase(fig.id, self.pattern) and all(
            str(fig.context.get(k)) == v for k, v in self.context)


def weakest(kinds: Iterable[str]) -> str:
    """The weakest of ``kinds`` (measured when there are none).

    >>> weakest(["calibrated", "free", "assumed"]), weakest([])
    ('free', 'measured')
    """
    return max(kinds, key=KINDS.index, default=MEASURED)


def strongest(kinds: Iterable[str]) -> str:
    """The strongest of ``kinds`` (free when there are none).

    >>> strongest(["free", "calibrated", "assumed"]), strongest([])
    ('calibrated', 'free')
    """
    return min(kinds, key=KINDS.index, default=FREE)


def assign(registry: Mapping[str, Figure], rules: Sequence[Rule],
           default: str = MEASURED, default_why: str = "") -> dict[str, Figure]:
    """Every figure of ``registry`` with its provenance: the one it was computed with, else
    the first rule that names it, else the weakest of the figures it depends on, else
    ``default`` (set by ``default_why``); then no stronger than any floor rule naming it."""
    done: dict[str, tuple[str, str]] = {}

    def resolve(fid: str, path: tuple[str, ...] = ()) -> tuple[str, str]:
        if fid in done:
            return done[fid]
        fig = registry[fid]
        rule = next((r for r in rules if not r.floor and r.matches(fig)), None)
        if fig.provenance:              # the analysis that computed it knew where it came from
            kind, why = fig.provenance, fig.provenance_why
        elif rule is not None:
            kind, why = rule.kind, rule.why
        elif fig.depends_on and fid not in path:
            inputs = [(dep, resolve(dep, (*path, fid))) for dep in fig.depends_on
                      if dep in registry]
            kind = weakest(k for _, (k, _w) in inputs)
            which = [dep for dep, (k, _w) in inputs if k == kind]
            why = (reason("weakest", figures=", ".join(which))
                   if kind != MEASURED else reason("measured_inputs"))
        else:
            kind, why = default, default_why
        for floor in (r for r in rules if r.floor and r.matches(fig)):
            if KINDS.index(floor.kind) > KINDS.index(kind):
                kind, why = floor.kind, floor.why
        done[fid] = (kind, why)
        return done[fid]

    return {fid: replace(fig, provenance=resolve(fid)[0], provenance_why=resolve(fid)[1])
            for fid, fig in registry.items()}


def of(registry: Mapping[str, Figure], fig_ids: Iterable[str]) -> str:
    """The weakest provenance of the figures ``fig_ids`` that the registry holds."""
    return weakest(registry[f].provenance or MEASURED for f in fig_ids if f in registry)


def origins(registry: Mapping[str, Figure], fig_ids: Iterable[str], kind: str) -> list[str]:
    """What set the figures of provenance ``kind`` that ``fig_ids`` rest on: the reasons of
    the figures a rule or the default named, followed through those that took the kind
    from their inputs (first seen first, each once)."""
    out: dict[str, None] = {}
    seen: set[str] = set()
    todo = [f for f in fig_ids if f in registry]
    while todo:
        fig = registry[todo.pop(0)]
        if fig.id in seen or fig.provenance != kind:
            continue
        seen.add(fig.id)
        if fig.provenance_why.startswith(PROPAGATED):
            todo += [d for d in fig.depends_on if d in registry]
        elif fig.provenance_why:
            out[fig.provenance_why] = None
    return list(out)
