"""`benchreport init RUN_ID PATH…`: start a run from the files a benchmark left behind.

The files are sorted first (`initfiles.survey`): results, server logs, launch scripts,
/metrics dumps and a client's experiment description are copied unchanged into
``data/<RUN_ID>/raw/<engine>/`` (the engine from the content, a guess that says what it
rests on, or ``--engine``); anything else is skipped with one line saying what it is. A
``run.yaml`` is drafted from what the files record (engines and their versions, models,
workloads with the lengths really sent, sweep points, repeats, date, GPUs where a client
states them), ``SHA256SUMS`` is recorded, and the draft is read back as the build reads it
before the folder appears. Results that record different models, tests, engine versions or
launch settings are series of their own, never repeats. What the files cannot say is written
as ``TODO``, which the build reports as "not stated". ``--dry-run`` prints what init would do,
file by file, and writes nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from ..core.errors import ReportError
from ..core.paths import check_run_id
from ..core.redact import redact
from ..core.runmeta import TODO, Load
from ..ingest.clients.base import DECLARED_CLIENT, Point
from ..ingest.points import (
    INPUT_TOLERANCE,
    load_order,
    point_load,
    sent_mean,
    series_of,
    series_parts,
)
from . import checksums
from .initfiles import (
    ENGINE_NAMES,
    UNNAMED,
    Found,
    held_words,
    no_result,
    served_model,
    served_models,
    survey,
)
from .yamldraft import Draft, Flow, Plain, Quoted

__all__ = ["ENGINE_NAMES", "Found", "draft_run_yaml", "drafted_text", "init_run", "runs_found",
           "survey"]

SWEEP_PARAMS = ("max_num_seqs", "max_num_batched_tokens")     # drafted as `params:`


def _cluster(values: list[float]) -> list[float]:
    """Input lengths grouped: each group's first value, within INPUT_TOLERANCE of it."""
    groups: list[float] = []
    for v in sorted(values):
        if not groups or abs(v - groups[-1]) > INPUT_TOLERANCE * groups[-1]:
            groups.append(v)
    return groups


def _mean_len(p: Point, key: str) -> float | None:
    """The mean length really sent (input) or received (output), else the file's target."""
    sent = sent_mean(p, key.split("_")[0])
    if sent:
        return sent
    return float(p.scenario[key]) if p.scenario.get(key) else None


def _declared_len(members: list[Point], key: str, mean: float) -> int:
    """The length run.yaml declares: the target the files were configured with when it is
    within 10% of the mean sent (so the build matches either), else the mean."""
    targets = {float(p.scenario[key]) for p in members if p.scenario.get(key)
               and p.scenario.get(f"{key}_from", "target") == "target"}
    if len(targets) == 1:
        target = targets.pop()
        if abs(target - mean) <= INPUT_TOLERANCE * mean:
            return int(round(target))
    return int(round(mean))


def drafted_text(value) -> Quoted | Plain:
    """A value the files gave, redacted if text: text in quotes (a name stays text)."""
    if isinstance(value, str):
        return Quoted(redact(value))
    return Plain(str(value))


def _rate_text(rate) -> str:
    """A request rate as YAML reads a number: YAML takes ``1e+26`` (a file's absurd rate)
    for text, so an exponent gets a decimal point.

    >>> _rate_text(4.0), _rate_text(0.5), _rate_text("inf"), _rate_text(1e26)
    ('4', '0.5', 'inf', '1.0e+26')
    """
    if rate == "inf":
        return "inf"
    digits, e, exponent = f"{rate:g}".partition("e")
    return f"{digits}{'' if '.' in digits or not e else '.0'}{e}{exponent}"


def _one_or_list(values: list) -> Plain | Flow:
    """One value, or a sweep's values on one line."""
    plain = [Plain(str(v)) for v in values]
    return plain[0] if len(plain) == 1 else Flow(plain)


