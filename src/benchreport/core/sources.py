"""run.yaml ``sources:``: where a run's files came from, and the write-ups its report re-derives.

One entry is one source. Two kinds share the block because both answer "where does this
come from": a **write-up** (it has a ``title``) is a published text whose figures and claims the
report checks, cited by its title, outlet, date and address wherever the report leans on it
(the reconstruction notice, the claim check, the blog export); any other entry records where
the input files were copied from (``what``, ``repository``, ``commit``, ...) and is listed as
written. A write-up whose title was not kept carries a title supplied by whoever filled in the
run, marked ``title_supplied: true`` and printed in square brackets, as bibliographies do.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

__all__ = ["NOT_PUBLISHED", "NOT_RECORDED", "Source", "parse_sources"]

NOT_PUBLISHED = "not published"     # a write-up with no public address (an internal report)
NOT_RECORDED = "not recorded"       # an outlet, date or address nobody kept
WRITEUP_KEYS = {"id", "title", "title_supplied", "outlet", "date", "url", "called", "file"}


@dataclass(frozen=True)
class Source:
    """One source; ``title`` set means a write-up, else ``fields`` say what it is."""

    id: str | None = None
    title: dict[str, str] | None = None       # ko/en; the same text twice if it has one
    title_supplied: bool = False
    outlet: str = NOT_RECORDED
    date: str = NOT_RECORDED
    url: str = NOT_RECORDED                   # an address, NOT_PUBLISHED or NOT_RECORDED
    called: dict[str, str] | None = None      # the short name the report's text uses
    file: str | None = None                   # the kept copy of its text, if any
    fields: tuple[tuple[str, str], ...] = ()  # a provenance entry's keys, as written

    @property
    def is_writeup(self) -> bool:
        return self.title is not None

    def name(self, lang: str) -> str:
        """What the text calls it: ``called``, else the title."""
        return (self.called or self.title or {}).get(lang) or self.id or ""

    def title_text(self, lang: str) -> str:
        """The title as cited, in brackets when it was supplied."""
        title = (self.title or {}).get(lang, "")
        return f"[{title}]" if self.title_supplied else title


def _text(c: Any, m: Any, key: str, where: str) -> str:
    value = c.get(m, key, (str, int, float, dt.date), where, required=False,
                  default=NOT_RECORDED)
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _writeup(c: Any, m: Any) -> Source:
    c.known(m, WRITEUP_KEYS, "sources[]")
    url = _text(c, m, "url", "sources[]")
    if url not in (NOT_PUBLISHED, NOT_RECORDED) and not url.startswith(("http://", "https://")):
        raise c.fail(m, "url", f"sources[].url must be an http(s) address, "
                               f"'{NOT_PUBLISHED}' or '{NOT_RECORDED}', got {url!r}")
    return Source(
        id=c.get(m, "id", str, "sources[]"),
        title=c.bilingual(m, "title", "sources[]"),
        title_supplied=c.get(m, "title_supplied", bool, "sources[]", required=False,
                             default=False),
        outlet=_text(c, m, "outlet", "sources[]"), date=_text(c, m, "date", "sources[]"),
        url=url, called=c.bilingual(m, "called", "sources[]", required=False),
        file=c.get(m, "file", str, "sources[]", required=False, default=None))


def parse_sources(c: Any, doc: Any) -> tuple[Source, ...]:
    """The ``sources:`` list of a run.yaml, validated with the run.yaml checker ``c``."""
    out: list[Source] = []
    for item in c.get(doc, "sources", list, "run", required=False, default=[]):
        m = c.mapping(item, "run.sources[]", doc, "sources")
        source = _writeup(c, m) if "title" in m else Source(
            id=str(m["id"]) if "id" in m else None,
            fields=tuple((str(k), str(v)) for k, v in m.items()))
        if source.id and any(s.id == source.id for s in out):
            raise c.fail(m, "id", f"run.sources has two entries with id {source.id!r}")
        out.append(source)
    return tuple(out)
