"""Scenario files: what to simulate for each engine and workload, and what to hit."""

from __future__ import annotations

import datetime as dt
import zlib
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..core import ids
from ..core.errors import ConfigError
from ..core.provenance import ASSUMED, CALIBRATED, FREE, MODEL, Rule, reason
from ..core.yamlio import Located, load_yaml
from .calibrate import CLIENT_TAIL_S, PRINT_DELAY, Logging, Targets
from .logs import SGLANG_KV_CAPACITY as SGLANG_KV
from .logs import VLLM_KV_CAPACITY as VLLM_KV
from .model import DECAY_CONTEXT, DECAY_FLOOR, FLOOR_DIVISOR, EngineModel, PrefillCurve


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
    # the knob's value the fit finds, as the scenario states it (synth checks it), so that
    # a report can name what the reconstruction was fitted to without re-running the fit
    fitted: float | None = None


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
    # the (engine, workload) whose published first-request chunks prefill_knots copies
    knots_from: tuple[str, str] | None = None


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
                fitted=_get(r, "fitted", float, p, None),
                events=Events(**{k: ev[k] for k in ev}),
                seed=run_seed(seed, eid, wid),
                logging=Logging(logging.kind, logging.interval, logging.every, phase)))
        engines.append(EngineSpec(id=eid, client=_get(e, "client", str, p), model=model,
                                  logging=logging, version=str(_get(e, "version", str, p)),
                                  runs=tuple(runs), info=dict(_get(e, "info", Located, p, {})),
                                  server_start=server_start, ready_after_s=ready_after,
                                  launch=dict(_get(e, "launch", Located, p)),
                                  metrics=_metrics(e, p)))
    return Scenario(seed=seed, model_id=_get(doc, "model_id", str, p), engines=tuple(engines),
                    knots_from=_knots_from(doc, p))


def _knots_from(doc: Located, path: str) -> tuple[str, str] | None:
    """``prefill_knots_from: {engine: E, workload: W}``: whose published chunks the knots are."""
    src = _get(doc, "prefill_knots_from", Located, path, None)
    if src is None:
        return None
    return _get(src, "engine", str, path), _get(src, "workload", str, path)


def calibrated_patterns(scenario: Scenario) -> dict[str, str]:
    """Figure-id patterns whose values the reconstruction was fitted to, or copied from the
    published text, mapped to what set them: the calibrated and assumed rules of
    ``provenance_rules``. A published claim checked against such a figure agrees by
    construction: its check is no independent evidence.

    >>> from pathlib import Path
    >>> s = load_scenario(Path("data/2024-b300/scenario.yaml"))
    >>> p, e = calibrated_patterns(s), s.engines[0]
    >>> run = e.runs[0]
    >>> p[ids.e2e(run.workload, e.id, "duration")] == reason(
    ...     "target_duration", duration=f"{run.targets.duration:g}")
    True
    >>> p[ids.spec(run.workload, e.id, "*")] == f"accept_prob {run.accept_prob:g}"
    True
    """
    return {r.pattern: r.why for r in provenance_rules(scenario)
            if r.kind in (CALIBRATED, ASSUMED) and not r.context}


