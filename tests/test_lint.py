"""`make lint` stays clean: ruff, with the project's own settings, over every Python file
we write (the package, the tests, the benchmarks, the tools and the notebooks' twins)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

FOLDERS = ("src", "tests", "benchmarks", "tools", "notebooks/src")


def test_ruff_finds_nothing():
    pytest.importorskip("ruff", reason="ruff is not installed (make install puts it in .venv)")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *FOLDERS],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:]