def runs_found(found: list[Found]) -> list[tuple[str, Point]]:
    """(engine, point) per benchmark run, as the build will count them: two views of one
    run (a CSV beside its JSON, a sweep's summary.json beside its run=N.json files, per-
    request records beside their summary) are one point."""
    from ..core.records import RawFile
    from ..ingest.points import merge_views

    out = []
    for engine in sorted({f.engine for f in found if f.kind == "result"}):
        views = [(p, RawFile(path=Path(f.target), rel=f.target, sha256=""))
                 for f in found if f.engine == engine and f.kind == "result" for p in f.points]
        out += [(engine, p) for p, _, _ in merge_views(views)]
    return out


def _series_keys(points: list[tuple[str, Point]]) -> dict[int, tuple]:
    """id(point) -> what tells its series apart within its engine (see points.series_of):
    the same dimensions the build splits on, and the client when an engine has several."""
    declared = tuple(k for k in SWEEP_PARAMS if any(k in p.params for _, p in points))
    out: dict[int, tuple] = {}
    for engine in {e for e, _ in points}:
        mine = [p for e, p in points if e == engine]
        series = {id(p): series_of(p, declared) for p in mine}
        split = series_parts([(s, "") for s in series.values()])
        several = len({p.client for p in mine}) > 1
        for p in mine:
            out[id(p)] = tuple((k, series[id(p)].get(k)) for k in split) + (
                (("client", p.client),) if several else ())
    return out


def _names(values: list[str], last: str = " and ") -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + last + values[-1]


def _short(model: str) -> str:
    return model.rstrip("/").rsplit("/", 1)[-1]


def _models(points: list[tuple[str, Point]], found: list[Found]) -> list[str]:
    """The models the results record, most results first; else the experiment's."""
    told = [m for m, _ in Counter(p.model for _, p in points if p.model).most_common()]
    return told or sorted({f.meta["model"] for f in found
                           if f.kind == "metadata" and f.meta.get("model")}) \
        or _server_model(found)


def _server_model(found: list[Found]) -> list[str]:
    """The one model the server logs and launch files name, when they all agree."""
    names = {m for ms in served_models(found).values() for m in ms}
    return sorted(names) if len(names) == 1 else []


def model_warnings(found: list[Found]) -> list[str]:
    """What init says when the server files name different models."""
    per = served_models(found)
    if len({m for ms in per.values() for m in ms}) < 2:
        return []
    told = "; ".join(f"{e}: {', '.join(ms)}" for e, ms in sorted(per.items()))
    return [f"the server files name different models ({told}): run.yaml leaves model as "
            "TODO; name the one measured, or make it one run per model"]


def _title(draft: Draft, run_id: str, points: list[tuple[str, Point]], models: list[str]
           ) -> None:
    """The title in both languages: the models (or test names) and the engines."""
    tests = sorted({series_of(p).get("test") for _, p in points} - {None})
    listed = [_short(m) for m in models] if models else tests
    engines = [ENGINE_NAMES.get(e, e) for e in sorted({e for e, _ in points})]
    ko = (f"{_names(listed, ' 및 ')}: " if listed else "") + _names(engines, " 및 ")
    en = (f"{_names(listed)}: " if listed else "") + _names(engines)
    draft.data["title"] = {"ko": drafted_text(f"{ko} 벤치마크 ({run_id})"),
                           "en": drafted_text(f"{en} benchmark ({run_id})")}
    if not listed:          # no TODO in a title: the build shows it as written
        draft.notes[("title",)] = "the files name no model: edit the title"


def _model(draft: Draft, models: list[str], missing: list[str]) -> None:
    if not models:
        missing.append("model")
        draft.data["model"] = Plain(TODO)
        return
    if len(models) > 1:
        draft.heads[("model",)] = [f"the files record {len(models)} models, each a series of "
                                   "its own: " + ", ".join(models)]
    draft.data["model"] = {"name": drafted_text(models[0])}


