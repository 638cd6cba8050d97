"""A generated benchmark campaign whose truth is known: a concurrency sweep with repeats.

`write_campaign(out, …)` simulates, for every engine × concurrency × repeat, a closed-loop
benchmark of ``requests`` requests and writes what the benchmark clients would have written
for it into a run folder (``out/run.yaml`` + ``out/raw/<engine>/<client>/…``):

- ``vllm``: one ``vllm bench serve --save-result --save-detailed`` JSON per point and repeat
  (``vllm/vllm-infqps-concurrency16-<model>-<date>.json``), the key set and key order of
  vLLM ≥0.10 with ``--metric-percentiles 90,99 --percentile-metrics ttft,tpot,itl,e2el``,
  the per-request lists included and every statistic computed from them as vLLM's
  ``calculate_metrics`` does (``np.mean(ttfts) * 1000`` …, TPOT = (latency − TTFT) ÷
  (output − 1) per request, ITL pooled over every chunk of every request);
- ``guidellm``: one GuideLLM 0.5 ``benchmarks.json`` per engine and repeat
  (``guidellm/<date>/benchmarks.json``), one ``concurrent`` benchmark (``streams`` N) per
  load, with ``metadata``, ``args``, metrics split successful / errored / incomplete / total
  and the ``requests``;
- ``aiperf``: per point an AIPerf folder ``aiperf/<model>-openai-chat-concurrency16/``
  holding ``profile_runs/run_000R/profile_export_aiperf.json`` (the newer schema: top-level
  metric dicts with ``unit``, ``avg``, ``p50`` …, ``std``, and ``input_config.loadgen``) and
  its per-request ``profile_export.jsonl``.

All clients describe the same simulated requests, so their figures differ only by each
client's own definitions (GuideLLM's TPOT includes the first token; AIPerf's ITL is the
per-request mean gap). With several clients, `load_points` keeps each client's results of a
point apart as a variant (``client-guidellm``), each with the run's repeats.

The latency model (`EngineModel`): requests are sent by ``concurrency`` closed-loop workers;
prefills are served one at a time (so TTFT grows with the queue position and with the load),
each takes ``prefill_s × input/1024 × (1 + 0.03 (c − 1))``; a decode step takes
``itl_s × (1 + itl_slope (c − 1))``; both with log-normal noise and a rare stalled step.
Everything is drawn from ``numpy.random.default_rng([seed, crc32(engine), c, repeat])``:
the same arguments write byte-identical files, and repeats differ.

Load-curve features, all off by default (and then every file is as before):

- ``EngineModel.max_running`` (vLLM's ``max_num_seqs``; the preset ``gamma`` has 8): the
  engine runs at most that many requests at once. A request sent while every slot is busy
  waits for the first to free (a slot frees when its request finishes) before its prefill
  starts, and the wait counts in its TTFT; the ``c`` of both formulas above becomes the
  requests running, min(c, max_running). So up to ``c = max_running`` more load means more
  tokens per second; beyond it the decode batch, and with it the output throughput, stays
  the same while the extra requests only queue: TTFT and E2E latency keep rising, TPOT
  does not. The throughput curve has its knee at exactly ``max_running``.
- ``write_campaign(drive_limit={16: 6})``: at concurrency 16 the client kept only 6 workers
  busy (a client that could not drive the load). The point is simulated with 6 workers
  (random draws still keyed on 16), every file still records 16 as its concurrency, and
  only the requests themselves show it (Little's law: completed × mean latency ÷ duration
  ≈ 6; GuideLLM's measured ``request_concurrency`` is 6).
- ``write_campaign(gpus=…, slo=…, cost=…)``: run.yaml's ``hardware.gpus`` and top-level
  ``slo:`` and ``cost:`` blocks (written as given, after the other keys).

`expected_point` gives a load's true figures (output throughput, per GPU, median TPOT, TTFT
and E2E latency, interactivity) from one simulation of the `noiseless` model, so tests and
analyses know the curve the noisy files scatter around.

The returned `CampaignTruth` holds for every (engine, load, repeat) the true per-request
arrays and, per client, the `Point.fields`, definitions and per-request rows that reading
the files must give.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import hashlib
import heapq
import json
import math
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

CLIENTS = ("aiperf", "guidellm", "vllm")          # the folder under raw/<engine>/
VLLM_PERCENTILES = (90.0, 99.0)
GUIDELLM_PERCENTILES = (("p001", 0.001), ("p01", 0.01), ("p05", 0.05), ("p10", 0.1),
                        ("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p90", 0.9),
                        ("p95", 0.95), ("p99", 0.99), ("p999", 0.999))
AIPERF_PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
START = dt.datetime(2025, 11, 20, 9, 0, 0)       # the campaign's first point (UTC)
GAP_S = 10                                       # between two points
TARGET = "http://localhost:8000"
# what a failed request reports, per client (none of them changed by base.redact)
VLLM_ERROR = "Internal Server Error"
GUIDELLM_ERROR = "Server error '500 Internal Server Error' for url '/v1/completions'"
AIPERF_ERROR = {"code": 500, "type": "InternalServerError",
                "message": "Internal Server Error"}

DEFINITIONS = {
    "vllm": {"ttft": "ttft.first-token", "tpot": "tpot.excl-first", "itl": "itl.per-chunk",
             "e2el": "e2el.request"},
    "guidellm": {"ttft": "ttft.first-token", "tpot": "tpot.guidellm", "itl": "itl.guidellm",
                 "e2el": "e2el.request"},
    "aiperf": {"ttft": "ttft.first-token", "itl": "itl.excl-first", "e2el": "e2el.request"},
}
CLIENT_IDS = {"vllm": "vllm-bench-serve", "guidellm": "guidellm", "aiperf": "aiperf"}


# ------------------------------------------------------------------------------- model

@dataclass(frozen=True)
class EngineModel:
    """A serving engine as a few numbers (seconds)."""

    id: str
    name: str
    prefill_s: float           # prefill of 1,024 input tokens, alone
    itl_s: float               # one decode step at concurrency 1
    itl_slope: float           # relative growth of a decode step per extra concurrent request
    noise: float = 0.06        # log-normal sigma of every duration
    stall_p: float = 0.004     # chance that a decode step waits for another request's prefill
    max_running: int | None = None   # at most this many requests run at once (max_num_seqs)

    def __post_init__(self) -> None:
        if self.max_running is not None and (isinstance(self.max_running, bool)
                                             or self.max_running < 1):
            raise ValueError(f"max_running must be at least 1, got {self.max_running!r}")


PRESETS = {
    # alpha decodes faster alone, beta scales better: their ITL curves cross near c = 12
    "alpha": EngineModel("alpha", "Alpha", prefill_s=0.060, itl_s=0.0080, itl_slope=0.045),
    "beta": EngineModel("beta", "Beta", prefill_s=0.045, itl_s=0.0095, itl_slope=0.025),
    # gamma runs at most 8 requests at once: its output throughput has a knee at c = 8
    "gamma": EngineModel("gamma", "Gamma", prefill_s=0.050, itl_s=0.0085, itl_slope=0.035,
                         max_running=8),
}


def noiseless(model: EngineModel) -> EngineModel:
    """The model without noise and without stalled steps: every duration is its mean."""
    return dataclasses.replace(model, noise=0.0, stall_p=0.0)


def engine_model(spec: str | EngineModel) -> EngineModel:
    """A preset by name, an `EngineModel` as given, or numbers derived from the name."""
    if isinstance(spec, EngineModel):
        return spec
    if spec in PRESETS:
        return PRESETS[spec]
    h = zlib.crc32(spec.encode())
    return EngineModel(spec, spec.capitalize(), prefill_s=0.040 + (h % 40) / 1000,
                       itl_s=0.0070 + ((h >> 8) % 40) / 10000,
                       itl_slope=0.020 + ((h >> 16) % 40) / 1000)


@dataclass
class Requests:
    """The requests of one benchmark point as the client saw them (seconds, from the point's
    start). A failed request has ``error`` set, output length 0, TTFT and latency 0.0 (as
    vLLM records them) and fails ``fail_after`` seconds after it was sent."""

    sent: np.ndarray            # float64
    input_lens: np.ndarray      # int64
    output_lens: np.ndarray     # int64
    ttfts: np.ndarray           # float64
    latencies: np.ndarray       # float64
    itl_flat: np.ndarray        # float64: every request's gaps, one after another
    itl_offsets: np.ndarray     # int64, len n + 1: request i's gaps are flat[o[i]:o[i + 1]]
    errors: list[str]           # "" when the request succeeded
    fail_after: np.ndarray      # float64, 0.0 for requests that succeeded
    duration: float             # the benchmark's duration

    @property
    def n(self) -> int:
        return len(self.errors)

    @property
    def ok(self) -> np.ndarray:
        return np.array([not e for e in self.errors], dtype=bool)

    def itls(self) -> list[list[float]]:
        flat, o = self.itl_flat.tolist(), self.itl_offsets.tolist()
        return [flat[o[i]:o[i + 1]] for i in range(self.n)]


def simulate(model: EngineModel, concurrency: int, repeat: int, *, requests: int,
             input_tokens: int, output_tokens: int, seed: int, failures: int = 0,
             range_ratio: float = 0.0, drive: int | None = None) -> Requests:
    """One closed-loop benchmark point: ``concurrency`` workers send ``requests`` requests.

    ``drive`` (default ``concurrency``) is how many workers the client actually keeps busy;
    the random draws still follow ``concurrency``, the point's name. With
    ``model.max_running`` set, a request waits for one of that many slots before its prefill
    starts (the wait is part of its TTFT) and holds it until it finishes; failed requests
    take no slot. Both durations scale with the requests running, min(workers, max_running).
    """
    rng = np.random.default_rng([seed, zlib.crc32(model.id.encode()), concurrency, repeat])
    n = requests
    c = concurrency if drive is None else drive                    # the busy workers
    if c < 1:
        raise ValueError(f"drive must be at least 1, got {drive!r}")
    running = c if model.max_running is None else min(c, model.max_running)
    # a heap of the times the engine's slots free up (all free at the start)
    slots = None if model.max_running is None else [0.0] * model.max_running

    def lengths(target: int) -> np.ndarray:
        if range_ratio <= 0:
            return np.full(n, target, dtype=np.int64)
        lo, hi = max(1, int(target * (1 - range_ratio))), int(target * (1 + range_ratio))
        return rng.integers(lo, hi + 1, size=n, dtype=np.int64)

    input_lens, output_lens = lengths(input_tokens), lengths(max(2, output_tokens))
    failed = set(rng.choice(n, size=min(failures, n), replace=False).tolist()) \
        if failures else set()
    step = model.itl_s * (1 + model.itl_slope * (running - 1))
    prefill_scale = model.prefill_s * (1 + 0.03 * (running - 1)) / 1024
    workers = [(0.0, k) for k in range(min(c, n))]
    heapq.heapify(workers)
    prefill_free = 0.0
    sent = np.zeros(n)
    ttfts, latencies, fail_after = np.zeros(n), np.zeros(n), np.zeros(n)
    gaps_all: list[np.ndarray] = []
    offsets = np.zeros(n + 1, dtype=np.int64)
    errors = [""] * n
    finish_max = 0.0
    for i in range(n):
        at, worker = heapq.heappop(workers)
        sent[i] = at
        if i in failed:
            fail_after[i] = 0.010 * float(rng.lognormal(0.0, model.noise))
            errors[i] = VLLM_ERROR
            output_lens[i] = 0
            gaps_all.append(np.empty(0))
            done = at + fail_after[i]
        else:
            ready = at if slots is None else max(at, heapq.heappop(slots))
            begin = max(ready, prefill_free)
            prefill = prefill_scale * int(input_lens[i]) * float(rng.lognormal(0.0, model.noise))
            prefill_free = begin + prefill
            ttft = prefill_free - at + 0.002 * float(rng.lognormal(0.0, model.noise))
            k = int(output_lens[i]) - 1
            gaps = step * rng.lognormal(0.0, model.noise, size=k)
            stalls = rng.random(k) < model.stall_p * (running > 1)
            gaps[stalls] += model.prefill_s * float(rng.lognormal(0.0, model.noise))
            ttfts[i] = ttft
            latencies[i] = ttft + float(np.cumsum(gaps)[-1]) if k else ttft
            gaps_all.append(gaps)
            done = at + latencies[i]
            if slots is not None:
                heapq.heappush(slots, done)
        offsets[i + 1] = offsets[i] + len(gaps_all[-1])
        finish_max = max(finish_max, done)
        heapq.heappush(workers, (done + 0.0005, worker))     # the client's own overhead
    return Requests(sent=sent, input_lens=input_lens, output_lens=output_lens, ttfts=ttfts,
                    latencies=latencies, itl_flat=np.concatenate(gaps_all) if gaps_all
                    else np.empty(0), itl_offsets=offsets, errors=errors,
                    fail_after=fail_after, duration=finish_max + 0.001)


def expected_point(model: EngineModel | str, concurrency: int, *, requests: int,
                   input_tokens: int, output_tokens: int, gpus: int = 1,
                   drive: int | None = None) -> dict[str, float]:
    """The true figures of a load: the `noiseless` model simulated once (``drive`` workers
    busy, default ``concurrency``). Throughputs in tokens/s, times in ms, TPOT per request
    (latency − TTFT) ÷ (output − 1) as vLLM computes it, interactivity 1000 ÷ median TPOT
    (tokens/s per user)."""
    if gpus < 1:
        raise ValueError(f"gpus must be at least 1, got {gpus!r}")
    q = simulate(noiseless(engine_model(model)), concurrency, 1, requests=requests,
                 input_tokens=input_tokens, output_tokens=output_tokens, seed=0, drive=drive)
    ok = q.ok
    outs = q.output_lens[ok]
    ttfts, lats = q.ttfts[ok], q.latencies[ok]
    multi = outs > 1
    tpots = (lats[multi] - ttfts[multi]) / (outs[multi] - 1)
    throughput = float(outs.sum()) / q.duration
    tpot_ms = float(np.median(tpots)) * 1000.0 if tpots.size else math.nan
    return {"output_throughput": throughput, "output_throughput_per_gpu": throughput / gpus,
            "median_tpot_ms": tpot_ms,
            "median_ttft_ms": float(np.median(ttfts)) * 1000.0 if ttfts.size else math.nan,
            "median_e2el_ms": float(np.median(lats)) * 1000.0 if lats.size else math.nan,
            "interactivity": 1000.0 / tpot_ms if tpot_ms > 0 else math.nan}


# ------------------------------------------------------------------------------- truth

@dataclass
class PointTruth:
    """One engine × load × repeat: the requests and what each client's file must read as."""

    engine: str
    load: str                    # Load.id, e.g. "c16"
    concurrency: int
    repeat: int                  # 1-based, per client
    start: dt.datetime           # UTC, naive
    end: dt.datetime
    requests: Requests
    files: dict[str, str] = field(default_factory=dict)       # client -> path in the run
    where: dict[str, str] = field(default_factory=dict)       # client -> Point.where
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)   # client -> Point.fields
    drive: int | None = None     # the workers the client kept busy, when not `concurrency`

    def definitions(self, client: str) -> dict[str, str]:
        return dict(DEFINITIONS[client])

    def rows(self, client: str) -> list[dict[str, Any]]:
        """The per-request rows (`Point.requests`) reading the client's files must give."""
        q = self.requests
        ins, outs = q.input_lens.tolist(), q.output_lens.tolist()
        ttfts, lats, fail = q.ttfts.tolist(), q.latencies.tolist(), q.fail_after.tolist()
        if client == "vllm":
            itls = q.itls()
            return [{"ttft_ms": None if e else ttfts[i] * 1000.0,
                     "e2el_ms": None if e else lats[i] * 1000.0,
                     "input_tokens": ins[i], "output_tokens": outs[i], "error": e or None,
                     "itl_ms": None if e else [g * 1000.0 for g in itls[i]], "start_s": None}
                    for i, e in enumerate(q.errors)]
        if client == "guidellm":
            ok = [{"ttft_ms": ttfts[i] * 1000.0, "e2el_ms": lats[i] * 1000.0,
                   "input_tokens": ins[i], "output_tokens": outs[i]}
                  for i, e in enumerate(q.errors) if not e]
            bad = [{"e2el_ms": fail[i] * 1000.0, "input_tokens": ins[i], "output_tokens": 0,
                    "error": GUIDELLM_ERROR} for i, e in enumerate(q.errors) if e]
            return ok + bad
        if client == "aiperf":
            text = f"{AIPERF_ERROR['code']} {AIPERF_ERROR['type']}: {AIPERF_ERROR['message']}"
            ttft_ms, lat_ms = (q.ttfts * 1000.0).tolist(), (q.latencies * 1000.0).tolist()
            return [{"error": text} if e else
                    {"ttft_ms": ttft_ms[i], "e2el_ms": lat_ms[i], "input_tokens": ins[i],
                     "output_tokens": outs[i]} for i, e in enumerate(q.errors)]
        raise ValueError(f"unknown client {client!r}")


