"""A user's own benchmark client, declared once in run.yaml (``client:``): its files read by
that mapping, its mistakes refused in one line, and ``init --client`` drafting the run.

The files are real: the results of bench.py and prefill.py of sostrowsk/dgx-spark-local-llm
(MIT), as the reference run data/2026-08-dgx-spark-laguna/ holds them (credited in its
source/SOURCES.md and run.yaml); every expected value below is read off the files by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchreport.core.errors import ConfigError, ParseError
from benchreport.core.records import declared_text
from benchreport.core.runmeta import parse_client_yaml, parse_run_yaml
from benchreport.ingest.clients import read_declared
from benchreport.pipeline.init import init_run

HERE = Path(__file__).parent / "fixtures" / "declared" / "dgx-spark-laguna"
MAPPING = (HERE / "client.yaml").read_text(encoding="utf-8")
RUN = Path(__file__).resolve().parents[1] / "data" / "2026-08-dgx-spark-laguna"


def src(name: str) -> Path:
    """A file of the reference run: vLLM's are the author's "int4" files."""
    if name == "LICENSE":
        return RUN / "source" / name
    engine = "vllm" if "int4" in name else "sglang"
    return RUN / "raw" / engine / "dgx-spark-laguna-vllm-vs-sglang" / name


def _points(name: str, mapping: str = MAPPING):
    client = parse_client_yaml(mapping, "client.yaml")
    return read_declared(src(name).read_bytes(), name, client.entry(name))


def _at(points, workload: str, concurrency: int):
    [p] = [p for p in points if p.scenario["workload"] == workload
           and p.load["max_concurrency"] == concurrency]
    return p


def test_vllm_decode_record_is_read_into_the_contract():
    points = _points("ergebnisse_int4.json")
    assert len(points) == 12
    p = _at(points, "prosa_decode", 4)
    assert p.client == "declared" and p.engine == "vllm"
    assert p.model == "poolside/Laguna-S-2.1-INT4"
    assert (p.where, p.line) == ("laeufe[2]", 28)       # the record's "{" is on line 28
    assert p.fields["completed"] == 12 and p.fields["failed"] == 0
    assert p.fields["median_ttft_ms"] == 513.0
    assert p.fields["median_tpot_ms"] == pytest.approx(1000 / 13.724)
    assert p.fields["output_throughput"] == 52.81
    assert p.load == {"kind": "concurrency", "max_concurrency": 4, "request_rate": None,
                      "arrival": None}
    assert p.scenario["input_tokens"] == 73 and p.scenario["output_tokens"] == 256
    assert p.params == {"repeats": 3, "warmup_requests": 1}
    assert p.sources["median_ttft_ms"] == "laeufe[2].ttft_s_median"
    assert p.sources["failed"] == "laeufe[2].fehler"
    assert declared_text(p.definitions["ttft"]).startswith("time from sending the request")
    assert set(p.definitions) == {"ttft", "tpot", "output_throughput"}


def test_sglang_decode_record_and_the_same_definitions():
    vllm, sglang = _points("ergebnisse_int4.json"), _points("ergebnisse_sglang.json")
    p = _at(sglang, "prosa_decode", 4)
    assert p.engine == "sglang"
    assert p.fields["median_ttft_ms"] == 193.0
    assert p.fields["output_throughput"] == 45.27
    # one mapping, one definition: the two engines compare on every metric
    assert p.definitions == _at(vllm, "prosa_decode", 4).definitions


def test_cold_prefill_stage_has_its_input_throughput():
    points = _points("prefill_int4.json")
    p = _at(points, "cold_prefill_8k", 1)
    assert p.engine == "vllm"
    assert p.scenario["input_tokens"] == 18336
    assert p.fields["median_ttft_ms"] == 8174.0
    assert p.fields["input_throughput"] == 2243
    assert p.fields["completed"] == 3 and "failed" not in p.fields
    # the prefill scripts define TTFT differently (a cold prefix): never the same code
    assert p.definitions["ttft"] != _at(_points("ergebnisse_int4.json"), "prefill_8k",
                                        1).definitions["ttft"]


def _edit(old: str, new: str) -> str:
    assert old in MAPPING
    return MAPPING.replace(old, new, 1)


@pytest.mark.parametrize("old, new, message", [
    ("metric: output_throughput", "metric: tokens",
     r"client.yaml:\d+: client.files\[0\].metrics.gesamt_tps.metric 'tokens' is not known"),
    ("        unit: s\n", "        unit: min\n",
     r"client.yaml:\d+: client.files\[0\].metrics.ttft_s_median.unit 'min' is not one of "
     r"s, ms for ttft"),
    ("metric: tpot\n        statistic: median", "metric: tpot\n        statistic: mean",
     r"client.files\[0\].metrics.decode_tps_median: the mean of tokens per second cannot be "
     r"turned into a TPOT in ms"),
    ("    repeats: 3", "    repeat: 3", r"unknown key client.files\[0\].repeat"),
    ("metric: ttft\n        statistic: median", "metric: ttft\n        statistic: p95",
     r"statistic 'p95' is not one of mean, median, p90, p99, std"),
])
def test_a_bad_mapping_is_one_line_naming_the_field(old, new, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_client_yaml(_edit(old, new), "client.yaml")
    assert "\n" not in info.value.one_line()
    assert info.value.line is not None


def _bad_record(tmp_path: Path, key: str, value) -> Path:
    import json

    doc = json.loads((src("ergebnisse_int4.json")).read_text(encoding="utf-8"))
    if value is None:
        del doc["laeufe"][3][key]
    else:
        doc["laeufe"][3][key] = value
    path = tmp_path / "ergebnisse_int4.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize("key, value, message", [
    ("ttft_s_median", "x", "ergebnisse_int4.json: laeufe[3]: 'ttft_s_median' is \"x\", "
                           "expected a number"),
    ("gesamt_tps", None, "ergebnisse_int4.json: laeufe[3]: no 'gesamt_tps' (run.yaml's "
                         "client maps it)"),
    ("decode_tps_median", 0, "ergebnisse_int4.json: laeufe[3]: 'decode_tps_median' is 0 "
                             "tok/s, which gives no TPOT"),
    ("szenario", "code.decode", "ergebnisse_int4.json: laeufe[3]: the workload "
                                "'code.decode' cannot be a workload id"),
])
def test_a_bad_record_is_one_line_naming_file_record_and_key(tmp_path, key, value, message):
    path = _bad_record(tmp_path, key, value)
    client = parse_client_yaml(MAPPING, "client.yaml")
    with pytest.raises(ParseError) as info:
        read_declared(path.read_bytes(), "ergebnisse_int4.json", client.entry(path.name))
    # the line of the record laeufe[3] in the file as rewritten (json.dumps, indent 2)
    starts = [n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(),
                                          start=1) if text == "    {"]
    line = starts[3]
    file, rest = message.split(": ", 1)
    assert info.value.one_line().startswith(f"{file}:{line}: {rest}")
    assert "\n" not in info.value.one_line()


def test_run_yaml_carries_the_client_block():
    body = "\n".join("  " + line for line in MAPPING.splitlines())
    meta = parse_run_yaml(
        "schema: 1\ntitle: {ko: t, en: t}\ndate: 2026-08-03\nhardware: {gpus: 1}\n"
        "model: {name: m}\nengines:\n  - {id: vllm, name: vLLM}\n"
        "workloads:\n  - {id: prosa_decode, label: p, input_tokens: 73, concurrency: [1, 2, 4]}\n"
        f"client:\n{body}\n", "run.yaml")
    assert meta.client.name.startswith("bench.py and prefill.py")
    assert meta.client.entry("prefill_sglang.json").records == "stufen"
    assert meta.client.entry("notes.json") is None


def test_init_with_the_client_places_files_and_drafts_workloads(tmp_path):
    folder = tmp_path / "given"
    folder.mkdir()
    for name in ("ergebnisse_int4.json", "ergebnisse_sglang.json", "prefill_int4.json",
                 "prefill_sglang.json", "LICENSE"):
        shutil.copyfile(src(name), folder / name)
    (tmp_path / "client.yaml").write_text(MAPPING, encoding="utf-8")
    said: list[str] = []
    init_run("laguna", [folder], tmp_path / "data", out=said.append, dry_run=True,
             client=tmp_path / "client.yaml")
    text = "\n".join(said)
    assert "given/ergebnisse_int4.json → vllm, poolside/Laguna-S-2.1-INT4, prosa_decode, " \
           "c4, repeat 1: used" in text
    assert "given/ergebnisse_sglang.json → sglang, poolside/Laguna-S-2.1-INT4, code_decode" \
           in text
    assert "given/prefill_int4.json → vllm, poolside/Laguna-S-2.1-INT4, cold_prefill_8k, c1" \
           in text
    drafted = "\n".join(line[2:] for line in text.split("run.yaml would be:\n", 1)[1]
                        .splitlines())
    meta = parse_run_yaml(drafted, "run.yaml")            # it parses back
    wls = {w.id: w for w in meta.workloads}
    assert set(wls) == {"prosa_decode", "code_decode", "prefill_8k", "prefill_8k_wiederholt",
                        "cold_prefill_2k", "cold_prefill_8k"}
    assert [x.max_concurrency for x in wls["prosa_decode"].loads] == [1, 2, 4]
    assert (wls["prosa_decode"].input_tokens, wls["prosa_decode"].output_tokens) == (73, 256)
    assert wls["cold_prefill_2k"].input_tokens == 4720
    assert meta.client is not None and meta.client.name == parse_client_yaml(
        MAPPING, "c").name
    assert not (tmp_path / "data").exists()                # a dry run writes nothing


def test_init_without_the_client_still_skips_the_files(tmp_path):
    folder = tmp_path / "given"
    folder.mkdir()
    shutil.copyfile(src("ergebnisse_int4.json"), folder / "ergebnisse_int4.json")
    said: list[str] = []
    with pytest.raises(Exception, match="no benchmark result"):
        init_run("laguna", [folder], tmp_path / "data", out=said.append, dry_run=True)
    assert any("JSON, not a result of a known client" in line for line in said)


@pytest.mark.parametrize("old, new, message", [
    ("    ok: 3 ", "    ok: 2.5 ", r"client.files\[1\].ok must be a key of the records or a "
                                   r"whole number ≥ 0, got 2.5"),
    ("load: {concurrency: 1}", "load: {concurrency: 0}",
     r"client.files\[1\].load.concurrency must be an integer > 0, got 0"),
    ("        definition: \"prompt tokens ÷ the stage's median TTFT\"\n", "",
     r"client.files\[1\].metrics.prefill_tps: missing key 'definition'"),
    ("metric: input_throughput", "metric: input_throughput\n        statistic: median",
     r"statistic 'median' is not one of none: input_throughput is one figure per record"),
])
def test_more_bad_mappings(old, new, message):
    with pytest.raises(ConfigError, match=message):
        parse_client_yaml(_edit(old, new), "client.yaml")


def test_an_engine_value_the_mapping_does_not_know_is_refused(tmp_path):
    text = (src("prefill_int4.json")).read_text(encoding="utf-8").replace(
        '"engine": "int4"', '"engine": "fp8"')
    client = parse_client_yaml(MAPPING, "client.yaml")
    with pytest.raises(ParseError, match=r"prefill_int4.json: engine: \"fp8\" is none of the "
                                         r"values run.yaml's client maps to an engine "
                                         r"\(int4, sglang\)"):
        read_declared(text.encode(), "prefill_int4.json", client.entry("prefill_int4.json"))


def test_records_that_are_not_a_list_are_refused():
    client = parse_client_yaml(MAPPING, "client.yaml")
    with pytest.raises(ParseError, match=r"x.json: no 'laeufe'"):
        read_declared(b'{"engine": "int4", "modell": "m"}', "x.json",
                      client.entry("ergebnisse_x.json"))


def test_the_report_names_the_declared_client_and_its_definitions(project):
    from types import SimpleNamespace

    from benchreport.core.i18n import load_catalogue
    from benchreport.publish.sections import client_name, definition_text, metric_name

    meta = SimpleNamespace(client=parse_client_yaml(MAPPING, "client.yaml"))
    code = _at(_points("ergebnisse_int4.json"), "prosa_decode", 4).definitions["tpot"]
    for lang, mark in (("en", "declared in run.yaml"), ("ko", "run.yaml에 선언한")):
        w = SimpleNamespace(t=load_catalogue(project / "templates" / "labels", lang),
                            run=SimpleNamespace(meta=meta))
        named = client_name(w, "declared")
        assert named.startswith("bench.py and prefill.py") and mark in named
        assert client_name(w, "declared", marked=False) == meta.client.name
        assert client_name(w, "vllm-bench-serve") == "vllm-bench-serve"
        text = definition_text(w, code)
        assert text.startswith("per request, output tokens ÷ (end-to-end time − TTFT)")
        assert mark in text
        assert metric_name(w, "tpot", code) == w.t["metric.tpot_declared"]
        assert definition_text(w, "tpot.excl-first") == w.t["definition.tpot_excl_first"]


def _run(tmp_path: Path, workloads: str) -> None:
    run = tmp_path / "data" / "laguna"
    (run / "raw" / "vllm").mkdir(parents=True)
    shutil.copyfile(src("ergebnisse_int4.json"), run / "raw" / "vllm" / "ergebnisse_int4.json")
    body = "\n".join("  " + line for line in MAPPING.splitlines())
    (run / "run.yaml").write_text(
        "schema: 1\ntitle: {ko: t, en: t}\ndate: 2026-08-03\nhardware: {gpus: 1}\n"
        "model: {name: m}\nengines:\n  - {id: vllm, name: vLLM}\n"
        f"workloads:\n{workloads}client:\n{body}\n", encoding="utf-8")


def test_a_run_with_the_client_block_ingests_the_files_under_raw(tmp_path):
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.points import load_points

    ids = ("prosa_decode", "code_decode", "prefill_8k", "prefill_8k_wiederholt")
    lengths = {"prosa_decode": 73, "code_decode": 67, "prefill_8k": 16913,
               "prefill_8k_wiederholt": 16909}
    _run(tmp_path, "".join(f"  - {{id: {w}, label: {w}, input_tokens: {lengths[w]}, "
                           "concurrency: [1, 2, 4]}\n" for w in ids))
    entries = load_points(load_run("laguna", tmp_path / "data", tmp_path / "report"))
    assert len(entries) == 12
    e = next(e for e in entries if e.id == "vllm.prosa_decode.c4.r1")
    assert e.point.fields["median_ttft_ms"] == 513.0
    assert e.file.rel.endswith("raw/vllm/ergebnisse_int4.json")


def test_a_record_naming_an_undeclared_workload_is_one_line(tmp_path):
    from benchreport.core.runmeta import load_run
    from benchreport.ingest.points import load_points

    _run(tmp_path, "  - {id: prosa_decode, label: p, input_tokens: 73, "
                   "concurrency: [1, 2, 4]}\n")
    with pytest.raises(ParseError, match=r"ergebnisse_int4.json:39: laeufe\[3\]: the record "
                                         r"names workload 'code_decode', which run.yaml does "
                                         r"not declare \(workloads: prosa_decode\)"):
        load_points(load_run("laguna", tmp_path / "data", tmp_path / "report"))
