"""Scenario files: what to simulate for each engine and workload, and what to hit."""

from __future__ import annotations

import datetime as dt
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import ids
from ..core.errors import ConfigError
from ..core.yamlio import Located, load_yaml
from .calibrate import Logging, Targets
from .model import EngineModel, PrefillCurve


@dataclass(frozen=True)
class Events:
    jit_compiles: int = 0
    jit_s: float = 0.0
    oom_retries: int = 0
    oom_retry_s: float = 0.0
    workers: int = 8

    def delays(self) -> dict[int, float]:
        """Seconds added per early step: compilations first, retries spread over 8 steps."""
        out: dict[int, float] = {}
        for i in range(self.jit_compiles):
            out[i] = out.get(i, 0.0) + self.jit_s
        if self.oom_retries:
            per_step = self.oom_retries / 8
            for i in range(8):
                out[i] = out.get(i, 0.0) + per_step * self.oom_retry_s / self.workers
        return out


@dataclass(frozen=True)
class RunSpec:
    engine: str
    workload: str
    input_len: int
    output_len: int
    num_prompts: int
    concurrency: int
    start: dt.datetime
    accept_prob: float
    targets: Targets
    calibrate: str
    events: Events
    seed: int
    logging: Logging     # with the timer phase of this run (one timer per server)
    knob_value: float | None = None   # start (or, without a duration target, fixed) value


@dataclass(frozen=True)
class MetricsSpec:
    """The engine's Prometheus ``/metrics``, scraped every ``interval_s`` seconds while it
    serves the benchmarks (written to ``raw/<engine>/metrics.prom``; see ``synth.metrics``)."""

    interval_s: float = 5.0


@dataclass(frozen=True)
class EngineSpec:
    id: str
    client: str
    model: EngineModel
    logging: Logging
    version: str
    runs: tuple[RunSpec, ...]
    info: dict[str, Any]
    server_start: dt.datetime
    ready_after_s: float
    launch: dict[str, Any]
    metrics: MetricsSpec | None = None    # None: no /metrics scrapes are written


@dataclass(frozen=True)
class Scenario:
    seed: int
    model_id: str
    engines: tuple[EngineSpec, ...]


def _get(obj: Located, key: str, typ, path: str, default: Any = ...) -> Any:
    if key not in obj:
        if default is ...:
            raise ConfigError(f"missing key {key!r}", path=path, line=obj.line)
        return default
    value = obj[key]
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, typ) or (isinstance(value, bool) and typ is not bool):
        raise ConfigError(f"{key} must be {getattr(typ, '__name__', typ)}, got {value!r}",
                          path=path, line=obj.lines[key])
    return value


def _metrics(e: Located, path: str) -> MetricsSpec | None:
    """The optional ``metrics: {interval_s: S}`` of an engine (absent: no scrapes)."""
    m = _get(e, "metrics", Located, path, None)
    if m is None:
        return None
    for key in m:
        if key != "interval_s":
            raise ConfigError(f"unknown key {key!r} in metrics; expected interval_s",
                              path=path, line=m.lines[key])
    interval = _get(m, "interval_s", float, path, MetricsSpec.interval_s)
    if not interval >= 0.001:
        raise ConfigError(f"metrics interval_s must be at least 0.001 s, got {interval!r}",
                          path=path, line=m.lines.get("interval_s", m.line))
    return MetricsSpec(interval_s=interval)


