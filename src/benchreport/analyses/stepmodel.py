"""What limits decode: each engine's decode step model against a memory-bandwidth bound.

Step model. In the steady phase all B requests of a workload decode; one decode (verify)
step gives each request its accepted length of tokens (1 without speculative decoding), so

    step_s = B × accept_len ÷ (aggregate output tok/s of the steady phase)

and the step reads the KV cache of every request,

    kv_tokens ≈ B × (input_tokens + output_tokens ÷ 2).

The ``÷ 2`` is an approximation: the figures do not say where each request stood in its
output during the steady phase, and half of it is the mean position of a request decoding
from its first to its last token. With two or more context lengths (distinct kv_tokens),
``step_s = fixed + per_kv × kv_tokens`` is solved: exactly with two points, by least squares
with more. With fewer, the model is not evaluable and no number is given.

Bound. A step cannot take less than the time one GPU needs to read what it must read from
HBM (compute, communication and overheads only add to it):

    bytes = (dense_params + moe_layers × experts(T) × expert_params) × bytes_per_param ÷ TP
            + kv_tokens × kv_bytes_per_token_per_layer × layers ÷ DCP

with experts(T) = E·(1 − (1 − k/E)^T) the distinct routed experts a layer's T tokens
activate, expected under uniform routing, and T = B × tokens verified per step (1 + draft
tokens; every draft position is run through the model whether accepted or not). Dividing by
the HBM bandwidth per GPU gives a fixed part (the weights, ms per step) and a part per KV
token (ns). Every input is declared in run.yaml (``hardware.hbm_tb_s``, or without it the
vendor's figure for ``hardware.gpu_model`` from the package's table, ``core.hardware``,
``model.architecture``); without them the bound is not evaluable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import ids
from ..core.figures import Figure, Source, figure
from ..core.hardware import Bandwidth, hbm_bandwidth
from ..core.methods import Said, said
from ..core.provenance import ASSUMED, reason
from ..core.records import Run
from ..core.runmeta import Architecture
from ..core.verdicts import (
    ABOVE_BOUND,
    ALWAYS_BELOW,
    BELOW_BEYOND,
    BELOW_BOUND,
    BELOW_UNTIL,
    EVALUATED,
    FIT_EXACT,
    FIT_LEAST_SQUARES,
    FOUND,
    NEVER_BELOW,
    NO,
    NOT_EVALUABLE,
    YES,
)

APPROXIMATION = said("stepmodel.approximation", two=2)


@dataclass(frozen=True)
class StepPoint:
    """One workload's steady decode phase as a step of the step model."""

    workload: str
    batch: int                 # requests decoding together
    accept_len: float          # tokens per request per step (1 without speculation)
    tps: float                 # aggregate output tok/s in the steady phase
    input_tokens: int
    output_tokens: int
    deps: tuple[str, ...] = ()     # the decode, workload and spec figures it comes from
    speculative: bool = False      # accept_len is the spec figure's (else 1: no drafts)

    @property
    def step_s(self) -> float:
        return self.batch * self.accept_len / self.tps

    @property
    def kv_tokens(self) -> float:
        return self.batch * (self.input_tokens + self.output_tokens / 2)


@dataclass(frozen=True)
class Setup:
    """How an engine was deployed, as far as the bound needs it."""

    tp: int | None             # tensor-parallel size (None: not known)
    dcp: int = 1               # decode-context-parallel size: KV split this many ways
    drafts: int = 0            # draft tokens per verify step (0: no speculative decoding)
    deps: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generator:
    """A reconstruction's step model as its generator assumed it (scenario.yaml)."""

    fixed_ms: float
    ns_per_kv_token: float     # as the scenario states it, before DCP
    dcp: int
    path: str = ""             # the scenario (repo-relative) and its sha256
    sha256: str = ""

    def source(self, key: str) -> tuple[Source, ...]:
        return (Source(path=self.path, sha256=self.sha256, key=key),) if self.path else ()


