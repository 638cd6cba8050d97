"""The functions issue 32 named as the code base's hardest stay made plain: each at
cyclomatic complexity 15 or less (as radon counts it) and 60 lines or less, and so does
every function of the modules that were split into named steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from radon.complexity import cc_visit

SRC = Path(__file__).resolve().parent.parent / "src" / "benchreport"
LIMIT, LINES = 15, 60

# module -> the named functions ("*": every function of the module)
NAMED = {
    "pipeline/init.py": ["*"],
    "ingest/clients/aiperf.py": ["*"],
    "core/runmeta.py": ["*"],
    "analyses/server.py": ["*"],
    "publish/narrative.py": ["*"],
    "analyses/prefill.py": ["window_accounting"],
    "ingest/parsers/logscan.py": ["scan"],
}


def _blocks(module: str):
    """Every function and method of ``module`` (closures counted inside their function)."""
    out = []
    for block in cc_visit((SRC / module).read_text(encoding="utf-8")):
        out.append(block)
        out.extend(getattr(block, "methods", []))
    return [b for b in out if hasattr(b, "complexity") and not hasattr(b, "methods")]


@pytest.mark.parametrize("module", sorted(NAMED))
def test_the_named_functions_are_plain(module):
    names = NAMED[module]
    blocks = [b for b in _blocks(module) if "*" in names or b.name in names]
    assert blocks, f"none of {names} found in {module}"
    over = [(b.name, b.complexity, b.endline - b.lineno + 1) for b in blocks
            if b.complexity > LIMIT or b.endline - b.lineno + 1 > LINES]
    assert over == []


def test_the_check_sees_a_tangled_function(tmp_path):
    """Not vacuous: a function of 16 branches is over the limit."""
    body = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(16))
    (block,) = cc_visit(f"def f(x):\n{body}\n    return -1\n")
    assert block.complexity == 17 > LIMIT
