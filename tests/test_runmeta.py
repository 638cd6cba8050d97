import datetime as dt
import re
from pathlib import Path

import pytest

from benchreport.core.errors import ConfigError, ReportError
from benchreport.core.runmeta import parse_run_yaml

FIXTURE = (Path(__file__).parent / "fixtures" / "runs" / "mini" / "run.yaml").read_text()


def test_fixture_run_yaml_is_read_into_typed_fields():
    meta = parse_run_yaml(FIXTURE, "run.yaml")
    assert meta.date == dt.date(2026, 1, 15)
    assert [e.id for e in meta.engines] == ["vllm", "sglang"]
    assert [(w.id, w.input_tokens, w.concurrency) for w in meta.workloads] == [
        ("1k", 1024, 3), ("4k", 4096, 3)]
    assert meta.title["ko"] == "작은 테스트 실행"


def test_reference_run_yaml_is_valid_and_says_it_is_a_reconstruction(project):
    text = (project / "data" / "2024-b300" / "run.yaml").read_text()
    meta = parse_run_yaml(text, "run.yaml")
    assert [w.input_tokens for w in meta.workloads] == [65536, 200000]
    assert "reconstruction" in meta.reconstruction["en"]
    assert "재구성" in meta.reconstruction["ko"]


@pytest.mark.parametrize("edit, message, line", [
    (lambda t: t.replace("date: 2026-01-15\n", ""), "missing key 'date'", 2),
    (lambda t: t.replace("concurrency: 3, num_prompts: 3}\n  - {id: 4k",
                         "concurrency: three, num_prompts: 3}\n  - {id: 4k"),
     r"workloads\[\].concurrency must be an integer > 0 \(or a list of them\), got 'three'", 12),
    (lambda t: t.replace("schema: 1", "schema: 2"), "schema 2 is not supported", 2),
    (lambda t: t + "engines: []\n", "duplicate key 'engines'", 14),
    (lambda t: t.replace("title: {", "title: [").replace('"A tiny test run"}', '"x"]'),
     "run.title must be a mapping, got a list", 3),
    (lambda t: "a: [1\n", "not valid YAML", 2),
])
def test_bad_run_yaml_names_the_line(edit, message, line):
    with pytest.raises(ConfigError, match=message) as info:
        parse_run_yaml(edit(FIXTURE), "data/x/run.yaml")
    assert info.value.line == line
    assert info.value.one_line().startswith(f"data/x/run.yaml:{line}: ")


@pytest.mark.parametrize("extra, message", [
    ("colour: blue\n", "run.yaml:14: unknown key run.colour; known keys: assumed, client, cost, "),
    ("window: {}\n", "run.yaml:14: unknown key run.window; did you mean 'windows'?"),
])
def test_an_unknown_key_is_an_error_that_suggests_the_known_one(extra, message):
    # A misspelt optional key would otherwise be ignored and change the report silently.
    with pytest.raises(ConfigError) as info:
        parse_run_yaml(FIXTURE + extra, "run.yaml")
    assert info.value.one_line().startswith(message)


def test_yaml_tags_that_build_objects_are_refused():
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_run_yaml(FIXTURE + "x: !!python/object/apply:os.system ['true']\n", "run.yaml")


@pytest.mark.parametrize("block, message", [
    ("slo: {percentile: 95, ttft_ms: 1}\n",
     "slo.percentile must be one of (50, 90, 99) (the statistics the clients report), got 95"),
    ("slo: {ttft_ms: -1}\n", "slo.ttft_ms must be a number > 0, got -1"),
    ("slo: {percentile: 99}\n", "slo sets no objective; give at least one of ttft_ms, tpot_ms, "
                                "itl_ms, e2el_ms"),
    ("cost: {engines: {tgi: 2}}\n", "cost.engines names unknown engine 'tgi'"),
    ("cost: {gpu_hour: 2}\n", "unknown key cost.gpu_hour; did you mean 'gpu_hour_usd'?"),
])
def test_slo_and_cost_blocks_are_checked(project, block, message):
    text = (project / "tests/fixtures/runs/mini/run.yaml").read_text()
    with pytest.raises(ReportError, match=re.escape(message)):
        parse_run_yaml(text + block, "run.yaml")


def test_slo_cost_and_gpus_are_read(project):
    text = (project / "tests/fixtures/runs/mini/run.yaml").read_text()
    meta = parse_run_yaml(text + "slo: {percentile: 90, tpot_ms: 50, ttft_ms: 2000}\n"
                          "cost: {gpu_hour_usd: 2.5, engines: {sglang: 3}}\n", "run.yaml")
    assert meta.slo.percentile == 90
    assert meta.slo.objectives == (("ttft", 2000.0), ("tpot", 50.0))    # in metric order
    assert meta.cost.price("sglang") == 3.0 and meta.cost.price("vllm") == 2.5
    assert meta.gpus == 2                     # hardware: {servers: 1, gpus: 2}
    assert parse_run_yaml(text, "run.yaml").slo is None


@pytest.mark.parametrize("slug, ok", [
    ("kimi-k3-vllm-sglang", True), ("Kimi-K3", False), ("a--b", False), ("a b", False),
    ("-a", False),
])
def test_a_slug_is_lower_case_words_joined_by_hyphens(slug, ok):
    if ok:
        assert parse_run_yaml(FIXTURE + f"slug: {slug}\n", "run.yaml").slug == slug
        return
    with pytest.raises(ConfigError, match="run.slug must be lower-case") as info:
        parse_run_yaml(FIXTURE + f"slug: '{slug}'\n", "run.yaml")
    assert info.value.line == 14


def test_the_blog_post_takes_run_yamls_slug_else_the_run_id(project):
    import dataclasses

    from benchreport.ingest.io import load_run
    from benchreport.publish.render import blog_post

    run = load_run("2024-b300", project / "data", project / "report")
    assert blog_post(run).slug == "kimi-k3-8xb300-vllm-sglang-rederived"
    plain = dataclasses.replace(run, meta=dataclasses.replace(run.meta, slug=None))
    assert blog_post(plain).slug == "2024-b300"
