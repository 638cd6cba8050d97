"""The regression gate: ``benchreport compare --gate``, read from the results store only.

The runs must have been built (each build exports its run into the store); the gate builds
nothing, runs no notebook and writes no report, so it answers in about a second. It compares
the base run with each other run as ``compare`` does (``analyses.compare.compare_runs``:
the same matching and the same verdicts), with the noise each new run declares: the gate
file when one is given, else the ``gate:`` block of the new run's
``<data-root>/<run>/run.yaml`` when there is one (``analyses.gateconfig``). Where neither
run has repeats and no floor is declared for a metric, the noise comes from the store's
history of the point (``analyses.history``: the runs before the new one, of the same
engine, model, load and lengths; at least as many as ``history.MIN_NOISE_RUNS``), as the
interval that run-to-run noise alone gives a ratio of two single runs (``history.gate_noise``,
at ``history.GATE_LEVEL``); with less history, the verdict is "cannot tell". The comparison
report takes the same noise, so both say the same of every change.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..analyses.compare import compare_runs
from ..analyses.gate import GateResult, gate_result
from ..analyses.gateconfig import (
    GateConfig,
    default_tolerance,
    gated_metrics,
    read_gate_file,
    run_gate,
)
from ..analyses.history import gate_noise
from ..core.errors import ReportError
from ..core.paths import check_run_id
from ..core.store import resolve_store

__all__ = ["gate"]


def gate(run_ids: list[str], *, base: str | None = None, gate_file: Path | None = None,
         data_root: Path | str = "data", report_root: Path | str = "report",
         store_dir: Path | str | None = None,
         tolerance: float | None = None) -> GateResult:
    """The gate's result for ``run_ids`` (base: the first, unless given)."""
    for run_id in run_ids:
        check_run_id(run_id)
    if tolerance is not None and not 0 <= tolerance < 1:
        raise ReportError(f"--tolerance must be a fraction from 0 to below 1 (0.1 is 10%), "
                          f"got {tolerance:g}")
    base = base or (run_ids[0] if run_ids else None)
    others = [r for r in run_ids if r != base]
    configs: dict[str, GateConfig] = {}
    shared = read_gate_file(gate_file) if gate_file else None
    for run_id in others:
        configs[run_id] = shared or run_gate(Path(data_root) / run_id / "run.yaml")
    chosen = tolerance if tolerance is not None else default_tolerance(list(configs.values()))
    store = resolve_store(report_root, store_dir)
    gated = gated_metrics(list(configs.values()))
    noise = {r: dataclasses.replace(c.as_noise(), history=gate_noise(store, r, gated, chosen))
             for r, c in configs.items()}
    comp = compare_runs(store, run_ids, base, noise=noise, tolerance=chosen)
    result = gate_result(comp, gated)
    result.floors = {r: c.where for r, c in configs.items()}
    result.tolerance = chosen
    return result

