"""Benchmark points: every result file of a run, from any client, matched to its place in
the campaign that run.yaml declares (engine × workload × load × repeat).

A point is matched by what its own file records: the input length (to a workload), the
concurrency and request rate (to one of the workload's loads) and sweep parameters such as
vLLM's ``max_num_seqs``. When the file and run.yaml disagree, the error names both values.
Two results of one point count as repeats only when run.yaml declares ``repeats`` or the
files come from a repeat layout (``vllm bench sweep``'s ``run=N.json``); otherwise it is an
error, as it always was.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import MissingInputError, ParseError, ReportError
from ..core.records import RawFile, Run
from ..core.runmeta import Load, Workload
from .clients import read_declared, read_points
from .clients.base import DECLARED_CLIENT, Point

__all__ = ["INPUT_TOLERANCE", "LAUNCH_PARAMS", "OUTPUT_TOLERANCE", "PointEntry", "RESULT_SUFFIXES",
           "SERIES_WORDS", "load_points", "match_load", "match_workload", "merge_views",
           "point_load", "point_row", "read_result", "request_row", "result_files", "sent_mean",
           "series_of", "without_load"]

RESULT_SUFFIXES = (".json", ".jsonl", ".csv")
INPUT_TOLERANCE = 0.10        # a file's mean input length within 10% of the workload's
OUTPUT_TOLERANCE = 0.10


@dataclass
class PointEntry:
    """One benchmark point matched to the run: which engine, workload, load and repeat."""

    engine: str
    workload: str
    load: Load
    repeat: int                   # 1-based
    variant: str                  # sweep parameters besides the load ("max_num_seqs-4"), and
                                  # the client when an engine has several ("client-guidellm")
    point: Point
    file: RawFile
    also: list[str] = field(default_factory=list)      # other views of the same run

    @property
    def id(self) -> str:
        """``<engine>.<workload>.<load>[.<variant>].r<repeat>``."""
        parts = [self.engine, self.workload, self.load.id]
        if self.variant:
            parts.append(self.variant)
        return ".".join(parts + [f"r{self.repeat}"])


def _mean_input(p: Point) -> float | None:
    if p.scenario.get("input_tokens"):
        return float(p.scenario["input_tokens"])
    done = p.fields.get("completed")
    total = p.fields.get("total_input_tokens")
    if done and total:
        return total / done
    if p.requests:
        lens = [r["input_tokens"] for r in p.requests if r.get("input_tokens")]
        if lens:
            return sum(lens) / len(lens)
    return None


def _mean_output(p: Point) -> float | None:
    if p.scenario.get("output_tokens"):
        return float(p.scenario["output_tokens"])
    done = p.fields.get("completed")
    total = p.fields.get("total_output_tokens")
    return total / done if done and total else None


def point_load(p: Point) -> Load:
    """The load a point's file records (no concurrency and no rate when it states none)."""
    if p.load.get("kind") == "unstated":
        return Load()
    rate = p.load.get("request_rate", p.fields.get("request_rate"))
    conc = p.load.get("max_concurrency", p.fields.get("max_concurrency"))
    if p.load.get("kind") == "synchronous":
        conc = 1
    return Load(int(conc) if conc is not None else None,
                rate if rate in (None, "inf") else float(rate))


def _same_load(found: Load, declared: Load) -> bool:
    def rate_eq(a, b) -> bool:
        if a is None or b is None:
            return a == b or {a, b} <= {None, "inf"}     # unbounded and inf are one thing
        if "inf" in (a, b):
            return a == b
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    return found.max_concurrency == declared.max_concurrency and rate_eq(
        found.request_rate, declared.request_rate)


def match_load(p: Point, w: Workload, where: str) -> Load:
    """The declared load this point ran at; a one-line error names both values otherwise."""
    found = point_load(p)
    unstated = p.load.get("kind") == "unstated"
    # a single-point workload whose file records no load at all: the declared one
    if len(w.loads) == 1 and found == Load():
        return w.loads[0]
    declared = ", ".join(_describe(x) for x in w.loads)
    if unstated:        # never matched to an unbounded load: the file does not say
        raise ParseError(f"the file states no load (no concurrency, no request rate), so it "
                         f"matches none of the loads of run.yaml's workload {w.id!r} "
                         f"({declared})", path=where,
                         hint="keep one load in the workload, or move the file")
    for load in w.loads:
        if _same_load(found, load):
            return load
    raise ParseError(f"the file records {_describe(found)}, but run.yaml's workload "
                     f"{w.id!r} declares {declared}", path=where,
                     hint="correct run.yaml's concurrency / request_rate, or move the file")


