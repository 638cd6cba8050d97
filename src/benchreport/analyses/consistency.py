"""Whether the sources that saw one benchmark agree.

The client's result file and the engine's log both see a benchmark; where they can measure
the same quantity they must agree within what their own resolution allows, or one of them is
wrong (a mislabelled file, an edited number, a log of another run). Checked here:

- **duration**: the client's ``duration`` against the span of the engine's activity in the
  log inside the benchmark's window (the first to the last record that shows work: a stats
  line with requests running, waiting or tokens flowing, or a prefill or decode batch).
  The log sees the start and the end only at its own logging interval, so the two may
  differ by up to twice the typical gap between those records, plus 2 s for timestamps
  to the second at both ends, plus 2% of the shorter; beyond that they disagree.
- **the result file against itself**: where every request was sent at the start (no more
  prompts than the concurrency), the duration is the longest request's latency plus a
  moment; a duration longer than that by more than 2 s and 2%, or shorter than it, is a
  file that does not hold together (``latency_checks``).
- where the engine's /metrics were scraped before and after the benchmark
  (``metric_checks``): the client's duration must fit how long the server's token counters
  grew (bounded by the scrapes around the first and the last growth), the generation
  tokens the server counted must match the client's output tokens, and the requests it
  finished the client's completed requests.

A disagreement is a figure (verdict ``inconsistent``), a row of the caveats, a warning from
``benchreport check``, and it withholds the explanation of a gap that rests on the duration.
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import Said, said
from ..core.records import Ingested, Run
from ..core.verdicts import CONSISTENT, DURATION_CHECKS, INCONSISTENT  # noqa: F401

ACTIVITY = ("engine_stats", "prefill_batch", "decode_batch")
SPEC_TESTABLE_PP = 10.0   # a spec-acceptance check whose tolerance is wider tests nothing
SLACK_S = 2.0          # timestamps to the second, at both ends
RELATIVE = 0.02        # of the shorter of the two durations


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
    unit: str = "s"
    how: Said | None = None       # for checks against the metrics: how each side measures

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
        # (ingest ends a window where the engine's next benchmark begins)
        records = sorted((r for kind in ACTIVITY
                          for r in ing.in_window(kind, entry.engine, entry.workload)
                          if _active(r)), key=lambda r: (r["ts"], r["line"]))
        if len(records) < 2:
            continue
        times = [dt.datetime.fromisoformat(r["ts"]) for r in records]
        span = (times[-1] - times[0]).total_seconds()
        gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
        interval = statistics.median(gaps)
        duration = entry.duration
        tolerance = 2 * interval + SLACK_S + RELATIVE * min(duration, span)
        status = CONSISTENT if abs(duration - span) <= tolerance else INCONSISTENT
        lines = tuple(sorted({int(records[0]["line"]), int(records[-1]["line"])}))
        out.append(Check(
            engine=entry.engine, workload=entry.workload, name="duration", client=duration,
            server=span, tolerance=tolerance, status=status, interval=interval,
            client_source=Source(path=entry.file.rel, sha256=entry.file.sha256,
                                 key="duration", lines=(entry.line,)),
            server_source=Source(path=records[0]["file"], sha256=records[0]["sha256"],
                                 lines=lines)))
    return out


# each side's method, by check (the sentences: templates/labels/methods.<lang>.yaml)
SERVER_METHOD = {"latency_span": "consistency.server_latency_span",
                 "duration": "consistency.server_duration"}
CLIENT_METHOD = {
    "latency_span": "consistency.client_duration",
    "duration": "consistency.client_duration",
    "metrics_span": "consistency.client_duration",
    "output_tokens": "consistency.client_output_tokens",
    "requests": "consistency.client_requests",
    "spec_acceptance": "consistency.client_spec_acceptance",
}


def latency_checks(run: Run, ing: Ingested) -> list[Check]:
    """The duration a result file states against its own requests' latencies, where every
    request was sent at the start: then the run ends when its longest request does."""
    out = []
    for entry in ing.results:
        w = run.meta.workload(entry.workload)
        latencies = entry.seconds("e2el_ms")      # the requests that succeeded
        if not latencies or w.num_prompts is None or w.concurrency is None or \
                w.num_prompts > w.concurrency:
            continue
        longest, duration = max(latencies), entry.duration
        tolerance = SLACK_S + RELATIVE * min(duration, longest)
        ok = longest - SLACK_S <= duration <= longest + tolerance
        src = Source(path=entry.file.rel, sha256=entry.file.sha256, key="duration",
                     lines=(entry.line,))
        out.append(Check(
            engine=entry.engine, workload=entry.workload, name="latency_span",
            client=duration, server=longest, tolerance=tolerance,
            status=CONSISTENT if ok else INCONSISTENT, interval=0.0,
            how=said("consistency.latency_tolerance", slack=f"{SLACK_S:.0f}",
                     relative=f"{RELATIVE:.0%}"),
            client_source=src,
            server_source=Source(path=entry.file.rel, sha256=entry.file.sha256,
                                 key="latencies", lines=(entry.line,))))
    return out


def all_checks(run: Run, ing: Ingested) -> list[Check]:
    """Every check: the client against the log, against itself, and against /metrics."""
    return duration_checks(run, ing) + latency_checks(run, ing) + metric_checks(run, ing)


def check_figures(checks: list[Check]) -> list[Figure]:
    """Per check: the two values, the tolerance and the verdict."""
    out = []
    for c in checks:
        ctx = {"engine": c.engine, "workload": c.workload}
        def fid(part: str | None = None, c: Check = c) -> str:
            return ids.consistency(c.workload, c.engine, c.name, part)
        decimals = 1 if c.unit in ("s", "tok/s") else 0
        tolerance_how = c.how or said(
            "consistency.log_tolerance", interval=f"{c.interval:.1f}", slack=f"{SLACK_S:.0f}",
            relative=f"{RELATIVE:.0%}")
        out += [
            figure(id=fid("client"), value=c.client, unit=c.unit, decimals=decimals,
                   context=ctx, sources=(c.client_source,), method=said(CLIENT_METHOD[c.name])),
            figure(id=fid("server"), value=c.server, unit=c.unit, decimals=decimals,
                   context=ctx, sources=(c.server_source,),
                   method=said(SERVER_METHOD[c.name]) if c.name in SERVER_METHOD
                   else said("consistency.server_metrics", how=c.how)),
            figure(id=fid("tolerance"), value=c.tolerance, unit=c.unit, decimals=decimals,
                   context=ctx, depends_on=(fid("client"),), method=tolerance_how),
            figure(id=fid(), value=c.status, unit="verdict", context=ctx,
                   depends_on=(fid("client"), fid("server"), fid("tolerance")),
                   method=said("consistency.verdict")),
        ]
    return out


def metric_checks(run: Run, ing: Ingested) -> list[Check]:
    """The client's result against the server's /metrics, per benchmark with scrapes before
    and after its window: the client's duration must fit the growth of the server's token
    counters (``server.growth_span``), and the
    output tokens and finished requests must match (each tolerance says why). Throughputs
    are not compared on their own: the server's is over the scrape interval, longer than the
    client's duration by the scrape margins, so it agrees exactly when the tokens and the
    duration do; the server view shows both."""
    from .server import counter_deltas, scrapes, window_scrapes

    out: list[Check] = []
    if not ing.records.get("metric"):
        return out
    by_engine: dict[str, list] = {}            # each engine's scrapes, grouped once
    for entry in ing.results:
        window = next((w for w in ing.windows if w.engine == entry.engine
                       and w.workload == entry.workload), None)
        if window is None:
            continue
        if entry.engine not in by_engine:
            by_engine[entry.engine] = scrapes(ing, entry.engine)
        win = window_scrapes(ing, window, by_engine[entry.engine])
        if win.grown is not None:
            shortest, longest, bounds = win.grown
            centre, half = (shortest + longest) / 2, (longest - shortest) / 2 + SLACK_S
            out.append(Check(
                engine=entry.engine, workload=entry.workload, name="metrics_span",
                client=entry.duration, server=centre, tolerance=half,
                status=CONSISTENT if abs(entry.duration - centre) <= half
                else INCONSISTENT,
                interval=0.0, unit="s",
                how=said("consistency.metrics_span", first=bounds[0].ts, last=bounds[1].ts,
                         shortest=f"{shortest:.1f}", longest=f"{longest:.1f}",
                         slack=f"{SLACK_S:.0f}"),
                client_source=Source(path=entry.file.rel, sha256=entry.file.sha256,
                                     key="duration", lines=(entry.line,)),
                server_source=Source(path=bounds[0].file, sha256=bounds[0].sha256,
                                     lines=(bounds[0].first_line, bounds[1].last_line))))
        interval = win.interval
        if interval is None:
            continue
        r = entry
        ends = Source(path=win.before.file, sha256=win.before.sha256,
                      lines=tuple(sorted({win.before.first_line, win.after.last_line})))
        periods = [(dt.datetime.fromisoformat(b.ts) - dt.datetime.fromisoformat(a.ts))
                   .total_seconds() for a, b in zip(win.chain, win.chain[1:], strict=False)]
        period = max(periods) if periods else interval
        deltas = {k: v for k, (v, _) in counter_deltas(win).items() if v is not None}

        def add(name: str, client_value: float, server: float, tolerance: float, unit: str,
                how: Said, key: str, client: Source | None = None) -> None:
            good = abs(client_value - server) <= tolerance
            out.append(Check(
                engine=entry.engine, workload=entry.workload, name=name, client=client_value,
                server=server, tolerance=tolerance,
                status=CONSISTENT if good else INCONSISTENT, interval=period, unit=unit,
                how=how, server_source=ends,
                client_source=client or Source(path=entry.file.rel, sha256=entry.file.sha256,
                                               key=key, lines=(r.line,))))

        n = r.completed or 0
        if r.total_output_tokens is not None and "generation_tokens" in deltas:
            tol = 0.01 * r.total_output_tokens + n
            add("output_tokens", float(r.total_output_tokens), deltas["generation_tokens"], tol,
                "tokens", said("consistency.output_tokens", share="1%"), "total_output_tokens")
        logged = sorted((x for x in ing.in_window("spec_decode", entry.engine, entry.workload)
                         if x.get("drafted") not in (None, "")), key=lambda x: x["line"])
        drafted = sum(int(x["drafted"]) for x in logged)
        edges = (int(logged[0]["drafted"]) + (int(logged[-1]["drafted"]) if len(logged) > 1
                                              else 0)) if logged else 0
        tol = 100 * edges / drafted + 1.0 if drafted else None
        # the log's edge lines may reach outside the benchmark; where they hold much of its
        # drafting the two figures cannot test each other, so no check is made
        if deltas.get("spec_draft_tokens") and drafted and tol <= SPEC_TESTABLE_PP:
            add("spec_acceptance", 100 * sum(int(x["accepted"]) for x in logged) / drafted,
                100 * deltas.get("spec_accepted_tokens", 0) / deltas["spec_draft_tokens"],
                tol, "%", said("consistency.spec_acceptance"), "",
                client=Source(path=logged[0]["file"], sha256=logged[0]["sha256"],
                              lines=(int(logged[0]["line"]), int(logged[-1]["line"]))))
        if "requests_finished" in deltas:
            failed = int(r.failed or 0)
            add("requests", float(n), deltas["requests_finished"], float(failed), "count",
                said("consistency.requests"), "completed")
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
        if c.name == "latency_span":
            out.append(f"{c.client_source.path}:{c.client_source.lines[0]}: the duration "
                       f"({c.client:.1f} s) does not fit the file's own latencies: every "
                       f"request was sent at the start and the longest took {c.server:.1f} s; "
                       f"they may differ by {c.tolerance:.1f} s")
            continue
        if c.name == "duration":
            out.append(f"{c.client_source.path}:{c.client_source.lines[0]}: the client's "
                       f"duration ({c.client:.1f} s) disagrees with {c.engine}'s log "
                       f"{c.server_source.path} (work logged in lines {lines}: "
                       f"{c.server:.1f} s); they may differ by {c.tolerance:.1f} s")
            continue
        what = {"metrics_span": "duration", "output_tokens": "output tokens",
                "requests": "completed requests",
                "spec_acceptance": "speculative acceptance (from the log)"}[c.name]
        out.append(f"{c.client_source.path}:{c.client_source.lines[0]}: the client's {what} "
                   f"({c.client:,.1f} {c.unit}) disagrees with {c.engine}'s /metrics "
                   f"{c.server_source.path} (scrapes at lines {lines}: {c.server:,.1f} "
                   f"{c.unit}); they may differ by {c.tolerance:,.1f} {c.unit}")
    return out


def limit_rows(checks: list[Check]):
    """A caveats row per disagreement (``limits.Limit``: figure ids by placeholder)."""
    from .limits import Limit

    return [Limit(f"inconsistent_{c.name}",
                  {"client": ids.consistency(c.workload, c.engine, c.name, "client"),
                   "server": ids.consistency(c.workload, c.engine, c.name, "server"),
                   "tolerance": ids.consistency(c.workload, c.engine, c.name, "tolerance")},
                  workload=c.workload, engine=c.engine,
                  evidence=[f"{c.client_source.path}:{c.client_source.lines[0]}",
                            f"{c.server_source.path}:"
                            + "–".join(str(n) for n in c.server_source.lines)])
            for c in checks if c.status == INCONSISTENT]
