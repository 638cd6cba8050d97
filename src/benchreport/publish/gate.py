"""The gate's result as text (a terminal, a CI log), JSON (machines) or Markdown (a CI job
summary or a pull-request comment). English only: these are not report sentences. Every
number and word is read from the gate's result (``analyses.gate.GateResult``); nothing is
typed."""

from __future__ import annotations

import json
import math
from typing import Any

from ..core.jsontext import finite
from ..core.verdicts import GATE_WORDS, REGRESSED

__all__ = ["FORMATS", "render"]

FORMATS = ("text", "json", "markdown")


def _num(value: float | None, decimals: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return f"{value:,.{decimals}f}"


def _ratio(row: dict[str, Any]) -> str:
    text = _num(row["ratio"], 3)
    if row.get("low") is not None:
        text += f" ({_num(row['low'], 3)}–{_num(row['high'], 3)})"
    return text


def _point(row: dict[str, Any]) -> str:
    return f"{row['engine']} {row['workload']} {row['load']}"


def _noise(row: dict[str, Any]) -> str:
    if row.get("noise") is not None:
        return f"{row['source']} ±{row['noise']:.0%}"
    return row["source"]


def _counts(result: Any) -> dict[str, int]:
    counts = {word: 0 for word in GATE_WORDS.values()}
    for row in result.rows:
        counts[GATE_WORDS[row["verdict"]]] += 1
    return counts


def _summary(result: Any) -> str:
    counts = ", ".join(f"{n} {word}" for word, n in _counts(result).items() if n)
    worse = sorted({r["metric"] for r in result.worse})
    line = (f"gate {result.outcome.upper()} (exit {result.exit_code()}): "
            f"{', '.join(result.runs)} against {result.base}: {len(result.rows)} gated "
            f"point-metric(s): {counts or 'none'}")
    if worse:
        line += f"; worse: {', '.join(worse)}"
    if result.untold:
        line += (f"; {len(result.untold)} could not be judged (no repeats in both runs and "
                 "no noise floor declared)")
    return line


def _matching_lines(result: Any) -> list[str]:
    return [line for m in result.matching for line in m.lines()]


def _text(result: Any) -> str:
    out = [_summary(result), ""]
    for row in result.rows:
        decimals = row["decimals"]
        flag = "  <-- worse" if row["verdict"] == REGRESSED else ""
        out.append(f"{row['run']}  {_point(row)}  {row['metric']}: "
                   f"{_num(row['from'], decimals)} -> {_num(row['to'], decimals)}, ratio "
                   f"{_ratio(row)}, {GATE_WORDS[row['verdict']]} [{_noise(row)}]{flag}")
    out += [f"{r['run']}  {_point(r)}  {r['metric']}: not judged: {r['why']}"
            for r in result.skipped]
    out += ["", *_matching_lines(result), "", _floors(result)]
    return "\n".join(out) + "\n"


def _floors(result: Any) -> str:
    parts = [f"{run}: {where or 'none declared'}" for run, where in result.floors.items()]
    return (f"noise floors from: {'; '.join(parts) or 'none'}; lengths match within "
            f"{(result.tolerance or 0):.0%}")


def _json(result: Any) -> str:
    rows = [{"run": r["run"], "engine": r["engine"], "workload": r["workload"],
             "load": r["load"], "matched_with": r.get("other"), "metric": r["metric"],
             "base": r["from"], "new": r["to"], "ratio": r["ratio"], "low": r["low"],
             "high": r["high"], "verdict": GATE_WORDS[r["verdict"]],
             "noise_source": r["source"], "noise": r.get("noise")} for r in result.rows]
    matching = [{"base": m.base_run, "run": m.other_run, "tolerance": m.tolerance,
                 "matched": [{"base": x.base.label, "run": x.other.label, "load": x.base.load,
                              "notes": list(x.notes)} for x in m.matched],
                 "unmatched": [{"run": g.run, "point": g.label, "load": g.load, "why": why}
                               for g, why in m.unmatched]} for m in result.matching]
    doc = {"result": result.outcome, "exit_code": result.exit_code(), "base": result.base,
           "runs": result.runs, "gated_metrics": result.gated, "counts": _counts(result),
           "worse": sorted({r["metric"] for r in result.worse}), "rows": rows,
           "not_judged": [{k: r[k] for k in ("run", "engine", "workload", "load", "metric",
                                             "why")} for r in result.skipped],
           "matching": matching, "noise_floors_from": result.floors,
           "tolerance": result.tolerance}
    return json.dumps(finite(doc), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _markdown(result: Any) -> str:
    out = [f"### benchreport gate: {result.outcome}", "", _summary(result), "",
           "| run | point | metric | base | new | ratio (interval) | verdict | noise |",
           "|---|---|---|---:|---:|---:|---|---|"]
    for row in result.rows:
        decimals = row["decimals"]
        word = GATE_WORDS[row["verdict"]]
        shown = f"**{word}**" if row["verdict"] == REGRESSED else word
        out.append(f"| {row['run']} | {_point(row)} | {row['metric']} | "
                   f"{_num(row['from'], decimals)} | {_num(row['to'], decimals)} | "
                   f"{_ratio(row)} | {shown} | {_noise(row)} |")
    out += ["", f"**Overall: {result.outcome}** (exit {result.exit_code()})", ""]
    lines = _matching_lines(result) + [
        f"{r['run']} {_point(r)} {r['metric']}: not judged: {r['why']}" for r in result.skipped]
    if lines:
        out += ["<details><summary>matching and metrics not judged</summary>", ""]
        out += [f"- {line}" for line in lines] + ["", "</details>", ""]
    out.append(_floors(result))
    return "\n".join(out) + "\n"


def render(result: Any, fmt: str = "text") -> str:
    """The result in one of FORMATS."""
    return {"text": _text, "json": _json, "markdown": _markdown}[fmt](result)
