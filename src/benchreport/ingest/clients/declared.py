"""Result files of a user's own benchmark client, read by the mapping run.yaml declares.

Many users measure with a script of their own. Its files are never sniffed: run.yaml's
``client:`` block (`core.runmeta.DeclaredClient`) says, per kind of file (a glob on the
name), where the list of records is, which key of each record names its workload and its
concurrency, how many requests succeeded and failed, and what each figure key measures, in
which unit, by the user's own definition. Each record is one `Point`; each definition is
carried as a declared code (`base.declared_code`), so the report prints the user's words and
compares two points on a metric only when their words agree.

A value that is missing, not a number, or cannot be turned into the contract's unit stops
the build with one line naming the file, the record and the key.
"""

from __future__ import annotations

import re
from typing import Any

from ...core.errors import ParseError
from ...core.runmeta import DeclaredFile, DeclaredMetric, Value
from .base import DECLARED_CLIENT, Doc, Point, declared_code, redact

CLIENT = DECLARED_CLIENT
_WORKLOAD_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def _fail(doc: Doc, where: str, message: str) -> ParseError:
    return ParseError(f"{where}: {message}" if where else message, path=doc.path)


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "…"


def _records(doc: Doc, entry: DeclaredFile) -> list[dict[str, Any]]:
    if doc.kind != "json" or not isinstance(doc.value, dict):
        raise _fail(doc, "", f"expected a JSON object with the records under "
                             f"{entry.records!r}, as run.yaml's client declares for "
                             f"{entry.match!r}")
    value: Any = doc.value
    for part in entry.records.split("."):
        if not isinstance(value, dict) or part not in value:
            raise _fail(doc, "", f"no {entry.records!r} (the records run.yaml's client "
                                 f"declares for {entry.match!r})")
        value = value[part]
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise _fail(doc, entry.records, "expected a list of records (JSON objects), got "
                                        f"{_shown(value)}")
    return value


def _top(doc: Doc, key: str | None) -> Any:
    return doc.value.get(key) if key else None


def _engine(doc: Doc, entry: DeclaredFile) -> str | None:
    if entry.engine is None:
        return None
    value = _top(doc, entry.engine)
    if value is None:
        raise _fail(doc, "", f"no {entry.engine!r}, the key run.yaml's client names the "
                             "engine by")
    values = dict(entry.engine_values)
    if values and str(value) not in values:
        raise _fail(doc, entry.engine, f"{_shown(value)} is none of the values run.yaml's "
                                       f"client maps to an engine ({', '.join(values)})")
    return values.get(str(value), str(value).lower())


