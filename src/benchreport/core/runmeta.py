"""run.yaml: what was benchmarked, on what, and how; validated into frozen dataclasses."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .sources import Source, parse_sources
from .yamlio import Located, load_yaml

if TYPE_CHECKING:
    from .records import Run

LANGS = ("ko", "en")


@dataclass(frozen=True)
class Engine:
    id: str          # folder name under raw/, e.g. "vllm"
    name: str        # display name, e.g. "vLLM"
    image: str = ""
    version: str = ""


@dataclass(frozen=True)
class Load:
    """One load level: a concurrency cap, a request rate, both, or neither (unbounded)."""

    max_concurrency: int | None = None
    request_rate: float | str | None = None     # req/s, or "inf"

    @property
    def id(self) -> str:
        """``c16``, ``r4``, ``rinf``, ``c16-r4`` or ``max`` (no bound at all).

        >>> Load(16).id, Load(None, 4.0).id, Load(None, "inf").id, Load(2, 0.5).id
        ('c16', 'r4', 'rinf', 'c2-r0_5')
        """
        parts = []
        if self.max_concurrency is not None:
            parts.append(f"c{self.max_concurrency}")
        if self.request_rate is not None:
            parts.append("rinf" if self.request_rate == "inf"
                         else f"r{self.request_rate:g}".replace(".", "_"))
        return "-".join(parts) or "max"


@dataclass(frozen=True)
class Workload:
    id: str              # e.g. "64k"
    label: str           # e.g. "64K"
    input_tokens: int
    output_tokens: int | None
    concurrency: int | None       # the one concurrency of a single-point workload
    num_prompts: int | None
    dataset: str = "random"
    # a sweep: every load level of the workload (one entry for a single-point workload)
    loads: tuple[Load, ...] = ()
    repeats: int = 1              # runs of each point that run.yaml declares
    # other settings that tell points apart (e.g. vLLM's max_num_seqs), name -> values
    params: tuple[tuple[str, tuple], ...] = ()

    @property
    def is_sweep(self) -> bool:
        return len(self.loads) > 1 or self.repeats > 1 or any(len(v) > 1 for _, v in self.params)


@dataclass(frozen=True)
class Assumption:
    setting: dict[str, str]    # per language
    value: dict[str, str]      # per language (a plain value reads the same in both)
    why: dict[str, str]        # per language
    settings: tuple[str, ...] = ()   # "<setting>.<engine>" values this assumption set
    # figure ids (or id prefixes ending in ".") whose values rest on this assumption: the
    # article says so where it states them
    figures: tuple[str, ...] = ()
    # how the value was set: "assumed" (stated without a source) or, in a reconstruction,
    # "calibrated" (fitted so that the files meet a published figure)
    provenance: str = "assumed"


def _assumption_kind(c, a: Located) -> str:
    kind = c.get(a, "provenance", str, "assumed[]", required=False, default="assumed")
    if kind not in ("assumed", "calibrated"):
        raise c.fail(a, "provenance", f"assumed[].provenance must be assumed or calibrated, "
                                      f"got {kind!r}")
    return kind


@dataclass(frozen=True)
class Slo:
    """Latency objectives at one percentile, e.g. p99 TTFT ≤ 2000 ms and p99 TPOT ≤ 50 ms."""

    percentile: int                           # 50, 90 or 99: the statistic held to them
    objectives: tuple[tuple[str, float], ...]  # (metric, ms): ttft, tpot, itl, e2el

    def limit(self, metric: str) -> float | None:
        return dict(self.objectives).get(metric)


@dataclass(frozen=True)
class Cost:
    """USD per GPU-hour: one price for every engine, or per engine (``engines``)."""

    gpu_hour_usd: float | None
    engines: tuple[tuple[str, float], ...] = ()

    def price(self, engine: str) -> float | None:
        return dict(self.engines).get(engine, self.gpu_hour_usd)


@dataclass(frozen=True)
class Architecture:
    """``model.architecture``: what a decode step of the model must read from memory, for
    the memory-bandwidth lower bound of the step model (analyses/stepmodel.py)."""

    layers: int                  # transformer layers (each holds KV)
    moe_layers: int              # layers with routed experts
    routed_experts: int          # routed experts per MoE layer (E)
    experts_per_token: int       # routed experts each token activates (k)
    expert_params: float         # parameters of one routed expert in one layer
    dense_params: float          # parameters every step reads whatever the routing
    bytes_per_param: float       # bytes per parameter as quantized (scales included)
    # bytes of KV cache per token per layer: one for every engine, or per engine id
    kv_bytes: tuple[tuple[str, float], ...] = ()
    kv_bytes_all: float | None = None

    def kv_bytes_per_token_per_layer(self, engine: str) -> float | None:
        return dict(self.kv_bytes).get(engine, self.kv_bytes_all)


ARCH_INTS = ("layers", "moe_layers", "routed_experts", "experts_per_token")
ARCH_NUMBERS = ("expert_params", "dense_params", "bytes_per_param")
ARCH_KV = "kv_bytes_per_token_per_layer"


@dataclass(frozen=True)
class RunMeta:
    title: dict[str, str]
    date: dt.date | None          # None: not stated (left as TODO by `benchreport init`)
    hardware: dict[str, Any]
    model: dict[str, Any]
    deployment: str
    engines: tuple[Engine, ...]
    workloads: tuple[Workload, ...]
    reconstruction: dict[str, str] | None
    assumed: tuple[Assumption, ...]
    notes: dict[str, str] | None
    # where the run's files came from, and the write-ups its report re-derives (core.sources)
    sources: tuple[Source, ...] = ()
    not_stated: tuple[str, ...] = ()          # top-level keys left as TODO in run.yaml
    # engine -> workload -> {"start": ISO time, "end": ISO time}: benchmark spans in the logs
    windows: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    # when each /metrics dump that says nothing of its own time was scraped: engine -> file
    # (relative to raw/<engine>/) -> ISO local time
    scrapes: dict[str, dict[str, str]] = field(default_factory=dict)
    scenario: str | None = None       # a reconstruction's generator input, beside run.yaml
    slo: Slo | None = None            # the latency objectives a campaign is held to
    cost: Cost | None = None          # what a GPU-hour costs, for $ per million tokens
    # ``results: none``: the run holds no client results, only the servers' own files (logs,
    # launch records, /metrics dumps); its workloads are then empty
    server_only: bool = False
    # ``client:``: the user's own benchmark client, its result files mapped onto the contract
    client: DeclaredClient | None = None
    # ``hardware.hbm_tb_s``: HBM bandwidth per GPU (TB/s), and ``model.architecture``: the
    # inputs of the step model's memory-bandwidth bound (None: not declared)
    hbm_tb_s: float | None = None
    architecture: Architecture | None = None
    # ``slug:``: the blog post's address part (None: the run id)
    slug: str | None = None

    @property
    def gpus(self) -> int | None:
        """GPUs per engine deployment: hardware.gpus × hardware.servers (servers default 1)."""
        gpus = self.hardware.get("gpus")
        if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
            return None
        servers = self.hardware.get("servers", 1)
        return gpus * (servers if isinstance(servers, int) and servers >= 1 else 1)

    def engine(self, engine_id: str) -> Engine:
        for engine in self.engines:
            if engine.id == engine_id:
                return engine
        raise KeyError(engine_id)

    def workload(self, workload_id: str) -> Workload:
        for workload in self.workloads:
            if workload.id == workload_id:
                return workload
        raise KeyError(workload_id)


_TYPE_NAMES = {Located: "a mapping", list: "a list", str: "text", int: "an integer",
               float: "a number", bool: "true/false", dt.date: "a date (YYYY-MM-DD)",
               type(None): "empty"}


class _Checker:
    """Reads typed values out of a Located mapping, naming file and line on error."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: Located, key: str | None, message: str) -> ConfigError:
        line = where.lines.get(key, where.line) if key is not None else where.line
        return ConfigError(message, path=self.path, line=line)

    def mapping(self, obj: Any, what: str, parent: Located | None = None,
                key: str | None = None) -> Located:
        if not isinstance(obj, Located):
            where = parent if parent is not None else Located()
            if parent is None:
                where.lines, where.line = {}, 1
            raise self.fail(where, key, f"{what} must be a mapping, got {type(obj).__name__}")
        return obj

    def get(self, obj: Located, key: str, typ: type | tuple[type, ...], what: str,
            required: bool = True, default: Any = None) -> Any:
        if key not in obj:
            if required:
                raise self.fail(obj, None, f"{what}: missing key {key!r}")
            return default
        value = obj[key]
        if isinstance(value, bool) and typ in (int, float, (int, float)):
            ok = False
        else:
            ok = isinstance(value, typ)
        if not ok:
            types = typ if isinstance(typ, tuple) else (typ,)
            names = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
            raise self.fail(obj, key, f"{what}.{key} must be {names}, got "
                                      f"{_TYPE_NAMES.get(type(value), type(value).__name__)} "
                                      f"{value!r}")
        return value

    def known(self, obj: Located, allowed: set[str], what: str) -> None:
        import difflib

        for key in obj:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f"did you mean {close[0]!r}?" if close else \
                    f"known keys: {', '.join(sorted(allowed))}"
                raise ConfigError(f"unknown key {what}.{key}", path=self.path,
                                  line=obj.lines[key], hint=hint)

    def bilingual(self, obj: Located, key: str, what: str, required: bool = True
                  ) -> dict[str, str] | None:
        value = self.get(obj, key, (Located,), what, required=required)
        if value is None:
            return None
        out = {}
        for lang in LANGS:
            out[lang] = self.get(value, lang, str, f"{what}.{key}")
        return out