def _engines(points: list[tuple[str, Point]]) -> list[dict]:
    """Each engine by its id and name, and its version where the results agree on one."""
    engines = []
    for e in sorted({e for e, _ in points}):
        engine = {"id": Plain(e), "name": drafted_text(ENGINE_NAMES.get(e, e))}
        versions = sorted({str(p.params["server_version"]) for x, p in points
                           if x == e and p.params.get("server_version") is not None})
        if len(versions) == 1:
            engine["version"] = drafted_text(versions[0])
        engines.append(engine)
    return engines


def _header(draft: Draft, run_id: str, points: list[tuple[str, Point]], found: list[Found],
            missing: list[str]) -> None:
    """Everything above the workloads: what was run, when, on what and by which engines."""
    models = _models(points, found)
    dates = sorted(p.date[:10] for _, p in points if p.date)
    draft.data["schema"] = 1
    draft.heads[("title",)] = [
        "drafted by `benchreport init` from the files under raw/; TODO marks what they",
        "do not record (the report says \"not stated\" there until you fill it in)"]
    _title(draft, run_id, points, models)
    draft.data["date"] = Plain(dates[0] if dates else TODO)
    if not dates:
        missing.append("date")
    _hardware(draft, found, missing)
    _model(draft, models, missing)
    _deployment(draft, found, missing)
    draft.data["engines"] = _engines(points)


def _hardware(draft: Draft, found: list[Found], missing: list[str]) -> None:
    """GPUs where a client states them (genai-bench's experiment description)."""
    stated = {(f.meta.get("server_gpu_type"), f.meta.get("server_gpu_count"))
              for f in found if f.kind == "metadata"} - {(None, None)}
    if len(stated) == 1:
        gpu, count = stated.pop()
        if gpu and count:
            draft.data["hardware"] = {"servers": 1, "gpus": Plain(str(count)),
                                      "gpu_model": drafted_text(gpu)}
            draft.notes[("hardware",)] = "as genai-bench's experiment_metadata.json states it"
            return
    missing.append("hardware")
    draft.data["hardware"] = Plain(TODO)


def _deployment(draft: Draft, found: list[Found], missing: list[str]) -> None:
    hosted = {f.engine for f in found if f.kind == "result" and "hosted API" in f.guess}
    if len(hosted) == 1:
        draft.data["deployment"] = drafted_text(ENGINE_NAMES.get(next(iter(hosted)), "hosted"))
        draft.notes[("deployment",)] = "the hosted API the client names"
        return
    missing.append("deployment")
    draft.data["deployment"] = Plain(TODO)


def _members(points: list[tuple[str, Point]], group: float) -> list[tuple[str, Point]]:
    def near(p: Point) -> bool:
        x = _mean_len(p, "input_tokens") or 0.0
        return (x == 0.0 and group == 0.0) or (
            group > 0 and abs(x - group) <= INPUT_TOLERANCE * group)
    return [(e, p) for e, p in points if near(p)]


def _loads(members: list[tuple[str, Point]]) -> dict:
    """The concurrencies and the request rates the results ran at (an unbounded rate only
    when nothing else bounded them)."""
    loads = {point_load(p) for _, p in members}
    concs = sorted({x.max_concurrency for x in loads if x.max_concurrency is not None})
    rates = sorted({x.request_rate for x in loads if x.request_rate is not None},
                   key=lambda r: 1e18 if r == "inf" else r)
    out = {}
    if concs:
        out["concurrency"] = _one_or_list(concs)
    if rates and (rates != ["inf"] or not concs):
        out["request_rate"] = _one_or_list([_rate_text(r) for r in rates])
    if not concs and not rates:
        out["request_rate"] = Plain("inf")
    return out


def _mean_sent(pts: list[Point], key: str) -> float | None:
    """The mean over the results of the length each really sent (or received)."""
    lengths = [x for x in (_mean_len(p, key) for p in pts) if x]
    return sum(lengths) / len(lengths) if lengths else None


