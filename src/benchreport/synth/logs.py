"""Server logs of simulated runs, line for line in the shapes vLLM 0.33 and SGLang 0.5.23 print.

Message templates follow ../shared/reference/engine-formats.md. Where a published event has
no documented message (the "soft OOM retry" of the published vLLM run), the line is composed
in the engine's prefix format and says what happened; run.yaml lists it as assumed.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from .model import Timeline
from .windows import Window, decode_log_windows

VLLM_KV_CAPACITY = 3_211_264         # tokens (MLA latent, replicated across TP ranks)
SGLANG_KV_CAPACITY = 25_690_112      # tokens (DCP=8 shards the KV cache 8 ways)
JIT_OPS = ("fused_moe_mxfp4_sm100_tail", "mla_decode_sm100_kv7", "dspark_verify_tree_sm100",
           "allreduce_fusion_fp8_sm100")


@dataclass
class Lines:
    """Log records gathered out of order, written sorted by time (stable for equal times)."""

    entries: list[tuple[dt.datetime, int, str]] = field(default_factory=list)

    def add(self, when: dt.datetime, text: str) -> None:
        self.entries.append((when, len(self.entries), text))

    def text(self) -> str:
        return "".join(t + "\n" for _, _, t in sorted(self.entries))


def _at(base: dt.datetime, seconds: float) -> dt.datetime:
    return base + dt.timedelta(seconds=seconds)


# --- vLLM ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class VllmProcs:
    api: int
    core: int
    workers: tuple[int, ...]


def _v(lines: Lines, when: dt.datetime, proc: str, pid: int, level: str, where: str,
       msg: str) -> None:
    lines.add(when, f"({proc} pid={pid}) {level} {when:%m-%d %H:%M:%S} [{where}] {msg}")


def _pct(x: float) -> str:
    return f"{x:.1f}%"


def vllm_startup(lines: Lines, start: dt.datetime, ready_after: float, procs: VllmProcs,
                 version: str, model_id: str, args: dict, rng: random.Random) -> None:
    t = 0.0

    def at(dt_s: float) -> dt.datetime:
        return _at(start, dt_s)

    _v(lines, at(t), "APIServer", procs.api, "INFO", "api_server.py:1912",
       f"vLLM server version {version}, serving model {model_id}")
    _v(lines, at(t), "APIServer", procs.api, "INFO", "utils.py:301",
       f"non-default args: {args!r}")
    spec = args.get("speculative_config", {})
    _v(lines, at(t + 6.2), "EngineCore", procs.core, "INFO", "core.py:93",
       f"Initializing a V1 LLM engine (v{version}) with config: model='{args['model']}', "
       f"speculative_config=SpeculativeConfig(method='{spec.get('method')}', "
       f"model='{spec.get('model')}', num_spec_tokens={spec.get('num_speculative_tokens')}), "
       f"tensor_parallel_size={args.get('tensor_parallel_size')}, "
       f"decode_context_parallel_size={args.get('decode_context_parallel_size', 1)}, "
       f"load_format={args.get('load_format')}, max_num_batched_tokens="
       f"{args.get('max_num_batched_tokens')}")
    for rank, pid in enumerate(procs.workers):
        _v(lines, at(t + 18.0 + rank * 0.01), f"Worker_TP{rank}", pid, "INFO",
           "cuda.py:412", "Using AttentionBackendEnum.FLASHINFER_MLA backend.")
    _v(lines, at(t + 19.1), "Worker_TP0", procs.workers[0], "INFO", "layer.py:431",
       "MoE backend: FLASHINFER_CUTLASS (mxfp4, latent tail fusion enabled)")
    load = 301.4 + rng.random() * 20
    _v(lines, at(t + 20 + load), "Worker_TP0", procs.workers[0], "INFO",
       "default_loader.py:291", f"Loading weights took {load:.2f} seconds")
    _v(lines, at(t + 21 + load), "Worker_TP0", procs.workers[0], "INFO",
       "gpu_model_runner.py:3118", f"Model loading took 74.6 GiB memory and {load + 1.3:.6f} seconds")
    c0 = t + 25 + load
    _v(lines, at(c0), "Worker_TP0", procs.workers[0], "INFO", "backends.py:642",
       "Using cache directory: /root/.cache/vllm/torch_compile_cache/3f1c2a9e0d/rank_0_0/backbone "
       "for vLLM's torch.compile")
    _v(lines, at(c0 + 17.9), "Worker_TP0", procs.workers[0], "INFO", "monitor.py:34",
       "Dynamo bytecode transform time: 17.88 s")
    _v(lines, at(c0 + 58.2), "Worker_TP0", procs.workers[0], "INFO", "backends.py:256",
       "Compiling a graph for compile range (1, 32768) takes 40.31 s")
    _v(lines, at(c0 + 60.0), "Worker_TP0", procs.workers[0], "INFO", "monitor.py:48",
       "torch.compile took 60.04 s in total")
    _v(lines, at(c0 + 71.5), "Worker_TP0", procs.workers[0], "INFO", "gpu_worker.py:311",
       "Available KV cache memory: 110.3 GiB")
    max_len = int(args.get("max_model_len", 262144))
    _v(lines, at(c0 + 72.0), "EngineCore", procs.core, "INFO", "kv_cache_utils.py:1207",
       f"GPU KV cache size: {VLLM_KV_CAPACITY:,} tokens, Maximum concurrency for "
       f"{max_len:,} tokens per request: {VLLM_KV_CAPACITY / max_len:.2f}x")
    _v(lines, at(c0 + 98.0), "Worker_TP0", procs.workers[0], "INFO", "gpu_model_runner.py:3935",
       "Graph capturing finished in 26 secs, took 3.41 GiB")
    _v(lines, at(ready_after - 1.0), "EngineCore", procs.core, "INFO", "core.py:215",
       f"init engine (profile, create kv cache, warmup model) took {ready_after - 27 - load:.2f} s "
       "(compilation: 60.04 s)")
    _v(lines, at(ready_after), "APIServer", procs.api, "INFO", "api_server.py:1988",
       "Starting vLLM API server 0 on http://0.0.0.0:8000")
    lines.add(at(ready_after + 0.2), "INFO:     Application startup complete.")


def vllm_run(lines: Lines, base: dt.datetime, tl: Timeline, windows: list[Window],
             procs: VllmProcs, k: int, events, rng: random.Random) -> None:
    """Stats and spec-decoding lines per timer window, access lines, and runtime events."""
    printed_idle = False
    for w in windows:
        idle = w.prompt_tokens == 0 and w.gen_tokens == 0
        if idle and printed_idle:
            continue
        printed_idle = idle
        when = _at(base, w.end - tl.start)
        kv = w.steps[-1].kv_tokens if w.steps else 0
        _v(lines, when, "APIServer", procs.api, "INFO", "loggers.py:271",
           f"Engine 000: Avg prompt throughput: {w.prompt_tps:.1f} tokens/s, "
           f"Avg generation throughput: {w.gen_tps:.1f} tokens/s, Running: {w.admitted} reqs, "
           f"Waiting: {w.waiting} reqs, GPU KV cache usage: {_pct(100 * kv / VLLM_KV_CAPACITY)}, "
           f"Prefix cache hit rate: 0.0%")
        rounds = [a for s in w.steps for a in s.accepted_each]
        if rounds and k:
            accepted, drafted = sum(rounds), len(rounds) * k
            per_pos = ", ".join(f"{sum(1 for a in rounds if a >= p) / len(rounds):.3f}"
                                for p in range(1, k + 1))
            _v(lines, when, "APIServer", procs.api, "INFO", "metrics.py:164",
               f"SpecDecoding metrics: Mean acceptance length: {1 + accepted / len(rounds):.2f}, "
               f"Accepted throughput: {accepted / w.seconds:.2f} tokens/s, "
               f"Drafted throughput: {drafted / w.seconds:.2f} tokens/s, "
               f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
               f"Per-position acceptance rate: {per_pos}, "
               f"Avg Draft acceptance rate: {100 * accepted / drafted:.1f}%")
    for r in tl.requests:
        port = 40000 + rng.randrange(20000)
        lines.add(_at(base, r.finish - tl.start),
                  f'INFO:     172.18.0.1:{port} - "POST /v1/completions HTTP/1.1" 200 OK')
    _runtime_events(lines, base, tl, procs, events, rng)


def _runtime_events(lines: Lines, base: dt.datetime, tl: Timeline, procs: VllmProcs, events,
                    rng: random.Random) -> None:
    steps = tl.steps
    for i in range(events.jit_compiles):
        step = steps[i]
        op = JIT_OPS[i % len(JIT_OPS)]
        t0 = _at(base, step.start - tl.start + 0.05)
        t1 = _at(base, step.start - tl.start + 0.05 + events.jit_s * (0.9 + 0.1 * rng.random()))
        lines.add(t0, f"{t0:%Y-%m-%d %H:%M:%S},{t0.microsecond // 1000:03d} - INFO - "
                      f"flashinfer.jit: Loading JIT ops: {op}")
        lines.add(t1, f"{t1:%Y-%m-%d %H:%M:%S},{t1.microsecond // 1000:03d} - INFO - "
                      f"flashinfer.jit: Finished loading JIT ops: {op}")
    if events.oom_retries:
        per_worker = events.oom_retries // len(procs.workers)
        for rank, pid in enumerate(procs.workers):
            for attempt in range(1, per_worker + 1):
                step = steps[(attempt - 1) * 2 + rank % 2]
                when = _at(base, step.start - tl.start + rng.random() * (step.end - step.start))
                need = 2.6 + rng.random() * 1.2
                _v(lines, when, f"Worker_TP{rank}", pid, "WARNING", "fused_moe.py:1874",
                   f"CUDA out of memory while allocating the MoE workspace ({need:.2f} GiB "
                   f"requested, {need - 0.4 - rng.random():.2f} GiB free); freeing cached "
                   f"blocks and retrying (soft OOM retry {attempt}/{per_worker})")


# --- SGLang --------------------------------------------------------------------------------
def _s(lines: Lines, when: dt.datetime, msg: str, rank: bool = True) -> None:
    lines.add(when, f"[{when:%Y-%m-%d %H:%M:%S}{' TP0' if rank else ''}] {msg}")


def sglang_startup(lines: Lines, start: dt.datetime, ready_after: float, version: str,
                   server_args: dict, rng: random.Random) -> None:
    def at(s: float) -> dt.datetime:
        return _at(start, s)

    _s(lines, at(0.0), f"server_args={server_args!r}", rank=False)
    _s(lines, at(9.4), "DCP is enabled (dcp_size=8): speculative decoding DSPARK runs with "
                       "non-adaptive verification (adaptive draft length is not supported "
                       "under DCP)")
    _s(lines, at(12.0), "Load weight begin. avail mem=270.61 GB")
    load = 296.0 + rng.random() * 20
    _s(lines, at(12.0 + load), f"Load weight end. elapsed={load:.2f} s, type=KimiK3ForCausalLM, "
                               "quant=mxfp4, avail mem=196.02 GB, mem usage=74.59 GB.")
    _s(lines, at(14.0 + load), f"KV Cache is allocated. dtype: fp8_e4m3, #tokens: "
                               f"{SGLANG_KV_CAPACITY}, KV size: 114.02 GB")
    _s(lines, at(14.5 + load), "Memory pool end. avail mem=79.81 GB")
    _s(lines, at(15.0 + load), "Capture target decode cuda graph begin. backend=full, "
                               "num_tokens_per_req=8, avail mem=79.55 GB")
    _s(lines, at(58.3 + load), "Capture target decode cuda graph end. bs=[1, 2, 4, 8, 12, 16, 24, "
                               "32], elapsed=43.27 s, mem usage=2.38 GB, avail mem=77.17 GB.")
    _s(lines, at(60.0 + load), f"max_total_num_tokens={SGLANG_KV_CAPACITY}, chunked_prefill_size="
                               f"{server_args.get('chunked_prefill_size')}, max_prefill_tokens="
                               f"{server_args.get('max_prefill_tokens', 16384)}, "
                               "max_running_requests=48, context_len=262144, "
                               "available_gpu_mem=77.17 GB")
    _s(lines, at(ready_after), "The server is fired up and ready to roll!", rank=False)


def sglang_run(lines: Lines, base: dt.datetime, tl: Timeline, every: int, n: int, k: int,
               rng: random.Random) -> None:
    prev_prefill_end = None
    for step in tl.steps:
        if not step.prefill:
            continue
        tokens = sum(g.tokens for g in step.prefill)
        # Throughput since the previous prefill line of this run (the first: its own batch).
        since = step.end - (prev_prefill_end if prev_prefill_end is not None else step.start)
        prev_prefill_end = step.end
        # SGLang logs len(can_run_list): the chunked request being continued counts too;
        # #cached-token is prefix-cache hits of the admitted requests only (none here)
        new_seq = len(step.prefill)
        running = step.running - sum(1 for g in step.prefill if g.completes)
        _s(lines, _at(base, step.end - tl.start),
           f"Prefill batch, #new-seq: {new_seq}, #new-token: {tokens}, #cached-token: 0, "
           f"token usage: {step.kv_tokens / SGLANG_KV_CAPACITY:.2f}, #running-req: {running}, "
           f"#queue-req: {step.waiting}, #pending-token: {step.pending_tokens}, "
           f"cuda graph: False, input throughput (token/s): {tokens / since:.2f}")
    for w in decode_log_windows(tl, every, n):
        last = w.steps[-1]
        spec = ""
        if k:       # the spec block is printed only when an algorithm is configured
            rounds = [a for s in w.steps for a in s.accepted_each]
            spec = (f"accept len: {1 + sum(rounds) / len(rounds):.2f}, "
                    f"accept rate: {sum(rounds) / (len(rounds) * k):.2f}, ")
        _s(lines, _at(base, w.end - tl.start),
           f"Decode batch, #running-req: {w.running}, #token: {last.kv_tokens}, "
           f"token usage: {last.kv_tokens / SGLANG_KV_CAPACITY:.2f}, {spec}cuda graph: True, "
           f"gen throughput (token/s): {w.gen_tps:.2f}, #queue-req: {last.waiting}")
    for r in tl.requests:
        port = 40000 + rng.randrange(20000)
        _s(lines, _at(base, r.finish - tl.start),
           f'INFO:     172.18.0.1:{port} - "POST /generate HTTP/1.1" 200 OK', rank=False)
