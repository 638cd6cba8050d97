"""A chart's caption, read from the chart itself: the HTML's "Figure n." line under it and the
blog's caption under its image say the same words, numbered in the same order."""

from __future__ import annotations

import html
import re

from markupsafe import Markup

__all__ = ["alt_text", "caption"]

_ALT = re.compile(r'aria-label="([^"]*)"')


def alt_text(svg: Markup | str) -> str:
    """A chart's own description (the aria-label its SVG carries), as plain text."""
    found = _ALT.search(str(svg))
    return html.unescape(found.group(1)) if found else ""


def caption(alt: str) -> str:
    """A chart's caption: its description up to the first full stop or colon (the title;
    the values after it are the image's alternative text)."""
    ends = [i for i in (alt.find(". "), alt.find(": ")) if i > 0]
    return alt[:min(ends)] if ends else alt