@dataclass
class CampaignTruth:
    """What `write_campaign` wrote and what reading it must give."""

    out: Path
    workload: str
    engines: tuple[EngineModel, ...]
    loads: tuple[str, ...]               # Load ids in sweep order
    repeats: int                         # per client, as run.yaml declares
    clients: tuple[str, ...]
    points: dict[tuple[str, str, int], PointTruth]   # (engine, load, repeat) -> truth
    files: list[Path]
    gpus: int = 1                        # run.yaml hardware.gpus
    slo: dict[str, Any] | None = None    # run.yaml slo, as given
    cost: dict[str, Any] | None = None   # run.yaml cost, as given
    drive_limit: dict[int, int] = field(default_factory=dict)  # concurrency -> busy workers


# ------------------------------------------------------------------------------- vLLM

def _vllm_peaks(q: Requests, itls: list[list[float]]) -> tuple[float, int]:
    """vLLM's max_output_tokens_per_s and max_concurrent_requests (successful requests,
    1-s buckets from the first send)."""
    ok = [i for i in range(q.n) if not q.errors[i]]
    if not ok:
        return 0.0, 0
    sent, ttft, lat = q.sent.tolist(), q.ttfts.tolist(), q.latencies.tolist()
    first = min(sent[i] for i in ok)
    last = max(sent[i] + lat[i] for i in ok)
    size = int(np.ceil(last - first)) + 1
    tokens = np.zeros(size)
    running = np.zeros(size)
    for i in ok:
        now = sent[i] + ttft[i]
        times = [now]
        for gap in itls[i]:
            now += gap
            times.append(now)
        buckets = (np.asarray(times) - first).astype(np.int64)
        buckets = buckets[(buckets >= 0) & (buckets < size)]
        np.add.at(tokens, buckets, 1)
        running[int(sent[i] - first): int(sent[i] + lat[i] - first) + 1] += 1
    return float(np.max(tokens)), int(np.max(running))


