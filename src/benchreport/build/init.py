"""`benchreport init RUN_ID PATH…`: start a run from the files a benchmark left behind.

The files are copied unchanged into ``data/<RUN_ID>/raw/<engine>/`` (the engine from the
content, or from ``--engine``), a ``run.yaml`` is drafted from what they record (engines,
model, workloads, sweep points, repeats, date), and ``SHA256SUMS`` is recorded. What the
files cannot say (hardware, deployment, …) is written as ``TODO``, which the build reports
as "not stated". ``make report RUN=<RUN_ID>`` then builds with no hand edits.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import MissingInputError, ParseError, ReportError
from ..core.paths import check_run_id
from ..core.runmeta import Load
from ..ingest.clients import read_points
from ..ingest.clients.base import Point
from ..ingest.points import INPUT_TOLERANCE, _load_order, point_load
from . import checksums

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "tgi": "TGI"}
SKIP = {"experiment_metadata.json"}        # genai-bench's folder description: read, kept


@dataclass
class Found:
    source: Path                 # the file as given
    target: str                  # path under raw/<engine>/
    engine: str
    points: list[Point]
    kind: str                    # "result", "log", "launch", "other"


def _files(paths: list[Path]) -> list[tuple[Path, str]]:
    """(file, its path below raw/<engine>/): a folder keeps its own name and layout."""
    out = []
    for given in paths:
        if not given.exists():
            raise MissingInputError(f"{given} not found (expected a file or a folder)")
        if given.is_file():
            out.append((given, given.name))
            continue
        for top, dirs, files in os.walk(given):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.startswith("."):
                    continue
                path = Path(top) / name
                out.append((path, (Path(given.name) / path.relative_to(given)).as_posix()))
    return out


def _engine_of_log(path: Path) -> tuple[str, str] | None:
    """("log" | "launch", engine) for a server log or launch file, else None."""
    from ..ingest.parsers.anyfile import LAUNCH_SUFFIXES
    from ..ingest.parsers.logscan import detect_engine

    if path.name.lower().endswith(LAUNCH_SUFFIXES):
        import io

        from ..ingest.parsers.anyfile import launch_engine
        from ..ingest.parsers.launch import parse_launch

        cfg = parse_launch(io.StringIO(path.read_text(encoding="utf-8")), path.name)
        engine = launch_engine(cfg.flags, cfg.env)
        return ("launch", engine) if engine != "unknown" else None
    try:
        with open(path, "rb") as fh:
            return "log", detect_engine(fh.read(1 << 20), path.name)
    except ReportError:
        return None


def survey(paths: list[Path], engine: str | None) -> list[Found]:
    """Read every given file: its points (results), or its engine (logs, launch files)."""
    found = []
    for path, target in _files(paths):
        if path.name in SKIP:
            found.append(Found(path, target, engine or "", [], "other"))
            continue
        data = path.read_bytes()
        try:
            points = read_points(data, str(path))
        except ParseError as exc:
            if "offline" in exc.message or path.suffix.lower() in (".json", ".jsonl", ".csv"):
                raise
            log = _engine_of_log(path)
            if log is None:
                raise
            kind, guessed = log
            found.append(Found(path, target, engine or guessed, [], kind))
            continue
        told = {p.engine for p in points if p.engine}
        if len(told) > 1 and not engine:
            raise ParseError(f"results of several engines in one file ({', '.join(sorted(told))})",
                             path=str(path), hint="split the file, or pass --engine")
        found.append(Found(path, target, engine or (told.pop() if told else ""), points,
                           "result"))
    if not any(f.kind == "result" for f in found):
        raise MissingInputError("no benchmark result among the given files",
                                hint="give the client's result files (JSON, JSON Lines, CSV)")
    # a folder's description and its logs go with the engine of the results beside them
    for f in found:
        if not f.engine:
            near = {g.engine for g in found if g.engine and g.source.parent == f.source.parent}
            if len(near) == 1:
                f.engine = near.pop()
    unknown = [f for f in found if not f.engine]
    if unknown:
        raise ReportError(f"cannot tell which engine served {unknown[0].source} (the file does "
                          "not say)", hint="pass --engine vllm (or the engine's id)")
    return found


def _cluster(values: list[float]) -> list[float]:
    """Input lengths grouped: each group's first value, within INPUT_TOLERANCE of it."""
    groups: list[float] = []
    for v in sorted(values):
        if not groups or abs(v - groups[-1]) > INPUT_TOLERANCE * groups[-1]:
            groups.append(v)
    return groups


