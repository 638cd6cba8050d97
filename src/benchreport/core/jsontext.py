"""JSON text as users' files hold it, read so that no content can crash the reader; and
JSON the tool writes, strict (``finite``: no ``Infinity`` or ``NaN``, which JSON has not).

``json.loads`` fails in two ways that are no ``JSONDecodeError``: an integer of more than
4,300 digits (a ``ValueError``) and values nested deeper than Python's recursion limit (a
``RecursionError``). And an integer of more than 308 digits decodes, then overflows the
first ``float()`` a parser applies to it. `loads` reads such an integer as infinite, as
``1e400`` already reads, so the checks that refuse infinite values (``plausible``, a log's
soundness check) name it; `deepest` says where a file nests too deep, for the message.

>>> loads('{"n": ' + "9" * 5000 + ', "m": 12}')
{'n': inf, 'm': 12}
>>> deepest('{"a": [[1]], "b": "[[[[not nesting"}\\n')
(3, 1)
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

# A float stops near 1.8e308: an integer of more digits than this cannot be one.
FLOAT_DIGITS = 308
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_NOT_SHAPE = re.compile(r"[^\[\]{}\n]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1, "\n": 0}


def _integer(digits: str) -> int | float:
    if len(digits.lstrip("-")) > FLOAT_DIGITS:
        return -math.inf if digits.startswith("-") else math.inf
    return int(digits)


def loads(text: str | bytes, **hooks: Any) -> Any:
    """``json.loads`` with integers beyond any float read as ±infinity. Raises
    ``json.JSONDecodeError`` and, for nesting too deep to follow, ``RecursionError``."""
    return json.loads(text, parse_int=_integer, **hooks)


def decoder() -> json.JSONDecoder:
    """A decoder that reads integers as `loads` does (for ``raw_decode`` of one value)."""
    return json.JSONDecoder(parse_int=_integer)


def deepest(text: str) -> tuple[int, int]:
    """How deep ``text`` nests its arrays and objects, and the first line at that depth
    (brackets inside strings do not count). Counted by C loops (regex, map, accumulate):
    a file nested 100,000 deep is measured in milliseconds."""
    shape = _NOT_SHAPE.sub("", _STRING.sub("", text))      # brackets and line ends
    depths = list(itertools.accumulate(map(_STEP.__getitem__, shape), initial=0))
    most = max(depths)
    at = depths.index(most)                 # after the bracket that opened the deepest
    return most, shape.count("\n", 0, at) + 1


def too_deep(text: str) -> str:
    """What to say of ``text`` that ``loads`` could not follow (a RecursionError)."""
    return f"values nested {deepest(text)[0]:,} levels deep, more than a JSON reader follows"


def finite(value: Any) -> Any:
    """``value`` for strict JSON: a non-finite number as text (``"inf"``, ``"nan"``), in
    dicts, lists and tuples too; what ``json.dumps(..., allow_nan=False)`` then writes."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
