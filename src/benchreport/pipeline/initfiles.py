"""What each file given to `benchreport init` is, and which engine served its results.

`survey` reads every file once and sorts it: a benchmark result (copied, its points read), a
server log, a launch script, a /metrics dump or a client's description of its experiment
(copied: the build reads them), or something else (skipped, with one line saying what it is:
a README, an image, a client's own log or an export the build does not read). A file that a
known client wrote but that does not parse stops init with one line, as it always did.

The engine of a result is what its file records (a ``backend``, SGLang's ``server_info``,
a layout only vLLM writes), else what the files beside it say (a server log, a launch script,
a /metrics dump, genai-bench's ``server_engine``), else its endpoint URL or the hosted API it
names; each guess says what it rests on. Only when nothing says does init ask for ``--engine``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import MissingInputError, ParseError, ReportError
from ..core.files import looks_binary
from ..ingest.clients.base import Point, redact

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "tgi": "TGI",
                "nim": "NVIDIA NIM", "tensorrtllm": "TensorRT-LLM", "groq": "Groq",
                "baseten": "Baseten", "server": "unnamed server"}
# the engine id of results whose server nothing names: they are kept and built, under a
# name that says so, rather than refused (``--engine`` names it)
UNNAMED = "server"
_IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".bmp")
_DOCS = (".md", ".rst", ".adoc", ".txt.md")
_DOC_STEMS = ("readme", "license", "licence", "copying", "notice", "authors", "changelog",
              "sources")
_CLIENT_COMMANDS = re.compile(r"^\s*(?:exec\s+)?(?:\S*/)?(aiperf|genai-perf|genai-bench|guidellm"
                              r"|llmperf|vllm\s+bench|python[0-9.]*\s+-m\s+sglang\.bench_serving"
                              r"|python[0-9.]*\s+\S*(?:benchmark_serving|token_benchmark_ray)"
                              r"\.py)\b", re.MULTILINE)


@dataclass
class Found:
    source: Path                 # the file as given
    target: str                  # path under raw/<engine>/
    kind: str                    # "result", "metadata", "metrics", "launch", "log", "skip"
    what: str                    # what it is, or (skipped) why it is left out
    engine: str = ""
    points: list[Point] = field(default_factory=list)
    root: Path = Path(".")       # the folder given (a file's own folder)
    guess: str = ""              # how the engine was found, when the file does not say
    meta: dict[str, Any] = field(default_factory=dict)   # model, GPUs, URL, version, …
    sha256: str = ""

    @property
    def copied(self) -> bool:
        return self.kind != "skip"


def _files(paths: list[Path]) -> list[tuple[Path, str, Path]]:
    """(file, its path below raw/<engine>/, the folder given): a folder keeps its name and
    layout."""
    out = []
    for given in paths:
        if not given.exists():
            raise MissingInputError(f"{given} not found (expected a file or a folder)")
        if given.is_file():
            out.append((given, given.name, given.parent))
            continue
        for top, dirs, files in os.walk(given):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.startswith("."):
                    continue
                path = Path(top) / name
                out.append((path, (Path(given.name) / path.relative_to(given)).as_posix(),
                            given))
    return out


def _by_name(name: str) -> str | None:
    low = name.lower()
    if low.endswith(_IMAGES):
        return "an image"
    if low.endswith(".pdf"):
        return "a PDF document"
    if low.endswith((".html", ".htm")):
        return "an HTML page, not a result"
    if low.endswith(".ipynb"):
        return "a notebook, not a result"
    stem = low.split(".", 1)[0]
    if low.endswith(_DOCS) or stem in _DOC_STEMS:
        return "text, not a result"
    return None


def _export(doc) -> str | None:
    """What a JSON/CSV file no client module reads is, when it is a known companion file."""
    value = doc.value
    if doc.kind == "json" and isinstance(value, dict):
        if isinstance(value.get("timeslices"), list):
            return ("AIPerf's per-time-slice export; the run's summary "
                    "(profile_export_aiperf.json) is read")
        if isinstance(value.get("experiments"), list) and (
                "service_kind" in value or "version" in value):
            return ("GenAI-Perf's perf_analyzer export, read the profile_export_genai_perf.json "
                    "beside it")
    if doc.kind == "csv":
        head = value.lstrip()[:400]
        if head.startswith("Timeslice,"):
            return ("AIPerf's per-time-slice export; the run's summary "
                    "(profile_export_aiperf.csv) is read")
    if doc.kind == "jsonl" and doc.value and isinstance(doc.value[0][1], dict) and (
            "gpu_uuid" in doc.value[0][1] or "gpu_index" in doc.value[0][1]):
        return "AIPerf's GPU telemetry, which the build does not read"
    kinds = {"json": "JSON", "jsonl": "JSON Lines", "csv": "CSV"}
    return f"{kinds.get(doc.kind, 'text')}, not a result of a known client"


def _structured(path: Path, data: bytes, shown: str) -> tuple[str, list[Point], Any] | None:
    """("result" | "metadata" | "skip", points, doc or why) for JSON/CSV content, else None."""
    from ..ingest import clients
    from ..ingest.points import RESULT_SUFFIXES

    if path.suffix.lower() not in RESULT_SUFFIXES:
        return None                                # the build reads results by these names
    if data.lstrip()[:40].startswith(b"# AIPerf Server Metrics Export"):
        return ("skip", [], "AIPerf's summary of the server's /metrics (statistics per "
                "metric, not scrapes), which the build does not read; its "
                "server_metrics_export.jsonl is")
    doc = clients.decode(data, shown)              # a .json that does not parse stops init
    if doc.kind == "text":
        return "skip", [], "text, not a result"
    client = clients.sniff(doc)
    if client is None:
        return "skip", [], _export(doc)
    points = clients.read_points(data, shown)      # a known client's file: errors stop init
    if not points and client == "genai-bench":
        return "metadata", [], doc
    return "result", points, doc


def _text_kind(path: Path, data: bytes) -> tuple[str, str, str]:
    """(kind, what, engine) of a file that is not JSON or CSV: a launch script or YAML, a
    server log, or something to skip."""
    from ..ingest.parsers.anyfile import COMMAND_SUFFIXES, LAUNCH_SUFFIXES, is_command_text
    from ..ingest.parsers.launch import shell_launch

    text = data[: 1 << 20].decode("utf-8", errors="replace")
    low = path.name.lower()
    shell = shell_launch(text)
    if shell is not None:
        name = ENGINE_NAMES[shell.engine]
        if low.endswith(".sh"):
            return "launch", f"{name} launch script", shell.engine
        if is_command_text(low, data):
            return "launch", f"{name} launch command", shell.engine
        if not low.endswith(COMMAND_SUFFIXES):
            return ("skip", f"a {name} launch command, but the build reads launch commands "
                    "only from files named *.sh or *.txt (or a .yaml launch configuration)",
                    "")
    if low.endswith((".yaml", ".yml")):
        return _yaml_launch(path, text)
    if low.endswith(LAUNCH_SUFFIXES):
        return "skip", "a shell script that starts no vLLM or SGLang server", ""
    if "AIPerf" in text[:20000] or low == "aiperf.log":
        return "skip", "AIPerf's own log", ""
    command = _CLIENT_COMMANDS.search(text[:4000])
    if command and len(text.strip().splitlines()) <= 3:
        return ("skip", f"the benchmark client's command line ({command.group(1)} …), not a "
                "server launch", "")
    return _log(path, data)


def _yaml_launch(path: Path, text: str) -> tuple[str, str, str]:
    import io

    from ..ingest.parsers.anyfile import launch_engine
    from ..ingest.parsers.launch import parse_launch

    try:
        cfg = parse_launch(io.StringIO(text), path.name)
    except ReportError:
        return "skip", "YAML, not a launch configuration (image, env, args)", ""
    engine = launch_engine(cfg.flags, cfg.env)
    if engine == "unknown":
        return "skip", "YAML that starts no vLLM or SGLang server", ""
    return "launch", f"{ENGINE_NAMES[engine]} launch configuration", engine


def _log(path: Path, data: bytes) -> tuple[str, str, str]:
    from ..ingest.parsers.logscan import BLOCK, detect_engine

    try:
        engine = detect_engine(data[:BLOCK], path.name)
    except ReportError:
        return "skip", "text, not a result, a server log or a launch script", ""
    return "log", f"{ENGINE_NAMES[engine]} server log", engine


def _metrics_engine(path: Path, data: bytes) -> str:
    from ..ingest.parsers.logscan import Summary
    from ..ingest.parsers.prometheus import metric_records

    summary = Summary(file=path.name, engine="auto")
    try:
        for _ in metric_records(data.decode("utf-8", errors="replace"), path.name,
                                summary=summary):
            pass
    except ReportError:
        return ""
    return summary.engine if summary.engine in ENGINE_NAMES else ""


def _declared(found: Found, data: bytes, client) -> Found:
    """A file the user's declared client mapping matches: read by that mapping."""
    from ..ingest.clients import read_declared

    entry = client.entry(found.source.name)
    found.kind, found.points = "result", read_declared(data, str(found.source), entry)
    found.what = f"result of the client declared by the user, {client.name!r} " \
        f"(files {entry.match!r})"
    return found