def _mean_len(p: Point, key: str) -> float | None:
    if p.scenario.get(key):
        return float(p.scenario[key])
    done = p.fields.get("completed")
    total = p.fields.get(f"total_{'input' if key == 'input_tokens' else 'output'}_tokens")
    if done and total:
        return total / done
    lens = [r.get(key) for r in p.requests if r.get(key)]
    return sum(lens) / len(lens) if lens else None


def _yaml_scalar(value) -> str:
    import json

    from ..core.redact import redact

    if isinstance(value, str):
        return json.dumps(redact(value), ensure_ascii=False)
    return str(value)


def _rate_text(rate) -> str:
    return "inf" if rate == "inf" else f"{rate:g}"


def runs_found(found: list[Found]) -> list[tuple[str, Point]]:
    """(engine, point) per benchmark run, as the build will count them: two views of one
    run (a CSV beside its JSON, a sweep's summary.json beside its run=N.json files, per-
    request records beside their summary) are one point."""
    from ..core.records import RawFile
    from ..ingest.points import merge_views

    out = []
    for engine in sorted({f.engine for f in found}):
        views = [(p, RawFile(path=Path(f.target), rel=f.target, sha256=""))
                 for f in found if f.engine == engine for p in f.points]
        out += [(engine, p) for p, _, _ in merge_views(views)]
    return out


def draft_run_yaml(run_id: str, found: list[Found]) -> tuple[str, list[str]]:
    """The run.yaml text, and what the files could not say."""
    points = runs_found(found)
    engines = sorted({e for e, _ in points})
    models = Counter(p.model for _, p in points if p.model)
    clients = sorted({p.client for _, p in points})
    dates = sorted(p.date[:10] for _, p in points if p.date)
    missing = []
    inputs = [x for x in (_mean_len(p, "input_tokens") for _, p in points) if x]
    groups = _cluster(inputs) if inputs else [0.0]
    lines = ["schema: 1",
             "# drafted by `benchreport init` from the files under raw/; TODO marks what they",
             "# do not record (the report says \"not stated\" there until you fill it in)"]
    model = models.most_common(1)[0][0] if models else None
    what = model.rstrip("/").rsplit("/", 1)[-1] if model else "TODO"
    names = " and ".join(ENGINE_NAMES.get(e, e) for e in engines)
    lines += ["title:", f"  ko: {_yaml_scalar(f'{what}: {names} 벤치마크 ({run_id})')}",
              f"  en: {_yaml_scalar(f'{what}: {names} benchmark ({run_id})')}"]
    if dates:
        lines.append(f"date: {dates[0]}")
    else:
        lines.append("date: TODO")
        missing.append("date")
    lines.append("hardware: TODO")
    missing.append("hardware")
    if model:
        lines += ["model:", f"  name: {_yaml_scalar(model)}"]
    else:
        lines.append("model: TODO")
        missing.append("model")
    lines.append("deployment: TODO")
    missing.append("deployment")
    lines.append("engines:")
    for e in engines:
        lines += [f"  - id: {e}", f"    name: {_yaml_scalar(ENGINE_NAMES.get(e, e))}"]
    lines.append("workloads:")
    for group in groups:
        members = [(e, p) for e, p in points
                   if (_mean_len(p, "input_tokens") or 0.0) == 0.0 and group == 0.0
                   or group and abs((_mean_len(p, "input_tokens") or 0) - group)
                   <= INPUT_TOLERANCE * group]
        sample = next((p for _, p in members if p.scenario.get("input_tokens")), None)
        size = int(round(float(sample.scenario["input_tokens"]) if sample else group))
        outs = [x for x in (_mean_len(p, "output_tokens") for _, p in members) if x]
        out = int(round(sum(outs) / len(outs))) if outs else None
        loads = sorted({point_load(p) for _, p in members},
                       key=lambda x: (x.max_concurrency or 0, 1e18 if x.request_rate in (
                           None, "inf") else x.request_rate))
        concs = sorted({x.max_concurrency for x in loads if x.max_concurrency is not None})
        rates = sorted({x.request_rate for x in loads if x.request_rate is not None},
                       key=lambda r: 1e18 if r == "inf" else r)
        wid = f"in{size}" + (f"-out{out}" if out else "")
        label = f"{size:,}" + (f" → {out:,}" if out else "")
        datasets = Counter(p.scenario.get("dataset") for _, p in members
                           if p.scenario.get("dataset"))
        lines += [f"  - id: {_yaml_scalar(wid)}", f"    label: {_yaml_scalar(label)}",
                  f"    input_tokens: {size}"]
        if out:
            lines.append(f"    output_tokens: {out}")
        lines.append(f"    dataset: {_yaml_scalar(datasets.most_common(1)[0][0])}" if datasets
                     else "    dataset: TODO")
        if concs:
            lines.append(f"    concurrency: {concs[0] if len(concs) == 1 else concs}")
        if rates and (rates != ["inf"] or not concs):
            shown = [_rate_text(r) for r in rates]
            lines.append(f"    request_rate: {shown[0] if len(shown) == 1 else '[' + ', '.join(shown) + ']'}")
        if not concs and not rates:
            lines.append("    request_rate: inf")
        params = defaultdict(set)
        for _, p in members:
            for k, v in p.params.items():
                if k in ("max_num_seqs", "max_num_batched_tokens") and v is not None:
                    params[k].add(v)
        if params:
            lines.append("    params:")
            for k, vs in sorted(params.items()):
                vals = sorted(vs)
                lines.append(f"      {k}: {vals[0] if len(vals) == 1 else vals}")
        per_point = Counter((e, point_load(p), tuple(sorted(
            (k, str(v)) for k, v in p.params.items() if k in params))) for e, p in members)
        repeats = max(per_point.values()) if per_point else 1
        if repeats > 1:
            lines.append(f"    repeats: {repeats}")
    lines += ["sources:", "  - what: " + _yaml_scalar(
        f"result files of {', '.join(clients)}, copied unchanged by benchreport init")]
    return "\n".join(lines) + "\n", missing