def _number(doc: Doc, where: str, rec: dict[str, Any], key: str) -> float:
    if key not in rec:
        raise _fail(doc, where, f"no {key!r} (run.yaml's client maps it)")
    value = rec[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value \
            or value in (float("inf"), float("-inf")):
        raise _fail(doc, where, f"{key!r} is {_shown(value)}, expected a number")
    return float(value)


def _count(doc: Doc, where: str, rec: dict[str, Any], rule: Value) -> int:
    """A count: one number for every record, a key holding a number, or a key holding a
    list (the count is its length)."""
    if rule.key is None:
        return int(rule.number or 0)
    if isinstance(rec.get(rule.key), list):
        return len(rec[rule.key])
    x = _number(doc, where, rec, rule.key)
    if x < 0 or x != int(x):
        raise _fail(doc, where, f"{rule.key!r} is {_shown(rec[rule.key])}, expected a count "
                                "(a whole number ≥ 0)")
    return int(x)


def _scenario(doc: Doc, where: str, rec: dict[str, Any], entry: DeclaredFile) -> str:
    value = rec.get(entry.scenario)
    if not isinstance(value, str | int) or isinstance(value, bool) or str(value) == "":
        raise _fail(doc, where, f"{entry.scenario!r} is {_shown(value)}, expected the name "
                                "of the record's workload")
    name = f"{entry.scenario_prefix}{value}"
    if not _WORKLOAD_ID.match(name):
        raise _fail(doc, where, f"the workload {name!r} cannot be a workload id (letters, "
                                "digits, _ and - only)")
    return name


def _metric(doc: Doc, where: str, rec: dict[str, Any], d: DeclaredMetric) -> float:
    x = _number(doc, where, rec, d.key)
    if d.unit == "tok/s" and d.statistic and x <= 0:
        raise _fail(doc, where, f"{d.key!r} is {_shown(rec[d.key])} tok/s, which gives no "
                                f"{d.metric.upper()} (1000 ÷ a rate > 0 is the ms per token)")
    if x < 0:
        raise _fail(doc, where, f"{d.key!r} is {_shown(rec[d.key])}, expected a number ≥ 0")
    return d.to_contract(x)


def _counts(p: Point, doc: Doc, rec: dict[str, Any], entry: DeclaredFile) -> None:
    for name, rule in (("completed", entry.ok), ("failed", entry.failed)):
        if rule is None:
            continue
        p.fields[name] = _count(doc, p.where, rec, rule)
        p.sources[name] = f"{p.where}.{rule.key}" if rule.key else \
            f"run.yaml client: {rule.number:g} for every record"
    errors = rec.get(entry.failed.key) if entry.failed and entry.failed.key else None
    if isinstance(errors, list) and errors:
        p.warnings.append(f"{doc.path} {p.where}: {len(errors)} error(s) recorded, the first: "
                          f"{redact(str(errors[0]))[:200]}")


def _scenario_fields(p: Point, doc: Doc, rec: dict[str, Any], entry: DeclaredFile) -> None:
    p.scenario["workload"] = _scenario(doc, p.where, rec, entry)
    for which, key in (("input", entry.input_tokens), ("output", entry.output_tokens)):
        if key is not None:
            p.scenario[f"{which}_tokens"] = _number(doc, p.where, rec, key)
            p.scenario[f"{which}_tokens_from"] = "record"
            p.sources[f"scenario_{which}_tokens"] = f"{p.where}.{key}"


def _load(p: Point, doc: Doc, rec: dict[str, Any], entry: DeclaredFile) -> None:
    rule = entry.concurrency
    conc = _count(doc, p.where, rec, rule)
    if conc < 1:
        raise _fail(doc, p.where, f"{rule.key!r} is {conc}, expected a concurrency ≥ 1")
    p.load = {"kind": "concurrency", "max_concurrency": conc, "request_rate": None,
              "arrival": None}
    p.fields["max_concurrency"] = conc
    p.sources["max_concurrency"] = f"{p.where}.{rule.key}" if rule.key else \
        f"run.yaml client: concurrency {conc} for every record"


def _point(doc: Doc, entry: DeclaredFile, index: int, rec: dict[str, Any],
           engine: str | None, model: str | None) -> Point:
    p = Point(client=CLIENT, file=doc.path, where=f"{entry.records}[{index}]", line=None,
              fields={}, model=model, engine=engine)
    _scenario_fields(p, doc, rec, entry)
    _load(p, doc, rec, entry)
    _counts(p, doc, rec, entry)
    for d in entry.metrics:
        p.fields[d.field] = _metric(doc, p.where, rec, d)
        p.sources[d.field] = f"{p.where}.{d.key}"
        p.definitions[d.field if not d.statistic else d.metric] = declared_code(d.definition)
    for name in ("repeats", "warmup_requests"):
        if getattr(entry, name) is not None:
            p.params[name] = getattr(entry, name)
    return p


def _ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _value_at(text: str, pos: int, key: str, decoder) -> int | None:
    """Where the value of ``key`` starts in the JSON object that starts at ``pos``."""
    if text[pos] != "{":
        return None
    pos = _ws(text, pos + 1)
    while text[pos] == '"':
        name, pos = decoder.raw_decode(text, pos)
        pos = _ws(text, _ws(text, pos) + 1)              # past the colon
        if name == key:
            return pos
        pos = _ws(text, decoder.raw_decode(text, pos)[1])
        pos = _ws(text, pos + 1) if text[pos] == "," else pos
    return None


def record_lines(text: str, records: str) -> list[int] | None:
    """The 1-based line each record of the list at the dotted path ``records`` starts on,
    or None when the text does not lay them out as expected (a duplicate key, …)."""
    from ...core.jsontext import decoder as json_decoder

    decoder = json_decoder()
    try:
        pos: int | None = _ws(text, 0)
        for key in records.split("."):
            pos = _value_at(text, pos, key, decoder) if pos is not None else None
        if pos is None or text[pos] != "[":
            return None
        lines, line, seen, pos = [], 1, 0, _ws(text, pos + 1)
        while text[pos] != "]":
            line, seen = line + text.count("\n", seen, pos), pos
            lines.append(line)
            pos = _ws(text, decoder.raw_decode(text, pos)[1])
            pos = _ws(text, pos + 1) if text[pos] == "," else pos
        return lines
    except (ValueError, IndexError):
        return None


def parse(doc: Doc, entry: DeclaredFile) -> list[Point]:
    """One point per record of a file that ``entry`` of run.yaml's client matches."""
    records = _records(doc, entry)
    engine = _engine(doc, entry)
    model = _top(doc, entry.model)
    if entry.model and not isinstance(model, str):
        raise _fail(doc, "", f"no model under {entry.model!r} (run.yaml's client names it)")
    lines = record_lines(doc.text, entry.records)
    lines = lines if lines is not None and len(lines) == len(records) else [None] * len(records)
    points = []
    for i, (rec, line) in enumerate(zip(records, lines, strict=True)):
        try:
            points.append(_point(doc, entry, i, rec, engine, model))
        except ParseError as exc:
            raise ParseError(exc.message, path=exc.path, line=line, hint=exc.hint) from None
        points[-1].line = line
    if not points:
        raise _fail(doc, entry.records, "the list of records is empty")
    return points
