"""What a gate is told: the noise floors, the gated metrics and the matching tolerance.

From a gate file (``compare --gate --gate-file F``) or the new run's ``run.yaml``, under its
``gate:`` key (a gate file may hold the block at its top or under ``gate:``)::

    gate:
      noise:                      # relative noise per metric: 0.05 is 5%
        p99_ttft_ms: 0.05
        output_throughput: 0.03
      metrics: [p99_ttft_ms, output_throughput]   # the gated metrics (default: all)
      tolerance: 0.10             # input and output lengths within 10% match (default)

A floor is used for a metric when either run has fewer than two repeats of the point
(``analyses.gate.judge``); a metric gated with neither repeats nor a floor is ``cannot tell``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError, MissingInputError
from ..core.yamlio import load_yaml
from .compare import METRICS
from .gate import Noise
from .history import gate_noise
from .matching import DEFAULT_TOLERANCE

__all__ = ["GateConfig", "default_tolerance", "gated_metrics", "parse_gate", "read_gate_file",
           "report_noise", "run_gate"]

KEYS = ("noise", "metrics", "tolerance")


@dataclass(frozen=True)
class GateConfig:
    noise: dict[str, float]
    metrics: tuple[str, ...] | None     # None: every metric of the comparison
    tolerance: float | None             # None: the default
    where: str                          # the file it was read from ("" for none)

    def as_noise(self) -> Noise:
        """The gate's noise: these floors, never the paired requests' resampling."""
        return Noise(floors=dict(self.noise), requests=False)


NONE = GateConfig({}, None, None, "")


def _fraction(value: Any, what: str, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or not 0 <= value < 1:
        raise ConfigError(f"{what} must be a fraction from 0 to below 1 (0.05 is 5%), got "
                          f"{value!r}", path=path)
    return float(value)


def _metric(name: Any, what: str, path: str) -> str:
    if name not in METRICS:
        raise ConfigError(f"{what} names unknown metric {name!r}; known: "
                          f"{', '.join(METRICS)}", path=path)
    return str(name)


def parse_gate(block: Any, path: str) -> GateConfig:
    """A ``gate:`` block (a mapping) read from ``path``, checked; errors name the file."""
    if not isinstance(block, dict):
        raise ConfigError("gate: expected a mapping with noise, metrics, tolerance", path=path)
    unknown = [k for k in block if k not in KEYS]
    if unknown:
        raise ConfigError(f"unknown key gate.{unknown[0]}; known keys: {', '.join(KEYS)}",
                          path=path)
    noise = block.get("noise") or {}
    if not isinstance(noise, dict):
        raise ConfigError("gate.noise: expected a mapping of metric to relative noise",
                          path=path)
    floors = {_metric(k, "gate.noise", path): _fraction(v, f"gate.noise.{k}", path)
              for k, v in noise.items()}
    metrics = block.get("metrics")
    if metrics is not None:
        if not isinstance(metrics, list) or not metrics:
            raise ConfigError("gate.metrics: expected a list of metric names", path=path)
        metrics = tuple(_metric(m, "gate.metrics", path) for m in metrics)
    tolerance = block.get("tolerance")
    if tolerance is not None:
        tolerance = _fraction(tolerance, "gate.tolerance", path)
    return GateConfig(floors, metrics, tolerance, path)


def read_gate_file(path: Path) -> GateConfig:
    """A gate file: the block at its top, or under ``gate:``."""
    if not path.is_file():
        raise MissingInputError(f"{path} not found (expected a gate file, YAML)")
    doc = load_yaml(path.read_text(encoding="utf-8"), path.as_posix())
    if isinstance(doc, dict) and set(doc) == {"gate"}:
        doc = doc["gate"]
    return parse_gate(doc, path.as_posix())


def run_gate(run_yaml: Path) -> GateConfig:
    """The ``gate:`` block of a run's run.yaml; none when the block is absent, and none,
    said so in ``where``, when the file is (a machine that has only the store: give a gate
    file there)."""
    if not run_yaml.is_file():
        return GateConfig({}, None, None, f"no {run_yaml.as_posix()} here (give --gate-file)")
    doc = load_yaml(run_yaml.read_text(encoding="utf-8"), run_yaml.as_posix())
    if not isinstance(doc, dict) or doc.get("gate") is None:
        return NONE
    return parse_gate(doc["gate"], run_yaml.as_posix())


def gated_metrics(configs: list[GateConfig]) -> list[str]:
    """The metrics gated: every metric a config names (in METRICS' order); all of them
    when no config names any."""
    named = [set(c.metrics) for c in configs if c.metrics]
    if not named:
        return list(METRICS)
    keep = set.union(*named)
    return [m for m in METRICS if m in keep]


def default_tolerance(configs: list[GateConfig]) -> float:
    stated = [c.tolerance for c in configs if c.tolerance is not None]
    return min(stated) if stated else DEFAULT_TOLERANCE


def report_noise(store: Path, run_ids: list[str], base: str | None,
                 data_root: Path | str | None) -> dict[str, Noise]:
    """The noise a comparison report judges each run but the base with (base: the first,
    unless given): the floors of its ``<data_root>/<run>/run.yaml`` ``gate:`` block (none
    without a data root), then the store's history (``history.gate_noise``), the gate's
    own sources, so that the report and ``compare --gate`` say the same of every change
    (the report also resamples requests)."""
    others = [r for r in run_ids if r != (base or run_ids[0])]
    return {r: Noise(floors=run_gate(Path(data_root) / r / "run.yaml").noise if data_root
                     else {}, history=gate_noise(store, r, list(METRICS)))
            for r in others}
