"""The article's step-model section: per engine, the decode step split into a fixed cost and
a cost per KV token, beside its memory-bandwidth lower bound and (a reconstruction) the
generator's assumed model; one sentence per engine picked by the computed comparison."""

from __future__ import annotations

from functools import partial

from markupsafe import Markup, escape

from ..core import ids
from ..core.i18n import format_value, sentence
from ..core.provenance import FREE
from ..core.verdicts import (
    ALWAYS_BELOW,
    BELOW_BEYOND,
    BELOW_BOUND,
    BELOW_UNTIL,
    NO,
    NOT_EVALUABLE,
)
from .narrative_base import Writer
from .sections import Section, Table, figure_cell

COLUMNS = ("fixed_ms", "ns_per_kv_token", "generator_fixed_ms", "generator_ns_per_kv_token",
           "bound_weights_ms", "bound_ns_per_kv_token")
HEADERS = ("col_fixed", "col_per_kv", "col_generator_fixed", "col_generator_per_kv",
           "col_bound_fixed", "col_bound_per_kv")
GENERATOR = ("generator_fixed_ms", "generator_ns_per_kv_token")


# the sentence the whole fitted line against the whole bound picks (else the fixed part's)
LINE_KEYS = {BELOW_UNTIL: "below_until", BELOW_BEYOND: "below_beyond",
             ALWAYS_BELOW: "below"}


def _points(w: Writer, engine: str) -> Markup | None:
    """Each point's step against its bound, the sentence picked by how many lie above."""
    fid = ids.step_model(engine, "points_above_bound")
    if not w.has(fid):
        return None
    above, n = w.registry[fid].value, w.registry[fid].context["points"]
    pairs = [sentence(w.t["stepmodel.point_vs_bound"], label=wl.label,
                      step=w.fig(ids.step_point(engine, wl.id, "step_ms")),
                      bound=w.fig(ids.step_point(engine, wl.id, "bound_ms")))
             for wl in w.run.meta.workloads
             if w.has(ids.step_point(engine, wl.id, "vs_bound"))]
    key = "points_above" if above == n else "points_below" if above == 0 else "points_mixed"
    return sentence(w.t["stepmodel." + key], points=Markup("; ").join(pairs),
                    n=w.fig(fid))


def _pinned(w: Writer, engine: str) -> Markup | None:
    """When no fixed cost at or above the bound meets both points: what pinning it gives."""
    fid = partial(ids.step_model, engine)
    if not w.has(fid("bound_fixed_fits")) or w.registry[fid("bound_fixed_fits")].value != NO:
        return None
    ctx = w.registry[fid("pinned_step_ms")].context
    label = {wl.id: wl.label for wl in w.run.meta.workloads}
    return sentence(w.t["stepmodel.pinned"], bound=w.fig(fid("bound_weights_ms")),
                    far=label[ctx["through"]], near=label[ctx["workload"]],
                    far_step=w.fig(ids.step_point(engine, ctx["through"], "step_ms")),
                    pinned=w.fig(fid("pinned_step_ms")), tps=w.fig(fid("pinned_tps")),
                    step=w.fig(ids.step_point(engine, ctx["workload"], "step_ms")))


def _verdict(w: Writer, engine: str) -> Markup | None:
    """The sentences the comparison of the fitted step with its bound picks: the whole line
    against the whole bound, each point against its own, and what a reconstruction set."""
    fid = partial(ids.step_model, engine)
    if not w.has(fid("fixed_vs_bound")):
        return None
    below = w.registry[fid("fixed_vs_bound")].value == BELOW_BOUND
    generated = w.generated(fid("fixed_ms"))
    line = w.registry[fid("line_vs_bound")].value if w.has(fid("line_vs_bound")) else None
    # above the bound, the excess reads as compute and communication, unless a
    # reconstruction's generator set the fixed cost: then it is that input, said so
    key = LINE_KEYS.get(line) or ("below" if below else "above_generated" if generated
                                  else "above")
    out = [sentence(w.t["stepmodel." + key], engine=w.name(engine),
                    fixed=w.fig(fid("fixed_ms")), bound=w.fig(fid("bound_weights_ms")),
                    experts=w.fig(fid("experts_per_layer")),
                    ratio=w.fig(fid("fixed_over_bound")),
                    diff=w.fig(fid("fixed_minus_bound_ms")),
                    **_crossing(w, engine, key))]
    if key in LINE_KEYS.values():
        out += [_points(w, engine)]
        if generated and w.has(fid("generator_fixed_ms")):
            out.append(sentence(w.t["stepmodel.fixed_generated"],
                                generator=w.fig(fid("generator_fixed_ms"))))
        out.append(_pinned(w, engine))
    return Markup(" ").join(m for m in out if m is not None)


