"""A checked claim's values and reasons in a reader's words.

The claim check (analyses.claimcheck) records what it compared as data: engine ids, the
stat names the published text used (``max``, ``per_request``), figure ids, setting ids.
Readers see none of those: this module words each through the catalogue (``claimkey.*``,
``setting.*``, engine names, workload labels), and links figure values to their derivation.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from ..core import ids
from ..core.claims import SHARE_PARAMS
from ..core.i18n import UNITS, format_number, format_value, sentence
from .narrative_base import Writer

# Reasons whose {which} or {missing} lists setting ids, engine ids or figure ids.
SETTING_LISTS = ("differs_listed", "not_all_differ", "settings_differ")
ENGINE_LISTS = ("engine_without_events",)
FIGURE_LISTS = ("events_differ", "missing", "sources_disagree")


def decimals_of(value: Any) -> int | None:
    """How many decimals a published number was written with (335 -> 0, 18.6 -> 1)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    text = repr(value)
    return 0 if float(value).is_integer() else len(text.split(".")[1]) if "." in text else None


def number(value: float | int, decimals: int | None = None) -> str:
    """A published or recomputed number: thousands grouped; ``decimals`` as the published
    number it is set against was written, else at most two."""
    if decimals is not None:
        return format_number(value, decimals)
    if float(value).is_integer():
        return format_number(value, 0)
    # two decimals below 100 (20.29 ms), one above (332.5 tok/s): a recomputed value shows
    # one digit more than the published numbers it is set against, not every digit it has
    return format_number(value, 2 if abs(value) < 100 else 1).rstrip("0").rstrip(".")


def _setting_key(w: Writer, key: str) -> tuple[str, str] | None:
    """(setting id, engine) of a ``setting.<sid>.<e>`` id or of ``<sid>.<e>`` as the
    settings check keys its values; else None."""
    engines = {e.id for e in w.run.meta.engines}
    if ids.family(key) == "setting":
        return ids.parse_setting(key)
    pair = ids.parse_setting_pair(key)
    return pair if pair is not None and pair[1] in engines else None


def key_label(w: Writer, key: str) -> str:
    """What a key of a claim's value names, in the reader's language."""
    engines = {e.id for e in w.run.meta.engines}
    if key in engines:
        return w.engine_name(key)
    if " vs " in key:
        a, b = key.split(" vs ", 1)
        return w.t["claims.versus"].format(a=key_label(w, a), b=key_label(w, b))
    parsed = _setting_key(w, key)
    if parsed is not None:
        sid, engine = parsed
        return f"{w.engine_name(engine)} {w.t.get('setting.' + sid, sid)}"
    if key in w.registry:
        fig = w.registry[key]
        parts = []
        if fig.context.get("engine"):
            parts.append(w.engine_name(str(fig.context["engine"])))
        if fig.context.get("workload"):
            try:
                parts.append(w.run.meta.workload(str(fig.context["workload"])).label)
            except KeyError:
                parts.append(str(fig.context["workload"]))
        family = w.t.get("claimfamily." + ids.family(key), "")
        parts.append(f"{family} {key_label(w, ids.leaf(key))}".strip())
        return " ".join(parts)
    # a stat name of the published text (max, per_request): the catalogue's word, else the
    # name as claims.yaml spells it (it is the run author's, not ours)
    return w.t.get("claimkey." + key, key.replace("_", " "))


def key_units(w: Writer, fig_ids: list[str]) -> dict[str, str]:
    """The unit of each stat a claim's value names (``max``, ``ms_per_token``), from the
    figures the claim rests on whose last part is that name (units a reader is shown only:
    a setting's or a verdict's is none)."""
    return {ids.leaf(f): w.registry[f].unit for f in fig_ids
            if f in w.registry and w.registry[f].unit in UNITS[w.lang]}


