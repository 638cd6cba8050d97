"""Figures as linked, localized text for one language (shared by the article's builders)."""

from __future__ import annotations

from markupsafe import Markup, escape

from ..core.figures import Figure
from ..core.i18n import UNITS, Name, format_value
from ..core.metrics import TIE
from ..core.records import Run


def anchor(fig_id: str) -> str:
    return "fig-" + fig_id.replace(".", "-")


class Writer:
    """Turns registry figures into linked, localized text for one language."""

    def __init__(self, run: Run, registry: dict[str, Figure], lang: str, t: dict[str, str]):
        self.run, self.registry, self.lang, self.t = run, registry, lang, t
        self.cited: set[str] = set()          # ids of the figures the text links to

    def engine_name(self, engine_id: str) -> str:
        try:
            return self.run.meta.engine(engine_id).name
        except KeyError:
            return engine_id

    def name(self, engine_id: str) -> Name:
        """An engine's display name for a sentence (plain, no link)."""
        text = self.engine_name(engine_id)
        return Name(text, Markup(escape(text)))

    def text(self, fig: Figure) -> str:
        if fig.unit == "engine":
            return self.t["words.tie"] if fig.value == TIE else self.engine_name(str(fig.value))
        if fig.value is None:
            return "–"
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

    def has(self, *ids: str) -> bool:
        return all(i in self.registry for i in ids)
