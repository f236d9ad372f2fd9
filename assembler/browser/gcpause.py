"""Python's cycle collector around a page load: paused while the page is decoded and folded, resumed after it or,
for the worker's viewer, once the answer is posted (``CollectorPause.settle``)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = ["CollectorPause", "page_load"]


class CollectorPause:
    """The cycle collector paused around page loads. ``defer``: a load leaves it paused until ``settle`` (the worker
    calls it once the answer is posted, so the collection the load's allocations owe runs off the load's path)."""

    def __init__(self, defer: bool = False) -> None:
        self.defer = defer
        self.owed = False

    @contextmanager
    def load(self) -> Iterator[None]:
        """A page load runs with the cycle collector paused: its objects live until the next page anyway, and the
        collector would walk the new window a few times per page."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if enabled and self.defer:
                self.owed = True
            elif enabled:
                gc.enable()

    def settle(self) -> None:
        """Resume a collector a deferred load left paused, and run the young collection its allocations owe."""
        if self.owed:
            self.owed = False
            gc.enable()
            gc.collect(0)


class _Pausing(Protocol):
    @property
    def collector(self) -> CollectorPause: ...


def page_load(method: Callable[..., bytes]) -> Callable[..., bytes]:
    """An entry point (of an object with a ``collector``) that loads a page: it runs inside ``collector.load()``."""

    @functools.wraps(method)
    def load(self: _Pausing, *args: Any, **kwargs: Any) -> bytes:
        with self.collector.load():
            return method(self, *args, **kwargs)

    return load
