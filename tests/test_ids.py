"""Figure ids have one source, core/ids.py: no module spells one as an f-string, and every id
the article looks up exists (or, when only probed, is well formed)."""

import re
from pathlib import Path

from benchreport.core import ids

from .sources import syntax_tree

SRC = Path(__file__).resolve().parent.parent / "src" / "benchreport"
LABELS = Path(__file__).resolve().parent.parent / "templates" / "labels"
FSTRING_ID = re.compile(r'f"(e2e|latency|throughput|decode|prefill|spec|model|events|setting|'
                        r'limits|claim|caveats|workload|stepmodel)\.')


def test_no_figure_id_is_an_fstring_outside_ids():
    found = [f"{p.relative_to(SRC)}:{n}: {line.strip()}"
             for p in sorted(SRC.rglob("*.py")) if p.name != "ids.py" or p.parent.name != "core"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if FSTRING_ID.search(line)]
    assert not found, "figure ids spelled outside core/ids.py:\n" + "\n".join(found)


def test_constructors_and_parsers_agree():
    assert ids.e2e("64k", "vllm", "duration") == "e2e.64k.vllm.duration"
    assert ids.e2e("64k", None, "gap.decode_share") == "e2e.64k.gap.decode_share"
    assert ids.latency("1k", "sglang", "ttft", "p99") == "latency.1k.sglang.ttft.p99"
    assert ids.prefill_request("200k", "vllm", 1, "decay_pct") == "prefill.200k.vllm.r1.decay_pct"
    assert ids.parse_crossover(ids.crossover("a", "b")) == ("a", "b", None)
    assert ids.parse_crossover(ids.crossover("a", "b", "rounded")) == ("a", "b", "rounded")
    assert ids.first_crossover(["model.decode.a.intercept_ms", "model.crossover.a.b.lengths",
                                "model.crossover.a.b"]) == ("a", "b")
    assert ids.parse_events(ids.events("64k", "vllm", "jit_compiles")) == \
        ("64k", "vllm", "jit_compiles")
    assert ids.parse_setting(ids.setting("chunked_prefill", "vllm")) == ("chunked_prefill",
                                                                          "vllm")
    assert ids.well_formed("limits.repeats") and not ids.well_formed("nope.x")


def _article_lookups(run) -> tuple[dict, dict[str, set[str]]]:
    """Build both languages' articles from the run's registry with a Writer that records every
    id it is asked for, by method."""
    from benchreport.core.files import read_json
    from benchreport.core.i18n import load_catalogue
    from benchreport.pipeline.explain import registry_of
    from benchreport.publish import narrative, narrative_base

    registry = dict(registry_of(run))
    seen: dict[str, set[str]] = {"fig": set(), "link": set(), "has": set()}

    class Recording(narrative_base.Writer):
        def fig(self, fig_id):
            seen["fig"].add(fig_id)
            return super().fig(fig_id)

        def link(self, fig_id, label):
            seen["link"].add(fig_id)
            return super().link(fig_id, label)

        def has(self, *fig_ids):
            seen["has"].update(fig_ids)
            return super().has(*fig_ids)

    caveats = read_json(run.paths.caveats_json) if run.paths.caveats_json.exists() else {}
    claims = read_json(run.paths.claims_json) if run.paths.claims_json.exists() else []
    original = narrative.Writer
    narrative.Writer = Recording
    try:
        for lang in ("ko", "en"):
            narrative.build_article(run, registry, lang, load_catalogue(LABELS, lang),
                                    narrative.Given(caveats=caveats, claims=claims))
    finally:
        narrative.Writer = original
    assert seen["fig"], "the article looked up no figure"
    return registry, seen


def _check(run) -> None:
    registry, seen = _article_lookups(run)
    missing = sorted((seen["fig"] | seen["link"]) - set(registry))
    assert not missing, f"ids the article cites but the registry lacks: {missing}"
    bad = sorted(i for i in seen["has"] if not ids.well_formed(i))
    assert not bad, f"ids the article probes that are not well formed: {bad}"


def test_every_id_the_reference_article_asks_for_exists(reference_build):
    _check(reference_build)


def test_every_id_the_mini_article_asks_for_exists(mini_build):
    _check(mini_build[0])


# Only core/ids.py takes an id apart. Publishing may still cut text that is not an id; each
# such call is listed here, by module and the call as written, with why it is not an id.
_CUTS = ("split", "rsplit", "startswith", "endswith", "partition", "rpartition")
_NOT_IDS = {
    ("claimtext.py", "text.split('.')"),            # repr of a number: its decimals
    ("claimtext.py", "key.split(' vs ', 1)"),       # claimcheck.check_similar's "a vs b" key
    ("compare.py", "group.partition('-')"),         # a diff group name (engine-<e>)
    ("render.py", "line.strip().partition('==')"),  # a pip freeze line: name==version
    ("render.py", "line.startswith('#')"),          # a pip freeze comment
    ("sections.py", "r['path'].split('/')"),        # a file path: its last two parts
    ("sections.py", "k.endswith('engine')"),        # a limit's placeholder name (engine, …)
    ("blog.py", "first[:DESCRIPTION_CHARS].rsplit(' ', 1)"),   # a sentence cut at a word
    ("citations.py", "src.url.startswith(('http://', 'https://'))"),  # an address, or not
    ("narrative.py", "text.endswith('.')"),         # a paragraph's full stop
    ("blog.py", "m[1].startswith('<code')"),        # a link's text already set as code
    # a catalogue key: the block of the generator's inputs in words, not a figure id
    ("narrative_base.py", "k.startswith('genword.')"),
}
# files exempt as a whole: codemarks walks a page's text (tags and text, for code marking
# and word wrapping) and reads it for flags, paths and identifiers by their shape; it takes
# no id of ours apart
_WHOLE_FILES: set[str] = {"codemarks.py"}


def _cuts(path: Path) -> list[tuple[str, int, str]]:
    import ast

    tree = syntax_tree(path)
    return [(path.name, node.lineno, ast.unparse(node)) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _CUTS]


def test_publish_takes_no_id_apart(tmp_path):
    """No module of publish/ splits an id or matches its prefix (``fid.split(".")``,
    ``k.startswith(prefix)``): it asks core/ids.py or reads the figure's context."""
    modules = sorted((SRC / "publish").glob("*.py"))
    assert len(modules) >= 10
    cuts = [c for p in modules if p.name not in _WHOLE_FILES for c in _cuts(p)]
    found = [f"publish/{name}:{line}: {call}" for name, line, call in cuts
             if (name, call) not in _NOT_IDS]
    assert not found, "ids taken apart outside core/ids.py:\n" + "\n".join(found)
    # every allowance is still needed (a stale one would let a new cut through unseen) ...
    assert {(name, call) for name, line, call in cuts} >= _NOT_IDS
    # ... and the scan sees a cut as publish/ would write one
    bad = tmp_path / "sections.py"
    bad.write_text("def f(fid, k):\n    return fid.split('.')[1], k.startswith(p)\n")
    assert sorted(c for _, _, c in _cuts(bad)) == ["fid.split('.')", "k.startswith(p)"]
