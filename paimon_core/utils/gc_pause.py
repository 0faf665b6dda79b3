"""Pause Python's cyclic garbage collector while metadata is built in bulk.

Planning a scan makes an object per manifest entry, per data file and per split:
hundreds of thousands of small objects, none in a reference cycle. Each 700 new
container objects trigger a young-generation collection, which promotes them and
makes the older generations' collections walk them again: at 100,000 files half
of the time spent making the objects was the collector's (measured in
``bench/results/issue16-*.md``). Reference counting still frees everything; only
the cycle detector waits until the block ends. It is left as it was when the caller
(or another thread) had already disabled it. The switch is process-wide: another thread's
``gc.disable()`` made inside the block is undone when the block ends, so blocks stay
short and hold no I/O wait (a scan reads its manifests before pausing).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector disabled (re-enabled after, if it was on)."""
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
