"""Figures as linked, localized text for one language (shared by the article's builders)."""

from __future__ import annotations

import re
from typing import Any, Protocol

from markupsafe import Markup, escape

from ..core import ids, methods, provenance
from ..core.display import shorten
from ..core.figures import Figure, listed
from ..core.i18n import UNITS, Name, format_number, format_value, josa
from ..core.metrics import TIE
from ..core.records import Run

# words benchreport writes into a setting's value (analyses.caveats): worded per language
_DRAFTS = re.compile(r"(\d+) draft tokens\b")
_NOTE = re.compile(r"\((default|auto|method not stated|set by the engine)\)")
_WORDS = ("default", "non-adaptive", "unpinned", "on", "off")
_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")


SECONDS_FROM_MS = 10_000


def why_text(why: str, t: dict[str, str], lang: str, assumed=()) -> Markup:
    """What set a figure, in the reader's language: a why in words (core.provenance.reason)
    from the catalogue, its parameters (scenario keys and values, figure ids) as they are in
    a code face; run.yaml's assumption in its own words; the scenario's text in a code face."""
    from ..core.i18n import sentence

    parsed = provenance.parse_reason(why)
    if parsed is None:
        return _scenario_words(why, t, lang) if why else Markup("")
    key, params = parsed
    if key == "assumption":          # run.yaml's own words, no scenario text
        return Markup(escape(provenance.reason_words(why, t, lang, assumed)))
    return sentence(t["provwhy." + key], **{k: Markup("<code>{}</code>").format(v)
                                        for k, v in params.items()})


# a scenario key and the value that follows it in a why ("decode_step_fixed_ms 1.3")
_SCENARIO_KEY = re.compile(r"\b([a-z][a-z_]*[a-z])\b(?: (\d[\d.]*))?")
# the unit a key's name carries, said after its value in words
_KEY_UNITS = {"decode_step_fixed_ms": "ms", "decode_ns_per_kv_token": "ns", "arrival_gap": "s"}


def _scenario_words(why: str, t: dict[str, str], lang: str) -> Markup:
    """A scenario's own text (its keys, values and signs) in the reader's words: each key
    the catalogue names (``genword.<key>``) as words with its value and unit; what it does
    not name stays as it is, in a code face."""
    def words(m: re.Match) -> str:
        key, value = m[1], m[2]
        if "genword." + key not in t:
            return m[0]
        said = t["genword." + key]
        if value and key in _KEY_UNITS:     # the value as the scenario wrote it, its unit
            return f"{said} {format_value(value, _KEY_UNITS[key], lang)}"
        return f"{said} {value}" if value else said

    text = _SCENARIO_KEY.sub(words, why)
    return Markup(escape(text)) if text != why else Markup("<code>{}</code>").format(why)


def anchor(fig_id: str) -> str:
    return "fig-" + fig_id.replace(".", "-")


# from this many characters on, a list of what set a figure is spelled out once per page
LONG_INPUTS = 60


class EngineNames(Protocol):
    def engine(self, engine_id: str) -> Any: ...      # has .name


class Subject(Protocol):
    """What a Writer writes about when it is not one run: the runs of a comparison, of which
    it needs only the engines' names (``meta.engine(id).name``); the sentences that read a
    run's workloads or settings are not asked of it."""

    @property
    def meta(self) -> EngineNames: ...


# caveats a reconstruction's article says in full elsewhere (see Writer.__init__)
RECONSTRUCTION_SAID = frozenset({"generated.table", "generated.note",
                                 "claims.generated_reason"})


