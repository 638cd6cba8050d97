"""The engines' logging windows over a simulated timeline.

vLLM's front end prints a stats line on a fixed timer (10 s by default); SGLang's scheduler
prints a Decode line every 40 decode forwards. Each window knows what the engine would print.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from .model import Step, Timeline


@dataclass(frozen=True)
class Window:
    index: int
    start: float
    end: float
    steps: tuple[Step, ...]
    prompt_tokens: int
    gen_tokens: int
    running: int
    admitted: int               # running + mid-prefill (vLLM's "Running")
    waiting: int
    accepted: int
    drafted: int
    decode_request_steps: int   # sum over steps of requests decoded (verify rounds)
    full: bool                  # every step in the window decoded all ``concurrency`` requests
    prefill_in_window: bool

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def gen_tps(self) -> float:
        return self.gen_tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def prompt_tps(self) -> float:
        return self.prompt_tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def accept_len(self) -> float:
        if not self.decode_request_steps:
            return 0.0
        return 1.0 + self.accepted / self.decode_request_steps

    def steady(self, concurrency: int) -> bool:
        """All requests decoding, none waiting, no prefill: the phase the analysis measures."""
        return (self.full and self.running == concurrency and self.waiting == 0
                and not self.prefill_in_window and self.prompt_tokens == 0)


def _window(index: int, start: float, end: float, steps: list[Step], concurrency: int,
            count_first_tokens: bool) -> Window:
    prompt = sum(seg.tokens for s in steps for seg in s.prefill)
    first_tokens = sum(1 for s in steps for seg in s.prefill if seg.completes)
    gen = sum(s.emitted for s in steps) + (first_tokens if count_first_tokens else 0)
    last = steps[-1] if steps else None
    return Window(
        index=index, start=start, end=end, steps=tuple(steps), prompt_tokens=prompt,
        gen_tokens=gen, running=last.running if last else 0,
        admitted=last.admitted if last else 0, waiting=last.waiting if last else 0,
        accepted=sum(s.accepted for s in steps), drafted=sum(s.drafted for s in steps),
        decode_request_steps=sum(len(s.decode_requests) for s in steps),
        full=bool(steps) and all(len(s.decode_requests) == concurrency for s in steps),
        prefill_in_window=any(s.prefill for s in steps),
    )


def timer_windows(tl: Timeline, interval: float, phase: float, concurrency: int,
                  print_at: dict[int, float] | None = None) -> list[Window]:
    """vLLM: a stats line every ``interval`` s on a timer started at ``phase``.

    The line is printed at the first step boundary at or after each tick (the front end
    reports what it has received by then), or at ``print_at[k]`` (a moment at or after
    tick k: the event loop's delay) where given.
    """
    ends = [s.end for s in tl.steps]
    k = int((tl.start - phase) // interval) + 1
    windows: list[Window] = []
    prev_t = phase + (k - 1) * interval
    i = 0
    while True:
        tick = phase + k * interval
        if print_at and k in print_at:
            t = print_at[k]
            j = bisect.bisect_right(ends, t)
        else:
            j = bisect.bisect_left(ends, tick)
            # a step straddling the tick delays the print to that step's end
            t = tick
            if j < len(tl.steps) and tl.steps[j].start < tick:
                t = tl.steps[j].end
                j += 1
        chunk = list(tl.steps[i:j])
        windows.append(_window(k, prev_t, t, chunk, concurrency, count_first_tokens=True))
        i, prev_t = j, t
        k += 1
        if i >= len(tl.steps):
            # one more (idle) window is printed after the last activity
            tick = phase + k * interval
            windows.append(_window(k, prev_t, tick, [], concurrency, True))
            break
    return windows


def decode_log_windows(tl: Timeline, every: int, concurrency: int) -> list[Window]:
    """SGLang: a Decode line after every ``every``-th decode forward.

    A window's throughput runs from the first decode step of the run (the first line) or the
    previous Decode line. Whether prefill happened in it counts every step since the
    previous Decode line or the run's start, as a reader of the log must assume.
    """
    windows: list[Window] = []
    count = 0
    prev_t = None
    bucket: list[Step] = []
    for step in tl.steps:
        if prev_t is None and step.decode_requests:
            prev_t = step.start
        bucket.append(step)
        if step.decode_requests:
            count += 1
            if count % every == 0:
                decode_steps = [s for s in bucket if s.decode_requests]
                w = _window(count // every, prev_t, step.end, decode_steps, concurrency,
                            count_first_tokens=False)
                windows.append(Window(**{**w.__dict__,
                                         "prefill_in_window": any(s.prefill for s in bucket),
                                         "prompt_tokens": sum(g.tokens for s in bucket
                                                              for g in s.prefill)}))
                bucket, prev_t = [], step.end
    return windows


def exact_print_times(tl: Timeline, interval: float, phase: float, concurrency: int,
                      wanted: dict[int, float], max_delay: float) -> dict[int, float] | None:
    """Print moments, window by window, at which each wanted window shows exactly its value.

    Between two step ends the token count is fixed and the value falls as the print moves
    later, so each wanted value is met by one moment, if it lies within ``max_delay`` of the
    tick. Returns None when some window cannot be met that way.
    """
    ends = [s.end for s in tl.steps]
    cum = [0]
    for step in tl.steps:
        cum.append(cum[-1] + step.emitted + sum(1 for g in step.prefill if g.completes))
    chosen: dict[int, float] = {}
    for k in sorted(wanted):
        windows = timer_windows(tl, interval, phase, concurrency, chosen)
        prev = next((w.start for w in windows if w.index == k), None)
        if prev is None:
            return None
        tick = phase + k * interval
        start_tokens = cum[bisect.bisect_right(ends, prev)]
        found = None
        j = bisect.bisect_right(ends, tick)       # steps ended by the tick
        while j <= len(ends):
            lo = max(tick, ends[j - 1] if j else tick)
            hi = ends[j] if j < len(ends) else tick + max_delay
            if lo > tick + max_delay:
                break
            tokens = cum[j] - start_tokens
            t = prev + tokens / wanted[k]
            if lo <= t < min(hi, tick + max_delay):
                found = t
                break
            j += 1
        if found is None:
            return None
        chosen[k] = found
    return chosen
