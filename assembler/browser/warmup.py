"""The worker's idle warm-up: while Python waits for its first real request after boot, the worker folds a small
generated session in a scratch viewer, one short step per call, so the first page a reader opens does not pay for
first use: V8 compiling and tiering up the wasm it runs (the interpreter, msgspec), Python specialising the bytecode
of the decode, fold and render paths, msgspec building its per-type decoders, the renderer's caches.

Rules: the session is our own (``assembler.demo``, its two turns repeated), never a page of the reader's; the
scratch viewer is the warm-up's own, so the open window is never touched; each step is one entry point of the wire
API on that scratch (a packed page through ``load_page`` and its first screen's HTML, or the same session as a follow
snapshot frame through ``apply_frames``), so the warm path is the one a real load takes.
The worker decides when to call a step (never while a real request is under way, and not at all after the first
one); a step says what it did, so the worker can stop when there is nothing more to gain.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import msgspec

from ..demo import demo_session
from ..history import page_value, snapshot_value
from ..records import encode
from .updates import elapsed_ms, encode_json

__all__ = ["COPIES", "STEPS", "WarmUp", "WarmWindow"]

COPIES = 4
"""Copies of the demo session's two turns in the warm-up session (about 700 events, 50 KB packed): enough that each
loop of the decode and fold runs hot, small enough that one step takes a few milliseconds once warm."""
STEPS = 8
"""Steps the worker runs at most: the first pays for first use, the later ones let V8 tier up what runs hot."""


class WarmWindow(Protocol):
    """The wire API a step drives: the warm-up's scratch viewer (``viewer.Viewer``), through its entry points only."""

    def load_page(self, data: Any, paged: bool = False) -> bytes: ...

    def apply_frames(self, frames: Sequence[Any]) -> bytes: ...

    def render(self, keys: Sequence[str]) -> bytes: ...

    def reset(self) -> None: ...


class WarmUp:
    """The warm-up's scratch viewer (made by ``make_viewer`` on the first step) and its session, as a packed page and
    as a follow snapshot frame (both built on the first step)."""

    def __init__(self, make_viewer: Callable[[], WarmWindow]) -> None:
        self.make_viewer = make_viewer
        self.scratch: WarmWindow | None = None
        self.page = b""
        self.frame = b""
        self.steps = 0

    def step(self) -> bytes:
        """One step: ``{step, path, ms, done}`` (``path``: "page" or "frame"; ``done``: no step is left, and a call
        after that does nothing)."""
        t0 = time.perf_counter()
        if self.steps >= STEPS:
            return encode_json({"step": self.steps, "path": None, "ms": 0, "done": True})
        if self.scratch is None:
            self.scratch = self.make_viewer()
            header, batches = demo_session(COPIES)
            events = [event for batch in batches for event in batch]
            self.page = encode(page_value(events, max_messages=len(events) + 1))
            self.frame = encode(snapshot_value(header, events, max_messages=len(events) + 1))
        scratch = self.scratch
        scratch.reset()
        path = "frame" if self.steps % 2 else "page"
        update = msgspec.json.decode(scratch.load_page(self.page) if path == "page"
                                     else scratch.apply_frames([self.frame]))
        if "error" in update:  # our own session failing to fold is a bug: say so, never hide it
            raise RuntimeError(f"the warm-up session failed to fold: {update['error']}")
        keys = [n["key"] for n in update.get("nodes", ()) if not n.get("hidden")]
        scratch.render(keys[-8:])
        self.steps += 1
        done = self.steps >= STEPS
        if done:
            scratch.reset()
        return encode_json({"step": self.steps, "path": path, "ms": elapsed_ms(t0), "done": done})