def init_run(run_id: str, paths: list[Path], data_root: Path = Path("data"),
             engine: str | None = None, out: Callable[[str], None] = print) -> Path:
    """Create data/<run_id>/ from ``paths``; return its folder."""
    check_run_id(run_id)
    folder = Path(data_root) / run_id
    if folder.exists():
        raise ReportError(f"{folder.as_posix()}/ already exists; init starts a new run",
                          hint="choose another run id, or remove the folder first")
    found = survey(paths, engine)
    targets = Counter((f.engine, f.target) for f in found)
    twice = [t for t, n in targets.items() if n > 1]
    if twice:
        raise ReportError(f"two given files would both be raw/{twice[0][0]}/{twice[0][1]}",
                          hint="give their folders instead, so each keeps its path")
    text, missing = draft_run_yaml(run_id, found)
    staging = folder.with_name(f".{run_id}.init")
    if staging.exists():
        shutil.rmtree(staging)
    try:
        for f in found:
            dest = staging / "raw" / f.engine / f.target
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f.source, dest)
        (staging / "run.yaml").write_text(text, encoding="utf-8")
        checksums.record(staging)
        staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _summary(run_id, folder, found, missing, out)
    return folder


def _summary(run_id: str, folder: Path, found: list[Found], missing: list[str],
             out: Callable[[str], None]) -> None:
    out(f"{folder.as_posix()}/: {len(found)} files copied, run.yaml drafted, SHA256SUMS "
        "recorded")
    per: dict[str, list[Load]] = defaultdict(list)
    clients: dict[str, set[str]] = defaultdict(set)
    for engine, p in runs_found(found):
        per[engine].append(point_load(p))
        clients[engine].add(p.client)
    for eng in sorted(per):
        loads = Counter(per[eng])
        shown = ", ".join(f"{k.id}×{n}" if n > 1 else k.id
                          for k, n in sorted(loads.items(), key=lambda kv: _load_order(kv[0])))
        out(f"  {eng}: {len(per[eng])} points ({', '.join(sorted(clients[eng]))}): {shown}")
    logs = [f for f in found if f.kind == "log"]
    if not logs:
        out("  no server logs: the report shows the clients' results only")
    if missing:
        out(f"  not stated in the files (TODO in run.yaml): {', '.join(missing)}")
    out(f"next: make report RUN={run_id}")
