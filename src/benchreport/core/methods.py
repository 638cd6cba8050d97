"""A figure's method as a sentence of the methods catalogue
(templates/labels/methods.<lang>.yaml): a key and its arguments.

An analysis says ``said("latency.p99", n=30710, over=said("latency.over_tokens", ...))``;
``core.figures.figure`` keeps the English text in the figure's ``method`` (figures.json,
`benchreport explain`) and the key and arguments in its ``said``, from which each edition
writes the method in its own language (``words``).

An argument is a string taken as it is in every language (a number as written, a name, a
file, a JSON key, a log field: code, never English prose), a number (formatted by the
sentence's own spec, e.g. ``{n:,}``), another ``Said`` (its sentence in the same language),
or a list of these (joined by a comma). A key marked by ``capital`` ("^" before it) starts
a sentence: its English text begins with a capital letter. A ``joined`` list is its items
with the catalogue's separator between them (join.<name>: "; " in English). A ``given``
text is one the caller already has in every language (from the article's catalogue).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from .errors import BuildError
from .i18n import load_catalogue, sentence
from .paths import LABELS

__all__ = ["Said", "capital", "catalogue", "english", "given", "joined", "said", "statistic",
           "words"]

_JOIN = ", "


@dataclass(frozen=True)
class Said:
    """One sentence of the methods catalogue: its key and the values of its placeholders."""

    key: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "args": {k: _to_json(v) for k, v in self.args.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Said:
        return cls(data["key"], {k: _from_json(v) for k, v in data.get("args", {}).items()})


def said(key: str, /, **args: Any) -> Said:
    """The method sentence ``key`` with its arguments (checked against the catalogue when the
    figure is made: ``english``)."""
    return Said(key, args)


def _to_json(value: Any) -> Any:
    if isinstance(value, Said):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        return Said.from_json(value)
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


@functools.cache
def catalogue(lang: str) -> dict[str, str]:
    """templates/labels/methods.<lang>.yaml, flattened ({"section.key": sentence})."""
    return load_catalogue(LABELS, lang, kind="methods")


def given(**texts: str) -> Said:
    """A text the caller has in each language (``given(en=..., ko=...)``), taken as it is."""
    return Said("given", dict(texts))


def joined(items: list[Any], by: str = "semicolon") -> Said:
    """``items`` with the separator join.<by> of the catalogue between them."""
    return Said("join." + by, {"items": list(items)})


def capital(s: Said) -> Said:
    """``s`` at the start of a sentence (in English, its first letter a capital)."""
    return Said("^" + s.key, s.args)


def _template(key: str, lang: str) -> str:
    key = key.lstrip("^")
    try:
        return catalogue(lang)[key]
    except KeyError:
        raise BuildError(f"the method sentence {key!r} is not in "
                         f"templates/labels/methods.{lang}.yaml") from None


def english(s: Said) -> str:
    """The sentence in English, as plain text (the figure's ``method``)."""
    def arg(value: Any) -> Any:
        if isinstance(value, Said):
            return english(value)
        if isinstance(value, (list, tuple)):
            return _JOIN.join(str(arg(v)) for v in value)
        return value

    if s.key == "given":
        return str(s.args["en"])
    if s.key.startswith("join."):
        return _template(s.key, "en").join(str(arg(v)) for v in s.args["items"])
    text = _template(s.key, "en").format(**{k: arg(v) for k, v in s.args.items()})
    return text[:1].upper() + text[1:] if s.key.startswith("^") else text


def words(s: Said, lang: str) -> Markup:
    """The sentence in ``lang``, as page markup (arguments escaped, Korean particles
    chosen: ``core.i18n.sentence``)."""
    def arg(value: Any) -> Any:
        if isinstance(value, Said):
            return words(value, lang)
        if isinstance(value, (list, tuple)):
            return Markup(_JOIN).join(arg(v) for v in value)
        return value

    if s.key == "given":
        return Markup(escape(s.args[lang]))
    if s.key.startswith("join."):
        return Markup(escape(_template(s.key, lang))).join(arg(v) for v in s.args["items"])
    return sentence(_template(s.key, lang), **{k: arg(v) for k, v in s.args.items()})


def statistic(stat: str) -> Said | str:
    """A statistic's name in a method: mean, median, std, min and max in words, a
    percentile (p90, p99) as it is written in every language."""
    return said("stat." + stat) if stat in ("mean", "median", "std", "min", "max") else stat
