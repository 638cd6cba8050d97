"""Python's collector of reference cycles, kept out of the way of blocks that make many
objects at once.

After every few hundred new container objects the collector looks over the young ones,
and each time the objects that survived grow by a quarter, over all of them: a walk of
0.2 to 0.4 s in a build's process, which holds a few hundred thousand objects once
matplotlib, pandas, fontTools or WeasyPrint are imported. A block that makes hundreds of
thousands of objects (a font subset, a PDF's boxes, a batch of records) set that walk off
again and again, over objects that were either still in use or freed without it.

``paused()`` turns the collector off for such a block; what the block leaves in reference
cycles waits for the next collection. ``paused(collect=True)`` ends the block with one
collection, for a block that leaves cycles (a rendered document). ``freeze()`` sets what
exists now (the imported modules, mostly) aside from every later walk (``gc.freeze``), for
a process that goes on to do the same work again (a worker kept between builds)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["freeze", "paused"]


@contextlib.contextmanager
def paused(collect: bool = False) -> Iterator[None]:
    """The collector off for the block (``collect``: one collection after it)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
        if collect:
            gc.collect()


def freeze() -> None:
    """Set every object that exists now aside from later collections (after one, so that
    no garbage is kept for good)."""
    gc.collect()
    gc.freeze()
