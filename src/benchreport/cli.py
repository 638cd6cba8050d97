"""Command line: a light wrapper around the package; errors print as one line."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from . import __version__
from .core.errors import ReportError


def _build(args: argparse.Namespace) -> int:
    from .pipeline.run import build

    run = build(args.run_id, data_root=args.data_root, report_root=args.report_root,
                project=args.project, pdf=not args.no_pdf, base_url=args.base_url,
                store_dir=args.store)
    report = run.paths.rel(run.paths.report)
    if _failed(run) and not args.allow_failed:
        # the report is written (it says why in its first line), but a failed run is not
        # a result: a script or CI job that builds it must notice
        print(f"error: the run failed: no request succeeded at any point; see {report}/"
              "report.en.html (pass --allow-failed to accept a failed run)", file=sys.stderr)
        return 3
    pdfs = "" if args.no_pdf else ", report.ko.pdf, report.en.pdf"
    print(f"report ready: {report}/report.ko.html, report.en.html{pdfs}")
    return 0


def _failed(run) -> bool:
    from .core.figures import load_registry
    from .publish.headline import run_failed
    from .publish.narrative_base import Writer

    return run_failed(Writer(run, load_registry(run.paths.figures_json), "en", {}))


def _check(args: argparse.Namespace) -> int:
    from .analyses.consistency import all_checks
    from .analyses.consistency import warnings as consistency_warnings
    from .core.recordset import Records
    from .ingest.io import load_run
    from .ingest.run import check_windows, ingest_run, warnings_of
    from .pipeline import checksums

    run = load_run(args.run_id, args.data_root)
    shown = run.paths.rel(run.paths.data)
    checksums.verify(run.paths.data, shown, run.id)
    ing = ingest_run(run)
    check_windows(run, ing)
    # sources that saw the same benchmark and disagree (the result file against the log)
    notes = warnings_of(ing.summaries) + consistency_warnings(
        all_checks(run, ing))
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    files = len({s["file"] for s in ing.summaries})
    records = Records.of(ing.records).total() + len(ing.results)
    print(f"{shown}: {files} files, {records} records, {len(ing.windows)} benchmark windows "
          f"found, {len(notes)} warnings")
    return 0


def _checksums(args: argparse.Namespace) -> int:
    from .core.paths import run_paths
    from .pipeline import checksums

    paths = run_paths(args.run_id, args.data_root)
    shown = paths.rel(paths.data)
    if args.write:
        print(f"recorded {paths.rel(checksums.record(paths.data))}")
    else:
        count = checksums.verify(paths.data, shown, args.run_id)
        print(f"{shown}: {count} files match {checksums.NAME}" if count
              else f"{shown}: no {checksums.NAME} recorded")
    return 0


def _parse(args: argparse.Namespace) -> int:
    import datetime as dt
    import json

    from .ingest.io import read_raw
    from .ingest.parsers.logscan import Summary

    path = args.file
    if not path.is_file():
        from .core.errors import MissingInputError

        raise MissingInputError(f"{path} not found (expected a file)")
    year = args.year or dt.datetime.fromtimestamp(path.stat().st_mtime).year
    summary = Summary(file=str(path), engine=args.engine)
    from .core.redact import redact, redact_record

    records = read_raw(path, str(path), args.engine, year, summary)
    for warning in summary.warnings:
        print(f"warning: {redact(warning)}", file=sys.stderr)
    out = summary.to_json()
    out.pop("warnings")
    if args.json:
        # what a parser kept of the file, redacted as the build stores it
        out["records"] = [redact_record(r) for r in records]
        print(json.dumps(out, ensure_ascii=False, default=str))
    else:
        counts = ", ".join(f"{k} {v}" for k, v in out["counts"].items())
        print(f"{path}: {out['engine']}, {out['lines']} lines, {out['unrecognised']} "
              f"unrecognised; {counts}")
    return 0


def _explain(args: argparse.Namespace) -> int:
    from .ingest.io import load_run
    from .pipeline.explain import explain, list_ids

    run = load_run(args.run_id, args.data_root, args.report_root)
    if args.list or not args.figure_id:
        list_ids(run)
    else:
        explain(run, args.figure_id)
    return 0


def _init(args: argparse.Namespace) -> int:
    from .pipeline.init import init_run

    init_run(args.run_id, args.paths, args.data_root, engine=args.engine, dry_run=args.dry_run,
             client=args.client)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from .pipeline.compare import build_compare

    if args.gate:
        return _gate(args)
    if args.gate_file or args.format or args.strict or args.tolerance is not None:
        print("error: --gate-file, --format, --strict and --tolerance go with --gate",
              file=sys.stderr)
        return 2

    paths = build_compare(args.runs, base=args.base, name=args.name, data_root=args.data_root,
                          report_root=args.report_root, project=args.project,
                          store_dir=args.store)
    _print_matching(paths.compare_json)
    shown = paths.rel(paths.report)
    print(f"comparison ready: {shown}/report.ko.html, report.en.html, report.ko.pdf, "
          "report.en.pdf")
    return 0


def _print_matching(compare_json: Path) -> None:
    """Which points of the compared runs matched and which did not, and why (stderr)."""
    from .core.files import read_json

    if compare_json.is_file():
        for line in read_json(compare_json).get("matching", []):
            print(line, file=sys.stderr)


def _gate(args: argparse.Namespace) -> int:
    """``compare --gate``: exit 0 (no gated metric worse), 1 (one is worse; with --strict
    also one that could not be judged), 2 (bad input, or no point matched)."""
    from .pipeline.gate import gate
    from .publish.gate import render

    try:
        result = gate(args.runs, base=args.base, gate_file=args.gate_file,
                      data_root=args.data_root, report_root=args.report_root,
                      tolerance=args.tolerance, store_dir=args.store)
    except (ReportError, OSError) as exc:
        if args.debug:
            raise
        text = exc.one_line() if isinstance(exc, ReportError) else \
            f"{exc.filename or ''}: {exc.strerror or exc}"
        print(f"error: {text}", file=sys.stderr)
        return 2
    sys.stdout.write(render(result, args.format or "text"))
    return result.exit_code(strict=args.strict)


def _query(args: argparse.Namespace) -> int:
    from .core.store import format_rows, resolve_store, run_query

    names, rows = run_query(resolve_store(args.report_root, args.store), args.sql)
    sys.stdout.write(format_rows(names, rows, args.format))
    return 0


def _history(args: argparse.Namespace) -> int:
    from .analyses.history import DEFAULT_METRICS, history, method_record, metric_columns, record
    from .core.store import resolve_store
    from .publish.history import render

    metrics = list(metric_columns()) if "all" in (args.metric or []) \
        else list(dict.fromkeys(args.metric or DEFAULT_METRICS))
    store = resolve_store(args.report_root, args.store)
    trends = history(store, metrics=metrics, engine=args.engine, model=args.model,
                     workload=args.workload, load=args.load, point=args.point)
    if not trends:
        raise ReportError("no series in the results store matches the selection",
                          path=store.as_posix(),
                          hint="benchreport runs lists the runs; benchreport query "
                               "\"select distinct engine, workload, load from points\" the points")
    recs = [record(t) for t in trends]
    charts = _history_charts(recs, args.chart) if args.chart else []
    sys.stdout.write(render(recs, method_record(), args.format, charts))
    return 0


def _history_charts(recs: list[dict], folder: Path) -> list[str]:
    """One SVG per trend in ``folder``: <engine>-<workload>-<load>-<metric>.svg (a suffix
    when two points share those)."""
    import re

    from .core.files import write_text_atomic
    from .core.i18n import load_catalogue
    from .core.paths import LABELS
    from .publish.charts import history_chart

    t = load_catalogue(LABELS, "en")
    folder.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for rec in recs:
        p = rec["point"]
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(
            str(x) for x in (p["engine"], p["workload"], p["load_id"], rec["metric"])))
        path, n = folder / f"{stem}.svg", 1
        while path.as_posix() in written:
            n += 1
            path = folder / f"{stem}-{n}.svg"
        write_text_atomic(path, str(history_chart(rec, t)) + "\n")
        written.append(path.as_posix())
    return written


RUNS_SQL = """
SELECT r.run_id, r.date, r.model, r.gpus || ' x ' || r.gpu_model AS hardware,
       list_transform(r.engines, lambda e: e.name || ' ' ||
                      coalesce(e.version, e.logged_version, e.image, '?')) AS engines,
       coalesce(p.points, 0) AS points, coalesce(f.figures, 0) AS figures,
       left(r.inputs_sha256, 12) AS inputs
