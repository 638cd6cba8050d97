"""The provenance rules of a run (core.provenance): what run.yaml says it assumed, and, for
a reconstruction, what its scenario fitted, stated or left to the seed."""

from __future__ import annotations

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.methods import said
from ..core.provenance import MEASURED, MODEL, Rule, assign, reason
from ..core.records import Run
from ..core.runmeta import Assumption
from ..core.tables import input_checksum

# the scenario inputs every simulated figure follows from (synth.model)
GENERATED = "scheduler, prefill_knots, decode_step_fixed_ms, decode_ns_per_kv_token"


def assumption_rules(assumed: tuple[Assumption, ...]) -> list[Rule]:
    """run.yaml's ``assumed``: the settings it names were assumed (or calibrated), and the
    figures it names rest on the assumption (no stronger than it)."""
    rules = []
    for i, a in enumerate(assumed):
        why = reason("assumption", index=i)     # its words, in both languages: run.yaml
        for key in a.settings:
            pair = ids.parse_setting_pair(key)
            if pair is not None:
                rules.append(Rule(ids.setting(*pair), a.provenance, why))
        rules += [Rule(f + "*" if f.endswith(".") else f, a.provenance, why, floor=True)
                  for f in a.figures]
    return rules


def rules_for(run: Run) -> tuple[list[Rule], str, str]:
    """The rules, and the provenance of a figure read from the run's files that no rule
    names (with what set it): measured for a real run, the model for a reconstruction."""
    rules = assumption_rules(run.meta.assumed)
    if not run.meta.reconstruction:
        return rules, MEASURED, ""
    if not run.meta.scenario:
        return rules, MODEL, GENERATED
    from ..synth.scenario import load_scenario, provenance_rules

    scenario = load_scenario(run.paths.described(run.meta.scenario))
    rules += provenance_rules(scenario)
    # the knobs fitted to the published durations shape what the model produced too
    knobs = sorted({r.calibrate for e in scenario.engines for r in e.runs if r.calibrate})
    return rules, MODEL, ", ".join([GENERATED, *knobs])


def with_provenance(run: Run, registry: dict[str, Figure]) -> dict[str, Figure]:
    """``registry`` with every figure's provenance."""
    rules, default, why = rules_for(run)
    return assign(registry, rules, default, why)


def generator_figures(run: Run) -> list[Figure]:
    """A reconstruction's generator inputs (synth.scenario.generator_inputs), one figure
    each, with the provenance its scenario gives it; none for a real run."""
    if not run.meta.reconstruction or not run.meta.scenario:
        return []
    from ..synth.scenario import generator_inputs, load_scenario

    path = run.paths.described(run.meta.scenario)
    # cited as the file under data/ (ingest's copy, read here, is byte for byte that file):
    # the copy's path names the build's staging folder, which neither survives the build
    # nor is the same on another machine
    src = {"path": run.paths.rel(run.paths.data / run.meta.scenario),
           "sha256": input_checksum(run, path)}
    return [figure(id=ids.generator(g.key), value=g.value, unit="setting",
                   sources=(Source(key=g.key, **src),),
                   context={"order": i, "parts": [list(x) for x in g.parts]},
                   method=said("provenance.generator"), provenance=g.kind,
                   provenance_why=g.key)
            for i, g in enumerate(generator_inputs(load_scenario(path)))]
