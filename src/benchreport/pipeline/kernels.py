"""Executing notebooks: one kernel runs several notebooks in turn, and two worker processes
hold one kernel each.

A kernel takes about half a second to start and the notebooks' imports about as long again,
while a topic notebook's own work is often shorter. So a kernel is started once per worker
and reused: before each notebook after the first it is reset to what a fresh kernel offers
(an empty namespace, cells numbered from 1, no open figures, warnings shown again, its
starting folder), keeping the modules already imported. Which notebook runs in which
kernel, and in what order, is fixed by the plan, never by timing, so every build executes
the same cells the same way (tests/test_kernels.py runs a late notebook again in a kernel
of its own and compares).

The build's main process runs no kernel client: it waits on its workers, so Ctrl-C reaches
it as KeyboardInterrupt at any moment. The workers sit in a process group of their own,
out of the terminal's reach from the moment they start, and on Ctrl-C or a failure the
main process stops them and their kernels itself and removes the kernels' folders.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.children import die_with_parent
from ..core.errors import BuildError, ReportError

__all__ = ["ENGINE", "Job", "KERNEL_EXIT_WAIT", "KERNEL_LOG", "Kernel", "RESET", "WARM_UP",
           "WorkerPool", "Workers", "check_parameters", "ipc_kernel_manager", "notebook_error",
           "run_notebook", "stable_cell_ids", "take_workers"]

# Errors a notebook raises about the inputs (their one-line text is the message to show):
# ReportError and its kinds, all but the build's own.
_INPUT_ERRORS = {c.__name__ for c in (ReportError, *ReportError.__subclasses__())
                 if c is not BuildError}

KERNEL_LOG = "kernel.log"

# How long a kernel asked to shut down may take to exit before it is interrupted. An idle
# kernel exits in well under a second; one that does not is still running a cell and gets
# the interrupt. (A build stopped by Ctrl-C or an error kills its kernels instead.)
KERNEL_EXIT_WAIT = 2.0

# What a reused kernel runs between two notebooks (silently: no output, no cell number),
# after a line that sets _start to the folder the kernel started in.
# Figures are closed before the namespace goes; every module's record of the warnings it
# has shown is cleared, so a warning shows again in the next notebook as in a new kernel;
# the working folder is the one the kernel started in. What else a notebook might change
# outside its namespace (environment variables, sys.path, a module's settings) would stay;
# the pipeline's notebooks change none of it.
# The reset ends with a garbage collection (IPython's), which walks every object the kernel
# holds, its imported modules' included: what survives it is then frozen (gc.freeze), so
# the next reset walks only what the next notebook made (on the reference run, 31 ms a
# collection before, under 1 ms after). No name is bound by it.
RESET = """\
import os as _os, sys as _sys
if "matplotlib.pyplot" in _sys.modules:
    _sys.modules["matplotlib.pyplot"].close("all")
for _module in list(_sys.modules.values()):
    _registry = getattr(_module, "__dict__", {}).get("__warningregistry__")
    if isinstance(_registry, dict):
        _registry.clear()
