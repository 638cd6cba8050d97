"""Build time of the reference report: from nothing (a ready .venv) and a no-op rebuild.

Usage: python benchmarks/build_speed.py [RUN]   Prints figures; asserts nothing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    run = sys.argv[1] if len(sys.argv) > 1 else "2024-b300"
    report = Path(tempfile.mkdtemp(prefix="benchreport-build-"))
    cmd = [sys.executable, "-m", "benchreport", "build", run, "--report-root", str(report)]
    try:
        full = timed(cmd, ROOT)
        noop = timed(cmd, ROOT)
        (report / run / "report.en.pdf").unlink()          # one output gone: re-render only
        render = timed(cmd, ROOT)
    finally:
        shutil.rmtree(report, ignore_errors=True)
    print(f"full build (ready .venv, empty report folder): {full:5.1f} s")
    print(f"no-op rebuild (nothing changed):               {noop:5.1f} s")
    print(f"re-render only (an output missing):            {render:5.1f} s")


if __name__ == "__main__":
    main()