def _lengths(members: list[tuple[str, Point]], group: float) -> tuple[dict, dict[str, str]]:
    """id, label (the lengths really sent and received), the lengths run.yaml declares and
    the dataset; and the comments for the user where the files record no input length."""
    pts = [p for _, p in members]
    mean_in = _mean_sent(pts, "input_tokens") or group
    mean_out = _mean_sent(pts, "output_tokens")
    shown_in = int(round(mean_in))
    shown_out = int(round(mean_out)) if mean_out else None
    tail = f"-out{shown_out}" if shown_out else ""
    # the label is shown as written in both editions: words of both when no length is known
    label = (f"{shown_in:,}" if shown_in else _no_input_label()) \
        + (f" → {shown_out:,}" if shown_out else "")
    item = {"id": drafted_text(f"in{shown_in}{tail}" if shown_in else f"in-unstated{tail}"),
            "label": drafted_text(label),
            "input_tokens": _declared_len(pts, "input_tokens", mean_in)}
    if mean_out:
        item["output_tokens"] = _declared_len(pts, "output_tokens", mean_out)
    item["dataset"] = _dataset(pts)
    notes = {} if shown_in else {
        "label": "the files record no input length: edit the label",
        "input_tokens": "TODO: the files record no input length"}
    return item, notes


def _dataset(pts: list[Point]) -> Quoted | Plain:
    """The dataset most results name, or TODO."""
    datasets = Counter(p.scenario.get("dataset") for p in pts
                       if p.scenario.get("dataset") not in (None, "", "[redacted]"))
    return drafted_text(datasets.most_common(1)[0][0]) if datasets else Plain(TODO)


def _no_input_label() -> str:
    """"input length not stated / 입력 길이 밝히지 않음": one label serves both editions."""
    from ..core.i18n import load_catalogue
    from ..core.paths import LABELS

    return " / ".join(load_catalogue(LABELS, lang)["env.workload_no_input"]
                      for lang in ("en", "ko"))


def _sweep_params(members: list[tuple[str, Point]]) -> dict[str, set]:
    params: dict[str, set] = defaultdict(set)
    for _, p in members:
        for k in SWEEP_PARAMS:
            if p.params.get(k) is not None:
                params[k].add(p.params[k])
    return params


def _workload(members: list[tuple[str, Point]], group: float, keys: dict[int, tuple]
              ) -> tuple[dict, dict[str, str]]:
    """One workload of run.yaml and its comments (by key)."""
    item, notes = _lengths(members, group)
    item.update(_loads(members))
    params = _sweep_params(members)
    if params:
        item["params"] = {k: _one_or_list(sorted(vs)) for k, vs in sorted(params.items())}
    # repeats only of results that agree on everything but the repeat
    per_point = Counter((e, keys[id(p)], point_load(p), tuple(sorted(
        (k, str(v)) for k, v in p.params.items() if k in params))) for e, p in members)
    repeats = max(per_point.values()) if per_point else 1
    if repeats > 1:
        item["repeats"] = repeats
    return item, notes


def _named_workload(wid: str, members: list[tuple[str, Point]], keys: dict[int, tuple]
                    ) -> tuple[dict, dict[str, str]]:
    """The workload a declared client's records name (their scenario): its id, the lengths
    its records give and the loads they ran at."""
    item, notes = _workload(members, 0.0, keys)
    item.update(id=drafted_text(wid), label=drafted_text(wid))
    notes.pop("label", None)
    return item, notes


def _workloads(draft: Draft, points: list[tuple[str, Point]], keys: dict[int, tuple]) -> None:
    """One workload per scenario a declared client's records name, and the other results'
    workloads by their input lengths."""
    named, rest = _by_scenario(points)
    drafted = [_named_workload(wid, members, keys) for wid, members in named.items()]
    inputs = [x for x in (_mean_len(p, "input_tokens") for _, p in rest) if x]
    if rest:
        drafted += [_workload(_members(rest, group), group, keys)
                    for group in (_cluster(inputs) if inputs else [0.0])]
    draft.data["workloads"] = [item for item, _ in drafted]
    for i, (_, notes) in enumerate(drafted):
        draft.notes.update({("workloads", i, key): note for key, note in notes.items()})


