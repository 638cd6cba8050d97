"""A build that goes well prints its step lines and real warnings, nothing else.

The noise this guards against: jupyter_client shuts a kernel down by sending it SIGINT
first, and papermill does so right after the kernel replied to its last request, while
ipykernel may still be inside that request's handler; the signal then makes the kernel
print "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." to the stderr it shares
with the build. The build asks a finished kernel to exit instead, and interrupts only a
kernel that does not (one still running a cell).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from benchreport.core.errors import BuildError
from benchreport.ingest.io import load_run
from benchreport.pipeline import kernels
from benchreport.pipeline.kernels import run_notebook
from benchreport.pipeline.run import notebook_parameters

from .conftest import ROOT, copy_run

# builds and notebook kernels (seconds a test); what the workers print is checked
pytestmark = [pytest.mark.slow, pytest.mark.fresh_workers]

NOISE = re.compile(r"ERROR|Traceback|KeyboardInterrupt")
STEP = re.compile(r"\[(\d+)/\d+\] (.+?) (\.\.\.|done in \d+\.\ds)")
SHOWN = re.compile(r"warning: .+|report ready: .+|(notebooks and figures|render): inputs "
                   r"unchanged, skipped")

# A cell that widens the window the noise comes from: the kernel replies to kernel_info
# (papermill's last request before the shutdown) and stays in the handler for a while.
SLOW_REPLY = """\
import inspect, time
_kernel = get_ipython().kernel
_reply = _kernel.shell_handlers["kernel_info_request"]

async def _slow_reply(*args):
    result = _reply(*args)
    if inspect.isawaitable(result):
        await result
    time.sleep(0.5)

_kernel.shell_handlers["kernel_info_request"] = _slow_reply
"""


def _noise(text: str) -> list[str]:
    return [line for line in text.splitlines() if NOISE.search(line)]


def test_a_successful_build_prints_only_step_lines_and_warnings(cli_build):
    """The session's command-line build (tests/conftest.py's cli_build: the mini run, with
    the long model name of tests/test_long_strings.py), stdout and stderr together."""
    _, code, output, _ = cli_build
    assert code == 0, output
    assert _noise(output) == [], output
    lines = output.splitlines()
    assert [line for line in lines if not (STEP.fullmatch(line) or SHOWN.fullmatch(line))] \
        == [], output
    # a step that runs in a worker ends under the number it started with
    started = {m[2]: m[1] for m in map(STEP.fullmatch, lines) if m and m[3] == "..."}
    ended = {m[2]: m[1] for m in map(STEP.fullmatch, lines) if m and m[3] != "..."}
    assert ended == started and len(ended) == len(list((ROOT / "notebooks").glob("*.ipynb"))) + 4


@pytest.fixture
def slow_reply_notebook(tmp_path) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("run_id = data_root = report_root = notebook = None")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(SLOW_REPLY),
                nbformat.v4.new_code_cell("print(run_id)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "project" / "notebooks" / "99-slow-reply.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def kept_kernel_logs(tmp_path, monkeypatch) -> list[str]:
    """The kernels' own logs (their stderr), read before the build removes their folders."""
    logs: list[str] = []

    class KeepLogs:
        @staticmethod
        def rmtree(folder, **kwargs):
            time.sleep(0.2)           # anything the kernel prints as it exits
            log = Path(folder) / kernels.KERNEL_LOG
            logs.append(log.read_text() if log.is_file() else "<no log file>")
            shutil.rmtree(folder, **kwargs)

    monkeypatch.setattr(kernels, "shutil", KeepLogs)
    return logs


def test_a_finished_kernel_is_shut_down_without_an_interrupt(tmp_path, capfd,
                                                             slow_reply_notebook,
                                                             kept_kernel_logs):
    """Deterministic: the kernel is still in its reply's handler when the notebook is done.
    Its log goes to a file of its own; neither that file nor the build's output has noise."""
    (tmp_path / "data").mkdir()
    copy_run(tmp_path, "mini")
    run = load_run("mini", tmp_path / "data", tmp_path / "report")
    dst = tmp_path / "report" / "mini" / "notebooks" / slow_reply_notebook.name
    run_notebook(slow_reply_notebook, dst,
                 notebook_parameters(slow_reply_notebook, run, Path("data"), Path("report")))
    out, err = capfd.readouterr()
    assert len(kept_kernel_logs) == 1 and "<no log file>" not in kept_kernel_logs
    assert _noise(out + err + kept_kernel_logs[0]) == [], out + err + kept_kernel_logs[0]
    assert "mini" in dst.read_text()        # the notebook did run


def test_a_dead_kernel_shows_its_log(tmp_path, capfd):
    """The kernel's log is kept out of a build that goes well, and shown when it dies."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("run_id = data_root = report_root = notebook = None")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "import os, sys\nsys.__stderr__.write('last words of the kernel\\n')\n"
        "sys.__stderr__.flush()\nos._exit(3)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    src = tmp_path / "project" / "notebooks" / "99-dies.ipynb"
    src.parent.mkdir(parents=True)
    nbformat.write(nb, src)
    (tmp_path / "data").mkdir()
    copy_run(tmp_path, "mini")
    run = load_run("mini", tmp_path / "data", tmp_path / "report")
    with pytest.raises(BuildError, match="kernel died") as caught:
        run_notebook(src, tmp_path / "out" / src.name,
                     notebook_parameters(src, run, Path("data"), Path("report")))
    assert "99-dies.ipynb" in caught.value.one_line()
    err = capfd.readouterr().err
    assert "kernel log:\nlast words of the kernel" in err, err


def test_a_kernel_still_running_a_cell_is_interrupted_and_stopped(tmp_path, monkeypatch):
    """A kernel asked to shut down while it still runs a cell (a single notebook run that
    is stopped) does not exit on the request alone: it is interrupted, and stops
    promptly. (The wait for it to exit on the request alone is shortened here: its length
    is not what is tested.)"""
    monkeypatch.setattr(kernels, "KERNEL_EXIT_WAIT", 0.5)

    async def scenario() -> float:
        km = kernels.ipc_kernel_manager()(str(tmp_path), kernel_name="python3")
        await km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            kc.execute("import time; time.sleep(120)")
            await asyncio.sleep(0.5)
            start = time.perf_counter()
            await km.shutdown_kernel()
            assert not await km.is_alive()
            return time.perf_counter() - start
        finally:
            kc.stop_channels()

    assert asyncio.run(scenario()) < 10