TOP_KEYS = {"schema", "title", "date", "hardware", "model", "deployment", "engines",
            "workloads", "reconstruction", "assumed", "notes", "scenario", "windows", "scrapes",
            "repeats", "sources", "slo", "cost", "results", "client", "gate", "slug"}
SLO_PERCENTILES = (50, 90, 99)
SLO_METRICS = ("ttft", "tpot", "itl", "e2el")
TODO = "TODO"      # a value `benchreport init` could not read from the files


def _values(c: _Checker, w: Located, key: str, what: str) -> tuple | None:
    """A setting given as one value or a list of values (a sweep)."""
    if key not in w:
        return None
    value = w[key]
    read = {"request_rate": _rate_item, "concurrency": _concurrency_item}.get(key, _plain_item)
    out = [read(c, w, key, what, item) for item in (value if isinstance(value, list)
                                                    else [value])]
    if not out:
        raise c.fail(w, key, f"{what}.{key} is an empty list")
    return tuple(out)


def _rate_item(c: _Checker, w: Located, key: str, what: str, item: Any) -> float | str:
    """A request rate: a number > 0, or "inf" (also written infinity or YAML's .inf)."""
    if isinstance(item, str) and item.strip().lower() in ("inf", "infinity"):
        return "inf"
    if isinstance(item, float) and item == float("inf"):
        return "inf"
    if isinstance(item, int | float) and not isinstance(item, bool) and item > 0:
        return float(item)
    raise c.fail(w, key, f"{what}.{key} must be a number > 0 or inf (or a list of "
                         f"them), got {item!r}")


