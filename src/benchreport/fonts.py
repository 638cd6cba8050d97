"""The Hangul font, from the pip-installed koreanize-matplotlib package, subset and inlined."""

from __future__ import annotations

import base64
import io
from functools import lru_cache
from pathlib import Path

from .errors import MissingInputError

FAMILY = "BenchreportSans"
FACES = {"normal": "NanumGothic.ttf", "bold": "NanumGothicBold.ttf"}


@lru_cache(maxsize=1)
def font_dir() -> Path:
    # Locate the package without importing it: importing it re-configures matplotlib.
    import importlib.util

    spec = importlib.util.find_spec("koreanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise MissingInputError("the Hangul font package koreanize-matplotlib is not installed",
                                hint="run: make install")
    return Path(list(spec.submodule_search_locations)[0]) / "fonts"


def font_path(weight: str = "normal") -> Path:
    return font_dir() / FACES[weight]


def subset_woff2(weight: str, text: str) -> bytes:
    """The font reduced to the glyphs ``text`` needs, as WOFF2; same input, same bytes."""
    import logging

    from fontTools import subset
    from fontTools.ttLib import TTFont

    # NanumGothic carries VTT hinting source tables (TSI*) that the subsetter drops, noisily.
    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)

    font = TTFont(str(font_path(weight)), recalcTimestamp=False)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options=options)
    # ASCII is always kept so that text added after subsetting (page numbers) still renders.
    subsetter.populate(text=text + "".join(chr(c) for c in range(32, 127)))
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    return out.getvalue()


def font_face_css(text: str) -> str:
    """@font-face rules with the subset fonts inlined as data: URLs."""
    rules = []
    for weight in FACES:
        data = base64.b64encode(subset_woff2(weight, text)).decode("ascii")
        rules.append(
            f"@font-face {{ font-family: '{FAMILY}'; font-weight: {weight}; "
            f"src: url(data:font/woff2;base64,{data}) format('woff2'); }}"
        )
    return "\n".join(rules)
