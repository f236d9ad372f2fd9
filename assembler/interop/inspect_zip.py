"""The members of an Inspect ``.eval`` zip, in file order, read one at a time (FORMATS.md §6.1, §2.9).

Rules: a whole zip is read with ``zipfile`` over ``io.BytesIO`` (it runs in Pyodide); its central directory lists
the members in the order they were written, a re-logged member's name twice. A zip without a readable central
directory is one still being written or cut off: its local entries are walked from the start instead (``zlib`` for
deflate), every member stored completely before the cut is readable, and ``damage`` names the member the data ends
in (or the central directory, when only that is cut). A member whose bytes do not decompress or fail their CRC is
a ``ZipDamage`` naming it when it is read; the other members stay readable. Nothing here decodes JSON.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from typing import Final, NamedTuple

__all__ = ["ZipDamage", "EvalZip", "CENTRAL_DIRECTORY"]

CENTRAL_DIRECTORY: Final = "(central directory)"
"""What ``ZipDamage.member`` says when only the zip's closing directory is missing or cut."""

_LOCAL: Final = b"PK\x03\x04"
_CENTRAL: Final = (b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07")
_DESCRIPTOR: Final = b"PK\x07\x08"
_STORED, _DEFLATED = 0, 8


class ZipDamage(Exception):
    """A member (or the directory) of the zip cannot be read: ``member`` names it (None: before the first member),
    ``reason`` says what is wrong."""

    def __init__(self, reason: str, member: str | None = None) -> None:
        super().__init__(reason, member)
        self.reason = reason
        self.member = member

    def __str__(self) -> str:
        return f"{self.member}: {self.reason}" if self.member else self.reason


class _Local(NamedTuple):
    name: str
    method: int
    crc: int
    start: int  # offset of the member's compressed bytes
    size: int  # compressed size
    length: int  # uncompressed size


class EvalZip:
    """The members of one zip. ``names`` lists them in file order (duplicates kept); ``read(i)`` gives the bytes of
    member ``i``; ``damage`` is where a cut-off zip's listing stopped (None for a whole zip)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._zip: zipfile.ZipFile | None = None
        self._infos: list[zipfile.ZipInfo] = []
        self._locals: list[_Local] = []
        self.damage: ZipDamage | None = None
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            self._infos = self._zip.infolist()
            self.names = [info.filename for info in self._infos]
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
            self._zip = None
            self._walk()
            self.names = [local.name for local in self._locals]

    @property
    def whole(self) -> bool:
        """True when the zip's central directory was read (the file is complete as a zip)."""
        return self._zip is not None

    def read(self, index: int) -> bytes:
        """The uncompressed bytes of member ``index``.

        Raises:
            ZipDamage: the member does not decompress, fails its CRC or uses an unsupported method.
        """
        if self._zip is not None:
            info = self._infos[index]
            try:
                return self._zip.read(info)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError,
                    OSError) as exc:
                raise ZipDamage(f"member does not read ({exc})", info.filename) from None
        return self._inflate(self._locals[index])

    # -- a zip without its central directory ------------------------------------------------------------------

    def _walk(self) -> None:
        data = self._data
        pos = 0
        last: str | None = None
        while True:
            if pos >= len(data):
                self.damage = ZipDamage("the zip ends before its central directory (the file is incomplete)",
                                        CENTRAL_DIRECTORY if last is not None else None)
                return
            sig = data[pos:pos + 4]
            if sig in _CENTRAL or (len(sig) < 4 and any(c.startswith(sig) for c in _CENTRAL)):
                self.damage = ZipDamage("the zip's central directory is cut off (the file is incomplete)",
                                        CENTRAL_DIRECTORY)
                return
            which = f"the member after {last}" if last is not None else "the first member"
            if sig != _LOCAL[:len(sig)]:
                self.damage = ZipDamage(f"no zip entry at byte {pos} (where {which} should start)")
                return
            if pos + 30 > len(data):
                self.damage = ZipDamage(f"the header of {which} is cut off at byte {len(data)}")
                return
            flags = int.from_bytes(data[pos + 6:pos + 8], "little")
            method = int.from_bytes(data[pos + 8:pos + 10], "little")
            crc = int.from_bytes(data[pos + 14:pos + 18], "little")
            size = int.from_bytes(data[pos + 18:pos + 22], "little")
            length = int.from_bytes(data[pos + 22:pos + 26], "little")
            name_len = int.from_bytes(data[pos + 26:pos + 28], "little")
            extra_len = int.from_bytes(data[pos + 28:pos + 30], "little")
            start = pos + 30 + name_len + extra_len
            raw_name = data[pos + 30:pos + 30 + name_len]
            name = raw_name.decode("utf-8" if flags & 0x800 else "cp437", "replace")
            if start > len(data):
                if len(raw_name) == name_len:
                    self.damage = ZipDamage(f"the member's header is cut off at byte {len(data)}", name)
                else:
                    self.damage = ZipDamage(f"the header of {which} is cut off at byte {len(data)}")
                return
            if size == 0xFFFFFFFF or length == 0xFFFFFFFF:
                size, length = _zip64_sizes(data[pos + 30 + name_len:start], size, length)
            if flags & 0x1:
                self.damage = ZipDamage("encrypted members are not supported", name)
                return
            if flags & 0x8:  # sizes follow the data: only a deflate stream says where it ends
                if method != _DEFLATED:
                    self.damage = ZipDamage("a stored member without sizes cannot be read from a cut zip", name)
                    return
                found = _deflate_end(data, start)
                if found is None:
                    self.damage = ZipDamage("the member's data is cut off", name)
                    return
                size, after = found
                crc, length, after = _descriptor(data, after)
                if after > len(data):
                    self.damage = ZipDamage("the member's data descriptor is cut off", name)
                    return
            else:
                after = start + size
                if after > len(data):
                    self.damage = ZipDamage(f"the member's data is cut off ({len(data) - start} of {size} bytes)",
                                            name)
                    return
            self._locals.append(_Local(name, method, crc, start, size, length))
            last = name
            pos = after

    def _inflate(self, local: _Local) -> bytes:
        raw = self._data[local.start:local.start + local.size]
        if local.method == _STORED:
            out = raw
        elif local.method == _DEFLATED:
            try:
                out = zlib.decompress(raw, -15)
            except zlib.error as exc:
                raise ZipDamage(f"member does not decompress ({exc})", local.name) from None
        else:
            raise ZipDamage(f"compression method {local.method} is not supported", local.name)
        if zlib.crc32(out) != local.crc:
            raise ZipDamage("member fails its CRC check", local.name)
        return out


