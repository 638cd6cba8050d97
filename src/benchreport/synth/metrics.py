"""Prometheus ``/metrics`` scrapes of a simulated engine, and the truth they encode.

An engine whose scenario entry has ``metrics: {interval_s: S}`` gets one file,
``raw/<engine>/metrics.prom``: concatenated scrapes, each preceded by ``# scrape <time>``
(the engine's local clock, ISO 8601, milliseconds only when not whole seconds), in the text
exposition format and with the names of the engine's own ``/metrics`` (vLLM V1 for a
``vllm-bench-serve`` engine, SGLang 2025 on for ``sglang-bench-serving``).

When: the scraper runs on a grid of ``S`` seconds anchored at the moment the server is
ready (rounded up to a whole second). The file keeps the grid points from the last one
strictly before the engine's first benchmark starts to the first one strictly after its last
benchmark ends (a benchmark lasts from its ``start`` for the client's ``duration``). Every
benchmark must have a scrape strictly between it and its neighbours; otherwise the scenario
is refused (`ConfigError`), since no two scrapes would bracket it alone.

What: the truth of the simulated timelines at the scrape time, summed over the engine's
runs. Counters are cumulative since the server started:

* prompt tokens: prompt tokens prefilled so far, chunk by chunk as each prefill step ends;
* generation tokens: output tokens produced so far, as the timeline and the client count
  them (one when a prompt's last chunk samples the first token, then each decode step's
  tokens, accepted draft tokens included), so the growth across a benchmark equals the sum
  of its ``output_lens`` exactly;
* finished requests (vLLM ``request_success_total{finished_reason="length"}``: the clients
  ask for a fixed number of output tokens and ignore EOS; the other reasons stay 0);
* preemptions: always 0 (the model never preempts);
* vLLM speculative decoding: drafts (one per decoded request and verify step), draft tokens
  (drafts x k), accepted tokens, and accepted tokens per draft position (``position`` 0 is
  the first draft token), as vLLM's ``bench serve`` differences them into its result;
* histograms of the server-side time to first token and end-to-end latency (from the
  request reaching the engine), observed when the first token and the last are produced.

Gauges are the engine's state after its last step that ended at or before the scrape (zero
before a run's first step ends and after its last): running requests (vLLM: admitted, i.e.
prefill begun and unfinished, as its log's "Running"; SGLang: prefilled and unfinished, as
its decode log's "#running-req"), waiting requests (arrived, not started), and KV-cache
usage as the tokens held over the KV capacity the engine's log states at start-up
(``logs.VLLM_KV_CAPACITY`` / ``logs.SGLANG_KV_CAPACITY``). Real SGLang refreshes its gauges
only when it prints a log line; here they are instantaneous. Not written: ``_created``
samples, prefix-cache counters (the workload has no shared prefixes), SGLang's
``gen_throughput`` and acceptance gauges.

``benchmark_truth`` gives, per benchmark, the bracketing scrape times and the expected
counter growth between them, computed from the requests (not from the counters).
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client.utils import floatToGoString

from ..core.errors import ConfigError
from .logs import SGLANG_KV_CAPACITY, VLLM_KV_CAPACITY
from .scenario import EngineSpec

if TYPE_CHECKING:
    from . import SimulatedRun

# Bucket bounds as the engines declare them (vLLM V1; SGLang 2025, from its docs' dump).
VLLM_TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
                     2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_E2E_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
                    50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
SGLANG_TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
                       2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 25.0, 30.0)
SGLANG_E2E_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
                      50.0, 60.0)
VLLM_FINISHED_REASONS = ("stop", "length", "abort", "error", "repetition")


def engine_kind(engine: EngineSpec) -> str:
    """'vllm' or 'sglang': whose ``/metrics`` names the engine exposes (from its client)."""
    if engine.client == "vllm-bench-serve":
        return "vllm"
    if engine.client == "sglang-bench-serving":
        return "sglang"
    raise ValueError(f"unknown client {engine.client!r}")


def kv_capacity(engine: EngineSpec) -> int:
    """KV-cache capacity in tokens, as the engine's start-up log states it."""
    return VLLM_KV_CAPACITY if engine_kind(engine) == "vllm" else SGLANG_KV_CAPACITY


