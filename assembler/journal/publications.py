"""What the journal hands back to its caller: ``PageRequest`` (a page to read) and the publications ``Replace``,
``Prepend`` and ``Append`` (how the published window changed). Frozen values; the journal keeps no reference to
the caller and the caller never mutates them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

__all__ = [
    "PageRequest",
    "Replace",
    "Prepend",
    "Append",
    "Publication",
    "Output",
]

E = TypeVar("E")


@dataclass(frozen=True)
class PageRequest:
    """A page the caller must read and answer with ``Journal.page(request, entries, has_more)``.

    ``kind`` is ``repair`` (the page must end exactly at ``through``) or ``prepend`` (an older page).
    """

    id: int
    kind: Literal["repair", "prepend"]
    generation: int
    through: int
    before: int | None = None
    max_messages: int | None = None


@dataclass(frozen=True)
class Replace(Generic[E]):
    """The window is now exactly ``entries``."""

    entries: tuple[E, ...]
    has_more: bool


@dataclass(frozen=True)
class Prepend(Generic[E]):
    """``entries`` go before the window."""

    entries: tuple[E, ...]
    has_more: bool


@dataclass(frozen=True)
class Append(Generic[E]):
    """``entry`` goes after the window; ``has_more`` is unchanged."""

    entry: E


Publication = Replace[Any] | Prepend[Any] | Append[Any]
Output = Publication | PageRequest