_os.chdir(_start)
get_ipython().reset(new_session=True)
__import__("gc").freeze()
"""


# Imported by a worker's kernel while it waits for the ingest notebook: the modules every
# topic notebook imports first.
WARM_UP = "import benchreport.analyses.notebook, benchreport.core.tables\n"


def ipc_kernel_manager():
    """A kernel manager that talks to the kernel over Unix sockets, not localhost TCP, and
    shuts a finished kernel down without interrupting it."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, folder: str, **kwargs):
            # Socket files are named <ip>-<port>: a folder of its own per kernel, so
            # kernels running side by side never share one.
            # The connection file (it holds the key that signs messages) goes there
            # too, so removing the folder removes it, even after a kernel was killed.
            self.log_path = Path(folder) / KERNEL_LOG
            super().__init__(transport="ipc", ip=f"{folder}/ipc",
                             connection_file=f"{folder}/kernel.json", **kwargs)

        async def start_kernel(self, **kw) -> None:
            """The kernel's own log (its stderr) goes to a file, not the build's stderr.

            What a notebook prints reaches the notebook through the kernel's messages; the
            process's stderr carries only the kernel's log, and ipykernel logs races of its
            own shutdown there (e.g. a control-thread flush after the main thread closed the
            IOPub pipe: "ZMQError: Socket operation on non-socket") on a build that went
            well. The file is shown when a kernel dies (see Kernel.run).
            """
            with open(self.log_path, "ab") as log:
                await super().start_kernel(stderr=log, **kw)

        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            """Ask the kernel to exit, and interrupt it only if it does not.

            jupyter_client's own shutdown sends SIGINT first, then the shutdown request.
            When the signal lands while ipykernel is still in the handler of the request it
            has just answered, the kernel prints "[IPKernelApp] ERROR | KeyboardInterrupt
            caught in kernel." to the stderr it shares with the build, on a build that went
            well.
            """
            if now or restart or not self.owns_kernel or not self.has_kernel:
                await super().shutdown_kernel(now=now, restart=restart)
                return
            import asyncio

            self.shutting_down = True          # as jupyter_client does: no auto-restart
            self.stop_restarter()
            await self.request_shutdown()
            deadline = time.monotonic() + KERNEL_EXIT_WAIT
            while await self.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            if await self.is_alive():
                # Still running a cell: jupyter_client's way, which interrupts it, then
                # terminates it if need be. By now an idle kernel ignores SIGINT.
                await super().shutdown_kernel()
                return
            await self.finish_shutdown()       # reaps the process (it has exited)
            await self.cleanup_resources()

    return IPCKernelManager


