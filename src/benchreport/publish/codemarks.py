"""Code in running text: command-line flags, paths, identifiers and file names.

The article's sentences carry values copied from configs and logs (``--mem-fraction-static``,
``decode_context_parallel_size=1``, ``data/2024-b300/raw/``, ``vllm/vllm-openai:v0.11``). The
HTML sets them in a monospace face and the blog export puts them in backticks, so that a
blog engine's typographer does not turn ``--`` into a dash nor ``_`` into emphasis.

Which tokens are code is decided here once, from the token alone (ASCII runs only, so a
Korean particle after a flag stays text):

- a flag: ``--`` and a letter (``--dcp-size=8``), with the number after it if one follows
  (``--gpu-memory-utilization 0.95``);
- an identifier with an underscore (``kv_lora_rank``, ``fp8_e4m3``, ``jit_s``);
- a ``key=number`` setting (``tp=8``; a key with an underscore takes any value, as an
  identifier);
- a file name with a known extension (``config.json``, ``profile_export.jsonl``);
- a path: with two or more slashes, or a leading ``/``, ``./`` or ``../``, or a trailing
  ``/``, or an image tag (``org/name:tag``), or ``org/name-with-hyphen`` (a model or image
  repository); never a unit (``tok/s``) or a pair of values (``64K/200K``).

Web addresses stay text (a blog links them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

__all__ = ["is_code", "map_text", "mark_code_html", "split_code"]

# a run of ASCII characters that can make up a flag, path or identifier
_TOKEN = re.compile(r"[A-Za-z0-9_./:=+@-]+")
_EXTENSIONS = ("json", "jsonl", "yaml", "yml", "log", "csv", "parquet", "txt", "html", "md",
               "py", "ipynb", "toml", "lock", "svg", "png", "pdf")
_FILE = re.compile(r"[A-Za-z0-9_.-]*[A-Za-z0-9_-]\.(?:" + "|".join(_EXTENSIONS) + r")")
_FLAG = re.compile(r"--[A-Za-z][A-Za-z0-9_.-]*(?:=\S+)?")
_SETTING = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*=[0-9][0-9.]*")
_IDENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:=-]*_[A-Za-z0-9_.:=-]*[A-Za-z0-9]")
_LETTER = re.compile(r"[A-Za-z]")
_REPO = re.compile(r"[a-z0-9][a-z0-9_.-]*/[A-Za-z0-9_.]*-[A-Za-z0-9_.-]+")
_TRAILING = ".,:;"
# a number after a flag is its value: "--gpu-memory-utilization 0.95" is one piece of code
_FLAG_VALUE = re.compile(r" [0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_./:=+@-]*[A-Za-z0-9_/:=+@-])")


def _is_path(token: str) -> bool:
    if "/" not in token or "://" in token:
        return False
    if token.startswith(("/", "./", "../")) and len(token) > 1:
        return True
    if token.endswith("/") and len(token) > 1:
        return True
    if token.count("/") >= 2:
        return True
    head, _, tail = token.partition("/")
    return bool(head and tail and (":" in tail or _REPO.fullmatch(token)))


def is_code(token: str) -> bool:
    """Whether one token (no spaces) reads as code, by the rules of this module's docstring."""
    if not token or "://" in token:
        return False
    return bool(_FLAG.fullmatch(token) or _is_path(token) or _FILE.fullmatch(token)
                or _SETTING.fullmatch(token)
                or bool(_IDENT.fullmatch(token) and _LETTER.search(token)))


# an escaped angle bracket or ampersand just before or after a token: the token is part of
# escaped markup ("&lt;/script&gt;"), not a word of its own (a quote is a boundary)
_GLUE_BEFORE = re.compile(r"&(?:lt|gt|amp|#60|#62|#38);$")
_GLUE_AFTER = re.compile(r"&(?:lt|gt|amp|#60|#62|#38);")


def _glued(text: str, start: int, end: int) -> bool:
    """Whether the token touches markup: an angle bracket or ampersand, escaped or not."""
    if (start and text[start - 1] in "<>&") or text[end:end + 1] in ("<", ">", "&"):
        return True
    return bool(_GLUE_BEFORE.search(text, 0, start) or _GLUE_AFTER.match(text, end))


def _token_bounds(text: str) -> Iterator[tuple[int, int]]:
    """Start and end of every code token in ``text`` (a sentence's final stop left out)."""
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        while end > start and text[end - 1] in _TRAILING:
            end -= 1
        if _glued(text, start, end):
            continue
        if is_code(text[start:end]):
            value = _FLAG_VALUE.match(text, end) if _FLAG.fullmatch(text[start:end]) else None
            yield start, value.end() if value else end


def split_code(text: str) -> list[tuple[str, bool]]:
    """``text`` as pieces in order, each with whether it is code; joined, they are ``text``."""
    out: list[tuple[str, bool]] = []
    at = 0
    for start, end in _token_bounds(text):
        if start > at:
            out.append((text[at:start], False))
        out.append((text[start:end], True))
        at = end
    if at < len(text):
        out.append((text[at:], False))
    return out


_TAG = re.compile(r"(<[^>]*>)")
# elements whose text code marking leaves as it is: raw text, drawings, what is code already
_SKIP = ("style", "script", "svg", "title", "code", "pre", "head")


def _skip_depth(tag: str, depth: int, skip: tuple[str, ...]) -> int:
    name = re.match(r"</?\s*([a-zA-Z0-9]+)", tag)
    if not name or name.group(1).lower() not in skip:
        return depth
    if tag.startswith("</"):
        return depth - 1
    return depth if tag.endswith("/>") else depth + 1


def map_text(html: str, change: Callable[[str], str], skip: tuple[str, ...]) -> str:
    """``html`` with ``change`` applied to each run of its text that holds more than space,
    outside its tags and outside the elements named in ``skip``: the one walk over a page's
    text (code marking here, words and units kept together in ``render.keep_words``)."""
    out, depth = [], 0
    for part in _TAG.split(html):
        if part.startswith("<"):
            depth = _skip_depth(part, depth, skip)
            out.append(part)
        else:
            out.append(part if depth or not part.strip() else change(part))
    return "".join(out)


def _marked(text: str) -> str:
    return "".join(f"<code>{piece}</code>" if code else piece
                   for piece, code in split_code(text))


def mark_code_html(html: str) -> str:
    """``html`` with every code token of its text (not of its tags, scripts, drawings or
    existing code) wrapped in ``<code>``; tokens never hold ``&``, ``<`` or ``>``, so the
    page's escaping is unchanged."""
    return map_text(html, _marked, _SKIP)