def vllm_result(t: PointTruth, model: str) -> tuple[str, dict[str, Any]]:
    """The `vllm bench serve` payload (one line, no final newline) and its Point.fields."""
    q = t.requests
    ins, outs = q.input_lens.tolist(), q.output_lens.tolist()
    ttfts, lats, itls = q.ttfts.tolist(), q.latencies.tolist(), q.itls()
    # vllm/benchmarks/serve.py calculate_metrics
    s_ttfts, tpots, pooled, e2els = [], [], [], []
    total_in = completed = 0
    for i in range(q.n):
        if q.errors[i]:
            continue
        completed += 1
        total_in += ins[i]
        if outs[i] > 1:
            tpots.append((lats[i] - ttfts[i]) / (outs[i] - 1))
        pooled += itls[i]
        s_ttfts.append(ttfts[i])
        e2els.append(lats[i])
    total_out = sum(outs)
    dur = q.duration
    peak_tokens, peak_running = _vllm_peaks(q, itls)
    result: dict[str, Any] = {
        "date": t.end.strftime("%Y%m%d-%H%M%S"), "endpoint_type": "openai",
        "backend": "openai", "label": None, "model_id": model, "tokenizer_id": model,
        "num_prompts": q.n, "request_rate": "inf", "burstiness": 1.0,
        "max_concurrency": t.concurrency, "duration": dur, "completed": completed,
        "failed": q.n - completed, "total_input_tokens": total_in,
        "total_output_tokens": total_out, "request_throughput": completed / dur,
        "request_goodput": None, "output_throughput": total_out / dur,
        "total_token_throughput": (total_in + total_out) / dur,
        "max_output_tokens_per_s": peak_tokens, "max_concurrent_requests": peak_running,
        "rtfx": 0.0,
        "latencies": lats, "input_lens": ins, "output_lens": outs, "ttfts": ttfts,
        "itls": itls, "generated_texts": [""] * q.n, "errors": list(q.errors),
    }
    for metric, values in (("ttft", s_ttfts), ("tpot", tpots), ("itl", pooled),
                           ("e2el", e2els)):
        result[f"mean_{metric}_ms"] = float(np.mean(values or 0) * 1000)
        result[f"median_{metric}_ms"] = float(np.median(values or 0) * 1000)
        result[f"std_{metric}_ms"] = float(np.std(values or 0) * 1000)
        for p in VLLM_PERCENTILES:
            word = str(int(p)) if int(p) == p else str(p)
            result[f"p{word}_{metric}_ms"] = float(np.percentile(values or 0, p) * 1000)
    fields: dict[str, Any] = {
        key: result[key] for key in ("duration", "completed", "failed", "total_input_tokens",
                                     "total_output_tokens", "request_throughput",
                                     "output_throughput", "max_concurrency")}
    fields["request_rate"] = "inf"
    fields["requests_asked"] = q.n                 # the file's num_prompts
    for metric in ("ttft", "tpot", "itl", "e2el"):
        for stat in ("mean", "median", "std", "p90", "p99"):
            fields[f"{stat}_{metric}_ms"] = result[f"{stat}_{metric}_ms"]
    return json.dumps(result), fields


