"""The drafted YAML of `benchreport init`: a dict dumped by the YAML library, read back as the
same data, with the comments for the user on the lines of the keys they concern."""

import doctest

import pytest
import yaml

from benchreport.pipeline import yamldraft
from benchreport.pipeline.yamldraft import Draft, Flow, Plain, Quoted, dump


def test_the_doctests_hold():
    result = doctest.testmod(yamldraft)
    assert result.failed == 0 and result.attempted > 0


def test_the_text_reads_back_as_the_data_the_comments_aside():
    data = {"schema": 1, "title": {"ko": Quoted("벤치마크 → 1"), "en": Quoted("yes")},
            "date": Plain("2026-01-02"), "model": Plain("TODO"),
            "workloads": [{"id": Quoted("in1-out2"), "concurrency": Flow([Plain("1"), Plain("8")]),
                           "request_rate": Plain("1.0e+26")},
                          {"id": Quoted("123"), "request_rate": Plain("inf")}],
            "sources": [{"what": Quoted('a "b"\\ c\td')}]}
    text = dump(data, notes={("workloads", 1, "id"): "TODO: a note"},
                heads={("title",): ["first", "second"]})
    assert yaml.safe_load(text) == {
        "schema": 1, "title": {"ko": "벤치마크 → 1", "en": "yes"},
        "date": yaml.safe_load("2026-01-02"), "model": "TODO",
        "workloads": [{"id": "in1-out2", "concurrency": [1, 8], "request_rate": 1e26},
                      {"id": "123", "request_rate": "inf"}],
        "sources": [{"what": 'a "b"\\ c\td'}]}
    assert text.startswith("schema: 1\n# first\n# second\ntitle:\n")
    assert '  - id: "123"   # TODO: a note\n    request_rate: inf\n' in text


def test_a_long_value_stays_on_one_line():
    text = dump({"what": Quoted("word " * 100)})
    assert text.count("\n") == 1


def test_a_comment_for_a_key_the_data_lacks_is_an_error():
    with pytest.raises(ValueError, match=r"\('workloads', 2, 'label'\)"):
        Draft({"workloads": [{"label": Quoted("x")}]},
              notes={("workloads", 2, "label"): "edit the label"}).text()
