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
# No file of ours nests deeper than a few levels or uses aliases at all; these bounds stop a
# hostile or broken file (a recursive alias, an alias bomb, 100,000 brackets) with one line.
MAX_DEPTH = 100
MAX_ALIAS_VALUES = 10_000


class _Walk:
    """The state of one conversion: the collections being converted (a value that holds
    itself through an alias is refused) and how many values aliases have repeated."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.open: set[int] = set()
        self.seen: set[int] = set()
        self.repeated = 0

    def enter(self, node: yaml.Node, depth: int) -> None:
        line = node.start_mark.line + 1
        if depth > MAX_DEPTH:
            raise ConfigError(f"values nested more than {MAX_DEPTH} levels deep", path=self.path,
                              line=line)
        if id(node) in self.open:
            raise ConfigError("an alias refers to the value that holds it (a recursive "
                              "alias)", path=self.path, line=line)
        if id(node) in self.seen:
            self.repeated += 1
            if self.repeated > MAX_ALIAS_VALUES:
                raise ConfigError(f"aliases repeat more than {MAX_ALIAS_VALUES:,} values "
                                  "(an alias bomb); write the values out instead",
                                  path=self.path, line=line)
        self.seen.add(id(node))


def _convert(node: yaml.Node, walk: _Walk, depth: int = 0) -> Any:
    path = walk.path
    # Only plain YAML types: a tag such as !!python/object is refused, never constructed.
    if node.tag not in _STANDARD_TAGS:
        raise ConfigError(f"not valid YAML for this file (unsupported tag {node.tag})",
                          path=path, line=node.start_mark.line + 1)
    walk.enter(node, depth)
    if isinstance(node, yaml.CollectionNode):
        walk.open.add(id(node))
        try:
            return _collection(node, walk, depth + 1)
        finally:
            walk.open.discard(id(node))
    return _scalar(node, path)


def _collection(node: yaml.CollectionNode, walk: _Walk, depth: int) -> Any:
    path = walk.path
    if isinstance(node, yaml.MappingNode):
        out = Located()
        out.lines = {}
        out.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = _convert(key_node, walk, depth)
            if not isinstance(key, str | int | float | bool):
                raise ConfigError("mapping keys must be plain scalars", path=path,
                                  line=key_node.start_mark.line + 1)
            key = str(key)
            if key in out:
                raise ConfigError(f"duplicate key {key!r}", path=path,
                                  line=key_node.start_mark.line + 1)
            out[key] = _convert(value_node, walk, depth)
            out.lines[key] = key_node.start_mark.line + 1
        return out
    return [_convert(item, walk, depth) for item in node.value]


def _scalar(node: yaml.Node, path: str) -> Any:
    # Let the safe constructor resolve the type (int, float, bool, date, str); a value it
    # cannot make (2024-13-01, an integer of 5,000 digits) is an error on its line.
    try:
        value = yaml.SafeLoader(  # noqa: S506 - SafeLoader, never the full loader
            ""
        ).construct_object(node, deep=True)
    except (ValueError, OverflowError) as exc:
        shown = node.value if len(node.value) <= 40 else f"{node.value[:40]}…"
        why = str(exc).split(":", 1)[0]       # not Python's advice on its digit limit
        raise ConfigError(f"{shown!r} is not a valid {node.tag.rsplit(':', 1)[-1]} ({why})",
                          path=path, line=node.start_mark.line + 1) from None
    # a control or direction character in a title or a name is shown, never acted on
    return visible(value) if isinstance(value, str) else value


# libyaml's parser where PyYAML was built with it (the wheels are), for the depth check's
# events and the composer's nodes alike: the same nodes, with their lines, four to five
# times quicker than the Python one (a build reads run.yaml, claims.yaml and the
# catalogues in every notebook)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str, path: str) -> Any:
    """Parse ``text`` with the safe loader; errors name ``path`` and the line."""
    deep = _too_deep(text)
    if deep is not None:
        raise ConfigError(f"values nested more than {MAX_DEPTH} levels deep", path=path,
                          line=deep)
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"not valid YAML ({problem})", path=path, line=line) from None
    if node is None:
        raise ConfigError("empty file, expected a YAML mapping", path=path)
    return _convert(node, _Walk(path))


def _too_deep(text: str) -> int | None:
    """The line where ``text`` first nests deeper than MAX_DEPTH, or None. Read as a stream
    of events by libyaml where it is installed (fast, and no recursion: the Python composer
    would recurse once per level, and its scanner slows down with every open bracket)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark.line + 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if "nesting depth" in str(getattr(exc, "problem", "")) and mark is not None:
            return mark.line + 1         # libyaml's own limit (1,000), met while scanning
        return None          # not YAML: the composer says what is wrong, in its own words
    return None
