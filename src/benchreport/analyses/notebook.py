"""What the notebooks call: each function takes a loaded run and returns tables and figures."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from ..core import ids
from ..core.figures import Figure, Source, fragment
from ..core.files import write_json
from ..core.metrics import compare_lower_is_better
from ..core.provenance import reason_words
from ..core.records import PointResult, Run
from ..core.runmeta import load_run as _load_run
from ..core.tables import input_checksum
from ..core.verdicts import INCONSISTENT
from .gap import split_figures

__all__ = ["Collector", "EndToEnd", "caveats", "claim_check", "end_to_end", "load_run",
           "save_caveats", "save_chunks", "save_claims", "save_figures", "workload_figures"]


def load_run(run_id: str, data_root="data", report_root="report") -> Run:
    """The run as ingest saw it: run.yaml read from ingest's copy under derived/inputs/."""
    return _load_run(run_id, data_root, report_root, after_ingest=True)


def _source(entry: PointResult, key: str) -> Source:
    return Source(path=entry.file.rel, sha256=entry.file.sha256, key=key,
                  lines=(entry.line,))


@dataclass(frozen=True)
class EndToEnd:
    """End-to-end results: one row per engine and workload, and their figures."""

    table: pd.DataFrame
    figures: list[Figure]


def end_to_end(run: Run, ing=None) -> EndToEnd:
    """Duration per engine and workload, and per workload which engine finished first.

    Figure ids: ``e2e.<workload>.<engine>.duration`` (s), ``e2e.<workload>.faster`` (engine
    id or "tie"), ``e2e.<workload>.slower`` and ``e2e.<workload>.speedup`` (slower / faster).
    """
    from ..core.tables import load_ingested
    from .consistency import DURATION_CHECKS, all_checks, check_figures

    ing = ing or load_ingested(run)
    entries = ing.results
    # the client's result against the engine's log and its /metrics scrapes
    checks = all_checks(run, ing)
    figures: list[Figure] = check_figures(checks)
    doubtful = {(c.workload, c.engine): ids.consistency(c.workload, c.engine, c.name)
                for c in checks if c.status == INCONSISTENT and c.name in DURATION_CHECKS}
    rows = []
    for workload in run.meta.workloads:
        durations: dict[str, float] = {}
        for entry in (e for e in entries if e.workload == workload.id):
            r = entry
            durations[entry.engine] = r.duration
            rows.append({
                "workload": workload.id, "engine": entry.engine, "duration_s": r.duration,
                "completed": r.completed, "total_input_tokens": r.total_input_tokens,
                "total_output_tokens": r.total_output_tokens,
                "file": f"{entry.file.rel}:{r.line}",
            })
            figures.append(Figure(
                id=ids.e2e(workload.id, entry.engine, "duration"), value=r.duration, unit="s",
                method="benchmark duration written by the benchmark client (key 'duration'): "
                       "wall time from the first request sent to the last response received",
                sources=(_source(entry, "duration"),), decimals=1,
                context={"engine": entry.engine, "workload": workload.id},
            ))
        mine = [e for e in entries if e.workload == workload.id]
        if len(durations) < 2:
            figures += split_figures(workload, mine, None)
            continue
        comparison = compare_lower_is_better(durations)
        figures += split_figures(workload, mine, comparison,
                                 {e: fid for (w, e), fid in doubtful.items()
                                  if w == workload.id})
        dep = tuple(ids.e2e(workload.id, e, "duration") for e in comparison.ranking[:2])
        ctx = {"workload": workload.id}
        figures += [
            Figure(id=ids.e2e(workload.id, None, "faster"), value=comparison.faster, unit="engine",
                   method="the engine with the shortest duration ('tie' when the speedup "
                          "rounds to 1.00)", depends_on=dep, context=ctx),
            Figure(id=ids.e2e(workload.id, None, "slower"), value=comparison.slower, unit="engine",
                   method="the engine with the second-shortest duration", depends_on=dep,
                   context=ctx),
            Figure(id=ids.e2e(workload.id, None, "speedup"), value=comparison.ratio, unit="x",
                   method="duration of the second-fastest engine divided by duration of the "
                          "fastest engine", depends_on=dep, decimals=2, context=ctx),
        ]
    table = pd.DataFrame(rows, columns=["workload", "engine", "duration_s", "completed",
                                        "total_input_tokens", "total_output_tokens", "file"])
    return EndToEnd(table=table, figures=figures)


