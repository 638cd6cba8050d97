"""The project's Python files as syntax trees, parsed once per test process.

Several tests read the package's source as trees (its import layers, the private names one
module takes from another, the method keys the analyses name, where an id is taken apart);
each parse of the whole package is about a second of CPU. A tree is kept by the file's
text, so a file that changes is parsed again. Callers only read the trees."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def syntax_tree(path: Path) -> ast.Module:
    """The parsed module at ``path`` (shared: do not change it)."""
    return _parse(path.read_text(encoding="utf-8"))


@functools.cache
def _parse(text: str) -> ast.Module:
    return ast.parse(text)
