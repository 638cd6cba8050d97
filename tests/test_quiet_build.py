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
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from benchreport.build import pipeline
from benchreport.build.pipeline import _ipc_kernel_manager, execute_notebook
from benchreport.ingest.io import load_run

from .conftest import ROOT, copy_run

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


def test_a_successful_build_prints_only_step_lines_and_warnings(tmp_path):
    (tmp_path / "data").mkdir()
    copy_run(tmp_path, "mini")
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "build", "mini", "--data-root",
         str(tmp_path / "data"), "--report-root", str(tmp_path / "report"),
         "--project", str(ROOT)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    output = proc.stdout
    assert proc.returncode == 0, output
    assert _noise(output) == [], output
    lines = output.splitlines()
    assert [line for line in lines if not (STEP.fullmatch(line) or SHOWN.fullmatch(line))] \
        == [], output
    # a step that runs in a worker ends under the number it started with
    started = {m[2]: m[1] for m in map(STEP.fullmatch, lines) if m and m[3] == "..."}
    ended = {m[2]: m[1] for m in map(STEP.fullmatch, lines) if m and m[3] != "..."}
    assert ended == started and len(ended) == len(list((ROOT / "notebooks").glob("*.ipynb"))) + 3


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


def test_a_finished_kernel_is_shut_down_without_an_interrupt(tmp_path, capfd,
                                                             slow_reply_notebook):
    """Deterministic: the kernel is still in its reply's handler when the notebook is done.
    Its stderr is the test's (the kernel inherits fd 2), so capfd sees what it prints."""
    (tmp_path / "data").mkdir()
    copy_run(tmp_path, "mini")
    run = load_run("mini", tmp_path / "data", tmp_path / "report")
    dst = tmp_path / "report" / "mini" / "notebooks" / slow_reply_notebook.name
    execute_notebook(slow_reply_notebook, dst, run, Path("data"), Path("report"))
    time.sleep(0.2)               # anything the kernel prints as it exits
    out, err = capfd.readouterr()
    assert _noise(out + err) == [], out + err
    assert "mini" in dst.read_text()        # the notebook did run


def test_a_kernel_still_running_a_cell_is_interrupted_and_stopped():
    """When the build is stopped (Ctrl-C) mid-cell, the kernel does not exit on a shutdown
    request alone: it is interrupted as before, and stops promptly."""

    async def scenario() -> float:
        km = _ipc_kernel_manager()(kernel_name="python3")
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
            while pipeline._KERNEL_DIRS:
                shutil.rmtree(pipeline._KERNEL_DIRS.pop(), ignore_errors=True)

    assert asyncio.run(scenario()) < 10