@dataclass(frozen=True)
class Bound:
    weights_ms: float          # the weights one GPU reads per step
    ns_per_kv_token: float     # the KV one GPU reads per KV token of the step
    experts_per_layer: float   # distinct routed experts the step activates per MoE layer
    tokens_per_step: int       # T


def fit(points: list[StepPoint]) -> tuple[float, float] | None:
    """(fixed s, s per KV token) of step_s = fixed + per_kv × kv_tokens, or None with fewer
    than two distinct kv_tokens (exact with two points, least squares with more)."""
    if len({p.kv_tokens for p in points}) < 2:
        return None
    slope, intercept = np.polyfit([p.kv_tokens for p in points],
                                  [p.step_s for p in points], 1)
    return float(intercept), float(slope)


def expected_experts(experts: int, per_token: int, tokens: int) -> float:
    """Distinct experts ``tokens`` tokens activate, each picking ``per_token`` of ``experts``
    uniformly: E·(1 − (1 − k/E)^T)."""
    return experts * (1 - (1 - per_token / experts) ** tokens)


def crossover(fixed_ms: float, ns_per_kv: float, bound_ms: float,
              bound_ns_per_kv: float) -> tuple[str, float | None]:
    """Where the step line fixed + ns_per_kv × KV lies under the bound line bound_ms +
    bound_ns_per_kv × KV (KV ≥ 0): (BELOW_UNTIL, the KV tokens per step where they cross),
    (BELOW_BEYOND, those tokens), (ALWAYS_BELOW, None) or (NEVER_BELOW, None).

    >>> crossover(1.0, 30.0, 7.0, 4.0)
    ('below the bound up to the crossover', 230769.23076923078)
    """
    fixed_below, steeper = fixed_ms < bound_ms, ns_per_kv > bound_ns_per_kv
    if fixed_below != steeper:
        return (ALWAYS_BELOW if fixed_below else NEVER_BELOW), None
    kv = 1e6 * (bound_ms - fixed_ms) / (ns_per_kv - bound_ns_per_kv)
    return (BELOW_UNTIL if fixed_below else BELOW_BEYOND), kv


def pinned_step_s(fixed_s: float, near: StepPoint, far: StepPoint) -> float:
    """The step at ``near``'s KV tokens of the straight line from ``fixed_s`` at zero KV
    through ``far``'s step: with a fixed cost no lower than ``fixed_s``, the fastest step a
    linear KV cost that meets ``far`` allows at ``near`` (when near has fewer KV tokens)."""
    return fixed_s + (far.step_s - fixed_s) * near.kv_tokens / far.kv_tokens


def bound(arch: Architecture, hbm_tb_s: float, setup: Setup, kv_bytes: float,
          batch: int) -> Bound:
    """The memory-bandwidth lower bound of one step on one GPU."""
    tokens = batch * (1 + setup.drafts)
    experts = expected_experts(arch.routed_experts, arch.experts_per_token, tokens)
    weights = (arch.dense_params + arch.moe_layers * experts * arch.expert_params) \
        * arch.bytes_per_param / setup.tp
    per_s = hbm_tb_s * 1e12
    return Bound(weights_ms=1e3 * weights / per_s,
                 ns_per_kv_token=1e9 * kv_bytes * arch.layers / setup.dcp / per_s,
                 experts_per_layer=experts, tokens_per_step=tokens)


# --- from the figures ----------------------------------------------------------------------

