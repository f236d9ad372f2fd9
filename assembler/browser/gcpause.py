"""Python's cycle collector around a page load: paused while the page is decoded and folded, resumed after it or,
for the worker's viewer, once the answer is posted (``Viewer.settle``)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any

__all__ = ["page_load"]


def page_load(method: Callable[..., bytes]) -> Callable[..., bytes]:
    """A page load runs with the cycle collector paused: its objects live until the next page anyway, and the
    collector would walk the new window a few times per page. It resumes after the load, or, for a viewer that
    ``defer_gc``, at ``settle`` (the worker calls it once the answer is posted, so the collection the load's
    allocations owe runs off the load's path)."""

    @functools.wraps(method)
    def load(self: Any, *args: Any, **kwargs: Any) -> bytes:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return method(self, *args, **kwargs)
        finally:
            if enabled and self.defer_gc:
                self._gc_owed = True
            elif enabled:
                gc.enable()

    return load