def _by_scenario(points: list[tuple[str, Point]]
                 ) -> tuple[dict[str, list[tuple[str, Point]]], list[tuple[str, Point]]]:
    """The results by the workload their records name, and those that name none."""
    named: dict[str, list[tuple[str, Point]]] = defaultdict(list)
    for e, p in points:
        if p.scenario.get("workload"):
            named[str(p.scenario["workload"])].append((e, p))
    return named, [(e, p) for e, p in points if not p.scenario.get("workload")]


def client_block(text: str, shown: str) -> list[str]:
    """run.yaml's ``client:`` block: the user's mapping file as written, indented (their own
    text, comments and all, so it is not dumped from data)."""
    body = [line for line in text.splitlines() if line.strip() not in ("---", "...")]
    return [f"client:   # the user's own client, declared in {Path(shown).name}"] + [
        f"  {line}".rstrip() for line in body]


def _sources(found: list[Found], clients: list[str]) -> list[dict]:
    """Where the results came from: the clients and the endpoints they name."""
    source = {"what": drafted_text(f"result files of {', '.join(clients)}, copied unchanged by "
                            "benchreport init")}
    urls = sorted({u for f in found if f.kind == "result" for u in f.meta.get("urls", [])})
    if urls:
        source["endpoint"] = drafted_text(", ".join(urls))
    return [source]


def draft_run_yaml(run_id: str, found: list[Found], client: tuple[str, str] | None = None
                   ) -> tuple[str, list[str]]:
    """The run.yaml text, and what the files could not say. ``client``: the text of the
    user's client mapping and its file name, written as run.yaml's ``client:`` block."""
    from ..core.runmeta import parse_client_yaml

    points = runs_found(found)
    declared = parse_client_yaml(*client).name if client else DECLARED_CLIENT
    clients = sorted({declared if p.client == DECLARED_CLIENT else p.client
                      for _, p in points})
    missing: list[str] = []
    draft = Draft()
    _header(draft, run_id, points, found, missing)
    _workloads(draft, points, _series_keys(points))
    draft.data["sources"] = _sources(found, clients)
    text = draft.text()
    if client is not None:
        text += "".join(f"{line}\n" for line in client_block(*client))
    return text, missing


def draft_server_run_yaml(run_id: str, found: list[Found]) -> tuple[str, list[str]]:
    """The run.yaml of a run with no client results (``results: none``): its engines are
    those of the server files given, and it has no workloads."""
    engines = sorted({f.engine for f in found if f.copied})
    names = [ENGINE_NAMES.get(e, e) for e in engines]
    missing = ["date", "hardware", "deployment"]
    draft = Draft(heads={("title",): [
        "drafted by `benchreport init` from server files only (no client result was",
        "given); TODO marks what they do not record (the report says \"not stated\")"]})
    draft.data.update(schema=1, title={
        "ko": drafted_text(_names(names, " 및 ") + f" 서버 파일 ({run_id})"),
        "en": drafted_text(_names(names) + f" server files ({run_id})")},
        date=Plain(TODO), hardware=Plain(TODO))
    _model(draft, _server_model(found), missing)
    kinds = sorted({f.kind for f in found if f.copied})
    draft.data.update(
        deployment=Plain(TODO),
        engines=[{"id": Plain(e), "name": drafted_text(name)}
                 for e, name in zip(engines, names, strict=True)],
        results=Plain("none"), workloads=[], sources=[{"what": drafted_text(
            f"server files ({', '.join(kinds)}), copied unchanged by benchreport init")}])
    draft.notes.update({("title",): "edit to name what was run",
                        ("results",): "no client result: the report shows what the server "
                                      "files say"})
    return draft.text(), missing


# ---------------------------------------------------------------------------------------

def _stage(folder: Path, run_id: str, found: list[Found], text: str) -> list:
    """Write the run into ``folder/<run_id>`` and read it back as the build does: the
    matched points, or the build's own error."""
    from ..core.runmeta import load_run
    from ..ingest.points import load_points

    run_dir = folder / run_id
    for f in found:
        if f.copied:
            dest = run_dir / "raw" / f.engine / f.target
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f.source, dest)
    (run_dir / "run.yaml").write_text(text, encoding="utf-8")
    checksums.record(run_dir)
    return load_points(load_run(run_id, folder, folder / ".report"))


