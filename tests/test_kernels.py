"""A kernel runs several notebooks in turn, and each starts as it would in a new kernel."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from benchreport.pipeline.kernels import Kernel
from benchreport.pipeline.run import plan_notebooks

# each starts notebook kernels (seconds a test), and checks what becomes of them
pytestmark = [pytest.mark.slow, pytest.mark.fresh_workers]

# A module that warns from a fixed place: Python shows such a warning once per place, and
# remembers that in the module, which outlives a notebook in a reused kernel.
WARNER = "import warnings\n\ndef warn():\n    warnings.warn('said once per place')\n"

FIRST = ["leftover = 1",
         "import warner; warner.warn()",
         "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
         "plt.figure(); print('figures', plt.get_fignums())\nimport os; os.chdir('/')"]
SECOND = ["import os; print('leftover' in dir(), os.getcwd() == {start!r})",
          "import warner; warner.warn()",
          "import matplotlib.pyplot as plt; print('figures', plt.get_fignums())"]


def _notebook(folder: Path, name: str, sources: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("notebook = None")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *map(nbformat.v4.new_code_cell, sources)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = folder / name
    nbformat.write(nb, path)
    return path


def _cells(path: Path) -> list[tuple[int, str]]:
    """(execution count, everything the cell printed) per code cell."""
    cells = json.loads(path.read_text())["cells"]
    return [(c["execution_count"], "".join("".join(o.get("text", "")) for o in c["outputs"]))
            for c in cells if c["cell_type"] == "code"]


def test_a_reused_kernel_starts_each_notebook_afresh(tmp_path):
    (tmp_path / "warner.py").write_text(WARNER)
    second_cells = [SECOND[0].format(start=str(tmp_path.resolve())), *SECOND[1:]]
    first = _notebook(tmp_path, "first.ipynb", FIRST)
    second = _notebook(tmp_path, "second.ipynb", second_cells)
    out = tmp_path / "out"
    with Kernel(tmp_path) as kernel:
        kernel.run(first, out / "first.ipynb", {"notebook": "first.ipynb"})
        kernel.run(second, out / "second.ipynb", {"notebook": "second.ipynb"})
        # the two again without the reset between, to show the test can fail
        kernel.run(first, out / "first-again.ipynb", {"notebook": "first.ipynb"})
        kernel.used = False
        kernel.run(second, out / "unreset.ipynb", {"notebook": "second.ipynb"})
    fresh = _cells(out / "first.ipynb")
    assert [n for n, _ in fresh] == [1, 2, 3, 4, 5]       # papermill's parameters cell too
    assert "said once per place" in fresh[3][1] and fresh[4][1] == "figures [1]\n"
    reused = _cells(out / "second.ipynb")
    assert [n for n, _ in reused] == [1, 2, 3, 4, 5]      # numbered as in a new kernel
    assert reused[2][1] == "False True\n"        # nothing left in the namespace, same folder
    assert "said once per place" in reused[3][1]             # the warning shows again
    assert reused[4][1] == "figures []\n"                    # no figure left open
    assert _cells(out / "first-again.ipynb") == fresh
    unreset = _cells(out / "unreset.ipynb")
    assert unreset[0][0] == 6 and unreset[2][1] == "True False\n" and unreset[3][1] == "" \
        and unreset[4][1] == "figures [1]\n"


def test_the_notebooks_of_a_phase_are_split_by_name_not_by_timing():
    names = [Path(f"{n}0-x.ipynb") for n in range(1, 10)]
    first, second = plan_notebooks(names)
    assert [p.name[0] for p in first] == ["2", "4", "6", "8"]
    assert [p.name[0] for p in second] == ["1", "3", "5", "7", "9"]
    assert plan_notebooks([]) == ([], [])


def test_a_kernel_that_cannot_start_is_an_error_of_the_build_not_a_worker_traceback(
        tmp_path, capfd):
    from benchreport.pipeline.kernels import Workers

    nb = _notebook(tmp_path, "a.ipynb", ["print(1)"])
    workers = Workers(1, tmp_path / "no-such-folder")      # the kernel's working folder
    try:
        with pytest.raises(OSError) as caught:
            workers.run([[(nb, tmp_path / "out.ipynb", {"notebook": "a.ipynb"})]],
                        lambda name: None, lambda name, seconds: None)
    finally:
        workers.kill()
    assert "no-such-folder" in str(caught.value)
    assert "Traceback" not in capfd.readouterr().err
    assert not (tmp_path / "out.ipynb").exists()


def _ended(pid: int, within: float = 10.0) -> bool:
    """Whether the process ``pid`` has ended (gone, or a zombie nobody reaped yet), waiting
    up to ``within`` seconds: a killed process ends shortly after the signal, not at once."""
    import time

    import psutil

    deadline = time.monotonic() + within
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _kernels_of(proc) -> list:
    import psutil

    return [p for p in psutil.Process(proc.pid).children() if "ipykernel" in " ".join(
        p.cmdline())]


def test_a_worker_runs_its_notebooks_in_the_one_kernel_it_reports(tmp_path):
    """One kernel per worker: the notebooks run in the kernel whose pid the main process
    was told (the one it kills on Ctrl-C), and a finished build leaves nothing behind."""

    from benchreport.pipeline.kernels import Workers

    nb = _notebook(tmp_path, "pid.ipynb", ["import os; print(os.getpid())"])
    workers = Workers(1, tmp_path)
    done: list[str] = []
    try:
        jobs = [(nb, tmp_path / f"out-{n}.ipynb", {"notebook": "pid.ipynb"}) for n in (1, 2)]
        workers.run([jobs], lambda name: None, lambda name, seconds: done.append(name))
        kernels = _kernels_of(workers.procs[0])
        workers.close()
    except BaseException:
        workers.kill()
        raise
    printed = {int(_cells(tmp_path / f"out-{n}.ipynb")[-1][1]) for n in (1, 2)}
    assert done == ["pid.ipynb", "pid.ipynb"]
    assert [k.pid for k in kernels] == [workers.kernels[0]] and printed == {workers.kernels[0]}
    assert _ended(workers.kernels[0])
    assert not any(Path(folder).exists() for folder in workers.folders)


def test_a_kernel_that_dies_under_a_worker_is_an_error_and_kill_leaves_nothing(tmp_path):
    import threading

    from benchreport.core.errors import BuildError
    from benchreport.pipeline.kernels import Workers

    dies = _notebook(tmp_path, "dies.ipynb", ["import os; os._exit(3)"])
    sleeps = _notebook(tmp_path, "sleeps.ipynb", ["import time; time.sleep(60)"])
    workers = Workers(2, tmp_path)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            workers.run([[(dies, tmp_path / "a.ipynb", {"notebook": "dies.ipynb"})],
                         [(sleeps, tmp_path / "b.ipynb", {"notebook": "sleeps.ipynb"})]],
                        lambda name: None, lambda name, seconds: None)
        except BaseException as exc:      # noqa: BLE001 (looked at below)
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)                        # a worker watching the wrong kernel would hang
    hung = thread.is_alive()
    workers.kill()
    thread.join(10)
    assert not hung
    assert len(raised) == 1 and isinstance(raised[0], BuildError)
    assert "kernel died" in raised[0].one_line() and "dies.ipynb" in raised[0].one_line()
    assert len(workers.kernels) == 2
    assert all(_ended(pid) for pid in workers.kernels.values())   # the sleeping one too
    assert not any(Path(folder).exists() for folder in workers.folders)


def test_notebooks_late_in_a_reused_kernel_read_as_in_a_kernel_of_their_own(mini_build,
                                                                            tmp_path):
    """The last notebook each kernel of the session's build ran, run again in a new
    kernel: the same cells, numbers and outputs (the folders aside)."""
    import shutil

    from benchreport.ingest.io import load_run
    from benchreport.pipeline.kernels import run_notebook
    from benchreport.pipeline.run import list_notebooks, notebook_parameters
    from benchreport.pipeline.schedule import schedule

    from .conftest import ROOT

    run, _ = mini_build
    workspace = run.paths.data.parent.parent
    shutil.copytree(workspace, tmp_path / "ws")
    copy = load_run("mini", tmp_path / "ws" / "data", tmp_path / "ws" / "report")
    phases = [group for _, group in schedule(list_notebooks(ROOT / "notebooks"))]
    first, second = plan_notebooks(phases[1])       # the analyses, in two kernels
    for nb in (second[-1], phases[-1][-1]):         # the second kernel's last; the claims
        built = run.paths.notebooks / nb.name
        again = tmp_path / nb.name
        run_notebook(nb, again, notebook_parameters(nb, copy, copy.paths.data.parent,
                                                    copy.paths.report.parent), cwd=ROOT)
        text = built.read_text().replace("report/.staging/", "report/") \
            .replace(str(workspace), str(tmp_path / "ws"))      # it ran in the staging copy
        built_cells = _cells_of(json.loads(text))
        assert built_cells == _cells_of(json.loads(again.read_text())), nb.name
        assert built_cells[0][0] == 1 and len(built_cells) > 3


def _cells_of(nb: dict) -> list[tuple[int, str]]:
    return [(c["execution_count"], json.dumps(c["outputs"], sort_keys=True))
            for c in nb["cells"] if c["cell_type"] == "code" and
            "injected-parameters" not in c["metadata"].get("tags", [])]


def test_a_build_in_kept_workers_gives_the_bytes_of_one_in_new_workers(mini_build, tmp_path,
                                                                       monkeypatch):
    """The tests keep their builds' notebook workers (tests/conftest.py): a build whose
    kernels have run a whole build of another run before writes the same bytes as the
    session's build of the mini run (the folders aside, as in test_pipeline's build twice),
    and it ran in the very kernels the first build left."""
    import hashlib
    import shutil

    from benchreport.pipeline import kernels
    from benchreport.pipeline.run import build

    from .conftest import ROOT, copy_run

    run, _ = mini_build
    shared = run.paths.data.parent.parent
    workspace = tmp_path / "ws"
    shutil.copytree(shared, workspace)
    report = workspace / "report" / run.id

    def hashes(folder: Path, moved: bool = False) -> dict[str, str]:
        def data(p: Path) -> bytes:
            raw = p.read_bytes()
            return raw.replace(str(shared).encode(), str(workspace).encode()) if moved else raw
        # the PDFs (and the render key that says whether there are any) aside: the
        # session's build has them when a test of the session reads them
        return {p.relative_to(folder).as_posix(): hashlib.sha256(data(p)).hexdigest()
                for p in sorted(folder.rglob("*")) if p.is_file()
                and p.suffix not in (".ipynb", ".pdf") and p.name != ".build-keys.json"}

    def notebooks_key(folder: Path) -> str:
        return json.loads((folder / ".build-keys.json").read_text())["notebooks"]

    first, key = hashes(report, moved=True), notebooks_key(report)
    report.rename(report.with_name(".first-" + report.name))
    copy_run(workspace, "mini", as_id="other")
    pool = kernels.WorkerPool()
    monkeypatch.setattr(kernels, "POOL", pool)
    try:
        for run_id in ("other", "mini"):
            build(run_id, data_root=workspace / "data", report_root=workspace / "report",
                  project=ROOT, out=lambda line: None, pdf=False)
            if run_id == "other":
                (_, kept), = pool.idle.values()
                pids = [proc.pid for proc in kept.procs], dict(kept.kernels)
        (_, again), = pool.idle.values()
        assert again is kept and ([p.pid for p in again.procs], again.kernels) == pids
    finally:
        pool.close()
    assert hashes(report) == first and notebooks_key(report) == key
    assert "notebooks/80-claims.html" in first and "derived/figures.json" in first
