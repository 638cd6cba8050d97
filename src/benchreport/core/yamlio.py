"""Safe YAML loading that remembers the line of every key, for error messages."""

from __future__ import annotations

from typing import Any

import yaml

from .errors import ConfigError
from .redact import visible


class Located(dict):
    """A mapping loaded from YAML; ``lines[key]`` is the 1-based line of each key."""

    lines: dict[str, int]
    line: int


_STANDARD_TAGS = {f"tag:yaml.org,2002:{t}" for t in (
    "map", "seq", "str", "int", "float", "bool", "null", "timestamp")}


def _convert(node: yaml.Node, path: str) -> Any:
    # Only plain YAML types: a tag such as !!python/object is refused, never constructed.
    if node.tag not in _STANDARD_TAGS:
        raise ConfigError(f"not valid YAML for this file (unsupported tag {node.tag})",
                          path=path, line=node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out = Located()
        out.lines = {}
        out.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = _convert(key_node, path)
            if not isinstance(key, str | int | float | bool):
                raise ConfigError("mapping keys must be plain scalars", path=path,
                                  line=key_node.start_mark.line + 1)
            key = str(key)
            if key in out:
                raise ConfigError(f"duplicate key {key!r}", path=path,
                                  line=key_node.start_mark.line + 1)
            out[key] = _convert(value_node, path)
            out.lines[key] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, path) for item in node.value]
    # Scalars: let the safe constructor resolve the type (int, float, bool, date, str).
    value = yaml.SafeLoader(  # noqa: S506 - SafeLoader, never the full loader
        ""
    ).construct_object(node, deep=True)
    # a control or direction character in a title or a name is shown, never acted on
    return visible(value) if isinstance(value, str) else value


def load_yaml(text: str, path: str) -> Any:
    """Parse ``text`` with the safe loader; errors name ``path`` and the line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"not valid YAML ({problem})", path=path, line=line) from None
    if node is None:
        raise ConfigError("empty file, expected a YAML mapping", path=path)
    return _convert(node, path)
