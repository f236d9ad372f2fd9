"""The shared block fold: assistant stream blocks from scalar chunks and packed rows alike (ASSEMBLY 5.3, 5.7).

Rules: a row is one input and is never expanded; it appends ``''.join(fragments)`` once and finds its first-token and
first-visible members in one lazy linear pass with C-level helpers (``compress`` over ``count``), so the folded state
equals the member-by-member fold. Visibility is tracked incrementally per block (``nonblank`` is sticky), never by
re-trimming the growing text (DESIGN rule 3). Text lives in fragment lists joined once when a node is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count, islice, repeat
from operator import contains
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from assembler.records import SessionEvent, ToolCallRowData, first_nonempty
from assembler.records import joined as joined_text
from assembler.text import JS_WHITESPACE
from assembler.views import (
    BlockView,
    ImageBlockView,
    OtherBlockView,
    ReasoningBlockView,
    TextBlockView,
    ToolCallBlockView,
)

__all__ = [
    "TextBlock",
    "ToolCallBlock",
    "ImageBlock",
    "OtherBlock",
    "Block",
    "StreamFold",
    "ChunkOutcome",
    "block_visible",
    "convert_content_block",
    "content_views",
    "view_visible",
    "row_boundaries",
]

ChunkOutcome = Literal["block", "usage", "none"]
_encode = msgspec.json.Encoder().encode


class TextBlock:
    """A text or reasoning block: fragments (joined lazily) and a sticky "some fragment is non-blank" flag."""

    __slots__ = ("kind", "parts", "nonblank")

    def __init__(self, kind: str, text: str = "") -> None:
        self.kind = kind
        self.parts: list[str] = [text] if text else []
        self.nonblank = bool(text.strip(JS_WHITESPACE))

    def text(self) -> str:
        parts = self.parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    def view(self) -> BlockView:
        return TextBlockView(self.text()) if self.kind == "text" else ReasoningBlockView(self.text())


class ToolCallBlock:
    """A tool-call block: ``callId`` keeps its first non-empty value, ``name`` the last carried one."""

    __slots__ = ("call_id", "name", "args")

    def __init__(self, call_id: Any = "", name: Any = "", args: str = "") -> None:
        self.call_id = call_id
        self.name = name
        self.args: list[str] = [args] if args else []

    def view(self) -> BlockView:
        args = self.args
        if len(args) > 1:
            args[:] = ["".join(args)]
        return ToolCallBlockView(self.call_id, self.name, args[0] if args else "")


class ImageBlock:
    __slots__ = ("attachment",)

    def __init__(self, attachment: Any) -> None:
        self.attachment = attachment

    def view(self) -> BlockView:
        return ImageBlockView(self.attachment)


class OtherBlock:
    __slots__ = ("block",)

    def __init__(self, block: Any) -> None:
        self.block = block

    def view(self) -> BlockView:
        return OtherBlockView(self.block)


Block = TextBlock | ToolCallBlock | ImageBlock | OtherBlock


def block_visible(block: Block | None) -> bool:
    """Text/reasoning: non-blank; tool-call: never; any other kind: always (ASSEMBLY 5.3)."""
    if block is None:
        return False
    t = type(block)
    if t is TextBlock:
        return block.nonblank  # type: ignore[union-attr]
    return t is not ToolCallBlock


def _str(value: Any) -> str:
    if type(value) is str:
        return value
    return "" if value is None else _encode(value).decode()


def convert_content_block(block: Any) -> Block:
    """A final ``ContentBlock`` as a state block: image -> image, unknown types -> ``other`` (kept intact)."""
    if type(block) is dict:
        btype = block.get("type")
        if btype == "text" or btype == "reasoning":
            return TextBlock(btype, _str(block.get("text")))
        if btype == "tool-call":
            return ToolCallBlock(block.get("id", ""), block.get("name", ""), _str(block.get("arguments")))
        if btype == "image":
            return ImageBlock(block.get("attachment"))
    return OtherBlock(block)


def content_views(content: Any) -> list[BlockView]:
    """View blocks of a message's ``content`` array (non-arrays give no blocks)."""
    if type(content) is not list:
        return []
    return [convert_content_block(b).view() for b in content]