def _describe(load: Load) -> str:
    parts = []
    if load.max_concurrency is not None:
        parts.append(f"concurrency {load.max_concurrency}")
    if load.request_rate is not None:
        parts.append("request rate inf" if load.request_rate == "inf"
                     else f"request rate {load.request_rate:g}")
    return " and ".join(parts) or "no concurrency or rate limit"


def sent_mean(p: Point, which: str) -> float | None:
    """The mean input or output tokens the point's requests really had (total ÷ completed,
    else the per-request mean), whatever length the client was configured with."""
    done = p.fields.get("completed")
    total = p.fields.get(f"total_{which}_tokens")
    if done and total:
        return total / done
    lens = [r[f"{which}_tokens"] for r in p.requests if r.get(f"{which}_tokens")]
    return sum(lens) / len(lens) if lens else None


def _lengths(p: Point, which: str) -> list[float]:
    """The lengths a workload may be declared with: the target the file records and the
    mean really sent (a random length drawn up to a maximum has a mean well below it, and
    `init` drafts the mean)."""
    first = _mean_input(p) if which == "input" else _mean_output(p)
    sent = sent_mean(p, which)
    return [x for x in dict.fromkeys((first, sent)) if x is not None]


def _shown(lengths: list[float]) -> str:
    if len(lengths) > 1 and abs(lengths[0] - lengths[1]) > INPUT_TOLERANCE * lengths[1]:
        return f"{lengths[0]:.0f} tokens configured, {lengths[1]:.0f} sent on average"
    return f"{lengths[0]:.0f} tokens"


def _named_workload(p: Point, name: str, workloads: tuple[Workload, ...], where: str
                    ) -> Workload:
    """The workload a declared client's record names (its scenario), its input length
    checked against run.yaml's."""
    w = next((w for w in workloads if w.id == name), None)
    if w is None:
        raise ParseError(f"the record names workload {name!r}, which run.yaml does not "
                         f"declare (workloads: {', '.join(x.id for x in workloads)})",
                         path=where, hint="add a workload with that id to run.yaml")
    mean_in = _mean_input(p)
    if mean_in and abs(w.input_tokens - mean_in) > INPUT_TOLERANCE * w.input_tokens:
        raise ParseError(f"the record's input length ({mean_in:.0f} tokens) differs from "
                         f"workload {name!r}'s input_tokens ({w.input_tokens}) in run.yaml",
                         path=where)
    return w


def match_workload(p: Point, workloads: tuple[Workload, ...], where: str) -> Workload:
    if p.scenario.get("workload"):               # a declared client names the workload
        return _named_workload(p, str(p.scenario["workload"]), workloads, where)
    lengths = _lengths(p, "input")
    if not lengths:
        if len(workloads) == 1:
            return workloads[0]
        raise ParseError("the file records no input length, so it matches no workload "
                         "of run.yaml", path=where)
    best, mean_in = min(((w, x) for x in lengths for w in workloads),
                        key=lambda wx: abs(wx[0].input_tokens - wx[1]))
    if abs(best.input_tokens - mean_in) > INPUT_TOLERANCE * best.input_tokens:
        known = ", ".join(f"{w.id}={w.input_tokens}" for w in workloads)
        raise ParseError(f"the file's input length ({_shown(lengths)}) matches no "
                         f"workload of run.yaml (input_tokens: {known})", path=where)
    outs = _lengths(p, "output")
    # only a target the file records is checked; a mean output length varies with the load
    if best.output_tokens and outs and p.scenario.get("output_tokens") and \
            p.scenario.get("output_tokens_from", "target") == "target" and all(
                abs(best.output_tokens - x) > OUTPUT_TOLERANCE * best.output_tokens
                for x in outs):
        raise ParseError(f"the file's output length ({_shown(outs)}) differs from "
                         f"workload {best.id!r}'s output_tokens ({best.output_tokens}) in "
                         "run.yaml", path=where)
    return best


def _variant(p: Point, w: Workload, where: str) -> str:
    """The sweep parameters of run.yaml's workload that the point records, checked."""
    parts = []
    for name, allowed in w.params:
        if name not in p.params:
            continue
        value = p.params[name]
        if not any(str(value) == str(a) for a in allowed):
            raise ParseError(f"the file records {name}={value}, but run.yaml's workload "
                             f"{w.id!r} declares {name}: {list(allowed)}", path=where)
        if len(allowed) > 1:
            parts.append(f"{name}-{value}".replace(".", "_"))
    return ",".join(parts)


