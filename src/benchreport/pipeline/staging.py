"""All-or-nothing builds: one build of a run at a time, written aside and swapped in.

A build writes into ``report/.staging/<RUN>/`` (a copy of the previous report, so steps
whose inputs did not change can be skipped) and replaces ``report/<RUN>/`` only when
every step succeeded. If it fails, the previous report stays byte for byte as it was; a
failing notebook's executed copy is kept in ``report/<RUN>.failed/`` for reading.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from ..core.errors import BuildError, ReportError
from ..core.paths import shown

__all__ = ["STAGING", "failed_dir", "full_disk_is_one_line", "lock", "stage", "swap"]

STAGING = ".staging"


def failed_dir(report: Path) -> Path:
    """Where a failed build keeps the failing notebook: report/<RUN>.failed/."""
    return report.with_name(report.name + ".failed")


@contextlib.contextmanager
def lock(report: Path, out: Callable[[str], None]) -> Iterator[None]:
    """Hold report/.staging/<RUN>.lock; a second build of the run waits until it is free.

    The lock is an advisory ``flock`` on a file: the kernel drops it when the holder exits,
    however it exits, so a killed build never leaves a stale lock behind.
    """
    import fcntl

    folder = report.parent / STAGING
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{report.name}.lock"
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "?"
            out(f"waiting for another build of {report.name} (pid {holder}) to finish ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh, fcntl.LOCK_UN)


class _CopyFailed(Exception):
    """One file of the copy failed: stop there (copytree would go on, and gather every
    later failure into one error whose text is a repr of them all)."""


def _copy_file_or_stop(src: str, dst: str) -> object:
    try:
        return shutil.copy2(src, dst)
    except OSError as exc:
        raise _CopyFailed(exc) from exc


def _copy_report(final: Path, staged: Path) -> None:
    """Copy the previous report into the staging folder; the first file that fails (a full
    disk) raises its own OSError, which says what happened in one line."""
    try:
        shutil.copytree(final, staged, symlinks=True, copy_function=_copy_file_or_stop)
    except _CopyFailed as exc:
        raise exc.args[0] from None


@contextlib.contextmanager
def full_disk_is_one_line(final: Path) -> Iterator[None]:
    """A full disk (or quota) inside the block is one line naming ``final``, the report
    folder: the block replaces nothing until it has written all it needs."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise BuildError(f"no space left on the disk ({exc.strerror})",
                         path=shown(final, Path.cwd()) + "/",
                         hint="nothing was replaced; free some space and build again") \
            from exc


@contextlib.contextmanager
def stage(run) -> Iterator[object]:
    """Yield ``run`` with its report folder moved to the staging copy; swap it in on success.

    On any exception (a failing step, Ctrl-C, a full disk) the staging copy is removed and
    the previous report is not touched. A notebook failure keeps that notebook's executed
    copy in report/<RUN>.failed/ and names it in the error.
    """
    final: Path = run.paths.report
    staged = final.parent / STAGING / final.name
    failed = failed_dir(final)
    shutil.rmtree(staged, ignore_errors=True)      # left by a build that was killed
    with full_disk_is_one_line(final):
        try:
            if final.is_dir():
                _copy_report(final, staged)
            else:
                staged.mkdir(parents=True)
            yield replace(run, paths=replace(run.paths, report=staged))
        except BaseException as exc:
            _keep_failed_notebook(exc, staged, failed)
            shutil.rmtree(staged, ignore_errors=True)
            raise
    shutil.rmtree(failed, ignore_errors=True)      # this build succeeded
    swap(staged, final)
    shutil.rmtree(staged, ignore_errors=True)      # now the previous report


def _keep_failed_notebook(exc: BaseException, staged: Path, failed: Path) -> None:
    notebook = getattr(exc, "notebook", None)
    if not isinstance(exc, ReportError) or notebook is None:
        return
    copy = staged / "notebooks" / notebook
    if not copy.is_file():
        return
    shutil.rmtree(failed, ignore_errors=True)
    failed.mkdir(parents=True)
    kept = failed / notebook
    _with_error_on_top(copy, kept, exc.one_line())
    exc.hint = f"the failing notebook, with the error at its top: {shown(kept, Path.cwd())}"


def _with_error_on_top(src: Path, dst: Path, message: str) -> None:
    """Copy an executed notebook, with the error as text right under papermill's banner."""
    import html

    import nbformat

    nb = nbformat.read(src, as_version=4)
    at = 1 if nb.cells and "papermill-error-cell-tag" in nb.cells[0].metadata.get("tags", []) \
        else 0
    cell = nbformat.v4.new_markdown_cell(
        "**This build failed here; nothing in the report folder was replaced.**\n\n"
        f"<pre>{html.escape(message)}</pre>")
    cell.metadata["tags"] = ["benchreport-error"]
    cell.id = "benchreport-error"
    nb.cells.insert(at, cell)
    nbformat.write(nb, dst)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    if ctypes.get_errno() in (errno.ENOSYS, errno.EINVAL):
        return False          # kernel or filesystem without exchange: rename twice below
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(a))


def swap(staged: Path, final: Path) -> None:
    """Put ``staged`` at ``final``; the previous ``final`` ends up at ``staged``.

    Ctrl-C is held back for the moment of the swap, so it happens entirely or not at all.
    """
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        if not final.exists():
            os.rename(staged, final)
        elif not _exchange(staged, final):
            aside = staged.with_name(staged.name + ".previous")
            shutil.rmtree(aside, ignore_errors=True)
            os.rename(final, aside)
            os.rename(staged, final)
            os.rename(aside, staged)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