class Writer:
    """Turns registry figures into linked, localized text for one language."""

    def __init__(self, run: Run | Subject, registry: dict[str, Figure], lang: str,
                 t: dict[str, str]):
        self.run, self.registry, self.lang, self.t = run, registry, lang, t
        self.cited: set[str] = set()          # ids of the figures the text links to
        self.listed: set[tuple[str, str]] = set()   # long input lists already spelled out
        self.said: set[str] = set()           # caveats already said in full (``once``)
        if getattr(getattr(run, "meta", None), "reconstruction", None):
            # a reconstruction's notice, its unanswered questions, the claim check's legend
            # and the appendices' opening say once, in full, that its figures are the
            # generator's: its tables and claim reasons say only which inputs set them
            self.said |= RECONSTRUCTION_SAID

    def engine_name(self, engine_id: str) -> str:
        try:
            return self.run.meta.engine(engine_id).name
        except KeyError:
            return engine_id

    def name(self, engine_id: str) -> Name:
        """An engine's display name for a sentence (plain, no link)."""
        text = self.engine_name(engine_id)
        return Name(text, Markup(escape(text)))

    def setting_words(self, value: str) -> str:
        """A launch setting's value as shown: the words benchreport adds to what the
        launch file or log said ("(default)", "7 draft tokens", "non-adaptive") in the
        reader's language; the engine's own values (flags, backends, paths) as they are."""
        t = self.t
        if value.isdigit() and len(value) > 3:      # a token count: grouped like every number
            return format_number(int(value), 0)
        value = _DRAFTS.sub(lambda m: t["settingword.draft_tokens"].format(n=m[1]), value)
        value = _NOTE.sub(lambda m: f"({t['settingword.' + m[1].replace(' ', '_')]})", value)
        # a value from the files (a chat template given inline …) shows its start
        return t["settingword." + value] if value in _WORDS else shorten(value)

    def in_seconds(self, fig: Figure) -> bool:
        """A latency of ten seconds or more reads as seconds (294.4 s, not 294,362.4 ms);
        so does every statistic of a metric whose largest value does (one unit per table
        row and per ledger group)."""
        if fig.unit != "ms" or not isinstance(fig.value, int | float) \
                or isinstance(fig.value, bool):
            return False
        if abs(fig.value) >= SECONDS_FROM_MS:
            return True
        parts = ids.parse_latency(fig.id)
        if parts is not None:
            top = self.registry.get(ids.latency(*parts[:3], "max"))
            return top is not None and isinstance(top.value, int | float) \
                and top.value >= SECONDS_FROM_MS
        return False

    def text(self, fig: Figure) -> str:
        if self.in_seconds(fig):
            return format_value(fig.value / 1000, "s", self.lang, 1)
        if fig.unit == "engine":
            return self.t["words.tie"] if fig.value == TIE else self.engine_name(str(fig.value))
        if fig.value is None:
            return "–"
        if fig.unit == "fraction":      # shares read as percentages, one decimal
            parts = listed(fig.value)
            if all(_DECIMAL.fullmatch(p) for p in parts):
                return ", ".join(format_value(100 * float(p), "%", self.lang, 1)
                                 for p in parts)
        if fig.unit == "setting":
            return self.setting_words(str(fig.value))
        if fig.unit == "verdict":
            # a verdict's code in words, where the catalogue has them
            code = str(fig.value)
            return self.t.get("value." + code, self.t.get("verdict." + code, code))
        if isinstance(fig.value, str) and fig.unit not in UNITS[self.lang]:
            return fig.value
        return format_value(fig.value, fig.unit, self.lang, fig.decimals)

    def fig(self, fig_id: str) -> Name:
        """A figure as a link to its derivation entry."""
        fig = self.registry[fig_id]
        self.cited.add(fig_id)
        plain = self.text(fig)
        html = Markup('<a class="fig" href="#{}">{}</a>').format(anchor(fig_id), plain)
        return Name(text=plain, html=html)

    def link(self, fig_id: str, label: str) -> Markup:
        """``label`` (escaped) as a link to a figure's derivation entry."""
        self.cited.add(fig_id)
        return Markup('<a class="fig" href="#{}">{}</a>').format(anchor(fig_id), label)

    def measured_engines(self) -> list[str]:
        """The engines with at least one benchmark point (its validity figure), in the
        order run.yaml lists them: a sentence about "the engines" needs two."""
        found = {f.context.get("engine") for fid, f in self.registry.items()
                 if (ids.parse_point(fid) or ("", ""))[1] == "validity"}
        return [e.id for e in self.run.meta.engines if e.id in found]

    def and_list(self, names: list[str]) -> str:
        """Names joined as the reader's language lists them: "A, B and C" / "A, B 및 C"."""
        if len(names) < 2:
            return "".join(names)
        if self.lang == "ko":       # "A, B와 C": the particle follows the last but one
            said = Markup(names[-2]).striptags() if isinstance(names[-2], Markup) \
                else str(names[-2])
            return ", ".join([*names[:-2], names[-2] + josa(said, "과/와")]) + " " + names[-1]
        return ", ".join(names[:-1]) + f" {self.t['conclusion.and']} " + names[-1]

    def one_engine(self) -> bool:
        """One engine measured; with no point figures at all, one engine in run.yaml."""
        measured = self.measured_engines()
        return len(measured or self.run.meta.engines) < 2

    def has(self, *ids: str) -> bool:
        return all(i in self.registry for i in ids)

    def provenance(self, *fig_ids: str) -> str:
        """The weakest provenance of the figures (core.provenance)."""
        return provenance.of(self.registry, fig_ids)

    def generated(self, *fig_ids: str) -> bool:
        """Whether the figures come from a reconstruction's model or seed: a sentence that
        compares, explains or concludes from them would state no finding."""
        return self.provenance(*fig_ids) in provenance.GENERATED

    def set_by(self, *fig_ids: str, also: list[str] | None = None) -> dict[str, Markup | str]:
        """What set the figures, as a sentence names it: ``kind`` (their weakest provenance,
        in words) and ``inputs`` (what gave them that provenance; ``also``: assumptions
        they rest on besides)."""
        kind = self.provenance(*fig_ids)
        found = provenance.origins(self.registry, fig_ids, kind)
        if not found:
            return {"kind": self.t["provenance." + kind.replace("-", "_")],
                    "inputs": self.inputs_text([], also)}
        origins = self.inputs_text(found)
        also = self.not_named(also or [], origins)
        # a long list of the generator's inputs is spelled out once; later "as above"
        if len(Markup(origins).striptags()) >= LONG_INPUTS:
            if (kind, str(origins)) in self.listed:
                origins = Markup(escape(self.t["generated.as_above"]))
            else:
                self.listed.add((kind, str(origins)))
        inputs = Markup("; ").join([origins, *(Markup(escape(a)) for a in also or [])])
        return {"kind": self.t["provenance." + kind.replace("-", "_")], "inputs": inputs}

    def not_named(self, also: list[str], origins: Markup) -> list[str]:
        """The assumptions ``also`` names that the generator's inputs ``origins`` do not
        already say in words: "SGLang 64K 요청 도착 간격" is not listed after "요청 도착 간격"
        in one parenthesis (the tenth editor read)."""
        named = [v for k, v in self.t.items() if k.startswith("genword.") and v in origins]
        return [a for a in also if not any(n in a for n in named)]

    def inside(self, label: str) -> str:
        """A label (a setting's name) inside an English sentence: lower case, unless its
        first word is a name or acronym (MoE, KV-cache, DCP); as it is in Korean."""
        first = label[:label.find(" ")] if " " in label else label      # its first word
        return label[0].lower() + label[1:] if self.lang == "en" and first[1:].islower() \
            else label

    def evidence(self, items: list[str]) -> Markup:
        """Evidence cells (file:lines) as a table shows them: under the run's own data
        folder, the path from there (``raw/vllm/server.log:2``), which the notice names."""
        folder = f"data/{self.run.id}/"
        return Markup(escape("; ".join(x[len(folder):] if x[:len(folder)] == folder else x
                                       for x in items)))

    def first(self, key: str) -> bool:
        """Whether the article says ``key`` (a caveat, a note) for the first time; from now
        on it has."""
        if key in self.said:
            return False
        self.said.add(key)
        return True

    def once(self, key: str) -> str:
        """A caveat's catalogue key: its full sentence the first time the article says it,
        then its short form (``<key>_again``) where the catalogue has one, so that a caveat
        the reader has been given is not given again word for word."""
        return key if self.first(key) or key + "_again" not in self.t else key + "_again"

    def generated_note(self, what: str, *fig_ids: str, also: list[str] | None = None
                       ) -> Markup:
        """Instead of a finding: ``what`` follows from the reconstruction's model or seed,
        and which of its inputs set it (``also``: assumptions it rests on besides)."""
        from ..core.i18n import sentence

        return sentence(self.t[self.once("generated.note")], what=what,
                        **self.set_by(*fig_ids, also=also))

    def unanswered(self, what: str, *fig_ids: str, also: list[str] | None = None) -> Markup:
        """A question the reconstruction cannot answer, listed under a sentence that says
        why (the generator's inputs set it): so, in the short form, and the caveat counts
        as said."""
        from ..core.i18n import sentence

        self.said.add("generated.note")
        return sentence(self.t["generated.note_again"], what=what,
                        **self.set_by(*fig_ids, also=also))

    def cell_tag(self, word: str) -> Markup:
        """A provenance tag for a table cell: the short word (``words.short_<word>``) set
        small and raised after the value, the full word as its title: a table of many
        values reads without a parenthesis after each."""
        # the parentheses are hidden on the page (the small raised word is enough) and
        # kept for whatever reads the text alone: the blog's Markdown, a text extractor
        return Markup('<sup class="prov" title="{}">{}<span class="p">(</span>{}'
                      '<span class="p">)</span></sup>').format(
            self.t["words." + word].strip("()"), self.paren_space,
            self.t["words.short_" + word])

    def cell_mark(self, *fig_ids: str) -> Markup:
        """``mark`` for a table cell (``cell_tag``): empty for a measured value."""
        word = self._mark_word(*fig_ids)
        return self.cell_tag(word) if word else Markup("")

    def _mark_word(self, *fig_ids: str) -> str | None:
        held = [f for f in fig_ids if self.has(f)]
        return self.kind_word(self.provenance(*held)) if held else None

    def kind_word(self, kind: str | None) -> str | None:
        """The tag word (``words.<word>``) of a provenance: none for a measured value, and
        "calibrated" only in a reconstruction (where it means fitted to a published figure)."""
        return "assumed" if kind == provenance.ASSUMED else \
            "model" if kind == provenance.MODEL else \
            "seed" if kind == provenance.FREE else \
            "calibrated" if kind == provenance.CALIBRATED and self.run.meta.reconstruction \
            else None

    def gist(self, texts: list[str | None]) -> str:
        """Claims as claims.yaml paraphrases them, marked as a gist (not quoted: the words
        are ours, not the write-up's)."""
        return self.t["claims.gist"].format(texts="; ".join(x for x in texts if x))

    def mark(self, *fig_ids: str) -> str:
        """The words marking a value that was not measured, from its figures' provenance:
        " (assumed)", " (the generator's model)", " (set by the seed)", " (calibrated)" in a
        reconstruction (the words the appendix of generator inputs uses; in Korean with no
        space: a parenthesis there closes up to its word); "" for measured values or when no
        figure is held."""
        word = self._mark_word(*fig_ids)
        return self.tag(word) if word else ""

    @property
    def paren_space(self) -> str:
        """What goes before a parenthesis after a word: nothing in Korean (it closes up to
        its word), a space in English."""
        return "" if self.lang == "ko" else " "

    def tag(self, word: str) -> str:
        """A provenance tag (``words.<word>``: "(assumed)", …) as it follows a word."""
        return f"{self.paren_space}{self.t['words.' + word]}"

    def method_text(self, fig: Figure) -> str | Markup:
        """A figure's method in the reader's language: the English page prints the figure's
        own text; another language the catalogue sentence (core.methods), or, where the
        method has none, the English text marked as such."""
        from ..core.i18n import sentence

        if self.lang == "en":
            return fig.method
        if fig.said:
            return methods.words(methods.Said.from_json(fig.said), self.lang)
        return sentence(self.t["derivation.untranslated"],
                        method=Markup('<span lang="en">{}</span>').format(fig.method))

    def why_text(self, why: str) -> Markup:
        """What set a figure (its provenance_why), in the reader's language."""
        return why_text(why, self.t, self.lang, self.run.meta.assumed)

    def inputs_text(self, origins: list[str], also: list[str] | None = None) -> Markup:
        """What set a figure, as the report names it: the scenario's own words (its keys
        and values) in a code face, then the run.yaml assumptions in the reader's words."""
        from ..core.i18n import sentence

        parts = [self.why_text(o) for o in origins]
        parts += [Markup(escape(a)) for a in also or []]
        return Markup("; ").join(parts) if parts else sentence("–")