def view_visible(view: BlockView) -> bool:
    t = type(view)
    if t is TextBlockView or t is ReasoningBlockView:
        return bool(view.text.strip(JS_WHITESPACE))  # type: ignore[union-attr]
    return t is not ToolCallBlockView


def row_boundaries(fragments: Sequence[str], text: str, has_name: bool, need_token: bool, need_visible: bool,
                   visible_from_start: bool, fragments_visible: bool) -> tuple[int, int]:
    """``chunkRunBoundaries``: the first-token and first-visible member indexes of a row (-1 when none/not needed).

    First token: member 0 when the row has ``name``, else the first non-empty fragment. First visible: member 0
    when ``visible_from_start``, else (text rows only) the first non-blank fragment. Each search is one lazy C-level
    pass with an early exit (``compress`` over ``count``): linear, and no per-member Python frame. The first
    non-blank fragment is the first one containing ``text``'s first non-blank character, since every fragment
    before it holds only whitespace; when ``text`` starts non-blank it is the first non-empty fragment (read
    without decoding a lazy payload: ``records.first_nonempty``).
    """
    token = visible = -1
    if need_token:
        token = 0 if has_name else first_nonempty(fragments)
    if need_visible:
        if visible_from_start:
            visible = 0
        elif fragments_visible:
            lead = len(text) - len(text.lstrip(JS_WHITESPACE))
            if lead == 0 and text:
                visible = first_nonempty(fragments)
            elif lead < len(text):
                visible = next(compress(count(), map(contains, fragments, repeat(text[lead]))))
    return token, visible