# ------------------------------------------------------------------------------- GuideLLM

def _gl_dist(values: list[float] | np.ndarray, weights: np.ndarray | None = None
             ) -> dict[str, Any]:
    """A GuideLLM distribution summary; ``weights`` count each value that many times (per
    output token), percentiles are the value where the cumulative weight first reaches p."""
    v = np.asarray(values, dtype=float)
    keys = [k for k, _ in GUIDELLM_PERCENTILES]
    if v.size == 0:
        return {"mean": 0.0, "median": 0.0, "mode": 0.0, "variance": 0.0, "std_dev": 0.0,
                "min": 0.0, "max": 0.0, "count": 0, "total_sum": 0.0,
                "percentiles": dict.fromkeys(keys, 0.0), "pdf": None}
    w = np.ones(v.size) if weights is None else np.asarray(weights, dtype=float)
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    total = float(w.sum())
    wsum = float((v * w).sum())
    mean = wsum / total
    variance = float(((v - mean) ** 2 * w).sum() / total)
    cdf = np.cumsum(w) / total

    def pct(p: float) -> float:
        return float(v[min(int(np.searchsorted(cdf, p, side="left")), v.size - 1)])

    return {"mean": mean, "median": pct(0.5), "mode": float(v[int(np.argmax(w))]),
            "variance": variance, "std_dev": math.sqrt(variance), "min": float(v[0]),
            "max": float(v[-1]), "count": int(round(total)), "total_sum": wsum,
            "percentiles": {k: pct(p) for k, p in GUIDELLM_PERCENTILES}, "pdf": None}


