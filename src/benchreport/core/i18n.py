"""Per-language strings and number formats. Catalogues: templates/labels/<lang>.yaml."""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from .errors import ConfigError
from .paths import LABELS
from .runmeta import LANGS
from .yamlio import load_yaml

__all__ = ["Name", "UNITS", "english", "format_number", "format_value", "josa", "load_catalogue",
           "sentence"]


def english() -> dict[str, str]:
    """The English catalogue of ``templates/labels``, for what is not the article: the
    notebooks' tables and the claim check's sentences (the article loads its own)."""
    return load_catalogue(LABELS, "en")


def load_catalogue(folder: Path, lang: str, kind: str = "") -> dict[str, str]:
    """Flatten templates/labels/<lang>.yaml (with ``kind``: <kind>.<lang>.yaml, e.g. the
    figures' methods) into {"section.key": text}."""
    if lang not in LANGS:
        raise ConfigError(f"The value for `lang` must be one of {LANGS}, but {lang!r} was passed")
    path = folder / (f"{kind}.{lang}.yaml" if kind else f"{lang}.yaml")
    return dict(_flat_catalogue(path.read_text(encoding="utf-8"), str(path)))


@functools.lru_cache(maxsize=16)
def _flat_catalogue(text: str, path: str) -> dict[str, str]:
    """A catalogue's text flattened, kept by its text: a process that renders or runs the
    notebooks again (the next build of a comparison's runs, the tests) parses it once.
    Callers get a copy of it (load_catalogue)."""
    data = load_yaml(text, path)
    flat: dict[str, str] = {}

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else key, value)
        else:
            flat[prefix] = str(node)

    walk("", data)
    return flat


# --- Korean particles ---------------------------------------------------------------------
# A particle's form depends on whether the word before it ends in a consonant (받침).
_PAIRS = {"은/는": ("은", "는"), "이/가": ("이", "가"), "을/를": ("을", "를"),
          "과/와": ("과", "와"), "으로/로": ("으로", "로"), "이다/다": ("이다", "다")}
# How a Latin letter is read aloud when it ends an acronym (vLLM -> "엠": consonant).
_LETTER_ENDS_IN_CONSONANT = set("LMNR")
_LETTER_RIEUL = set("LR")   # ㄹ-final: takes 로, not 으로


def _final(word: str) -> str:
    """'none', 'rieul' or 'consonant': how ``word`` ends when read in Korean; a closing
    parenthetical is skipped, since the particle follows the word before it.

    >>> _final("시간(나머지 간격과의 차이)"), _final("차이")
    ('consonant', 'none')
    """
    word = word.rstrip(" ")
    while word.endswith(")") and "(" in word:
        word = word[:word.rindex("(")].rstrip(" ")
    word = word.rstrip(" )]}'\".")
    if not word:
        return "none"
    ch = word[-1]
    if "가" <= ch <= "힣":
        jong = (ord(ch) - 0xAC00) % 28
        return "none" if jong == 0 else ("rieul" if jong == 8 else "consonant")
    if ch.isdigit():
        # 0 영, 1 일, 2 이, 3 삼, 4 사, 5 오, 6 육, 7 칠, 8 팔, 9 구
        return {"0": "consonant", "1": "rieul", "3": "consonant", "6": "consonant",
                "7": "rieul", "8": "rieul"}.get(ch, "none")
    if ch.isupper():       # an acronym: read letter by letter
        if ch in _LETTER_RIEUL:
            return "rieul"
        return "consonant" if ch in _LETTER_ENDS_IN_CONSONANT else "none"
    if ch.isalpha():       # a word read as English: vowel endings take the no-consonant form
        if ch.lower() == "l":
            return "rieul"
        return "none" if ch.lower() in "aeiouy" else "consonant"
    return "none"


def josa(word: str, pair: str) -> str:
    """The particle of ``pair`` (e.g. "이/가") that follows ``word``:
    josa("vLLM", "이/가") == "이"."""
    with_consonant, without = _PAIRS[pair]
    final = _final(word)
    if pair == "으로/로" and final == "rieul":
        return without
    return with_consonant if final in ("consonant", "rieul") else without


@dataclass(frozen=True)
class Name:
    """A display name in a sentence: plain text for particles, markup for the page."""

    text: str
    html: Markup

    def __html__(self) -> str:
        return str(self.html)


class _SentenceFormatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in _PAIRS:
            plain = value.text if isinstance(value, Name) else str(value)
            return str(escape(value)) + josa(plain, format_spec)
        if format_spec:
            return str(escape(format(value, format_spec)))
        return str(escape(value))


def sentence(template: str, **values: Any) -> Markup:
    """Fill a catalogue sentence; values are escaped unless they are Markup or Name.

    ``{engine:이/가}`` appends the right Korean particle to the engine's name.
    """
    return Markup(_SentenceFormatter().vformat(str(escape(template)), (), values))


# --- numbers -------------------------------------------------------------------------------
UNITS = {
    "en": {"s": "{} s", "x": "{}×", "tok/s": "{} tok/s", "ms": "{} ms", "tokens": "{} tokens",
           "%": "{}%", "req": "{} requests", "req/s": "{} req/s",
           "tokens/step": "{} tokens/step", "records": "{} records", "count": "{}",
           "fraction": "{}", "tok/s/GPU": "{} tok/s per GPU", "tok/s/user": "{} tok/s per user",
           "USD/Mtok": "${} per million output tokens", "USD/GPU-h": "${} per GPU-hour",
           "concurrency": "concurrency {}", "points": "{} points", "series": "{} series",
           "repeats": "{} repeats", "loads": "{} loads", "crossings": "{}"},
    "ko": {"s": "{}초", "x": "{}배", "tok/s": "{} tok/s", "ms": "{} ms", "tokens": "{} 토큰",
           "%": "{}%", "req": "{}개", "req/s": "초당 요청 {}개",
           "tokens/step": "스텝당 {} 토큰", "records": "{}개", "count": "{}",
           "fraction": "{}", "tok/s/GPU": "GPU당 {} tok/s", "tok/s/user": "사용자당 {} tok/s",
           "USD/Mtok": "출력 토큰 백만 개당 {}달러", "USD/GPU-h": "GPU 시간당 {}달러",
           "concurrency": "동시성 {}", "points": "{}개", "series": "{}개",
           "repeats": "{}회", "loads": "{}개", "crossings": "{}곳"},
}


def format_number(value: float | int, decimals: int | None = None) -> str:
    """Digits grouped by thousands with a fixed number of decimals (same in ko and en); a
    negative number with a minus sign, and a value that rounds to zero without one.

    >>> format_number(-0.04, 1), format_number(-0.6, 1), format_number(12345.678, 1)
    ('0.0', '−0.6', '12,345.7')
    """
    if decimals is None:
        decimals = 0 if float(value).is_integer() else 2
    text = f"{value:,.{decimals}f}"
    if not text.startswith("-"):
        return text
    return text[1:] if float(text.replace(",", "")) == 0 else "\u2212" + text[1:]


def format_value(value: float | int | str, unit: str, lang: str,
                 decimals: int | None = None) -> str:
    """A number (or a preformatted range or sequence) with its unit, as ``lang`` writes it."""
    text = value if isinstance(value, str) else format_number(value, decimals)
    return UNITS[lang].get(unit, "{} " + unit).format(text)
