"""One entry point for any raw file: a result, a launch configuration, a server log, or a
Prometheus metrics dump (text exposition or AIPerf's server-metrics JSONL)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ...core.errors import ParseError
from .launch import parse_launch, shell_launch
from .logscan import Summary, scan
from .prometheus import metric_records
from .prometheus import sniff as sniff_metrics

RESULT_SUFFIXES = (".json", ".jsonl")
LAUNCH_SUFFIXES = (".yaml", ".yml", ".sh")     # .sh: a script that starts the server
# A saved command line (`vllm_command.txt`): a short text file whose content is a command
# that starts vLLM or SGLang. Longer text is a log, whatever commands it quotes.
COMMAND_SUFFIXES = (".txt",)
COMMAND_MAX_BYTES = 16384


def is_command_text(name: str, head: bytes) -> bool:
    """Whether a file of this name, starting with (or holding) ``head``, is a saved launch
    command: a short ``.txt`` that starts a server."""
    if not name.lower().endswith(COMMAND_SUFFIXES) or len(head) > COMMAND_MAX_BYTES:
        return False
    return shell_launch(head.decode("utf-8", errors="replace")) is not None


def is_launch(path: Path) -> bool:
    """Whether a raw file is a launch record: a launch configuration, a script or a saved
    command line."""
    if path.name.lower().endswith(LAUNCH_SUFFIXES):
        return True
    if not path.name.lower().endswith(COMMAND_SUFFIXES):
        return False
    try:
        with path.open("rb") as fp:
            head = fp.read(COMMAND_MAX_BYTES + 1)
    except OSError:
        return False
    return is_command_text(path.name, head)


def launch_engine(flags: dict[str, Any], env: dict[str, str]) -> str:
    """Which engine a command line starts: SGLang's flags or vLLM's ``serve`` / VLLM_* env."""
    if "model_path" in flags or "tp_size" in flags or any(k.startswith("SGLANG") for k in env):
        return "sglang"
    if "serve" in flags.get("_positional", []) or "tensor_parallel_size" in flags or \
            any(k.startswith("VLLM") for k in env):
        return "vllm"
    return "unknown"


def parse_any(fp: BinaryIO, path: str, engine: str = "auto", year: int | None = None,
              summary: Summary | None = None) -> Iterator[dict[str, Any]]:
    """Records of any raw file; ``summary`` is filled in as they are read."""
    summary = summary if summary is not None else Summary(file=path, engine=engine)
    head = fp.read(65536)
    fp.seek(0)
    stripped = head.lstrip()
    if not stripped:
        raise ParseError("empty file, expected a result, a launch configuration or a "
                         "server log", path=path)
    if b"\x00" in head:
        raise ParseError("binary content, expected a result, a launch configuration or a "
                         "server log", path=path)
    lower = path.lower()
    # Metrics: checked before JSON, narrowly (an AIPerf server-metrics line has
    # "timestamp_ns"/"endpoint_url" and "metrics" of sample lists; no result file does).
    if sniff_metrics(fp, path):
        text = fp.read().decode("utf-8", errors="replace")
        yield from metric_records(text, path, engine, summary)
        return
    # JSON: an object, or an array of objects/strings; a log line may start with "[" too.
    # CSV: a client's export (AIPerf, GenAI-Perf). Both go to the client parsers.
    if stripped[:1] == b"{" or re.match(rb"\[\s*[{\]\"]", stripped) or lower.endswith(".csv"):
        from ..clients import read_points

        data = fp.read()
        points = read_points(data, path)
        text = data.decode("utf-8", errors="replace")
        summary.lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        told = next((p.engine for p in points if p.engine), None)
        summary.engine = engine if engine != "auto" else (told or "unknown")
        for index, p in enumerate(points):
            summary.told.extend(p.warnings)
            if p.role != "requests":
                summary.counts["bench_result"] = summary.counts.get("bench_result", 0) + 1
                yield p.record()
            for r in p.requests:
                summary.counts["request"] = summary.counts.get("request", 0) + 1
                yield {"kind": "request", "line": p.line, "point": index, **r}
        return
    if lower.endswith(LAUNCH_SUFFIXES) or is_command_text(lower, head):
        text = fp.read().decode("utf-8", errors="replace")
        line = 1
        if not lower.endswith((".yaml", ".yml")):
            shell = shell_launch(text)
            if shell is None:
                raise ParseError("no command that starts vLLM or SGLang (expected `vllm serve "
                                 "…` or `python -m sglang.launch_server …`)", path=path, line=1)
            cfg, line = shell.config, shell.line
        else:
            cfg = parse_launch(io.StringIO(text), path)
        summary.lines = text.count("\n")
        summary.counts["launch_config"] = 1
        if summary.engine == "auto":
            summary.engine = launch_engine(cfg.flags, cfg.env)
        yield {"kind": "launch_config", "line": line, "image": cfg.image, "env": cfg.env,
               "flags": cfg.flags, "flag_lines": cfg.lines, "passes_args": cfg.passes_args}
        return
    yield from scan(fp, path, engine, year, summary)
