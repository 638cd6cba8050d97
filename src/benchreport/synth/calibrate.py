"""Fit the free parameters of a simulated run so its logs and results hit given figures.

Free parameters: the spacing with which requests reach the engine (for the end-to-end
duration) and a step-time factor per logging window (for the spread of decode throughput
in the steady phase: its minimum, maximum and mean). Everything else comes from the model.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from .model import EngineModel, Timeline, simulate
from .windows import Window, decode_log_windows, exact_print_times, timer_windows

PRINT_DELAY = 0.25   # the stats print may come this share of an interval after its tick

# From the engine's last token to the client stopping its watch (stream close, final
# detokenization): (aimed at, lowest allowed, highest allowed), seconds.
CLIENT_TAIL_S = (0.3, 0.02, 0.8)


@dataclass(frozen=True)
class Targets:
    duration: float | None = None
    steady_min: float | None = None
    steady_max: float | None = None
    steady_mean: float | None = None
    tolerance: float = 0.004           # how close a logged value must come (print rounding/4)


@dataclass(frozen=True)
class Logging:
    kind: str                 # "timer" (vLLM) or "decode-count" (SGLang)
    interval: float = 10.0    # timer seconds
    every: int = 40           # decode forwards per line
    phase: float = 0.0        # where the timer ticks fall relative to the run start


KNOBS = ("arrival_gap", "event_scale", "prefill_decay")


@dataclass(frozen=True)
class Fitted:
    timeline: Timeline
    windows: tuple[Window, ...]
    knob: str
    knob_value: float
    duration: float
    iterations: int


def windows_of(tl: Timeline, logging: Logging, concurrency: int,
               print_at: dict[int, float] | None = None) -> list[Window]:
    if logging.kind == "timer":
        return timer_windows(tl, logging.interval, tl.start + logging.phase, concurrency,
                             print_at)
    return decode_log_windows(tl, logging.every, concurrency)


def _desired(ids: list[int], targets: Targets, seed: int) -> dict[int, float]:
    """Desired steady values per window: extremes placed at seeded positions, the rest
    spread between them (skewed to meet the mean when one is given)."""
    lo, hi = targets.steady_min, targets.steady_max
    if lo is None or hi is None or len(ids) < 2:
        return {}
    rng = random.Random(seed)
    order = list(ids)
    rng.shuffle(order)
    lo_id, hi_id = order[0], order[1]
    rest = [i for i in ids if i not in (lo_id, hi_id)]
    u = {i: random.Random(seed * 7919 + i).random() for i in rest}
    gamma = 1.0
    if targets.steady_mean is not None and rest:
        need = (targets.steady_mean * len(ids) - lo - hi) / len(rest)   # mean of the rest
        need_u = (need - lo) / (hi - lo)
        if not 0 < need_u < 1:
            raise ValueError(f"steady mean {targets.steady_mean} cannot lie between "
                             f"{lo} and {hi} with {len(ids)} windows")
        a, b = -8.0, 8.0      # bisection on log(gamma): mean of u**gamma falls as gamma grows
        for _ in range(80):
            mid = (a + b) / 2
            m = sum(x ** math.exp(mid) for x in u.values()) / len(u)
            a, b = (mid, b) if m > need_u else (a, mid)
        gamma = math.exp((a + b) / 2)
    out = {lo_id: lo, hi_id: hi}
    for i in rest:
        out[i] = lo + (hi - lo) * u[i] ** gamma
    return out


def fit(model: EngineModel, *, n_requests: int, input_len: int, output_len: int,
        accept_prob: float, logging: Logging, targets: Targets, seed: int,
        event_delays: dict[int, float] | None = None, start: float = 0.0,
        knob: str = "arrival_gap", knob_value: float | None = None,
        concurrency: int | None = None) -> Fitted:
    """Simulate repeatedly, adjusting the free parameters until the targets are met.

    ``knob`` names what absorbs the end-to-end duration: ``arrival_gap`` (seconds between
    requests reaching the engine), ``event_scale`` (multiplies ``event_delays``) or
    ``prefill_decay`` (how much prefill slows with cached context for all requests but the
    first; see ``simulate``). The knob is bisected
    on the engine-side duration; what remains (under a second) is the client's time from
    the engine's last token to its stop watch, ``client_tail``. Without a duration target
    the knob stays at ``knob_value``.
    """
    if knob not in KNOBS:
        raise ValueError(f"knob must be one of {KNOBS}, got {knob!r}")
    factors: dict[int, float] = {}
    sims = 0
    in_flight = min(concurrency or n_requests, n_requests)   # "all requests decoding"

    def factor(t: float, decode_index: int) -> float:
        if logging.kind == "timer":
            key = math.floor((t - start - logging.phase) / logging.interval) + 1
        else:
            key = decode_index // logging.every + 1
        return factors.get(key, 1.0)

    def run(value: float) -> tuple[Timeline, list[Window]]:
        """Simulate at one knob value, re-fitting the steady windows until they hit."""
        nonlocal sims
        worst = math.inf
        for _ in range(30):
            sims += 1
            delays = {k: v * (value if knob == "event_scale" else 1.0)
                      for k, v in (event_delays or {}).items()}
            tl = simulate(model, n_requests=n_requests, input_len=input_len,
                          output_len=output_len,
                          arrival_gap_s=value if knob == "arrival_gap" else 0.0,
                          accept_prob=accept_prob, step_factor=factor, seed=seed,
                          event_delays=delays, start=start,
                          prefill_decay=value if knob == "prefill_decay" else 0.0,
                          concurrency=concurrency)
            windows = windows_of(tl, logging, in_flight)
            steady = [w for w in windows if w.steady(in_flight)]
            desired = _desired([w.index for w in steady], targets, seed)
            off = {w.index: w.gen_tps - desired[w.index] for w in steady if w.index in desired}
            worst = max((abs(v) for v in off.values()), default=0.0)
            if worst < targets.tolerance:
                return tl, windows
            if logging.kind == "timer" and desired:
                # Steps are discrete: finish with the print moments, a continuous knob.
                at = exact_print_times(tl, logging.interval, tl.start + logging.phase,
                                       in_flight, desired, PRINT_DELAY * logging.interval)
                if at is not None:
                    final = windows_of(tl, logging, in_flight, at)
                    steady_ids = {w.index for w in final if w.steady(in_flight)}
                    if steady_ids == set(desired) and all(
                            abs(w.gen_tps - desired[w.index]) < targets.tolerance
                            for w in final if w.index in desired):
                        return tl, final
            for w in steady:
                if w.index in desired:
                    factors[w.index] = factors.get(w.index, 1.0) * w.gen_tps / desired[w.index]
        raise RuntimeError(f"steady-phase calibration did not converge (worst offset "
                           f"{worst:.4f} tok/s at {knob}={value:.4f})")

    if knob_value is not None:
        value = knob_value
    else:
        value = 1.0 if knob == "event_scale" else 0.0
    tl, windows = run(value)
    if targets.duration is None:
        return Fitted(tl, tuple(windows), knob, value, tl.end - tl.start + CLIENT_TAIL_S[0],
                      sims)
    want = targets.duration - CLIENT_TAIL_S[0]      # engine-side duration to aim for
    sign = 1.0                                          # every knob lengthens the run
    lo: float | None = 0.0 if knob != "prefill_decay" else -2.0
    hi: float | None = None
    best = (abs(tl.end - tl.start - want), value, tl, windows)
    for _ in range(40):
        engine_s = tl.end - tl.start
        tail = targets.duration - engine_s
        if CLIENT_TAIL_S[1] <= tail <= CLIENT_TAIL_S[2]:
            return Fitted(tl, tuple(windows), knob, value, targets.duration, sims)
        increase = (engine_s < want) == (sign > 0)
        if increase:
            lo = value
        else:
            hi = value
        if hi is None:
            value = max(2 * value, value + 1.0)
        else:
            value = (lo + hi) / 2
        tl, windows = run(value)
        gap = abs(tl.end - tl.start - want)
        if gap < best[0]:
            best = (gap, value, tl, windows)
    raise RuntimeError(f"duration calibration did not converge: best engine-side duration "
                       f"misses {targets.duration} s by {best[0]:.3f} s at {knob}={best[1]:.4f}")