def classify(path: Path, target: str, root: Path, client=None) -> Found:
    """What one file is (see the module's docstring); a file that the user's declared
    client (``client``, a `runmeta.DeclaredClient`) matches by name is read by it."""
    from ..ingest.io import is_metrics

    found = Found(path, target, "skip", "", root=root)
    if client is not None and client.entry(path.name) is not None:
        data = path.read_bytes()
        found.sha256 = hashlib.sha256(data).hexdigest()
        return _declared(found, data, client)
    why = _by_name(path.name)
    data = b"" if why else path.read_bytes()
    found.sha256 = hashlib.sha256(data).hexdigest()
    if why is None and not data.strip():
        why = "an empty file"
    elif why is None and looks_binary(data[:65536]):
        why = "binary content, not a result"
    if why:
        found.what = why
        return found
    if is_metrics(path):
        found.kind, found.what = "metrics", "a /metrics dump"
        found.engine = _metrics_engine(path, data)
        return found
    structured = _structured(path, data, str(path))
    if structured is not None:
        kind, points, doc = structured
        found.kind, found.points = kind, points
        if kind == "skip":
            found.what = doc
        elif kind == "metadata":
            found.what = "genai-bench's experiment description"
            found.meta = _experiment(doc)
        else:
            found.what = f"{points[0].client} result" if points else "result"
            found.meta = _result_meta(doc)
        return found
    found.kind, found.what, found.engine = _text_kind(path, data)
    return found


