"""The results store at scale: 10,000 runs, a cross-run query, a comparison, an export and a
compaction. Prints figures; asserts nothing.

Usage: python benchmarks/store_scale.py [--runs 10000] [--repeats 5] [--keep]

Fills a temporary store with ``--runs`` generated runs in the layout an export writes (each
run's tables in a generation, its partitions linked through ``current``), each with 2
engines × 8 loads × 3 repeats (48 points, no per-request rows) and, copied from the reference
run's export, its figures, settings, events and inputs tables. Then times, in this process
after the imports (each the median of ``--repeats``), first on the store as exports leave
it, then after ``benchreport store compact``:

- query: the p99 TTFT trend of one engine, workload and load across every run, through
  ``core.store.run_query`` (opening the store, one view per table, the schema check, the
  query) — what ``benchreport query`` does; and the same as a command, in a new process;
- compare: ``analyses.compare.compare_runs`` of two runs (what the comparison notebook does);
- export: ``pipeline.store.export_run`` of the built reference run into the full store;
- compaction: ``pipeline.compact.compact`` of the whole store (once; and once more after the
  exports, when one run has its own partition again).

The reference run is built into a temporary folder first (about half a minute).
The project's goals: a query under 1 s after compaction, an export under 1 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from benchreport.core.store import TABLES, partition, run_query, store_path  # noqa: E402
from benchreport.core.tables import POINT_TYPES, connect  # noqa: E402
from benchreport.pipeline.compact import compact  # noqa: E402
from benchreport.pipeline.run import build  # noqa: E402
from benchreport.pipeline.store import (  # noqa: E402
    CURRENT,
    GENERATIONS,
    KV_KEY,
    STORE_VERSION,
    _link_text,
    _write_runs,
    export_run,
    run_row,
)

LOADS = (1, 2, 4, 8, 16, 32, 64, 128)
QUERY = """
SELECT r.date, p.run_id, avg(p.p99_ttft_ms) AS p99_ttft_ms
FROM points p JOIN runs r USING (run_id)
WHERE p.engine = 'vllm' AND p.workload = '1k' AND p.load = 'c16'
GROUP BY ALL ORDER BY r.date, p.run_id
"""
# each generated point: a slow trend over the runs, 2% noise (DuckDB's random(), seeded)
POINT_SQL = {
    "point": "engine || '.1k.c' || c || '.r' || rep", "engine": "engine", "workload": "'1k'",
    "load": "'c' || c", "max_concurrency_target": "c", "repeat": "rep", "variant": "''",
    "client": "'vllm-bench-serve'",
    "file": "'data/' || run_id || '/raw/' || engine || '/c' || c || '-r' || rep || '.json'",
    "sha256": "sha256(run_id || point_key)", "line": "1", "model": "'generated'",
    "duration": "60.0 * noise", "completed": "1000", "failed": "0", "max_concurrency": "c",
    "output_throughput": "900.0 * least(c, 32) ** 0.8 * speed / drift / noise",
    "mean_ttft_ms": "ttft", "median_ttft_ms": "ttft * 0.95", "p99_ttft_ms": "ttft * 2.5",
    "mean_tpot_ms": "12.0 * (1 + c / 64) * noise",
    "definitions": "MAP {'ttft': 'vllm'}", "sources": "MAP {'p99_ttft_ms': 'p99_ttft_ms'}",
    "requests": "0",
}
GENERATED = """
SELECT *, 40.0 * (1 + c / 16) * drift * noise / speed AS ttft FROM (
  SELECT printf('run-%05d', i) AS run_id, i, engine, speed, c, rep,
         engine || c || rep AS point_key, 1.0 + 0.00002 * i AS drift,
         1.0 + 0.02 * (random() + random() + random() - 1.5) AS noise
  FROM range({runs}) t(i), (VALUES ('vllm', 1.0), ('sglang', 1.1)) e(engine, speed),
       unnest({loads}) l(c), range(1, 4) r(rep))
