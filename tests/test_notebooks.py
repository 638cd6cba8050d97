"""Notebooks are committed stripped, start with a parameters cell, and match their .py twins."""

import json
import re
import subprocess
import sys


def _notebooks(project):
    """The run's notebooks, then those of comparisons across runs (notebooks/compare/)."""
    found = sorted((project / "notebooks").glob("*.ipynb"))
    compare = sorted((project / "notebooks" / "compare").glob("*.ipynb"))
    assert found and compare
    return found + compare


def test_notebooks_are_committed_without_outputs(project):
    for path in _notebooks(project):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, path.name


def test_first_code_cell_is_the_typed_parameters_cell(project):
    for path in _notebooks(project):
        code = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        assert code[0]["metadata"].get("tags") == ["parameters"], path.name
        for line in code[0]["source"].splitlines():
            assert re.match(r"\w+: \w+ = .+  # .+", line), line


def test_notebooks_hold_no_definitions(project):
    for path in _notebooks(project):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                assert not re.search(r"^\s*(def|class) ", cell["source"], re.M), path.name


def test_each_ipynb_matches_its_py_twin(project, tmp_path):
    src = project / "notebooks/src"
    twins = sorted(src.glob("*.py")) + sorted((src / "compare").glob("*.py"))
    notebooks = _notebooks(project)
    assert [p.relative_to(src).with_suffix("") for p in twins] == \
        [p.relative_to(project / "notebooks").with_suffix("") for p in notebooks]
    for twin, notebook in zip(twins, notebooks, strict=True):
        out = tmp_path / f"{twin.stem}.ipynb"
        subprocess.run([sys.executable, str(project / "tools/make_notebook.py"), str(twin),
                        str(out)], check=True)
        assert out.read_text() == notebook.read_text()