FROM runs r
LEFT JOIN (SELECT run_id, count(*) AS points FROM points GROUP BY 1) p USING (run_id)
LEFT JOIN (SELECT run_id, count(*) AS figures FROM figures GROUP BY 1) f USING (run_id)
ORDER BY r.date NULLS LAST, r.run_id
"""


def _runs(args: argparse.Namespace) -> int:
    from .core.store import format_rows, resolve_store, run_query

    names, rows = run_query(resolve_store(args.report_root, args.store), RUNS_SQL)
    sys.stdout.write(format_rows(names, rows, args.format))
    return 0


def _compact(args: argparse.Namespace) -> int:
    from .core.store import resolve_store
    from .pipeline.compact import compact

    store = resolve_store(args.report_root, args.store)
    done = compact(store)
    print(f"{store.as_posix()}: {done.runs} runs in the compacted set; {done.moved} moved "
          f"there from their own partitions, {done.kept} kept theirs (exported again while "
          f"it ran); {done.copy_s:.1f} s copying, {done.locked_s:.1f} s with exports held, "
          f"{done.delete_s:.1f} s deleting")
    return 0


STORE_HELP = ("the results store folder (default: $BENCHREPORT_STORE, else "
              "<report-root>/_store)")


def _store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="DIR", help=STORE_HELP)


def _synth(args: argparse.Namespace) -> int:
    from .synth import generate

    for path in generate(args.scenario, args.out):
        print(path.as_posix())
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchreport", description=__doc__)
    parser.add_argument("--version", action="version", version=f"benchreport {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="build report/<RUN>/ from data/<RUN>/")
    p.add_argument("run_id", help="folder name under data/, e.g. 2024-b300")
    p.add_argument("--data-root", type=Path, default=Path("data"))
    p.add_argument("--report-root", type=Path, default=Path("report"))
    p.add_argument("--project", type=Path, default=Path("."),
                   help="folder holding notebooks/ and templates/ (default: current folder)")
    p.add_argument("--no-pdf", action="store_true",
                   help="leave the PDFs out: a quicker draft of the HTML pages")
    p.add_argument("--base-url", help="where the blog bundle (report/<RUN>/blog/) will be "
                                      "served: its image and report links become absolute")
    p.add_argument("--allow-failed", action="store_true",
                   help="exit 0 for a run in which no request succeeded (its report says so)")
    _store_arg(p)
    p.set_defaults(func=_build)

    p = sub.add_parser("check", help="read every input of data/<RUN>/ and report problems, "
                                      "without building")
    p.add_argument("run_id")
    p.add_argument("--data-root", type=Path, default=Path("data"))
    p.set_defaults(func=_check)

    p = sub.add_parser("checksums", help="verify (or --write) data/<RUN>/SHA256SUMS")
    p.add_argument("run_id")
    p.add_argument("--data-root", type=Path, default=Path("data"))
    p.add_argument("--write", action="store_true", help="record the current files")
    p.set_defaults(func=_checksums)

    p = sub.add_parser("parse", help="read one raw file (log, result, launch config)")
    p.add_argument("file", type=Path)
    p.add_argument("--engine", choices=("auto", "vllm", "sglang"), default="auto")
    p.add_argument("--year", type=int, help="year of vLLM's year-less timestamps "
                                            "(default: the file's modification year)")
    p.add_argument("--json", action="store_true", help="print one JSON object with records")
    p.set_defaults(func=_parse)

    p = sub.add_parser("explain", help="how a figure was derived, down to the raw lines")
    p.add_argument("run_id")
    p.add_argument("figure_id", nargs="?")
    p.add_argument("--list", action="store_true", help="list every figure id with its value")
    p.add_argument("--data-root", type=Path, default=Path("data"))
    p.add_argument("--report-root", type=Path, default=Path("report"))
    p.set_defaults(func=_explain)

    p = sub.add_parser("init", help="start data/<RUN>/ from result files and logs: copy them "
                                     "unchanged, draft run.yaml, record SHA256SUMS")
    p.add_argument("run_id", help="the new run's folder name under data/")
    p.add_argument("paths", type=Path, nargs="+", help="result files, logs, or folders of them")
    p.add_argument("--engine", help="the engine that served them, when the files do not say "
                                    "(e.g. vllm, sglang)")
    p.add_argument("--client", type=Path, metavar="MAPPING.yaml",
                   help="your own benchmark client: a YAML file with run.yaml's client: block "
                        "(which files, which keys); the files it matches are read by it")
    p.add_argument("--dry-run", action="store_true",
                   help="print, file by file, the engine, model, workload, load and repeat "
                        "init would give it (or why it skips it) and the run.yaml it would "
                        "draft; write nothing")
    p.add_argument("--data-root", type=Path, default=Path("data"))
    p.set_defaults(func=_init)

    p = sub.add_parser("compare", help="build report/_compare/<name>/: what changed between "
                                        "runs and what it did to each matched point")
    p.add_argument("runs", nargs="+", help="run ids (folders under data/), two or more")
    p.add_argument("--base", help="the run the others are compared with (default: the first)")
    p.add_argument("--name", help="folder name under report/_compare/ (default: the run ids "
                                  "joined by -vs-)")
    p.add_argument("--data-root", type=Path, default=Path("data"))
    p.add_argument("--report-root", type=Path, default=Path("report"))
    p.add_argument("--project", type=Path, default=Path("."))
    p.add_argument("--gate", action="store_true",
                   help="a regression gate instead of the report: read the store only (the "
                        "runs must be built), judge every gated metric of every matched point "
                        "and exit 1 when one is worse beyond its noise, 2 on bad input or "
                        "when nothing matched, else 0")
    p.add_argument("--gate-file", type=Path, metavar="GATE.yaml",
                   help="noise floors, gated metrics and length tolerance (default: the new "
                        "run's run.yaml gate: block)")
    p.add_argument("--format", choices=("text", "json", "markdown"),
                   help="the gate's output (default text)")
    p.add_argument("--strict", action="store_true",
                   help="with --gate: exit 1 also when a gated metric could not be judged")
    p.add_argument("--tolerance", type=float, metavar="FRACTION",
                   help="with --gate: input and output lengths within this fraction of the "
                        "larger match (default 0.1, or the gate file's)")
    _store_arg(p)
    p.set_defaults(func=_compare)

    p = sub.add_parser("query", help="run SQL over the results store of every built run "
                                      "(tables runs, points, requests, figures, settings, "
                                      "events)")
    p.add_argument("sql", help='e.g. "select run_id, count(*) from points group by 1"')
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument("--report-root", type=Path, default=Path("report"))
    _store_arg(p)
    p.set_defaults(func=_query)

    p = sub.add_parser("runs", help="list the runs in the results store")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument("--report-root", type=Path, default=Path("report"))
    _store_arg(p)
    p.set_defaults(func=_runs)

    p = sub.add_parser("history", help="each metric of a point over the runs of the results "
                                        "store in date order, and the runs from which its "
                                        "level changed (a permutation test)")
    p.add_argument("--engine", help="only this engine's points (an engine id, e.g. vllm)")
    p.add_argument("--model", help="only points of this model (as the points table names it)")
    p.add_argument("--workload", help="only points of series with a run of this workload id")
    p.add_argument("--load", help="only series with a run at this load id (e.g. c16, r4)")
    p.add_argument("--point", help="only the series of this point: <engine>.<workload>.<load>")
    p.add_argument("--metric", action="append",
                   help="a metric column of the points table (repeat it for more; 'all' for "
                        "every one); default: output_throughput, mean_ttft_ms, p99_ttft_ms, "
                        "mean_tpot_ms")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--chart", type=Path, metavar="DIR",
                   help="also write a trend chart (SVG) per point and metric into DIR")
    p.add_argument("--report-root", type=Path, default=Path("report"))
    _store_arg(p)
    p.set_defaults(func=_history)

    p = sub.add_parser("store", help="maintain the results store")
    actions = p.add_subparsers(dest="action", required=True)
    p = actions.add_parser("compact", help="merge the runs' small partitions into one "
                                           "file per table, so many runs stay quick to query")
    p.add_argument("--report-root", type=Path, default=Path("report"))
    _store_arg(p)
    p.set_defaults(func=_compact)

    p = sub.add_parser("synth", help="write a seeded synthetic run from a scenario file")
    p.add_argument("scenario", type=Path, help="scenario YAML, e.g. data/2024-b300/scenario.yaml")
    p.add_argument("out", type=Path, help="folder to write raw/<engine>/ files into")
    p.set_defaults(func=_synth)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):  # noqa: ARG001
    print(f"warning: {message}", file=sys.stderr)


def _ignore_further_interrupts() -> None:
    """Run as the program (``argv`` from the command line), a build stopped by Ctrl-C has
    cleaned up and only has to say so and exit 130. A second SIGINT from here on (another
    press, or one that reaches the process while Python shuts down, when the default action
    is back in place) would end it by the signal instead, with no status 130: ignore it.
    Called in-process (tests, other programs), the caller's handler stays as it was."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the flush at exit does not fail on the closed pipe
    again (and print Python's own complaint)."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):      # no real stdout (in-process callers): nothing to do
        pass


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        return args.func(args)
    except ReportError as exc:
        if args.debug:
            raise
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 1
    except BrokenPipeError:        # the reader left (`| head`): stop quietly, as cat does
        _quiet_stdout()
        return 141
    except OSError as exc:         # a file that cannot be read or written: still one line
        if args.debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if args.debug:
            raise
        if argv is None:
            _ignore_further_interrupts()
        left = ""
        if args.command == "build":       # the export precedes the swap: nothing replaced
            left = f"; {(args.report_root / args.run_id).as_posix()}/ was left as it was"
        print(f"error: interrupted{left}", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