def run_yaml_source(run: Run) -> Source:
    """run.yaml as a figure's source (path and sha256; the caller adds the key)."""
    path = run.paths.run_yaml
    return Source(path=run.paths.rel(path), sha256=input_checksum(run, path))


def workload_figures(run: Run) -> list[Figure]:
    """The workload parameters from run.yaml, registered so the page can cite them too.

    Figure ids: ``workload.<id>.input_tokens``, ``.output_tokens``, ``.concurrency``,
    ``.num_prompts``.
    """
    path = run.paths.run_yaml
    src = {"path": run.paths.rel(path), "sha256": input_checksum(run, path)}
    figures = []
    for w in run.meta.workloads:
        for name, unit in (("input_tokens", "tokens"), ("output_tokens", "tokens"),
                           ("concurrency", "req"), ("num_prompts", "req"),
                           ("repeats", "count")):
            if getattr(w, name) is None or (name == "repeats" and not w.is_sweep):
                continue            # not declared (a sweep has no single concurrency)
            figures.append(Figure(
                id=ids.workload(w.id, name), value=getattr(w, name), unit=unit,
                method=f"workload setting '{name}' as declared in run.yaml",
                sources=(Source(key=f"workloads[id={w.id}].{name}", **src),),
                decimals=0, context={"workload": w.id}))
    return figures


class Collector:
    """Gathers a notebook's figures; each is stamped with the cell that computed it."""

    def __init__(self, run: Run, notebook: str) -> None:
        self.run, self.notebook = run, notebook
        self.figures: list[Figure] = []

    def add(self, figures: list[Figure]) -> pd.DataFrame:
        """Keep ``figures`` (stamped with the current cell) and return them as a table."""
        cell = _current_cell()
        stamped = [replace(f, cell=cell) for f in figures]
        self.figures += stamped
        return pd.DataFrame([{"id": f.id, "value": f.value, "unit": f.unit, "method": f.method}
                             for f in stamped], columns=["id", "value", "unit", "method"])

    def save(self) -> str:
        return save_figures(self.run, self.figures, self.notebook)


def _current_cell() -> int | None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipykernel is a dependency
        return None
    shell = get_ipython()
    return int(shell.execution_count) if shell is not None else None


def save_figures(run: Run, figures: list[Figure], notebook: str) -> str:
    """Write a notebook's figures to derived/figures/<notebook>.json; return that path."""
    return _save_fragment(run.paths, figures, notebook)


def _save_fragment(paths, figures: list[Figure], notebook: str) -> str:
    """``figures`` under ``paths.figure_fragments`` (a run's or a comparison's folder)."""
    path = paths.figure_fragments / f"{notebook.removesuffix('.ipynb')}.json"
    write_json(path, fragment(figures, notebook))
    return paths.rel(path)


@dataclass(frozen=True)
class Caveats:
    """What was not controlled: one row per differing setting or runtime event, and what
    one run cannot tell; ``record`` is what save_caveats writes for the report."""

    table: pd.DataFrame
    figures: list[Figure]
    record: dict