def _experiment(doc) -> dict[str, Any]:
    from ..ingest.clients.genai_bench import experiment

    return experiment(doc)


def _urls(value: Any) -> list[str]:
    """Endpoint URLs a client records (AIPerf's input_config, GuideLLM's args and backend)."""
    from ..ingest.clients.base import dig

    if not isinstance(value, dict):
        return []
    found = [dig(value, "input_config", "endpoint", "url"),
             dig(value, "input_config", "endpoint", "urls"), dig(value, "input_config", "u"),
             dig(value, "input_config", "url"), dig(value, "args", "target")]
    for bench in value.get("benchmarks") or []:
        found.append(dig(bench, "config", "backend", "target"))
    out: list[str] = []
    for item in found:
        for url in item if isinstance(item, list) else [item]:
            if isinstance(url, str) and url.strip() and redact(url.strip()) not in out:
                out.append(redact(url.strip()))
    return out


def _result_meta(doc) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    urls = _urls(doc.value) if doc.kind == "json" else []
    if urls:
        meta["urls"] = urls
    return meta


# ---------------------------------------------------------------------------------------
# engines

def _from_content(f: Found) -> tuple[str, str] | None:
    """The engine a result's own content records or implies, and from what."""
    told = {p.engine for p in f.points if p.engine}
    if len(told) > 1:
        raise ParseError(f"results of several engines in one file ({', '.join(sorted(told))})",
                         path=str(f.source), hint="split the file, or pass --engine")
    if told:
        engine = told.pop().lower()
        return engine, ""
    clients = {p.client for p in f.points}
    if clients == {"vllm-nightly-aggregate"}:
        return "vllm", "the layout of vLLM's nightly benchmark_results.json"
    if clients == {"vllm-bench-serve"} and all(
            "run_number" in p.params and "max_num_seqs" in p.params for p in f.points):
        return "vllm", "the vllm bench sweep layout (run_number with serve parameters)"
    if clients == {"sglang-bench-serving"} and all(
            "server_version" in p.params or "tp_size" in p.params for p in f.points):
        return "sglang", "the server_info SGLang writes into its records"
    return None


