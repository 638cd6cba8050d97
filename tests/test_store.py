"""The results store (report/_store/) and comparisons across runs (report/_compare/)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
from pathlib import Path

import duckdb
import pytest

from benchreport.analyses.compare import compare_runs
from benchreport.cli import main
from benchreport.core import ids
from benchreport.core.errors import ReportError
from benchreport.core.runmeta import Engine
from benchreport.core.store import STORE_VERSION, partition, run_query, store_path
from benchreport.core.verdicts import IMPROVED, REGRESSED, SAME_DATA
from benchreport.pipeline.store import export_run

from .conftest import ROOT, copy_run


def _variant(run, report_root: Path, run_id: str, *, e2el_scale: float = 1.0,
             image: str | None = None, memory: float | None = None):
    """A copy of a built run's derived tables under another id: vLLM's per-request and mean
    end-to-end latencies scaled, its image or its gpu_memory_utilization changed."""
    paths = dataclasses.replace(run.paths, run_id=run_id, report=report_root / run_id)
    shutil.copytree(run.paths.derived, paths.derived)
    con = duckdb.connect()
    tables = paths.tables
    if e2el_scale != 1.0:
        for name, cols in (("requests", "e2el_ms"), ("points", "mean_e2el_ms")):
            path = tables / f"{name}.parquet"
            tmp = path.with_suffix(".tmp")
            con.execute(f"COPY (SELECT * REPLACE (CASE WHEN point LIKE 'vllm.%' THEN {cols} * "
                        f"{e2el_scale} ELSE {cols} END AS {cols}) FROM '{path}') TO '{tmp}' "
                        "(FORMAT parquet)")
            tmp.replace(path)
        # the changed results are another file: another checksum
        path = tables / "points.parquet"
        tmp = path.with_suffix(".tmp")
        con.execute(f"COPY (SELECT * REPLACE (CASE WHEN engine = 'vllm' THEN '{run_id}' || sha256 "
                    f"ELSE sha256 END AS sha256) FROM '{path}') TO '{tmp}' (FORMAT parquet)")
        tmp.replace(path)
    if memory is not None:
        path = tables / "settings.parquet"
        tmp = path.with_suffix(".tmp")
        con.execute(f"COPY (SELECT * REPLACE (CASE WHEN engine = 'vllm' AND key = "
                    f"'gpu_memory_utilization' THEN '{memory}'::JSON ELSE value END AS value) "
                    f"FROM '{path}') TO '{tmp}' (FORMAT parquet)")
        tmp.replace(path)
    meta = run.meta
    if image:
        meta = dataclasses.replace(meta, engines=tuple(
            Engine(e.id, e.name, image if e.id == "vllm" else e.image, e.version)
            for e in meta.engines))
    return dataclasses.replace(run, paths=paths, meta=meta)


@pytest.fixture(scope="module")
def store_pair(reference_build, tmp_path_factory):
    """A store with the reference run and a copy whose vLLM end-to-end latency is 20%
    higher under another image."""
    root = tmp_path_factory.mktemp("store") / "report"
    root.mkdir()
    store = store_path(root)
    export_run(reference_build, store)
    slower = _variant(reference_build, root, "ref-slower", e2el_scale=1.2,
                      image="vllm/vllm-openai:next")
    export_run(slower, store)
    return store, reference_build, slower


def test_a_build_exports_its_run_into_the_store(reference_build):
    store = store_path(reference_build.paths.report.parent)
    names, rows = run_query(store, "select run_id, count(*) from points group by 1")
    assert rows == [("2024-b300", 4)]
    _, figs = run_query(store, "select value from figures where id = 'e2e.64k.speedup'")
    assert figs[0][0] == pytest.approx(150.8 / 100.5)


def test_plain_duckdb_reads_the_layout_without_benchreport(store_pair):
    store, *_ = store_pair
    rows = duckdb.sql(
        f"select run_id, count(*) from read_parquet('{store}/points/*/*.parquet', "
        "hive_partitioning = true) group by 1 order by 1").fetchall()
    assert rows == [("2024-b300", 4), ("ref-slower", 4)]
    n = duckdb.sql(f"select count(*) from read_parquet('{store}/requests/*/*.parquet', "
                   "hive_partitioning = true) where run_id = 'ref-slower'").fetchall()[0][0]
    assert n == 40            # 4 points x 10 requests
    kinds = duckdb.sql(f"select kind, count(*) from read_parquet('{store}/events/*/*.parquet', "
                       "hive_partitioning = true) where run_id = '2024-b300' group by 1 "
                       "order by 1").fetchall()
    assert kinds == [("jit_event", 8), ("memory_event", 32)]
    engines = duckdb.sql(f"select engines from read_parquet('{store}/runs/*/*.parquet', "
                         "hive_partitioning = true) where run_id = '2024-b300'").fetchall()[0][0]
    assert [(e["id"], e["logged_version"]) for e in engines] == [("vllm", "0.33.0"),
                                                                 ("sglang", None)]


def test_query_and_runs_from_the_command_line(store_pair, capsys):
    store, *_ = store_pair
    root = store.parent
    assert main(["query", "select run_id, count(*) as n from points group by 1 order by 1",
                 "--format", "csv", "--report-root", str(root)]) == 0
    assert capsys.readouterr().out == "run_id,n\n2024-b300,4\nref-slower,4\n"
    assert main(["query", "select run_id, count(*) as n from settings group by 1 order by 1",
                 "--format", "json", "--report-root", str(root)]) == 0
    assert json.loads(capsys.readouterr().out) == [{"run_id": "2024-b300", "n": 58},
                                                   {"run_id": "ref-slower", "n": 58}]
    assert main(["runs", "--report-root", str(root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["run_id", "date"]
    assert [line.split()[0] for line in out[2:4]] == ["2024-b300", "ref-slower"]
    assert out[-1] == "(2 rows)"


def test_a_query_error_is_one_line(store_pair, capsys):
    store, *_ = store_pair
    assert main(["query", "select nope from points", "--report-root", str(store.parent)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: query failed: ")
    assert '"nope"' in err


@pytest.mark.parametrize("sql, says", [
    ("select * from read_csv('{secret}')", "file system operations are disabled"),
    ("select * from read_parquet('{outside}/*.parquet')", "file system operations are disabled"),
    ("copy (select 1) to '{outside}/x.csv'", "found: COPY"),
    ("copy (select 1) to '{store}/points/x.csv'", "found: COPY"),
    ("select 1; drop view points", "found: SELECT, DROP"),
    ("drop view points", "found: DROP"),
    ("set enable_external_access = true", "found: SET"),
    ("attach '{outside}/x.db'", "found: ATTACH"),
])
def test_query_reads_the_store_and_nothing_else(store_pair, tmp_path, capsys, sql, says):
    store, *_ = store_pair
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("password\nhunter2\n")
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    given = sql.format(secret=outside / "secret.csv", outside=outside, store=store)
    assert main(["query", given, "--report-root", str(store.parent)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert "hunter2" not in err
    assert sorted(p.name for p in outside.iterdir()) == ["secret.csv"]
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before
    # the store still answers: the views were not dropped for the next query
    assert run_query(store, "select count(*) from points")[1] == [(8,)]


def test_query_csv_quotes_text_a_spreadsheet_would_run():
    from benchreport.core.store import format_rows

    out = format_rows(["cell", "n"], [("=HYPERLINK(\"x\")", -1.5), ("@SUM(A1)", 2),
                                      ("+1", 3), ("-x", 4), ("plain", -7)], "csv")
    import csv

    assert list(csv.reader(out.splitlines())) == [
        ["cell", "n"], ["'=HYPERLINK(\"x\")", "-1.5"], ["'@SUM(A1)", "2"], ["'+1", "3"],
        ["'-x", "4"], ["plain", "-7"]]


def test_an_empty_store_says_so(tmp_path, capsys):
    assert main(["runs", "--report-root", str(tmp_path)]) == 1
    assert "the store is empty" in capsys.readouterr().err


def test_an_old_schema_is_refused_with_its_run(store_pair, tmp_path):
    store, ref, _ = store_pair
    copy = tmp_path / "_store"
    shutil.copytree(store, copy)
    part = partition(copy, "runs", "ref-slower") / "data.parquet"
    duckdb.execute(f"COPY (SELECT * REPLACE (0 AS store_version) FROM '{part}') TO "
                   f"'{part}.tmp' (FORMAT parquet)")
    Path(f"{part}.tmp").replace(part)
    with pytest.raises(ReportError) as info:
        run_query(copy, "select 1")
    text = info.value.one_line()
    assert "run ref-slower" in text and "schema version 0" in text
    assert f"reads version {STORE_VERSION}" in text and "make report RUN=ref-slower" in text


def test_rebuilding_replaces_only_its_partition_and_parallel_exports_coexist(
        store_pair, tmp_path):
    store, ref, slower = store_pair
    copy = tmp_path / "report" / "_store"
    shutil.copytree(store, copy)
    other = partition(copy, "points", "2024-b300") / "data.parquet"
    before = other.read_bytes()
    # two different runs exporting at the same time
    third = _variant(ref, tmp_path / "report", "ref-third", e2el_scale=0.9)
    threads = [threading.Thread(target=export_run, args=(r, copy)) for r in (slower, third)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert other.read_bytes() == before
    _, rows = run_query(copy, "select run_id, count(*) from points group by 1 order by 1")
    assert rows == [("2024-b300", 4), ("ref-slower", 4), ("ref-third", 4)]
    assert not any((copy / ".incoming").iterdir())


def test_a_failed_build_leaves_the_store_as_it_was(mini_build, tmp_path):
    from benchreport.pipeline.run import build

    run, _ = mini_build
    root = tmp_path / "report"
    store = store_path(root)
    export_run(run, store)
    files = {p: p.read_bytes() for p in store.rglob("*.parquet")}
    data = copy_run(tmp_path, "mini")
    victim = sorted((data / "raw" / "vllm").glob("*.json"))[0]
    victim.write_text("{ not json")
    with pytest.raises(ReportError):
        build("mini", data_root=tmp_path / "data", report_root=root, project=ROOT,
              out=lambda line: None)
    assert {p: p.read_bytes() for p in store.rglob("*.parquet")} == files


# --- comparisons ---------------------------------------------------------------------

E2EL = ("vllm", "64k", "c10", "mean_e2el_ms")


def test_a_change_in_one_engine_is_a_regression_and_swapping_flips_it(store_pair):
    store, *_ = store_pair
    forward = compare_runs(store, ["2024-b300", "ref-slower"])
    reg = {f.id: f for f in forward.figures}
    fid = ids.delta("2024-b300", "ref-slower", *E2EL)
    assert reg[fid].value == pytest.approx(1.2)
    assert reg[fid + ".verdict"].value == REGRESSED
    assert reg[fid + ".low"].value > 1.0 and reg[fid + ".high"].value < 1.3
    assert "resamples" in reg[fid].method
    # SGLang's points are the same file in both runs: nothing to judge
    same = ids.delta("2024-b300", "ref-slower", "sglang", "64k", "c10", "mean_e2el_ms")
    assert reg[same + ".verdict"].value == SAME_DATA
    # the one factor that differs, with both values and their sources
    assert reg[ids.diff("ref-slower", "groups")].value == 1
    assert reg[ids.diff("ref-slower", "groups")].context["groups"] == ["release-vllm"]
    item = ids.diff("ref-slower", "release-vllm-image", "to")
    assert reg[item].value == "vllm/vllm-openai:next"
    assert reg[item.removesuffix(".to") + ".from"].value == "vllm/vllm-openai:kimi-k3"
    assert reg[item].sources[0].key == "engines[vllm].image"

    backward = compare_runs(store, ["ref-slower", "2024-b300"])
    back = {f.id: f for f in backward.figures}
    bid = ids.delta("ref-slower", "2024-b300", *E2EL)
    assert back[bid].value == pytest.approx(1 / 1.2)
    assert back[bid + ".verdict"].value == IMPROVED
    assert back[bid + ".low"].value == pytest.approx(1 / reg[fid + ".high"].value, rel=0.05)
    # the provenance of a ratio reaches each run's result file and its JSON key
    assert [(s.path, s.key) for s in reg[fid].sources] == [
        ("data/2024-b300/raw/vllm/vllm-infqps-concurrency10-Kimi-K3-20261120-101345.json",
         "mean_e2el_ms")] * 2


def test_the_gate_does_not_pass_a_change_it_cannot_judge(store_pair, capsys):
    """vLLM's end-to-end latency is 20% higher in ref-slower, one repeat each and no floor:
    the report's request resampling calls it regressed, but the gate, which takes its noise
    only from repeats or a declared floor, says it cannot tell, and --strict fails on that."""
    store, *_ = store_pair
    args = ["compare", "--gate", "2024-b300", "ref-slower", "--report-root",
            str(store.parent), "--format", "json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "inconclusive"
    e2el = [r for r in doc["rows"] if r["engine"] == "vllm" and r["metric"] == "mean_e2el_ms"]
    assert e2el and {(r["verdict"], r["noise_source"]) for r in e2el} == {
        ("cannot tell", "none")}
    assert all(r["ratio"] == pytest.approx(1.2) for r in e2el)
    assert {r["verdict"] for r in doc["rows"] if r["engine"] == "sglang"} == {"same data"}
    assert main(args + ["--strict"]) == 1


def test_more_than_one_factor_is_said_first(store_pair, tmp_path):
    store, ref, _ = store_pair
    copy = tmp_path / "report" / "_store"
    shutil.copytree(store, copy)
    both = _variant(ref, tmp_path / "report", "ref-both", image="vllm/vllm-openai:next",
                    memory=0.9)
    export_run(both, copy)
    comp = compare_runs(copy, ["2024-b300", "ref-both"])
    reg = {f.id: f for f in comp.figures}
    assert reg[ids.diff("ref-both", "groups")].value == 2
    assert reg[ids.diff("ref-both", "groups")].context["groups"] == ["release-vllm",
                                                                     "settings-vllm"]
    changed = [c for c in comp.changes if c["group"] == "settings-vllm"]
    assert [(c["key"], c["from"], c["to"]) for c in changed] == \
        [("vllm args: gpu_memory_utilization", "0.95", "0.9"),
         ("vllm flags: gpu_memory_utilization", "0.95", "0.9")]


def test_three_runs_give_trends_in_date_order(store_pair, tmp_path):
    store, ref, slower = store_pair
    copy = tmp_path / "report" / "_store"
    shutil.copytree(store, copy)
    third = _variant(ref, tmp_path / "report", "ref-faster", e2el_scale=0.8)
    export_run(third, copy)
    comp = compare_runs(copy, ["2024-b300", "ref-slower", "ref-faster"])
    # same date: the order given
    assert [r.id for r in comp.ordered] == ["2024-b300", "ref-slower", "ref-faster"]
    reg = {f.id: f for f in comp.figures}
    step = ids.delta("ref-slower", "ref-faster", *E2EL, "verdict")
    assert reg[step].value == IMPROVED
    assert reg[ids.trend("vllm", "64k", "c10", "duration", "ref-faster")].value == \
        pytest.approx(100.5)
    assert comp.trends and {tr["metric"] for tr in comp.trends} >= {"duration"}


def test_the_comparison_report_in_both_languages(store_pair):
    from benchreport.pipeline.compare import build_compare

    store, *_ = store_pair
    paths = build_compare(["2024-b300", "ref-slower"], report_root=store.parent,
                          project=ROOT, out=lambda line: None, build_runs=False)
    en = paths.html("en").read_text()
    ko = paths.html("ko").read_text()
    assert paths.pdf("en").stat().st_size > 10_000 and paths.pdf("ko").stat().st_size > 10_000
    assert "ref-slower differs from 2024-b300 in one factor: the release of vLLM." in en
    assert "engines[vllm].image" in en and "engines[vllm].image" in ko
    assert "vllm/vllm-openai:next" in en
    assert "The largest change beyond the noise, a regression: vLLM at" in en
    assert "가장 큰 변화는 악화입니다" in ko
    anchor = "fig-" + ids.delta("2024-b300", "ref-slower", *E2EL, "verdict").replace(".", "-")
    assert f'href="#{anchor}">regressed</a>' in en
    assert f'href="#{anchor}">악화</a>' in ko
    assert "번역되지 않은" not in ko          # every method in Korean (tests/test_methods.py)
    # the runs' curves overlaid: one chart per engine and workload, one colour per run
    assert "The runs&#39; load curves" in en or "The runs' load curves" in en
    assert "실행별 부하 곡선" in ko
    assert en.count('aria-label="vLLM, ') >= 1 and "ref-slower output_throughput:" in en
    assert (paths.notebooks / "10-compare.ipynb").is_file()
    figures = json.loads(paths.figures_json.read_text())["figures"]
    assert any(f["id"] == ids.delta("2024-b300", "ref-slower", *E2EL) for f in figures)
