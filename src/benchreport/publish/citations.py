"""The write-ups a report re-derives (run.yaml ``sources:``), cited the same way everywhere:
beside the reconstruction notice, in the claim check and in the blog export."""

from __future__ import annotations

from markupsafe import Markup, escape

from ..core.runmeta import RunMeta
from ..core.sources import NOT_PUBLISHED, NOT_RECORDED, Source

__all__ = ["Citation", "citations", "names"]

_MISSING = {"outlet": "writeups.outlet_unknown", "date": "writeups.date_unknown"}


class Citation:
    """One write-up as the reader sees it: its short name, then title, outlet, date, address."""

    def __init__(self, src: Source, t: dict[str, str], lang: str) -> None:
        name = src.name(lang)
        self.name = name[:1].upper() + name[1:]     # it starts a list item
        self.title = src.title_text(lang)
        self.details = [t[_MISSING[k]] if getattr(src, k) == NOT_RECORDED else getattr(src, k)
                        for k in ("outlet", "date")]
        self.url = src.url if src.url.startswith(("http://", "https://")) else None
        self.no_url = None if self.url else t["writeups.unpublished" if src.url == NOT_PUBLISHED
                                                else "writeups.url_unknown"]
        if src.url == NOT_RECORDED and all(getattr(src, k) == NOT_RECORDED for k in _MISSING):
            # nothing recorded of where it appeared: said once, not three times
            self.details, self.no_url = [], t["writeups.none_recorded"]

    def html(self) -> Markup:
        where = (Markup('<a href="{0}">{0}</a>').format(self.url) if self.url
                 else escape(self.no_url))
        return Markup("<strong>{}</strong>: {}").format(self.name, Markup(", ").join(
            [escape(self.title), *map(escape, self.details), where]))

    def markdown(self, escaped) -> str:
        """``escaped`` makes text Markdown-safe (the blog export's own rule)."""
        where = f"<{self.url}>" if self.url else escaped(self.no_url)
        return f"**{escaped(self.name)}**: " + ", ".join(
            [escaped(self.title), *map(escaped, self.details), where])


def citations(meta: RunMeta, t: dict[str, str], lang: str) -> list[Citation]:
    return [Citation(s, t, lang) for s in meta.sources if s.is_writeup]


def names(meta: RunMeta, lang: str) -> dict[str, str]:
    """Write-up id -> the name the text uses (claims.yaml's article keys refer to these ids)."""
    return {s.id: s.name(lang) for s in meta.sources if s.is_writeup and s.id}