def caveats(run: Run, ing) -> Caveats:
    """Settings that differ, events inside the measurements and what one run cannot tell."""
    from . import limits
    from .arrival import arrival
    from .caveats import caveat_figures, event_caveats, setting_caveats
    from .consistency import all_checks
    from .consistency import limit_rows as consistency_rows
    from .provenance import generator_figures
    from .spec import spec_figures

    rows, compared = setting_caveats(run, ing)
    events, event_figs = event_caveats(run, ing)
    en = english()
    sha = {s["file"]: s["sha256"] for s in ing.summaries}
    all_rows = rows + events
    spans: dict[tuple[str, str], tuple[str, str]] = {}
    for c in events:
        if c.engine and c.workload and c.span:
            lo, hi = spans.get((c.engine, c.workload), c.span)
            spans[(c.engine, c.workload)] = (min(lo, c.span[0]), max(hi, c.span[1]))
    differing = {c.id for c in rows}
    parts = [limits.repeats(run, ing), limits.warmup(run, ing), limits.few_requests(run, ing),
             limits.event_stall(run, ing, spans),
             limits.kv_capacity(run, ing, compared["dcp"].values if "dcp" in compared else {}),
             limits.spec_overhead(run, spec_figures(run, ing), differing),
             arrival(run, ing)]
    limit_figs = [f for figs, _ in parts for f in figs]
    limit_rows = consistency_rows(all_checks(run, ing)) + \
        [r for _, found in parts for r in found]
    record = {"differing": [c.__dict__ for c in all_rows],
              "compared": {k: c.values for k, c in sorted(compared.items())},
              "limits": [r.__dict__ for r in limit_rows]}
    table = pd.DataFrame([{"what": f"{c.id}: {c.setting}" if c.setting else c.id,
                           "kind": c.kind, "workload": c.workload,
                           **{f"{e}": _cell(c, e) for e in (x.id for x in run.meta.engines)},
                           "why it matters": en[f"why.{c.id}"], "touches": c.requests,
                           "evidence": "; ".join(c.evidence)} for c in all_rows]
                         + [{"what": r.id, "kind": "limit", "workload": r.workload,
                             "evidence": "; ".join(r.evidence)} for r in limit_rows])
    return Caveats(table=table, record=record,
                   figures=caveat_figures(rows, compared, sha) + event_figs + limit_figs
                   + generator_figures(run))


def _cell(c, engine: str) -> str:
    """A caveat's value for one engine; a launch difference: the log's against the file's."""
    if c.kind == "launch":
        return f"log {c.values['log']} / launch file {c.values['launch']}" \
            if c.engine == engine else ""
    return c.values.get(engine, "")


def save_chunks(run: Run, sequences: dict) -> str:
    """Write derived/tables/prefill_chunks.parquet: every batch of every request, for the
    chunk chart (which draws and does not analyse)."""
    from ..core.tables import write_rows
    from .prefill import CHUNK_COLUMNS, chunk_rows

    write_rows(run.paths.prefill_chunks, chunk_rows(sequences), CHUNK_COLUMNS)
    return run.paths.rel(run.paths.prefill_chunks)


def english() -> dict[str, str]:
    """The English catalogue, for the notebooks' tables (the article has its own)."""
    from ..core.i18n import load_catalogue
    from ..core.paths import LABELS

    return load_catalogue(LABELS, "en")


def save_caveats(run: Run, cav: Caveats) -> str:
    """Write derived/caveats.json (the claim check and the article read it)."""
    write_json(run.paths.caveats_json, cav.record)
    return run.paths.rel(run.paths.caveats_json)


@dataclass(frozen=True)
class ClaimCheck:
    table: pd.DataFrame
    figures: list[Figure]
    record: list = ()            # what save_claims writes for the article


