"""Every malformed input is one clear line (issue 33, finding 11).

A probe fuzzed 520 real files and got 17 tracebacks: NaN or 1e309 in a log's numbers
(``cannot convert float NaN to integer``, ``OverflowError``), an impossible hour, JSON nested
100,000 deep and a recursive YAML alias (``RecursionError``); in a build each became a line
naming a notebook cell instead of the input file and line.

The probe's cases, one test each.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchreport.ingest.io import read_raw
from benchreport.ingest.parsers.logscan import Summary

from .conftest import ROOT

YEAR = 2026

REF = ROOT / "data" / "2024-b300"
VLLM_RESULT = REF / "raw/vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json"


def read(path: Path, shown: str | None = None) -> tuple[list[dict], Summary]:
    """Records of one raw file as `benchreport parse` and ingest read it."""
    shown = shown or path.name
    summary = Summary(file=shown, engine="auto")
    return read_raw(path, shown, "auto", YEAR, summary, workers=1), summary


# ------------------------------------------------------------------ the probe's cases

def test_parse_shows_a_result_file_s_warnings(tmp_path):
    """`benchreport parse` printed none of a result file's warnings (they went to a copy)."""
    doc = json.loads(VLLM_RESULT.read_text())
    doc["p99_ttft_ms"] = 1.0
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    _, summary = read(path)
    assert any(w.startswith("result.json:1: the p99 of TTFT (1.0 ms) is below its p90")
               for w in summary.warnings), summary.warnings
