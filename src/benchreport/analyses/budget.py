"""Where a benchmark's time went, at the engine's own steady rates: a time budget.

At one workload, the engine had to prefill the run's input tokens and decode its output
tokens. At its steady prefill throughput (``prefill.<w>.<e>.mean``) and its steady decode
throughput with every request decoding (``decode.<w>.<e>.mean``), that takes

    expected = input tokens ÷ prefill throughput + output tokens ÷ decode throughput

seconds, if the engine never waited for work and the two phases took turns. The client's
duration less that is time those rates do not account for: requests that reached the
engine later than the client's concurrency allows (pacing, a client that ramps up),
warm-up, a runtime event, the last requests finishing alone, or time the two phases shared
(a negative remainder: chunked prefill runs decode alongside). The budget names no cause;
a remainder of at least ``UNEXPLAINED_MIN_S`` seconds and ``UNEXPLAINED_MIN_PCT`` percent
of the duration is a row of the caveats table.

Only a workload with one result per engine gets a budget (the steady rates are the
workload's, not a load level's).
"""

from __future__ import annotations

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.records import Ingested, PointResult, Run
from .decode import decode_figures
from .limits import Limit
from .prefill import prefill_figures

__all__ = ["UNEXPLAINED_MIN_PCT", "UNEXPLAINED_MIN_S", "time_budget", "unexplained"]

UNEXPLAINED_MIN_S = 5.0
UNEXPLAINED_MIN_PCT = 10.0
NAMES = ("prefill_s", "decode_s", "expected_s", "unexplained_s", "unexplained_pct")


def unexplained(seconds: float, duration: float) -> bool:
    """Whether ``seconds`` of a ``duration`` the rates leave is worth a row: at least
    ``UNEXPLAINED_MIN_S`` seconds and ``UNEXPLAINED_MIN_PCT`` percent of it."""
    return seconds >= UNEXPLAINED_MIN_S and 100 * seconds / duration >= UNEXPLAINED_MIN_PCT


def _source(entry: PointResult, key: str) -> Source:
    return Source(path=entry.file.rel, sha256=entry.file.sha256,
                  key=entry.sources.get(key, key), lines=(entry.line,) if entry.line else ())


def _rates(run: Run, ing: Ingested) -> dict[str, float]:
    """The steady prefill and decode means of every engine and workload, by figure id."""
    figs = prefill_figures(run, ing)[0] + decode_figures(run, ing)[0]
    return {f.id: float(f.value) for f in figs if isinstance(f.value, int | float)
            and not isinstance(f.value, bool) and f.value > 0}


def _single_results(ing: Ingested) -> dict[tuple[str, str], PointResult]:
    """The one result of each workload and engine (none where a workload has several)."""
    seen: dict[tuple[str, str], list[PointResult]] = {}
    for r in ing.results:
        seen.setdefault((r.workload, r.engine), []).append(r)
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def _engine_budget(entry: PointResult, rates: dict[str, float]) -> list[Figure]:
    """The budget of one engine at one workload, or none without both rates and tokens."""
    w, e = entry.workload, entry.engine
    prefill, decode = ids.prefill(w, e, "mean"), ids.decode(w, e, "mean")
    if prefill not in rates or decode not in rates or not entry.total_input_tokens \
            or not entry.total_output_tokens or entry.duration <= 0:
        return []
    ctx = {"engine": e, "workload": w}
    pre_s = entry.total_input_tokens / rates[prefill]
    dec_s = entry.total_output_tokens / rates[decode]
    name = {k: ids.budget(w, e, k) for k in NAMES}
    duration = ids.e2e(w, e, "duration")
    unexplained = entry.duration - pre_s - dec_s
    return [
        figure(name["prefill_s"], pre_s, "s", said("budget.prefill_s",
                                                   tokens=entry.total_input_tokens),
               decimals=1, sources=(_source(entry, "total_input_tokens"),),
               depends_on=(prefill,), context=ctx),
        figure(name["decode_s"], dec_s, "s", said("budget.decode_s",
                                                  tokens=entry.total_output_tokens),
               decimals=1, sources=(_source(entry, "total_output_tokens"),),
               depends_on=(decode,), context=ctx),
        figure(name["expected_s"], pre_s + dec_s, "s", said("budget.expected_s"), decimals=1,
               depends_on=(name["prefill_s"], name["decode_s"]), context=ctx),
        figure(name["unexplained_s"], unexplained, "s", said("budget.unexplained_s"),
               decimals=1, depends_on=(duration, name["expected_s"]), context=ctx),
        figure(name["unexplained_pct"], 100 * unexplained / entry.duration, "%",
               said("budget.unexplained_pct", hundred=100), decimals=0,
               depends_on=(name["unexplained_s"], duration), context=ctx),
    ]


def time_budget(run: Run, ing: Ingested) -> tuple[list[Figure], list[Limit]]:
    """Per engine and workload with one result, the time budget at the steady rates; a
    caveats row where the duration exceeds it by at least the thresholds above."""
    rates = _rates(run, ing)
    figures, rows = [], []
    for (w, e), entry in sorted(_single_results(ing).items()):
        figs = _engine_budget(entry, rates)
        figures += figs
        name = {k: ids.budget(w, e, k) for k in NAMES}
        value = {f.id: f.value for f in figs}
        if figs and unexplained(value[name["unexplained_s"]], entry.duration):
            rows.append(Limit("time_budget", name | {"duration": ids.e2e(w, e, "duration")},
                              workload=w, engine=e,
                              evidence=[f"{entry.file.rel}:{entry.line}"] if entry.line
                              else [entry.file.rel]))
    return figures, rows
