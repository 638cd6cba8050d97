import re

import pytest
from markupsafe import Markup

from benchreport.core.i18n import Name, format_value, josa, load_catalogue, sentence


def test_both_languages_define_the_same_keys_and_placeholders(project):
    ko = load_catalogue(project / "templates" / "labels", "ko")
    en = load_catalogue(project / "templates" / "labels", "en")
    assert set(ko) == set(en)
    field = re.compile(r"\{(\w+)")
    for key in en:
        assert set(field.findall(ko[key])) == set(field.findall(en[key])), key


def test_catalogues_hold_no_numbers_of_their_own(project):
    for lang in ("ko", "en"):
        for key, text in load_catalogue(project / "templates" / "labels", lang).items():
            # a name or a flag's literal value, not a figure: SHA-256, E2E, SGLang's topk=1
            plain = re.sub(r"\{[^}]*\}", "", text).replace("SHA-256", "SHA").replace(
                "E2E", "E").replace("topk=1", "topk")
            assert not re.search(r"\d", plain), (lang, key, text)


def test_unknown_language_is_refused(project):
    with pytest.raises(Exception, match="must be one of"):
        load_catalogue(project / "templates" / "labels", "kr")


@pytest.mark.parametrize("word, pair, expected", [
    ("vLLM", "이/가", "이"), ("SGLang", "은/는", "은"), ("TGI", "이/가", "가"),
    ("엔진", "을/를", "을"), ("서버", "을/를", "를"), ("64K", "이/가", "가"),
    ("vLLM", "으로/로", "으로"), ("서울", "으로/로", "로"), ("Tool", "으로/로", "로"),
    ("Dynamo", "과/와", "와"),
])
def test_korean_particles_follow_the_last_sound(word, pair, expected):
    assert josa(word, pair) == expected


def test_sentence_escapes_values_but_keeps_links():
    link = Name("vLLM", Markup('<a href="#x">vLLM</a>'))
    out = sentence("{e:이/가} {v} 빨랐습니다", e=link, v="<script>")
    assert out == '<a href="#x">vLLM</a>이 &lt;script&gt; 빨랐습니다'


@pytest.mark.parametrize("value, unit, lang, decimals, text", [
    (100.5, "s", "en", 1, "100.5 s"), (100.5, "s", "ko", 1, "100.5초"),
    (1.5005, "x", "en", 2, "1.50×"), (1.5005, "x", "ko", 2, "1.50배"),
    (65536, "tokens", "en", 0, "65,536 tokens"), (65536, "tokens", "ko", 0, "65,536 토큰"),
    (10, "req", "ko", 0, "10개"),
])
def test_numbers_are_formatted_per_language(value, unit, lang, decimals, text):
    assert format_value(value, unit, lang, decimals) == text