def _concurrency_item(c: _Checker, w: Located, key: str, what: str, item: Any) -> int:
    if isinstance(item, int) and not isinstance(item, bool) and item > 0:
        return item
    raise c.fail(w, key, f"{what}.{key} must be an integer > 0 (or a list of them), "
                         f"got {item!r}")


def _plain_item(c: _Checker, w: Located, key: str, what: str, item: Any) -> Any:
    if isinstance(item, str | int | float) and not isinstance(item, bool):
        return item
    raise c.fail(w, key, f"{what}.{key} must be a value or a list of values, got {item!r}")


def _slug(c: _Checker, doc: Located) -> str | None:
    """``slug:``: lower-case letters, digits and single hyphens, as blog engines take it."""
    slug = c.get(doc, "slug", str, "run", required=False, default=None)
    if slug is not None and not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", slug):
        raise c.fail(doc, "slug", f"run.slug must be lower-case letters, digits and single "
                                  f"hyphens (e.g. kimi-k3-vllm-sglang), got {slug!r}")
    return slug


def parse_run_yaml(text: str, path: str) -> RunMeta:
    """Validate the text of a run.yaml; ``path`` is only used in messages. The blocks are
    read in a fixed order, so a file with several faults is told of the same one first."""
    c = _Checker(path)
    doc = c.mapping(load_yaml(text, path), "run.yaml")
    c.known(doc, TOP_KEYS, "run")
    schema = c.get(doc, "schema", int, "run")
    if schema != 1:
        raise c.fail(doc, "schema", f"run.schema {schema} is not supported (expected 1)")
    title = c.bilingual(doc, "title", "run")
    stated = _stated(c, doc)
    repeats_all = c.get(doc, "repeats", int, "run", required=False, default=1)
    if repeats_all < 1:
        raise c.fail(doc, "repeats", f"run.repeats must be at least 1, got {repeats_all}")
    engines = _engines(c, doc)
    ids = [e.id for e in engines]
    workloads = [_workload(c, doc, item, repeats_all)
                 for item in c.get(doc, "workloads", list, "run")]
    server_only = _server_only(c, doc)
    _results_agree(c, doc, workloads, server_only)
    workloads.sort(key=lambda w: w.input_tokens)
    return RunMeta(title=title, **stated, engines=tuple(engines), workloads=tuple(workloads),
                   reconstruction=_reconstruction(c, doc), assumed=_assumed(c, doc),
                   notes=c.bilingual(doc, "notes", "run", required=False),
                   sources=parse_sources(c, doc), windows=_windows(c, doc, ids),
                   scrapes=_scrapes(c, doc, ids),
                   scenario=c.get(doc, "scenario", str, "run", required=False, default=None),
                   slo=_slo(c, doc), cost=_cost(c, doc, ids), server_only=server_only,
                   slug=_slug(c, doc),
                   client=declared_client(c, c.get(doc, "client", Located, "run"))
                   if "client" in doc else None,
                   hbm_tb_s=_hbm(c, doc), architecture=_architecture(c, doc, ids))


