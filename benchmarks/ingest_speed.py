"""Ingest speed and memory on a large server log, next to grep. Prints figures; asserts nothing.

Usage: python benchmarks/ingest_speed.py [--size-mb 1024] [--engine vllm|sglang] [--keep]

The log is a realistic mix for a long-lived server: mostly HTTP access lines and other
INFO lines; one line in 100 is a stats line (vLLM: alternately the engine-stats and the
spec-decoding line; SGLang: Prefill and Decode batch lines).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VLLM_LINES = [
    'INFO:     172.18.0.1:{p} - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "(APIServer pid=2117) INFO 11-29 07:{m:02d}:{s:02d} [chat_utils.py:560] Detected the chat "
    "template content format to be 'string'. You can set `--chat-template-content-format` to "
    "override this.",
    "(APIServer pid=2117) INFO 11-29 07:{m:02d}:{s:02d} [logger.py:43] Received request "
    "chatcmpl-{p}: prompt: '<|im_start|>user\\nSummarise the attached report in three "
    "sentences.<|im_end|>', params: SamplingParams(n=1, temperature=0.7, max_tokens=512)",
    'INFO:     172.18.0.1:{p} - "GET /metrics HTTP/1.1" 200 OK',
]
VLLM_STATS = [
    "(APIServer pid=2117) INFO 11-29 07:{m:02d}:{s:02d} [loggers.py:271] Engine 000: Avg prompt "
    "throughput: {a}.4 tokens/s, Avg generation throughput: {b}.2 tokens/s, Running: 24 reqs, "
    "Waiting: 3 reqs, GPU KV cache usage: 48.4%, Prefix cache hit rate: 61.7%",
    "(APIServer pid=2117) INFO 11-29 07:{m:02d}:{s:02d} [metrics.py:148] SpecDecoding metrics: "
    "Mean acceptance length: 2.61, Accepted throughput: 402.50 tokens/s, Drafted throughput: "
    "750.00 tokens/s, Accepted: 4025 tokens, Drafted: 7500 tokens, Per-position acceptance "
    "rate: 0.781, 0.529, 0.300, Avg Draft acceptance rate: 53.7%",
]
SGLANG_LINES = [
    '[2026-11-29 07:{m:02d}:{s:02d}] INFO:     127.0.0.1:{p} - "POST /generate HTTP/1.1" 200 OK',
    "[2026-11-29 07:{m:02d}:{s:02d}] Receive: obj=GenerateReqInput(rid='{p}', text='Summarise "
    "the attached report in three sentences.', sampling_params={{'max_new_tokens': 512}})",
]
SGLANG_STATS = [
    "[2026-11-29 07:{m:02d}:{s:02d} TP0] Prefill batch, #new-seq: 3, #new-token: {a}, "
    "#cached-token: 2210, token usage: 0.37, #running-req: 18, #queue-req: 4, #pending-token: "
    "9821, cuda graph: False, input throughput (token/s): 21873.40",
    "[2026-11-29 07:{m:02d}:{s:02d} TP0] Decode batch, #running-req: 21, #token: 48213, token "
    "usage: 0.41, accept len: 2.84, accept rate: 0.61, cuda graph: True, gen throughput "
    "(token/s): {b}.55, #queue-req: 0",
]
def literals(engine: str) -> list[str]:
    """The very literals the scanner looks for, so grep finds the same lines."""
    from benchreport.ingest.parsers import sglang_log, vllm_log

    module = vllm_log if engine == "vllm" else sglang_log
    return ([m.decode().replace("\n", "") for m in module.FREQUENT]
            + ["] " + m.decode() for m in module.RARE])


def grep_args(engine: str, mode: str) -> list[str]:
    """``grep -cF -e … -e …`` or ``grep -cE 'a|b|…'`` over the scanner's literals."""
    pats = literals(engine)
    if mode == "F":
        return ["grep", "-cF"] + [x for p in pats for x in ("-e", p)]
    return ["grep", "-cE", "|".join(re.sub(r"([][.()*+?{}|^$\\])", r"\\\1", p) for p in pats)]


def chunk(engine: str, lines: int = 20000, stats_every: int = 100) -> bytes:
    noise, stats = (VLLM_LINES, VLLM_STATS) if engine == "vllm" else (SGLANG_LINES, SGLANG_STATS)
    out = []
    for i in range(lines):
        m, s = (i // 60) % 60, i % 60
        if i % stats_every == 0:
            out.append(stats[(i // stats_every) % len(stats)].format(m=m, s=s, a=1000 + i % 900,
                                                                   b=400 + i % 300))
        else:
            out.append(noise[i % len(noise)].format(m=m, s=s, p=40000 + i % 20000))
    return ("\n".join(out) + "\n").encode()


def make_log(path: Path, engine: str, size_mb: int) -> None:
    block = chunk(engine)
    with open(path, "wb") as fh:
        written = 0
        while written < size_mb << 20:
            fh.write(block)
            written += len(block)


def timed(cmd: list[str]) -> tuple[float, float, str, int]:
    """Wall seconds, CPU seconds (user + system, the command's processes together), output
    and peak RSS in KiB of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu, out.stdout.strip(), max(after.ru_maxrss, before.ru_maxrss)


INGEST = """
import sys
from pathlib import Path
from benchreport.ingest.io import read_raw
from benchreport.ingest.parsers.logscan import Summary
s = Summary(file=sys.argv[1], engine="auto")
records = read_raw(Path(sys.argv[1]), sys.argv[1], "auto", 2026, s)
print(len(records), s.lines, s.unrecognised)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    ap.add_argument("--keep", action="store_true", help="keep the generated log")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="benchreport-bench-"))
    log = folder / f"{args.engine}.log"
    t0 = time.perf_counter()
    make_log(log, args.engine, args.size_mb)
    size = log.stat().st_size
    print(f"log: {size / 2**20:.0f} MiB {args.engine}, written in {time.perf_counter() - t0:.1f}s")
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=True)   # warm the cache
    e_s, e_cpu, e_out, _ = timed(grep_args(args.engine, "E") + [str(log)])
    g_s, _, g_out, _ = timed(grep_args(args.engine, "F") + [str(log)])
    i_s, i_cpu, i_out, peak_kb = timed([sys.executable, "-c", INGEST, str(log), args.engine])
    records, lines, unrecognised = i_out.split()
    print(f"grep -cE:  {e_s:6.2f}s  {int(e_out):,} matching lines (the scanner's literals)")
    print(f"grep -cF:  {g_s:6.2f}s  {int(g_out):,} matching lines (same, as fixed strings)")
    print(f"ingest:    {i_s:6.2f}s  {int(records):,} records from {int(lines):,} lines, "
          f"{unrecognised} unrecognised  ({i_s / e_s:.2f}x grep -cE, {i_s / g_s:.2f}x grep -cF, "
          f"{size / 2**20 / i_s:.0f} MiB/s)")
    # On a shared machine wall times move with the others' load, and with Linux's autogroup
    # scheduling the ingest's two processes share one session's CPU share: under load they
    # run no faster than one. CPU time shows the work itself.
    print(f"CPU time:  grep -cE {e_cpu:.2f}s, ingest {i_cpu:.2f}s in its two processes "
          f"({i_cpu / 2 / e_cpu:.2f}x grep -cE per process)")
    print(f"peak RSS of the ingest process: {peak_kb / 1024:.0f} MiB")
    if not args.keep:
        log.unlink()
        os.rmdir(folder)


if __name__ == "__main__":
    main()