def points_of(run: Run, registry: dict[str, Figure], engine: str,
              setup: Setup) -> list[StepPoint]:
    """The engine's steady decode phases that can be read as steps: a steady phase found,
    its mean, the output length, and the accepted length when speculation ran."""
    out = []
    for w in run.meta.workloads:
        steady, mean = ids.decode(w.id, engine, "steady"), ids.decode(w.id, engine, "mean")
        accept = ids.spec(w.id, engine, "accept_len")
        if steady not in registry or registry[steady].value != FOUND or mean not in registry \
                or w.output_tokens is None:
            continue
        if setup.drafts and accept not in registry:
            continue               # speculation ran, its accepted length is not known
        deps = (steady, mean, ids.workload(w.id, "input_tokens"),
                ids.workload(w.id, "output_tokens"))
        spec = accept in registry
        out.append(StepPoint(
            workload=w.id, batch=int(registry[steady].context.get("requests") or 0),
            accept_len=float(registry[accept].value) if spec else 1.0,
            tps=float(registry[mean].value), input_tokens=w.input_tokens,
            output_tokens=w.output_tokens, deps=deps + ((accept,) if spec else ()),
            speculative=spec))
    return [p for p in out if p.batch > 0 and p.tps > 0]


def _point_figures(engine: str, p: StepPoint) -> list[Figure]:
    ctx = {"engine": engine, "workload": p.workload, "batch": p.batch}
    per = said("stepmodel.per_spec") if p.speculative else said("stepmodel.per_one", one=1)
    kv_deps = (ids.decode(p.workload, engine, "steady"), ids.workload(p.workload, "input_tokens"),
               ids.workload(p.workload, "output_tokens"))
    return [
        figure(id=ids.step_point(engine, p.workload, "step_ms"), value=1e3 * p.step_s,
               unit="ms", decimals=2, context=ctx, depends_on=p.deps,
               method=said("stepmodel.step", batch=p.batch, per=per)),
        figure(id=ids.step_point(engine, p.workload, "kv_tokens"), value=p.kv_tokens,
               unit="tokens", decimals=0, context=ctx, depends_on=kv_deps,
               method=APPROXIMATION),
    ]


def _fit_figures(engine: str, points: list[StepPoint]) -> list[Figure]:
    fid = ids.step_model
    deps = tuple(ids.step_point(engine, p.workload, name) for p in points
                 for name in ("step_ms", "kv_tokens"))
    n = len({p.kv_tokens for p in points})
    line = fit(points)
    ctx = {"engine": engine, "points": len(points)}
    if line is None:
        return [figure(id=fid(engine, "fit"), value=NOT_EVALUABLE, unit="verdict",
                       context=ctx, depends_on=deps,
                       method=said("stepmodel.fit_none", n=n))]
    how = (said("stepmodel.how_exact", n=n) if len(points) == 2 else
           said("stepmodel.how_lsq", n=len(points)))
    fixed, per_kv = line
    return [
        figure(id=fid(engine, "fit"), value=FIT_EXACT if len(points) == 2
               else FIT_LEAST_SQUARES, unit="verdict", context=ctx, depends_on=deps,
               method=said("stepmodel.fit", how=how, approx=APPROXIMATION)),
        figure(id=fid(engine, "points"), value=len(points), unit="count", decimals=0,
               context=ctx, depends_on=deps, method=said("stepmodel.points")),
        figure(id=fid(engine, "fixed_ms"), value=1e3 * fixed, unit="ms", decimals=2,
               context=ctx, depends_on=deps,
               method=said("stepmodel.fixed", how=how, approx=APPROXIMATION)),
        figure(id=fid(engine, "ns_per_kv_token"), value=1e9 * per_kv, unit="ns", decimals=1,
               context=ctx, depends_on=deps,
               method=said("stepmodel.per_kv", how=how, approx=APPROXIMATION)),
    ]


# what the bound lacks, by code (the article words each: stepmodel.missing_<code>)
MISSING = {"hbm": "hardware.hbm_tb_s in run.yaml (or a GPU the package's hardware table "
           "knows)", "architecture": "model.architecture in "
           "run.yaml", "kv_bytes": "model.architecture.kv_bytes_per_token_per_layer for the "
           "engine", "tensor_parallel": "the tensor-parallel size (launch settings)",
           "steady": "a steady decode phase (the batch)"}