def _stated(c: _Checker, doc: Located) -> dict[str, Any]:
    """date, hardware, model and deployment, each empty where `benchreport init` left it as
    TODO (the report says "not stated"), and which of them were."""
    not_stated = tuple(k for k in ("date", "hardware", "model", "deployment")
                       if doc.get(k) == TODO)
    return {
        "date": None if "date" in not_stated else c.get(doc, "date", dt.date, "run"),
        "hardware": {} if "hardware" in not_stated else dict(
            c.get(doc, "hardware", Located, "run")),
        "model": {} if "model" in not_stated else dict(c.get(doc, "model", Located, "run")),
        "deployment": "" if "deployment" in not_stated else c.get(
            doc, "deployment", str, "run", required=False, default=""),
        "not_stated": not_stated,
    }


def _engines(c: _Checker, doc: Located) -> list[Engine]:
    """``engines:``: at least one, each id once (ids name the folders under raw/)."""
    engines = []
    for item in c.get(doc, "engines", list, "run"):
        e = c.mapping(item, "run.engines[]", doc, "engines")
        c.known(e, {"id", "name", "image", "version"}, "engines[]")
        engines.append(Engine(
            id=c.get(e, "id", str, "engines[]"), name=c.get(e, "name", str, "engines[]"),
            image=c.get(e, "image", str, "engines[]", required=False, default=""),
            version=str(c.get(e, "version", (str, int, float), "engines[]", required=False,
                              default="")),
        ))
    if not engines:
        raise c.fail(doc, "engines", "run.engines is empty; list at least one engine")
    ids = [e.id for e in engines]
    if len(set(ids)) != len(ids):
        raise c.fail(doc, "engines", f"run.engines has duplicate ids: {ids}")
    return engines


WORKLOAD_KEYS = {"id", "label", "input_tokens", "output_tokens", "concurrency", "num_prompts",
                 "dataset", "request_rate", "repeats", "params"}


def _workload(c: _Checker, doc: Located, item: Any, repeats_all: int) -> Workload:
    """One ``workloads[]`` entry: its lengths, its load levels (every concurrency with every
    rate), the settings it sweeps and its repeats (run.repeats unless it says)."""
    w = c.mapping(item, "run.workloads[]", doc, "workloads")
    c.known(w, WORKLOAD_KEYS, "workloads[]")
    conc = _values(c, w, "concurrency", "workloads[]")
    rates = _values(c, w, "request_rate", "workloads[]")
    if conc is None and rates is None:
        raise c.fail(w, None, "workloads[]: give its load: concurrency or request_rate "
                              "(a value, or a list for a sweep)")
    loads = tuple(Load(cc, r) for cc in (conc or (None,)) for r in (rates or (None,)))
    params = []
    for name, value in c.get(w, "params", Located, "workloads[]", required=False,
                             default={}).items():
        values = value if isinstance(value, list) else [value]
        params.append((str(name), tuple(values)))
    repeats = c.get(w, "repeats", int, "workloads[]", required=False, default=repeats_all)
    if repeats < 1:
        raise c.fail(w, "repeats", f"workloads[].repeats must be at least 1, got {repeats}")
    return Workload(
        id=str(c.get(w, "id", (str, int), "workloads[]")),
        label=c.get(w, "label", str, "workloads[]"),
        input_tokens=c.get(w, "input_tokens", int, "workloads[]"),
        output_tokens=c.get(w, "output_tokens", int, "workloads[]", required=False),
        concurrency=conc[0] if conc and len(conc) == 1 else None,
        num_prompts=c.get(w, "num_prompts", int, "workloads[]", required=False),
        dataset=c.get(w, "dataset", str, "workloads[]", required=False, default="random"),
        loads=loads, repeats=repeats, params=tuple(sorted(params)),
    )


def _results_agree(c: _Checker, doc: Located, workloads: list[Workload],
                   server_only: bool) -> None:
    """A run has workloads exactly when it holds client results (no ``results: none``)."""
    if not workloads and not server_only:
        raise c.fail(doc, "workloads", "run.workloads is empty; list at least one workload "
                                       "(or say `results: none` for a run of server files only)")
    if workloads and server_only:
        raise c.fail(doc, "results", "run.results: none says the run holds no client results, "
                                     "but run.workloads lists some")


def _reconstruction(c: _Checker, doc: Located) -> dict[str, str] | None:
    """``reconstruction.statement``: what a reconstructed run says of itself."""
    if "reconstruction" not in doc:
        return None
    rec = c.get(doc, "reconstruction", Located, "run")
    c.known(rec, {"statement", "regenerate"}, "reconstruction")
    return c.bilingual(rec, "statement", "reconstruction")