@functools.cache
def _engine():
    """Papermill's nbclient engine, given a running kernel and a client connected to it:
    it executes the notebook there and leaves both as they are."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine
    from papermill.log import logger

    class ReusedKernelEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False,
                                     stdout_file=None, stderr_file=None, start_timeout=60,
                                     execution_timeout=None, km=None, kc=None, **kwargs):
            client = PapermillNotebookClient(
                nb_man, km=km, timeout=execution_timeout, startup_timeout=start_timeout,
                kernel_name=kernel_name, log=logger, log_output=log_output,
                stdout_file=stdout_file, stderr_file=stderr_file)
            client.kc = kc
            return client.execute()

    return ReusedKernelEngine


ENGINE = "benchreport-reused-kernel"


class Kernel:
    """One IPython kernel, started in ``cwd``, that executes notebooks one after another.

    Use as a context manager; the kernel is shut down, and its folder (sockets, log)
    removed, on the way out.
    """

    def __init__(self, cwd: Path, folder: str | None = None,
                 started: Callable[[int | None], None] | None = None) -> None:
        """``folder``: where the kernel's sockets, connection file and log go (default: a
        new temporary folder); ``started`` is called with the kernel's pid as soon as
        its process exists."""
        self.cwd = Path(cwd).resolve()
        self.folder = folder or tempfile.mkdtemp(prefix="benchreport-kernel-")
        self.km = ipc_kernel_manager()(self.folder, kernel_name="python3")
        self.kc = None
        self.used = False
        self.started = started

    def __enter__(self) -> Kernel:
        """Start the kernel and one client for all the notebooks it will run (a client
        waits a fifth of a second for the kernel to be quiet as it connects)."""
        from jupyter_core.utils import run_sync

        try:
            # as nbclient does: cells are not written to the user's IPython history
            run_sync(self.km.start_kernel)(
                cwd=str(self.cwd), extra_arguments=["--HistoryManager.hist_file=:memory:"])
            if self.started:
                self.started(self.pid)
            self.kc = self.km.client()
            self.kc.allow_stdin = False
            self.kc.start_channels()
            run_sync(self.kc.wait_for_ready)(timeout=60)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        provisioner = self.km.provisioner
        return getattr(provisioner, "pid", None) if provisioner else None

    def prepare(self, code: str) -> None:
        """Run ``code`` ahead of the first notebook (imports it will need); that notebook
        still starts from the reset, as every later one does."""
        self.execute(code)
        self.used = True

    def execute(self, code: str) -> None:
        """Run ``code`` in the kernel silently: nothing shown, no cell number used."""
        from jupyter_core.utils import run_sync

        async def ask() -> dict:
            return await self.kc.execute(code, silent=True, store_history=False, reply=True,
                                         timeout=120)

        content = run_sync(ask)()["content"]
        if content["status"] != "ok":
            raise BuildError(f"the notebook kernel could not run its set-up code: "
                             f"{content.get('ename')}: {content.get('evalue')}")

    def run(self, src: Path, dst: Path, parameters: dict[str, str]) -> None:
        """Execute ``src`` into ``dst`` with ``parameters``; a cell error becomes
        BuildError, and a kernel that died shows its own log."""
        import papermill as pm
        from nbclient.exceptions import DeadKernelError
        from papermill.engines import papermill_engines
        from papermill.exceptions import PapermillExecutionError

        check_parameters(parameters)
        dst.parent.mkdir(parents=True, exist_ok=True)
        if self.used:
            self.execute(f"_start = {str(self.cwd)!r}\n" + RESET)
        self.used = True
        papermill_engines.register(ENGINE, _engine())
        try:
            # written once, when the notebook ends (with its error, if a cell failed), not
            # again after every cell: a build saved its notebooks some 120 times, a quarter of a
            # worker's time
            pm.execute_notebook(str(src), str(dst), parameters=parameters,
                                kernel_name="python3", progress_bar=False, log_output=False,
                                request_save_on_cell_execute=False,
                                engine_name=ENGINE, km=self.km, kc=self.kc)
        except PapermillExecutionError as exc:
            raise notebook_error(exc, src.name) from None
        except DeadKernelError:
            self.show_log()
            raise BuildError("the notebook's kernel died", path=src.name,
                             hint="its log is printed above") from None
        stable_cell_ids(dst)

    def show_log(self) -> None:
        text = self.km.log_path.read_text(errors="replace").strip() \
            if self.km.log_path.is_file() else ""
        if text:
            print(f"kernel log:\n{text}", file=sys.stderr)

    def close(self) -> None:
        from jupyter_core.utils import run_sync

        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km.has_kernel:
                run_sync(self.km.shutdown_kernel)()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def check_parameters(parameters: dict[str, str]) -> None:
    """Papermill writes parameters into a code cell as literals. Each value must be a plain
    string that reads back, as a literal, to itself: data, never code."""
    import ast

    from papermill.translators import PythonTranslator

    for name, value in parameters.items():
        literal = PythonTranslator.translate(value) if isinstance(value, str) else None
        if literal is None or ast.literal_eval(literal) != value or any(
                ord(c) < 32 or ord(c) == 127 for c in value):
            raise BuildError(f"notebook parameter {name}={value!r} is not a plain string",
                             hint="use folder names without control characters")


def stable_cell_ids(path: Path) -> None:
    """Papermill gives the cell it injects a random id; name it after its tag instead, so
    the notebook pages built from the executed copies are the same bytes every time."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.id = "injected-parameters"
    nbformat.write(nb, path)


def notebook_error(exc, notebook: str) -> BuildError:
    """A notebook's exception as one line. An input problem the package raised (a
    ReportError such as ParseError) reads as that problem; anything else as a failure in
    the named cell."""
    evalue = exc.evalue.splitlines()[0] if exc.evalue else ""
    if exc.ename in _INPUT_ERRORS and evalue:
        err = BuildError(f"{evalue} (in {notebook}, cell {exc.exec_count})")
    else:
        err = BuildError(f"notebook failed in cell {exc.exec_count}: {exc.ename}: {evalue}",
                         path=notebook)
    err.notebook = notebook
    return err


def run_notebook(src: Path, dst: Path, parameters: dict[str, str],
                 cwd: Path | None = None) -> None:
    """Execute one notebook in a kernel of its own, in ``cwd`` (default: the notebooks'
    parent)."""
    with Kernel(cwd or src.parent.parent) as kernel:
        kernel.run(src, dst, parameters)


# ---------------------------------------------------------------------------------------
# Worker processes

Job = tuple[Path, Path, dict]          # (notebook, executed copy, parameters)


