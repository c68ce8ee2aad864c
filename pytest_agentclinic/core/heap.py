"""Building large, cycle-free object graphs without the cyclic collector's repeated passes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small containers.

    Records and terminology rows hold no reference cycles, but each is a few tracked
    containers: while hundreds of thousands accumulate, the collector's passes over the
    growing heap cost more than building them (measured: 40,000 records load 2-3x faster,
    the terminology table about 1.7x, with it paused).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