def served_model_name(model_id: str, engine: EngineSpec) -> str:
    """The ``model_name`` label: ``--served-model-name``, else the model path, else the id."""
    from ..ingest.parsers.launch import flags_from_args  # the launch file as ingest reads it

    flags = flags_from_args(list(engine.launch.get("args", [])))
    name = flags.get("served_model_name")
    if isinstance(name, str):
        return name
    positional = [p for p in flags.get("_positional", []) if p != "serve"]
    path = flags.get("model") or flags.get("model_path") or (positional[0] if positional
                                                             else None)
    return path if isinstance(path, str) else model_id


# ---------------------------------------------------------------------------------------
# The state of the server at an instant


@dataclass(frozen=True)
class ServerState:
    """What ``/metrics`` reports at one instant: counters since the server started (and
    the histogram observations so far), gauges as of the last finished step."""

    prompt_tokens: int = 0
    generation_tokens: int = 0
    requests_finished: int = 0
    preemptions: int = 0
    spec_drafts: int = 0
    spec_draft_tokens: int = 0
    spec_accepted_tokens: int = 0
    spec_accepted_per_pos: tuple[int, ...] = ()
    running: int = 0
    waiting: int = 0
    kv_tokens: int = 0
    kv_usage: float = 0.0
    ttft_s: tuple[float, ...] = ()      # server side: reaching the engine -> first token
    e2e_s: tuple[float, ...] = ()       # server side: reaching the engine -> last token


class _RunIndex:
    """One run's timeline as cumulative sums over its steps, for lookups by time."""

    def __init__(self, sim: SimulatedRun, kind: str, k: int) -> None:
        tl = sim.timeline
        self.base = sim.spec.start
        self.offset = tl.start
        self.kind = kind
        self.ends = [s.end for s in tl.steps]
        self.steps = tl.steps
        self.prompt = list(itertools.accumulate(
            (sum(g.tokens for g in s.prefill) for s in tl.steps), initial=0))
        self.gen = list(itertools.accumulate(
            (s.emitted + sum(1 for g in s.prefill if g.completes) for s in tl.steps),
            initial=0))
        self.drafts = list(itertools.accumulate((len(s.accepted_each) for s in tl.steps),
                                                initial=0))
        self.accepted = list(itertools.accumulate((sum(s.accepted_each) for s in tl.steps),
                                                  initial=0))
        self.per_pos = [list(itertools.accumulate(
            (sum(1 for a in s.accepted_each if a > pos) for s in tl.steps), initial=0))
            for pos in range(k)] if k else []
        self.k = k
        firsts = sorted((r.first_token, r.first_token - r.arrival) for r in tl.requests
                        if r.first_token is not None)
        finishes = sorted((r.finish, r.finish - r.arrival) for r in tl.requests
                          if r.finish is not None)
        self.first_at = [t for t, _ in firsts]
        self.ttft = [v for _, v in firsts]
        self.finish_at = [t for t, _ in finishes]
        self.e2e = [v for _, v in finishes]

    def at(self, when: dt.datetime) -> ServerState:
        rel = (when - self.base) / dt.timedelta(seconds=1) + self.offset
        n = bisect.bisect_right(self.ends, rel)            # steps ended by then
        n_first = bisect.bisect_right(self.first_at, rel)
        n_done = bisect.bisect_right(self.finish_at, rel)
        running = waiting = kv = 0
        if n:
            last = self.steps[n - 1]
            running = last.admitted if self.kind == "vllm" else last.running
            waiting, kv = last.waiting, last.kv_tokens
        return ServerState(
            prompt_tokens=self.prompt[n], generation_tokens=self.gen[n],
            requests_finished=n_done, spec_drafts=self.drafts[n],
            spec_draft_tokens=self.drafts[n] * self.k, spec_accepted_tokens=self.accepted[n],
            spec_accepted_per_pos=tuple(p[n] for p in self.per_pos), running=running,
            waiting=waiting, kv_tokens=kv, ttft_s=tuple(self.ttft[:n_first]),
            e2e_s=tuple(self.e2e[:n_done]))


