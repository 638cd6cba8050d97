"""``benchreport history`` output: the run histories of ``analyses.history.record`` as text,
JSON or Markdown (for a CI job summary). English only: this is command-line output, not a
report page. Each sentence is picked by a computed value (the verdict, the ratio's side of 1,
whether the noise was estimable); every number is the record's."""

from __future__ import annotations

import json
from typing import Any

from ..core.jsontext import finite
from ..core.verdicts import CANNOT_TELL, LEVEL_CHANGED

__all__ = ["point_label", "render"]

DASH = "–"


def point_label(rec: dict[str, Any]) -> str:
    """``vllm 1k c16``: the engine, the newest run's workload id and load id."""
    p = rec["point"]
    return " ".join(str(x) for x in (p["engine"], p["workload"], p["load_id"]))


def _runs(n: int) -> str:
    return f"{n} run" + ("" if n == 1 else "s")


def _pct(x: float | None) -> str:
    return DASH if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return DASH if x is None else f"{x:.{digits}f}"


def _interval(c: dict[str, Any]) -> str:
    return DASH if c["low"] is None else f"{c['low']:.3f}{DASH}{c['high']:.3f}"


def change_line(rec: dict[str, Any], c: dict[str, Any], level: float) -> str:
    """One level change as a sentence: which way, by how much, from which run, against the
    noise of how many runs before."""
    ratio = c["ratio"]
    way = "rose" if ratio > 1 else "fell"
    noise = f" ({_pct(c['noise_before'])})" if c["noise_before"] is not None else ""
    holds = c["low"] is not None and c["low"] <= 1 <= c["high"]
    where = "though its interval holds 1" if holds else "outside the noise"
    return (f"{rec['metric']} {point_label(rec)}: {way} {abs(ratio - 1) * 100:.1f}% from run "
            f"{c['run']} on: ratio {ratio:.3f} ({level:.0%} interval {_interval(c)}), "
            f"{where}{noise} of the {c['before']} runs before (permutation p = "
            f"{c['p_value']:.3f}): {c['effect'].replace('_', ' ')}")


def verdict_lines(rec: dict[str, Any], method: dict[str, Any]) -> list[str]:
    """The sentences of one trend: one per level change, or why there is none."""
    head = f"{rec['metric']} {point_label(rec)}"
    n = len(rec["runs"])
    if rec["verdict"] == CANNOT_TELL:
        return [f"{head}: {CANNOT_TELL}: {_runs(n)}; the change-point test needs "
                f"{method['min_runs']} or more"]
    if rec["verdict"] != LEVEL_CHANGED:
        noise = f" (noise {_pct(rec['noise'])})" if rec["noise"] is not None else ""
        return [f"{head}: no level change over {_runs(n)}{noise}"]
    return [change_line(rec, c, method["interval_level"]) for c in rec["changes"]]


def _groups(recs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Records of the same point together (their metrics), in first-seen order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in recs:
        groups.setdefault(json.dumps(rec["point"], sort_keys=True), []).append(rec)
    return list(groups.values())


def _series_table(group: list[dict[str, Any]]) -> list[str]:
    """The runs of one point, a column per metric (– where a run has no value)."""
    runs: dict[str, str | None] = {}
    values: dict[tuple[str, str], float] = {}
    for rec in group:
        for r in rec["runs"]:
            runs.setdefault(r["run"], r["date"])
            values[(r["run"], rec["metric"])] = r["value"]
    order = sorted(runs, key=lambda r: (runs[r] is None, runs[r] or "", r))
    names = ["run", "date"] + [rec["metric"] for rec in group]
    cells = [[run, runs[run] or DASH] + [_num(values.get((run, rec["metric"])), 2)
                                         for rec in group] for run in order]
    widths = [max(len(x) for x in col) for col in zip(names, *cells, strict=True)]
    return ["  ".join(v.ljust(w) if i < 2 else v.rjust(w)
                      for i, (v, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in [names, *cells]]


def _describe(rec: dict[str, Any]) -> str:
    p = rec["point"]
    parts = [point_label(rec), f"model {p['model']}"]
    if p["concurrency"] is not None:
        parts.append(f"concurrency {p['concurrency']:g}")
    if p["rate"] is not None:
        parts.append(f"request rate {p['rate']:g} req/s")
    if p["input_tokens"] is not None and p["output_tokens"] is not None:
        parts.append(f"input {p['input_tokens']:g}, output {p['output_tokens']:g} tokens")
    parts.append(_runs(len(rec["runs"])))
    if rec["left_out"]:
        parts.append(f"{_runs(len(rec['left_out']))} with no value of {rec['metric']} left out")
    return " · ".join(parts)


def text(recs: list[dict[str, Any]], method: dict[str, Any]) -> str:
    out = []
    for group in _groups(recs):
        out += [_describe(group[0]), *_series_table(group), ""]
        for rec in group:
            out += verdict_lines(rec, method)
        out.append("")
    return "\n".join(out)


def markdown(recs: list[dict[str, Any]], method: dict[str, Any]) -> str:
    level = f"{method['interval_level']:.0%}"
    out = ["### Level changes over the run history", "",
           f"| metric | point | runs | verdict | from run | ratio | {level} interval | p | "
           "noise before | effect |", "|---|---|---|---|---|---:|---|---:|---|---|"]
    for rec in recs:
        head = f"| {rec['metric']} | {point_label(rec)} | {len(rec['runs'])} | {rec['verdict']} |"
        if not rec["changes"]:
            out.append(f"{head}" + f" {DASH} |" * 6)
        for c in rec["changes"]:
            out.append(f"{head} {c['run']} | {c['ratio']:.3f} | {_interval(c)} | "
                       f"{c['p_value']:.3f} | {_pct(c['noise_before'])} ({_runs(c['before'])}) | "
                       f"{c['effect'].replace('_', ' ')} |")
    out += ["", f"A level change is found by a permutation test (p < {method['alpha']}, "
                f"{method['permutations']} shufflings); {CANNOT_TELL}: fewer than "
                f"{method['min_runs']} runs.", ""]
    return "\n".join(out)


def render(recs: list[dict[str, Any]], method: dict[str, Any], fmt: str,
           charts: list[str] = ()) -> str:
    """The histories in ``fmt`` (text, json or markdown); ``charts``: the files written."""
    if fmt == "json":
        return json.dumps(finite({"test": method, "trends": recs, "charts": list(charts)}),
                          ensure_ascii=False, indent=1, allow_nan=False) + "\n"
    body = markdown(recs, method) if fmt == "markdown" else text(recs, method)
    return body + "".join(f"chart: {c}\n" for c in charts)
