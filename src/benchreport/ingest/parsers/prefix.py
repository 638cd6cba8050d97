"""Line prefixes of vLLM and SGLang logs in every era, and splitting glued records.

vLLM (see engine-formats.md 1.1): optional outer timestamp (Docker/Kubernetes ``...Z`` or a
wrapper's ``[YYYY-MM-DD HH:MM:SS]``), optional ``(<process> pid=<n>)``, LEVEL, ``MM-DD
HH:MM:SS`` (no year), ``[file:line]`` (≤0.7.1: ``file:line]`` without the opening bracket).
SGLang (3.1): ``[YYYY-MM-DD HH:MM:SS(.mmm)?( RANK<n>)*]`` (≤0.2: time only).
"""

from __future__ import annotations

import re
from typing import NamedTuple

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def message_starts(words: tuple[bytes, ...]) -> re.Pattern:
    """One bytes regex for messages that begin with any of ``words`` right after the "] "
    that ends a prefix. "] " is a literal prefix (searched at C speed) and a lookahead on
    the first letters rejects most other messages before the alternation is tried."""
    first = b"".join(sorted({re.escape(w[:1]) for w in words}))
    return re.compile(rb"\] (?=[" + first + rb"])(?:" + b"|".join(re.escape(w) for w in words)
                      + rb")")

_OUTER = r"(?:(?P<outer>\d{4}-\d\d-\d\dT[\d:.]+Z) |\[(?P<wrapper>\d{4}-\d\d-\d\d [\d:.]+)\] )?"
VLLM_PREFIX = re.compile(
    _OUTER
    + r"(?:\((?P<proc>[A-Za-z_][\w ]*?(?: rank=\d+)?) pid=(?P<pid>\d+)\) )?"
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<mmdd>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)"
    r"(?:\.\d+)? \[?(?P<file>[\w./-]+):(?P<lineno>\d+)\] ?"
)
SGLANG_PREFIX = re.compile(
    _OUTER
    + r"\[(?:(?P<date>\d{4}-\d\d-\d\d) )?(?P<time>\d\d:\d\d:\d\d)(?:\.(?P<ms>\d{3}))?"
    r"(?P<ranks>(?: [A-Z_]+\d+)*)\] "
)
RANK = re.compile(r"([A-Z_]+?)(\d+)")
# Library loggers inside vLLM logs (FlashInfer): "2025-06-05 08:20:07,822 - INFO - name: msg"
LIB_PREFIX = re.compile(
    r"(?P<date>\d{4}-\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d),(?P<ms>\d{3}) - (?P<level>[A-Z]+) - "
    r"(?:[\w.]+:\d+ - )?")


class Prefix(NamedTuple):
    """Who logged a record and when (fields absent from a prefix shape stay None)."""

    date: str | None = None     # YYYY-MM-DD when the prefix carries it
    mmdd: str | None = None     # vLLM: MM-DD without year
    time: str | None = None     # HH:MM:SS
    level: str | None = None
    proc: str | None = None     # vLLM process name, e.g. APIServer, Worker_TP3
    pid: int | None = None
    ranks: str | None = None    # SGLang, e.g. "TP0" or "DP1 TP1"
    where: str | None = None    # vLLM [file:line]


def clean(line: str) -> str:
    """Strip ANSI colour and the carriage returns of ``\\r\\n`` continuations."""
    if "\x1b" in line:
        line = ANSI.sub("", line)
    return line.replace("\r", "") if "\r" in line else line


def _vllm_prefix(m: re.Match) -> Prefix:
    outer = m["outer"] or m["wrapper"]
    return Prefix(date=outer[:10] if outer else None, mmdd=m["mmdd"], time=m["hms"],
                  level=m["level"], proc=m["proc"], pid=int(m["pid"]) if m["pid"] else None,
                  where=f"{m['file']}:{m['lineno']}")


def _sglang_prefix(m: re.Match) -> Prefix:
    ranks = m["ranks"].strip() or None
    return Prefix(date=m["date"], time=m["time"], ranks=ranks)


_GLUE_VLLM = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:")


_LEVEL_WORDS = ("INFO ", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL ")


def _maybe_glued(line: str, at: int) -> bool:
    """Could a second record start after ``at``? (a few C-level finds, then a regex)"""
    for word in _LEVEL_WORDS:
        if line.find(word, at) != -1:
            return _GLUE_VLLM.search(line, at) is not None
    return False


def split_vllm(line: str) -> list[tuple[Prefix | None, str]]:
    """Records on one physical line: (prefix, message) pairs; glued records are split."""
    first = VLLM_PREFIX.match(line)
    if first and not _maybe_glued(line, first.end()):
        return [(_vllm_prefix(first), line[first.end():])]      # the common case
    matches = list(VLLM_PREFIX.finditer(line))
    if not matches:
        lib = LIB_PREFIX.search(line)
        if lib:
            # the library's milliseconds are kept: its lines bracket events a second long
            return [(Prefix(date=lib["date"], time=f"{lib['time']}.{lib['ms']}",
                            level=lib["level"]),
                     line[lib.end():])]
        return [(None, line)]
    out = []
    if matches[0].start() > 0 and line[: matches[0].start()].strip():
        out.append((None, line[: matches[0].start()]))   # text before the first prefix
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        out.append((_vllm_prefix(m), line[m.end():end]))
    return out


def split_sglang(line: str) -> list[tuple[Prefix | None, str]]:
    first = SGLANG_PREFIX.match(line)
    if first and "] " not in line[first.end():]:
        return [(_sglang_prefix(first), line[first.end():])]    # the common case
    matches = list(SGLANG_PREFIX.finditer(line))
    if not matches:
        return [(None, line)]
    out = []
    if matches[0].start() > 0 and line[: matches[0].start()].strip():
        out.append((None, line[: matches[0].start()]))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        out.append((_sglang_prefix(m), line[m.end():end]))
    return out