def _assumed(c: _Checker, doc: Located) -> tuple[Assumption, ...]:
    """``assumed[]``: settings stated without a source; a value is bilingual or plain."""
    assumed = []
    for item in c.get(doc, "assumed", list, "run", required=False, default=[]):
        a = c.mapping(item, "run.assumed[]", doc, "assumed")
        assumed.append(Assumption(
            setting=c.bilingual(a, "setting", "assumed[]"),
            value=c.bilingual(a, "value", "assumed[]")
            if isinstance(a.get("value"), Located) else
            dict.fromkeys(LANGS, str(c.get(a, "value", (str, int, float, bool), "assumed[]"))),
            why=c.bilingual(a, "why", "assumed[]"),
            settings=tuple(str(x) for x in c.get(a, "settings", list, "assumed[]",
                                                  required=False, default=[])),
            figures=tuple(str(x) for x in c.get(a, "figures", list, "assumed[]",
                                                 required=False, default=[])),
            provenance=_assumption_kind(c, a),
        ))
    return tuple(assumed)


def _moment(value: dt.datetime | str) -> str:
    """A time as written, or a YAML timestamp back as ISO text without its zone."""
    return value.strftime("%Y-%m-%dT%H:%M:%S") if isinstance(value, dt.datetime) else value


def _windows(c: _Checker, doc: Located, ids: list[str]
             ) -> dict[str, dict[str, dict[str, str]]]:
    """``windows.<engine>.<workload>: {start, end}``: benchmark spans in the logs."""
    windows: dict[str, dict[str, dict[str, str]]] = {}
    for eid, per in c.get(doc, "windows", Located, "run", required=False, default={}).items():
        if eid not in ids:
            raise c.fail(doc, "windows", f"run.windows names unknown engine {eid!r}")
        per = c.mapping(per, f"run.windows.{eid}", doc, "windows")
        for wid, span in per.items():
            span = c.mapping(span, f"run.windows.{eid}.{wid}", per, wid)
            windows.setdefault(eid, {})[str(wid)] = {
                key: _moment(c.get(span, key, (dt.datetime, str), f"windows.{eid}.{wid}"))
                for key in ("start", "end")}
    return windows


def _scrapes(c: _Checker, doc: Located, ids: list[str]) -> dict[str, dict[str, str]]:
    """``scrapes.<engine>.<file>``: when a /metrics dump that states no time was taken."""
    scrapes: dict[str, dict[str, str]] = {}
    for eid, per in c.get(doc, "scrapes", Located, "run", required=False, default={}).items():
        if eid not in ids:
            raise c.fail(doc, "scrapes", f"run.scrapes names unknown engine {eid!r}")
        per = c.mapping(per, f"run.scrapes.{eid}", doc, "scrapes")
        for name in per:
            value = c.get(per, name, (dt.datetime, str), f"scrapes.{eid}")
            scrapes.setdefault(eid, {})[str(name)] = str(_moment(value))
    return scrapes


def _hbm(c: _Checker, doc: Located) -> float | None:
    """``hardware.hbm_tb_s``: HBM bandwidth of one GPU in TB/s (10^12 bytes per second)."""
    hw = doc.get("hardware")
    if not isinstance(hw, Located) or "hbm_tb_s" not in hw:
        return None
    return _positive(c, hw, "hbm_tb_s", "hardware")


def _whole_positive(c: _Checker, m: Located, key: str, what: str) -> int:
    value = m[key]
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise c.fail(m, key, f"{what}.{key} must be an integer > 0, got {value!r}")


def _architecture(c: _Checker, doc: Located, engine_ids: list[str]) -> Architecture | None:
    """``model.architecture``: layer, expert and parameter counts, bytes per parameter and
    KV bytes per token per layer (a number, or ``{<engine>: <bytes>}``)."""
    model = doc.get("model")
    if not isinstance(model, Located) or "architecture" not in model:
        return None
    what = "model.architecture"
    m = c.get(model, "architecture", Located, "model")
    c.known(m, set(ARCH_INTS) | set(ARCH_NUMBERS) | {ARCH_KV}, what)
    for key in (*ARCH_INTS, *ARCH_NUMBERS, ARCH_KV):
        if key not in m:
            raise c.fail(m, None, f"{what}: missing key {key!r}")
    counts = {k: _whole_positive(c, m, k, what) for k in ARCH_INTS}
    numbers = {k: _positive(c, m, k, what) for k in ARCH_NUMBERS}
    if counts["moe_layers"] > counts["layers"]:
        raise c.fail(m, "moe_layers", f"{what}.moe_layers ({counts['moe_layers']}) exceeds "
                                      f"{what}.layers ({counts['layers']})")
    if counts["experts_per_token"] > counts["routed_experts"]:
        raise c.fail(m, "experts_per_token", f"{what}.experts_per_token "
                     f"({counts['experts_per_token']}) exceeds {what}.routed_experts "
                     f"({counts['routed_experts']})")
    per, every = [], None
    if isinstance(m[ARCH_KV], Located):
        kv = m[ARCH_KV]
        for eid in kv:
            if eid not in engine_ids:
                raise c.fail(kv, eid, f"{what}.{ARCH_KV} names unknown engine {eid!r}; "
                                      f"engines are {', '.join(engine_ids)}")
            per.append((str(eid), _positive(c, kv, eid, f"{what}.{ARCH_KV}")))
        if not per:
            raise c.fail(m, ARCH_KV, f"{what}.{ARCH_KV} is empty; give a number or "
                                     "{<engine>: <bytes>}")
    else:
        every = _positive(c, m, ARCH_KV, what)
    return Architecture(**counts, **numbers, kv_bytes=tuple(per), kv_bytes_all=every)


