"""A small, seeded model of one serving engine running one benchmark workload.

It is not a simulator of vLLM or SGLang internals. It reproduces what their logs and the
benchmark clients record: chunked prefill under a token budget, per-chunk prefill speed that
falls as the cached context grows, decode step time that grows with the KV read per step
(divided across GPUs under decode context parallelism), speculative decoding with a chosen
acceptance, and the scheduler's choice between prefill-first (SGLang) and mixed
prefill+decode steps (vLLM V1). Everything is a pure function of the parameters and the seed.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass, field

# Prefill beyond the last knot extends the last segment, never below the first knot's speed
# over FLOOR_DIVISOR; prefill_decay slows a request in proportion to its cached context over
# DECAY_CONTEXT tokens, never below DECAY_FLOOR of the curve (synth.scenario lists both).
FLOOR_DIVISOR = 3      # the floor: the first knot's speed divided by this
DECAY_CONTEXT = 200_000
DECAY_FLOOR = 0.2


@dataclass(frozen=True)
class PrefillCurve:
    """Prefill throughput (tokens/s) of one chunk as a function of the context already cached."""

    knots: tuple[tuple[int, float], ...]   # (cached tokens, tokens/s), increasing cached

    def tps(self, cached: float) -> float:
        xs = [k[0] for k in self.knots]
        ys = [k[1] for k in self.knots]
        if cached <= xs[0]:
            return ys[0]
        i = bisect.bisect_right(xs, cached) - 1
        if i >= len(xs) - 1:   # extrapolate the last segment, but never below a third of the start
            i = len(xs) - 2
        x0, x1, y0, y1 = xs[i], xs[i + 1], ys[i], ys[i + 1]
        return max(ys[0] / FLOOR_DIVISOR, y0 + (y1 - y0) * (cached - x0) / (x1 - x0))


@dataclass(frozen=True)
class EngineModel:
    """How one engine behaves; the numbers are fitted per scenario."""

    scheduler: str                 # "prefill-first" (SGLang) or "mixed" (vLLM V1)
    chunk_budget: int              # tokens per prefill step
    prefill: PrefillCurve
    step_fixed_s: float            # decode step time independent of context (weights, comm)
    step_per_kv_token_s: float     # decode step time per cached token read (before DCP)
    dcp: int = 1                   # decode context parallel size: KV reads split dcp ways
    spec_tokens: int = 0           # draft tokens per verify step (0: no speculative decoding)

    def decode_step_s(self, contexts: list[int]) -> float:
        return self.step_fixed_s + self.step_per_kv_token_s * sum(contexts) / self.dcp


@dataclass
class Request:
    index: int
    arrival: float
    input_len: int
    output_len: int
    prefilled: int = 0
    generated: int = 0
    first_token: float | None = None
    chunk_times: list[float] = field(default_factory=list)   # each streamed chunk's time
    chunk_tokens: list[int] = field(default_factory=list)    # the tokens each chunk carries
    finish: float | None = None
    sent: float = 0.0          # when the client sent it (arrival may be later: gateway delay)

    @property
    def context(self) -> int:
        return self.prefilled + self.generated


@dataclass(frozen=True)
class PrefillSegment:
    request: int
    tokens: int
    cached: int          # the request's context before this segment
    completes: bool      # this segment finishes the prompt (and samples the first token)


@dataclass(frozen=True)
class Step:
    """One engine forward: a prefill batch, a decode (verify) step, or both (mixed)."""

    start: float
    end: float
    prefill: tuple[PrefillSegment, ...]
    decode_requests: tuple[int, ...]
    emitted: int            # output tokens produced by decode in this step
    accepted: int           # draft tokens accepted
    drafted: int            # draft tokens proposed
    running: int            # requests holding KV after the step (prefilled, unfinished)
    waiting: int            # arrived requests not yet started
    admitted: int = 0       # requests started (prefill begun) and not finished
    extra_s: float = 0.0    # time added by runtime events (JIT, OOM retries) in this step
    accepted_each: tuple[int, ...] = ()   # draft tokens accepted, per decoded request
    kv_tokens: int = 0                    # tokens held in the KV cache after the step
    pending_tokens: int = 0               # prompt tokens still to prefill after the step


@dataclass(frozen=True)
class Timeline:
    requests: tuple[Request, ...]
    steps: tuple[Step, ...]
    start: float
    end: float


def simulate(model: EngineModel, *, n_requests: int, input_len: int, output_len: int,
             arrival_gap_s: float, accept_prob: float, step_factor, seed: int,
             event_delays: dict[int, float] | None = None, start: float = 0.0,
             prefill_decay: float = 0.0, concurrency: int | None = None) -> Timeline:
    """Run the workload; ``step_factor(t, decode_index)`` scales decode step times (noise).

    ``accept_prob`` is the chance that each next draft token is accepted given the previous
    one was, so the mean accepted length is 1 + p + p^2 + ... + p^k. ``event_delays`` maps a
    step index to seconds added to that step (runtime compilation, OOM retries).
    ``prefill_decay`` slows the prefill of every request but the first in proportion to
    its cached context (speed x (1 - decay x cached / 200,000)): a fresh request starts on
    the curve, and the first request stays on it (the published per-chunk sequence is one
    request's). ``concurrency`` caps the requests in flight as the benchmark client does:
    request i + concurrency is sent when request i's stream ends (default: all at once).
    """
    rng = random.Random(seed)
    delays = event_delays or {}
    limit = concurrency or n_requests
    never = float("inf")
    reqs = [Request(i, start + i * arrival_gap_s if i < limit else never, input_len, output_len,
                    sent=start) for i in range(n_requests)]
    sent = min(limit, n_requests)
    steps: list[Step] = []
    t = start
    k = model.spec_tokens
    n_decode = 0

    def draw_accepted(limit: int) -> int:
        n = 0
        while n < min(k, limit) and rng.random() < accept_prob:
            n += 1
        return n

    while any(r.finish is None for r in reqs):
        arrived = [r for r in reqs if r.arrival <= t + 1e-12]
        pending = [r for r in arrived if r.prefilled < r.input_len]
        running = [r for r in arrived if r.prefilled >= r.input_len and r.finish is None]
        if not pending and not running:
            t = min(r.arrival for r in reqs if r.arrival > t)
            continue
        decode = running if (model.scheduler == "mixed" or not pending) else []
        budget = model.chunk_budget - len(decode) * (1 + k)
        segments = []
        prefill_s = 0.0
        for r in pending:
            if budget <= 0:
                break
            take = min(budget, r.input_len - r.prefilled)
            segments.append(PrefillSegment(r.index, take, r.prefilled,
                                            r.prefilled + take >= r.input_len))
            slow = prefill_decay * r.prefilled / DECAY_CONTEXT if r.index else 0.0
            speed = model.prefill.tps(r.prefilled) * max(DECAY_FLOOR, 1.0 - slow)
            prefill_s += take / speed
            budget -= take
        decode_s = 0.0
        if decode:
            decode_s = model.decode_step_s([r.context for r in decode]) * step_factor(t, n_decode)
            n_decode += 1
        extra = delays.get(len(steps), 0.0)
        end = t + prefill_s + decode_s + extra
        emitted = accepted = drafted = 0
        accepted_each = []
        for r in decode:
            extra_tokens = draw_accepted(r.output_len - r.generated - 1)
            accepted_each.append(extra_tokens)
            n = 1 + extra_tokens
            r.generated += n
            r.chunk_times.append(end)
            r.chunk_tokens.append(n)
            emitted += n
            accepted += extra_tokens
            drafted += k
            if r.generated >= r.output_len:
                r.finish = end
                if sent < n_requests:          # the client's freed slot sends the next one
                    reqs[sent].arrival = reqs[sent].sent = end
                    sent += 1
        for seg in segments:
            r = reqs[seg.request]
            r.prefilled += seg.tokens
            if r.prefilled >= r.input_len:      # the last chunk samples the first token
                r.generated = 1
                r.first_token = end
                r.chunk_times.append(end)
                r.chunk_tokens.append(1)
                if r.output_len <= 1:
                    r.finish = end
        n_running = sum(1 for r in reqs if r.prefilled >= r.input_len and r.finish is None)
        n_waiting = sum(1 for r in reqs if r.arrival <= end and r.prefilled == 0
                        and all(s.request != r.index for s in segments))
        kv = sum(r.prefilled + r.generated for r in reqs if r.finish is None)
        pending_tokens = sum(r.input_len - r.prefilled for r in reqs if r.arrival <= end)
        admitted = sum(1 for r in reqs if r.prefilled > 0 and r.finish is None)
        steps.append(Step(start=t, end=end, prefill=tuple(segments),
                          decode_requests=tuple(r.index for r in decode), emitted=emitted,
                          accepted=accepted, drafted=drafted, running=n_running,
                          waiting=n_waiting, extra_s=extra,
                          accepted_each=tuple(accepted_each), kv_tokens=kv,
                          pending_tokens=pending_tokens, admitted=admitted))
        t = end
    return Timeline(requests=tuple(reqs), steps=tuple(steps), start=start,
                    end=max(r.finish for r in reqs))
