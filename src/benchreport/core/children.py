"""Worker processes end with the build that started them.

A build's workers (the PDF renderers, the notebook workers) are its children. Killed with
``kill -9``, the build cannot stop them itself: they would live on, holding its output
pipe (a caller waiting for the end of the output would wait forever) and multiprocessing's
resource tracker with them. Linux can send a child a signal when its parent ends
(``prctl(PR_SET_PDEATHSIG)``); each worker asks for SIGKILL as the first thing it does.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1          # from <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when ``parent`` (the pid that started it) ends;
    if it already has, end now. Elsewhere than on Linux this does nothing."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:      # it ended before the request took effect
        os._exit(1)
