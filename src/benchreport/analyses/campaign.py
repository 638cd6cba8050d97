"""Benchmark points of a campaign (sweeps, repeats, any client): each point's normalised
figures, registered with the file, checksum and JSON key (or line) they came from, and the
client's definition of every latency it reports.

Figure ids: ``point.<point>.<name>`` (see ``core.ids.point``). Only what the file holds is
registered; a point whose every request failed has counts and no latency.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said, statistic
from ..core.records import DECLARED_CLIENT, Ingested, Run, declared_text

__all__ = ["COUNTS", "METRICS", "STATS", "TABLE_COLUMNS", "definitions_table", "point_figures"]

METRICS = ("ttft", "tpot", "itl", "e2el")
STATS = ("mean", "median", "p90", "p99", "std")
# name -> (unit, decimals); the method: the sentence points.<name> (methods.<lang>.yaml)
COUNTS = {
    "completed": ("req", 0),
    "failed": ("req", 0),
    "duration": ("s", 2),
    "cancelled": ("req", 0),
    "cancellation_rate": ("%", 1),
    "requests_asked": ("req", 0),
    "duration_asked": ("s", 1),
    "request_throughput": ("req/s", 3),
    "output_throughput": ("tok/s", 1),
    "input_throughput": ("tok/s", 0),
}
TABLE_COLUMNS = ("point", "engine", "workload", "load", "repeat", "variant", "client",
                 "completed", "failed", "request_throughput", "output_throughput",
                 "median_ttft_ms", "p99_ttft_ms", "median_tpot_ms", "median_itl_ms",
                 "median_e2el_ms")


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _client(p: dict[str, Any]) -> Any:
    """The client of a point as a figure's method names it."""
    if p["client"] == DECLARED_CLIENT:
        return said("points.own_client")
    return p["client"]


def point_figures(run: Run, ing: Ingested) -> tuple[pd.DataFrame, list[Figure]]:
    """One row per point (the table the article shows) and every figure of every point."""
    figures: list[Figure] = []
    rows = []
    for order, p in enumerate(ing.points):
        sources = p.get("sources") or {}
        definitions = p.get("definitions") or {}
        ctx = {"engine": p["engine"], "workload": p["workload"], "load": p["load"],
               "repeat": int(p["repeat"]), "client": p["client"],
               "variant": p.get("variant") or "", "order": order}

        def src(name: str) -> tuple[Source, ...]:
            lines = (int(p["line"]),) if _present(p.get("line")) else ()
            return (Source(path=p["file"], sha256=p["sha256"],
                           key=sources.get(name, name), lines=lines),)

        for name, (unit, decimals) in COUNTS.items():
            if _present(p.get(name)):
                value = p[name]
                code = definitions.get(name)      # a throughput the user's client defines
                own = declared_text(code)
                figures.append(figure(
                    id=ids.point(p["point"], name), value=value, unit=unit,
                    decimals=decimals, sources=src(name),
                    context={**ctx, "metric": name, "definition": code} if code else ctx,
                    method=said("points.count", what=said("points." + name),
                                client=_client(p)) if not own else
                    said("points.count_defined", what=said("points." + name),
                         client=_client(p), own=own)))
        for metric in METRICS:
            for stat in STATS:
                name = f"{stat}_{metric}_ms"
                if _present(p.get(name)):
                    code = definitions.get(metric, "")
                    figures.append(figure(
                        id=ids.point(p["point"], name), value=float(p[name]), unit="ms",
                        decimals=2, sources=src(name),
                        context={**ctx, "metric": metric, "stat": stat, "definition": code},
                        method=said("points.latency", stat=statistic(stat),
                                    metric=metric.upper(), client=_client(p),
                                    definition=code or said("points.unknown"))))
        rows.append({c: p.get(c) for c in TABLE_COLUMNS})
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS)), figures


def definitions_table(ing: Ingested, run: Run | None = None) -> pd.DataFrame:
    """Which definition each client's points use for each metric (one row per pair). With
    ``run``, the user's own client is named as run.yaml declares it, and each of its
    definitions is the user's text, marked as declared."""
    seen: dict[tuple[str, str], str] = {}
    for p in ing.points:
        for metric, code in sorted((p.get("definitions") or {}).items()):
            seen.setdefault((p["client"], metric), code)
    declared = run.meta.client if run is not None else None

    def shown(client: str) -> str:
        if client == DECLARED_CLIENT and declared is not None:
            return f"{declared.name} (the user's own client, declared in run.yaml)"
        return client

    def words(code: str) -> str:
        own = declared_text(code)
        return code if own is None else f"{own} (declared by the user in run.yaml)"

    return pd.DataFrame([{"client": shown(c), "metric": m, "definition": words(code)}
                         for (c, m), code in sorted(seen.items())],
                        columns=["client", "metric", "definition"])
