"""The article's step-model section: per engine, the decode step split into a fixed cost and
a cost per KV token, beside its memory-bandwidth lower bound and (a reconstruction) the
generator's assumed model; one sentence per engine picked by the computed comparison."""

from __future__ import annotations

from functools import partial

from markupsafe import Markup, escape

from ..core import ids
from ..core.i18n import format_value, sentence
from ..core.verdicts import BELOW_BOUND, NOT_EVALUABLE
from .narrative_base import Writer
from .sections import Section, Table

COLUMNS = ("fixed_ms", "ns_per_kv_token", "generator_fixed_ms", "generator_ns_per_kv_token",
           "bound_weights_ms", "bound_ns_per_kv_token")
HEADERS = ("col_fixed", "col_per_kv", "col_generator_fixed", "col_generator_per_kv",
           "col_bound_fixed", "col_bound_per_kv")
GENERATOR = ("generator_fixed_ms", "generator_ns_per_kv_token")


def _cell(w: Writer, fid: str) -> Markup:
    return w.fig(fid).html if w.has(fid) else Markup("–")


def _verdict(w: Writer, engine: str) -> Markup | None:
    """The sentence the comparison of the fitted fixed cost with its bound picks."""
    fid = partial(ids.step_model, engine)
    if not w.has(fid("fixed_vs_bound")):
        return None
    below = w.registry[fid("fixed_vs_bound")].value == BELOW_BOUND
    # above the bound, the excess reads as compute and communication, unless a
    # reconstruction's generator set the fixed cost: then it is that input, said so
    key = "below" if below else "above_generated" if w.generated(fid("fixed_ms")) else "above"
    return sentence(w.t["stepmodel." + key], engine=w.name(engine),
                    fixed=w.fig(fid("fixed_ms")), bound=w.fig(fid("bound_weights_ms")),
                    experts=w.fig(fid("experts_per_layer")),
                    ratio=w.fig(fid("fixed_over_bound")),
                    diff=w.fig(fid("fixed_minus_bound_ms")))


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


def stepmodel_section(w: Writer) -> Section | None:
    """None when no engine has a step model (no decode figures at all)."""
    t = w.t
    engines = [e for e in w.run.meta.engines if w.has(ids.step_model(e.id, "fit"))]
    if not engines:
        return None
    generated = any(w.has(ids.step_model(e.id, GENERATOR[0])) for e in engines)
    columns = [c for c in COLUMNS if generated or c not in GENERATOR]
    header = [t["table.engine"]] + [t["stepmodel." + h] for c, h in zip(COLUMNS, HEADERS,
                                                                           strict=True)
                                    if c in columns]
    rows, notes = [], []
    for e in engines:
        rows.append([Markup(escape(e.name))]
                    + [_cell(w, ids.step_model(e.id, c)) for c in columns])
        notes += _not_evaluable(w, e.id)
        verdict = _verdict(w, e.id)
        if verdict is not None:
            notes.append(verdict)
    paras = [sentence(t["stepmodel.intro"]), sentence(t["stepmodel.bound"])]
    if generated:
        paras.append(sentence(t["stepmodel.model_derived"]))
    # a table of dashes says nothing the sentences do not: shown when one number is there
    shown = any(w.has(ids.step_model(e.id, c)) for e in engines for c in columns)
    table = Table(header=header, rows=rows, numeric=tuple(range(1, len(header))))
    return Section("stepmodel", t["stepmodel.heading"], paras + notes,
                   [table] if shown else [])
