"""A journal's window kept as a list: the client of the load test and of the journal's own tests, which hold no
assembler (the viewer applies the journal's publications to its assembler, ``assembler.browser.window``).

``KeptWindow(journal)`` is the journal with ``window`` (the published entries, oldest first): the feeding calls that
publish (``opened``, ``entry``, ``page``) apply their publications to it, everything else is the journal's own.
``repack`` swaps a run of entries for one row covering exactly their range, as live repacking does
(``live_repack``'s window protocol).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from assembler.journal import Append, Journal, Output, Prepend, Replace

__all__ = ["KeptWindow"]

E = TypeVar("E")


class KeptWindow(Generic[E]):
    """``journal`` plus the list of the entries it published."""

    def __init__(self, journal: Journal[E]) -> None:
        self.journal = journal
        self.window: list[E] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.journal, name)

    def opened(self, cursor: int, entries: Sequence[E], has_more: bool) -> list[Output]:
        return self._apply(self.journal.opened(cursor, entries, has_more))

    def entry(self, entry: E) -> list[Output]:
        return self._apply(self.journal.entry(entry))

    def page(self, request: Any, entries: Sequence[E], has_more: bool) -> list[Output]:
        return self._apply(self.journal.page(request, entries, has_more))

    def _apply(self, outputs: list[Output]) -> list[Output]:
        for output in outputs:
            if isinstance(output, Replace):
                self.window = list(output.entries)
            elif isinstance(output, Prepend):
                self.window[:0] = output.entries
            elif isinstance(output, Append):
                self.window.append(output.entry)
        return outputs

    def repack(self, old: Sequence[E], new: E) -> bool:
        """Swap the consecutive window entries ``old`` for ``new``, one entry covering exactly their range; cursors
        and ranges stay as they were. False, changing nothing, when ``old`` is not in the window or ``new`` does not
        cover its range."""
        if not old:
            return False
        range_of = self.journal.range_of
        first, last = range_of(new)
        if range_of(old[0])[0] != first or range_of(old[-1])[1] != last:
            return False
        window = self.window
        i = bisect_left(window, first, key=lambda e: range_of(e)[0])
        n = len(old)
        if len(window) < i + n or any(a is not b for a, b in zip(window[i:i + n], old, strict=True)):
            return False
        window[i:i + n] = [new]
        return True
