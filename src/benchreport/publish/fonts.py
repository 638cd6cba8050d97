"""The page's fonts, subset and inlined: the Hangul font from the pip-installed
koreanize-matplotlib package, and DejaVu Sans and DejaVu Sans Mono from matplotlib's own
files (symbols the Hangul font lacks, and code: flags, paths, identifiers).

No Korean-capable monospace face is on the package index as a pip package (D2Coding and
Nanum Gothic Coding are not), so code is set in DejaVu Sans Mono with the Hangul face as its
fallback for a Korean character inside it."""

from __future__ import annotations

import base64
import io
import re
from functools import lru_cache
from pathlib import Path

from ..core import collector
from ..core.errors import MissingInputError

FAMILY = "BenchreportSans"
FALLBACK = "BenchreportSymbols"     # DejaVu Sans from matplotlib: symbols Nanum lacks (−, …)
FACES = {"normal": "NanumGothic.ttf", "bold": "NanumGothicBold.ttf"}
FALLBACK_FACES = {"normal": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf"}
MONO = "BenchreportMono"            # DejaVu Sans Mono from matplotlib: code in the text
MONO_FACES = {"normal": "DejaVuSansMono.ttf"}


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


def fallback_path(weight: str = "normal", faces: dict[str, str] = FALLBACK_FACES) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise MissingInputError("matplotlib (which ships DejaVu Sans) is not installed",
                                hint="run: make install")
    folder = Path(list(spec.submodule_search_locations)[0]) / "mpl-data" / "fonts" / "ttf"
    return folder / faces[weight]


@lru_cache(maxsize=1)
def _main_cmap() -> frozenset[int]:
    from fontTools.ttLib import TTFont

    with TTFont(str(font_path()), lazy=True) as font:
        return frozenset(font.getBestCmap())


def missing_from_main(text: str) -> str:
    """The characters of ``text`` that NanumGothic has no glyph for."""
    cmap = _main_cmap()
    return "".join(sorted({c for c in set(text) if ord(c) > 127 and ord(c) not in cmap}))


def subset_woff(weight: str, text: str, path: Path | None = None) -> bytes:
    """The font reduced to the glyphs ``text`` needs, as WOFF; same input, same bytes.

    WOFF (zlib) rather than WOFF2 (brotli and a glyph transform): a fifth larger, three times
    quicker to write, and the build writes four faces per language on its critical path.
    Only the set of characters counts, so a process keeps the subsets it made by that set:
    the print edition asks for the screen edition's, and a rebuild of the same pages (a
    comparison's runs, the tests) for those of the first build."""
    return _subset_woff(str(path or font_path(weight)), "".join(sorted(set(text))))


@lru_cache(maxsize=64)
def _subset_woff(path: str, chars: str) -> bytes:
    # a font's tables are a few hundred thousand objects, in use until the subset is saved
    with collector.paused():
        return _subset(path, chars)


def _subset(path: str, chars: str) -> bytes:
    import logging

    from fontTools import subset
    from fontTools.ttLib import TTFont

    # NanumGothic carries VTT hinting source tables (TSI*) that the subsetter drops, noisily.
    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)

    # The glyphs kept are copied as the file has them: recomputing their bounding boxes
    # (fontTools' default) decodes and re-encodes every one, half the time of a subset.
    font = TTFont(path, recalcTimestamp=False, recalcBBoxes=False)
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options=options)
    # ASCII and list bullets are always kept: text that CSS adds (page numbers, markers).
    subsetter.populate(text=chars + "".join(chr(c) for c in range(32, 127)) + "•◦")
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff"
    font.save(out)
    return out.getvalue()


_CODE = re.compile(r"<code[^>]*>(.*?)</code>", re.S)
_TAGS = re.compile(r"<[^>]*>")


def code_text(html: str) -> str:
    """The characters set in the code face: the text of every ``<code>`` element."""
    import html as html_lib

    return "".join(sorted({c for m in _CODE.finditer(html)
                           for c in html_lib.unescape(_TAGS.sub("", m.group(1)))}))


def font_face_css(text: str) -> str:
    """@font-face rules with the subset fonts inlined as data: URLs: NanumGothic for the
    page, DejaVu Sans for any character it lacks, and DejaVu Sans Mono (regular only; a
    browser thickens it for bold) for code, so no system font is ever needed."""
    rules = []
    extra = missing_from_main(text)
    code = code_text(text)
    for weight in FACES:
        faces = [(FAMILY, subset_woff(weight, text))]
        if extra:
            faces.append((FALLBACK, subset_woff(weight, extra, fallback_path(weight))))
        if code and weight == "normal":
            faces.append((MONO, subset_woff(weight, code, fallback_path(weight, MONO_FACES))))
        for family, blob in faces:
            data = base64.b64encode(blob).decode("ascii")
            rules.append(
                f"@font-face {{ font-family: '{family}'; font-weight: {weight}; "
                f"src: url(data:font/woff;base64,{data}) format('woff'); }}")
    return "\n".join(rules)
