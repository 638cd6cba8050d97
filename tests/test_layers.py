"""The pipeline flows one way: each stage imports only from the stages before it (and the
core); nothing after ingest imports the parsers or opens a raw file; publishing computes no
analysis."""

import ast
import functools
import sys
from pathlib import Path

from .sources import syntax_tree

SRC = Path(__file__).resolve().parent.parent / "src"
PKG = SRC / "benchreport"
ORDER = {"core": 0, "ingest": 1, "synth": 1, "analyses": 2, "publish": 3, "pipeline": 4}
READS_RAW = ("benchreport.ingest.parsers", "benchreport.ingest.io", "benchreport.ingest.run")


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, top_only: bool = False) -> set[str]:
    """benchreport modules the file imports: anywhere (module level or in functions), or
    with ``top_only`` only those that importing the module itself runs."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    tree = syntax_tree(path)     # parsed once a process: two graphs and other tests read it
    nodes = tree.body if top_only else ast.walk(tree)
    out = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("benchreport"):
                out.add(target)
                out.update(f"{target}.{a.name}" for a in node.names
                           if (PKG.parent / f"{target}.{a.name}".replace(".", "/")).with_suffix(
                               ".py").is_file()
                           or (PKG.parent / f"{target}.{a.name}".replace(".", "/")).is_dir())
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("benchreport"))
    return out


@functools.cache
def _graph(top_only: bool = False) -> dict[str, set[str]]:
    """Each module's benchreport imports (``_imports``), read when a test first asks: at
    import, collection parsed the whole package in each test process."""
    return {_module(p): _imports(p, top_only) for p in PKG.rglob("*.py")}


def _stage(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ORDER else None


def _closure(mod: str) -> set[str]:
    """What running ``mod`` can import: its own imports (in functions too), and what
    importing each of those loads in turn."""
    seen, todo = set(), list(_graph().get(mod, ()))
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")            # importing a.b.c runs a/__init__ and a/b/__init__
        todo += [".".join(parts[:i]) for i in range(2, len(parts))]
        todo += _graph(True).get(m, ())
    return seen - {mod}


def test_every_module_belongs_to_a_stage():
    loose = [m for m in _graph() if _stage(m) is None
             and m not in ("benchreport", "benchreport.cli", "benchreport.__main__")]
    assert not loose, loose


def test_a_stage_imports_only_from_the_stages_before_it():
    wrong = []
    for mod, deps in _graph().items():
        stage = _stage(mod)
        if stage is None:
            continue
        for dep in deps:
            other = _stage(dep)
            if other is not None and ORDER[other] > ORDER[stage]:
                wrong.append(f"{mod} imports {dep}")
    assert not wrong, wrong


def test_nothing_after_ingest_imports_the_parsers_or_the_raw_readers():
    wrong = []
    for mod in _graph():
        if _stage(mod) in ("analyses", "publish"):
            bad = sorted(d for d in _closure(mod) if d.startswith(READS_RAW))
            if bad:
                wrong.append(f"{mod} -> {bad}")
    assert not wrong, wrong


def test_publishing_computes_no_analysis():
    wrong = [f"{mod} imports {d}" for mod, deps in _graph().items() if _stage(mod) == "publish"
             for d in deps if _stage(d) == "analyses"]
    assert not wrong, wrong


def test_after_ingest_no_raw_file_is_opened(reference_build):
    """Every analysis and the article's assembly, run in this process on the saved derived
    tables, with every file open recorded: none is under data/<RUN>/ (raw files, run.yaml,
    claims.yaml and the scenario are read from ingest's tables and copies)."""
    from benchreport.analyses import notebook
    from benchreport.analyses.crossover import crossover_figures
    from benchreport.analyses.decode import decode_figures
    from benchreport.analyses.latency import latency_figures
    from benchreport.analyses.notebook import load_run
    from benchreport.analyses.prefill import prefill_figures
    from benchreport.analyses.spec import spec_figures
    from benchreport.core.tables import load_ingested
    from benchreport.pipeline.explain import explain, registry_of
    from benchreport.publish.render import excerpts, input_checksums

    run = load_run(reference_build.id, reference_build.paths.data.parent,
                   reference_build.paths.report.parent)
    data = str(run.paths.data.resolve()) + "/"
    opened: list[str] = []
    active = [True]

    def hook(event, args):
        if active[0] and event == "open" and isinstance(args[0], str | bytes | Path):
            name = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
            opened.append(str(Path(name).resolve()))

    sys.addaudithook(hook)
    run = load_run(run.id, run.paths.data.parent, run.paths.report.parent)
    ing = load_ingested(run)
    notebook.end_to_end(run, ing)
    latency_figures(run, ing)
    _, phases = decode_figures(run, ing)
    crossover_figures(run, phases)
    prefill_figures(run, ing)
    spec_figures(run, ing)
    notebook.caveats(run, ing)
    notebook.claim_check(run)
    registry = registry_of(run)
    excerpts(ing, registry)
    input_checksums(run)
    explain(run, "decode.64k.sglang.mean", out=lambda line: None)
    active[0] = False                    # the hook stays (audit hooks cannot be removed)
    touched = sorted({p for p in opened if p.startswith(data)})
    assert opened and not touched, touched
