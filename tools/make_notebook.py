"""Write a stripped .ipynb from a py:percent-style source (cells split on '# %%').

Notebooks are committed without outputs; this keeps them diffable and lets us write them as
plain text. Usage:
python tools/make_notebook.py notebooks/src/10-end-to-end.py notebooks/10-end-to-end.ipynb
"""

import json
import sys
from pathlib import Path


def cells_from(text: str) -> list[dict]:
    cells = []
    for chunk in text.split("# %%")[1:]:
        header, _, body = chunk.partition("\n")
        body = body.strip("\n")
        tags = ["parameters"] if 'tags=["parameters"]' in header else []
        if header.strip().startswith("[markdown]"):
            lines = [line[2:] if line.startswith("# ") else line.lstrip("#")
                     for line in body.splitlines()]
            cells.append({"cell_type": "markdown", "metadata": {}, "source": "\n".join(lines)})
        else:
            cells.append({"cell_type": "code", "execution_count": None,
                          "metadata": {"tags": tags} if tags else {}, "outputs": [],
                          "source": body})
    return cells


def main(src: str, dst: str) -> None:
    nb = {"cells": cells_from(Path(src).read_text(encoding="utf-8")),
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"},
                       "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    for i, cell in enumerate(nb["cells"]):
        cell["id"] = f"c{i:02d}"
    Path(dst).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
