"""Seeded synthetic runs in the engines' real formats (`benchreport synth SCENARIO OUT`)."""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..core.errors import ConfigError
from ..core.files import write_text_atomic
from .calibrate import Fitted, fit
from .logs import Lines, VllmProcs, sglang_run, sglang_startup, vllm_run, vllm_startup
from .metrics import BenchmarkTruth, benchmark_truth, metrics_text, served_model_name
from .model import Timeline
from .results import client_view, sglang_result, vllm_result
from .scenario import EngineSpec, RunSpec, Scenario, load_scenario

__all__ = ["BenchmarkTruth", "FIT_CACHE_ENV", "SimulatedRun", "benchmark_truth", "client_tails",
           "generate",
           "load_scenario",
           "make_run", "metrics_truth", "simulate_scenario"]


@dataclass(frozen=True)
class SimulatedRun:
    """One engine and workload as simulated: the truth that the written files encode."""

    engine: EngineSpec
    spec: RunSpec
    fitted: Fitted

    @property
    def timeline(self) -> Timeline:
        return self.fitted.timeline


def simulate_scenario(scenario: Scenario) -> list[SimulatedRun]:
    out = []
    for engine in scenario.engines:
        for spec in engine.runs:
            fitted = fit(engine.model, n_requests=spec.num_prompts, input_len=spec.input_len,
                         output_len=spec.output_len, accept_prob=spec.accept_prob,
                         logging=spec.logging, targets=spec.targets, seed=spec.seed,
                         event_delays=spec.events.delays(), knob=spec.calibrate,
                         knob_value=spec.knob_value, concurrency=spec.concurrency)
            _check_fitted(spec, fitted.knob_value)
            out.append(SimulatedRun(engine=engine, spec=spec, fitted=fitted))
    return out


# client_tails of the scenarios this process has simulated, by the scenario's repr (every
# field of it, the seeds included: the simulation is a function of them alone)
_TAILS: dict[str, dict[tuple[str, str], float]] = {}
_TAILS_KEPT = 8
# A folder where processes that build many times (the test session's: tests/conftest.py)
# share the tails they fitted, one JSON file per scenario; unset, nothing is written.
FIT_CACHE_ENV = "BENCHREPORT_FIT_CACHE"


def client_tails(scenario: Scenario) -> dict[tuple[str, str], float]:
    """Per (engine, workload): the seconds of the run's duration after the engine's last
    token, as the fit left them (the client's stream close and final detokenization).

    The fits simulate the whole scenario, seconds of CPU for a reference run, and a build's
    caveats ask for them each time: a process keeps what it found, by the scenario's value,
    so a kernel or a test that builds the same reconstruction again does not fit it again
    (nor, with $BENCHREPORT_FIT_CACHE, another process of the same test session)."""
    key = repr(scenario)
    if key not in _TAILS:
        tails = _shared_tails(key)
        if tails is None:
            tails = {(s.spec.engine, s.spec.workload):
                     s.fitted.duration - (s.timeline.end - s.timeline.start)
                     for s in simulate_scenario(scenario)}
            _share_tails(key, tails)
        if len(_TAILS) >= _TAILS_KEPT:
            del _TAILS[next(iter(_TAILS))]
        _TAILS[key] = tails
    return dict(_TAILS[key])


def _shared_file(key: str) -> Path | None:
    import hashlib
    import os

    folder = os.environ.get(FIT_CACHE_ENV)
    return Path(folder) / f"{hashlib.sha256(key.encode()).hexdigest()}.json" if folder else None


def _shared_tails(key: str) -> dict[tuple[str, str], float] | None:
    """The tails another process fitted for the scenario ``key`` (its repr, stored whole
    beside them and compared), or None."""
    import json

    path = _shared_file(key)
    if path is None or not path.is_file():
        return None
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored["scenario"] != key:
        return None
    return {(engine, workload): tail for engine, workload, tail in stored["tails"]}


def _share_tails(key: str, tails: dict[tuple[str, str], float]) -> None:
    import json

    path = _shared_file(key)
    if path is not None:        # floats go through JSON as their repr: read back exactly
        write_text_atomic(path, json.dumps(
            {"scenario": key, "tails": [[e, w, t] for (e, w), t in tails.items()]}))


