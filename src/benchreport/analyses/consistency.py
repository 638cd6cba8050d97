"""Whether the sources that saw one benchmark agree.

The client's result file and the engine's log both see a benchmark; where they can measure
the same quantity they must agree within what their own resolution allows, or one of them is
wrong (a mislabelled file, an edited number, a log of another run). Checked here:

- **duration**: the client's ``duration`` against the span of the engine's activity in the
  log inside the benchmark's window (the first to the last record that shows work: a stats
  line with requests running, waiting or tokens flowing, or a prefill or decode batch).
  The log sees the start and the end only at its own logging interval, so the two may
  differ by up to twice the typical gap between those records, plus 2 s for timestamps
  to the second at both ends, plus 2% of the duration; beyond that they disagree.

A disagreement is a figure (verdict ``inconsistent``), a row of the caveats, a warning from
``benchreport check``, and it withholds the explanation of a gap that rests on the duration.
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass

from ..core import ids
from ..core.figures import Figure, Source
from ..core.records import Ingested, Run
from ..core.verdicts import CONSISTENT, INCONSISTENT

ACTIVITY = ("engine_stats", "prefill_batch", "decode_batch")
SLACK_S = 2.0          # timestamps to the second, at both ends
RELATIVE = 0.02        # of the client's duration


@dataclass(frozen=True)
class Check:
    """One quantity both sources measured, for one engine and workload."""

    engine: str
    workload: str
    name: str                     # "duration"
    client: float
    server: float
    tolerance: float
    status: str                   # CONSISTENT or INCONSISTENT
    client_source: Source
    server_source: Source
    interval: float               # the typical gap between the log's activity records, s

    @property
    def differs_by(self) -> float:
        return abs(self.client - self.server)


def _active(record: dict) -> bool:
    if record["kind"] != "engine_stats":
        return True
    return any((record.get(k) or 0) > 0 for k in ("running", "waiting", "gen_tps",
                                                    "prompt_tps"))


def duration_checks(run: Run, ing: Ingested) -> list[Check]:
    """The client's duration against the log's activity span, per engine and workload that
    have both a single-point result and a benchmark window with two or more activity
    records."""
    out = []
    for entry in ing.results:
        window = next((w for w in ing.windows if w.engine == entry.engine
                       and w.workload == entry.workload), None)
        if window is None:
            continue
        records = sorted((r for kind in ACTIVITY
                          for r in ing.in_window(kind, entry.engine, entry.workload)
                          if _active(r)), key=lambda r: (r["ts"], r["line"]))
        if len(records) < 2:
            continue
        times = [dt.datetime.fromisoformat(r["ts"]) for r in records]
        span = (times[-1] - times[0]).total_seconds()
        gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
        interval = statistics.median(gaps)
        duration = entry.result.duration
        tolerance = 2 * interval + SLACK_S + RELATIVE * duration
        status = CONSISTENT if abs(duration - span) <= tolerance else INCONSISTENT
        lines = tuple(sorted({int(records[0]["line"]), int(records[-1]["line"])}))
        out.append(Check(
            engine=entry.engine, workload=entry.workload, name="duration", client=duration,
            server=span, tolerance=tolerance, status=status, interval=interval,
            client_source=Source(path=entry.file.rel, sha256=entry.file.sha256,
                                 key="duration", lines=(entry.result.line,)),
            server_source=Source(path=records[0]["file"], sha256=records[0]["sha256"],
                                 lines=lines)))
    return out


def check_figures(checks: list[Check]) -> list[Figure]:
    """Per check: the two values, the tolerance and the verdict."""
    out = []
    for c in checks:
        ctx = {"engine": c.engine, "workload": c.workload}
        def fid(part: str | None = None, c: Check = c) -> str:
            return ids.consistency(c.workload, c.engine, c.name, part)
        out += [
            Figure(id=fid("client"), value=c.client, unit="s", decimals=1, context=ctx,
                   sources=(c.client_source,),
                   method="the benchmark's duration as the client wrote it (key 'duration')"),
            Figure(id=fid("server"), value=c.server, unit="s", decimals=1, context=ctx,
                   sources=(c.server_source,),
                   method="span of the engine's activity in its log inside the benchmark's "
                          "window: from the first to the last record showing work (stats "
                          "with requests running or waiting or tokens flowing, prefill and "
                          "decode batches); the lines cited are those two records"),
            Figure(id=fid("tolerance"), value=c.tolerance, unit="s", decimals=1, context=ctx,
                   depends_on=(fid("client"),),
                   method=f"how far the two may differ: twice the typical gap between the "
                          f"log's activity records ({c.interval:.1f} s, so each end is seen "
                          f"late by up to one gap), plus {SLACK_S:.0f} s for timestamps to "
                          f"the second, plus {RELATIVE:.0%} of the client's duration"),
            Figure(id=fid(), value=c.status, unit="verdict", context=ctx,
                   depends_on=(fid("client"), fid("server"), fid("tolerance")),
                   method="consistent when |client − log| is within the tolerance, else "
                          "inconsistent: one of the two sources is wrong or of another run"),
        ]
    return out


def inconsistent(checks: list[Check]) -> set[tuple[str, str]]:
    """(workload, engine) of every check that failed."""
    return {(c.workload, c.engine) for c in checks if c.status == INCONSISTENT}


def warnings(checks: list[Check]) -> list[str]:
    """One line per disagreement, naming both files and both values."""
    out = []
    for c in checks:
        if c.status != INCONSISTENT:
            continue
        lines = "–".join(str(n) for n in c.server_source.lines)
        out.append(f"{c.client_source.path}:{c.client_source.lines[0]}: the client's "
                   f"duration ({c.client:.1f} s) disagrees with {c.engine}'s log "
                   f"{c.server_source.path} (work logged in lines {lines}: {c.server:.1f} s); "
                   f"they may differ by {c.tolerance:.1f} s")
    return out


def limit_rows(checks: list[Check]):
    """A caveats row per disagreement (``limits.Limit``: figure ids by placeholder)."""
    from .limits import Limit

    return [Limit("inconsistent_duration",
                  {"client": ids.consistency(c.workload, c.engine, c.name, "client"),
                   "server": ids.consistency(c.workload, c.engine, c.name, "server"),
                   "tolerance": ids.consistency(c.workload, c.engine, c.name, "tolerance")},
                  workload=c.workload, engine=c.engine,
                  evidence=[f"{c.client_source.path}:{c.client_source.lines[0]}",
                            f"{c.server_source.path}:"
                            + "–".join(str(n) for n in c.server_source.lines)])
            for c in checks if c.status == INCONSISTENT]