def _gl_split(ok: Any, bad: Any = (), w_ok: np.ndarray | None = None,
              w_bad: np.ndarray | None = None) -> dict[str, Any]:
    both = np.concatenate([np.asarray(ok, dtype=float), np.asarray(bad, dtype=float)])
    w_all = None if w_ok is None else np.concatenate(
        [w_ok, w_bad if w_bad is not None else np.empty(0)])
    return {"successful": _gl_dist(ok, w_ok), "errored": _gl_dist(bad, w_bad),
            "incomplete": _gl_dist([]), "total": _gl_dist(both, w_all)}


def _uuid(*parts: Any) -> str:
    return str(uuid.UUID(bytes=hashlib.md5("/".join(map(str, parts)).encode()).digest()))


def _epoch(t: dt.datetime) -> float:
    return t.replace(tzinfo=dt.UTC).timestamp()


def guidellm_benchmark(t: PointTruth, index: int, run_id: str, model: str, data: str,
                       loads: list[int]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One GuideLLM ``concurrent`` benchmark and its Point.fields."""
    q = t.requests
    ok = q.ok
    ins, outs = q.input_lens.astype(float), q.output_lens.astype(float)
    ttft_ms = q.ttfts[ok] * 1000.0
    lat = q.latencies[ok]
    out_ok = outs[ok]
    tpot_ms = lat * 1000.0 / out_ok                                 # first token included
    multi = out_ok > 1
    itl_ms = (lat[multi] - q.ttfts[ok][multi]) * 1000.0 / (out_ok[multi] - 1)
    done, errored = int(ok.sum()), int((~ok).sum())
    dur = q.duration
    t0 = _epoch(t.start)
    metrics = {
        "request_totals": {"successful": done, "errored": errored, "incomplete": 0,
                           "total": q.n},
        "requests_per_second": _gl_split([done / dur]),
        # measured by GuideLLM: what the client kept busy, not what it was asked for
        "request_concurrency": _gl_split([float(min(t.drive or t.concurrency, q.n))]),
        "request_latency": _gl_split(lat, q.fail_after[~ok]),
        "prompt_token_count": _gl_split(ins[ok], ins[~ok]),
        "output_token_count": _gl_split(out_ok, outs[~ok]),
        "total_token_count": _gl_split(ins[ok] + out_ok, ins[~ok]),
        "time_to_first_token_ms": _gl_split(ttft_ms),
        "time_per_output_token_ms": _gl_split(tpot_ms, w_ok=out_ok),
        "inter_token_latency_ms": _gl_split(itl_ms, w_ok=out_ok[multi] - 1),
        "output_tokens_per_second": _gl_split([float(out_ok.sum()) / dur]),
        "tokens_per_second": _gl_split([float(ins[ok].sum() + out_ok.sum()) / dur]),
    }
    requests: dict[str, list] = {"successful": [], "errored": [], "incomplete": []}
    itl_all = q.itls()
    tpot_l, ttft_l = (q.latencies * 1000.0).tolist(), (q.ttfts * 1000.0).tolist()
    for i in range(q.n):
        start = t0 + float(q.sent[i])
        item: dict[str, Any] = {"type_": "generative_request_stats",
                                "request_id": _uuid(t.engine, t.load, t.repeat, i)}
        if q.errors[i]:
            end = start + float(q.fail_after[i])
            item["info"] = {"status": "errored", "error": GUIDELLM_ERROR,
                            "timings": {"request_start": start, "request_end": end}}
            item.update({"request_start_time": start, "request_end_time": end,
                         "request_latency": float(q.fail_after[i]),
                         "prompt_tokens": int(ins[i]), "output_tokens": 0,
                         "total_tokens": int(ins[i]), "time_to_first_token_ms": None,
                         "time_per_output_token_ms": None, "inter_token_latency_ms": None})
            requests["errored"].append(item)
            continue
        latency, n_out = float(q.latencies[i]), int(outs[i])
        first = start + float(q.ttfts[i])
        item["info"] = {"status": "completed", "error": None, "timings": {
            "request_start": start, "first_token_iteration": first,
            "last_token_iteration": start + latency, "request_end": start + latency,
            "token_iterations": len(itl_all[i]) + 1}}
        item.update({
            "request_start_time": start, "request_end_time": start + latency,
            "request_latency": latency, "prompt_tokens": int(ins[i]), "output_tokens": n_out,
            "total_tokens": int(ins[i]) + n_out, "time_to_first_token_ms": ttft_l[i],
            "time_per_output_token_ms": tpot_l[i] / n_out,
            "inter_token_latency_ms": (latency - float(q.ttfts[i])) * 1000.0 / (n_out - 1)
            if n_out > 1 else None,
            "tokens_per_second": (int(ins[i]) + n_out) / latency,
            "output_tokens_per_second": n_out / latency})
        requests["successful"].append(item)
    bench = {
        "type_": "generative_benchmark",
        "config": {
            "id_": _uuid("benchmark", t.engine, t.load, t.repeat), "run_id": run_id,
            "run_index": index,
            "strategy": {"type_": "concurrent", "worker_count": min(t.concurrency, 8),
                         "max_concurrency": t.concurrency, "streams": t.concurrency},
            "constraints": {"max_requests": {"type_": "max_number", "max_num": q.n,
                                             "current_index": index}},
            "warmup": {"percent": None, "value": None, "mode": "prefer_duration"},
            "cooldown": {"percent": None, "value": None, "mode": "prefer_duration"},
            "profile": {"type_": "concurrent", "streams": loads,
                        "strategy_types": ["concurrent"] * len(loads),
                        "constraints": {"max_requests": q.n}},
            "requests": {"data": repr([data]), "data_samples": -1, "random_seed": 42},
            "backend": {"target": TARGET, "model": model, "timeout": None},
        },
        "scheduler_state": {"node_id": 0, "num_processes": 1, "start_time": t0,
                            "end_time": t0 + dur},
        "scheduler_metrics": {"start_time": t0, "request_start_time": t0,
                              "measure_start_time": t0, "measure_end_time": t0 + dur,
                              "request_end_time": t0 + dur, "end_time": t0 + dur,
                              "requests_made": {"successful": done, "errored": errored,
                                                "incomplete": 0, "total": q.n}},
        "metrics": metrics,
        "requests": requests,
        "start_time": t0, "end_time": t0 + dur, "duration": dur,
        "warmup_duration": 0.0, "cooldown_duration": 0.0,
    }
    fields: dict[str, Any] = {
        "completed": done, "failed": errored, "duration": dur,
        "total_input_tokens": int(round(metrics["prompt_token_count"]["successful"]
                                        ["total_sum"])),
        "total_output_tokens": int(round(metrics["output_token_count"]["successful"]
                                         ["total_sum"])),
        "request_throughput": metrics["requests_per_second"]["successful"]["mean"],
        "output_throughput": metrics["output_tokens_per_second"]["successful"]["mean"],
    }
    for metric, key, factor in (("ttft", "time_to_first_token_ms", 1.0),
                                ("tpot", "time_per_output_token_ms", 1.0),
                                ("itl", "inter_token_latency_ms", 1.0),
                                ("e2el", "request_latency", 1000.0)):
        d = metrics[key]["successful"]
        if not d["count"]:
            continue
        fields[f"mean_{metric}_ms"] = d["mean"] * factor
        fields[f"median_{metric}_ms"] = d["median"] * factor
        fields[f"p90_{metric}_ms"] = d["percentiles"]["p90"] * factor
        fields[f"p99_{metric}_ms"] = d["percentiles"]["p99"] * factor
        fields[f"std_{metric}_ms"] = d["std_dev"] * factor
    fields["max_concurrency"] = t.concurrency
    return bench, fields


def guidellm_report(points: list[PointTruth], model: str, data: str, requests: int
                    ) -> tuple[str, list[dict[str, Any]]]:
    """GuideLLM's benchmarks.json for one sweep (one engine, one repeat)."""
    loads = [t.concurrency for t in points]
    run_id = _uuid("run", points[0].engine, points[0].repeat)
    benches, fields = [], []
    for i, t in enumerate(points):
        bench, f = guidellm_benchmark(t, i, run_id, model, data, loads)
        benches.append(bench)
        fields.append(f)
    doc = {
        "metadata": {"version": 1, "guidellm_version": "0.5.0.dev0",
                     "python_version": "3.12.3", "platform": "Linux-6.8.0-x86_64-with-glibc2.39"},
        "args": {"target": TARGET, "data": [data], "profile": "concurrent", "rate": loads,
                 "backend": "openai_http", "request_format": "/v1/completions",
                 "model": model, "random_seed": 42, "outputs": ["json"],
                 "max_requests": requests, "warmup": None, "cooldown": None},
        "benchmarks": benches,
    }
    # GuideLLM writes its JSON on one line with no final newline
    return json.dumps(doc), fields


# ------------------------------------------------------------------------------- AIPerf

def _ai_metric(values: np.ndarray, unit: str, header: str) -> dict[str, Any]:
    a = np.asarray(values, dtype=float)
    if a.size == 0:                     # no request succeeded: AIPerf leaves the metric out
        return {"unit": unit, "header": header, "avg": None, "count": 0}
    d: dict[str, Any] = {"unit": unit, "header": header, "avg": float(np.mean(a)),
                         "min": float(np.min(a)), "max": float(np.max(a))}
    for p in AIPERF_PERCENTILES:
        d[f"p{p}"] = float(np.percentile(a, p))
    d["std"] = float(np.std(a))
    d["count"] = int(a.size)
    return d


def _ai_scalar(value: float, unit: str, header: str) -> dict[str, Any]:
    return {"unit": unit, "header": header, "avg": value, "count": 1}


def aiperf_files(t: PointTruth, model: str, input_tokens: int, output_tokens: int
                 ) -> tuple[str, str, dict[str, Any]]:
    """AIPerf's profile_export_aiperf.json, its profile_export.jsonl and the Point.fields."""
    q = t.requests
    ok = q.ok
    done, failed = int(ok.sum()), int((~ok).sum())
    ttft_ms, lat_ms = q.ttfts * 1000.0, q.latencies * 1000.0
    ins, outs = q.input_lens, q.output_lens
    out_ok = outs[ok].astype(float)
    multi = out_ok > 1
    itl_ms = (lat_ms[ok][multi] - ttft_ms[ok][multi]) / (out_ok[multi] - 1)
    dur = q.duration
    total_isl, total_osl = int(ins[ok].sum()), int(outs[ok].sum())
    doc: dict[str, Any] = {"schema_version": "1.0", "aiperf_version": "0.3.0"}
    doc["request_latency"] = _ai_metric(lat_ms[ok], "ms", "Request Latency")
    doc["time_to_first_token"] = _ai_metric(ttft_ms[ok], "ms", "Time to First Token")
    doc["inter_token_latency"] = _ai_metric(itl_ms, "ms", "Inter Token Latency")
    doc["output_token_throughput_per_user"] = _ai_metric(
        1000.0 / itl_ms, "tokens/sec/user", "Output Token Throughput Per User")
    doc["output_sequence_length"] = _ai_metric(out_ok, "tokens", "Output Sequence Length")
    doc["input_sequence_length"] = _ai_metric(ins[ok].astype(float), "tokens",
                                              "Input Sequence Length")
    doc["output_token_throughput"] = _ai_scalar(total_osl / dur, "tokens/sec",
                                                "Output Token Throughput")
    doc["request_throughput"] = _ai_scalar(done / dur, "requests/sec", "Request Throughput")
    doc["request_count"] = _ai_scalar(float(done), "requests", "Request Count")
    if failed:
        doc["error_request_count"] = _ai_scalar(float(failed), "requests",
                                                "Error Request Count")
    doc["benchmark_duration"] = _ai_scalar(dur, "sec", "Benchmark Duration")
    doc["total_isl"] = _ai_scalar(float(total_isl), "tokens", "Total Input Sequence Length")
    doc["total_osl"] = _ai_scalar(float(total_osl), "tokens", "Total Output Sequence Length")
    doc["input_config"] = {
        "endpoint": {"model_names": [model], "type": "chat", "streaming": True,
                     "url": TARGET},
        "input": {"prompt": {"input_tokens": {"mean": input_tokens, "stddev": 0},
                             "output_tokens": {"mean": output_tokens, "stddev": 0}}},
        "loadgen": {"concurrency": t.concurrency, "request_count": q.n},
        "cli_command": f"aiperf profile -m {model} --url {TARGET} --endpoint-type chat "
                       f"--streaming --concurrency {t.concurrency} --request-count {q.n} "
                       f"--synthetic-input-tokens-mean {input_tokens} "
                       f"--output-tokens-mean {output_tokens}",
    }
    doc["was_cancelled"] = False
    doc["error_summary"] = [{"error_details": AIPERF_ERROR, "count": failed}] if failed else []
    doc["start_time"] = t.start.isoformat()
    doc["end_time"] = t.end.isoformat()

    # per-request records
    t0_ns = int(round(_epoch(t.start) * 1e9))
    lines = []
    itls = q.itls()
    ttft_l, lat_l = ttft_ms.tolist(), lat_ms.tolist()
    for i in range(q.n):
        meta = {"x_request_id": _uuid("x", t.engine, t.load, t.repeat, i),
                "x_correlation_id": _uuid("c", t.engine, t.load, t.repeat, i),
                "conversation_id": _uuid("v", t.engine, t.load, t.repeat, i),
                "turn_index": 0, "timestamp_ns": t0_ns + int(round(float(q.sent[i]) * 1e9)),
                "worker_id": f"worker_{i % 8}", "record_processor_id": "record_processor_0",
                "credit_phase": "profiling"}
        if q.errors[i]:
            rec = {"metadata": meta,
                   "metrics": {"error_request_count": {"value": 1, "unit": "requests"}},
                   "error": AIPERF_ERROR}
        else:
            n_out = int(outs[i])
            chunks = [g * 1000.0 for g in itls[i]]
            metrics = {
                "input_sequence_length": {"value": int(ins[i]), "unit": "tokens"},
                "time_to_first_token": {"value": ttft_l[i], "unit": "ms"},
                "request_count": {"value": 1, "unit": "requests"},
                "request_latency": {"value": lat_l[i], "unit": "ms"},
                "output_token_count": {"value": n_out, "unit": "tokens"},
                "inter_chunk_latency": {"value": chunks, "unit": "ms"},
                "output_sequence_length": {"value": n_out, "unit": "tokens"},
            }
            if n_out > 1:
                metrics["inter_token_latency"] = {
                    "value": (lat_l[i] - ttft_l[i]) / (n_out - 1), "unit": "ms"}
            rec = {"metadata": meta, "metrics": metrics, "error": None}
        lines.append(json.dumps(rec, separators=(",", ":")))

    fields: dict[str, Any] = {
        "duration": dur * (1000.0 / 1000.0), "completed": done, "failed": failed,
        "request_throughput": done / dur, "output_throughput": total_osl / dur,
        "total_input_tokens": total_isl, "total_output_tokens": total_osl,
    }
    for metric, key in (("ttft", "time_to_first_token"), ("itl", "inter_token_latency"),
                        ("e2el", "request_latency")):
        m = doc[key]
        for stat, src in (("mean", "avg"), ("median", "p50"), ("p90", "p90"), ("p99", "p99"),
                          ("std", "std")):
            fields[f"{stat}_{metric}_ms"] = m[src] * 1.0
    fields["max_concurrency"] = t.concurrency
    fields["requests_asked"] = q.n                 # input_config.loadgen.request_count
    return json.dumps(doc, indent=2), "\n".join(lines) + "\n", fields


# ------------------------------------------------------------------------------- campaign

def _load_concurrency(load: int | str) -> int:
    if isinstance(load, str) and load.startswith("c") and load[1:].isdigit():
        return int(load[1:])
    if isinstance(load, int) and not isinstance(load, bool) and load > 0:
        return load
    raise ValueError(f"a load is a concurrency (16 or 'c16'), got {load!r}")


def _write(path: Path, text: str, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    written.append(path)


def run_yaml(title: str, workload: str, engines: tuple[EngineModel, ...], loads: list[int],
             repeats: int, requests: int, input_tokens: int, output_tokens: int,
             model: str, *, gpus: int = 1, slo: dict[str, Any] | None = None,
             cost: dict[str, Any] | None = None) -> str:
    """The run's run.yaml; ``slo`` and ``cost`` become top-level blocks, as given, after the
    others (so leaving them out gives the text of before)."""
    doc: dict[str, Any] = {
        "schema": 1,
        "title": {"ko": f"합성 캠페인 {title}", "en": f"Synthetic campaign {title}"},
        "date": START.date(),
        "hardware": {"servers": 1, "gpus": gpus, "gpu_model": "Simulated GPU"},
        "model": {"name": model.rsplit("/", 1)[-1]},
        "engines": [{"id": e.id, "name": e.name} for e in engines],
        "workloads": [{"id": workload, "label": workload.upper(), "input_tokens": input_tokens,
                       "output_tokens": output_tokens, "concurrency": list(loads),
                       "num_prompts": requests, "repeats": repeats}],
        "reconstruction": {"statement": {
            "ko": "이 실행은 benchreport.synth.campaign이 만든 합성 데이터입니다.",
            "en": "This run is synthetic data made by benchreport.synth.campaign."}},
    }
    # copies: YAML would write a dict met twice as an anchor and an alias
    if slo is not None:
        doc["slo"] = copy.deepcopy(slo)
    if cost is not None:
        doc["cost"] = copy.deepcopy(cost)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def write_campaign(out: Path, engines: tuple[str | EngineModel, ...] = ("alpha", "beta"),
                   loads: tuple[int | str, ...] = (1, 4, 16), repeats: int = 3,
                   requests: int = 1000, input_tokens: int = 1024, output_tokens: int = 128,
                   seed: int = 0, clients: tuple[str, ...] = ("vllm",), *,
                   failures: int = 0, model: str = "synth/synth-8b",
                   workload: str | None = None, range_ratio: float = 0.0, gpus: int = 1,
                   slo: dict[str, Any] | None = None, cost: dict[str, Any] | None = None,
                   drive_limit: dict[int, int] | None = None) -> CampaignTruth:
    """Write a run folder ``out/run.yaml`` + ``out/raw/<engine>/<client>/…`` for a
    concurrency sweep with repeats, and return its truth.

    ``failures`` requests of every point fail (HTTP 500). ``out`` must not hold raw files yet.
    ``gpus`` is run.yaml's ``hardware.gpus``; ``slo`` and ``cost`` are written, as given, as
    run.yaml's top-level ``slo:`` and ``cost:``. ``drive_limit`` maps a concurrency of
    ``loads`` to the workers the client actually kept busy there (1 to the concurrency): the
    point is simulated with that many, while every file still records the concurrency.
    """
    out = Path(out)
    unknown = [c for c in clients if c not in CLIENTS]
    if unknown or not clients or len(set(clients)) != len(clients):
        raise ValueError(f"clients must be distinct names from {CLIENTS}, got {clients!r}")
    if repeats < 1 or requests < 1:
        raise ValueError("repeats and requests must be at least 1")
    if isinstance(gpus, bool) or gpus < 1:
        raise ValueError(f"gpus must be at least 1, got {gpus!r}")
    if (out / "raw").exists() and any(p.is_file() for p in (out / "raw").rglob("*")):
        raise FileExistsError(f"{out / 'raw'} already holds files; write into a new folder")
    models = tuple(engine_model(e) for e in engines)
    concs = [_load_concurrency(x) for x in loads]
    if len(set(concs)) != len(concs):
        raise ValueError(f"loads repeat a concurrency: {loads!r}")
    drives = dict(drive_limit or {})
    for c, d in drives.items():
        if c not in concs:
            raise ValueError(f"drive_limit names concurrency {c!r}, not one of the loads")
        if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= c:
            raise ValueError(f"drive_limit[{c}] must be a worker count from 1 to {c}, "
                             f"got {d!r}")
    wid = workload or (f"{input_tokens // 1024}k" if input_tokens % 1024 == 0
                       else f"in{input_tokens}")
    short = model.rsplit("/", 1)[-1]
    data = f"prompt_tokens={input_tokens},output_tokens={output_tokens}"

    # simulate, in the order the campaign ran: engine, repeat, load
    points: dict[tuple[str, str, int], PointTruth] = {}
    clock = START
    for m in models:
        for r in range(1, repeats + 1):
            for c in concs:
                q = simulate(m, c, r, requests=requests, input_tokens=input_tokens,
                             output_tokens=output_tokens, seed=seed, failures=failures,
                             range_ratio=range_ratio, drive=drives.get(c))
                end = clock + dt.timedelta(seconds=q.duration)
                t = PointTruth(engine=m.id, load=f"c{c}", concurrency=c, repeat=r,
                               start=clock, end=end, requests=q, drive=drives.get(c))
                points[(m.id, t.load, r)] = t
                clock = end.replace(microsecond=0) + dt.timedelta(seconds=1 + GAP_S)

    written: list[Path] = []
    for m in models:
        raw = out / "raw" / m.id
        for r in range(1, repeats + 1):
            sweep = [points[(m.id, f"c{c}", r)] for c in concs]
            if "vllm" in clients:
                for t in sweep:
                    name = (f"vllm-infqps-concurrency{t.concurrency}-{short}-"
                            f"{t.end:%Y%m%d-%H%M%S}.json")
                    text, fields = vllm_result(t, model)
                    path = raw / "vllm" / name
                    _write(path, text, written)
                    t.files["vllm"] = path.relative_to(out).as_posix()
                    t.where["vllm"] = "$"
                    t.fields["vllm"] = fields
            if "guidellm" in clients:
                text, fields = guidellm_report(sweep, model, data, requests)
                path = raw / "guidellm" / f"{sweep[0].start:%Y%m%d-%H%M%S}" / "benchmarks.json"
                _write(path, text, written)
                for i, (t, f) in enumerate(zip(sweep, fields, strict=True)):
                    t.files["guidellm"] = path.relative_to(out).as_posix()
                    t.where["guidellm"] = f"benchmarks[{i}]"
                    t.fields["guidellm"] = f
            if "aiperf" in clients:
                for t in sweep:
                    folder = (raw / "aiperf" / f"{short}-openai-chat-concurrency{t.concurrency}"
                              / "profile_runs" / f"run_{r:04d}")
                    summary, jsonl, fields = aiperf_files(t, model, input_tokens,
                                                          output_tokens)
                    _write(folder / "profile_export_aiperf.json", summary, written)
                    _write(folder / "profile_export.jsonl", jsonl, written)
                    t.files["aiperf"] = (folder / "profile_export_aiperf.json").relative_to(
                        out).as_posix()
                    t.where["aiperf"] = "top level"
                    t.fields["aiperf"] = fields
    _write(out / "run.yaml", run_yaml(out.name, wid, models, concs, repeats, requests,
                                      input_tokens, output_tokens, model, gpus=gpus,
                                      slo=slo, cost=cost), written)
    return CampaignTruth(out=out, workload=wid, engines=models,
                         loads=tuple(f"c{c}" for c in concs), repeats=repeats,
                         clients=tuple(clients), points=points,
                         files=sorted(written), gpus=gpus, slo=copy.deepcopy(slo),
                         cost=copy.deepcopy(cost), drive_limit=drives)