def _repeat_layout(p: Point) -> int | None:
    """The repeat index a file's own layout records (``run_number`` of vllm bench sweep)."""
    n = p.params.get("run_number")
    return int(n) if isinstance(n, int | float) and not isinstance(n, bool) else None


def merge_views(found: list[tuple[Point, RawFile]], notes: list[str] | None = None
                ) -> list[tuple[Point, RawFile, list[str]]]:
    """One entry per run: AIPerf's CSV beside its JSON is the same run, and its per-request
    JSON Lines attach to the summary of the same folder; a vllm bench sweep ``summary.json``
    repeats its ``run=N.json`` files. No file is left out without a line in ``notes``: a
    CSV whose figures match no summary beside it is a run of its own."""
    notes = notes if notes is not None else []
    out: list[tuple[Point, RawFile, list[str]]] = []
    by_folder: dict[tuple[Path, str], list[int]] = defaultdict(list)
    requests: list[tuple[Point, RawFile]] = []
    duplicates: list[tuple[Point, RawFile]] = []
    for p, raw in found:
        if p.role == "requests":
            requests.append((p, raw))
        elif p.role == "duplicate":
            duplicates.append((p, raw))
        else:
            by_folder[(raw.path.parent, p.client)].append(len(out))
            out.append((p, raw, []))
    out = _sweep_twins(out, by_folder)
    _attach_duplicates(out, duplicates, notes)
    _attach_requests(out, requests)
    return out


def _attach_duplicates(out: list[tuple[Point, RawFile, list[str]]],
                       duplicates: list[tuple[Point, RawFile]], notes: list[str]) -> None:
    """A CSV export joins the summary beside it whose figures it repeats; one that matches
    none is a run of its own (with a note when there were summaries to match)."""
    summaries = list(out)
    for p, raw in duplicates:
        hosts = [o for o in summaries if o[1].path.parent == raw.path.parent
                 and o[0].client == p.client]
        host = next((o for o in hosts if _same_run(p, o[0])), None)
        if host is not None:
            host[2].append(raw.rel)
            continue
        out.append((p, raw, []))                 # a CSV alone is the run's only summary
        if hosts:
            notes.append(f"{raw.rel}: its figures match none of the {len(hosts)} "
                         f"{p.client} summaries beside it, so it is read as a run of its own")


def _attach_requests(out: list[tuple[Point, RawFile, list[str]]],
                     requests: list[tuple[Point, RawFile]]) -> None:
    """Per-request records join the summary of their run, with the counts it lacks."""
    for p, raw in requests:
        hosts = [o for o in out if o[1].path.parent == raw.path.parent
                 and o[0].client == p.client]
        if not hosts:
            raise ParseError("per-request records with no summary file of the same run "
                             "beside them", path=raw.rel)
        host = _requests_host(p, hosts, raw)
        host[0].requests = p.requests
        for key in ("completed", "failed"):
            if key in p.fields and key not in host[0].fields:
                host[0].fields[key] = p.fields[key]
                host[0].sources[key] = f"{p.sources.get(key, key)} ({raw.rel})"
        host[2].append(raw.rel)


def _sweep_twins(out: list[tuple[Point, RawFile, list[str]]],
                 by_folder: dict[tuple[Path, str], list[int]]
                 ) -> list[tuple[Point, RawFile, list[str]]]:
    """vllm bench sweep: summary.json (an array) holds the same payloads as run=N.json;
    each of its elements is recorded as another view of its run=N twin."""
    keep = []
    for i, (p, raw, _also) in enumerate(out):
        n = _repeat_layout(p)
        twin = next((j for j in by_folder[(raw.path.parent, p.client)] if j != i
                     and out[j][1].path != raw.path and _repeat_layout(out[j][0]) == n
                     and n is not None and p.where.startswith("[")
                     and not out[j][0].where.startswith("[")), None)
        if twin is not None:
            out[twin][2].append(f"{raw.rel} {p.where}")
            continue
        keep.append(i)
    return [out[i] for i in keep]


def _same_run(a: Point, b: Point) -> bool:
    """Whether two views (a CSV export and a JSON summary) hold the same run's figures: every
    number both hold agrees to the CSV's two decimals."""
    common = [k for k in a.fields if k in b.fields and k not in ("max_concurrency",
                                                                   "request_rate")
              and isinstance(a.fields[k], int | float) and isinstance(b.fields[k], int | float)]
    return bool(common) and all(
        abs(a.fields[k] - b.fields[k]) <= 0.006 + 1e-4 * abs(b.fields[k]) for k in common)