def run_seed(seed: int, engine: str, workload: str) -> int:
    return seed * 1_000_003 + zlib.crc32(f"{engine}/{workload}".encode())


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario YAML file."""
    p = str(path)
    doc = load_yaml(path.read_text(encoding="utf-8"), p)
    if _get(doc, "scenario", int, p) != 1:
        raise ConfigError("scenario version must be 1", path=p, line=doc.lines["scenario"])
    seed = _get(doc, "seed", int, p)
    knots = tuple((int(a), float(b)) for a, b in _get(doc, "prefill_knots", list, p))
    workloads = _get(doc, "workloads", Located, p)
    concurrency = _get(doc, "concurrency", int, p)
    engines = []
    for eid, e in _get(doc, "engines", Located, p).items():
        scale = _get(e, "prefill_speed", float, p, 1.0)
        model = EngineModel(
            scheduler=_get(e, "scheduler", str, p), chunk_budget=_get(e, "chunk_budget", int, p),
            prefill=PrefillCurve(tuple((c, v * scale) for c, v in knots)),
            step_fixed_s=_get(e, "decode_step_fixed_ms", float, p) / 1000,
            step_per_kv_token_s=_get(e, "decode_ns_per_kv_token", float, p) / 1e9,
            dcp=_get(e, "dcp", int, p, 1), spec_tokens=_get(e, "spec_tokens", int, p, 0))
        lg = _get(e, "logging", Located, p)
        server_start = _get(e, "server_start", dt.datetime, p)
        ready_after = _get(e, "ready_after_s", float, p)
        logging = Logging(kind=_get(lg, "kind", str, p),
                          interval=_get(lg, "interval_s", float, p, 10.0),
                          every=_get(lg, "every", int, p, 40))
        runs = []
        for wid, r in _get(e, "runs", Located, p).items():
            w = _get(workloads, wid, Located, p)
            t = _get(r, "targets", Located, p)
            ev = _get(r, "events", Located, p, Located())
            if not hasattr(ev, "lines"):
                ev.lines, ev.line = {}, r.line
            start = _get(r, "start", dt.datetime, p)
            # The stats timer starts when the server is ready and ticks every interval.
            since_ready = (start - server_start).total_seconds() - ready_after
            phase = (-since_ready) % logging.interval
            runs.append(RunSpec(
                engine=eid, workload=wid, input_len=_get(w, "input_len", int, p),
                output_len=_get(w, "output_len", int, p),
                num_prompts=_get(w, "num_prompts", int, p), concurrency=concurrency,
                start=start,
                accept_prob=_get(r, "accept_prob", float, p),
                targets=Targets(duration=_get(t, "duration", float, p, None),
                                steady_min=_get(t, "steady_min", float, p, None),
                                steady_max=_get(t, "steady_max", float, p, None),
                                steady_mean=_get(t, "steady_mean", float, p, None),
                                tolerance=0.04 if logging.kind == "timer" else 0.004),
                calibrate=_get(r, "calibrate", str, p, "arrival_gap"),
                knob_value=_get(r, "knob_value", float, p, None),
                events=Events(**{k: ev[k] for k in ev}),
                seed=run_seed(seed, eid, wid),
                logging=Logging(logging.kind, logging.interval, logging.every, phase)))
        engines.append(EngineSpec(id=eid, client=_get(e, "client", str, p), model=model,
                                  logging=logging, version=str(_get(e, "version", str, p)),
                                  runs=tuple(runs), info=dict(_get(e, "info", Located, p, {})),
                                  server_start=server_start, ready_after_s=ready_after,
                                  launch=dict(_get(e, "launch", Located, p)),
                                  metrics=_metrics(e, p)))
    return Scenario(seed=seed, model_id=_get(doc, "model_id", str, p), engines=tuple(engines))


def calibrated_patterns(scenario: Scenario) -> dict[str, str]:
    """Figure-id patterns (fnmatch) whose values the reconstruction was fitted to, or copied
    from the published text, mapped to what set them. A published claim checked against
    such a figure agrees by construction: its check is no independent evidence.

    >>> from pathlib import Path
    >>> p = calibrated_patterns(load_scenario(Path("data/2024-b300/scenario.yaml")))
    >>> p["e2e.64k.vllm.duration"], p["prefill.*"]
    ('target duration', 'prefill_knots')
    """
    # Runtime events, and their absence, are whatever the scenario lists.
    out = {"prefill.*": "prefill_knots", "events.*": "events"}
    for e in scenario.engines:
        out[ids.setting("*", e.id)] = "launch"
        for r in e.runs:
            t = r.targets
            if t.duration is not None:
                out[ids.e2e(r.workload, e.id, "duration")] = "target duration"
            if any(x is not None for x in (t.steady_min, t.steady_max, t.steady_mean)):
                out[ids.decode(r.workload, e.id, "*")] = "target steady decode"
            out[ids.spec(r.workload, e.id, "*")] = "accept_prob"
    return out
