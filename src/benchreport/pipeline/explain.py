"""`benchreport explain RUN FIGURE_ID`: a figure, what it was computed from, and the raw lines."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..core.errors import MissingInputError, ReportError
from ..core.figures import Figure, load_registry
from ..core.i18n import english, format_value
from ..core.records import Run

__all__ = ["Explainer", "as_json", "excerpts_of", "explain", "list_ids", "raw_lines", "registry_of"]


def registry_of(run: Run) -> dict[str, Figure]:
    path = run.paths.figures_json
    if not path.is_file():
        raise MissingInputError(f"{run.paths.rel(path)} not found",
                                hint=f"build the report first: make report RUN={run.id}")
    return load_registry(path)


def raw_lines(excerpts: dict[tuple[str, int], str], rel: str, lines: tuple[int, ...],
              limit: int = 5) -> list[str]:
    """The text of up to ``limit`` of ``lines`` (1-based) of a file, as ingest kept it."""
    return [f"{rel}:{n}: {excerpts[(rel, n)]}" for n in sorted(set(lines))[:limit]
            if (rel, n) in excerpts]


def explain(run: Run, figure_id: str, out: Callable[[str], None] = print) -> None:
    Explainer(run).show(figure_id, out)


class Explainer:
    """A built run's figures and kept raw lines, read once, to explain any of its figures."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.registry = registry_of(run)
        self.excerpts = excerpts_of(run)
        self._english: dict[str, str] | None = None

    def why(self, why: str) -> str:
        """What set a figure, in English words (core.provenance.reason)."""
        from ..core.provenance import reason_words

        if self._english is None:       # read once: the catalogue is 90 KB of YAML
            self._english = english()
        return reason_words(why, self._english, "en", self.run.meta.assumed)

    def show(self, figure_id: str, out: Callable[[str], None] = print) -> None:
        """The figure, how it was computed, its inputs with their raw lines, and the same
        for every figure it depends on."""
        registry, run = self.registry, self.run
        if figure_id not in registry:
            close = sorted(i for i in registry if figure_id.split(".")[0] in i)[:5]
            raise ReportError(f"no figure {figure_id!r} in run {run.id}",
                              hint="list them with: benchreport explain "
                                   f"{run.id} --list" + (f" (near: {', '.join(close)})"
                                                         if close else ""))
        seen: set[str] = set()

        def show(fid: str, depth: int) -> None:
            fig = registry[fid]
            pad = "  " * depth
            value = fig.value if isinstance(fig.value, str) or fig.value is None else \
                format_value(fig.value, fig.unit, "en", fig.decimals)
            where = f"notebooks/{fig.notebook}" + (f", cell {fig.cell}" if fig.cell else "")
            out(f"{pad}{fid} = {value}   [{where}]")
            out(f"{pad}  how: {fig.method}")
            if fig.provenance:
                out(f"{pad}  provenance: {fig.provenance}"
                    + (f" ({self.why(fig.provenance_why)})" if fig.provenance_why else ""))
            if fid in seen:
                return
            seen.add(fid)
            for src in fig.sources:
                at = f" key {src.key}" if src.key else ""
                shown_lines = ", ".join(map(str, src.lines[:8])) + \
                    (" …" if len(src.lines) > 8 else "")
                out(f"{pad}  input: {src.path} (sha256 {src.sha256[:16]}…){at}"
                    + (f" lines {shown_lines}" if src.lines else ""))
                for text in raw_lines(self.excerpts, src.path, src.lines, limit=3):
                    out(f"{pad}    {text}")
            for dep in fig.depends_on:
                show(dep, depth + 1)

        show(figure_id, 0)


def excerpts_of(run: Run) -> dict[tuple[str, int], str]:
    """The raw lines ingest kept (explain opens no input file)."""
    from ..core.tables import read_rows

    table = run.paths.tables / "excerpts.parquet"
    if not table.is_file():
        return {}
    return {(r["file"], int(r["line"])): r["text"] for r in read_rows(table)}


def list_ids(run: Run, out: Callable[[str], None] = print) -> None:
    for fid, fig in registry_of(run).items():
        value = fig.value if isinstance(fig.value, str) or fig.value is None else \
            format_value(fig.value, fig.unit, "en", fig.decimals)
        out(f"{fid}\t{value}")


def as_json(run: Run, figure_id: str) -> str:
    return json.dumps(registry_of(run)[figure_id].to_json(), ensure_ascii=False, indent=1)
