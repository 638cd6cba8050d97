"""Launch configuration files: how an engine was started (image, environment, arguments).

The file is YAML as exported from the deployment (GPUStack custom backend): ``image``,
``env`` (a mapping) and ``args`` (the command line after the entry point, as a list).
What is kept passes ``core.redact`` here, before anything is stored: ``env`` and ``flags``
by the allow-list of settings, ``image`` and ``args`` as text (``--hf-token hf_…`` loses its
value, ``https://user:pass@host`` its credentials).

>>> import io
>>> cfg = parse_launch(io.StringIO("image: x\\nenv: {A: '1'}\\nargs: [--tp-size, '8', --trust-remote-code]\\n"), "l.yaml")
>>> cfg.flags["tp_size"], cfg.flags["trust_remote_code"]
('8', True)
>>> cfg = parse_launch(io.StringIO("env: {HF_TOKEN: hf_x}\\nargs: [--api-key, k]\\n"), "l.yaml")
>>> cfg.env, cfg.flags, cfg.args
({'HF_TOKEN': '[redacted]'}, {'api_key': '[redacted]'}, ('--api-key', '[redacted]'))
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, TextIO

from ...core.errors import ParseError
from ...core.jsontext import deepest, loads
from ...core.redact import REDACTED, redact, redact_settings
from ...core.yamlio import Located, load_yaml


@dataclass(frozen=True)
class LaunchConfig:
    image: str
    env: dict[str, str]
    args: tuple[str, ...]
    flags: dict[str, Any] = field(default_factory=dict)   # --foo-bar 1 -> {"foo_bar": "1"}
    lines: dict[str, int] = field(default_factory=dict)   # flag or env name -> line in file
    # the line of a ``"$@"`` that hands the script's own arguments on (0: none): what ran
    # can hold flags this file does not show
    passes_args: int = 0


def flags_from_args(args: list[str]) -> dict[str, Any]:
    """``--key value`` / ``--key=value`` / bare ``--switch`` into {"key": value or True}.

    JSON values (``--speculative-config '{...}'``) are decoded.
    """
    out: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-"):
            out.setdefault("_positional", []).append(arg)
            i += 1
            continue
        key, eq, value = arg.lstrip("-").partition("=")
        key = key.replace("-", "_")
        if not eq:
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                value = args[i + 1]
                i += 1
            else:
                value = True
        if isinstance(value, str) and value[:1] in "{[":
            value = _json_value(value)
        out[key] = value
        i += 1
    return out


# A setting given as JSON (--speculative-config '{"method": …}') nests a level or two; one
# that nests deeper is kept as the text it is, like any value that is not JSON.
FLAG_DEPTH = 20


def _json_value(text: str) -> Any:
    if deepest(text)[0] > FLAG_DEPTH:
        return text
    try:
        return loads(text)
    except json.JSONDecodeError:
        return text


def parse_launch(fp: TextIO, path: str) -> LaunchConfig:
    doc = load_yaml(fp.read(), path)
    if not isinstance(doc, Located):
        raise ParseError("expected a mapping with image, env and args", path=path, line=1)
    env = doc.get("env") or {}
    args = doc.get("args") or []
    if not isinstance(env, dict) or not isinstance(args, list):
        raise ParseError("'env' must be a mapping and 'args' a list", path=path, line=doc.line)
    lines = {}
    if isinstance(env, Located):
        lines.update({k: env.lines[k] for k in env})
    args = [str(a) for a in args]
    arg_line = doc.lines.get("args", 1)
    for offset, arg in enumerate(args):
        if arg.startswith("-"):
            lines[arg.lstrip("-").split("=")[0].replace("-", "_")] = arg_line + 1 + offset
    flags = redact_settings("flags", flags_from_args(args))
    return LaunchConfig(image=redact(str(doc.get("image", ""))),
                        env=redact_settings("env", {k: str(v) for k, v in env.items()}),
                        args=_redacted_args(args, flags), flags=flags, lines=lines)


def _redacted_args(args: list[str], flags: dict[str, Any]) -> tuple[str, ...]:
    """The command line with each flag's value as ``flags`` keeps it (``--api-key k`` →
    ``--api-key [redacted]``), every word through the free-text redaction."""
    out = []
    for i, arg in enumerate(args):
        before = args[i - 1] if i else ""
        key = before.lstrip("-").replace("-", "_")
        if before.startswith("-") and "=" not in before and not arg.startswith("--") and \
                flags.get(key) == REDACTED:
            out.append(REDACTED)
            continue
        name, eq, _ = arg.partition("=")
        if arg.startswith("-") and eq and \
                flags.get(name.lstrip("-").replace("-", "_")) == REDACTED:
            out.append(f"{name}={REDACTED}")
            continue
        out.append(redact(arg))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# A shell script or a saved command line that starts the server (`start-vllm.sh`):
# ``[exec] [VAR=x …] vllm serve MODEL --flag …`` or ``python3 -m sglang.launch_server …``,
# continued over lines with a trailing backslash; ``export VAR=…`` lines are its env.

_ENTRY_POINTS = {("vllm", "serve"): "vllm", ("sglang", "serve"): "sglang",
                 ("-m", "sglang.launch_server"): "sglang",
                 ("-m", "vllm.entrypoints.openai.api_server"): "vllm"}
_ASSIGN = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)")
_PASS_ON = ("$@", "$*", "${@}", "${*}")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass(frozen=True)
class ShellLaunch:
    config: LaunchConfig
    engine: str          # "vllm" or "sglang"
    line: int            # the line the command starts on


def _logical_lines(text: str) -> list[tuple[int, list[tuple[int, str]]]]:
    """(first line, [(line, text)…]) of each command, joining backslash continuations."""
    out: list[tuple[int, list[tuple[int, str]]]] = []
    current: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.rstrip()
        more = body.endswith("\\")
        current.append((number, body[:-1] if more else body))
        if not more:
            out.append((current[0][0], current))
            current = []
    if current:
        out.append((current[0][0], current))
    return out


# shlex builds each word a character at a time, in time that grows with the square of its
# length: a "command" longer than this (no server's is) is not split at all.
LONGEST_COMMAND = 1 << 16


def _words(parts: list[tuple[int, str]]) -> list[tuple[int, str]] | None:
    """The shell words of a command, each with its line; None if it does not split."""
    if sum(len(part) for _, part in parts) > LONGEST_COMMAND:
        return None
    words: list[tuple[int, str]] = []
    try:
        for number, part in parts:
            words += [(number, w) for w in shlex.split(part, comments=True)]
    except ValueError:                                 # a quote spans lines: split whole
        try:
            joined = " ".join(p for _, p in parts)
            words = [(parts[0][0], w) for w in shlex.split(joined, comments=True)]
        except ValueError:
            return None
    return words


def _command(words: list[str]) -> tuple[str, int] | None:
    """(engine, index of the first argument) when the words start a vLLM/SGLang server."""
    i = 0
    while i < len(words) and (words[i] in ("exec", "env", "nohup") or
                              _ASSIGN.fullmatch(words[i])):
        i += 1
    if i < len(words) and re.fullmatch(r"(.*/)?python[0-9.]*", words[i]):
        i += 1
    for (first, second), engine in _ENTRY_POINTS.items():
        if words[i:i + 2] == [first, second] or (
                first != "-m" and i < len(words) and words[i].endswith("/" + first)
                and words[i + 1:i + 2] == [second]):
            return engine, i + (2 if first == "-m" else 1)
    return None


def _launch(words: list[tuple[int, str]], start: int, names: dict[str, str],
            env: dict[str, str], lines: dict[str, int]) -> ShellLaunch | None:
    plain = [w for _, w in words]
    found = _command(plain)
    if found is None:
        return None
    engine, first = found
    for word in plain[:first]:                 # `env A=1 vllm serve …`: A is in its env
        if (assign := _ASSIGN.fullmatch(word)) and not word.startswith("export"):
            env[assign.group(1)] = expand_names(assign.group(2), names)
            lines.setdefault(assign.group(1), start)

    def expand(word: str) -> str:
        return expand_names(word, names)

    passes = next((n for n, w in words[first:] if w in _PASS_ON), 0)
    args = [(n, expand(w)) for n, w in words[first:] if w not in _PASS_ON]
    if engine == "vllm" and plain[first - 1] == "serve":
        args = [(start, "serve")] + args
    for n, arg in args:
        if arg.startswith("-"):
            lines.setdefault(arg.lstrip("-").split("=")[0].replace("-", "_"), n)
    values = [a for _, a in args]
    flags = redact_settings("flags", flags_from_args(values))
    return ShellLaunch(LaunchConfig(image="", env=redact_settings("env", env),
                                    args=_redacted_args(values, flags), flags=flags,
                                    lines=lines, passes_args=passes), engine, start)


def expand_names(word: str, names: dict[str, str]) -> str:
    """``$X`` / ``${X}`` replaced by what the script assigned; an unknown one stays as written.

    >>> expand_names('{"revision":"$REV","n":1}', {"REV": "abc"})
    '{"revision":"abc","n":1}'
    >>> expand_names("${HOME}/m", {})
    '${HOME}/m'
    """
    return _VAR.sub(lambda m: names.get(m.group(1) or m.group(2), m.group(0)), word)


def shell_launch(text: str) -> ShellLaunch | None:
    """The server launch a shell script or command line holds, or None when it has none.

    >>> s = shell_launch("export VLLM_X=1\\nM=org/m\\nexec vllm serve $M \\\\\\n  --max-num-seqs 8")
    >>> s.engine, s.line, s.config.flags["max_num_seqs"], s.config.lines["max_num_seqs"]
    ('vllm', 3, '8', 4)
    >>> s.config.args[:2], s.config.env
    (('serve', 'org/m'), {'VLLM_X': '1'})
    """
    env: dict[str, str] = {}
    names: dict[str, str] = {}
    lines: dict[str, int] = {}
    for start, parts in _logical_lines(text):
        words = _words(parts)
        if not words:
            continue
        plain = [w for _, w in words]
        assign = _ASSIGN.fullmatch(" ".join(plain)) if len(plain) <= 2 else None
        if assign and (plain[0] == "export" or len(plain) == 1):
            names[assign.group(1)] = assign.group(2)
            if plain[0] == "export":
                env[assign.group(1)] = assign.group(2)
                lines[assign.group(1)] = start
            continue
        launch = _launch(words, start, names, env, lines)
        if launch is not None:
            return launch
    return None
