"""Independent readers of the reference raw files, for calibration tests.

Deliberately not the package's parsers: plain regexes over the text, so a bug in the
package cannot hide a miscalibrated file.
"""

import re
from pathlib import Path

VLLM_STATS = re.compile(
    r"^\(APIServer pid=\d+\) INFO (\d\d-\d\d \d\d:\d\d:\d\d) \[loggers\.py:\d+\] Engine 000: "
    r"Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: ([\d.]+) tokens/s, "
    r"Running: (\d+) reqs, Waiting: (\d+) reqs")
VLLM_SPEC = re.compile(r"SpecDecoding metrics: Mean acceptance length: ([\d.]+)")
SG_PREFILL = re.compile(r"Prefill batch, #new-seq: (\d+), #new-token: (\d+).*"
                        r"input throughput \(token/s\): ([\d.]+)")
SG_DECODE = re.compile(r"Decode batch, #running-req: (\d+), .*accept len: ([\d.]+), .*"
                       r"gen throughput \(token/s\): ([\d.]+), #queue-req: (\d+)")


def vllm_runs(log: Path) -> list[list[dict]]:
    """Stats lines grouped per benchmark: an all-zero line closes a group."""
    runs, cur = [], []
    for line in log.read_text().splitlines():
        m = VLLM_STATS.match(line)
        if m:
            rec = {"ts": m[1], "prompt": float(m[2]), "gen": float(m[3]), "running": int(m[4]),
                   "waiting": int(m[5]), "spec": None}
            if rec["prompt"] == 0 and rec["gen"] == 0:
                if cur:
                    runs.append(cur)
                cur = []
            else:
                cur.append(rec)
        elif (s := VLLM_SPEC.search(line)) and cur:
            cur[-1]["spec"] = float(s[1])
    return runs


def vllm_steady(run: list[dict], n: int = 10) -> list[float]:
    return [r["gen"] for r in run if r["running"] == n and r["waiting"] == 0 and r["prompt"] == 0]


def sglang_runs(log: Path, prompts: int = 10) -> list[list[tuple]]:
    """Prefill/Decode records grouped per benchmark (a run ends after ``prompts`` responses)."""
    runs, cur, done = [], [], 0
    for line in log.read_text().splitlines():
        if m := SG_PREFILL.search(line):
            cur.append(("prefill", int(m[1]), int(m[2]), float(m[3])))
        elif m := SG_DECODE.search(line):
            cur.append(("decode", int(m[1]), float(m[2]), float(m[3]), int(m[4])))
        elif '"POST /generate HTTP/1.1" 200' in line:
            done += 1
            if done % prompts == 0:
                runs.append(cur)
                cur = []
    return runs


def sglang_steady(run: list[tuple], n: int = 10) -> list[float]:
    out, prefill_since_last = [], True
    for rec in run:
        if rec[0] == "prefill":
            prefill_since_last = True
        else:
            if rec[1] == n and rec[4] == 0 and not prefill_since_last:
                out.append(rec[3])
            prefill_since_last = False
    return out
