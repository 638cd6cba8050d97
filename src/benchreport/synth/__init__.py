"""Seeded synthetic runs in the engines' real formats (`benchreport synth SCENARIO OUT`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from ..io import write_text_atomic
from .calibrate import Fitted, fit
from .model import Timeline
from .results import client_view, sglang_result, vllm_result
from .scenario import EngineSpec, RunSpec, Scenario, load_scenario

__all__ = ["SimulatedRun", "generate", "load_scenario", "simulate_scenario"]


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
                         logging=engine.logging, targets=spec.targets, seed=spec.seed,
                         event_delays=spec.events.delays(), knob=spec.calibrate)
            out.append(SimulatedRun(engine=engine, spec=spec, fitted=fitted))
    return out


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


def generate(scenario_path: Path, out: Path) -> list[Path]:
    """Simulate every run of the scenario and write its raw files under ``out``."""
    scenario = load_scenario(scenario_path)
    written = []
    for sim in simulate_scenario(scenario):
        written.append(write_results(scenario, sim, out))
    return sorted(written)