def _server_only(c: _Checker, doc: Located) -> bool:
    """``results: none``: a run of the servers' own files, with no client results."""
    value = c.get(doc, "results", str, "run", required=False, default=None)
    if value not in (None, "none"):
        raise c.fail(doc, "results", f"run.results can only be none (a run of server files "
                                     f"only), got {value!r}")
    return value == "none"


def _positive(c: _Checker, m: Located, key: str, what: str) -> float:
    value = m[key]
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    raise c.fail(m, key, f"{what}.{key} must be a number > 0, got {value!r}")


def _slo(c: _Checker, doc: Located) -> Slo | None:
    """``slo: {percentile: 99, ttft_ms: 2000, tpot_ms: 50}``: at least one objective."""
    if "slo" not in doc:
        return None
    m = c.get(doc, "slo", Located, "run")
    c.known(m, {"percentile"} | {f"{x}_ms" for x in SLO_METRICS}, "slo")
    percentile = c.get(m, "percentile", int, "slo", required=False, default=99)
    if percentile not in SLO_PERCENTILES:
        raise c.fail(m, "percentile", f"slo.percentile must be one of {SLO_PERCENTILES} "
                                      f"(the statistics the clients report), got {percentile}")
    objectives = tuple((x, _positive(c, m, f"{x}_ms", "slo")) for x in SLO_METRICS
                       if f"{x}_ms" in m)
    if not objectives:
        raise c.fail(doc, "slo", "slo sets no objective; give at least one of "
                                 + ", ".join(f"{x}_ms" for x in SLO_METRICS))
    return Slo(percentile=percentile, objectives=objectives)


def _cost(c: _Checker, doc: Located, engine_ids: list[str]) -> Cost | None:
    """``cost: {gpu_hour_usd: 2.5}`` or ``cost: {engines: {vllm: 2.5, sglang: 3}}``."""
    if "cost" not in doc:
        return None
    m = c.get(doc, "cost", Located, "run")
    c.known(m, {"gpu_hour_usd", "engines"}, "cost")
    price = _positive(c, m, "gpu_hour_usd", "cost") if "gpu_hour_usd" in m else None
    per = []
    if "engines" in m:
        e = c.get(m, "engines", Located, "cost")
        for eid in e:
            if eid not in engine_ids:
                raise c.fail(e, eid, f"cost.engines names unknown engine {eid!r}; "
                                     f"engines are {', '.join(engine_ids)}")
            per.append((str(eid), _positive(c, e, eid, "cost.engines")))
    if price is None and not per:
        raise c.fail(doc, "cost", "cost sets no price; give gpu_hour_usd (or engines: "
                                  "{<engine>: <usd per GPU-hour>})")
    return Cost(gpu_hour_usd=price, engines=tuple(per))


def load_run(run_id: str, data_root: Path | str = "data",
             report_root: Path | str = "report", after_ingest: bool = False) -> Run:
    """Locate and validate run ``run_id`` (its run.yaml); nothing is written.

    With ``after_ingest``, run.yaml is read from ingest's copy under derived/inputs/ (the
    steps after ingest read nothing under data/); messages still name data/<RUN>/run.yaml.
    """
    from .files import read_text
    from .paths import run_paths
    from .records import Run

    paths = run_paths(run_id, data_root, report_root)
    source = paths.described("run.yaml") if after_ingest else paths.run_yaml
    meta = parse_run_yaml(read_text(source, paths.rel(paths.run_yaml)),
                          paths.rel(paths.run_yaml))
    return Run(paths=paths, meta=meta)


# ---------------------------------------------------------------------------------------
# client: a user's own benchmark client, declared once (its files mapped onto the contract)

# metric -> (statistics it takes, units it may be given in); a latency's tok/s is the
# reciprocal per token (value in ms = 1000 / x)
DECLARED_METRICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    **{m: (("mean", "median", "p90", "p99", "std"), ("s", "ms")) for m in ("ttft", "e2el")},
    **{m: (("mean", "median", "p90", "p99", "std"), ("s", "ms", "tok/s"))
       for m in ("tpot", "itl")},
    "output_throughput": ((), ("tok/s",)),
    "input_throughput": ((), ("tok/s",)),
    "request_throughput": ((), ("req/s",)),
}
CLIENT_KEYS = {"name", "files"}
CLIENT_FILE_KEYS = {"match", "records", "engine", "model", "scenario", "load", "ok", "failed",
                    "input_tokens", "output_tokens", "repeats", "warmup_requests", "metrics"}