def _hints(found: list[Found]) -> dict[Path, dict[str, str]]:
    """folder -> {engine: evidence} from the logs, launch scripts, /metrics dumps and
    experiment descriptions in it."""
    out: dict[Path, dict[str, str]] = {}
    for f in found:
        engine, what = f.engine, ""
        if f.kind == "log":
            what = f"{f.source.name} beside the results"
        elif f.kind == "launch":
            what = f"the launch script {f.source.name} beside the results"
        elif f.kind == "metrics":
            what = f"the /metrics dump {f.source.name} beside the results"
        elif f.kind == "metadata" and f.meta.get("server_engine"):
            engine = f.meta["server_engine"].lower()
            what = f"server_engine in {f.source.name}"
        if engine and what:
            out.setdefault(f.source.parent, {}).setdefault(engine, what)
    return out


def _beside(f: Found, hints: dict[Path, dict[str, str]]) -> tuple[str, str] | None:
    """The engine the nearest folder (the result's own, then up to the folder given) names,
    when it names one."""
    folder = f.source.parent
    while True:
        here = hints.get(folder, {})
        if len(here) == 1:
            return next(iter(here.items()))
        if folder == f.root or folder == folder.parent or f.root not in folder.parents:
            return None
        folder = folder.parent


_HOSTS = (("sglang", "sglang"), ("vllm", "vllm"), ("nim", "nim"), ("tgi", "tgi"),
          ("trtllm", "trtllm"))
_PORTS = {8000: "vllm", 30000: "sglang"}


def _from_url(urls: list[str]) -> tuple[str, str] | None:
    for url in urls:
        m = re.match(r"(?:[a-z]+://)?([^/:?#]+)(?::(\d+))?", url.strip(), re.IGNORECASE)
        if not m:
            continue
        host = m.group(1).lower()
        for word, engine in _HOSTS:
            if re.search(rf"(^|[.-]){word}($|[.-])", host):
                return engine, f"the host name in the endpoint URL {url}"
        if m.group(2) and int(m.group(2)) in _PORTS:
            engine = _PORTS[int(m.group(2))]
            return engine, (f"the endpoint URL {url}: port {m.group(2)} is "
                            f"{ENGINE_NAMES[engine]}'s default")
    return None


def _hosted(f: Found, found: list[Found]) -> tuple[str, str] | None:
    """A hosted API the client names (llmperf-leaderboard's ``framework``, genai-bench's
    ``api_backend``): the service is what served, whatever engine runs behind it."""
    frameworks = {p.params.get("framework") for p in f.points} - {None}
    if len(frameworks) == 1:
        name = str(frameworks.pop())
        return _slug(name), f"the hosted API llmperf's framework names ({name}); the engine " \
                            "behind it is not stated"
    for m in found:
        backend = m.meta.get("api_backend") if m.kind == "metadata" else None
        if backend and m.source.parent == f.source.parent:
            if backend.lower() in ("vllm", "sglang"):
                return backend.lower(), f"api_backend in {m.source.name}"
            if backend.lower() not in ("openai", "generic"):
                return _slug(backend), (f"the hosted API genai-bench's api_backend names "
                                        f"({backend}); the engine behind it is not stated")
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "engine"


def _result_engine(f: Found, hints: dict[Path, dict[str, str]], found: list[Found]) -> None:
    for step in (_from_content(f), _beside(f, hints), _from_url(f.meta.get("urls", [])),
                 _hosted(f, found)):
        if step is not None:
            f.engine, f.guess = step
            return


def _clients(f: Found) -> set[str]:
    return {p.client for p in f.points}


def _with_their_summary(found: list[Found]) -> None:
    """Per-request records and a second view of a run go with the summary they belong to."""
    for f in found:
        if f.kind != "result" or f.engine or not f.points or any(
                p.role not in ("requests", "duplicate") for p in f.points):
            continue
        host = {g.engine for g in found if g.kind == "result" and g.engine
                and g.source.parent == f.source.parent and _clients(g) == _clients(f)}
        if len(host) == 1:
            f.engine = host.pop()


def _with_the_results_beside(found: list[Found]) -> None:
    """A description or /metrics dump with no engine of its own goes with the results in its
    folder."""
    for f in found:
        if f.copied and not f.engine and f.kind != "result":
            near = {g.engine for g in found if g.kind == "result" and g.engine
                    and g.source.parent == f.source.parent}
            if len(near) == 1:
                f.engine = near.pop()


