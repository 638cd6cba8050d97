"""run.yaml: what was benchmarked, on what, and how; validated into frozen dataclasses."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
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
class Workload:
    id: str              # e.g. "64k"
    label: str           # e.g. "64K"
    input_tokens: int
    output_tokens: int
    concurrency: int
    num_prompts: int
    dataset: str = "random"


@dataclass(frozen=True)
class Assumption:
    setting: dict[str, str]    # per language
    value: str
    why: dict[str, str]        # per language
    settings: tuple[str, ...] = ()   # "<setting>.<engine>" values this assumption set


@dataclass(frozen=True)
class RunMeta:
    title: dict[str, str]
    date: dt.date
    hardware: dict[str, Any]
    model: dict[str, Any]
    deployment: str
    engines: tuple[Engine, ...]
    workloads: tuple[Workload, ...]
    reconstruction: dict[str, str] | None
    assumed: tuple[Assumption, ...]
    notes: dict[str, str] | None
    # engine -> workload -> {"start": ISO time, "end": ISO time}: benchmark spans in the logs
    windows: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    scenario: str | None = None       # a reconstruction's generator input, beside run.yaml

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
            "workloads", "reconstruction", "assumed", "notes", "scenario", "windows"}


def parse_run_yaml(text: str, path: str) -> RunMeta:
    """Validate the text of a run.yaml; ``path`` is only used in messages."""
    c = _Checker(path)
    doc = c.mapping(load_yaml(text, path), "run.yaml")
    c.known(doc, TOP_KEYS, "run")
    schema = c.get(doc, "schema", int, "run")
    if schema != 1:
        raise c.fail(doc, "schema", f"run.schema {schema} is not supported (expected 1)")
    title = c.bilingual(doc, "title", "run")
    date = c.get(doc, "date", dt.date, "run")
    hardware = dict(c.get(doc, "hardware", Located, "run"))
    model = dict(c.get(doc, "model", Located, "run"))
    deployment = c.get(doc, "deployment", str, "run", required=False, default="")

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

    workloads = []
    for item in c.get(doc, "workloads", list, "run"):
        w = c.mapping(item, "run.workloads[]", doc, "workloads")
        c.known(w, {"id", "label", "input_tokens", "output_tokens", "concurrency",
                    "num_prompts", "dataset"}, "workloads[]")
        workloads.append(Workload(
            id=str(c.get(w, "id", (str, int), "workloads[]")),
            label=c.get(w, "label", str, "workloads[]"),
            input_tokens=c.get(w, "input_tokens", int, "workloads[]"),
            output_tokens=c.get(w, "output_tokens", int, "workloads[]"),
            concurrency=c.get(w, "concurrency", int, "workloads[]"),
            num_prompts=c.get(w, "num_prompts", int, "workloads[]"),
            dataset=c.get(w, "dataset", str, "workloads[]", required=False, default="random"),
        ))
    if not workloads:
        raise c.fail(doc, "workloads", "run.workloads is empty; list at least one workload")
    workloads.sort(key=lambda w: w.input_tokens)

    reconstruction = None
    if "reconstruction" in doc:
        rec = c.get(doc, "reconstruction", Located, "run")
        c.known(rec, {"statement", "regenerate"}, "reconstruction")
        reconstruction = c.bilingual(rec, "statement", "reconstruction")
    assumed = []
    for item in c.get(doc, "assumed", list, "run", required=False, default=[]):
        a = c.mapping(item, "run.assumed[]", doc, "assumed")
        assumed.append(Assumption(
            setting=c.bilingual(a, "setting", "assumed[]"),
            value=str(c.get(a, "value", (str, int, float, bool), "assumed[]")),
            why=c.bilingual(a, "why", "assumed[]"),
            settings=tuple(str(x) for x in c.get(a, "settings", list, "assumed[]",
                                                  required=False, default=[])),
        ))
    notes = c.bilingual(doc, "notes", "run", required=False)
    windows: dict[str, dict[str, dict[str, str]]] = {}
    for eid, per in c.get(doc, "windows", Located, "run", required=False, default={}).items():
        if eid not in ids:
            raise c.fail(doc, "windows", f"run.windows names unknown engine {eid!r}")
        per = c.mapping(per, f"run.windows.{eid}", doc, "windows")
        for wid, span in per.items():
            span = c.mapping(span, f"run.windows.{eid}.{wid}", per, wid)
            bounds = {}
            for key in ("start", "end"):
                value = c.get(span, key, (dt.datetime, str), f"windows.{eid}.{wid}")
                bounds[key] = (value.strftime("%Y-%m-%dT%H:%M:%S")
                               if isinstance(value, dt.datetime) else value)
            windows.setdefault(eid, {})[str(wid)] = bounds
    return RunMeta(title=title, date=date, hardware=hardware, model=model,
                   deployment=deployment, engines=tuple(engines), workloads=tuple(workloads),
                   reconstruction=reconstruction, assumed=tuple(assumed), notes=notes,
                   windows=windows,
                   scenario=c.get(doc, "scenario", str, "run", required=False, default=None))


def load_run(run_id: str, data_root: Path | str = "data",
             report_root: Path | str = "report") -> Run:
    """Locate and validate run ``run_id`` (its run.yaml); nothing is written."""
    from .files import read_text
    from .paths import run_paths
    from .records import Run

    paths = run_paths(run_id, data_root, report_root)
    meta = parse_run_yaml(read_text(paths.run_yaml, paths.rel(paths.run_yaml)),
                          paths.rel(paths.run_yaml))
    return Run(paths=paths, meta=meta)