@dataclass(frozen=True)
class Value:
    """Where a declared figure comes from: a key of each record, or one number for all."""

    key: str | None = None
    number: float | None = None

    def shown(self) -> str:
        return repr(self.key) if self.key is not None else f"{self.number:g}"


@dataclass(frozen=True)
class DeclaredMetric:
    """One key of a declared client's records, and what it measures."""

    key: str                    # the key in each record, e.g. "ttft_s_median"
    metric: str                 # ttft, tpot, itl, e2el, output/input/request_throughput
    statistic: str | None       # mean, median, p90, p99, std (latencies only)
    unit: str                   # s, ms, tok/s, req/s
    definition: str             # the user's own words: what the client measured

    @property
    def field(self) -> str:
        """The contract field it fills (``base.FIELDS``): ``median_ttft_ms``, …"""
        return f"{self.statistic}_{self.metric}_ms" if self.statistic else self.metric

    def to_contract(self, x: float) -> float:
        """The value in the contract's unit (latencies in ms; throughputs as they are)."""
        if self.unit == "s":
            return round(x * 1000.0, 9)          # 0.309 s is 309 ms, not 309.00000000000006
        if self.unit == "tok/s" and self.statistic:
            return 1000.0 / x
        return x


@dataclass(frozen=True)
class DeclaredFile:
    """How one kind of result file of a declared client maps onto the contract."""

    match: str                          # glob on the file name under raw/<engine>/
    records: str                        # dotted path to the list of records
    scenario: str                       # the key naming the workload of each record
    metrics: tuple[DeclaredMetric, ...]
    scenario_prefix: str = ""
    engine: str | None = None           # top-level key naming the engine
    engine_values: tuple[tuple[str, str], ...] = ()   # the file's value -> engine id
    model: str | None = None            # top-level key naming the model
    concurrency: Value = Value()
    ok: Value | None = None
    failed: Value | None = None         # a count, or a list whose length is the count
    input_tokens: str | None = None     # per request
    output_tokens: str | None = None
    repeats: int | None = None          # runs pooled in each record
    warmup_requests: int | None = None  # requests sent before the client's first record


@dataclass(frozen=True)
class DeclaredClient:
    """``client:`` of run.yaml: the user's own benchmark client and the files it writes."""

    name: str
    files: tuple[DeclaredFile, ...]

    def entry(self, file_name: str) -> DeclaredFile | None:
        """The first declared entry whose glob matches ``file_name`` (a name, no folder)."""
        import fnmatch

        return next((f for f in self.files if fnmatch.fnmatchcase(file_name, f.match)), None)


def _text(c: _Checker, m: Located, key: str, what: str, required: bool = True) -> str | None:
    value = c.get(m, key, str, what, required=required)
    if value is not None and not value.strip():
        raise c.fail(m, key, f"{what}.{key} is empty")
    return value


