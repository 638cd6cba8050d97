"""Write a simulated run as the benchmark clients do: vLLM `bench serve` JSON, SGLang JSONL."""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass

import numpy as np

from .model import Timeline


@dataclass(frozen=True)
class ClientView:
    """What the client measured: per-request times in seconds from the benchmark start."""

    duration: float
    input_lens: list[int]
    output_lens: list[int]
    ttfts: list[float]
    itls: list[list[float]]          # gaps between streamed chunks (vLLM's `itls`)
    # vLLM: from the send to the last streamed chunk (`most_recent_timestamp - st`), so
    # latency == ttft + sum(itls) up to rounding
    latencies: list[float]
    # each chunk's gap split evenly over the tokens it carries, one entry per token:
    # what sglang.bench_serving's native backend records as `itls`
    token_itls: list[list[float]]
    # SGLang: to the stream's end (`latency` is taken at every chunk, [DONE] included): the
    # last chunk plus ``tail``
    stream_latencies: list[float]


def _us(x: float) -> float:
    return round(x, 6)


def client_view(tl: Timeline, duration: float) -> ClientView:
    """Times from each request's send. vLLM's latency ends at the last streamed chunk;
    SGLang's at the stream's end, ``tail`` later (the run's duration minus the simulated
    span: the client's own overhead, kept for the calibrated duration)."""
    tail = duration - (tl.end - tl.start)
    ttfts, itls, lat, stream, per_token = [], [], [], [], []
    for r in tl.requests:
        ct = [c - r.sent for c in r.chunk_times]
        ttfts.append(_us(ct[0]))
        itls.append([_us(b - a) for a, b in zip(ct, ct[1:], strict=False)])
        per_token.append([_us((b - a) / k) for a, b, k in
                          zip(ct, ct[1:], r.chunk_tokens[1:], strict=False) for _ in range(k)])
        lat.append(_us(ct[-1]))
        stream.append(_us(r.finish - r.sent + tail))
    return ClientView(duration=_us(duration), input_lens=[r.input_len for r in tl.requests],
                      output_lens=[r.generated for r in tl.requests], ttfts=ttfts, itls=itls,
                      latencies=lat, token_itls=per_token, stream_latencies=stream)


def _stats(values_s: list[float], metric: str, percentiles: tuple[float, ...],
           std: bool = True) -> dict[str, float]:
    arr = np.asarray(values_s, dtype=float) * 1000.0
    out = {f"mean_{metric}_ms": float(np.mean(arr)) if arr.size else 0.0,
           f"median_{metric}_ms": float(np.median(arr)) if arr.size else 0.0}
    if std:
        out[f"std_{metric}_ms"] = float(np.std(arr)) if arr.size else 0.0
    for p in percentiles:
        name = f"p{int(p)}" if float(p).is_integer() else f"p{p}"
        out[f"{name}_{metric}_ms"] = float(np.percentile(arr, p)) if arr.size else 0.0
    return out


def _tpots(v: ClientView, latencies: list[float]) -> list[float]:
    return [(lat - ttft) / (n - 1) for lat, ttft, n in
            zip(latencies, v.ttfts, v.output_lens, strict=True) if n > 1]


def _peak_output_rate(tl: Timeline) -> float:
    """Largest number of output tokens in any 1-s bucket since the start (both clients)."""
    buckets: dict[int, int] = {}
    for step in tl.steps:
        b = int(step.end - tl.start)
        buckets[b] = buckets.get(b, 0) + step.emitted + sum(1 for g in step.prefill if g.completes)
    return float(max(buckets.values())) if buckets else 0.0


def vllm_result(tl: Timeline, v: ClientView, *, model_id: str, date: dt.datetime,
                max_concurrency: int, spec: dict | None, percentiles=(90.0, 99.0)) -> str:
    """`vllm bench serve --save-result --save-detailed` (0.33): one object, no trailing newline."""
    n = len(v.latencies)
    total_in, total_out = sum(v.input_lens), sum(v.output_lens)
    result = {
        "date": date.strftime("%Y%m%d-%H%M%S"),
        "endpoint_type": "vllm", "backend": "vllm", "label": None,
        "model_id": model_id, "tokenizer_id": model_id, "num_prompts": n,
        "request_rate": "inf", "burstiness": 1.0, "max_concurrency": max_concurrency,
        "duration": v.duration, "completed": n, "failed": 0,
        "total_input_tokens": total_in, "total_output_tokens": total_out,
        "request_throughput": n / v.duration, "request_goodput": None,
        "output_throughput": total_out / v.duration,
        "total_token_throughput": (total_in + total_out) / v.duration,
        "max_output_tokens_per_s": _peak_output_rate(tl),
        "max_concurrent_requests": min(max_concurrency, n), "rtfx": 0.0,
        "latencies": v.latencies, "queue_times": [0.0] * n,
        "input_lens": v.input_lens, "output_lens": v.output_lens, "ttfts": v.ttfts,
        "itls": v.itls, "generated_texts": [""] * n, "errors": [""] * n,
    }
    if spec:
        result.update(spec)
    pooled = [x for row in v.itls for x in row]
    for metric, values in (("ttft", v.ttfts), ("tpot", _tpots(v, v.latencies)),
                           ("itl", pooled), ("e2el", v.latencies)):
        result.update(_stats(values, metric, percentiles))
    return json.dumps(result)


def sglang_result(tl: Timeline, v: ClientView, *, input_len: int, output_len: int,
                  max_concurrency: int, server_info: dict, accept_length: float | None) -> str:
    """`python -m sglang.bench_serving --output-file F --output-details` (0.5.23): one line."""
    lat = v.stream_latencies
    n = len(lat)
    total_in, total_out = sum(v.input_lens), sum(v.output_lens)
    record = {
        "tag": None, "backend": "sglang", "dataset_name": "random",
        "request_rate": math.inf, "max_concurrency": max_concurrency,
        "sharegpt_output_len": None, "random_input_len": input_len,
        "random_output_len": output_len, "random_range_ratio": 1.0,
        "server_info": server_info, "duration": v.duration, "completed": n,
        "total_input_tokens": total_in, "total_input_text_tokens": total_in,
        "total_input_vision_tokens": 0, "total_output_tokens": total_out,
        "total_output_tokens_retokenized": total_out,
        "request_throughput": n / v.duration, "input_throughput": total_in / v.duration,
        "output_throughput": total_out / v.duration,
        "total_throughput": (total_in + total_out) / v.duration,
    }
    # the native backend splits each chunk's gap over its tokens (`adjust_itl`)
    pooled = [x for row in v.token_itls for x in row]
    for metric, values in (("e2e_latency", lat), ("ttft", v.ttfts),
                           ("tpot", _tpots(v, lat)), ("itl", pooled)):
        record.update(_stats(values, metric, (90.0, 95.0, 99.0)))
    record.update({
        "concurrency": sum(lat) / v.duration, "accept_length": accept_length,
        "max_output_tokens_per_s": _peak_output_rate(tl),
        "max_concurrent_requests": min(max_concurrency, n),
        "input_lens": v.input_lens, "output_lens": v.output_lens, "ttfts": v.ttfts,
        "itls": v.token_itls, "generated_texts": [""] * n, "errors": [""] * n,
    })
    # json.dumps writes math.inf as the bare token Infinity, exactly as SGLang's file has it.
    return json.dumps(record) + "\n"