class _MainGone(Exception):
    """The pipe to the main process is closed: it has ended, nobody is waiting."""


def _worker(conn, folder: str, cwd: str, warm: bool, parent: int) -> None:
    """A worker process: one kernel, the jobs it is sent, in order, until it is sent None.
    Replies: ("kernel", pid) as soon as the kernel's process exists, then ("done", name,
    seconds) per notebook; or ("error", name, exception) and nothing more."""
    die_with_parent(parent)     # a build killed with kill -9 leaves no worker behind
    os.setpgrp()      # Ctrl-C in the terminal reaches the main process only
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})   # blocked until now

    def send(message: tuple) -> None:
        try:
            conn.send(message)
        except (EOFError, OSError):
            raise _MainGone from None

    name = ""
    try:
        with Kernel(Path(cwd), folder, started=lambda pid: send(("kernel", pid))) as kernel:
            if warm:
                kernel.prepare(WARM_UP)
            while True:
                try:
                    job = conn.recv()
                except (EOFError, OSError):
                    raise _MainGone from None
                if job is None:
                    return
                src, dst, parameters = job
                name, start = src.name, time.perf_counter()
                kernel.run(src, dst, parameters)
                send(("done", name, time.perf_counter() - start))
    except _MainGone:
        return
    except BaseException as exc:   # noqa: BLE001 (sent to the main process)
        try:
            _send_error(conn, name, exc)
        except (EOFError, OSError):
            return


def _send_error(conn, name: str, exc: BaseException) -> None:
    """Send the exception itself when it pickles, else its one line as a BuildError."""
    import pickle

    try:
        conn.send(("error", name, exc))
    except (pickle.PicklingError, TypeError, AttributeError):
        conn.send(("error", name, BuildError(f"{type(exc).__name__}: {exc}", path=name or None)))


class Workers:
    """Worker processes, each with a kernel, fed job lists chosen in advance.

    The main process makes each worker's kernel folder, so it can remove it whatever
    happens, and is told each kernel's pid as soon as it exists, so it can stop it. As a
    context manager: closed when the block ends, killed when it raises (Ctrl-C included).
    """

    def __init__(self, count: int, cwd: Path) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")   # no state shared with the parent
        self.procs, self.conns, self.folders = [], [], []
        self.kernels: dict[int, int | None] = {}
        self.pool: WorkerPool | None = None    # where they go back after a build that went well
        self.key: tuple = ()                    # what the pool reuses them for
        # Blocked while they start (a child inherits the mask), so a Ctrl-C at that
        # moment waits for the main process rather than reach a worker still in the
        # terminal's process group; each worker unblocks it after leaving the group. The
        # first spawn of a process starts multiprocessing's resource tracker, which
        # unblocks SIGINT behind it: started first, it leaves the block whole.
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            for i in range(count):
                folder = tempfile.mkdtemp(prefix="benchreport-kernel-")
                self.folders.append(folder)
                mine, theirs = ctx.Pipe()
                proc = ctx.Process(target=_worker, args=(theirs, folder, str(cwd), i > 0,
                                                          os.getpid()), daemon=True)
                proc.start()
                theirs.close()
                self.procs.append(proc)
                self.conns.append(mine)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.kill()
            return
        try:
            if self.pool is None or not self.pool.keep(self):
                self.close()
        except BaseException:
            self.kill()
            raise

    def run(self, plan: Sequence[Sequence[Job]], started: Callable[[str], None],
            finished: Callable[[str, float], None]) -> None:
        """Run ``plan[i]`` on worker i, all workers at once; return when every job is
        done. The first error is raised (then kill() the workers)."""
        from multiprocessing.connection import wait

        queues = {i: list(jobs) for i, jobs in enumerate(plan) if jobs}
        busy: dict[int, str] = {}

        def feed(i: int) -> None:
            if queues.get(i):
                src, dst, parameters = queues[i].pop(0)
                busy[i] = src.name
                started(src.name)
                try:
                    self.conns[i].send((src, dst, parameters))
                except OSError:
                    raise BuildError("a notebook worker process ended unexpectedly",
                                     path=src.name) from None

        for i in list(queues):
            feed(i)
        while busy:
            for conn in wait([self.conns[i] for i in busy]):
                i = self.conns.index(conn)
                try:
                    message = conn.recv()       # one message: others may be waiting
                except (EOFError, OSError):
                    raise BuildError("a notebook worker process ended unexpectedly",
                                     path=busy[i]) from None
                if message[0] == "kernel":
                    self.kernels[i] = message[1]
                    continue
                if message[0] == "error":
                    raise message[2]
                del busy[i]
                finished(message[1], message[2])
                feed(i)

    def close(self) -> None:
        """Let the workers shut their kernels down, and wait for them."""
        for conn in self.conns:
            conn.send(None)
        for proc in self.procs:
            proc.join()
        if any(proc.exitcode for proc in self.procs):
            raise BuildError("a notebook worker process failed as it shut down")
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)

    def kill(self) -> None:
        """Stop the workers and their kernels now (Ctrl-C, or a failed notebook). A
        second Ctrl-C waits until this is done."""
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            for proc in self.procs:
                proc.kill()
            for proc in self.procs:
                proc.join()
            for i, conn in enumerate(self.conns):   # what they said before they ended
                try:
                    while conn.poll():
                        message = conn.recv()
                        if message[0] == "kernel":
                            self.kernels[i] = message[1]
                except (EOFError, OSError):
                    pass
            for pid in self.kernels.values():
                if pid:
                    try:
                        os.killpg(pid, signal.SIGKILL)     # the kernel leads a session
                    except (ProcessLookupError, PermissionError):
                        pass
            for folder in self.folders:
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