def _add(a: ServerState, b: ServerState) -> ServerState:
    per_pos = tuple(x + y for x, y in itertools.zip_longest(
        a.spec_accepted_per_pos, b.spec_accepted_per_pos, fillvalue=0))
    return ServerState(
        prompt_tokens=a.prompt_tokens + b.prompt_tokens,
        generation_tokens=a.generation_tokens + b.generation_tokens,
        requests_finished=a.requests_finished + b.requests_finished,
        preemptions=a.preemptions + b.preemptions, spec_drafts=a.spec_drafts + b.spec_drafts,
        spec_draft_tokens=a.spec_draft_tokens + b.spec_draft_tokens,
        spec_accepted_tokens=a.spec_accepted_tokens + b.spec_accepted_tokens,
        spec_accepted_per_pos=per_pos, running=a.running + b.running,
        waiting=a.waiting + b.waiting, kv_tokens=a.kv_tokens + b.kv_tokens,
        ttft_s=a.ttft_s + b.ttft_s, e2e_s=a.e2e_s + b.e2e_s)


class ServerModel:
    """One engine's server across all its simulated runs: ``state(when)`` at any instant."""

    def __init__(self, engine: EngineSpec, sims: Sequence[SimulatedRun]) -> None:
        self.engine = engine
        self.kind = engine_kind(engine)
        self.capacity = kv_capacity(engine)
        mine = sorted((s for s in sims if s.engine.id == engine.id), key=lambda s: s.spec.start)
        self.sims = mine
        self._runs = [_RunIndex(s, self.kind, engine.model.spec_tokens) for s in mine]

    def state(self, when: dt.datetime) -> ServerState:
        total = ServerState(spec_accepted_per_pos=(0,) * self.engine.model.spec_tokens)
        for run in self._runs:
            total = _add(total, run.at(when))
        return dataclasses.replace(total, kv_usage=total.kv_tokens / self.capacity)


# ---------------------------------------------------------------------------------------
# When the scrapes are taken, and what each benchmark should show between two of them


def benchmark_window(sim: SimulatedRun) -> tuple[dt.datetime, dt.datetime]:
    """The client's benchmark window: from the run's start for the client's duration."""
    return sim.spec.start, sim.spec.start + dt.timedelta(seconds=sim.fitted.duration)


def _anchor(engine: EngineSpec) -> dt.datetime:
    ready = engine.server_start + dt.timedelta(seconds=engine.ready_after_s)
    whole = ready.replace(microsecond=0)
    return whole if whole == ready else whole + dt.timedelta(seconds=1)


def _interval_us(engine: EngineSpec) -> int:
    if engine.metrics is None:
        raise ValueError(f"engine {engine.id!r} has no metrics: in the scenario")
    return round(engine.metrics.interval_s * 1000) * 1000       # whole milliseconds


def _us(delta: dt.timedelta) -> int:
    return delta // dt.timedelta(microseconds=1)


LEAD_S = 5


def scrape_times(engine: EngineSpec, sims: Sequence[SimulatedRun]) -> list[dt.datetime]:
    """The scrape times of the engine's ``metrics.prom``: every ``interval_s`` on the grid
    anchored at the server's ready time, from the last point strictly before ``LEAD_S``
    ahead of the first benchmark to the first point strictly after ``LEAD_S`` beyond the
    last one."""
    step = _interval_us(engine)
    anchor = _anchor(engine)
    windows = [benchmark_window(s) for s in sims if s.engine.id == engine.id]
    if not windows:
        return []
    # LEAD_S beyond the first and the last benchmark, as a scraper started before the
    # benchmark and stopped after it would: the clients' times are to the second
    first = _us(min(w[0] for w in windows) - anchor) - LEAD_S * 1_000_000
    last = _us(max(w[1] for w in windows) - anchor) + LEAD_S * 1_000_000
    k0 = (first - 1) // step          # largest k with k * step < first
    k1 = last // step + 1             # smallest k with k * step > last
    return [anchor + dt.timedelta(microseconds=k * step) for k in range(k0, k1 + 1)]


