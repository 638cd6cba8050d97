"""Ingest speed and memory of a generated campaign, next to reading and decoding the same
files. Prints figures; asserts nothing.

Usage: python benchmarks/campaign_ingest_speed.py [--requests 1000] [--repeats 3] [--runs 3]
                                                  [--clients vllm,guidellm,aiperf]
                                                  [--profile] [--keep]

The campaign (benchreport.synth.campaign): 2 engines × 8 concurrency points × 3 repeats,
each point ``--requests`` requests with per-request detail (vLLM's ``itls`` lists, AIPerf's
``inter_chunk_latency``), written by vLLM ``bench serve``, GuideLLM and AIPerf. Timed, each
in a fresh interpreter, after the imports and with the files in the page cache:

- ingest: ``load_points(load_run(…))``, i.e. read + hash + decode + parse + normalise + match
  every result file of the run;
- floor: read the same files' bytes and JSON-decode them (the stdlib ``json``: the fastest
  JSON decoder in requirements.lock; JSON Lines one line at a time), keeping nothing.

Memory is each process's peak RSS (``VmHWM``; ``ru_maxrss`` would report this parent's
peak, which a child inherits on Linux), the interpreter and imports included.
The project's goal: ingest ≤ 2× the floor and under 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOADS = (1, 2, 4, 8, 16, 32, 64, 128)
GIB = 1 << 30

# The peak RSS of the process in KiB: VmHWM, which (unlike ru_maxrss) a child does not
# inherit from the parent that forked it.
PEAK = """
import json, resource, sys, time
from pathlib import Path
from benchreport.core.runmeta import load_run
from benchreport.ingest.points import load_points
def peak_kb():
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

INGEST = PEAK + """
data = Path(sys.argv[1])
before = peak_kb()
start = time.perf_counter()
entries = load_points(load_run("camp", data, data.parent / "report"))
seconds = time.perf_counter() - start
peak = peak_kb()
print(json.dumps({"seconds": seconds, "rss_before_kb": before, "peak_kb": peak,
                  "points": len(entries),
                  "requests": sum(len(e.point.requests) for e in entries)}))
"""

FLOOR = PEAK + """
files = [Path(p) for p in sys.argv[1:]]
before = peak_kb()
start = time.perf_counter()
values = 0
for path in files:
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        doc = [json.loads(line) for line in data.splitlines() if line.strip()]
    else:
        doc = json.loads(data)
    values += len(doc)
    del doc, data
seconds = time.perf_counter() - start
peak = peak_kb()
print(json.dumps({"seconds": seconds, "rss_before_kb": before, "peak_kb": peak,
                  "values": values}))
"""

PROFILE = """
import cProfile, pstats, sys
from pathlib import Path
from benchreport.core.runmeta import load_run
from benchreport.ingest.points import load_points
data = Path(sys.argv[1])
run = load_run("camp", data, data.parent / "report")
prof = cProfile.Profile()
prof.enable()
load_points(run)
prof.disable()
stats = pstats.Stats(prof, stream=sys.stdout)
stats.sort_stats("tottime").print_stats(18)
stats.sort_stats("cumulative").print_stats(r"benchreport|json", 30)
"""


def child(code: str, args: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_of(code: str, args: list[str], runs: int) -> dict:
    """The fastest of ``runs`` fresh processes; the peak memory is the largest seen."""
    results = [child(code, args) for _ in range(runs)]
    best = min(results, key=lambda r: r["seconds"])
    best["peak_kb"] = max(r["peak_kb"] for r in results)
    best["all_seconds"] = [r["seconds"] for r in results]
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per measurement")
    ap.add_argument("--clients", default="vllm,guidellm,aiperf")
    ap.add_argument("--profile", action="store_true", help="cProfile one ingest after timing")
    ap.add_argument("--keep", action="store_true", help="keep the generated campaign")
    args = ap.parse_args()

    from benchreport.ingest.points import RESULT_SUFFIXES
    from benchreport.synth.campaign import write_campaign

    folder = Path(tempfile.mkdtemp(prefix="benchreport-campaign-"))
    data = folder / "data"
    clients = tuple(c.strip() for c in args.clients.split(",") if c.strip())
    t0 = time.perf_counter()
    truth = write_campaign(data / "camp", engines=("alpha", "beta"), loads=LOADS,
                           repeats=args.repeats, requests=args.requests, clients=clients)
    made = time.perf_counter() - t0
    results = [p for p in truth.files if p.suffix in RESULT_SUFFIXES]
    size = sum(p.stat().st_size for p in results)
    by_client = {c: sum(p.stat().st_size for p in results if f"/{c}/" in p.as_posix())
                 for c in clients}
    for p in results:                                    # warm the page cache
        p.read_bytes()
    print(f"campaign: 2 engines × {len(LOADS)} loads × {args.repeats} repeats × "
          f"{args.requests:,} requests, clients {', '.join(clients)}; written in {made:.1f}s")
    print(f"files:    {len(results)} result files, {size / 2**20:.0f} MiB ("
          + ", ".join(f"{c} {n / 2**20:.0f} MiB" for c, n in by_client.items()) + ")")

    floor = best_of(FLOOR, [str(p) for p in results], args.runs)
    ingest = best_of(INGEST, [str(data)], args.runs)
    ratio = ingest["seconds"] / floor["seconds"]
    print(f"floor:    {floor['seconds']:6.2f}s  read + json.loads of every file "
          f"({size / 2**20 / floor['seconds']:.0f} MiB/s); peak RSS "
          f"{floor['peak_kb'] / 1024:.0f} MiB (after imports {floor['rss_before_kb'] / 1024:.0f}"
          " MiB)")
    print(f"ingest:   {ingest['seconds']:6.2f}s  load_points: {ingest['points']} points, "
          f"{ingest['requests']:,} request rows ({size / 2**20 / ingest['seconds']:.0f} MiB/s);"
          f" peak RSS {ingest['peak_kb'] / 1024:.0f} MiB (after imports "
          f"{ingest['rss_before_kb'] / 1024:.0f} MiB)")
    print("runs:     floor " + ", ".join(f"{s:.2f}" for s in floor["all_seconds"])
          + " s; ingest " + ", ".join(f"{s:.2f}" for s in ingest["all_seconds"]) + " s")
    print(f"ratio:    ingest / floor = {ratio:.2f}x  (goal ≤ 2x: "
          f"{'met' if ratio <= 2 else 'NOT met'}); ingest peak "
          f"{ingest['peak_kb'] * 1024 / GIB:.2f} GiB (goal < 1 GiB: "
          f"{'met' if ingest['peak_kb'] * 1024 < GIB else 'NOT met'})")
    if args.profile:
        out = subprocess.run([sys.executable, "-c", PROFILE, str(data)], capture_output=True,
                             text=True, check=True)
        print(out.stdout)
    if args.keep:
        print(f"kept: {folder}")
    else:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
