"""The Hangul font, from the pip-installed koreanize-matplotlib package, subset and inlined."""

from __future__ import annotations

import base64
import io
from functools import lru_cache
from pathlib import Path

from ..core.errors import MissingInputError

FAMILY = "BenchreportSans"
FALLBACK = "BenchreportSymbols"     # DejaVu Sans from matplotlib: symbols Nanum lacks (−, …)
FACES = {"normal": "NanumGothic.ttf", "bold": "NanumGothicBold.ttf"}
FALLBACK_FACES = {"normal": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf"}


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


def fallback_path(weight: str = "normal") -> Path:
    import importlib.util

    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise MissingInputError("matplotlib (which ships DejaVu Sans) is not installed",
                                hint="run: make install")
    folder = Path(list(spec.submodule_search_locations)[0]) / "mpl-data" / "fonts" / "ttf"
    return folder / FALLBACK_FACES[weight]


def missing_from_main(text: str) -> str:
    """The characters of ``text`` that NanumGothic has no glyph for."""
    from fontTools.ttLib import TTFont

    cmap = TTFont(str(font_path()), lazy=True).getBestCmap()
    return "".join(sorted({c for c in text if ord(c) > 127 and ord(c) not in cmap}))


def subset_woff(weight: str, text: str, path: Path | None = None) -> bytes:
    """The font reduced to the glyphs ``text`` needs, as WOFF; same input, same bytes.

    WOFF (zlib) rather than WOFF2 (brotli and a glyph transform): a fifth larger, three times
    quicker to write, and the build writes four faces per language on its critical path."""
    import logging

    from fontTools import subset
    from fontTools.ttLib import TTFont

    # NanumGothic carries VTT hinting source tables (TSI*) that the subsetter drops, noisily.
    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)

    font = TTFont(str(path or font_path(weight)), recalcTimestamp=False)
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options=options)
    # ASCII and list bullets are always kept: text that CSS adds (page numbers, markers).
    subsetter.populate(text=text + "".join(chr(c) for c in range(32, 127)) + "•◦")
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff"
    font.save(out)
    return out.getvalue()


def font_face_css(text: str) -> str:
    """@font-face rules with the subset fonts inlined as data: URLs: NanumGothic for the
    page, and DejaVu Sans for any character it lacks, so no system font is ever needed."""
    rules = []
    extra = missing_from_main(text)
    for weight in FACES:
        faces = [(FAMILY, subset_woff(weight, text))]
        if extra:
            faces.append((FALLBACK, subset_woff(weight, extra, fallback_path(weight))))
        for family, blob in faces:
            data = base64.b64encode(blob).decode("ascii")
            rules.append(
                f"@font-face {{ font-family: '{family}'; font-weight: {weight}; "
                f"src: url(data:font/woff;base64,{data}) format('woff'); }}")
    return "\n".join(rules)