class StreamFold:
    """The block state shared by Chat and Trajectory Assistant: blocks by stream index, the visible-block count,
    and the first-token / first-visible moments. Both update paths keep the same invariants."""

    __slots__ = ("blocks", "visible_blocks", "first_visible_seq", "first_visible_time", "first_token_time")

    def __init__(self, first_token_time: int | None = None) -> None:
        self.blocks: dict[Any, Block] = {}
        self.visible_blocks = 0
        self.first_visible_seq: int | None = None
        self.first_visible_time: int | None = None
        self.first_token_time = first_token_time

    def _changed(self, was: bool, now: bool, seq: int, time: int, token: bool) -> None:
        if was != now:
            self.visible_blocks += 1 if now else -1
        if token and self.first_token_time is None:
            self.first_token_time = time
        if self.visible_blocks > 0 and self.first_visible_seq is None:
            self.first_visible_seq = seq
            self.first_visible_time = time

    def apply_chunk(self, event: SessionEvent) -> tuple[ChunkOutcome, Any]:
        """``updateChunk`` for one scalar ``assistant/chunk``. Returns ``('block', None)`` after a block change,
        ``('usage', usage)`` for a usage chunk, ``('none', None)`` otherwise (``finish``, malformed)."""
        data = event.data
        chunk = data.get("chunk") if type(data) is dict else None
        if type(chunk) is not dict:
            return "none", None
        ctype = chunk.get("type")
        blocks = self.blocks
        if ctype == "text-delta" or ctype == "reasoning-delta":
            kind = "text" if ctype == "text-delta" else "reasoning"
            index = chunk.get("index")
            text = _str(chunk.get("text"))
            old = blocks.get(index)
            was = block_visible(old)
            if type(old) is TextBlock and old.kind == kind:
                blk: TextBlock = old
            else:
                blk = blocks[index] = TextBlock(kind)
            if text:
                blk.parts.append(text)
                if not blk.nonblank and text.strip(JS_WHITESPACE):
                    blk.nonblank = True
            self._changed(was, blk.nonblank, event.seq, event.time, text != "")
            return "block", None
        if ctype == "tool-call-delta":
            index = chunk.get("index")
            old = blocks.get(index)
            was = block_visible(old)
            if type(old) is ToolCallBlock:
                tool: ToolCallBlock = old
            else:
                tool = blocks[index] = ToolCallBlock()
            call_id = chunk.get("id")
            if not tool.call_id and call_id:
                tool.call_id = call_id
            named = "name" in chunk
            if named:
                tool.name = chunk["name"]
            args = _str(chunk.get("argumentsDelta"))
            if args:
                tool.args.append(args)
            self._changed(was, False, event.seq, event.time, args != "" or named)
            return "block", None
        if ctype == "block-start":
            index = chunk.get("index")
            was = block_visible(blocks.get(index))
            btype = chunk.get("blockType")
            new: Block
            if btype == "text" or btype == "reasoning":
                new = TextBlock(btype)
            elif btype == "tool-call":
                new = ToolCallBlock()
            else:
                new = OtherBlock(None)
            blocks[index] = new
            self._changed(was, block_visible(new), event.seq, event.time, False)
            return "block", None
        if ctype == "block-end":
            index = chunk.get("index")
            was = block_visible(blocks.get(index))
            new = blocks[index] = convert_content_block(chunk.get("block"))
            self._changed(was, block_visible(new), event.seq, event.time, False)
            return "block", None
        if ctype == "usage":
            return "usage", chunk.get("usage")
        return "none", None

    def apply_row(self, event: Any) -> None:
        """``updateChunkRun`` for one packed row: the same state as folding its members one by one."""
        data = event.data
        index = data.index
        # A row's index is a JS number: 1.0 and 1 name the same block.
        if type(index) is float and index.is_integer():
            index = int(index)
        blocks = self.blocks
        old = blocks.get(index)
        was = block_visible(old)
        others = self.visible_blocks - (1 if was else 0)
        seq, time = event.seq, event.time
        if type(data) is ToolCallRowData:
            fragments = data.args
            if type(old) is ToolCallBlock:
                tool: ToolCallBlock = old
            else:
                tool = blocks[index] = ToolCallBlock()
            if not tool.call_id:
                tool.call_id = data.id
            has_name = data.name is not UNSET
            if has_name:
                tool.name = data.name
            joined = joined_text(fragments)
            if joined:
                tool.args.append(joined)
            visible_from_start = others > 0
            now = False
            fragments_visible = False
        else:
            fragments = data.texts
            kind = "reasoning" if event.type == "chunkrow/reasoning-chunks" else "text"
            if type(old) is TextBlock and old.kind == kind:
                blk: TextBlock = old
            else:
                blk = blocks[index] = TextBlock(kind)
            visible_from_start = others > 0 or blk.nonblank
            joined = joined_text(fragments)
            if joined:
                blk.parts.append(joined)
                if not blk.nonblank and joined.strip(JS_WHITESPACE):
                    blk.nonblank = True
            now = blk.nonblank
            has_name = False
            fragments_visible = True
        need_token = self.first_token_time is None
        need_visible = self.first_visible_seq is None
        if need_token or need_visible:
            token, visible = row_boundaries(fragments, joined, has_name, need_token, need_visible, visible_from_start,
                                            fragments_visible)
            dt = data.dt
            if token >= 0:
                self.first_token_time = time + (sum(islice(dt, token)) if token else 0)
            if visible >= 0:
                self.first_visible_seq = seq + visible
                self.first_visible_time = time + (sum(islice(dt, visible)) if visible else 0)
        if was != now:
            self.visible_blocks += 1 if now else -1

    def replace_content(self, content: Any) -> None:
        """``assistant/message``: the blocks become the final content; ``visible_blocks`` is recounted."""
        blocks: dict[Any, Block] = {}
        if type(content) is list:
            for i, b in enumerate(content):
                blocks[i] = convert_content_block(b)
        self.blocks = blocks
        self.visible_blocks = sum(1 for b in blocks.values() if block_visible(b))

    def views(self) -> list[BlockView]:
        """The non-empty state blocks in index order."""
        blocks = self.blocks
        try:
            order = sorted(blocks)
        except TypeError:
            order = list(blocks)
        return [blocks[i].view() for i in order]

    def has_evidence(self) -> bool:
        """Interruption evidence: a non-blank text/reasoning block or any other block, tool-call included."""
        for b in self.blocks.values():
            if type(b) is not TextBlock or b.nonblank:
                return True
        return False