# ---------------------------------------------------------------------------------------
# Workers kept between builds

class WorkerPool:
    """Workers kept, idle, between the builds of one process that builds many times (the
    test suite: tests/conftest.py sets ``POOL``), so each build after the first skips
    starting two processes, two kernels and their imports. A command-line build never has
    one: its workers end with it.

    Only workers whose build went well come back (a failed or interrupted build kills its
    own, as without a pool), and their next notebook starts from the reset, as every
    notebook after a kernel's first does. They are kept by their count, and reused only
    for the same working folder and the same environment (a kernel inherits the
    environment it started in); one set per count at most, the older one closed.
    """

    def __init__(self) -> None:
        import threading

        self.idle: dict[int, tuple[tuple, Workers]] = {}
        self.lock = threading.Lock()      # builds in two threads take and keep in turn

    @staticmethod
    def _key(cwd: Path) -> tuple:
        env = tuple(sorted((k, v) for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"))
        return str(Path(cwd).resolve()), env, tuple(sys.path)

    def take(self, count: int, cwd: Path) -> Workers:
        """Idle workers for ``count`` and ``cwd`` if there are live ones, else new ones."""
        key = self._key(cwd)
        with self.lock:
            kept = self.idle.pop(count, None)
        if kept is not None:
            if kept[0] == key and all(proc.is_alive() for proc in kept[1].procs):
                return kept[1]
            self._end(kept[1])
        fresh = Workers(count, cwd)
        fresh.pool = self
        fresh.key = key
        return fresh

    def keep(self, workers: Workers) -> bool:
        """Take back workers whose build went well (False: not theirs to keep)."""
        if not all(proc.is_alive() for proc in workers.procs):
            return False
        with self.lock:
            old = self.idle.pop(len(workers.procs), None)
            self.idle[len(workers.procs)] = (workers.key, workers)
        if old is not None:
            self._end(old[1])
        return True

    @staticmethod
    def _end(workers: Workers) -> None:
        try:
            workers.close()
        except BaseException:
            workers.kill()
            raise

    def close(self) -> None:
        """End every idle worker (and its kernel)."""
        with self.lock:
            kept = [workers for _, workers in self.idle.values()]
            self.idle.clear()
        for workers in kept:
            self._end(workers)


POOL: WorkerPool | None = None      # set by a caller that builds many times (the tests)


def take_workers(count: int, cwd: Path) -> Workers:
    """Workers for one build: from ``POOL`` when there is one, else new ones."""
    return POOL.take(count, cwd) if POOL is not None else Workers(count, cwd)