def hbm_of(run: Run) -> Bandwidth | None:
    """The HBM bandwidth of one GPU: run.yaml's ``hardware.hbm_tb_s``, else the package's
    hardware table for ``hardware.gpu_model`` (core.hardware), else None."""
    return hbm_bandwidth(run.meta.hbm_tb_s, run.meta.hardware.get("gpu_model"))


def _hbm_words(bw: Bandwidth) -> Said:
    """Where a bound's bandwidth came from, for its method."""
    if not bw.from_table:
        return said("stepmodel.hbm_declared", tb_s=f"{bw.tb_s:g}")
    return said("stepmodel.hbm_table", tb_s=f"{bw.tb_s:g}", memory=bw.gpu.memory,
                gpu=bw.gpu.name, source=bw.gpu.source)


def _hbm_provenance(bw: Bandwidth) -> dict[str, str]:
    """A bound resting on the hardware table is assumed (a vendor spec, not a measurement);
    one on run.yaml's value takes what run.yaml says of it (its assumed[] entries)."""
    if not bw.from_table:
        return {}
    return {"provenance": ASSUMED,
            "provenance_why": reason("hardware_table", gpu=bw.gpu.name,
                                     value=f"{bw.tb_s:g} TB/s", source=bw.gpu.source)}


def _missing(run: Run, setup: Setup | None, engine: str, points: list[StepPoint]) -> list[str]:
    arch = run.meta.architecture
    lacking = {"hbm": hbm_of(run) is None, "architecture": arch is None,
               "kv_bytes": arch is not None
               and arch.kv_bytes_per_token_per_layer(engine) is None,
               "tensor_parallel": setup is None or setup.tp is None, "steady": not points}
    return [code for code in MISSING if lacking[code]]


def _bound_figures(run: Run, engine: str, setup: Setup | None, points: list[StepPoint],
                   declared: tuple[Source, ...]) -> tuple[list[Figure], Bound | None]:
    fid = ids.step_model
    missing = _missing(run, setup, engine, points)
    deps = setup.deps if setup else ()
    if missing:
        return [figure(id=fid(engine, "bound"), value=NOT_EVALUABLE, unit="verdict",
                       context={"engine": engine, "missing": missing}, depends_on=deps,
                       method=said("stepmodel.bound_missing", missing=[
                           said("stepmodel.missing_" + m) for m in missing]))], None
    arch, batch, bw = run.meta.architecture, min(p.batch for p in points), hbm_of(run)
    b = bound(arch, bw.tb_s, setup, arch.kv_bytes_per_token_per_layer(engine), batch)
    prov = _hbm_provenance(bw)
    ctx = {"engine": engine, "batch": batch, "tokens_per_step": b.tokens_per_step,
           "tp": setup.tp, "dcp": setup.dcp,
           **({"hbm_gpu": bw.gpu.name} if bw.from_table else {})}
    weights = said("stepmodel.weights", tp=setup.tp, hbm=_hbm_words(bw))
    return [
        figure(id=fid(engine, "bound"), value=EVALUATED, unit="verdict", context=ctx,
               depends_on=deps, sources=declared,
               method=said("stepmodel.bound")),
        figure(id=fid(engine, "experts_per_layer"), value=b.experts_per_layer, unit="count",
               decimals=1, context=ctx, depends_on=deps, sources=declared,
               method=said("stepmodel.experts", batch=batch, verified=1 + setup.drafts,
                           tokens=b.tokens_per_step, formula="E·(1 − (1 − k/E)^T)",
                           e=arch.routed_experts, k=arch.experts_per_token)),
        figure(id=fid(engine, "bound_weights_ms"), value=b.weights_ms, unit="ms", decimals=2,
               context=ctx, depends_on=deps + (fid(engine, "experts_per_layer"),),
               sources=declared, **prov,
               method=said("stepmodel.bound_weights", weights=weights, batch=batch)),
        figure(id=fid(engine, "bound_ns_per_kv_token"), value=b.ns_per_kv_token, unit="ns",
               decimals=2, context=ctx, depends_on=deps, sources=declared, **prov,
               method=said("stepmodel.bound_per_kv", dcp=setup.dcp, hbm=_hbm_words(bw))),
    ], b


