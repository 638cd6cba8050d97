"""What the report shows of a name or a value from the inputs: at most DISPLAY_CHARS
characters, the rest replaced by an ellipsis.

A model name, a label or a setting of 200,000 characters is data: it stays whole in the
audit trail (run.yaml's copy under derived/inputs/, the derived tables, figures.json, the
results store). The report (HTML, PDF, Markdown, charts) shows its start; no page needs more
to tell runs apart, and no layout engine has to break a line of 200,000 characters.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

DISPLAY_CHARS = 200
ELLIPSIS = "…"


def shorten(text: str, limit: int = DISPLAY_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the last of them an ellipsis.

    >>> shorten("Kimi-K3"), len(shorten("x" * 300)), shorten("x" * 300)[-2:]
    ('Kimi-K3', 200, 'x…')
    """
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


def _short(value: Any) -> Any:
    """Strings shortened, in a dict's values, a list or a tuple; a dict keeps its type and
    attributes (a YAML mapping its key lines)."""
    if isinstance(value, str):
        return shorten(value)
    if isinstance(value, dict):
        out = copy.copy(value)
        out.clear()
        out.update((k, _short(v)) for k, v in value.items())
        return out
    if isinstance(value, list | tuple):
        return type(value)(_short(v) for v in value)
    return value


def _fields(obj: Any, *names: str) -> Any:
    return dataclasses.replace(obj, **{n: _short(getattr(obj, n)) for n in names})


def display_meta(meta: Any) -> Any:
    """A run's metadata (``runmeta.RunMeta``) as the report shows it: the names and values
    run.yaml gives (title, model, hardware, deployment, each engine's name, image and
    version, each workload's label and dataset, the assumed settings and their values, the
    sources) shortened. Ids stay as they are (figures are found by them), and so does
    prose, which wraps at its spaces (notes, the reconstruction statement, why a setting
    was assumed)."""
    return dataclasses.replace(
        _fields(meta, "title", "model", "hardware", "deployment", "sources"),
        engines=tuple(_fields(e, "name", "image", "version") for e in meta.engines),
        workloads=tuple(_fields(w, "label", "dataset") for w in meta.workloads),
        assumed=tuple(_fields(a, "setting", "value") for a in meta.assumed))
