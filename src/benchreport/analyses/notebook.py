"""What the notebooks call, and nothing else: loading the run as ingest saw it, gathering
a notebook's figures, the few views a notebook shows that join two analyses, and the
explicit ``save_*`` steps that write what later steps read (``pipeline/schedule.py`` says
which phase may write what). The analyses themselves are in their topic modules
(``endtoend``, ``caveats``, ``claimcheck``, ``timeline``, ``server``, ``state``,
``compare``, ...); their notebook names are re-exported here."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..core.figures import Figure, fragment
from ..core.files import write_json
from ..core.paths import ComparePaths
from ..core.records import Ingested, Run
from ..core.runmeta import load_run as load_run_meta
from ..core.tables import write_rows
from .caveats import Caveats, all_caveats
from .claimcheck import ClaimCheck, claim_check
from .compare import Comparison, compare_runs, record
from .endtoend import EndToEnd, end_to_end, run_yaml_source, workload_figures
from .gateconfig import report_noise
from .prefill import CHUNK_COLUMNS, chunk_rows
from .server import server_figures
from .state import METRICS, SERIES_COLUMNS, state_figures, state_series
from .timeline import COLUMNS, table_rows, timeline

__all__ = ["Caveats", "ClaimCheck", "Collector", "CompareCollector", "EndToEnd", "caveats",
           "claim_check", "compare", "end_to_end", "load_run", "request_timeline",
           "run_yaml_source", "save_caveats", "save_chunks", "save_claims", "save_compare",
           "save_figures", "save_server_series", "save_timeline", "server_view",
           "workload_figures"]


def load_run(run_id: str, data_root="data", report_root="report") -> Run:
    """The run as ingest saw it: run.yaml read from ingest's copy under derived/inputs/."""
    return load_run_meta(run_id, data_root, report_root, after_ingest=True)


class Collector:
    """Gathers a notebook's figures; each is stamped with the cell that computed it."""

    def __init__(self, run: Run, notebook: str) -> None:
        self.run, self.notebook = run, notebook
        self.figures: list[Figure] = []

    def add(self, figures: list[Figure]) -> pd.DataFrame:
        """Keep ``figures`` (stamped with the current cell) and return them as a table."""
        cell = _current_cell()
        stamped = [replace(f, cell=cell) for f in figures]
        self.figures += stamped
        return pd.DataFrame([{"id": f.id, "value": f.value, "unit": f.unit, "method": f.method}
                             for f in stamped], columns=["id", "value", "unit", "method"])

    def save(self) -> str:
        return save_figures(self.run, self.figures, self.notebook)


def _current_cell() -> int | None:
    # Imported here, not at the top: only a notebook's kernel has a shell to ask; elsewhere
    # (the tests, ``benchreport explain``) importing IPython would be time spent for nothing.
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipykernel is a dependency
        return None
    shell = get_ipython()
    return int(shell.execution_count) if shell is not None else None


def save_figures(run: Run, figures: list[Figure], notebook: str) -> str:
    """Write a notebook's figures to derived/figures/<notebook>.json; return that path."""
    return _save_fragment(run.paths, figures, notebook)


def _save_fragment(paths, figures: list[Figure], notebook: str) -> str:
    """``figures`` under ``paths.figure_fragments`` (a run's or a comparison's folder)."""
    path = paths.figure_fragments / f"{notebook.removesuffix('.ipynb')}.json"
    write_json(path, fragment(figures, notebook))
    return paths.rel(path)


def save_chunks(run: Run, sequences: dict) -> str:
    """Write derived/tables/prefill_chunks.parquet: every batch of every request, for the
    chunk chart (which draws and does not analyse)."""
    write_rows(run.paths.prefill_chunks, chunk_rows(sequences), CHUNK_COLUMNS)
    return run.paths.rel(run.paths.prefill_chunks)