def _check_fitted(spec: RunSpec, found: float) -> None:
    """A scenario that states its fitted knob value must state what the fit finds."""
    if spec.fitted is not None and abs(spec.fitted - found) > 1e-9 * max(1.0, abs(found)):
        raise ConfigError(f"{spec.engine}/{spec.workload}: the scenario states fitted "
                          f"{spec.calibrate} {spec.fitted:g}, but the fit finds {found:g}; "
                          "state the value the fit finds")


def spec_summary(tl: Timeline, k: int) -> dict:
    """vLLM's `spec_decode_*` result keys (0.18+), from the run's verify steps."""
    rounds = [a for s in tl.steps for a in s.accepted_each]
    if not rounds or not k:
        return {}
    drafted = len(rounds) * k
    accepted = sum(rounds)
    return {
        "spec_decode_acceptance_rate": 100.0 * accepted / drafted,
        "spec_decode_acceptance_length": 1.0 + accepted / len(rounds),
        "spec_decode_num_drafts": len(rounds),
        "spec_decode_draft_tokens": drafted,
        "spec_decode_accepted_tokens": accepted,
        "spec_decode_per_position_acceptance_rates": [
            sum(1 for a in rounds if a >= pos) / len(rounds) for pos in range(1, k + 1)],
    }


def _end_wall(spec: RunSpec, fitted: Fitted) -> dt.datetime:
    return spec.start + dt.timedelta(seconds=fitted.duration)


def write_results(scenario: Scenario, sim: SimulatedRun, out: Path) -> Path:
    tl, spec, engine = sim.timeline, sim.spec, sim.engine
    view = client_view(tl, sim.fitted.duration)
    if engine.client == "vllm-bench-serve":
        # vLLM's default name: {label}-{rate}qps-concurrency{N}-{model}-{date}.json
        end = _end_wall(spec, sim.fitted).strftime("%Y%m%d-%H%M%S")
        name = (f"vllm-infqps-concurrency{spec.concurrency}-"
                f"{scenario.model_id.rsplit('/', 1)[-1]}-{end}.json")
    else:
        # SGLang's default name for the random dataset: {backend}_{MMDD}_{n}_{in}_{out}.jsonl
        name = (f"sglang_{spec.start.strftime('%m%d')}_{spec.num_prompts}_"
                f"{spec.input_len}_{spec.output_len}.jsonl")
    path = out / engine.id / name
    if engine.client == "vllm-bench-serve":
        text = vllm_result(tl, view, model_id=scenario.model_id,
                           date=_end_wall(spec, sim.fitted), max_concurrency=spec.concurrency,
                           spec=spec_summary(tl, engine.model.spec_tokens))
    elif engine.client == "sglang-bench-serving":
        rounds = [a for s in tl.steps for a in s.accepted_each]
        accept = 1.0 + sum(rounds) / len(rounds) if rounds else None
        info = {**engine.info, "version": engine.version,
                "internal_states": [{"avg_spec_accept_length": accept}]}
        text = sglang_result(tl, view, input_len=spec.input_len, output_len=spec.output_len,
                             max_concurrency=spec.concurrency, server_info=info,
                             accept_length=accept)
    else:
        raise ValueError(f"unknown client {engine.client!r}")
    write_text_atomic(path, text)
    return path


def launch_yaml(engine: EngineSpec) -> str:
    """The engine's launch configuration as the deployment exported it."""
    body = {"image": engine.launch["image"], "env": dict(engine.launch.get("env", {})),
            "args": list(engine.launch["args"])}
    out = io.StringIO()
    out.write(f"# {engine.id}: launch configuration as deployed (GPUStack custom backend)\n")
    yaml.safe_dump(body, out, sort_keys=False, allow_unicode=True, width=1000)
    return out.getvalue()


def _number(value):
    """'8' -> 8, '0.88' -> 0.88, as SGLang prints its resolved server arguments."""
    if isinstance(value, str):
        for cast in (int, float):
            try:
                return cast(value)
            except ValueError:
                pass
    return value