@dataclass(frozen=True)
class BenchmarkTruth:
    """One benchmark as ``/metrics`` should show it: its window, the scrapes just before
    and just after it, and how much the counters grow between those two scrapes."""

    engine: str
    workload: str
    start: dt.datetime
    end: dt.datetime
    before: dt.datetime               # the last scrape strictly before ``start``
    after: dt.datetime                # the first scrape strictly after ``end``
    prompt_tokens: int                # sum of the requests' input lengths
    generation_tokens: int            # sum of the requests' output tokens (the client's)
    requests: int                     # requests finished
    spec_drafts: int = 0
    spec_draft_tokens: int = 0
    spec_accepted_tokens: int = 0


def benchmark_truth(engine: EngineSpec, sims: Sequence[SimulatedRun]) -> list[BenchmarkTruth]:
    """Per benchmark of the engine (in time order), the bracketing scrapes and the expected
    counter growth, from the simulated requests. Raises ConfigError when no scrape falls
    between two neighbouring benchmarks (or they overlap)."""
    times = scrape_times(engine, sims)
    mine = sorted((s for s in sims if s.engine.id == engine.id), key=lambda s: s.spec.start)
    out = []
    k = engine.model.spec_tokens
    for sim in mine:
        start, end = benchmark_window(sim)
        before = times[bisect.bisect_left(times, start) - 1]
        after = times[bisect.bisect_right(times, end)]
        for other in mine:
            if other is sim:
                continue
            o_start, o_end = benchmark_window(other)
            if not (o_end <= before or o_start >= after):
                raise ConfigError(
                    f"engine {engine.id}: metrics every {engine.metrics.interval_s:g} s leave "
                    f"no scrape between benchmark {sim.spec.workload} ({start:%H:%M:%S}-"
                    f"{end:%H:%M:%S}) and {other.spec.workload} ({o_start:%H:%M:%S}-"
                    f"{o_end:%H:%M:%S})", hint="use a shorter interval_s or space the runs")
        reqs = sim.timeline.requests
        rounds = [a for s in sim.timeline.steps for a in s.accepted_each] if k else []
        out.append(BenchmarkTruth(
            engine=engine.id, workload=sim.spec.workload, start=start, end=end, before=before,
            after=after, prompt_tokens=sum(r.input_len for r in reqs),
            generation_tokens=sum(r.generated for r in reqs),
            requests=sum(1 for r in reqs if r.finish is not None), spec_drafts=len(rounds),
            spec_draft_tokens=len(rounds) * k, spec_accepted_tokens=sum(rounds)))
    return out


# ---------------------------------------------------------------------------------------
# The text exposition


def _labels(labels: dict[str, str]) -> str:
    def esc(v: str) -> str:
        return v.replace("\\", r"\\").replace('"', r"\"").replace("\n", r"\n")

    return "{" + ",".join(f'{k}="{esc(v)}"' for k, v in sorted(labels.items())) + "}"


def _num(x: float) -> str:
    return floatToGoString(float(x))


class _Text:
    def __init__(self, labels: dict[str, str]) -> None:
        self.base = labels
        self.parts: list[str] = []

    def family(self, name: str, kind: str, help_text: str) -> None:
        self.parts.append(f"# HELP {name} {help_text}\n# TYPE {name} {kind}\n")

    def sample(self, name: str, value: float, **extra: str) -> None:
        self.parts.append(f"{name}{_labels({**self.base, **extra})} {_num(value)}\n")

    def metric(self, name: str, kind: str, help_text: str, value: float) -> None:
        self.family(name, kind, help_text)
        self.sample(name, value)

    def histogram(self, name: str, help_text: str, bounds: Sequence[float],
                  observed: Sequence[float]) -> None:
        self.family(name, "histogram", help_text)
        values = sorted(observed)
        for le in bounds:
            self.sample(f"{name}_bucket", bisect.bisect_right(values, le), le=_num(le))
        self.sample(f"{name}_bucket", len(values), le="+Inf")
        self.sample(f"{name}_count", len(values))
        self.sample(f"{name}_sum", math.fsum(values))