def provenance_rules(scenario: Scenario) -> list[Rule]:
    """Which of the reconstruction's figures are calibrated, assumed, model-derived or free,
    from what the scenario fits and states (core.provenance). The first rule that names a
    figure wins; a figure no rule names follows from its inputs, or from the model."""
    rules: list[Rule] = [
        Rule(ids.REPEATS, ASSUMED, reason("one_run")),
        Rule(ids.setting("kv_tokens", "*"), ASSUMED, reason("kv_capacity_filled")),
        Rule(ids.setting("kv_dtype", "*"), ASSUMED, reason("kv_dtype_filled")),
        Rule(ids.limits_engine("*", "kv_capacity_tokens"), ASSUMED,
             reason("kv_capacity_filled")),
        Rule(ids.limits_engine("*", "warmup_records"), MODEL, reason("no_warmup")),
        Rule(ids.setting("*", "*"), CALIBRATED, reason("launch_settings")),
        # the start-up lines' KV capacities and no cached prefixes: filled in, not modelled
        Rule(ids.cache("*", "*", "kv_usage_peak_pct"), ASSUMED,
             reason("kv_capacities", vllm=f"{VLLM_KV:,}", sglang=f"{SGLANG_KV:,}")),
        Rule(ids.cache("*", "*", "prefix_hit_pct"), ASSUMED, reason("cached_tokens", n=0)),
        Rule(ids.point("*", "log_prefix_hit_pct"), ASSUMED, reason("cached_tokens", n=0)),
        Rule("events.*", CALIBRATED, reason("published_events")),
        Rule(ids.workload("*", "input_tokens"), ASSUMED, "input_len"),
        Rule(ids.workload("*", "output_tokens"), ASSUMED, "output_len"),
        # the seed article gives the requests in flight, not how many were sent
        Rule(ids.workload("*", "num_prompts"), ASSUMED, "num_prompts"),
        Rule(ids.point("*", "requests_asked"), ASSUMED, "num_prompts"),
        Rule(ids.latency_run("*", "*", "requests"), ASSUMED, "num_prompts"),
        Rule(ids.workload("*", "*"), CALIBRATED, reason("published_concurrency")),
    ]
    for e in scenario.engines:
        m = e.model
        step = (f"decode_step_fixed_ms {m.step_fixed_s * 1000:g}, decode_ns_per_kv_token "
                f"{m.step_per_kv_token_s * 1e9:g}")
        rules.append(Rule(ids.model_decode(e.id, "*"), MODEL, step))
        # the generator's own step model is its input; the model fitted to the decode
        # figures takes the weakest of those figures (a steady mean the seed drew: free)
        rules += [Rule(ids.step_model(e.id, n), MODEL, step)
                  for n in ("generator_fixed_ms", "generator_ns_per_kv_token")]
        for r in e.runs:
            rules += _run_rules(e, r, step, scenario.seed)
    if scenario.knots_from is not None:
        engine, workload = scenario.knots_from
        for name in ("sequence", "decay", "decay_pct"):
            rules.append(Rule(ids.prefill_request(workload, engine, 1, name), CALIBRATED,
                              reason("published_sequence", key="prefill_knots")))
    # every engine prefills on the one published curve (times its prefill_speed, then each
    # run's fitted prefill_decay): the engines' prefill agrees or differs by design
    rules.append(Rule("prefill.*", ASSUMED, "prefill_knots × prefill_speed, prefill_decay"))
    return rules


def _run_rules(e: EngineSpec, r: RunSpec, step: str, seed: int) -> list[Rule]:
    """The rules of one engine's run of one workload: its targets are calibrated, the
    decode windows between them free, acceptance and event cost set by its inputs."""
    w, t, out = r.workload, r.targets, []
    where = (("engine", e.id), ("workload", w))
    if t.duration is not None:
        why = reason("target_duration", duration=f"{t.duration:g}")
        tokens = reason("tokens_over_duration", tokens=f"{r.num_prompts} × output_len "
                        f"{r.output_len}", duration=f"{t.duration:g}")
        out += [Rule(ids.e2e(w, e.id, "duration"), CALIBRATED, why),
                Rule(ids.throughput(w, e.id, "*"), ASSUMED, tokens),
                *(Rule(ids.point("*", n), ASSUMED, tokens, where)
                  for n in ("output_throughput", "request_throughput")),
                Rule(ids.consistency(w, e.id, "duration", "client"), CALIBRATED, why),
                Rule(ids.point("*", "duration"), CALIBRATED, why, where)]
    out += [Rule(ids.spec(w, e.id, "*"), ASSUMED, f"accept_prob {r.accept_prob:g}"),
            Rule(ids.point("*", "log_accept_len"), ASSUMED, f"accept_prob {r.accept_prob:g}",
                 where),
            Rule(ids.spec_run(e.id, "*"), ASSUMED, reason("each_run", key="accept_prob")),
            Rule(ids.limits_stall(w, e.id, "*"), MODEL,
                 "event_scale" if r.calibrate == "event_scale" else "events")]
    if r.calibrate == "arrival_gap":
        # how the requests reached the engine is the knob fitted to the duration
        knob = f"arrival_gap {r.fitted:g} s" if r.fitted is not None else "arrival_gap"
        out.append(Rule(ids.arrival(w, e.id, "*"), CALIBRATED,
                        reason("fitted_duration", knob=knob)))
    if any(x is not None for x in (t.steady_min, t.steady_max, t.steady_mean)):
        out += _decode_rules(e, r, step, seed)
    return out