def value_text(w: Writer, value: Any, key: str | None = None, like: Any = None,
               unit: str | None = None, units: dict[str, str] | None = None) -> Markup:
    """A published or recomputed value: labels for keys, numbers grouped, figure values
    linked and in their units. ``like``: the published value a recomputed one is set
    against; its numbers' precision is the recomputed numbers' too (332.46 reads 332
    against a published 335). ``unit``: the claim's unit (claims.yaml), given to a plain
    number or to each engine's number; a mapping of other keys keeps its numbers bare,
    since its entries need not share the unit, unless ``units`` (``key_units``) is
    given: then each key takes its figure's unit, else the claim's."""
    if value is None:
        return Markup("–")
    if key is not None and key in w.registry:
        return w.fig(key).html
    if isinstance(value, dict) and unit and all(
            str(k) in {e.id for e in w.run.meta.engines} for k in value):
        likes = like if isinstance(like, dict) else {}
        return Markup(", ").join(
            Markup("{} {}").format(w.engine_name(str(k)),
                                   value_text(w, v, None, likes.get(k), unit))
            for k, v in value.items())
    if isinstance(value, int | float) and not isinstance(value, bool) and unit:
        places = decimals_of(like if like is not None else value)
        if places is None or places > 2:      # a computed value, with no published twin
            places = 0 if float(value).is_integer() else 2 if abs(value) < 100 else 1
        return Markup(escape(format_value(value, unit, w.lang, places)))
    if isinstance(value, dict):
        labels = {str(k): key_label(w, str(k)) for k in value}
        settings = {_setting_key(w, k) for k in labels}
        if len(labels) > 1 and None not in settings and len({sid for sid, _ in settings}) == 1:
            # one setting of several engines: the engines' names say it
            labels = {k: w.engine_name(_setting_key(w, k)[1]) for k in labels}
        likes = like if isinstance(like, dict) else {"value": like}
        # with ``units`` given, a key with no figure of its own takes the claim's unit
        own = {str(k): (units or {}).get(str(k), unit if units is not None else None)
               for k in value}
        return Markup(", ").join(
            Markup("{} {}").format(labels[str(k)],
                                   value_text(w, v, str(k), likes.get(k), own[str(k)]))
            for k, v in value.items())
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):      # setting ids
            return Markup(escape(", ".join(w.t.get("setting." + v, v) for v in value)))
        if all(isinstance(v, int | float) for v in value):        # a sequence in time
            places = decimals_of(like[0]) if isinstance(like, list) and like else None
            return Markup(escape(" → ".join(number(v, places) for v in value)))
        return Markup("; ").join(value_text(w, v) for v in value)
    if isinstance(value, bool):
        return Markup(escape(w.t["value.yes" if value else "value.no"]))
    if isinstance(value, int | float) and key is not None and " vs " in key:
        # how far apart two figures are, as a share of the larger (analyses.claimcheck)
        return Markup(escape(format_value(round(100 * value), "%", w.lang, 0)))
    if isinstance(value, int | float):
        return Markup(escape(number(value, decimals_of(like))))
    return Markup(escape(w.setting_words(str(value))))


def figures_text(w: Writer, keys: list[str]) -> Markup:
    """Figure ids labelled and linked, other keys labelled."""
    return Markup(", ").join(
        Markup("{} {}").format(key_label(w, f), w.fig(f).html) if f in w.registry
        else Markup(escape(key_label(w, f))) for f in keys if f)


def _setting_was(w: Writer, item: dict[str, Any]) -> str:
    """One setting that differs from the claim: which, of which engine, what it was."""
    return w.t["claims.setting_was"].format(
        setting=w.t.get("setting." + item["sid"], item["sid"]),
        engine=w.engine_name(item["engine"]), value=w.setting_words(str(item["have"])))


def _list_words(w: Writer, reason: str, items: list) -> Any:
    """A reason's {which} or {missing} list in words: by what the reason lists."""
    if reason in SETTING_LISTS:
        return ", ".join(w.t.get("setting." + s, s) for s in items)
    if reason in ENGINE_LISTS:
        return ", ".join(w.engine_name(e) for e in items)
    if reason in FIGURE_LISTS:
        return figures_text(w, items)
    if reason == "setting_differs":
        return "; ".join(_setting_was(w, item) for item in items)
    if reason == "not_similar":
        return "; ".join(key_label(w, k) for k in items)
    return ", ".join(str(x) for x in items)      # values as the data has them (winner)


def reason_params(w: Writer, reason: str, params: dict[str, Any]) -> dict[str, Any]:
    """A reason's placeholders in words: setting names for setting ids, engine names for
    engine ids, labelled and linked values for figure ids. ``params`` as the claim check
    recorded them (claims.json): lists stay lists, a setting that differs a mapping."""
    out: dict[str, Any] = dict(params)
    out.setdefault("alternatives", "")
    if params.get("alternatives"):
        out["alternatives"] = figures_text(w, params["alternatives"])
    for name in ("keys", "declared_keys", "sources"):
        if name in params:
            out[name] = ", ".join(key_label(w, k) for k in params[name] if k)
    for name, form in SHARE_PARAMS.items():
        if name in params:
            out[name] = form.format(float(params[name]))
    for name in ("which", "missing"):
        if isinstance(params.get(name), list):
            out[name] = _list_words(w, reason, params[name]) if params[name] else ""
    return out


def reason_text(w: Writer, reason: str, params: dict[str, Any]) -> Markup:
    key = f"reason.{reason}"
    if params.get("keys") == ["value"] and f"{key}_one" in w.t:   # one value: no key to name
        key += "_one"
    if reason == "cold_start" and w.run.meta.reconstruction:   # where the generator put them
        key = "reason.cold_start_reconstruction"
    return sentence(w.t[key], **reason_params(w, reason, params))
