"""The results store at scale: 1,000 runs, a cross-run query, a comparison, an export.
Prints figures; asserts nothing.

Usage: python benchmarks/store_scale.py [--runs 1000] [--repeats 5] [--keep]

Fills a temporary store with ``--runs`` generated runs, each with 2 engines × 8 loads ×
3 repeats (48 points, no per-request rows) and, copied from the reference run's export, its
figures, settings, events and inputs tables. Then times, in this process after the imports
(each the median of ``--repeats``):

- query: the p99 TTFT trend of one engine, workload and load across every run, through
  ``core.store.run_query`` (opening the store, one view per table, the schema check, the
  query) — what ``benchreport query`` does;
- compare: ``analyses.compare.compare_runs`` of two runs (what the comparison notebook does);
- export: ``build.store.export_run`` of the built reference run into the full store.

The reference run is built into a temporary folder first (about half a minute).
The project's goals: the query and the export each under 1 s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from benchreport.build.pipeline import build  # noqa: E402
from benchreport.build.store import _copy, _write_runs, export_run, run_row  # noqa: E402
from benchreport.core.store import TABLES, partition, run_query, store_path  # noqa: E402
from benchreport.core.tables import POINT_TYPES, connect  # noqa: E402

LOADS = (1, 2, 4, 8, 16, 32, 64, 128)
QUERY = """
SELECT r.date, p.run_id, avg(p.p99_ttft_ms) AS p99_ttft_ms
FROM points p JOIN runs r USING (run_id)
WHERE p.engine = 'vllm' AND p.workload = '1k' AND p.load = 'c16'
GROUP BY ALL ORDER BY r.date, p.run_id
"""


def _points(run_index: int, rng: random.Random) -> list[dict]:
    rows = []
    drift = 1.0 + 0.0002 * run_index          # a slow trend over the runs
    for engine, speed in (("vllm", 1.0), ("sglang", 1.1)):
        for c in LOADS:
            for repeat in (1, 2, 3):
                noise = rng.gauss(1.0, 0.02)
                ttft = 40.0 * (1 + c / 16) * drift * noise / speed
                rows.append({
                    "point": f"{engine}.1k.c{c}.r{repeat}", "engine": engine, "workload": "1k",
                    "load": f"c{c}", "max_concurrency_target": c, "repeat": repeat,
                    "variant": "", "client": "vllm-bench-serve",
                    "file": f"data/run-{run_index:04d}/raw/{engine}/c{c}-r{repeat}.json",
                    "sha256": f"{run_index:08x}{c:04x}{repeat:02x}".ljust(64, "0"),
                    "line": 1, "model": "generated", "duration": 60.0 * noise,
                    "completed": 1000, "failed": 0, "max_concurrency": c,
                    "output_throughput": 900.0 * min(c, 32) ** 0.8 * speed / drift / noise,
                    "mean_ttft_ms": ttft, "median_ttft_ms": ttft * 0.95,
                    "p99_ttft_ms": ttft * 2.5, "mean_tpot_ms": 12.0 * (1 + c / 64) * noise,
                    "definitions": {"ttft": "vllm"}, "sources": {"p99_ttft_ms": "p99_ttft_ms"},
                    "requests": 0,
                })
    return rows


def fill(store: Path, runs: int, template: str, ref) -> None:
    """Write ``runs`` generated runs, one partition per table each."""
    import pandas as pd

    rng = random.Random(20261202)
    con = connect()
    base = run_row(ref, con)
    names = list(POINT_TYPES)
    for i in range(runs):
        run_id = f"run-{i:04d}"
        frame = pd.DataFrame(_points(i, rng)).reindex(columns=names)
        con.register("frame", frame.astype(object).where(frame.notna(), None))
        casts = ", ".join(f'CAST("{n}" AS {t}) AS "{n}"' for n, t in POINT_TYPES.items())
        folder = partition(store, "points", run_id)
        folder.mkdir(parents=True)
        _copy(con, f"SELECT {casts} FROM frame", folder / "data.parquet")
        for table in ("figures", "settings", "events", "inputs", "requests"):
            target = partition(store, table, run_id)
            target.mkdir(parents=True)
            shutil.copy(partition(store, table, template) / "data.parquet", target)
        target = partition(store, "runs", run_id)
        target.mkdir(parents=True)
        row = {**base, "date": (dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat()}
        _write_runs(con, row, target / "data.parquet")


def timed(func, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    from benchreport.analyses.compare import compare_runs

    work = Path(tempfile.mkdtemp(prefix="benchreport-store-"))
    try:
        shutil.copytree(ROOT / "data" / "2024-b300", work / "data" / "2024-b300")
        print("building the reference run ...", flush=True)
        ref = build("2024-b300", data_root=work / "data", report_root=work / "report",
                    project=ROOT, out=lambda line: None)
        store = store_path(work / "report")
        start = time.perf_counter()
        fill(store, args.runs, "2024-b300", ref)
        print(f"filled {args.runs:,} runs in {time.perf_counter() - start:.1f} s")
        size = subprocess.run(["du", "-sm", str(store)], capture_output=True,
                              text=True).stdout.split()[0]
        files = sum(1 for _ in store.rglob("*.parquet"))
        print(f"store: {files:,} Parquet files, {size} MiB ({len(TABLES)} tables)")

        rows: list = []
        query = timed(lambda: rows.append(run_query(store, QUERY)), args.repeats)
        print(f"query (p99 TTFT of vllm 1k c16 over every run): {len(rows[-1][1]):,} rows; "
              f"median {statistics.median(query):.3f} s (min {min(query):.3f}, "
              f"max {max(query):.3f})")
        comp = timed(lambda: compare_runs(store, ["run-0000", "run-0999"
                                                   if args.runs >= 1000 else "run-0001"]),
                     args.repeats)
        print(f"compare two runs (analysis, 48 points each): median "
              f"{statistics.median(comp):.3f} s (min {min(comp):.3f}, max {max(comp):.3f})")
        export = timed(lambda: export_run(ref, store), args.repeats)
        print(f"export of the reference run into that store: median "
              f"{statistics.median(export):.3f} s (min {min(export):.3f}, "
              f"max {max(export):.3f})")
        cli = timed(lambda: subprocess.run(
            [sys.executable, "-m", "benchreport", "query", QUERY, "--format", "csv",
             "--report-root", str(work / "report")], check=True, capture_output=True),
            args.repeats)
        print(f"the same query as a command (a new process, imports included): median "
              f"{statistics.median(cli):.3f} s")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