def assign_engines(found: list[Found], engine: str | None) -> None:
    """Set each copied file's engine. A result's is ``--engine``, else what its content
    says, else its neighbours', URL's or hosted API's (``guess`` says which); a log's, launch
    script's or dump's is its content's, else ``--engine``. A result nothing speaks for stops
    init."""
    hints = _hints(found)
    for f in found:
        if not f.copied or (f.kind != "result" and f.engine):
            continue                     # a log, launch script or dump says whose it is
        if engine:
            f.engine = engine
        elif f.kind == "result":
            _result_engine(f, hints, found)
    _with_their_summary(found)
    _with_the_results_beside(found)
    for f in found:
        if f.copied and not f.engine:
            # the file does not say, and no server log, launch script or URL beside it does
            f.engine, f.guess = UNNAMED, "not stated in the files; --engine names it"


def survey(paths: list[Path], engine: str | None, client=None) -> list[Found]:
    """Every given file, sorted (see the module's docstring); byte-identical copies of a file
    already found are skipped. ``client``: the user's declared client, whose files are read
    by its mapping."""
    found: list[Found] = []
    seen: dict[str, str] = {}
    for path, target, root in _files(paths):
        f = classify(path, target, root, client)
        if f.copied and f.sha256 in seen:
            f.kind, f.what, f.points = "skip", f"the same bytes as {seen[f.sha256]}", []
        elif f.copied:
            seen[f.sha256] = target
        found.append(f)
    assign_engines(found, engine)
    return found


_KIND_WORDS = {"metrics": ("/metrics dump", "/metrics dumps"), "log": ("server log", "server logs"),
               "launch": ("launch file", "launch files"),
               "metadata": ("experiment description", "experiment descriptions")}


def held_words(found: list[Found]) -> str:
    """"no benchmark result among the given files (only 3 /metrics dumps)": what they
    hold instead of a result."""
    from collections import Counter

    kinds = Counter(f.kind for f in found if f.copied)
    held = ", ".join(f"{n} {_KIND_WORDS[k][n > 1]}" for k, n in sorted(kinds.items()))
    skipped = sum(not f.copied for f in found)
    if skipped:
        held += (", " if held else "") + f"{skipped} skipped"
    return "no benchmark result among the given files" + (f" (only {held})" if held else "")


def no_result(found: list[Found]) -> MissingInputError:
    """The error for files among which no benchmark result is: what they hold instead."""
    return MissingInputError(held_words(found),
                             hint="give the client's result files (JSON, JSON Lines, CSV) of "
                                  "vllm bench serve, sglang.bench_serving, GuideLLM, AIPerf, "
                                  "GenAI-Perf, genai-bench or llmperf")


# ---------------------------------------------------------------------------------------
# The model a server file says its engine serves, for run.yaml's ``model: name:``.

_MODEL_KEYS = ("model", "model_path", "model_tag")


def _model_in(settings: dict[str, Any]) -> str | None:
    """``model`` / ``model_path`` / ``model_tag``, else ``vllm serve MODEL``'s positional.

    >>> _model_in({"model_path": "org/m"}), _model_in({"_positional": ["serve", "org/n"]})
    ('org/m', 'org/n')
    >>> _model_in({"model": "[redacted]"}) is None
    True
    """
    positional = settings.get("_positional") or []
    named = [settings.get(k) for k in _MODEL_KEYS]
    named.append(positional[1] if positional[:1] == ["serve"] and len(positional) > 1 else None)
    return next((str(v) for v in named if isinstance(v, str) and v and "[redacted]" not in v),
                None)


def served_model(f: Found) -> str | None:
    """The model a server log (its logged arguments) or launch file names, or None; read
    once and kept in ``f.meta``."""
    if f.kind not in ("log", "launch"):
        return None
    if "served_model" not in f.meta:
        f.meta["served_model"] = _read_served_model(f)
    return f.meta["served_model"]


def _read_served_model(f: Found) -> str | None:
    from ..ingest.parsers.anyfile import parse_any

    try:
        with open(f.source, "rb") as fh:
            for rec in parse_any(fh, str(f.source), f.engine or "auto"):
                settings = rec.get("flags") if rec["kind"] == "launch_config" else \
                    rec.get("args") if rec["kind"] == "server_args" else None
                name = _model_in(settings) if isinstance(settings, dict) else None
                if name:
                    return name
    except (ReportError, OSError, ValueError):
        return None
    return None


def served_models(found: list[Found]) -> dict[str, list[str]]:
    """engine -> the models its logs and launch files name (each once, in file order)."""
    out: dict[str, list[str]] = {}
    for f in found:
        name = served_model(f) if f.copied else None
        if name and name not in out.setdefault(f.engine, []):
            out[f.engine].append(name)
    return {e: names for e, names in out.items() if names}
