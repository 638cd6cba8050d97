"""The run's notebook schedule, as data: each notebook's phase, and what each phase reads
and writes.

A phase starts when the one before it is done; the notebooks of one phase run side by side
(two kernels), so none of them may read what another of its phase writes. What a phase
reads must be written by an earlier phase, or be the run's own inputs
(``tests/test_schedule.py`` checks the table, and what the notebooks call, against that).
A notebook in ``notebooks/`` that is not in ``NOTEBOOKS`` stops the build before anything
runs: where a new notebook goes is said here, never guessed from its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import BuildError

__all__ = ["CAVEATS", "CHARTS", "CLAIMS", "FIGURES", "INGESTED", "INPUTS", "NOTEBOOKS",
           "PHASES", "Phase", "phase_of", "schedule"]

# What the notebooks read and write, under report/<RUN>/derived/ unless said otherwise.
INPUTS = "inputs"            # data/<RUN>/: the run's files as given (only ingest reads them)
INGESTED = "ingested"        # ingest.json, inputs/ (ingest's copies of run.yaml, claims.yaml
#                              and the scenario), the tables core.tables.load_ingested reads
FIGURES = "figures"          # figures/<notebook>.json: each notebook's figure fragment
CHARTS = "chart tables"      # tables/prefill_chunks, timeline, server_series.parquet (the
#                              charts draw them; no notebook reads them)
CAVEATS = "caveats"          # caveats.json
CLAIMS = "claims"            # claims.json


@dataclass(frozen=True)
class Phase:
    name: str
    reads: frozenset[str]
    writes: frozenset[str]


PHASES: tuple[Phase, ...] = (
    Phase("ingest", reads=frozenset({INPUTS}), writes=frozenset({INGESTED})),
    Phase("analyses", reads=frozenset({INGESTED}),
          writes=frozenset({FIGURES, CHARTS, CAVEATS})),
    # the claim check reads the analyses' figures and caveats.json, and adds figures of its
    # own (it leaves its own fragment out of what it reads)
    Phase("claims", reads=frozenset({INGESTED, FIGURES, CAVEATS}),
          writes=frozenset({FIGURES, CLAIMS})),
)

# notebooks/<name>.ipynb -> its phase
NOTEBOOKS: dict[str, str] = {
    "05-ingest": "ingest",
    "10-end-to-end": "analyses",
    "15-points": "analyses",
    "20-latency": "analyses",
    "25-timeline": "analyses",
    "30-decode": "analyses",
    "40-prefill": "analyses",
    "50-spec": "analyses",
    "55-server": "analyses",
    "60-crossover": "analyses",
    "70-caveats": "analyses",
    "80-claims": "claims",
}


def phase_of(notebook: Path | str) -> Phase:
    """The declared phase of ``notebook`` (a path or a name, with or without .ipynb)."""
    name = Path(notebook).name.removesuffix(".ipynb")
    if name not in NOTEBOOKS:
        raise BuildError(f"notebook {name}.ipynb has no declared phase",
                         hint=f"add it to NOTEBOOKS in benchreport/pipeline/schedule.py (one "
                              f"of {', '.join(p.name for p in PHASES)})")
    return next(p for p in PHASES if p.name == NOTEBOOKS[name])


def schedule(notebooks: list[Path]) -> list[tuple[Phase, list[Path]]]:
    """``notebooks`` grouped by phase, in phase order (each group in name order); a phase
    none of them is in is left out. A notebook with no declared phase is a BuildError, for
    the first such notebook, before anything runs."""
    phases = [phase_of(nb) for nb in notebooks]
    return [(p, sorted(nb for nb, q in zip(notebooks, phases, strict=True) if q is p))
            for p in PHASES if p in phases]