def _count_value(c: _Checker, m: Located, key: str, what: str) -> Value | None:
    """A key of each record (text) or one count for every record (a whole number ≥ 0)."""
    if key not in m:
        return None
    value = m[key]
    if isinstance(value, str) and value.strip():
        return Value(key=value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return Value(number=float(value))
    raise c.fail(m, key, f"{what}.{key} must be a key of the records or a whole number ≥ 0, "
                         f"got {value!r}")


def _whole(c: _Checker, m: Located, key: str, what: str) -> int | None:
    value = c.get(m, key, int, what, required=False)
    if value is not None and value < 0:
        raise c.fail(m, key, f"{what}.{key} must be at least 0, got {value}")
    return value


def _declared_metric(c: _Checker, metrics: Located, key: str, what: str) -> DeclaredMetric:
    m = c.mapping(metrics[key], f"{what}.{key}", metrics, key)
    here = f"{what}.{key}"
    c.known(m, {"metric", "statistic", "unit", "definition"}, here)
    metric = _text(c, m, "metric", here)
    if metric not in DECLARED_METRICS:
        raise c.fail(m, "metric", f"{here}.metric {metric!r} is not known; known: "
                                  + ", ".join(DECLARED_METRICS))
    stats, units = DECLARED_METRICS[metric]
    statistic = c.get(m, "statistic", str, here, required=bool(stats))
    if statistic is not None and statistic not in stats:
        raise c.fail(m, "statistic", f"{here}.statistic {statistic!r} is not one of "
                                     + (", ".join(stats) if stats else
                                        f"none: {metric} is one figure per record"))
    unit = _text(c, m, "unit", here)
    if unit not in units:
        raise c.fail(m, "unit", f"{here}.unit {unit!r} is not one of {', '.join(units)} "
                                f"for {metric}")
    if unit == "tok/s" and statistic in ("mean", "std"):
        raise c.fail(m, "statistic", f"{here}: the {statistic} of tokens per second cannot be "
                                     f"turned into a {metric.upper()} in ms (1000 ÷ a mean is "
                                     "not the mean of 1000 ÷ each value); only the median and "
                                     "percentiles follow the reciprocal")
    return DeclaredMetric(key=key, metric=metric, statistic=statistic, unit=unit,
                          definition=_text(c, m, "definition", here).strip())


def _engine_rule(c: _Checker, m: Located, what: str) -> tuple[str | None, tuple]:
    if "engine" not in m:
        return None, ()
    if isinstance(m["engine"], str):
        return _text(c, m, "engine", what), ()
    e = c.get(m, "engine", Located, what)
    c.known(e, {"field", "values"}, f"{what}.engine")
    values = c.get(e, "values", Located, f"{what}.engine", required=False, default={})
    pairs = tuple((str(k), str(c.get(values, k, str, f"{what}.engine.values")))
                  for k in values)
    return _text(c, e, "field", f"{what}.engine"), pairs


def _scenario_rule(c: _Checker, m: Located, what: str) -> tuple[str, str]:
    if isinstance(m.get("scenario"), Located):
        s = m["scenario"]
        c.known(s, {"field", "prefix"}, f"{what}.scenario")
        return (_text(c, s, "field", f"{what}.scenario"),
                c.get(s, "prefix", str, f"{what}.scenario", required=False, default=""))
    return _text(c, m, "scenario", what), ""


def _concurrency(c: _Checker, m: Located, what: str) -> Value:
    load = c.get(m, "load", Located, what)
    c.known(load, {"concurrency"}, f"{what}.load")
    value = _count_value(c, load, "concurrency", f"{what}.load")
    if value is None:
        raise c.fail(load, None, f"{what}.load: missing key 'concurrency'")
    if value.number is not None and value.number < 1:
        raise c.fail(load, "concurrency", f"{what}.load.concurrency must be an integer > 0, "
                                          f"got {value.number:g}")
    return value


def _declared_file(c: _Checker, m: Located, what: str) -> DeclaredFile:
    c.known(m, CLIENT_FILE_KEYS, what)
    metrics = c.get(m, "metrics", Located, what)
    if not metrics:
        raise c.fail(m, "metrics", f"{what}.metrics is empty; map at least one key")
    declared = tuple(_declared_metric(c, metrics, key, f"{what}.metrics") for key in metrics)
    fields = [d.field for d in declared]
    twice = next((f for f in fields if fields.count(f) > 1), None)
    if twice:
        raise c.fail(m, "metrics", f"{what}.metrics: two keys give {twice}")
    for d in declared:
        other = next((o for o in declared if o.metric == d.metric
                      and o.definition != d.definition), None)
        if other is not None:
            raise c.fail(metrics, other.key, f"{what}.metrics: {d.key!r} and {other.key!r} "
                                             f"define {d.metric} differently; one metric "
                                             "has one definition")
    engine, values = _engine_rule(c, m, what)
    scenario, prefix = _scenario_rule(c, m, what)
    return DeclaredFile(
        match=_text(c, m, "match", what), records=_text(c, m, "records", what),
        scenario=scenario, scenario_prefix=prefix, metrics=declared, engine=engine,
        engine_values=values, model=_text(c, m, "model", what, required=False),
        concurrency=_concurrency(c, m, what), ok=_count_value(c, m, "ok", what),
        failed=_count_value(c, m, "failed", what),
        input_tokens=_text(c, m, "input_tokens", what, required=False),
        output_tokens=_text(c, m, "output_tokens", what, required=False),
        repeats=_whole(c, m, "repeats", what),
        warmup_requests=_whole(c, m, "warmup_requests", what))


def declared_client(c: _Checker, m: Located, what: str = "client") -> DeclaredClient:
    """The ``client:`` mapping (of run.yaml, or a mapping file of its own) validated."""
    c.known(m, CLIENT_KEYS, what)
    files = c.get(m, "files", list, what)
    if not files:
        raise c.fail(m, "files", f"{what}.files is empty; declare at least one kind of file")
    entries = tuple(_declared_file(c, c.mapping(item, f"{what}.files[]", m, "files"),
                                   f"{what}.files[{i}]") for i, item in enumerate(files))
    return DeclaredClient(name=_text(c, m, "name", what).strip(), files=entries)


def parse_client_yaml(text: str, path: str) -> DeclaredClient:
    """A client mapping in a file of its own (``benchreport init --client``): the same keys
    as run.yaml's ``client:``."""
    c = _Checker(path)
    return declared_client(c, c.mapping(load_yaml(text, path), "the client mapping"))
