"""Each Codex message once (FORMATS.md §5.7): pairing a visible message's UI copy (``event_msg``) with its model
copy (``response_item``), whichever comes first.

Rules: Codex writes the two copies of a message next to each other, in either order. A copy that comes first and may
pair with the next line is held (``hold``) until that line arrives: an ``agent_message``/``agent_reasoning`` waits
for its ``response_item`` (which is then shown, the held copy becoming raw with ``duplicateOf`` the block showing
it), an unmarked ``response_item`` user message waits for the ``user_message`` it copies. Several ``agent_reasoning``
lines in a row wait together (one per summary part). When the next line is not the partner, the held copies are
written first, as what they would be alone: a UI copy as the step's block (the fallback), a user item as injected
context. A copy that comes second pairs with the shown copy still unpaired in the same step (``duplicateOf`` that
seq). ``patch`` fills ``duplicateOf`` of the held copies once the current line has shown their partner: all within
one ``record`` call, so no event changes after it was handed out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import line_origin
from .codex_content import blocks_of, context_form
from .codex_records import AgentText, Message, Reasoning

if TYPE_CHECKING:
    from .codex import CodexReader

__all__ = ["Held", "Copies"]

_UI = {"agent_message": "message", "agent_reasoning": "reasoning", "agent_reasoning_raw_content": "reasoning_raw"}
_REASONING = frozenset({"reasoning", "reasoning_raw"})


class Held:
    """One decoded line: where it is, what it is, its text and values (``copy`` names a held copy's kind)."""

    __slots__ = ("line", "kind", "rtype", "text", "value", "record", "payload", "time", "copy")

    def __init__(self, line: int, kind: tuple[str, str], rtype: str, text: str, value: Any, record: Any,
                 payload: Any, time: int) -> None:
        self.line = line
        self.kind = kind
        self.rtype = rtype
        self.text = text
        self.value = value
        self.record = record
        self.payload = payload
        self.time = time
        self.copy = ""


def _capacity(h: Held) -> dict[str, int]:
    """How many held copies of each kind the line ``h`` is the partner of."""
    rec = h.record
    if isinstance(rec, Message) and rec.role == "assistant":
        return {"message": 1 if any(p.text is not None for p in rec.content or ()) else 0}
    if isinstance(rec, Reasoning):
        return {"reasoning": len(rec.summary or ()),
                "reasoning_raw": sum(1 for p in rec.content or () if p.text is not None)}
    if h.kind == ("event_msg", "user_message") and rec is not None:
        return {"prompt": 1}
    return {}


class Copies:
    """The held copies and the shown copies still waiting for their twin, for one reader."""

    def __init__(self, reader: CodexReader) -> None:
        self.reader = reader
        self.held: list[Held] = []
        self.shown_first: dict[str, list[int]] = {"message": [], "reasoning": [], "reasoning_raw": []}  # items
        self.fallbacks: dict[str, list[int]] = {"message": [], "reasoning": [], "reasoning_raw": []}  # UI copies
        self.prompt_seq: int | None = None  # a prompt shown from user_message, its response_item copy not seen
        self._paired: list[tuple[int, Held]] = []
        self._targets: dict[int, int] = {}  # raw seq -> the seq showing its message

    @property
    def pending(self) -> bool:
        return bool(self.held)

    # -- before a line is written ----------------------------------------------------------------------------

    def hold(self, h: Held) -> bool:
        """Hold ``h`` when it is a first copy that may pair with the next line (writing incompatible held copies
        first); False when ``h`` is to be written now."""
        copy = _UI.get(h.kind[1]) if h.kind[0] == "event_msg" and h.record is not None else None
        if copy is not None:
            if self.shown_first[copy]:
                return False  # the second copy: its handler marks it a duplicate
            if self.held and not (copy in _REASONING and self.held[0].copy in _REASONING):
                self.flush()
        elif (h.kind[0] == "response_item" and isinstance(h.record, Message) and h.record.role == "user"
              and self.prompt_seq is None and context_form("user", h.record.content) is None):
            copy = "prompt"
            self.flush()
        else:
            return False
        h.copy = copy
        self.held.append(h)
        return True

    def settle(self, h: Held) -> list[tuple[int, Held]]:
        """Write the held copies before ``h``: those ``h`` pairs with as raw (``duplicateOf`` filled by ``patch``),
        the others as shown. Returns the paired ones."""
        held, self.held = self.held, []
        if not held:
            return []
        room = _capacity(h)
        out = self.reader.out
        paired: list[tuple[int, Held]] = []
        for c in held:
            if room.get(c.copy, 0) > 0:
                room[c.copy] -= 1
                out.begin(line_origin(c.line), c.rtype, c.text, c.value)
                seq = out.end(duplicate_of=-1, time=c.time)
                assert seq is not None
                paired.append((seq, c))
            else:
                self._show(c)
        self._paired = paired
        self._targets = {}
        return paired

    def flush(self) -> None:
        """Write every held copy as shown (end of input, or before an error or an incompatible line)."""
        held, self.held = self.held, []
        for c in held:
            self._show(c)

    def _show(self, c: Held) -> None:
        r = self.reader
        out = r.out
        out.begin(line_origin(c.line), c.rtype, c.text, c.value)
        if c.copy == "prompt":
            m: Message = c.record
            r.inject(blocks_of(m.content, c.payload.get("content")), "context", c.time, m.id)
        else:
            rec: AgentText = c.record
            text = rec.message if c.copy == "message" else rec.text
            block: dict[str, Any] = {"type": "text" if c.copy == "message" else "reasoning", "text": text or ""}
            if rec.phase is not None and c.copy == "message":
                block["phase"] = rec.phase
            r.open_output(c.time)
            self.model_output()
            self.fallbacks[c.copy].append(out.block(block, c.time))
        out.end(time=c.time)

    # -- while a line is written -----------------------------------------------------------------------------

    def _pair(self, copy: str, seqs: list[int]) -> bool:
        """Give the paired held copies of kind ``copy`` their targets; True when there were any."""
        mine = [seq for seq, c in self._paired if c.copy == copy]
        if seqs:
            for i, raw in enumerate(mine):
                self._targets[raw] = seqs[min(i, len(seqs) - 1)]
        return bool(mine)

    def assistant_text(self, h: Held, m: Message) -> int | None:
        """An assistant ``message`` item: shown (its blocks), or the duplicate of a fallback already shown."""
        blocks = blocks_of(m.content, h.payload.get("content"), phase=m.phase)
        if not blocks:
            return None
        if not any(c.copy == "message" for _, c in self._paired) and self.fallbacks["message"]:
            return self.fallbacks["message"].pop(0)
        r = self.reader
        r.open_output(h.time, m.id)
        self.model_output()
        seqs = [r.out.block(b, h.time) for b in blocks]
        texts = [s for s, b in zip(seqs, blocks, strict=True) if b.get("type") == "text"] or seqs
        if not self._pair("message", texts[:1]):
            self.shown_first["message"].append(texts[0])
        return None

    def reasoning(self, h: Held, rec: Reasoning) -> int | None:
        """A ``reasoning`` item: one reasoning block per summary part (else per raw content part, else one empty
        block); ``encrypted_content`` is kept as the message's replay state, never shown."""
        summary = [p.text for p in rec.summary or ()]
        raw = [p.text for p in rec.content or () if p.text is not None]
        has_held = any(c.copy in _REASONING for _, c in self._paired)
        if not has_held and (self.fallbacks["reasoning"] or self.fallbacks["reasoning_raw"]):
            first = (self.fallbacks["reasoning"] or self.fallbacks["reasoning_raw"])[0]
            for kind in _REASONING:
                del self.fallbacks[kind][:len(summary if kind == "reasoning" else raw) or 1]
            return first
        r = self.reader
        r.open_output(h.time, rec.id)
        self.model_output()
        texts = summary or raw or [""]
        seqs = [r.out.block({"type": "reasoning", "text": t}, h.time) for t in texts]
        if rec.encrypted_content is not None:
            r.replay({"index": len(r.out.step_blocks) - len(seqs), "encryptedContent": rec.encrypted_content})
        summary_seqs = seqs if summary else []
        raw_seqs = seqs if not summary and raw else seqs[:1] * len(raw)
        if not (self._pair("reasoning", summary_seqs) | self._pair("reasoning_raw", raw_seqs)):
            self.shown_first["reasoning"] += summary_seqs
            self.shown_first["reasoning_raw"] += raw_seqs
        return None

    def ui_copy(self, h: Held, rec: AgentText) -> int | None:
        """A UI copy written after its item: the duplicate of the block that shows it."""
        queue = self.shown_first[_UI[h.kind[1]]]
        return queue.pop(0) if queue else None

    def prompt_copy(self) -> int | None:
        """An unmarked user item after its ``user_message``: the duplicate of that prompt."""
        seq, self.prompt_seq = self.prompt_seq, None
        return seq

    def shown_prompt(self, seq: int) -> None:
        if not self._pair("prompt", [seq]):
            self.prompt_seq = seq

    def model_output(self) -> None:
        self.prompt_seq = None  # a prompt's copy comes before the model answers it

    def new_step(self) -> None:
        for queue in (*self.shown_first.values(), *self.fallbacks.values()):
            queue.clear()

    def new_turn(self) -> None:
        self.new_step()
        self.prompt_seq = None

    # -- after a line is written -----------------------------------------------------------------------------

    def patch(self, paired: list[tuple[int, Held]]) -> None:
        """Fill ``duplicateOf`` of the raw copies ``settle`` wrote, now that their partner is shown."""
        events = self.reader.out.events
        for raw, _ in paired:
            target = self._targets.get(raw)
            data = events[raw]["data"]
            if target is None:
                del data["duplicateOf"]  # its partner showed nothing: a raw record like any other
            else:
                data["duplicateOf"] = target
        self._paired = []
        self._targets = {}