def _check_targets(found: list[Found]) -> None:
    targets = Counter((f.engine, f.target) for f in found if f.copied)
    twice = [t for t, n in targets.items() if n > 1]
    if twice:
        raise ReportError(f"two given files would both be raw/{twice[0][0]}/{twice[0][1]}",
                          hint="give their folders instead, so each keeps its path")


def _client_mapping(path: Path | None):
    """(the declared client, (its text, its file name)) of ``--client``, or (None, None)."""
    if path is None:
        return None, None
    from ..core.files import read_text
    from ..core.runmeta import parse_client_yaml

    if not Path(path).is_file():
        raise ReportError(f"{path}: no such client mapping file",
                          hint="give the YAML of run.yaml's client: block in a file")
    text = read_text(Path(path), str(path))
    return parse_client_yaml(text, str(path)), (text, str(path))


def init_run(run_id: str, paths: list[Path], data_root: Path = Path("data"),
             engine: str | None = None, out: Callable[[str], None] = print,
             dry_run: bool = False, client: Path | None = None) -> Path | None:
    """Create data/<run_id>/ from ``paths`` and return its folder; with ``dry_run``, print
    what would be done, file by file, and write nothing (returns None). ``client``: a file
    with the mapping of the user's own client (run.yaml's ``client:`` block): the files it
    matches are read by it and the block is written into run.yaml."""
    check_run_id(run_id)
    folder = Path(data_root) / run_id
    if folder.exists() and not dry_run:
        raise ReportError(f"{folder.as_posix()}/ already exists; init starts a new run",
                          hint="choose another run id, or remove the folder first")
    declared, mapping = _client_mapping(client)
    found = survey(paths, engine, declared)
    server_only = not any(f.kind == "result" for f in found)
    if server_only and not any(f.copied for f in found):
        _nothing_to_copy(found, out, dry_run)
    _check_targets(found)
    note = f"{held_words(found)}: a run of the servers' own files only " \
        "(results: none); the report shows what they record" if server_only else None
    text, missing = draft_server_run_yaml(run_id, found) if server_only else \
        draft_run_yaml(run_id, found, mapping)
    if dry_run:
        _dry_run(run_id, found, text, note, out)
        return None
    entries = _write_run(folder, run_id, found, text)
    if note:
        out(note)
    _summary(run_id, folder, found, entries, missing, out, declared)
    return folder


def _nothing_to_copy(found: list[Found], out: Callable[[str], None], dry_run: bool) -> NoReturn:
    """No result and no server file among the files given: say what each was, and stop."""
    if dry_run:
        _table(found, [], out)
    else:
        _skipped(found, out)
    raise no_result(found)


def _dry_run(run_id: str, found: list[Found], text: str, note: str | None,
             out: Callable[[str], None]) -> None:
    """Stage the run in a temporary folder (so the table shows what the build will read),
    print the table and the drafted run.yaml, and keep nothing."""
    with tempfile.TemporaryDirectory(prefix="benchreport-init-") as tmp:
        entries = _stage(Path(tmp), run_id, found, text)
        _table(found, entries, out)
    if note:
        out(note)
    out("dry run: nothing written; run.yaml would be:")
    for line in text.splitlines():
        out(f"  {line}")


def _write_run(folder: Path, run_id: str, found: list[Found], text: str) -> list:
    """Stage the run beside ``folder`` and move it into place only once the build has read
    it: a run the build refuses never appears half made."""
    staging = folder.with_name(f".{run_id}.init")
    if staging.exists():
        shutil.rmtree(staging)
    try:
        entries = _stage(staging, run_id, found, text)
        (staging / run_id).rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return entries


def _guess_words(f: Found) -> str:
    if f.engine == UNNAMED:
        return "not stated in the files: an unnamed server; pass --engine to name it"
    return f"guessed from {f.guess}"