def _requests_host(p: Point, hosts: list, raw: RawFile):
    """The summary that per-request records belong to: the only one beside them, or the one
    whose request counts they repeat."""
    if len(hosts) == 1:
        return hosts[0]
    n = len(p.requests)
    same = [o for o in hosts if (o[0].fields.get("completed") or 0)
            + (o[0].fields.get("failed") or 0) == n]
    if len(same) == 1:
        return same[0]
    raise ParseError(f"per-request records beside {len(hosts)} summaries of {p.client}; "
                     "which run they belong to cannot be told", path=raw.rel,
                     hint="keep each run's files in a folder of its own")


def result_files(run: Run, engine: str) -> list[RawFile]:
    """The engine's result files: those of known clients by their suffix, and every file
    an entry of run.yaml's ``client:`` matches by name."""
    from .io import is_metrics, raw_files

    client = run.meta.client
    return [raw for raw in raw_files(run, engine)
            if (client is not None and client.entry(raw.path.name) is not None)
            or (raw.path.suffix.lower() in RESULT_SUFFIXES
                and raw.path.name != "experiment_metadata.json"
                and not is_metrics(raw.path))]      # AIPerf's server_metrics_export.jsonl


def read_result(run: Run, raw: RawFile) -> list[Point]:
    """The points of one result file: by run.yaml's declared client when one of its entries
    matches the file's name, else by the known client that wrote it."""
    entry = run.meta.client.entry(raw.path.name) if run.meta.client else None
    data = raw.path.read_bytes()
    return read_declared(data, raw.rel, entry) if entry else read_points(data, raw.rel)


# Settings a result file records of the server's launch (SGLang's server_info, a vllm bench
# sweep's serve parameters): unless run.yaml's workload sweeps them (``params:``), results
# that differ in one are two series, never repeats of one point.
LAUNCH_PARAMS = ("tp_size", "dp_size", "pp_size", "ep_size", "dcp_size",
                 "chunked_prefill_size", "max_running_requests", "mem_fraction_static",
                 "schedule_policy", "attention_backend", "kv_cache_dtype", "quantization",
                 "disable_radix_cache", "enable_dp_attention", "speculative_algorithm",
                 "speculative_num_steps", "speculative_eagle_topk",
                 "speculative_num_draft_tokens", "max_num_seqs", "max_num_batched_tokens")
SERIES_WORDS = {"model": "model", "test": "test name", "version": "engine version"}
_LOAD_PART = re.compile(r"[_-](?:qps|rate|request_rate|concurrency)[_-]?(?:inf|[0-9.]+)(?=$|[_-])")


def without_load(name: str) -> str:
    """A test name without the load part vLLM's nightly CI appends to it.

    >>> without_load("serving_qwen2_5_7B_tp1_qps_inf"), without_load("t_qps_4_concurrency_16")
    ('serving_qwen2_5_7B_tp1', 't')
    """
    return _LOAD_PART.sub("", name).strip("_-") or name


def series_of(p: Point, declared: tuple[str, ...] = ()) -> dict[str, str]:
    """What a result records it measured besides its load: the model, the test (vLLM nightly
    ``Test name``, SGLang ``tag``; without the load part), the engine's version and launch
    settings (other than the sweep parameters ``declared`` in run.yaml). Results that differ
    in one of these are different series."""
    out: dict[str, str] = {}
    if p.model and p.model.strip():
        out["model"] = p.model.strip()
    test = next((p.params[k] for k in ("test_name", "tag") if isinstance(p.params.get(k), str)
                 and p.params[k].strip()), None)
    if test:
        out["test"] = without_load(test.strip())
    if p.params.get("server_version") is not None:
        out["version"] = str(p.params["server_version"])
    for key in LAUNCH_PARAMS:
        if key not in declared and p.params.get(key) is not None:
            out[key] = str(p.params[key])
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "_", text.lower().replace(".", "_")).strip("_") or "x"


def series_parts(found: list[tuple[dict[str, str], str]]) -> list[str]:
    """The series dimensions on which an engine's results disagree (two known values)."""
    values: dict[str, set[str]] = defaultdict(set)
    for series, _ in found:
        for key, value in series.items():
            values[key].add(value)
    return [k for k in (*SERIES_WORDS, *LAUNCH_PARAMS) if len(values.get(k, ())) > 1]