def claim_check(run: Run) -> ClaimCheck:
    """Every claim of data/<RUN>/claims.yaml against the figures of the earlier notebooks."""
    import json as _json

    from ..core.claims import parse_claims
    from ..core.figures import merge
    from ..core.files import read_json, read_text
    from .claimcheck import check_claim
    from .provenance import rules_for, with_provenance

    path = run.paths.data / "claims.yaml"
    copy = run.paths.described("claims.yaml")
    if not copy.is_file():
        return ClaimCheck(table=pd.DataFrame(), figures=[])
    articles, claims = parse_claims(read_text(copy, run.paths.rel(path)), run.paths.rel(path))
    fragments = {p.name: _json.loads(p.read_text(encoding="utf-8"))
                 for p in sorted(run.paths.figure_fragments.glob("*.json"))
                 if not p.name.startswith("80-")}
    registry = with_provenance(run, merge(fragments))
    cav = read_json(run.paths.caveats_json)
    differing = {c["id"] for c in cav["differing"] if c["kind"] == "setting"}
    calibrated = _calibration(run)
    verdicts = [check_claim(c, registry, cav["compared"], differing, calibrated)
                for c in claims]
    en = english()
    src = {"path": run.paths.rel(path), "sha256": input_checksum(run, path)}
    default = rules_for(run)[1]
    bases = [claim_basis(registry, v, default) for v in verdicts]
    figures = []
    for v in verdicts:       # what set the figures, in words (core.provenance.reason)
        v.calibrated = [reason_words(x, en, "en", run.meta.assumed) for x in v.calibrated]
    for c, v, basis in zip(claims, verdicts, bases, strict=True):
        figures.append(Figure(
            id=ids.claim(c.id), value=v.verdict, unit="verdict",
            sources=(Source(key=f"claims[id={c.id}]", lines=(c.line,), **src),),
            depends_on=tuple(f for f in dict.fromkeys(v.figures) if f in registry),
            context={"reason": v.reason, "sentence": v.sentence(en),
                     "params": v.flat_params(),
                     "published": _json.dumps(c.value, ensure_ascii=False),
                     "recomputed": _json.dumps(v.recomputed, ensure_ascii=False, default=str),
                     "tolerance": v.tolerance, "source": list(c.source),
                     "calibrated": ", ".join(v.calibrated), "basis": basis},
            method="published claim checked against the recomputed figures "
                   f"({v.reason.replace('_', ' ')})"
                   + (f"; those figures rest on what the reconstruction was calibrated to "
                      f"({', '.join(v.calibrated)}), so agreement is by construction"
                      if v.calibrated else "")))
    figures += [_informative(claims, bases, src), _indistinguishable(verdicts, src)]
    record = [
        {"claim": v.claim, "verdict": v.verdict, "basis": basis, "published": c.value,
         "recomputed": v.recomputed, "tolerance": v.tolerance, "reason": v.reason,
         "sentence": v.sentence(en), "calibrated": v.calibrated,
         "params": v.params, "figures": v.figures, "text": c.text, "source": list(c.source),
         "source_titles": [articles[a]["title"] for a in c.source],
         "scope": c.scope, "why": c.why, "noise_floor": c.noise_floor,
         "noise_why": c.noise_why}
        for c, v, basis in zip(claims, verdicts, bases, strict=True)]
    table = pd.DataFrame([{"claim": v.claim, "verdict": v.verdict, "published": c.value,
                           "recomputed": v.recomputed, "reason": v.sentence(en),
                           "calibrated": ", ".join(v.calibrated)}
                          for c, v in zip(claims, verdicts, strict=True)])
    return ClaimCheck(table=table, figures=figures, record=record)


def save_claims(run: Run, check: ClaimCheck) -> str:
    """Write derived/claims.json (the article reads it); a run without claims.yaml has
    none to write."""
    if not check.record:
        return ""
    write_json(run.paths.claims_json, list(check.record))
    return run.paths.rel(run.paths.claims_json)


def _calibration(run: Run) -> dict[str, str]:
    """For a reconstruction: the figure-id patterns its generator was calibrated to."""
    if not run.meta.reconstruction or not run.meta.scenario:
        return {}
    from ..synth.scenario import calibrated_patterns, load_scenario

    return calibrated_patterns(load_scenario(run.paths.described(run.meta.scenario)))


def claim_basis(registry: dict[str, Figure], verdict, default: str) -> str:
    """What a verdict's agreement or disagreement tells: the weakest provenance of the
    figures it rests on (core.provenance), ``default`` (the run's) when it rests on none of
    them; "" for a claim the data cannot judge."""
    from ..core.provenance import of
    from .claimcheck import NOT_DERIVABLE

    if verdict.verdict == NOT_DERIVABLE:
        return ""
    held = [f for f in verdict.figures if f in registry]
    return of(registry, held) if held else default


def _informative(claims, bases: list[str], src) -> Figure:
    """How many verdicts carry information: those resting on measured figures only."""
    from ..core.provenance import MEASURED

    telling = [c.id for c, basis in zip(claims, bases, strict=True) if basis == MEASURED]
    return Figure(id=ids.CLAIMS_INFORMATIVE, value=len(telling), unit="count", decimals=0,
                  sources=(Source(key="claims", **src),),
                  depends_on=tuple(ids.claim(c) for c in telling),
                  context={"claims": telling},
                  method="claims whose verdict is evidence: it rests on measured figures "
                         "only (not on figures calibrated to the published text, assumed, "
                         "or produced by a reconstruction's model or seed)")