def _comparison(engine: str, fixed_ms: float, b: Bound) -> list[Figure]:
    fid = ids.step_model
    deps = (fid(engine, "fixed_ms"), fid(engine, "bound_weights_ms"))
    ctx = {"engine": engine}
    return [
        figure(id=fid(engine, "fixed_vs_bound"),
               value=BELOW_BOUND if fixed_ms < b.weights_ms else ABOVE_BOUND, unit="verdict",
               context=ctx, depends_on=deps,
               method=said("stepmodel.fixed_vs_bound")),
        figure(id=fid(engine, "fixed_over_bound"), value=fixed_ms / b.weights_ms, unit="x",
               decimals=2, context=ctx, depends_on=deps,
               method=said("stepmodel.fixed_over_bound")),
        figure(id=fid(engine, "fixed_minus_bound_ms"), value=fixed_ms - b.weights_ms,
               unit="ms", decimals=2, context=ctx, depends_on=deps,
               method=said("stepmodel.fixed_minus_bound")),
    ]


def _line_figures(engine: str, fixed_ms: float, per_kv_ns: float, b: Bound,
                  batch: int) -> list[Figure]:
    """Where the whole fitted step (fixed + per KV token) lies under the whole bound."""
    fid = ids.step_model
    deps = tuple(fid(engine, n) for n in ("fixed_ms", "ns_per_kv_token", "bound_weights_ms",
                                          "bound_ns_per_kv_token"))
    where, kv = crossover(fixed_ms, per_kv_ns, b.weights_ms, b.ns_per_kv_token)
    ctx = {"engine": engine, "batch": batch}
    out = [figure(id=fid(engine, "line_vs_bound"), value=where, unit="verdict", context=ctx,
                  depends_on=deps,
                  method=said("stepmodel.line_vs_bound"))]
    if kv is None:
        return out
    line = (f"({fid(engine, 'bound_weights_ms')} − {fid(engine, 'fixed_ms')}) ÷ "
            f"({fid(engine, 'ns_per_kv_token')} − {fid(engine, 'bound_ns_per_kv_token')})")
    return out + [
        figure(id=fid(engine, "crossover_kv_tokens"), value=kv, unit="tokens", decimals=0,
               context=ctx, depends_on=deps,
               method=said("stepmodel.crossover_kv", line=line)),
        figure(id=fid(engine, "crossover_context"), value=kv / batch, unit="tokens",
               decimals=0, context=ctx, depends_on=(fid(engine, "crossover_kv_tokens"),),
               method=said("stepmodel.crossover_context", batch=batch)),
    ]


def _points_vs_bound(engine: str, points: list[StepPoint], b: Bound) -> list[Figure]:
    """Each point's step time against its whole bound, and how many lie above it."""
    fid, pid = ids.step_model, ids.step_point
    out, above = [], 0
    for p in points:
        bound_ms = b.weights_ms + b.ns_per_kv_token * p.kv_tokens / 1e6
        above += 1e3 * p.step_s >= bound_ms
        ctx = {"engine": engine, "workload": p.workload, "batch": p.batch}
        bdeps = (fid(engine, "bound_weights_ms"), fid(engine, "bound_ns_per_kv_token"),
                 pid(engine, p.workload, "kv_tokens"))
        out += [
            figure(id=pid(engine, p.workload, "bound_ms"), value=bound_ms, unit="ms",
                   decimals=2, context=ctx, depends_on=bdeps,
                   method=said("stepmodel.point_bound")),
            figure(id=pid(engine, p.workload, "vs_bound"), unit="verdict", context=ctx,
                   value=ABOVE_BOUND if 1e3 * p.step_s >= bound_ms else BELOW_BOUND,
                   depends_on=(pid(engine, p.workload, "step_ms"),
                               pid(engine, p.workload, "bound_ms")),
                   method=said("stepmodel.point_vs_bound"))]
    return out + [figure(
        id=fid(engine, "points_above_bound"), value=above, unit="count", decimals=0,
        context={"engine": engine, "points": len(points)},
        depends_on=tuple(pid(engine, p.workload, "vs_bound") for p in points),
        method=said("stepmodel.points_above"))]