def _decode_rules(e: EngineSpec, r: RunSpec, step: str, seed: int) -> list[Rule]:
    """Steady decode: the targeted extremes and mean are calibrated; every other statistic
    of the windows between them comes from the seeded noise per window."""
    w, t = r.workload, r.targets
    d = partial(ids.decode, w, e.id)
    out = [Rule(d(n), MODEL, step) for n in ("records", "window", "steady")]
    if t.steady_max is not None:
        why = reason("target_tps", name="steady_max", value=f"{t.steady_max:g}")
        out += [Rule(d(n), CALIBRATED, why) for n in ("max", "per_request_peak",
                                                        "ms_per_token_peak")]
    if t.steady_min is not None:
        out.append(Rule(d("min"), CALIBRATED, reason("target_tps", name="steady_min",
                                                     value=f"{t.steady_min:g}")))
    if t.steady_mean is not None:
        # a timer's lines cover equal time, so the mean of its lines is the steady mean;
        # a line every N steps makes the plain mean of the lines the fitted one
        names = ("mean", "per_request", "ms_per_token") if e.logging.kind == "timer" else \
            ("mean_of_lines", "per_request_of_lines", "ms_per_token_of_lines")
        why = reason("target_lines", name="steady_mean", value=f"{t.steady_mean:g}")
        out += [Rule(d(n), CALIBRATED, why) for n in names]
    # the step-time factor of each log window is drawn from the seed, within the extremes
    out.append(Rule(d("*"), FREE, f"seed {seed}"))
    return out


@dataclass(frozen=True)
class GeneratorInput:
    """One input of the generator that shapes the reconstruction's figures: its scenario
    key, its value as (engine, workload, text) parts (either may be "": the whole run),
    and its provenance (core.provenance)."""

    key: str
    parts: tuple[tuple[str, str, str], ...]
    kind: str

    @property
    def value(self) -> str:
        return "; ".join(" ".join(x for x in p if x) for p in self.parts)


def _per_engine(scenario: Scenario, value) -> tuple[tuple[str, str, str], ...]:
    return tuple((e.id, "", str(value(e))) for e in scenario.engines)


def _per_run(scenario: Scenario, value) -> tuple[tuple[str, str, str], ...]:
    return tuple((e.id, r.workload, value(r)) for e in scenario.engines
                 for r in e.runs if value(r))


def _whole(text: str) -> tuple[tuple[str, str, str], ...]:
    return (("", "", text),)


def _events(r: RunSpec) -> str:
    ev = r.events
    parts = ([f"jit_compiles {ev.jit_compiles} × jit_s {ev.jit_s:g}"] if ev.jit_compiles
             else []) + ([f"oom_retries {ev.oom_retries} × oom_retry_s {ev.oom_retry_s:g} / "
                          f"workers {ev.workers}"] if ev.oom_retries else [])
    return ", ".join(parts)


def _targets(r: RunSpec) -> str:
    t = r.targets
    return ", ".join(f"{k} {v:g}" for k, v in (
        ("duration", t.duration), ("steady_min", t.steady_min),
        ("steady_max", t.steady_max), ("steady_mean", t.steady_mean)) if v is not None)


def generator_inputs(scenario: Scenario) -> list[GeneratorInput]:
    """Every input of the generator that shapes a figure, in the order the report lists
    them: what was copied from the published text, assumed, fitted, modelled or drawn."""
    knots = scenario.engines[0].model.prefill.knots if scenario.engines else ()
    return [
        GeneratorInput("targets", _per_run(scenario, _targets), CALIBRATED),
        GeneratorInput("fitted", _per_run(scenario, lambda r: f"{r.calibrate} {r.fitted:g}"
                                          if r.fitted is not None else r.calibrate), CALIBRATED),
        GeneratorInput("prefill_knots", _whole(" → ".join(f"{v:,.0f}" for _, v in knots)
                                               + f" @ 0–{knots[-1][0]:,}") if knots else (),
                       CALIBRATED),
        GeneratorInput("prefill_rule", _whole(_prefill_rule(knots)) if knots else (), MODEL),
        GeneratorInput("mixed_step", _per_engine(scenario, _step_rule), MODEL),
        GeneratorInput("prefill_speed", _per_engine(
            scenario, lambda e: f"{e.model.prefill.knots[0][1] / knots[0][1]:g}"), ASSUMED),
        GeneratorInput("scheduler", _per_engine(scenario, lambda e: e.model.scheduler),
                       ASSUMED),
        GeneratorInput("chunk_budget", _per_engine(
            scenario, lambda e: f"{e.model.chunk_budget:,}"), CALIBRATED),
        GeneratorInput("decode_step", _per_engine(
            scenario, lambda e: f"decode_step_fixed_ms {e.model.step_fixed_s * 1000:g}, "
                                f"decode_ns_per_kv_token {e.model.step_per_kv_token_s * 1e9:g}, "
                                f"dcp {e.model.dcp}"), MODEL),
        GeneratorInput("accept_prob", _per_run(scenario, lambda r: f"{r.accept_prob:g}"),
                       ASSUMED),
        GeneratorInput("events", _per_run(scenario, _events) or _whole("–"), ASSUMED),
        GeneratorInput("client_tail", _client_tails(scenario), ASSUMED),
        GeneratorInput("event_time", _per_run(scenario, _event_time), CALIBRATED),
        GeneratorInput("logging", _per_engine(
            scenario, lambda e: f"interval_s {e.logging.interval:g}"
            if e.logging.kind == "timer" else f"every {e.logging.every}"), ASSUMED),
        GeneratorInput("startup", _per_engine(
            scenario, lambda e: f"ready_after_s {e.ready_after_s:g}"), ASSUMED),
        GeneratorInput("clock", _clock(scenario), ASSUMED),
        GeneratorInput("workload", _per_run(scenario, lambda r: f"input_len {r.input_len:,}, "
                                            f"output_len {r.output_len:,}, num_prompts "
                                            f"{r.num_prompts}, concurrency {r.concurrency}"),
                       ASSUMED),
        GeneratorInput("spec_tokens", _per_engine(scenario, lambda e: e.model.spec_tokens),
                       CALIBRATED),
        GeneratorInput("window_factors", _whole("steady_min, steady_max, steady_mean"),
                       CALIBRATED),
        GeneratorInput("client_send", _whole("send_at_s 0"), ASSUMED),
        GeneratorInput("acceptance_model", _whole("P(draft i | draft i-1) = accept_prob"),
                       ASSUMED),
        GeneratorInput("event_steps", _whole("steps 0–7"), ASSUMED),
        GeneratorInput("print_delay", _whole(f"PRINT_DELAY {PRINT_DELAY:g} × interval"),
                       ASSUMED),
        GeneratorInput("prefix_cache", _whole("cached_tokens 0"), ASSUMED),
        GeneratorInput("kv_capacity", _whole(f"VLLM_KV_CAPACITY {VLLM_KV:,}; "
                                             f"SGLANG_KV_CAPACITY {SGLANG_KV:,}"), ASSUMED),
        GeneratorInput("seed", _whole(f"seed {scenario.seed}"), FREE),
    ]


