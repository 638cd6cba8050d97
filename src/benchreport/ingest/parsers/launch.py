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
from dataclasses import dataclass, field
from typing import Any, TextIO

from ...core.errors import ParseError
from ...core.redact import REDACTED, redact, redact_settings
from ...core.yamlio import Located, load_yaml


@dataclass(frozen=True)
class LaunchConfig:
    image: str
    env: dict[str, str]
    args: tuple[str, ...]
    flags: dict[str, Any] = field(default_factory=dict)   # --foo-bar 1 -> {"foo_bar": "1"}
    lines: dict[str, int] = field(default_factory=dict)   # flag or env name -> line in file


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
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass
        out[key] = value
        i += 1
    return out


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