def _pinned_figures(engine: str, points: list[StepPoint], b: Bound) -> list[Figure]:
    """With the fixed cost raised to the bound's weights part, the straight line through the
    point with the most KV tokens: the step it gives at the point with the fewest, and
    whether that is no slower than the fitted one (else no fixed cost at or above the bound
    meets both points with a linear KV cost)."""
    fid, pid = ids.step_model, ids.step_point
    near = min(points, key=lambda p: p.kv_tokens)
    far = max(points, key=lambda p: p.kv_tokens)
    step = pinned_step_s(b.weights_ms / 1e3, near, far)
    ctx = {"engine": engine, "workload": near.workload, "through": far.workload,
           "batch": near.batch}
    deps = (fid(engine, "bound_weights_ms"), pid(engine, far.workload, "step_ms"),
            pid(engine, far.workload, "kv_tokens"), pid(engine, near.workload, "kv_tokens"))
    line = said("stepmodel.pinned_line", far=far.workload)
    return [
        figure(id=fid(engine, "pinned_step_ms"), value=1e3 * step, unit="ms", decimals=1,
               context=ctx, depends_on=deps,
               method=said("stepmodel.pinned_step", near=near.workload, line=line)),
        figure(id=fid(engine, "pinned_tps"), value=near.batch * near.accept_len / step,
               unit="tok/s", decimals=0, context=ctx,
               depends_on=(fid(engine, "pinned_step_ms"), pid(engine, near.workload, "step_ms")),
               method=said("stepmodel.pinned_tps", batch=near.batch, near=near.workload)),
        figure(id=fid(engine, "bound_fixed_fits"), unit="verdict", context=ctx,
               value=YES if step <= near.step_s else NO,
               depends_on=(fid(engine, "pinned_step_ms"), pid(engine, near.workload, "step_ms")),
               method=said("stepmodel.pinned_fits", line=line, near=near.workload)),
    ]


def _generator_figures(engine: str, g: Generator) -> list[Figure]:
    fid = ids.step_model
    ctx = {"engine": engine, "dcp": g.dcp}
    return [
        figure(id=fid(engine, "generator_fixed_ms"), value=g.fixed_ms, unit="ms", decimals=2,
               context=ctx, sources=g.source(f"engines.{engine}.decode_step_fixed_ms"),
               method=said("stepmodel.generator_fixed")),
        figure(id=fid(engine, "generator_ns_per_kv_token"), value=g.ns_per_kv_token / g.dcp,
               unit="ns", decimals=1, context=ctx,
               sources=g.source(f"engines.{engine}.decode_ns_per_kv_token"),
               method=said("stepmodel.generator_per_kv", dcp=g.dcp)),
    ]


def _against_bound(engine: str, fitted: dict[str, float], b: Bound,
                   points: list[StepPoint]) -> list[Figure]:
    """The fit set against the bound: its fixed part, its whole line, each point, and (the
    fixed part below the bound) whether a fixed cost at the bound could meet the points."""
    fixed = fitted[ids.step_model(engine, "fixed_ms")]
    per_kv = fitted[ids.step_model(engine, "ns_per_kv_token")]
    out = _comparison(engine, fixed, b)
    out += _line_figures(engine, fixed, per_kv, b, min(p.batch for p in points))
    out += _points_vs_bound(engine, points, b)
    if fixed < b.weights_ms:
        out += _pinned_figures(engine, points, b)
    return out


