"""The browser edge's last line of defence: an entry point of the worker never lets an unexpected
Python exception out; the page gets an update with ``{"error": {..., "internal": true}}`` instead."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import AssemblerError
from .updates import encode_json, error_value

__all__ = ["CallOrderError", "guarded"]


class CallOrderError(RuntimeError):
    """An entry point called out of order (``file_feed`` before ``file_begin``): the worker's bug, raised."""


class _HasWindow(Protocol):
    @property
    def window(self) -> Any: ...


def guarded(method: Callable[..., bytes]) -> Callable[..., bytes]:
    """An entry point (a method of an object with a ``window``) that never lets an unexpected Python exception
    (``TypeError``, ``RecursionError``, ...) out: the page gets ``{"error": {..., "internal": true}}`` beside what is
    still shown (``window.update()``). Calls out of order and ``AssemblerError`` (a Definition breaking its
    contract) still raise."""
    name = method.__name__

    @functools.wraps(method)
    def entry(self: _HasWindow, *args: Any, **kwargs: Any) -> bytes:
        try:
            return method(self, *args, **kwargs)
        except (CallOrderError, AssemblerError):
            raise  # a call out of order, or a Definition breaking its contract: the worker reports what it raised
        except Exception as exc:  # the last line of defence of the worker
            error = {**error_value(exc, name), "internal": True}
            try:
                update = self.window.update()
            except Exception:
                update = {}
            update["error"] = error
            return encode_json(update)

    return entry