def server_log(scenario: Scenario, engine: EngineSpec, sims: list[SimulatedRun]) -> str:
    """One server log covering start-up and every run of this engine, in time order."""
    rng = random.Random(scenario.seed * 31 + len(engine.id))
    lines = Lines()
    from ..ingest.parsers.launch import flags_from_args  # the launch file as ingest reads it

    flags = {k: _number(v) for k, v in flags_from_args(list(engine.launch["args"])).items()}
    positional = [p for p in flags.pop("_positional", []) if p != "serve"]
    if engine.client == "vllm-bench-serve":
        procs = VllmProcs(api=2117 + rng.randrange(100), core=2400 + rng.randrange(100),
                          workers=tuple(2600 + 13 * i + rng.randrange(10) for i in range(8)))
        args = {"model": positional[0] if positional else scenario.model_id, **flags}
        vllm_startup(lines, engine.server_start, engine.ready_after_s, procs, engine.version,
                     scenario.model_id, args, rng)
        for sim in sims:
            vllm_run(lines, sim.spec.start, sim.timeline, list(sim.fitted.windows), procs,
                     engine.model.spec_tokens, sim.spec.events, rng)
    else:
        server_args = {"model_path": positional[0] if positional else scenario.model_id,
                       **flags}
        sglang_startup(lines, engine.server_start, engine.ready_after_s, engine.version,
                       server_args, rng)
        for sim in sims:
            sglang_run(lines, sim.spec.start, sim.timeline, engine.logging.every,
                       min(sim.spec.concurrency, sim.spec.num_prompts),
                       engine.model.spec_tokens, rng)
    return lines.text()


def _write_raw(scenario: Scenario, sims: list[SimulatedRun], out: Path) -> list[Path]:
    metrics_truth(scenario, sims)     # refuse a metrics interval before writing any file
    written = []
    for engine in scenario.engines:
        mine = [s for s in sims if s.engine.id == engine.id]
        for sim in mine:
            written.append(write_results(scenario, sim, out))
        log = out / engine.id / "server.log"
        write_text_atomic(log, server_log(scenario, engine, mine))
        launch = out / engine.id / "launch.yaml"
        write_text_atomic(launch, launch_yaml(engine))
        written += [log, launch]
        if engine.metrics is not None:       # opt-in: scenarios without it write the same bytes
            prom = out / engine.id / "metrics.prom"
            write_text_atomic(prom, metrics_text(engine, mine,
                                                 served_model_name(scenario.model_id, engine)))
            written.append(prom)
    return sorted(written)


def generate(scenario_path: Path, out: Path) -> list[Path]:
    """Simulate every run of the scenario and write its raw files under ``out``."""
    scenario = load_scenario(scenario_path)
    return _write_raw(scenario, simulate_scenario(scenario), out)


def metrics_truth(scenario: Scenario, sims: list[SimulatedRun]) -> list[BenchmarkTruth]:
    """Per benchmark of every engine with ``metrics:``, what its ``metrics.prom`` must show:
    the scrapes just before and after it and the counter growth between them."""
    return [t for engine in scenario.engines if engine.metrics is not None
            for t in benchmark_truth(engine, sims)]


def run_yaml(scenario: Scenario, run_id: str) -> str:
    """A run.yaml for a synthetic run (used by tests to build generated runs end to end)."""
    first = min(r.start for e in scenario.engines for r in e.runs)
    workloads = {}
    for engine in scenario.engines:
        for r in engine.runs:
            workloads[r.workload] = r
    doc = {
        "schema": 1,
        "title": {"ko": f"합성 실행 {run_id}", "en": f"Synthetic run {run_id}"},
        "date": first.date(),
        "hardware": {"servers": 1, "gpus": 8, "gpu_model": "Simulated GPU"},
        "model": {"name": scenario.model_id.rsplit("/", 1)[-1]},
        "deployment": "benchreport synth",
        "engines": [{"id": e.id, "name": e.launch.get("name", e.id), "image":
                     e.launch.get("image", "")} for e in scenario.engines],
        "workloads": [{"id": w, "label": w.upper(), "input_tokens": r.input_len,
                       "output_tokens": r.output_len, "concurrency": r.concurrency,
                       "num_prompts": r.num_prompts}
                      for w, r in sorted(workloads.items(), key=lambda kv: kv[1].input_len)],
        "reconstruction": {"statement": {
            "ko": "이 실행은 benchreport synth가 시나리오 파일로 만든 합성 데이터입니다.",
            "en": "This run is synthetic data made by benchreport synth from a scenario file."}},
    }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def make_run(scenario_path: Path, run_dir: Path) -> list[SimulatedRun]:
    """Write a complete run folder (run.yaml and raw/) and return the simulated truth."""
    scenario = load_scenario(scenario_path)
    sims = simulate_scenario(scenario)
    _write_raw(scenario, sims, run_dir / "raw")
    write_text_atomic(run_dir / "run.yaml", run_yaml(scenario, run_dir.name))
    return sims
