"""A sample's ``attachments`` and the references to them (FORMATS.md §6.5): Inspect moves large strings (long
texts, images as data URLs) out of messages and events into ``attachments{hash: text}`` and leaves
``attachment://<hash>`` (``tc://<hash>`` before 0.3.4x) in their place.

Rules: a reference is a whole JSON string starting with one of the two prefixes (Inspect's own rule). It resolves
to the attachment's text, except a media data URL (``data:…``), which stays a reference: its text is kept once, in
the sample's ``attachments`` raw record, instead of once per record that cites it (an image is cited by the input
message, ``sample_init``, state patches and every later model call); only an image block carries the data URL
itself, up to ``MEDIA_INLINE_MAX`` characters (``inspect_content.image_block``). A reference
with no attachment stays as written, and one warning per missing hash names the JSON pointer of its first use and
how many other places use it. Resolving copies only the containers on the way to a changed string; the rest is
shared with the decoded record. The parts kept with their references on purpose (a model call's input and provider
request, the ``events_data`` pool: they repeat the conversation) are not walked at all, since nothing in them is
shown; their references are neither resolved nor reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .base import pointer

__all__ = ["ATTACHMENT", "LEGACY_ATTACHMENT", "MEDIA_INLINE_MAX", "Attachments", "is_data_url"]

ATTACHMENT: Final = "attachment://"
LEGACY_ATTACHMENT: Final = "tc://"
MEDIA_INLINE_MAX: Final = 256 * 1024
"""Longest image data URL (characters) an image block carries; a longer one is shown by its media type and size,
its data kept in the source record only (the attachments record, or the message's own text when written inline)."""

_PREFIXES: Final = (ATTACHMENT, LEGACY_ATTACHMENT)


def is_data_url(text: str) -> bool:
    return text.startswith("data:")


class Attachments:
    """The attachments of one sample. ``table`` maps hash -> text (entries of other types were refused already);
    ``located`` turns a JSON pointer into the text a warning starts with (it adds the member)."""

    def __init__(self, table: dict[str, str], located: Callable[[str], str]) -> None:
        self.table = table
        self._located = located
        self._missing: dict[str, dict[str, None]] = {}  # hash -> the pointers that use it

    @staticmethod
    def hash_of(text: str) -> str | None:
        """The hash a reference names, or None when ``text`` is not a reference."""
        for prefix in _PREFIXES:
            if text.startswith(prefix):
                return text[len(prefix):]
        return None

    def lookup(self, text: str, ptr: str) -> str | None:
        """The attachment text of the reference ``text`` (None, noted for a warning, when it has none)."""
        key = self.hash_of(text)
        if key is None:
            return None
        found = self.table.get(key)
        if found is None:
            self._miss(key, ptr)
        return found

    def _miss(self, key: str, ptr: str) -> None:
        self._missing.setdefault(key, {})[ptr] = None  # pointers in the order met (one place read twice is one)

    def text(self, value: str, ptr: str) -> str:
        """A string with its reference resolved (media data URLs and missing ones stay as written)."""
        key = self.hash_of(value)
        if key is None:
            return value
        found = self.table.get(key)
        if found is None:
            self._miss(key, ptr)
            return value
        if is_data_url(found):
            return value
        return found

    def resolve(self, value: Any, ptr: str) -> Any:
        """``value`` with every reference inside it resolved (``ptr`` is its JSON pointer, for warnings)."""
        if type(value) is str:
            return self.text(value, ptr) if value.startswith(_PREFIXES) else value
        if type(value) not in (dict, list):
            return value
        return self._walk(value, ptr, [])

    def _walk(self, value: Any, ptr: str, path: list[str | int]) -> Any:
        # The pointer of a value is built only for a missing reference: most strings are no reference at all.
        if type(value) is dict:
            out: dict[str, Any] | None = None
            for k, v in value.items():
                t = type(v)
                if t is str:
                    if not v.startswith(_PREFIXES):
                        continue
                    r = self.text(v, ptr + pointer(*path, k))
                elif t is dict or t is list:
                    path.append(k)
                    r = self._walk(v, ptr, path)
                    path.pop()
                else:
                    continue
                if r is not v:
                    if out is None:
                        out = dict(value)
                    out[k] = r
            return value if out is None else out
        items: list[Any] | None = None
        for i, v in enumerate(value):
            t = type(v)
            if t is str:
                if not v.startswith(_PREFIXES):
                    continue
                r = self.text(v, ptr + pointer(*path, i))
            elif t is dict or t is list:
                path.append(i)
                r = self._walk(v, ptr, path)
                path.pop()
            else:
                continue
            if r is not v:
                if items is None:
                    items = list(value)
                items[i] = r
        return value if items is None else items

    def warnings(self) -> list[str]:
        """One warning per missing attachment, in the order they were first met."""
        out = []
        for key, places in self._missing.items():
            ptr = next(iter(places))
            more = len(places) - 1
            also = f" (and {more} more place{'s' if more != 1 else ''})" if more else ""
            out.append(f"{self._located(ptr)}: unresolved attachment reference {ATTACHMENT}{key}{also}; "
                       "shown as written")
        return out
