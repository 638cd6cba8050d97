"""Ingest memory and time on a server log that is all stats lines, next to grep. Prints
figures; asserts nothing.

Usage: python benchmarks/stats_ingest.py [--size-mb 200 500] [--engine vllm|sglang]
                                        [--build-mb N]

A long-lived server with steady traffic prints one stats line (vLLM: engine stats and
spec-decoding lines; SGLang: Prefill and Decode batch lines) every few seconds for days:
every line of such a log is a record. The log repeats the reference run's own stats lines
(data/2024-b300) with time stamps that advance a second a line. The ingest is what a build
does with a log: records streamed to the derived Parquet tables, windows found, excerpts
written. Its peak memory should not grow with the size of the log.

``--build-mb N`` also builds the reference run (no PDF) with an N MiB vLLM stats log added
beside its own, stamped from the day of its benchmarks on, and times the whole build.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_speed import grep_args  # noqa: E402  (the same literals the scanner looks for)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "2024-b300" / "raw"
# a line's time stamp and the rest, as each engine prints it
_STAMPED = {
    "vllm": re.compile(r"^(\(APIServer pid=\d+\) INFO )\d\d-\d\d \d\d:\d\d:\d\d( \[.*)$"),
    "sglang": re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d( TP\d+\] .*)$"),
}
_STATS = {"vllm": ("Avg prompt throughput", "SpecDecoding metrics"),
          "sglang": ("Prefill batch", "Decode batch")}


def templates(engine: str) -> list[str]:
    """The reference run's stats lines of ``engine``, each with ``{t}`` for its stamp."""
    rx = _STAMPED[engine]
    out = []
    for line in (SAMPLE / engine / "server.log").read_text().splitlines():
        m = rx.match(line)
        if m and any(word in line for word in _STATS[engine]):
            out.append("{t}".join(m.groups()) if engine == "vllm" else "[{t}" + m[1])
    return out


def make_stats_log(path: Path, engine: str, size_mb: int,
                   start: dt.datetime = dt.datetime(2026, 1, 2)) -> int:
    """Write a log of about ``size_mb`` MiB of stats lines; return its line count."""
    lines = templates(engine)
    stamp = "%m-%d %H:%M:%S" if engine == "vllm" else "%Y-%m-%d %H:%M:%S"
    written = count = second = 0
    with open(path, "w") as fh:
        while written < size_mb << 20:
            block = []
            for _ in range(600):                     # ten minutes of the server's life
                t = (start + dt.timedelta(seconds=second)).strftime(stamp)
                block += [lines[(count + k) % len(lines)].format(t=t) for k in (0, 1)]
                count, second = count + 2, second + 1
            text = "\n".join(block) + "\n"
            fh.write(text)
            written += len(text)
    return count


def timed(cmd: list[str]) -> tuple[float, str, int]:
    """Seconds, stdout and peak RSS (KiB) of a child process (its own ru_maxrss: run
    through /usr/bin/time, as RUSAGE_CHILDREN keeps the largest child so far)."""
    start = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if out.returncode:
        sys.exit(f"{' '.join(cmd[:6])} failed:\n{out.stderr[-3000:]}")
    return seconds, out.stdout.strip(), int(out.stderr.strip().splitlines()[-1])


INGEST = """
import sys
from pathlib import Path
from benchreport.ingest.run import ingest_log
lines, records = ingest_log(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), year=2026)
print(lines, records)
"""


def measure(folder: Path, engine: str, size_mb: int) -> None:
    log = folder / f"{engine}-stats.log"
    t0 = time.perf_counter()
    make_stats_log(log, engine, size_mb)
    size = log.stat().st_size
    print(f"log: {size / 2**20:.0f} MiB of {engine} stats lines, written in "
          f"{time.perf_counter() - t0:.1f}s")
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=True)   # warm the cache
    g_s, g_out, _ = timed(grep_args(engine, "E") + [str(log)])
    tables = folder / "tables"
    i_s, i_out, peak_kb = timed([sys.executable, "-c", INGEST, str(log), engine, str(tables)])
    lines, records = (int(x) for x in i_out.split())
    stored = sum(p.stat().st_size for p in tables.rglob("*") if p.is_file())
    print(f"  grep -cE: {g_s:6.2f}s  {int(g_out):,} matching lines")
    print(f"  ingest:   {i_s:6.2f}s  {records:,} records from {lines:,} lines "
          f"({lines / i_s:,.0f} lines/s, {i_s / g_s:.1f}x grep -cE), "
          f"tables {stored / 2**20:.0f} MiB")
    print(f"  peak RSS of the ingest process: {peak_kb / 1024:.0f} MiB")
    log.unlink()
    shutil.rmtree(tables, ignore_errors=True)


def measure_build(folder: Path, size_mb: int) -> None:
    """A full build (no PDF) of the reference run with a stats log of ``size_mb`` MiB."""
    from benchreport.pipeline import checksums

    data = folder / "data" / "2024-b300"
    shutil.copytree(ROOT / "data" / "2024-b300", data)
    lines = make_stats_log(data / "raw" / "vllm" / "stats.log", "vllm", size_mb,
                           start=dt.datetime(2026, 11, 20))
    checksums.record(data)
    cmd = [sys.executable, "-m", "benchreport", "build", "2024-b300", "--no-pdf",
           "--data-root", str(folder / "data"), "--report-root", str(folder / "report")]
    seconds, _, peak_kb = timed(cmd)
    print(f"build of the reference run + a {size_mb} MiB stats log ({lines:,} lines): "
          f"{seconds:.1f}s, largest process {peak_kb / 1024:.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    ap.add_argument("--build-mb", type=int, help="also build the reference run with a log "
                                                 "of this many MiB of stats lines")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="benchreport-stats-"))
    try:
        for size in args.size_mb:
            measure(folder, args.engine, size)
        if args.build_mb:
            measure_build(folder, args.build_mb)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