def _crossing(w: Writer, engine: str, key: str) -> dict:
    """The line sentences' own values: the costs per KV token and where the lines cross."""
    fid = partial(ids.step_model, engine)
    if key not in LINE_KEYS.values():
        return {}
    out = {"per_kv": w.fig(fid("ns_per_kv_token")),
           "bound_per_kv": w.fig(fid("bound_ns_per_kv_token"))}
    if w.has(fid("crossover_kv_tokens")):
        out |= {"kv": w.fig(fid("crossover_kv_tokens")),
                "context": w.fig(fid("crossover_context")),
                "batch": format_value(w.registry[fid("crossover_context")].context["batch"],
                                      "count", w.lang)}
    return out


def _mark(w: Writer, column: str, engines: list[str]) -> str:
    """A column header's provenance mark, from its figures' provenance: assumed, the
    reconstruction's model or seed, calibrated (a reconstruction), else none."""
    return w.mark(*(ids.step_model(e, column) for e in engines))


def _seeded(w: Writer, engines) -> list[Markup]:
    """The points whose step time rests on a steady mean the seed drew: the fit moves
    with that draw (none for a real run, none for published means)."""
    points = [f"{e.name} {wl.label}" for e in engines for wl in w.run.meta.workloads
              if w.has(ids.step_point(e.id, wl.id, "step_ms"))
              and w.provenance(ids.step_point(e.id, wl.id, "step_ms")) == FREE]
    return [sentence(w.t["stepmodel.seeded"], points=", ".join(points))] if points else []


def _not_evaluable(w: Writer, engine: str) -> list[Markup]:
    t, fid = w.t, partial(ids.step_model, engine)
    out = []
    fit = w.registry[fid("fit")]
    if fit.value == NOT_EVALUABLE:
        out.append(sentence(t["stepmodel.not_fitted"], engine=w.name(engine),
                            n=format_value(fit.context.get("points", 0), "count", w.lang)))
    bound = w.registry.get(fid("bound"))
    if bound is not None and bound.value == NOT_EVALUABLE:
        missing = [t["stepmodel.missing_" + m] for m in bound.context.get("missing", [])]
        out.append(sentence(t["stepmodel.no_bound"], engine=w.name(engine),
                            missing=w.and_list(missing)))
    return out


def _bound_sentence(w: Writer, engines) -> Markup:
    """How the bound is made; where run.yaml gives no HBM bandwidth, that the vendor's
    specification from the package's hardware table stands in (which GPU)."""
    gpus = [w.registry[f].context["hbm_gpu"] for f in
            (ids.step_model(e.id, "bound_weights_ms") for e in engines)
            if w.has(f) and w.registry[f].context.get("hbm_gpu")]
    if gpus:
        return sentence(w.t["stepmodel.bound_table"], gpu=gpus[0])
    return sentence(w.t["stepmodel.bound"])


def stepmodel_section(w: Writer) -> Section | None:
    """None when no engine has a step model (no decode figures at all)."""
    t = w.t
    engines = [e for e in w.run.meta.engines if w.has(ids.step_model(e.id, "fit"))]
    if not engines:
        return None
    generated = any(w.has(ids.step_model(e.id, GENERATOR[0])) for e in engines)
    columns = [c for c in COLUMNS if generated or c not in GENERATOR]
    ids_ = [e.id for e in engines]
    header = [t["table.engine"]] + [t["stepmodel." + h] + _mark(w, c, ids_)
                                    for c, h in zip(COLUMNS, HEADERS, strict=True)
                                    if c in columns]
    rows, notes = [], []
    for e in engines:
        rows.append([Markup(escape(e.name))]
                    + [figure_cell(w, ids.step_model(e.id, c)) for c in columns])
        notes += _not_evaluable(w, e.id)
        verdict = _verdict(w, e.id)
        if verdict is not None:
            notes.append(verdict)
    paras = [sentence(t["stepmodel.intro"]), _bound_sentence(w, engines)]
    if generated:
        paras.append(sentence(t["stepmodel.model_derived"]))
        paras += _seeded(w, engines)
    # a table of dashes says nothing the sentences do not: shown when one number is there
    shown = any(w.has(ids.step_model(e.id, c)) for e in engines for c in columns)
    table = Table(header=header, rows=rows, numeric=tuple(range(1, len(header))))
    return Section("stepmodel", t["stepmodel.heading"], paras + notes,
                   [table] if shown else [])