def _series_variant(series: dict[str, str], split: list[str], names: set[str]) -> str:
    parts = []
    for key in split:
        value = series.get(key)
        if value is None:
            parts.append(f"{key}-unstated")
            continue
        short = value.rstrip("/").rsplit("/", 1)[-1] if key == "model" else value
        # two models with one last path part (a/m, b/m) keep their whole names apart
        if key == "model" and sum(n.rstrip("/").rsplit("/", 1)[-1] == short for n in names) > 1:
            short = value
        parts.append(f"{key}-{_slug(short)}")
    return ",".join(parts)


def _check_declared_repeats(members: list, engine: str) -> None:
    """run.yaml says these results are repeats of one point: they must record one model,
    test and engine version (and launch settings)."""
    first = members[0]
    for other in members[1:]:
        for key in (*SERIES_WORDS, *LAUNCH_PARAMS):
            a, b = first[6].get(key), other[6].get(key)
            if a is not None and b is not None and a != b:
                what = SERIES_WORDS.get(key, key)
                raise ReportError(
                    f"run.yaml declares repeats: {first[3].repeats} for workload "
                    f"{first[3].id!r}, but the results of engine {engine!r} at load "
                    f"{first[4].id} record two {what}s: {a} ({_at(first)}) and {b} "
                    f"({_at(other)})",
                    hint="repeats are runs of one configuration; drop `repeats:` so each "
                         f"{what} is a series of its own, or keep one {what}'s results")


def _at(member) -> str:
    return f"{member[1].rel}:{member[0].line or member[0].where}"


def _read_engine(run: Run, engine, names: dict[str, str], notes: list[str]
                 ) -> list[tuple[Point, RawFile]]:
    found = []
    for raw in result_files(run, engine.id):
        for p in read_result(run, raw):
            notes.extend(p.warnings)
            if p.engine and p.engine != engine.id and p.engine in names:
                raise ParseError(
                    f"a result of {names[p.engine]} (backend {p.engine!r}) in "
                    f"{engine.name}'s folder raw/{engine.id}/", path=raw.rel, line=p.line,
                    hint=f"move it to raw/{p.engine}/")
            found.append((p, raw))
    return found


def _matched(run: Run, merged: list) -> list[tuple]:
    """(point, file, other views, workload, load, sweep variant, series) per result."""
    several = len({p.client for p, _, _ in merged}) > 1
    matched = []
    for p, raw, also in merged:
        where = f"{raw.rel}:{p.line}" if p.line else raw.rel
        if p.client == DECLARED_CLIENT:                  # name the record, not only its line
            where = f"{where}: {p.where}"
        w = match_workload(p, run.meta.workloads, where)
        load = match_load(p, w, where)
        sweep = ",".join(x for x in (_variant(p, w, where),
                                     f"client-{p.client}" if several else "") if x)
        matched.append((p, raw, also, w, load, sweep,
                        series_of(p, tuple(name for name, _ in w.params))))
    return matched


def _grouped(run: Run, engine: str, merged: list) -> dict[tuple, list]:
    """The engine's results by point (workload, load, variant). The variant holds the sweep
    parameters, the client when the engine has several (clients define TTFT, TPOT and ITL
    differently), and the model, test, version or launch setting when the results disagree
    on one: each of these is a series of its own, never repeats of one another."""
    matched = _matched(run, merged)
    split = series_parts([(m[6], m[3].id) for m in matched])
    models = {m[6]["model"] for m in matched if "model" in m[6]}
    unsplit: dict[tuple, list] = defaultdict(list)
    for m in matched:
        unsplit[(m[3].id, m[4].id, m[5])].append(m)
    groups: dict[tuple, list] = defaultdict(list)
    for members in unsplit.values():
        for m in members:
            variant = ",".join(x for x in (m[5], _series_variant(m[6], split, models)) if x)
            groups[(m[3].id, m[4].id, variant)].append((*m[:5], variant))
    # run.yaml declares repeats, yet no series has two results of a point: the repeats it
    # means can only be results of different models (tests, versions): say so
    for (wid, _, _), members in unsplit.items():
        w = members[0][3]
        if split and w.repeats > 1 and len(members) > 1 and max(
                len(g) for k, g in groups.items() if k[0] == wid) == 1:
            _check_declared_repeats(members, engine)
    return groups


