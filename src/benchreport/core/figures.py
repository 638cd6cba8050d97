"""The figure registry: every number the report shows, with how and from what it was made."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import BuildError
from .methods import Said, english


@dataclass(frozen=True)
class Source:
    """One input a figure rests on: a file (repo-relative), its sha256, and where in it."""

    path: str
    sha256: str
    key: str | None = None          # JSON key, for result files
    lines: tuple[int, ...] = ()     # 1-based line numbers, for logs and JSONL records
    excerpt: str | None = None      # the raw text of the first line, for the audit appendix


@dataclass(frozen=True)
class Figure:
    """A computed value. ``value`` is a number, or a string for verdicts (e.g. an engine id)."""

    id: str
    value: float | int | str | None
    unit: str
    method: str                     # the formula, in words
    sources: tuple[Source, ...] = ()
    depends_on: tuple[str, ...] = ()  # ids of figures this one was computed from
    notebook: str = ""
    context: dict[str, Any] = field(default_factory=dict)  # engine, workload, ...
    decimals: int | None = None     # how many decimals the report prints
    cell: int | None = None         # execution count of the notebook cell that computed it
    # where the value comes from (core.provenance): measured, calibrated, assumed,
    # model-derived or free, and what set it; given when the registry is merged
    provenance: str = ""
    provenance_why: str = ""
    # the method as a sentence of the methods catalogue (core.methods: its key and
    # arguments, as JSON), from which each edition writes it in its language; empty where
    # the method has no sentence there (the Korean page then shows it in English, marked)
    said: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["sources"] = [
            {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(s).items()
             if v not in (None, (), [])}
            for s in self.sources
        ]
        data["depends_on"] = list(self.depends_on)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Figure:
        sources = tuple(
            Source(path=s["path"], sha256=s["sha256"], key=s.get("key"),
                   lines=tuple(s.get("lines", ())), excerpt=s.get("excerpt"))
            for s in data.get("sources", ())
        )
        return cls(id=data["id"], value=data["value"], unit=data["unit"], method=data["method"],
                   sources=sources, depends_on=tuple(data.get("depends_on", ())),
                   notebook=data.get("notebook", ""), context=data.get("context", {}),
                   decimals=data.get("decimals"), cell=data.get("cell"),
                   provenance=data.get("provenance", ""),
                   provenance_why=data.get("provenance_why", ""),
                   said=data.get("said", {}))


def figure(id: str, value: float | int | str | None, unit: str, method: str | Said, *,
           sources: Iterable[Source] = (), depends_on: Iterable[str] = (),
           decimals: int | None = None, context: dict[str, Any] | None = None,
           provenance: str = "", provenance_why: str = "", **extra: Any) -> Figure:
    """The one way analyses make a figure: ``sources`` and ``depends_on`` may be any
    iterable, and the context is ``context`` (engine, workload, ...) with ``extra`` added
    (a new dict: later changes to ``context`` do not reach the figure). ``provenance``
    only where an analysis knows it; the registry's merge gives the rest. A ``method``
    given as a catalogue sentence (``core.methods.said``) is kept as its English text and,
    for the other editions, as its key and arguments.

    >>> f = figure("limits.repeats", 1, "count", "runs", context={"engine": "vllm"}, load=4)
    >>> f.sources, f.context
    ((), {'engine': 'vllm', 'load': 4})
    """
    text, said = (english(method), method.to_json()) if isinstance(method, Said) else (method, {})
    return Figure(id=id, value=value, unit=unit, method=text, sources=tuple(sources),
                  depends_on=tuple(depends_on), decimals=decimals,
                  context={**(context or {}), **extra}, provenance=provenance,
                  provenance_why=provenance_why, said=said)


# A figure whose value is several numbers (spec per_position: the acceptance at each draft
# position) holds them as one line, in this form; only these two functions spell it.
_LISTED = ", "


def listing(items: Iterable[str]) -> str:
    """Several values as one figure value: ``listing(["0.812", "0.640"]) == "0.812, 0.640"``."""
    return _LISTED.join(items)


def listed(value: Any) -> list[str]:
    """The values of a figure value made by ``listing`` (one value: a list of one).

    >>> listed("0.812, 0.640"), listed(0.5)
    (['0.812', '0.640'], ['0.5'])
    """
    return str(value).split(_LISTED)


def dumps(obj: Any) -> str:
    """Stable JSON text: sorted keys, fixed indentation, trailing newline."""
    return json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True, allow_nan=False) + "\n"


def fragment(figures: list[Figure], notebook: str) -> dict[str, Any]:
    """The JSON document one notebook writes: its figures, stamped with the notebook name."""
    stamped = [Figure(**{**f.__dict__, "notebook": notebook}) for f in figures]
    return {"notebook": notebook,
            "figures": [f.to_json() for f in sorted(stamped, key=lambda f: f.id)]}


def merge(fragments: dict[str, dict[str, Any]]) -> dict[str, Figure]:
    """Merge notebook fragments into one registry; an id defined twice is a build error."""
    registry: dict[str, Figure] = {}
    for name in sorted(fragments):
        for data in fragments[name]["figures"]:
            fig = Figure.from_json(data)
            if fig.id in registry:
                raise BuildError(f"figure id {fig.id!r} is computed by both "
                                 f"{registry[fig.id].notebook} and {fig.notebook}")
            registry[fig.id] = fig
    for fig in registry.values():
        for dep in fig.depends_on:
            if dep not in registry:
                raise BuildError(f"figure {fig.id!r} depends on unknown figure {dep!r}")
    return dict(sorted(registry.items()))


def load_registry(path: Path) -> dict[str, Figure]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {d["id"]: Figure.from_json(d) for d in data["figures"]}