def _indistinguishable(verdicts, src) -> Figure:
    """How many verdicts found a difference below a stated noise floor."""
    from .claimcheck import INDISTINGUISHABLE

    quiet = [v.claim for v in verdicts if v.verdict == INDISTINGUISHABLE]
    return Figure(id=ids.CLAIMS_INDISTINGUISHABLE, value=len(quiet), unit="count", decimals=0,
                  sources=(Source(key="claims", **src),),
                  depends_on=tuple(ids.claim(c) for c in quiet), context={"claims": quiet},
                  method="claims whose published value is outside half its rounding but "
                         "below a stated noise floor (the figure's own interval, else the "
                         "floor claims.yaml declares)")


# --- comparisons across runs (notebooks/compare/) ----------------------------------------

def compare(store: str, runs: str, base: str, data_root: str | None = None):
    """The comparison of ``runs`` (run ids separated by spaces) against ``base``, read from
    the results store ``store`` (the folder the build resolved: ``--store``,
    ``$BENCHREPORT_STORE`` or ``report/_store``); each other run's changes judged with the
    noise floors of its ``<data_root>/<run>/run.yaml`` ``gate:`` block, where it has one."""
    from .compare import METRICS, compare_runs
    from .gate import Noise
    from .gateconfig import run_gate
    from .history import gate_noise

    ids_ = runs.split()
    others = [r for r in ids_ if r != (base or ids_[0])]
    # the gate's noise sources (floors, then the store's history), so that the report and
    # `compare --gate` say the same of every change; the report also resamples requests
    noise = {r: Noise(floors=run_gate(Path(data_root) / r / "run.yaml").noise if data_root
                      else {}, history=gate_noise(Path(store), r, list(METRICS)))
             for r in others}
    return compare_runs(Path(store), ids_, base or None, noise=noise)


class CompareCollector(Collector):
    """A comparison notebook's figures (as ``Collector``, written under the comparison)."""

    def __init__(self, out: str, notebook: str) -> None:
        from pathlib import Path

        from ..core.paths import ComparePaths

        folder = Path(out).resolve()
        self.paths = ComparePaths(name=folder.name, report=folder, project=Path.cwd())
        self.notebook = notebook
        self.figures = []

    def save(self) -> str:
        return _save_fragment(self.paths, self.figures, self.notebook)


def save_compare(figs: CompareCollector, comp) -> str:
    """Write derived/compare.json of the comparison (the article reads it)."""
    from .compare import record

    write_json(figs.paths.compare_json, record(comp))
    return figs.paths.rel(figs.paths.compare_json)


def server_view(run: Run, ing) -> tuple[pd.DataFrame, list[Figure], list[dict]]:
    """The server per benchmark: its /metrics figures and its state from the log lines
    (``analyses.state``), and the series over time, one row per scrape (source metrics)
    and per stats line (source log), for the charts; ``save_server_series`` writes them."""
    from .server import server_figures
    from .state import METRICS, state_figures, state_series

    figures, scraped = server_figures(run, ing)
    figures += state_figures(run, ing)
    series = state_series(run, ing) + [{"source": METRICS, **r} for r in scraped]
    table = pd.DataFrame([{"id": f.id, "value": f.value, "unit": f.unit} for f in figures],
                         columns=["id", "value", "unit"])
    return table, figures, series


def save_server_series(run: Run, series: list[dict]) -> str:
    """Write derived/tables/server_series.parquet: running and waiting requests and KV
    usage (a fraction; a scrape as exposed) at every stats line (source log: file, line) and
    every /metrics scrape (source metrics) inside a benchmark window (the charts draw it)."""
    from ..core.tables import write_rows
    from .state import SERIES_COLUMNS

    write_rows(run.paths.server_series, series, SERIES_COLUMNS, {"line": "BIGINT"})
    return run.paths.rel(run.paths.server_series)


def request_timeline(run: Run, ing) -> tuple[pd.DataFrame, list[Figure], list[dict]]:
    """Where each request's time went: the rows (``save_timeline`` writes them), the
    summary figures, and the rows as a table to show."""
    from .timeline import COLUMNS, table_rows, timeline

    rows, figures = timeline(run, ing)
    stored = table_rows(rows)
    return pd.DataFrame(stored, columns=COLUMNS), figures, stored


def save_timeline(run: Run, rows: list[dict]) -> str:
    """Write derived/tables/timeline.parquet (the Gantt chart draws it)."""
    from ..core.tables import write_rows
    from .timeline import COLUMNS

    write_rows(run.paths.timeline, rows, COLUMNS)
    return run.paths.rel(run.paths.timeline)