def _check_group(engine: str, wid: str, members: list) -> None:
    w = members[0][3]
    layout = [_repeat_layout(m[0]) for m in members]
    if len(members) > 1 and w.repeats < 2 and None in layout:
        first, second = (_at(m) for m in members[:2])
        if not w.is_sweep:
            raise ReportError(
                f"two results for engine {engine!r} and workload {wid!r}: {first} "
                f"and {second}",
                hint="keep one result per engine and workload under raw/<engine>/, "
                     "or declare `repeats:` in run.yaml if they are repeats")
        raise ReportError(
            f"two results for engine {engine!r}, workload {wid!r} and load "
            f"{members[0][4].id}: {first} and {second}",
            hint="declare `repeats:` in run.yaml if they are repeats of one point, "
                 "or keep one result per point under raw/<engine>/")
    if len(members) > max(w.repeats, 1) and None in layout:
        raise ReportError(
            f"{len(members)} results for engine {engine!r}, workload {wid!r} and "
            f"load {members[0][4].id}, but run.yaml declares repeats: {w.repeats}",
            path=members[0][1].rel)


def load_points(run: Run, notes: list[str] | None = None) -> list[PointEntry]:
    """Every benchmark point of the run, matched to engine, workload, load and repeat."""
    notes = notes if notes is not None else []
    entries: list[PointEntry] = []
    names = {e.id: e.name for e in run.meta.engines}
    for engine in run.meta.engines:
        merged = merge_views(_read_engine(run, engine, names, notes), notes)
        for (wid, _, variant), members in _grouped(run, engine.id, merged).items():
            _check_group(engine.id, wid, members)
            order = sorted(members, key=lambda m: (
                _repeat_layout(m[0]) if _repeat_layout(m[0]) is not None else 1 << 30,
                m[1].rel, m[0].line or 0, m[0].where))
            for i, (p, raw, also, w, load, variant) in enumerate(order, start=1):
                entries.append(PointEntry(engine=engine.id, workload=w.id, load=load,
                                          repeat=i, variant=variant, point=p, file=raw,
                                          also=also))
    if not entries and not run.meta.server_only:
        raise MissingInputError(
            f"no benchmark result files under {run.paths.rel(run.paths.raw)}/<engine>/",
            hint="put each engine's result files in raw/<engine-id>/ as listed in run.yaml")
    return sorted(entries, key=lambda e: (e.engine, e.workload, load_order(e.load),
                                          e.variant, e.repeat))


def load_order(load: Load) -> tuple:
    rate = load.request_rate
    return (load.max_concurrency if load.max_concurrency is not None else 1 << 30,
            float("inf") if rate in (None, "inf") else rate)


def point_row(e: PointEntry) -> dict[str, Any]:
    """A point as one row of the ``points`` table."""
    p = e.point
    row: dict[str, Any] = {
        "point": e.id, "engine": e.engine, "workload": e.workload, "load": e.load.id,
        "max_concurrency_target": e.load.max_concurrency,
        "request_rate_target": None if e.load.request_rate is None else (
            float("inf") if e.load.request_rate == "inf" else e.load.request_rate),
        "repeat": e.repeat, "variant": e.variant, "client": p.client, "file": e.file.rel,
        "sha256": e.file.sha256, "where": p.where, "line": p.line,
        "also": list(e.also), "model": p.model, "date": p.date,
        "scenario_input_tokens": p.scenario.get("input_tokens"),
        "scenario_output_tokens": p.scenario.get("output_tokens"),
        "scenario_dataset": p.scenario.get("dataset"),
        "scenario_range_ratio": p.scenario.get("random_range_ratio"),
        "arrival": p.load.get("arrival"),
        "definitions": dict(sorted(p.definitions.items())),
        "sources": dict(sorted(p.sources.items())),
        "requests": len(p.requests),
    }
    for key, value in p.fields.items():
        if key == "request_rate":
            value = float("inf") if value == "inf" else value
        row[key] = value
    return row


def request_row(e: PointEntry, index: int, r: dict[str, Any]) -> dict[str, Any]:
    """One request of a point as a row of the ``requests`` table (``core.tables``)."""
    error = r.get("error")
    itl = r.get("itl_ms")
    return {"point": e.id, "index": index, "ttft_ms": r.get("ttft_ms"),
            "e2el_ms": r.get("e2el_ms"), "input_tokens": r.get("input_tokens"),
            "output_tokens": r.get("output_tokens"),
            "error": None if error in (None, "") else str(error),
            "itl_ms": None if itl is None else [float(g) for g in itl],
            "start_s": r.get("start_s")}
