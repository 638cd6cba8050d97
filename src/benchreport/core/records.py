"""The value types every stage passes around: a run, its input files, benchmark results,
benchmark windows, and what ingest read. Plain data; this module imports nothing from the
package, so a computation that takes these types pulls in no parser and no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:                       # annotations only: no import at run time
    from .paths import RunPaths
    from .runmeta import RunMeta

VLLM_CLIENT = "vllm-bench-serve"
SGLANG_CLIENT = "sglang-bench-serving"
LEAD = ["engine", "file", "line", "ts", "kind"]     # the first columns of a record table


@dataclass(frozen=True)
class Run:
    """A run's paths and validated metadata."""

    paths: RunPaths
    meta: RunMeta

    @property
    def id(self) -> str:
        return self.paths.run_id


@dataclass(frozen=True)
class RawFile:
    """A raw input file: where it is (absolute and repo-relative) and its sha256."""

    path: Path
    rel: str
    sha256: str


@dataclass(frozen=True)
class BenchResult:
    """One benchmark record, in the units the client wrote (durations s, latencies ms)."""

    client: str                  # VLLM_CLIENT or SGLANG_CLIENT
    line: int                    # 1-based line of the record in its file
    backend: str
    duration: float              # s
    completed: int
    total_input_tokens: int | None
    total_output_tokens: int | None
    request_rate: float | None   # req/s; math.inf for "inf"/Infinity
    max_concurrency: int | None
    # latency statistics in ms: stats["ttft"]["p99"], keys: mean, median, std, pNN
    stats: dict[str, dict[str, float]] = field(default_factory=dict)
    # per-request lists when saved (seconds): input_lens, output_lens, ttfts, itls, latencies
    per_request: dict[str, list] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def key(self, name: str) -> str:
        """The JSON key a value came from, as written in the file (for provenance)."""
        return name


@dataclass(frozen=True)
class ResultEntry:
    """One benchmark result record matched to its engine and workload."""

    engine: str
    workload: str
    result: BenchResult
    file: RawFile


@dataclass(frozen=True)
class BenchWindow:
    """Where one benchmark sits in its engine's log."""

    engine: str
    workload: str
    start: str        # ISO local time, inclusive
    end: str          # ISO local time, inclusive
    source: str       # "run.yaml", "result date" / "result start time" (", shifted by +9 h
                      # to the log's clock" when the clocks differ) or "activity burst"


@dataclass(frozen=True)
class Ingested:
    """Everything ingest read from a run's files (see ``tables`` for how it is stored)."""

    records: dict[str, list[dict[str, Any]]]     # kind -> records (with engine, file, sha256)
    summaries: list[dict[str, Any]]
    results: list[ResultEntry]
    windows: list[BenchWindow]
    # (file, line) -> the raw text of every line a figure can cite: each log record's line
    # and every line of a launch configuration
    excerpts: dict[tuple[str, int], str] = field(default_factory=dict)
    # every benchmark point, sweeps and repeats included: one row each (see tables.points)
    points: list[dict[str, Any]] = field(default_factory=list)
    # per-request rows of the points whose files have them (see tables.requests)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def table(self, kind: str):
        """The records of ``kind`` as a pandas DataFrame, LEAD columns first."""
        import pandas as pd

        rows = self.records.get(kind, [])
        if not rows:
            return pd.DataFrame(columns=LEAD)
        df = pd.DataFrame(rows)
        lead = [c for c in LEAD if c in df.columns]
        return df[lead + sorted(c for c in df.columns if c not in lead)]

    def in_window(self, kind: str, engine: str, workload: str) -> list[dict[str, Any]]:
        """Records of ``kind`` from ``engine``'s logs inside the workload's window."""
        w = next((w for w in self.windows if w.engine == engine and w.workload == workload),
                 None)
        if w is None:
            return []
        return [r for r in self.records.get(kind, [])
                if r["engine"] == engine and r.get("ts") and w.start <= r["ts"] <= w.end]
