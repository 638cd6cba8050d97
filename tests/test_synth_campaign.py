"""A generated campaign with known truth, read back through `load_points`: every point lands
on its engine, load and repeat, with the figures, per-request rows and definitions the
truth says."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from benchreport.core.errors import ReportError
from benchreport.core.runmeta import load_run
from benchreport.ingest.clients import read_points
from benchreport.ingest.points import load_points
from benchreport.synth.campaign import write_campaign

SMALL = {"engines": ("alpha", "beta"), "loads": (1, 4, 16), "repeats": 2, "requests": 20}
VLLM_CODES = {"ttft": "ttft.first-token", "tpot": "tpot.excl-first", "itl": "itl.per-chunk",
              "e2el": "e2el.request"}


def _campaign(root: Path, run_id: str = "camp", **kw):
    args = {**SMALL, **kw}
    truth = write_campaign(root / "data" / run_id, **args)
    return truth, load_run(run_id, root / "data", root / "report")


@pytest.fixture(scope="module")
def vllm_campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("campaign")
    truth, run = _campaign(root, failures=1)
    notes: list[str] = []
    return truth, load_points(run, notes), notes


def test_every_point_is_matched_to_its_engine_load_and_repeat(vllm_campaign):
    truth, entries, notes = vllm_campaign
    assert notes == []
    assert len(entries) == 2 * 3 * 2
    assert [(e.engine, e.load.id, e.repeat) for e in entries] == [
        (engine, load, r) for engine in ("alpha", "beta") for load in ("c1", "c4", "c16")
        for r in (1, 2)]
    for e in entries:
        t = truth.points[(e.engine, e.load.id, e.repeat)]
        assert (e.workload, e.variant, e.load.max_concurrency) == ("1k", "", t.concurrency)
        assert e.file.rel.endswith(t.files["vllm"]) and e.point.where == t.where["vllm"]
        assert e.point.client == "vllm-bench-serve"


def test_each_points_figures_rows_and_definitions_equal_the_truth(vllm_campaign):
    truth, entries, _ = vllm_campaign
    for e in entries:
        t = truth.points[(e.engine, e.load.id, e.repeat)]
        assert e.point.fields == t.fields["vllm"], e.id
        assert e.point.requests == t.rows("vllm"), e.id
        assert e.point.definitions == VLLM_CODES == t.definitions("vllm")
        assert (e.point.fields["completed"], e.point.fields["failed"]) == (19, 1)
        assert sum(1 for r in e.point.requests if r["error"]) == 1


def test_the_figures_are_vllms_statistics_of_the_true_requests(vllm_campaign):
    """Recomputed here from the truth's arrays, the way vLLM's calculate_metrics does."""
    truth, entries, _ = vllm_campaign
    for e in entries:
        q = truth.points[(e.engine, e.load.id, e.repeat)].requests
        ok = [i for i in range(q.n) if not q.errors[i]]
        ttfts = [float(q.ttfts[i]) for i in ok]
        lats = [float(q.latencies[i]) for i in ok]
        outs = [int(q.output_lens[i]) for i in ok]
        itls = q.itls()
        pooled = [x for i in ok for x in itls[i]]
        tpots = [(la - tt) / (n - 1) for la, tt, n in zip(lats, ttfts, outs, strict=True)]
        f = e.point.fields
        assert f["completed"] == len(ok) and f["failed"] == q.n - len(ok)
        assert f["median_ttft_ms"] == np.median(ttfts) * 1000
        assert f["p99_ttft_ms"] == np.percentile(ttfts, 99) * 1000
        assert f["p99_itl_ms"] == np.percentile(pooled, 99) * 1000
        assert f["mean_itl_ms"] == np.mean(pooled) * 1000
        assert f["mean_tpot_ms"] == np.mean(tpots) * 1000
        assert f["median_e2el_ms"] == np.median(lats) * 1000
        assert f["output_throughput"] == sum(outs) / q.duration
        assert f["total_input_tokens"] == int(q.input_lens[ok].sum())
        # the file's per-request lists are the truth's arrays, to the bit
        raw = json.loads(e.file.path.read_text())
        assert raw["ttfts"] == q.ttfts.tolist() and raw["itls"] == itls
        assert raw["latencies"] == q.latencies.tolist()


def test_the_latency_model_shows_in_the_figures(vllm_campaign):
    truth, _, _ = vllm_campaign
    f = {k: t.fields["vllm"] for k, t in truth.points.items()}
    for engine in ("alpha", "beta"):
        # ITL and TTFT grow with concurrency; repeats differ
        assert f[(engine, "c1", 1)]["median_itl_ms"] < f[(engine, "c16", 1)]["median_itl_ms"]
        assert f[(engine, "c1", 1)]["p99_ttft_ms"] < f[(engine, "c16", 1)]["p99_ttft_ms"]
        assert f[(engine, "c4", 1)]["mean_ttft_ms"] != f[(engine, "c4", 2)]["mean_ttft_ms"]
    # the two engines differ: alpha decodes faster alone, beta prefills faster
    assert f[("alpha", "c1", 1)]["median_itl_ms"] < f[("beta", "c1", 1)]["median_itl_ms"]
    assert f[("alpha", "c1", 1)]["median_ttft_ms"] > f[("beta", "c1", 1)]["median_ttft_ms"]


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_same_arguments_write_byte_identical_files(tmp_path):
    args = {**SMALL, "requests": 5, "clients": ("vllm", "guidellm", "aiperf")}
    write_campaign(tmp_path / "a" / "camp", **args)
    write_campaign(tmp_path / "b" / "camp", **args)
    write_campaign(tmp_path / "c" / "camp", **args, seed=1)
    assert _digest(tmp_path / "a" / "camp") == _digest(tmp_path / "b" / "camp")
    assert _digest(tmp_path / "a" / "camp") != _digest(tmp_path / "c" / "camp")
    with pytest.raises(FileExistsError):
        write_campaign(tmp_path / "a" / "camp", **args)


def test_repeats_must_be_declared(tmp_path):
    truth, _ = _campaign(tmp_path)
    path = truth.out / "run.yaml"
    doc = yaml.safe_load(path.read_text())
    del doc["workloads"][0]["repeats"]
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    with pytest.raises(ReportError) as err:
        load_points(load_run("camp", tmp_path / "data", tmp_path / "report"))
    assert err.value.message.startswith("two results for engine")
    assert str(err.value).startswith("two results for engine 'alpha', workload '1k' and load c1")


def test_guidellm_and_aiperf_files_parse_to_the_same_loads(tmp_path, vllm_campaign):
    vtruth, ventries, _ = vllm_campaign
    truth, run = _campaign(tmp_path, clients=("guidellm", "aiperf"), failures=1)
    notes: list[str] = []
    entries = load_points(run, notes)
    assert notes == []
    assert {(e.engine, e.load.id) for e in entries} == \
        {(e.engine, e.load.id) for e in ventries}
    # each client's results of a point are a variant of their own, with the run's repeats
    assert len(entries) == 2 * 3 * 2 * 2
    assert sorted({e.variant for e in entries}) == ["client-aiperf", "client-guidellm"]
    assert max(e.repeat for e in entries) == 2
    assert entries[0].id == "alpha.1k.c1.client-aiperf.r1"
    for e in entries:
        client = e.variant.removeprefix("client-")
        t = truth.points[(e.engine, e.load.id, e.repeat)]
        assert e.point.client == client
        assert e.file.rel.endswith(t.files[client]) and e.point.where == t.where[client]
        assert e.point.fields == t.fields[client], e.id
        assert e.point.requests == t.rows(client), e.id
        assert e.point.definitions == t.definitions(client)
        if client == "aiperf":
            assert e.also and e.also[0].endswith("profile_export.jsonl")
        # the same simulated requests as the vLLM campaign: the definitions they share agree
        v = vtruth.points[(t.engine, t.load, t.repeat)].fields["vllm"]
        assert e.point.fields["mean_ttft_ms"] == pytest.approx(v["mean_ttft_ms"], rel=1e-12)
        assert e.point.fields["completed"] == v["completed"]
        if client == "aiperf":           # AIPerf's ITL is vLLM's TPOT (first token excluded)
            assert e.point.fields["mean_itl_ms"] == pytest.approx(v["mean_tpot_ms"],
                                                                 rel=1e-12)
    assert {e.point.definitions["tpot"] for e in entries if "tpot" in e.point.definitions} \
        == {"tpot.guidellm"}
    assert {e.point.definitions["itl"] for e in entries} == {"itl.guidellm", "itl.excl-first"}


def test_read_points_reads_each_file_alone(tmp_path):
    truth = write_campaign(tmp_path / "camp", **{**SMALL, "requests": 8},
                           clients=("vllm", "guidellm", "aiperf"))
    t = truth.points[("beta", "c4", 2)]
    for client in ("vllm", "guidellm", "aiperf"):
        path = truth.out / t.files[client]
        points = read_points(path.read_bytes(), t.files[client])
        mine = [p for p in points if p.where == t.where[client]]
        assert len(mine) == 1 and mine[0].fields == t.fields[client]
    assert len(read_points((truth.out / t.files["guidellm"]).read_bytes(), "b.json")) == 3
