"""Run-level ingest: tables, summaries, and each benchmark's window in long logs."""

import json
from pathlib import Path

import pytest

from benchreport.core.errors import ReportError
from benchreport.ingest.io import load_run
from benchreport.ingest.run import check_windows, ingest_run, save_ingest
from benchreport.synth import make_run

from .conftest import copy_run

SMALL = Path(__file__).parent / "fixtures" / "scenarios" / "small.yaml"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    sims = make_run(SMALL, root / "data" / "small")
    return root, sims


def test_reference_run_windows_and_counts(project):
    run = load_run("2024-b300", project / "data")
    ing = ingest_run(run)
    got = {(w.engine, w.workload): (w.source, w.start, w.end) for w in ing.windows}
    assert got[("vllm", "64k")] == ("result date", "2026-11-20T10:12:03", "2026-11-20T10:13:57")
    assert got[("sglang", "200k")][0] == "activity burst"
    assert got[("sglang", "200k")][1] <= "2026-11-20T14:10:32"
    assert len(ing.in_window("decode_batch", "sglang", "64k")) > 40
    # the two vLLM benchmarks' stats lines do not bleed into each other
    a = ing.in_window("engine_stats", "vllm", "64k")
    b = ing.in_window("engine_stats", "vllm", "200k")
    assert a and b and not {r["line"] for r in a} & {r["line"] for r in b}
    assert all(s["unrecognised"] == 0 for s in ing.summaries)


def test_windows_from_bursts_in_a_log_with_several_benchmarks(generated):
    root, sims = generated
    run = load_run("small", root / "data", root / "report")
    ing = ingest_run(run)
    beta = {w.workload: w for w in ing.windows if w.engine == "beta"}
    assert {w.source for w in beta.values()} == {"activity burst"}
    for sim in (s for s in sims if s.engine.id == "beta"):
        w = beta[sim.spec.workload]
        assert w.start <= sim.spec.start.isoformat() <= w.end
    check_windows(run, ing)


def test_explicit_windows_in_run_yaml_win(generated, tmp_path):
    root, _ = generated
    import shutil

    shutil.copytree(root / "data" / "small", tmp_path / "data" / "small")
    run_yaml = tmp_path / "data/small/run.yaml"
    run_yaml.write_text(run_yaml.read_text() + "windows:\n  beta:\n    8k: {start: "
                        "2026-03-01T10:10:00, end: 2026-03-01T10:10:30}\n")
    ing = ingest_run(load_run("small", tmp_path / "data"))
    w = next(w for w in ing.windows if w.engine == "beta" and w.workload == "8k")
    assert (w.source, w.start, w.end) == ("run.yaml", "2026-03-01T10:10:00",
                                           "2026-03-01T10:10:30")


def test_a_benchmark_missing_from_its_log_is_named(generated, tmp_path):
    root, _ = generated
    import shutil

    shutil.copytree(root / "data" / "small", tmp_path / "data" / "small")
    log = tmp_path / "data/small/raw/beta/server.log"
    keep = [ln for ln in log.read_text().splitlines(keepends=True) if "10:12:" not in ln
            and "10:13:" not in ln]
    log.write_text("".join(keep))
    run = load_run("small", tmp_path / "data")
    with pytest.raises(ReportError, match="cannot find the 32k benchmark in beta's log"):
        check_windows(run, ingest_run(run))


def test_tables_and_summaries_are_written(workspace):
    copy_run(workspace, "mini")
    run = load_run("mini", workspace / "data", workspace / "report")
    ing = ingest_run(run)
    assert ing.records == {}                        # no logs: nothing but results
    assert {(w.engine, w.source) for w in ing.windows} == {("vllm", "result date")}
    check_windows(run, ing)                         # no log, so nothing to look for
    written = save_ingest(run, ing)
    assert "report/mini/derived/ingest.json" in written[-2] or written[-2].endswith("ingest.json")
    files = json.loads((workspace / "report/mini/derived/ingest.json").read_text())["files"]
    assert [f["counts"] for f in files] == [{"bench_result": 1}] * 4


def test_saved_tables_are_typed_and_read_back_equal(project, tmp_path):
    """Nested values keep their types in Parquet: settings get a table of their own, lists
    stay lists, result statistics are a map; the loader gives back what ingest held."""
    import duckdb

    from benchreport.core.tables import load_ingested

    run = load_run("2024-b300", project / "data", tmp_path / "report")
    ing = ingest_run(run)
    save_ingest(run, ing)
    tables = run.paths.tables
    con = duckdb.connect()

    def types(name):
        return {row[0]: row[1]
                for row in con.execute(f"DESCRIBE SELECT * FROM '{tables / name}'").fetchall()}

    assert types("records_spec_decode.parquet")["per_position_acceptance"] == "DOUBLE[]"
    assert types("points.parquet")["sources"] == "MAP(VARCHAR, VARCHAR)"
    assert types("requests.parquet")["itl_ms"] == "DOUBLE[]"
    assert types("requests.parquet")["start_s"] == "DOUBLE"
    assert not (tables / "results.parquet").exists()   # a view of points + requests now
    assert "flags" not in types("records_launch_config.parquet")
    assert "args" not in types("records_server_args.parquet")
    flag = con.execute(
        f"SELECT value, value_line FROM '{tables / 'settings.parquet'}' WHERE engine='sglang'"
        " AND kind='launch_config' AND key='mem_fraction_static'").fetchall()
    assert flag == [('"0.88"', 14)]          # the flag's text as launched, and its line

    back = load_ingested(run)
    for kind in ("launch_config", "server_args", "spec_decode"):
        assert back.records[kind] == [{k: v for k, v in r.items() if v is not None}
                                      for r in ing.records[kind]], kind
    from benchreport.analyses.latency import per_request

    assert [(e.point, e.stats, e.sources, e.date, e.line) for e in back.results] == \
        [(e.point, e.stats, e.sources, e.date, e.line) for e in ing.results]
    assert [per_request(e) for e in back.results] == [per_request(e) for e in ing.results]
    # the chunk gaps are kept exactly: itls[0][0] of the 64K vLLM file × 1000
    v64 = next(e for e in back.results if e.point == "vllm.64k.c10.r1")
    assert len(v64.requests) == 10 and len(v64.requests[0]["itl_ms"]) == 2876
    assert v64.requests[0]["itl_ms"][:2] == [3.04966 * 1000.0, 3.133531 * 1000.0]
