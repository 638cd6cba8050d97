"""Build time of a generated campaign report, from an empty report folder (a ready .venv).

Usage: python benchmarks/campaign_build_speed.py [--requests 1000] [--runs 2]
Prints figures; asserts nothing.

The campaign (benchreport.synth.campaign): engines gamma (at most 8 requests at once, so
a knee) and beta, 8 concurrency points (1 … 128) × 3 repeats, each point ``--requests``
requests with per-request detail written by vLLM ``bench serve``; an SLO (p99 TTFT 2 s,
p99 TPOT 20 ms), a price and 8 GPUs, so every campaign section is built. The project's
goal: under 45 s on the 2-core machine.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOADS = (1, 2, 4, 8, 16, 32, 64, 128)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    from benchreport.synth.campaign import write_campaign

    work = Path(tempfile.mkdtemp(prefix="benchreport-campaign-build-"))
    try:
        write_campaign(work / "data" / "campaign", engines=("gamma", "beta"), loads=LOADS,
                       repeats=3, requests=args.requests, gpus=8,
                       slo={"percentile": 99, "ttft_ms": 2000, "tpot_ms": 20},
                       cost={"gpu_hour_usd": 2.5})
        size = sum(p.stat().st_size for p in (work / "data").rglob("*") if p.is_file())
        print(f"campaign: 2 engines × {len(LOADS)} loads × 3 repeats × {args.requests} "
              f"requests, {size / 2**20:.0f} MiB of result files")
        times = []
        for _ in range(args.runs):
            shutil.rmtree(work / "report", ignore_errors=True)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "benchreport", "build", "campaign",
                            "--data-root", str(work / "data"),
                            "--report-root", str(work / "report")],
                           cwd=ROOT, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        print("full build (ready .venv, empty report folder): "
              + ", ".join(f"{t:.1f} s" for t in times) + "  (goal: under 45 s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
