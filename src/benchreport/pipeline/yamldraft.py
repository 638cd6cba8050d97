"""A YAML file drafted for a person to finish (`benchreport init`'s run.yaml): a plain dict
dumped with the YAML library, then the comments that guide the reader put on the lines of
the keys they concern. The library writes no comments, so they are a separate step, keyed
by the key path (``("workloads", 0, "label")``), never by searching the text.

>>> print(dump({"title": {"en": Quoted("a: b")}, "date": Plain("2026-01-02"),
...             "runs": [{"id": Plain("x"), "rate": Flow([Plain("4"), Plain("inf")])}]},
...            notes={("title",): "edit the title", ("runs", 0, "rate"): "TODO"},
...            heads={("date",): ["when it ran"]}), end="")
title:   # edit the title
  en: "a: b"
# when it ran
date: 2026-01-02
runs:
  - id: x
    rate: [4, inf]   # TODO
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

KeyPath = tuple[str | int, ...]


class Quoted(str):
    """Text in double quotes whatever it holds: a name or a label then stays text (never a
    number, a date or true) and a reader sees where it starts and ends."""


class Plain(str):
    """A scalar written exactly as given, unquoted (``2026-01-02``, ``inf``, ``1.0e+26``),
    so YAML reads it as what it looks like; one that cannot stand unquoted is quoted."""


class Flow(list):
    """A list on one line, ``[1, 2, 4]``: a sweep's values read at a glance."""


class _Dumper(yaml.SafeDumper):
    """Lists indented below their key, as people write them, and no anchors: a value that
    appears twice is written twice."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _quoted(dumper: yaml.SafeDumper, data: Quoted) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style='"')


def _plain(dumper: yaml.SafeDumper, data: Plain) -> yaml.ScalarNode:
    # tagged as YAML will read the text back, so the writer leaves it unquoted
    tag = dumper.resolve(yaml.ScalarNode, str(data), (True, False))
    return dumper.represent_scalar(tag, str(data))


def _flow(dumper: yaml.SafeDumper, data: Flow) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", list(data), flow_style=True)


_Dumper.add_representer(Quoted, _quoted)
_Dumper.add_representer(Plain, _plain)
_Dumper.add_representer(Flow, _flow)


def dump(data: dict, notes: dict[KeyPath, str] | None = None,
         heads: dict[KeyPath, list[str]] | None = None) -> str:
    """``data`` as YAML, keys in their order, no line folded; ``notes``: a comment at the end
    of a key's line; ``heads``: comment lines above it."""
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     width=float("inf"), default_flow_style=False)
    return "".join(f"{line}\n" for line in commented(text.splitlines(), notes or {},
                                                      heads or {}))


def key_paths(lines: list[str]) -> Iterator[KeyPath]:
    """The key path of each line of block-style YAML whose keys are plain words: a line
    closes the keys indented as deep or deeper, and ``- `` starts the next item of a list.

    >>> list(key_paths(["a:", "  - b: 1", "    c: 2", "  - b: 3", "d: 4"]))
    [('a',), ('a', 0, 'b'), ('a', 0, 'c'), ('a', 1, 'b'), ('d',)]
    """
    open_keys: list[tuple[int, str | int]] = []          # (indent, key or list index)
    items: dict[KeyPath, int] = {}
    for line in lines:
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        while open_keys and open_keys[-1][0] >= indent:
            open_keys.pop()
        if body.startswith("- "):
            parent = tuple(k for _, k in open_keys)
            items[parent] = items.get(parent, -1) + 1
            open_keys.append((indent, items[parent]))
            body, indent = body[2:], indent + 2
        open_keys.append((indent, body.split(":", 1)[0]))
        yield tuple(k for _, k in open_keys)


def commented(lines: list[str], notes: dict[KeyPath, str], heads: dict[KeyPath, list[str]]
              ) -> list[str]:
    """``lines`` with the comments put in; a comment for a key the lines lack is an error
    (a draft that silently lost its guidance would read as complete)."""
    out: list[str] = []
    seen: set[KeyPath] = set()
    for line, path in zip(lines, key_paths(lines), strict=True):
        out += [f"# {head}" for head in heads.get(path, ())]
        out.append(f"{line}   # {notes[path]}" if path in notes else line)
        seen.add(path)
    lost = sorted(map(str, (set(notes) | set(heads)) - seen))
    if lost:
        raise ValueError(f"comments for keys the YAML does not have: {', '.join(lost)}")
    return out


@dataclass
class Draft:
    """A YAML file being drafted: its data, and the comments for the person who finishes
    it (at the end of a key's line, or lines above it), by key path."""

    data: dict = field(default_factory=dict)
    notes: dict[KeyPath, str] = field(default_factory=dict)
    heads: dict[KeyPath, list[str]] = field(default_factory=dict)

    def text(self) -> str:
        return dump(self.data, self.notes, self.heads)