"""


def _partitioned(con, sql: str, folder: Path) -> None:
    con.execute(f"COPY ({sql}) TO '{folder.as_posix()}' (FORMAT parquet, COMPRESSION zstd, "
                f"PARTITION_BY (run_id), FILENAME_PATTERN 'data', "
                f"KV_METADATA {{{KV_KEY}: '{STORE_VERSION}'}})")


def fill(store: Path, runs: int, template: str, ref) -> None:
    """Write ``runs`` generated runs as exports leave them: each run's tables in one
    generation, ``current`` naming it, every partition a link through ``current``. Points
    and runs are written in one partitioned COPY each; the other tables are hard links to
    the reference run's files."""
    scratch = store / ".fill"
    scratch.mkdir()
    con = connect()
    con.execute("SET threads=2")
    con.execute("SELECT setseed(0.5)")
    cols = ", ".join(f"CAST({POINT_SQL[n]} AS {t}) AS \"{n}\"" if n in POINT_SQL
                     else f"NULL::{t} AS \"{n}\"" for n, t in POINT_TYPES.items())
    generated = GENERATED.format(runs=runs, loads=list(LOADS))
    _partitioned(con, f"SELECT {cols}, run_id FROM ({generated}) ORDER BY run_id, point",
                 scratch / "points")
    _write_runs(con, run_row(ref, con), store / "run_row.parquet")
    _partitioned(con, f"SELECT * REPLACE (DATE '2024-01-01' + i::INTEGER AS date), "
                      f"printf('run-%05d', i) AS run_id FROM '{store}/run_row.parquet', "
                      f"range({runs}) t(i)", scratch / "runs")
    (store / "run_row.parquet").unlink()
    same = {t: store / GENERATIONS / template / CURRENT / f"{t}.parquet"
            for t in TABLES if t not in ("points", "runs")}
    for i in range(runs):
        run_id = f"run-{i:05d}"
        generation = store / GENERATIONS / run_id / "1"
        generation.mkdir(parents=True)
        for table in ("points", "runs"):
            os.rename(scratch / table / f"run_id={run_id}" / "data0.parquet",
                      generation / f"{table}.parquet")
        for table, source in same.items():
            os.link(os.path.realpath(source), generation / f"{table}.parquet")
        os.symlink("1", generation.parent / CURRENT)
        for table in sorted(TABLES, key=lambda t: t == "runs"):
            partition(store, table, run_id).mkdir(parents=True)
            os.symlink(_link_text(run_id, table), partition(store, table, run_id) / "data.parquet")
    shutil.rmtree(scratch)


def timed(func, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        out.append(time.perf_counter() - start)
    return out


def _say(what: str, times: list[float]) -> None:
    print(f"  {what}: median {statistics.median(times):.3f} s (min {min(times):.3f}, "
          f"max {max(times):.3f}; {len(times)} runs)", flush=True)


def measure(store: Path, runs: int, repeats: int, ref, work: Path) -> None:
    """Query, the same query as a command, comparison, export: medians of ``repeats``."""
    from benchreport.analyses.compare import compare_runs

    rows: list = []
    _say("query (p99 TTFT of vllm 1k c16 over every run, run_query)",
         timed(lambda: rows.append(run_query(store, QUERY)), repeats))
    print(f"    {len(rows[-1][1]):,} rows")
    _say("the same query as a command (a new process, imports included)", timed(
        lambda: subprocess.run([sys.executable, "-m", "benchreport", "query", QUERY,
                                "--format", "csv", "--store", str(store)], check=True,
                               capture_output=True), repeats))
    last = f"run-{runs - 1:05d}"
    _say("compare two runs (analysis, 48 points each)",
         timed(lambda: compare_runs(store, ["run-00000", last]), repeats))
    _say("export of the reference run into that store",
         timed(lambda: export_run(ref, store), repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="benchreport-store-"))
    try:
        shutil.copytree(ROOT / "data" / "2024-b300", work / "data" / "2024-b300")
        print("building the reference run ...", flush=True)
        ref = build("2024-b300", data_root=work / "data", report_root=work / "report",
                    project=ROOT, out=lambda line: None, pdf=False)
        store = store_path(work / "report")
        start = time.perf_counter()
        fill(store, args.runs, "2024-b300", ref)
        print(f"filled {args.runs:,} runs in {time.perf_counter() - start:.1f} s")
        size = subprocess.run(["du", "-sm", "-L", str(store)], capture_output=True,
                              text=True).stdout.split()[0]
        files = sum(1 for _ in store.glob("*/run_id=*/data.parquet"))
        print(f"store: {files:,} partition files, {size} MiB ({len(TABLES)} tables)")
        print("as exports leave it (one file per run and table):")
        measure(store, args.runs, args.repeats, ref, work)
        for when in ("first", "again, one run exported since"):
            start = time.perf_counter()
            done = compact(store)
            print(f"compaction ({when}): {time.perf_counter() - start:.1f} s ({done.copy_s:.1f} "
                  f"s copying, {done.locked_s:.1f} s holding exports, {done.delete_s:.1f} s "
                  f"deleting the old folders), {done.runs:,} runs, {done.moved:,} moved",
                  flush=True)
            if when == "first":
                print("after compaction (one file per table; the exports below add one run's "
                      "own partition):")
                measure(store, args.runs, args.repeats, ref, work)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