def scrape_text(kind: str, model_name: str, state: ServerState, spec_tokens: int = 0) -> str:
    """One scrape of a ``kind`` ('vllm' or 'sglang') server in that state, as exposed."""
    if kind == "vllm":
        t = _Text({"engine": "0", "model_name": model_name})
        t.metric("vllm:num_requests_running", "gauge",
                 "Number of requests in model execution batches.", state.running)
        t.metric("vllm:num_requests_waiting", "gauge",
                 "Number of requests waiting to be processed.", state.waiting)
        t.metric("vllm:kv_cache_usage_perc", "gauge",
                 "KV-cache usage. 1 means 100 percent usage.", state.kv_usage)
        t.metric("vllm:num_preemptions_total", "counter",
                 "Cumulative number of preemption from the engine.", state.preemptions)
        t.metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
                 state.prompt_tokens)
        t.metric("vllm:generation_tokens_total", "counter",
                 "Number of generation tokens processed.", state.generation_tokens)
        t.family("vllm:request_success_total", "counter",
                 "Count of successfully processed requests.")
        for reason in VLLM_FINISHED_REASONS:
            t.sample("vllm:request_success_total",
                     state.requests_finished if reason == "length" else 0,
                     finished_reason=reason)
        if spec_tokens:
            t.metric("vllm:spec_decode_num_drafts_total", "counter",
                     "Number of spec decoding drafts.", state.spec_drafts)
            t.metric("vllm:spec_decode_num_draft_tokens_total", "counter",
                     "Number of draft tokens.", state.spec_draft_tokens)
            t.metric("vllm:spec_decode_num_accepted_tokens_total", "counter",
                     "Number of accepted tokens.", state.spec_accepted_tokens)
            t.family("vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter",
                     "Accepted tokens per draft position.")
            for pos, n in enumerate(state.spec_accepted_per_pos):
                t.sample("vllm:spec_decode_num_accepted_tokens_per_pos_total", n,
                         position=str(pos))
        t.histogram("vllm:time_to_first_token_seconds",
                    "Histogram of time to first token in seconds.", VLLM_TTFT_BUCKETS,
                    state.ttft_s)
        t.histogram("vllm:e2e_request_latency_seconds",
                    "Histogram of e2e request latency in seconds.", VLLM_E2E_BUCKETS,
                    state.e2e_s)
    elif kind == "sglang":
        t = _Text({"model_name": model_name})
        t.metric("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
                 state.prompt_tokens)
        t.metric("sglang:generation_tokens_total", "counter",
                 "Number of generation tokens processed.", state.generation_tokens)
        t.metric("sglang:token_usage", "gauge", "The token usage", state.kv_usage)
        t.histogram("sglang:time_to_first_token_seconds",
                    "Histogram of time to first token in seconds.", SGLANG_TTFT_BUCKETS,
                    state.ttft_s)
        t.histogram("sglang:e2e_request_latency_seconds",
                    "Histogram of End-to-end request latency in seconds", SGLANG_E2E_BUCKETS,
                    state.e2e_s)
        t.metric("sglang:num_running_reqs", "gauge", "The number of running requests",
                 state.running)
        t.metric("sglang:num_used_tokens", "gauge", "The number of used tokens",
                 state.kv_tokens)
        t.metric("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue",
                 state.waiting)
    else:
        raise ValueError(f"unknown engine kind {kind!r}")
    return "".join(t.parts)


def scrape_time_text(when: dt.datetime) -> str:
    """A scrape's time as its separator line writes it (milliseconds only when needed)."""
    return when.isoformat(timespec="seconds" if not when.microsecond else "milliseconds")


def scrapes(engine: EngineSpec, sims: Sequence[SimulatedRun],
            model_name: str) -> list[tuple[dt.datetime, ServerState, str]]:
    """Every scrape of the engine: its time, the true state and the exposition text."""
    server = ServerModel(engine, sims)
    k = engine.model.spec_tokens
    out = []
    for when in scrape_times(engine, sims):
        state = server.state(when)
        out.append((when, state, scrape_text(server.kind, model_name, state, k)))
    return out


def metrics_text(engine: EngineSpec, sims: Sequence[SimulatedRun], model_name: str) -> str:
    """The whole ``metrics.prom``: each scrape after its ``# scrape <time>`` line."""
    benchmark_truth(engine, sims)            # refuses scrapes that bracket no benchmark alone
    return "".join(f"# scrape {scrape_time_text(when)}\n{text}"
                   for when, _, text in scrapes(engine, sims, model_name))