def step_figures(run: Run, registry: dict[str, Figure], setups: dict[str, Setup],
                 generators: dict[str, Generator] | None = None,
                 declared: tuple[Source, ...] = ()) -> list[Figure]:
    """Per engine: the step model's points and fit, its memory-bandwidth lower bound and how
    the two compare, and (a reconstruction) what the generator assumed. ``registry``: the
    decode, spec and workload figures by id; ``declared``: run.yaml, where the bound's
    inputs are declared."""
    out: list[Figure] = []
    for e in run.meta.engines:
        setup = setups.get(e.id)
        points = points_of(run, registry, e.id, setup or Setup(tp=None))
        if not any(registry.get(ids.decode(w.id, e.id, "steady")) for w in run.meta.workloads):
            continue              # the engine has no decode figures at all: nothing to model
        for p in points:
            out += _point_figures(e.id, p)
        fitted = _fit_figures(e.id, points)
        out += fitted
        figs, b = _bound_figures(run, e.id, setup, points, declared)
        out += figs
        if b is not None and len(fitted) > 1:
            out += _against_bound(e.id, {f.id: f.value for f in fitted}, b, points)
        if generators and e.id in generators:
            out += _generator_figures(e.id, generators[e.id])
    return out


# --- from a run's files --------------------------------------------------------------------

def _int(value: object) -> int | None:
    head = str(value).split(" ")[0] if value is not None else ""
    return int(head) if head.isdigit() else None


def setups_of(run: Run, ing) -> dict[str, Setup]:
    """Each engine's TP, DCP and draft tokens as launched or logged (the settings check's
    values, analyses/caveats.py; draft tokens from analyses/spec.py)."""
    from .caveats import setting_caveats
    from .spec import draft_tokens

    _, compared = setting_caveats(run, ing)
    out = {}
    for e in run.meta.engines:
        def value(sid: str, eid: str = e.id) -> object:
            return compared[sid].values.get(eid) if sid in compared else None
        drafts = draft_tokens(ing, e.id)
        deps = tuple(ids.setting(sid, e.id) for sid in ("tensor_parallel", "dcp",
                                                        "draft_tokens")
                     if value(sid) is not None)
        out[e.id] = Setup(tp=_int(value("tensor_parallel")), dcp=_int(value("dcp")) or 1,
                          drafts=drafts[0] if drafts else 0, deps=deps)
    return out


def generators_of(run: Run) -> dict[str, Generator]:
    """A reconstruction's step model per engine, from its scenario; {} for a measured run."""
    if not run.meta.reconstruction or not run.meta.scenario:
        return {}
    from ..core.tables import input_checksum
    from ..synth.scenario import load_scenario

    path = run.paths.described(run.meta.scenario)
    rel = run.paths.rel(run.paths.data / run.meta.scenario)
    sha = input_checksum(run, run.paths.data / run.meta.scenario)
    return {e.id: Generator(fixed_ms=1e3 * e.model.step_fixed_s,
                            ns_per_kv_token=1e9 * e.model.step_per_kv_token_s,
                            dcp=e.model.dcp, path=rel, sha256=sha)
            for e in load_scenario(path).engines}


def declared_source(run: Run) -> tuple[Source, ...]:
    """run.yaml, where the bound's inputs are declared (none declared: no source)."""
    if run.meta.architecture is None and run.meta.hbm_tb_s is None \
            and hbm_of(run) is None:
        return ()
    from ..core.tables import input_checksum

    return (Source(path=run.paths.rel(run.paths.run_yaml),
                   sha256=input_checksum(run, run.paths.run_yaml),
                   key="hbm_tb_s, architecture" if run.meta.hbm_tb_s is not None
                   else "gpu_model, architecture"),)


def stepmodel_figures(run: Run, ing, figures: list[Figure]) -> list[Figure]:
    """What the decode notebook calls: ``figures`` are its decode figures; the spec and
    workload figures are computed here to read (they are registered by their notebooks)."""
    from .spec import spec_figures

    registry = {f.id: f for f in [*figures, *spec_figures(run, ing)]}
    return step_figures(run, registry, setups_of(run, ing), generators_of(run),
                        declared_source(run))
