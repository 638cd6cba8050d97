"""A failed, interrupted or concurrent build never damages the last good report."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from benchreport.cli import main
from benchreport.pipeline import staging
from benchreport.publish import render

from .conftest import ROOT, builds_a_report, copy_run

# The builds in this process take the session's kept notebook and PDF workers
# (tests/conftest.py): a build that fails or is interrupted ends the ones it took, as a
# build of its own ends its own, and the next takes new ones. Where what becomes of a
# build's workers and kernels is checked (Ctrl-C, kill -9: builds on the command line), the
# test is marked fresh_workers, and no idle worker of the session is there while it runs.


def snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (the lock file aside)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
@builds_a_report
def built(tmp_path_factory) -> Path:
    """A workspace whose mini run has been built once (the 'previous good report')."""
    ws = tmp_path_factory.mktemp("built")
    (ws / "data").mkdir()
    copy_run(ws, "mini")
    assert main(args(ws, ROOT)) == 0
    return ws


@pytest.fixture
def ws(built, tmp_path) -> Path:
    dst = tmp_path / "ws"
    shutil.copytree(built, dst, symlinks=True)     # the results store's links stay links
    return dst


@pytest.fixture
def short_tmp() -> Path:
    """A temporary folder of the test's own, for a build's TMPDIR, with a short path: a
    kernel's sockets are files in it, and a socket's path may not pass 107 bytes (under
    pytest-xdist, tmp_path is long enough to pass it with the kernel folder's names)."""
    folder = Path(tempfile.mkdtemp(prefix="br-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def args(ws: Path, project: Path) -> list[str]:
    # no PDFs: what these tests follow (staging, swap, lock, errors) is the same without
    return ["build", "mini", "--data-root", str(ws / "data"), "--report-root",
            str(ws / "report"), "--project", str(project), "--no-pdf"]


def touch_input(ws: Path) -> None:
    """Change the run's inputs (a comment in run.yaml) so the next build has work to do."""
    with open(ws / "data/mini/run.yaml", "a") as fh:
        fh.write("# edited\n")


def stale_render(ws: Path) -> None:
    """Make the next build render and export again, staged as any build is, without running
    the notebooks: the render step's key in the report's stamp no longer matches (as after
    a change of templates). For a fault at the render or the export, the notebooks' seconds
    are beside the point. Call it before taking the report's snapshot: the stamp is in it."""
    stamp = ws / "report/mini/.build-keys.json"
    keys = json.loads(stamp.read_text())
    keys["render"] = "stale"
    stamp.write_text(json.dumps(keys))


def test_a_failing_notebook_leaves_the_previous_report_and_keeps_its_copy(ws, project, capsys):
    before = snapshot(ws / "report/mini")
    (ws / "data/mini/raw/sglang/sglang_0115_3.jsonl").write_text('{"duration": 3}\n')
    assert main(args(ws, project)) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    kept = ws / "report/mini.failed/05-ingest.ipynb"
    assert err == ("error: data/mini/raw/sglang/sglang_0115_3.jsonl:1: JSON is not a benchmark "
                   "result (expected the output of vllm bench serve, sglang.bench_serving, "
                   "GuideLLM, AIPerf, GenAI-Perf, genai-bench or llmperf, e.g. the keys "
                   "'duration', 'completed') "
                   f"(in 05-ingest.ipynb, cell 3); the failing notebook, with the error at its "
                   f"top: {kept}")
    assert snapshot(ws / "report/mini") == before
    assert not (ws / "report/.staging/mini").exists()
    cells = json.loads(kept.read_text())["cells"]
    assert "papermill-error-cell-tag" in cells[0]["metadata"]["tags"]
    assert "JSON is not a benchmark result" in "".join(cells[1]["source"])
    # once the input is fixed, the next build succeeds and the failed copy goes away
    shutil.copy(Path(__file__).parent / "fixtures/runs/mini/raw/sglang/sglang_0115_3.jsonl",
                ws / "data/mini/raw/sglang/")
    assert main(args(ws, project)) == 0
    assert not kept.parent.exists()


def test_a_full_disk_while_rendering_leaves_the_previous_report(ws, project, capsys,
                                                                 monkeypatch):
    stale_render(ws)
    before = snapshot(ws / "report/mini")

    def fill_the_disk(run, registry, project, pdf=True, base_url=None):      # noqa: ARG001
        path = run.paths.html("ko")
        path.write_bytes(b"<!doctype html><html><body><p>half a rep")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(render, "render_report", fill_the_disk)
    assert main(args(ws, project)) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"error: {ws}/report/mini/: no space left on the disk (No space left on "
                   "device); nothing was replaced; free some space and build again")
    assert snapshot(ws / "report/mini") == before
    assert not (ws / "report/.staging/mini").exists()


def test_a_full_disk_while_staging_is_one_short_line(ws, project, capsys, monkeypatch):
    """Copying the previous report into the staging folder used to go on past a full disk
    and end with one error holding a repr of every file that failed (25 KB)."""
    before = snapshot(ws / "report/mini")
    touch_input(ws)
    copy2 = shutil.copy2
    copied = []

    def copy_until_full(src, dst, **kw):
        if len(copied) >= 3:
            raise OSError(errno.ENOSPC, "No space left on device", dst)
        copied.append(dst)
        return copy2(src, dst, **kw)

    monkeypatch.setattr(shutil, "copy2", copy_until_full)
    assert main(args(ws, project)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"error: {ws}/report/mini/: no space left on the disk (No space left "
                       "on device); nothing was replaced; free some space and build again")
    assert len(copied) == 3
    assert snapshot(ws / "report/mini") == before
    assert not (ws / "report/.staging/mini").exists()


def test_a_symlinked_report_folder_is_refused_in_one_line(ws, project, capsys, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(ws / "report/mini")
    (ws / "report/mini").symlink_to(elsewhere)
    assert main(args(ws, project)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {ws}/report/mini/: a symbolic link (to {elsewhere}); refused: a "
                   "build replaces this folder by swapping in a new one beside it, which a "
                   f"link would move outside {ws}/report/; remove the link, or build elsewhere "
                   "with --report-root"]
    assert list(elsewhere.iterdir()) == []
    assert not (tmp_path / ".staging").exists() and not (ws / ".staging").exists()


@pytest.mark.fresh_workers
@pytest.mark.parametrize("phase, line_seen, wait, pdf", [
    ("notebooks", r"\[3/\d+\] notebook", 0.2, False),        # the topic notebooks run
    ("render", r"\[\d+/\d+\] render HTML and PDF", 1.5, True),    # the PDFs are made
])
def test_ctrl_c_leaves_the_previous_report(ws, project, phase, line_seen, wait, pdf, short_tmp):
    before = snapshot(ws / "report/mini")
    # the build's own temporary folder, so another process's kernels never count here
    tmp = short_tmp
    touch_input(ws)
    command = [sys.executable, "-m", "benchreport", *args(ws, project)]
    # As from a terminal: a test run started in the background of a non-interactive shell
    # ignores SIGINT, and a child would inherit that.
    proc = subprocess.Popen(command[:-1] if pdf else command,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "TMPDIR": str(tmp)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if re.match(line_seen, line):
            time.sleep(wait)
            os.killpg(proc.pid, signal.SIGINT)      # what Ctrl-C in a terminal sends
            break
    rest = []
    for line in proc.stderr:
        rest.append(line.rstrip("\n"))
        if line.startswith("error: interrupted"):
            # a second Ctrl-C while it exits still ends with status 130, not by the signal
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 130, "".join(seen) + "\n".join(rest)
    # one line says so; the workers (kernels, PDFs) are stopped without a traceback
    assert rest[-1] == f"error: interrupted; {ws}/report/mini/ was left as it was"
    assert [line for line in rest[:-1] if not re.fullmatch(r"\[\d+/\d+\] .+", line)] == []
    assert list(tmp.glob("benchreport-kernel-*")) == []
    assert snapshot(ws / "report/mini") == before
    assert not (ws / "report/.staging/mini").exists()


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid``, from /proc (children of children too)."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                kids = {int(k) for k in task.read_text().split()}
                todo += list(kids - found)
                found |= kids
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.fresh_workers
@pytest.mark.parametrize("phase, line_seen", [
    ("notebooks", r"\[3/\d+\] notebook"),
    ("render", r"\[\d+/\d+\] render HTML and PDF"),
])
def test_kill_9_leaves_no_worker_behind(ws, project, phase, line_seen, short_tmp):
    """Issue 33, finding 6: killed with kill -9 during the PDFs, a build left its two PDF
    workers and multiprocessing's resource tracker alive, holding its output pipe."""
    touch_input(ws)
    command = [sys.executable, "-m", "benchreport", *args(ws, project)]
    proc = subprocess.Popen(command[:-1] if phase == "render" else command,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "TMPDIR": str(short_tmp)})
    workers: set[int] = set()
    for line in proc.stderr:
        if re.match(line_seen, line):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and len(workers) < 2:
                workers |= _descendants(proc.pid)
                time.sleep(0.2)
            os.kill(proc.pid, signal.SIGKILL)
            break
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert len(workers) >= 2, workers
    done = threading.Event()
    threading.Thread(target=lambda: (proc.stderr.read(), done.set()), daemon=True).start()
    assert done.wait(30), "a worker still holds the build's output"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and [p for p in workers if _alive(p)]:
        time.sleep(0.2)
    assert [p for p in workers if _alive(p)] == []


def test_a_second_build_waits_for_the_first(ws, project, capsys):
    lines: list[str] = []
    held, release = threading.Event(), threading.Event()

    def hold():
        with staging.lock(ws / "report/mini", lines.append):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    timer = threading.Timer(1.0, release.set)
    timer.start()
    start = time.perf_counter()
    assert main(args(ws, project)) == 0
    waited = time.perf_counter() - start
    holder.join()
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"waiting for another build of mini (pid {os.getpid()}) to finish ..."
    assert waited >= 0.9
    assert "render: inputs unchanged, skipped" in err


def test_a_successful_build_swaps_the_new_report_in(ws, project):
    before = snapshot(ws / "report/mini")
    (ws / "data/mini/run.yaml").write_text((ws / "data/mini/run.yaml").read_text().replace(
        "A tiny test run", "A tiny test run, renamed"))
    assert main(args(ws, project)) == 0
    after = snapshot(ws / "report/mini")
    assert after.keys() == before.keys()
    assert after["report.en.html"] != before["report.en.html"]
    assert "A tiny test run, renamed" in (ws / "report/mini/report.en.html").read_text()
    assert sorted(p.name for p in (ws / "report/.staging").iterdir()) == ["mini.lock"]


def test_a_warning_is_printed_and_listed_in_the_report(ws, project, capsys):
    jsonl = ws / "data/mini/raw/sglang/sglang_0115_3.jsonl"
    good = jsonl.read_text().splitlines()
    jsonl.write_text(good[0] + "\n" + '{"backend": "sglang", "dur' + "\n" + good[1] + "\n")
    assert main(args(ws, project)) == 0
    note = ("data/mini/raw/sglang/sglang_0115_3.jsonl:2: the JSON stops before the record is "
            "complete (after 26 characters; the file looks cut off); this line is skipped, the "
            "file's other records are used")
    assert f"warning: {note}" in capsys.readouterr().err.splitlines()
    page = (ws / "report/mini/report.en.html").read_text()
    page = re.sub(r"</?code>", "", page)             # a path in the note is set as code
    assert "What the ingest could not read" in page and note.replace("'", "&#39;") in page
    assert "읽는 중 남은 경고" in (ws / "report/mini/report.ko.html").read_text()


def test_a_notebook_that_raises_midway_leaves_the_previous_report(ws, project, tmp_path, capsys):
    """A bug, not an input problem: one of the notebooks that run side by side raises."""
    import nbformat

    proj = tmp_path / "project"                   # the project, with one notebook broken
    shutil.copytree(project / "notebooks", proj / "notebooks")
    shutil.copytree(project / "templates", proj / "templates")
    nb_path = proj / "notebooks/30-decode.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell('raise RuntimeError("boom")'))
    nbformat.write(nb, nb_path)
    before = snapshot(ws / "report/mini")
    assert main(args(ws, proj)) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    kept = ws / "report/mini.failed/30-decode.ipynb"
    assert err.startswith("error: 30-decode.ipynb: notebook failed in cell ")
    assert err.endswith(f": RuntimeError: boom; the failing notebook, with the error at its "
                        f"top: {kept}")
    assert snapshot(ws / "report/mini") == before
    assert kept.is_file() and not (ws / "report/.staging/mini").exists()


def test_a_draft_without_pdfs_leaves_none_and_the_next_full_build_renders_them(ws, project,
                                                                                 capsys):
    """`--no-pdf` builds the pages only; a PDF never sits beside pages it was not made from,
    and the next full build renders (only) again."""
    assert not list((ws / "report/mini").glob("*.pdf"))
    full = args(ws, project)[:-1]
    assert main(full) == 0
    err = capsys.readouterr().err
    assert "render HTML and PDF (ko, en)" in err and "notebooks and figures: inputs unchanged" \
        in err
    assert sorted(p.name for p in (ws / "report/mini").glob("*.pdf")) == ["report.en.pdf",
                                                                          "report.ko.pdf"]
    assert main(args(ws, project)) == 0
    assert "render HTML (ko, en)" in capsys.readouterr().err
    assert not list((ws / "report/mini").glob("*.pdf"))


def test_a_ctrl_c_dropped_in_a_weakref_callback_still_stops_the_build():
    """Python drops a KeyboardInterrupt raised inside a weakref callback (it prints
    "Exception ignored" and goes on). The build remembers the Ctrl-C and stops at the next
    step, and nothing of the dropped one is printed."""
    import weakref

    from benchreport.pipeline.run import Interrupts, Steps

    class Thing:
        pass

    def drop_a_ctrl_c() -> None:
        def callback(_ref):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(100_000):     # the handler runs here, inside the callback
                pass

        thing = Thing()
        ref = weakref.ref(thing, callback)   # noqa: F841 (kept alive until thing dies)
        del thing                            # the callback runs; its interrupt is dropped

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)   # as a terminal
    shown: list[BaseException] = []       # what Python would print as "Exception ignored"
    hook, sys.unraisablehook = sys.unraisablehook, lambda u: shown.append(u.exc_value)
    lines: list[str] = []
    try:
        with Interrupts() as interrupts:
            steps = Steps(total=2, out=lines.append, interrupts=interrupts)
            with pytest.raises(KeyboardInterrupt):
                steps.run("render", drop_a_ctrl_c)
                steps.run("export", lambda: None)
        drop_a_ctrl_c()          # outside a build: dropped and shown, as Python does
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = hook
    assert lines == ["[1/2] render ..."]
    assert [type(e) for e in shown] == [KeyboardInterrupt]
    assert signal.getsignal(signal.SIGINT) is previous


def store_state(store: Path) -> tuple[dict[str, str], list[tuple[str, str | None]]]:
    """The store as its readers and other tools see it: every file's sha256 (through links)
    and every path with its link text."""
    return snapshot(store), sorted((p.relative_to(store).as_posix(),
                                    os.readlink(p) if p.is_symlink() else None)
                                   for p in store.rglob("*"))


def store_leftovers(store: Path) -> list[str]:
    left = [p.name for p in (store / ".incoming").glob("*")]
    for run in (store / ".generations").glob("*"):
        keep = {"current", "lock", os.readlink(run / "current")}
        left += [p.name for p in run.iterdir() if p.name not in keep]
    return left


def test_ctrl_c_during_the_export_leaves_the_previous_report_and_store(
        ws, project, capsys, monkeypatch):
    """The export runs before the new report is swapped in (issue 33, finding 15), so an
    interrupt there leaves both as they were, and the next build exports."""
    from benchreport.pipeline import run as pipeline

    export_run = pipeline.store.export_run
    stale_render(ws)
    before = snapshot(ws / "report/mini")
    stored = store_state(ws / "report/_store")

    def interrupted(run, store=None):      # noqa: ARG001
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.store, "export_run", interrupted)
    assert main(args(ws, project)) == 130
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == f"error: interrupted; {ws}/report/mini/ was left as it was"
    assert snapshot(ws / "report/mini") == before
    assert store_state(ws / "report/_store") == stored
    monkeypatch.setattr(pipeline.store, "export_run", export_run)
    assert main(args(ws, project)) == 0
    assert "export to the results store done" in capsys.readouterr().err
    assert store_state(ws / "report/_store") != stored


class FullDisk:
    """A DuckDB connection whose ``fail_at``-th COPY fails as DuckDB's does on a full disk."""

    MESSAGE = ('IO Error: Async write failed for range [offset=0, size=27]: {"exception_type":'
               '"IO","exception_message":"Could not write file \\"x.parquet\\": No space left '
               'on device","errno":"28"}')

    def __init__(self, con, fail_at: int) -> None:
        self.con, self.fail_at, self.copies = con, fail_at, 0

    def execute(self, sql: str, *params):
        if sql.lstrip().upper().startswith("COPY"):
            self.copies += 1
            if self.copies == self.fail_at:
                import duckdb

                raise duckdb.IOException(self.MESSAGE)
        return self.con.execute(sql, *params)

    def __getattr__(self, name: str):
        return getattr(self.con, name)


@pytest.mark.parametrize("where", ["tables", "links"])
def test_a_full_disk_while_exporting_leaves_the_previous_report_and_store(
        ws, project, capsys, monkeypatch, where):
    """Issue 33, finding 15: a full disk at the store export gave a traceback after the
    report had been replaced. Now one line, and the report and the store as they were."""
    from benchreport.pipeline import run as pipeline

    store = ws / "report/_store"
    stale_render(ws)
    before = snapshot(ws / "report/mini")
    stored = store_state(store)
    if where == "tables":           # the fourth table's file cannot be written
        connect = pipeline.store.connect
        monkeypatch.setattr(pipeline.store, "connect", lambda: FullDisk(connect(), 4))
    else:                           # the tables are written; no room for a link
        export_run = pipeline.store.export_run

        def no_room(*args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device", str(args[1]))

        def export_on_a_full_disk(*args, **kwargs):
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(os, "symlink", no_room)
                return export_run(*args, **kwargs)

        monkeypatch.setattr(pipeline.store, "export_run", export_on_a_full_disk)
    assert main(args(ws, project)) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"error: {ws}/report/mini/: no space left on the disk (No space left on device); "
        "nothing was replaced; free some space and build again")
    assert snapshot(ws / "report/mini") == before
    assert store_state(store) == stored
    assert store_leftovers(store) == []
    assert not (ws / "report/.staging/mini").exists()


def test_an_error_a_library_raises_for_ctrl_c_is_an_interrupt():
    """DuckDB catches Ctrl-C during a query and raises its own "Query interrupted": with
    the interrupt seen, the step ends as an interrupt (exit 130, no traceback); the same
    error without Ctrl-C stays an error."""
    from benchreport.pipeline.run import Interrupts, Steps

    def interrupted_query():
        steps.interrupts.seen = True
        raise RuntimeError("Query interrupted")

    steps = Steps(1, out=lambda line: None, interrupts=Interrupts())
    with pytest.raises(KeyboardInterrupt):
        steps.run("render", interrupted_query)
    quiet = Steps(1, out=lambda line: None, interrupts=Interrupts())
    with pytest.raises(RuntimeError, match="Query interrupted"):
        quiet.run("render", lambda: (_ for _ in ()).throw(RuntimeError("Query interrupted")))
