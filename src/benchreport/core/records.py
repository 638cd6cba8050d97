"""The value types every stage passes around: a run, its input files, the single-point
results (a view of the ``points`` and ``requests`` tables), benchmark windows, and what
ingest read. Plain data; this module imports nothing from the
package, so a computation that takes these types pulls in no parser and no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

__all__ = ["BenchWindow", "DECLARED", "DECLARED_CLIENT", "Ingested", "LEAD", "PointResult",
           "RawFile", "Run", "SGLANG_CLIENT", "VLLM_CLIENT", "WINDOW_METHODS", "declared_text",
           "failed_request"]

if TYPE_CHECKING:                       # annotations only: no import at run time
    from .paths import RunPaths
    from .runmeta import RunMeta

VLLM_CLIENT = "vllm-bench-serve"
SGLANG_CLIENT = "sglang-bench-serving"
# a client the user declared in run.yaml (``client:``): its files are read by that mapping
DECLARED_CLIENT = "declared"
# A definition the user declared in run.yaml rather than one of ``clients.base.DEFINITIONS``:
# the code is the user's own text behind this prefix, so two points agree on a metric exactly
# when their texts do, and the report prints the text, marked as declared by the user.
DECLARED = "declared: "


def declared_text(code: str | None) -> str | None:
    """The user's words of a declared definition code, or None for any other code.

    >>> declared_text("declared: time to the first chunk"), declared_text("ttft.first-token")
    ('time to the first chunk', None)
    """
    return code[len(DECLARED):] if code and code.startswith(DECLARED) else None
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


def failed_request(row: dict[str, Any], measured: frozenset[str] = frozenset()) -> bool:
    """Whether a ``requests`` row is a failed request: it carries an error, or it lacks a
    time (``ttft_ms``, ``e2el_ms``) that the point's other requests have (``measured``).
    A failed request is never counted as a fast one.

    >>> failed_request({"ttft_ms": 0.0, "error": "Internal Server Error"})
    True
    >>> failed_request({"ttft_ms": None, "e2el_ms": 9.5}, frozenset({"ttft_ms"}))
    True
    >>> failed_request({"ttft_ms": 12.0, "error": None}, frozenset({"ttft_ms"}))
    False
    """
    if row.get("error") not in (None, ""):
        return True
    return any(row.get(name) is None for name in measured)


@dataclass(frozen=True)
class PointResult:
    """A single-point result as the analyses of one load level read it: one row of the
    ``points`` table and that point's rows of the ``requests`` table (``core.tables``).

    Units as stored: durations s, latencies ms; ``date`` is the ISO local time the client
    wrote (vLLM's ``date``, taken when the benchmark ended), or None. The per-request
    helpers (``ok``, ``values``, ``seconds``) leave failed requests out (`failed_request`).
    """

    engine: str
    workload: str
    point: str                   # the point's id (points.point)
    file: RawFile
    line: int | None             # 1-based line of the record in its file
    client: str
    duration: float              # s
    completed: int
    failed: int | None
    total_input_tokens: int | None
    total_output_tokens: int | None
    request_rate: float | None   # req/s; math.inf when unbounded
    max_concurrency: int | None
    date: str | None
    stats: dict[str, float] = field(default_factory=dict, repr=False)   # {stat}_{metric}_ms
    sources: dict[str, str] = field(default_factory=dict, repr=False)   # field -> file's key
    # metric -> the client's definition code (``clients.base.DEFINITIONS``)
    definitions: dict[str, str] = field(default_factory=dict, repr=False)
    requests: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    @classmethod
    def from_rows(cls, row: dict[str, Any], requests: list[dict[str, Any]],
                  file: RawFile) -> PointResult:
        """The view of one ``points`` row and its ``requests`` rows (in index order)."""
        def count(name: str) -> int | None:
            value = row.get(name)
            return None if value is None else int(value)

        return cls(
            engine=row["engine"], workload=row["workload"], point=row["point"], file=file,
            line=count("line"), client=row["client"], duration=float(row["duration"]),
            completed=int(row["completed"]), failed=count("failed"),
            total_input_tokens=count("total_input_tokens"),
            total_output_tokens=count("total_output_tokens"),
            request_rate=row.get("request_rate"), max_concurrency=count("max_concurrency"),
            date=row.get("date"),
            stats={k: float(v) for k, v in row.items()
                   if k.endswith("_ms") and isinstance(v, int | float) and v == v},
            sources=dict(row.get("sources") or {}),
            definitions=dict(row.get("definitions") or {}),
            requests=tuple(sorted(requests, key=lambda r: r["index"])))

    def stat(self, metric: str, stat: str) -> float | None:
        """The client's own statistic (``stat("ttft", "p99")``, ms), or None if not recorded."""
        return self.stats.get(f"{stat}_{metric}_ms")

    def key(self, name: str) -> str:
        """The file's key a points field came from (for provenance), else the field's name."""
        return self.sources.get(name, name)

    def has(self, name: str) -> bool:
        """Whether any request row holds ``name`` (the file has that per-request list)."""
        return any(r.get(name) is not None for r in self.requests)

    @property
    def ok(self) -> tuple[dict[str, Any], ...]:
        """The requests that succeeded, in the file's order."""
        measured = frozenset(n for n in ("ttft_ms", "e2el_ms") if self.has(n))
        return tuple(r for r in self.requests if not failed_request(r, measured))

    def values(self, name: str) -> list[Any]:
        """``name`` of every request that succeeded and has it (ms for times)."""
        return [r[name] for r in self.ok if r.get(name) is not None]

    def seconds(self, name: str) -> list[float]:
        """A time of every request that succeeded, in seconds (``values(name)`` / 1000)."""
        return [v / 1000.0 for v in self.values(name)]


WINDOW_METHODS = ("run.yaml", "client timestamps", "request bursts", "request count")


@dataclass(frozen=True)
class BenchWindow:
    """Where one benchmark sits in its engine's log."""

    engine: str
    workload: str
    start: str        # ISO local time, inclusive
    end: str          # ISO local time, inclusive
    source: str       # "run.yaml", "result date" / "result start time" (", shifted by +9 h
                      # to the log's clock" when the clocks differ), "activity burst" or
                      # "request count"
    # how it was found: "run.yaml", "client timestamps", "request bursts" or "request count"
    # (WINDOW_METHODS); and its evidence: the log and its first and last line (0: none)
    method: str = ""
    file: str = ""
    first_line: int = 0
    last_line: int = 0
    point: str = ""   # the point's id (PointEntry.id), when the method places points
    # "workload": the benchmark of a workload that is one point (what the single-point
    # analyses read); "point": one point of a sweep, placed on its own (request count)
    level: str = "workload"


@dataclass(frozen=True)
class Ingested:
    """Everything ingest read from a run's files (see ``tables`` for how it is stored)."""

    records: dict[str, list[dict[str, Any]]]     # kind -> records (with engine, file, sha256)
    summaries: list[dict[str, Any]]
    # the single-point results (one per engine and workload; see tables.single_point_results)
    results: list[PointResult]
    windows: list[BenchWindow]
    # (file, line) -> the raw text of every line a figure can cite: each log record's line
    # and every line of a launch configuration
    excerpts: dict[tuple[str, int], str] = field(default_factory=dict)
    # every benchmark point, sweeps and repeats included: one row each (see tables.points)
    points: list[dict[str, Any]] = field(default_factory=list)
    # per-request rows of the points whose files have them (see tables.requests)
    requests: list[dict[str, Any]] = field(default_factory=list)
    # windows of single points of sweeps (level "point"), beside the workload windows
    point_windows: list[BenchWindow] = field(default_factory=list)

    def table(self, kind: str):
        """The records of ``kind`` as a pandas DataFrame, LEAD columns first."""
        import pandas as pd

        rows = self.records.get(kind, [])
        if not rows:
            return pd.DataFrame(columns=LEAD)
        df = pd.DataFrame(rows)
        lead = [c for c in LEAD if c in df.columns]
        return df[lead + sorted(c for c in df.columns if c not in lead)]

    def has_benchmark(self, engine: str, workload: str) -> bool:
        """Whether the engine ran the workload as one benchmark that the single-point
        analyses read: a vLLM or SGLang result of it, or a window of it in the engine's log
        (found for a single point of any client)."""
        return any(r.engine == engine and r.workload == workload for r in self.results) or \
            any(w.engine == engine and w.workload == workload for w in self.windows)

    def rows(self, kind: str, **where):
        """Records of ``kind`` one at a time, of one ``engine`` and ``file``, in a
        ``window`` (start, end) (``recordset.Records.rows``): a large kind is never read
        whole."""
        from .recordset import Records

        return Records.of(self.records).rows(kind, **where)

    def in_window(self, kind: str, engine: str, workload: str) -> list[dict[str, Any]]:
        """Records of ``kind`` from ``engine``'s logs inside the workload's window."""
        w = next((w for w in self.windows if w.engine == engine and w.workload == workload),
                 None)
        if w is None:
            return []
        from .recordset import Records

        return Records.of(self.records).in_window(kind, engine, w.start, w.end)