def _clock(scenario: Scenario) -> tuple[tuple[str, str, str], ...]:
    """Each server's start and each run's: with ready_after_s they set where vLLM's stats
    timer ticks within a run (``phase``) and every clock time a log prints."""
    out: list[tuple[str, str, str]] = []
    for e in scenario.engines:
        out.append((e.id, "", f"server_start {e.server_start:%H:%M:%S}"))
        out += [(e.id, r.workload, f"start {r.start:%H:%M:%S}" + (
            f", phase {r.logging.phase:g} s" if r.logging.kind == "timer" else ""))
            for r in e.runs]
    return tuple(out)


def _prefill_rule(knots: tuple[tuple[int, float], ...]) -> str:
    """The curve between and beyond the knots, and how prefill_decay bends it (synth.model)."""
    first = knots[0][1]
    return (f"tps = max({first:,.0f} / {FLOOR_DIVISOR:g} = {first / FLOOR_DIVISOR:,.0f}, "
            f"lerp(prefill_knots, cached₀)); index ≥ 1: tps × max({DECAY_FLOOR:g}, "
            f"1 − prefill_decay × cached₀ / {DECAY_CONTEXT:,})")


def _step_rule(e: EngineSpec) -> str:
    """How long one step takes (synth.model.simulate): a mixed step adds its prefill and
    its decode, with no overlap; a prefill-first step runs one or the other."""
    if e.model.scheduler == "mixed":
        return "step = prefill_s + decode_s + event_s"
    return "step = (prefill_s or decode_s) + event_s"


def _event_time(r: RunSpec) -> str:
    """The seconds the run's events add in all, as the fit scaled them; a JIT compilation's
    log span stays the unscaled jit_s."""
    total = sum(r.events.delays().values())
    if not total:
        return ""
    scale = r.fitted if r.calibrate == "event_scale" and r.fitted is not None else 1.0
    ev = r.events
    terms = " + ".join(t for t in (
        f"{ev.jit_compiles} × jit_s {ev.jit_s:g}" if ev.jit_compiles else "",
        f"{ev.oom_retries} × oom_retry_s {ev.oom_retry_s:g} / {ev.workers}"
        if ev.oom_retries else "") if t)
    return f"({terms}) × event_scale {scale:g} = {total * scale:.4g} s"


def _client_tails(scenario: Scenario) -> tuple[tuple[str, str, str], ...]:
    """The client tail each run's fit left (its duration beyond the engine's last token),
    then what the fit aimed at and allowed (synth.calibrate.CLIENT_TAIL_S)."""
    from . import client_tails  # the simulation imports this module

    tails = client_tails(scenario)
    return tuple((e, w, f"{tails[e, w]:.2f} s") for e, w in tails) + _whole(
        "{:g} s ({:g}–{:g} s)".format(*CLIENT_TAIL_S))