def _zip64_sizes(extra: bytes, size: int, length: int) -> tuple[int, int]:
    """A member's sizes from its zip64 extra field (the 32-bit header fields hold 0xFFFFFFFF)."""
    pos = 0
    while pos + 4 <= len(extra):
        tag = int.from_bytes(extra[pos:pos + 2], "little")
        n = int.from_bytes(extra[pos + 2:pos + 4], "little")
        body = extra[pos + 4:pos + 4 + n]
        if tag == 0x0001:
            at = 0
            if length == 0xFFFFFFFF and at + 8 <= len(body):
                length = int.from_bytes(body[at:at + 8], "little")
                at += 8
            if size == 0xFFFFFFFF and at + 8 <= len(body):
                size = int.from_bytes(body[at:at + 8], "little")
            break
        pos += 4 + n
    return size, length


def _deflate_end(data: bytes, start: int) -> tuple[int, int] | None:
    """(compressed size, offset after it) of the deflate stream at ``start``; None when it is cut off or bad."""
    inflater = zlib.decompressobj(-15)
    pos = start
    step = 1 << 20
    try:
        while not inflater.eof:
            if pos >= len(data):
                return None
            chunk = data[pos:pos + step]
            inflater.decompress(chunk)
            pos += len(chunk)
    except zlib.error:
        return None
    end = pos - len(inflater.unused_data)
    return end - start, end


def _descriptor(data: bytes, pos: int) -> tuple[int, int, int]:
    """(crc, uncompressed size, offset after) of the data descriptor at ``pos`` (its signature is optional)."""
    if data[pos:pos + 4] == _DESCRIPTOR:
        pos += 4
    crc = int.from_bytes(data[pos:pos + 4], "little")
    length = int.from_bytes(data[pos + 8:pos + 12], "little")
    return crc, length, pos + 12