def caveats(run: Run, ing: Ingested) -> Caveats:
    """What was not controlled (``caveats.all_caveats``): settings that differ, events
    inside the measurements and what one run cannot tell; ``save_caveats`` writes it."""
    return all_caveats(run, ing)


def save_caveats(run: Run, cav: Caveats) -> str:
    """Write derived/caveats.json (the claim check and the article read it)."""
    write_json(run.paths.caveats_json, cav.record)
    return run.paths.rel(run.paths.caveats_json)


def save_claims(run: Run, check: ClaimCheck) -> str:
    """Write derived/claims.json (the article reads it); a run without claims.yaml has
    none to write."""
    if not check.record:
        return ""
    write_json(run.paths.claims_json, list(check.record))
    return run.paths.rel(run.paths.claims_json)


# --- comparisons across runs (notebooks/compare/) ----------------------------------------

def compare(store: str, runs: str, base: str, data_root: str | None = None) -> Comparison:
    """The comparison of ``runs`` (run ids separated by spaces) against ``base``, read from
    the results store ``store`` (the folder the build resolved: ``--store``,
    ``$BENCHREPORT_STORE`` or ``report/_store``); each other run's changes judged with the
    gate's noise (``gateconfig.report_noise``: the floors of its
    ``<data_root>/<run>/run.yaml`` ``gate:`` block, then the store's history)."""
    run_ids = runs.split()
    return compare_runs(Path(store), run_ids, base or None,
                        noise=report_noise(Path(store), run_ids, base, data_root))


class CompareCollector(Collector):
    """A comparison notebook's figures (as ``Collector``, written under the comparison)."""

    def __init__(self, out: str, notebook: str) -> None:
        folder = Path(out).resolve()
        self.paths = ComparePaths(name=folder.name, report=folder, project=Path.cwd())
        self.notebook = notebook
        self.figures = []

    def save(self) -> str:
        return _save_fragment(self.paths, self.figures, self.notebook)


def save_compare(figs: CompareCollector, comp: Comparison) -> str:
    """Write derived/compare.json of the comparison (the article reads it)."""
    write_json(figs.paths.compare_json, record(comp))
    return figs.paths.rel(figs.paths.compare_json)


def server_view(run: Run, ing: Ingested) -> tuple[pd.DataFrame, list[Figure], list[dict]]:
    """The server per benchmark: its /metrics figures and its state from the log lines
    (``analyses.state``), and the series over time, one row per scrape (source metrics)
    and per stats line (source log), for the charts; ``save_server_series`` writes them."""
    figures, scraped = server_figures(run, ing)
    figures += state_figures(run, ing)
    series = state_series(run, ing) + [{"source": METRICS, **r} for r in scraped]
    table = pd.DataFrame([{"id": f.id, "value": f.value, "unit": f.unit} for f in figures],
                         columns=["id", "value", "unit"])
    return table, figures, series


def save_server_series(run: Run, series: list[dict]) -> str:
    """Write derived/tables/server_series.parquet: running and waiting requests and KV
    usage (a fraction; a scrape as exposed) at every stats line (source log: file, line) and
    every /metrics scrape (source metrics) inside a benchmark window (the charts draw it)."""
    write_rows(run.paths.server_series, series, SERIES_COLUMNS, {"line": "BIGINT"})
    return run.paths.rel(run.paths.server_series)


def request_timeline(run: Run, ing: Ingested) -> tuple[pd.DataFrame, list[Figure], list[dict]]:
    """Where each request's time went: the rows (``save_timeline`` writes them), the
    summary figures, and the rows as a table to show."""
    rows, figures = timeline(run, ing)
    stored = table_rows(rows)
    return pd.DataFrame(stored, columns=COLUMNS), figures, stored


def save_timeline(run: Run, rows: list[dict]) -> str:
    """Write derived/tables/timeline.parquet (the Gantt chart draws it)."""
    write_rows(run.paths.timeline, rows, COLUMNS)
    return run.paths.rel(run.paths.timeline)
