"""Modules use each other's public names only, and say which names they offer: no module
imports another's private (underscored) name or reaches for one as ``module._name``, and
every name an ``__all__`` lists exists."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from .sources import syntax_tree

SRC = Path(__file__).resolve().parent.parent / "src"
PKG = SRC / "benchreport"

# Private imports that live in files another piece of work holds: to be made public there.
PENDING: set[tuple[str, str, str]] = set()

# The modules that face the rest of the package: each says what it offers (core.figures
# and core.runmeta too, once the work on them is in).
FACING = ["benchreport.analyses.notebook", "benchreport.analyses.compare",
          "benchreport.analyses.history", "benchreport.analyses.gate",
          "benchreport.analyses.gateconfig", "benchreport.analyses.claimcheck",
          "benchreport.analyses.caveats", "benchreport.analyses.endtoend",
          "benchreport.core.tables", "benchreport.core.paths", "benchreport.core.records",
          "benchreport.core.errors", "benchreport.core.i18n", "benchreport.core.store",
          "benchreport.core.claims", "benchreport.ingest.io", "benchreport.ingest.run",
          "benchreport.ingest.points", "benchreport.ingest.clients",
          "benchreport.publish.render", "benchreport.publish.compare",
          "benchreport.publish.charts", "benchreport.publish.blog",
          "benchreport.pipeline.run", "benchreport.pipeline.compare",
          "benchreport.pipeline.schedule", "benchreport.pipeline.store",
          "benchreport.pipeline.gate", "benchreport.pipeline.explain"]


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _target(mod: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _uses() -> set[tuple[str, str, str]]:
    """(module, the module it takes from, the private name) for every such use."""
    found = set()
    for path in PKG.rglob("*.py"):
        mod = _module(path)
        tree = syntax_tree(path)
        modules: dict[str, str] = {}            # a local name bound to a benchreport module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(mod, path, node)
                if not target.startswith("benchreport"):
                    continue
                for a in node.names:
                    if _private(a.name):
                        found.add((mod, target, a.name))
                    elif (PKG.parent / f"{target}.{a.name}".replace(".", "/")).with_suffix(
                            ".py").is_file():
                        modules[a.asname or a.name] = f"{target}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("benchreport") and a.asname:
                        modules[a.asname] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) and \
                    isinstance(node.value, ast.Name) and node.value.id in modules:
                found.add((mod, modules[node.value.id], node.attr))
    return {u for u in found if u[0] != u[1]}


def test_no_module_uses_another_modules_private_names():
    uses = _uses()
    wrong = sorted(f"{m} uses {t}.{n}" for m, t, n in uses - PENDING)
    assert not wrong, wrong


def test_the_pending_private_uses_are_still_there():
    """Once made public, a pending use is taken off PENDING."""
    assert PENDING <= _uses()


def test_every_name_in_all_exists_and_the_facing_modules_have_one():
    missing, without = [], []
    for path in sorted(PKG.rglob("*.py")):
        mod = _module(path)
        if path.name == "__main__.py":          # importing it runs the command line
            continue
        module = importlib.import_module(mod)
        names = getattr(module, "__all__", None)
        if names is None:
            if mod in FACING:
                without.append(mod)
            continue
        assert len(names) == len(set(names)), mod
        missing += [f"{mod}.{n}" for n in names if not hasattr(module, n)]
        missing += [f"{mod}.{n} (private)" for n in names if _private(n)]
    assert not missing, missing
    assert not without, without