def _guesses(found: list[Found]) -> list[str]:
    said = []
    for f in found:
        if f.kind == "result" and f.guess:
            line = f"engine: {f.engine} ({_guess_words(f)})"
            if line not in said:
                said.append(line)
    return said


def _skipped(found: list[Found], out: Callable[[str], None]) -> None:
    for f in found:
        if not f.copied:
            out(f"skipped {f.target}: {f.what}")


def _client_words(client: str, declared) -> str:
    """A points' client as init's summary names it: the declared client by its name."""
    if client == DECLARED_CLIENT and declared is not None:
        return f"{declared.name}, declared by the user"
    return client


def _summary(run_id: str, folder: Path, found: list[Found], entries: list,
             missing: list[str], out: Callable[[str], None], declared=None) -> None:
    copied = [f for f in found if f.copied]
    out(f"{folder.as_posix()}/: {len(copied)} files copied, run.yaml drafted, SHA256SUMS "
        "recorded")
    for line in _guesses(found):
        out(f"  {line}")
    _skipped(found, lambda line: out(f"  {line}"))
    for line in _engine_points(entries, declared):
        out(f"  {line}")
    if not entries:
        out("  no client results: the report shows what the server files record")
    elif not any(f.kind == "log" for f in found):
        out("  no server logs: the report shows the clients' results only")
    for line in model_warnings(found):
        out(f"  warning: {line}")
    if missing:
        out(f"  not stated in the files (TODO in run.yaml): {', '.join(missing)}")
    out(f"next: make report RUN={run_id}")


def _engine_points(entries: list, declared) -> list[str]:
    """Per engine: how many points, from which clients, at which loads (×repeats), and its
    series, so the user sees at once whether init read the files as meant."""
    per: dict[str, list[Load]] = defaultdict(list)
    clients: dict[str, set[str]] = defaultdict(set)
    for e in entries:
        per[e.engine].append(e.load)
        clients[e.engine].add(_client_words(e.point.client, declared))
    lines = []
    for eng in sorted(per):
        loads = Counter(per[eng])
        shown = ", ".join(f"{k.id}×{n}" if n > 1 else k.id
                          for k, n in sorted(loads.items(), key=lambda kv: load_order(kv[0])))
        series = sorted({e.variant for e in entries if e.engine == eng and e.variant})
        more = f"; series: {', '.join(series)}" if series else ""
        lines.append(f"{eng}: {len(per[eng])} points ({', '.join(sorted(clients[eng]))}): "
                     f"{shown}{more}")
    return lines


def _table(found: list[Found], entries: list, out: Callable[[str], None]) -> None:
    """One line per point of each result file and one per other file: file → engine, model,
    workload, load, repeat, and whether it is used or skipped, and why."""
    by_file: dict[str, list] = defaultdict(list)
    also: dict[str, str] = {}

    def below(rel: str) -> str:                 # the path below raw/<engine>/
        return rel.split("/raw/", 1)[-1].split("/", 1)[-1]

    for e in entries:
        by_file[below(e.file.rel)].append(e)
        for other in e.also:
            also[below(other.split(" ", 1)[0])] = below(e.file.rel)
    out("file → engine, model, workload, load, repeat: used or skipped, and why")
    for f in found:
        if not f.copied:
            out(f"{f.target} → skipped: {f.what}")
            continue
        why = f.what + (f"; engine {_guess_words(f)}" if f.guess else "")
        if f.kind != "result":
            model = served_model(f)
            out(f"{f.target} → {f.engine}" + (f", {model}" if model else "") + f": used ({why})")
            continue
        mine = by_file.get(f.target, [])
        if not mine:
            out(f"{f.target} → {f.engine}: used ({why}), the same run as "
                f"{also.get(f.target, 'another file')}")
        for e in mine:
            load = e.load.id + (f" ({e.variant})" if e.variant else "")
            out(f"{f.target} → {f.engine}, {e.point.model or 'model not stated'}, {e.workload}, "
                f"{load}, repeat {e.repeat}: used ({why})")
