"""The parts of an Inspect sample around its conversation (FORMATS.md §6.2-6.3): its attachments table, the target
and scores shown as notices, the limit, the error that ends the last turn, and the raw records of the rest; and the
state and helpers the sample's reader shares with them (``SampleReader`` extends ``SampleParts``).

Rules: the target is a notice (written before the first score event, else after the conversation); a sample score
is a notice unless a final score event showed the same value, answer and explanation (then a copy, ``duplicateOf``
its event), likewise a limit and its ``sample_limit`` event; ``error`` ends the last turn with ``{kind:'error',
error:{message, code:'sample-error'}}`` (a turn is opened for it when none is), and otherwise the sample's remaining
fields (id, epoch, times, usage: the record the end comes from) end it as ``completed``, at ``completed_at`` when
recorded. ``output``, ``metadata``, ``store``, ``error_retries``, ``attachments`` and ``events_data`` are raw
records, references resolved except in the last two (they are the tables references point into).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec

from ..jsontext import encode_with
from .base import LogBuilder, iso_ms, json_type, member_origin, pointer
from .inspect_attachments import Attachments
from .inspect_content import score_text, value_text
from .inspect_log import LogInfo, Part, keep
from .inspect_records import EvalErrorRec, LimitRec, Refusal, ScoreEventRec, ScoreRec, convert_at

__all__ = ["SampleParts", "record_text"]

OWN_PARTS: Final = frozenset({"messages", "events", "transcript", "input", "target", "scores", "score", "output",
                              "limit", "metadata", "store", "attachments", "events_data", "error", "error_retries"})
"""The sample fields that are records of their own; the others make up the ``sample`` record."""

_encode: Final = msgspec.json.encode


def record_text(value: Any) -> str:
    """A record's original JSON, compact (what ``interop/source`` keeps)."""
    return encode_with(_encode, value).decode("utf-8")


class SampleParts:
    """One sample's session being written: the builder, the attachments, where the sample is, its warnings."""

    def __init__(self, info: LogInfo, key: str, sample: dict[str, Any], member: str | None, base: str,
                 tail: Iterable[Part] = ()) -> None:
        self.info = info
        self.key = key
        self.sample = sample
        self.member = member
        self.base = base
        self.tail = tail
        self.warnings: list[str] = []
        self.id = sample["id"]
        self.epoch = sample["epoch"]
        self.out = LogBuilder(info.fmt, f"{info.stem}:{key}", **info.header(self.id, self.epoch))
        started = iso_ms(sample.get("started_at"))
        if started:
            self.out.header["createdAt"] = started
        self.att = Attachments(self._attachments(), self.located)
        self.shown_scores: list[tuple[ScoreEventRec, str]] = []  # score events written, with their pointers
        self.shown_limits: dict[str, str] = {}  # limit type -> the pointer of its sample_limit event
        self.target_shown = False
        self.events_key = "events"

    # -- helpers ------------------------------------------------------------------------------------------------

    def located(self, ptr: str) -> str:
        return f"{self.member}:{ptr or '/'}" if self.member is not None else (ptr or "/")

    def warn(self, ptr: str, message: str) -> None:
        self.warnings.append(f"{self.located(ptr)}: {message}")

    def local(self, ptr: str) -> str:
        """An id for a record that has none: its pointer inside the sample, after the session key (the same in a
        ``.eval`` member and in the ``.json`` log it converts to)."""
        return self.key + ptr[len(self.base):]

    def origin(self, ptr: str) -> dict[str, Any]:
        return member_origin(self.member, ptr)

    def raw(self, ptr: str, record_type: str, record: Any, *, notice: str | None = None,
            duplicate_of: Any = None, time: int = 0, used_by: list[int] | None = None) -> None:
        """One raw event for the record at ``ptr``. ``used_by`` lists the events of other groups that took fields
        from it (the step a model call gave its usage and times): written as ``usedBy`` beside the record."""
        self.out.begin(self.origin(ptr), record_type, None, record)
        seq = self.out.end(notice=notice, duplicate_of=duplicate_of, time=time)
        if used_by and seq is not None:
            data = self.out.events[seq]["data"]
            data["usedBy"] = used_by

    def _attachments(self) -> dict[str, str]:
        s = self.sample
        ptr = self.base + "/attachments"
        table = s.get("attachments")
        if table is None and type(s.get("transcript")) is dict:
            table = s["transcript"].get("content")
            ptr = self.base + "/transcript/content"
        if table is None:
            return {}
        if type(table) is not dict:
            self.warn(ptr, f"attachments are {json_type(table)}, not an object; references stay unresolved")
            return {}
        bad = [k for k, v in table.items() if type(v) is not str]
        if bad:
            self.warn(ptr + pointer(bad[0]), f"{len(bad)} attachment(s) not a string; not used")
            return {k: v for k, v in table.items() if type(v) is str}
        return table

    # -- the sample's own parts ---------------------------------------------------------------------------------

    def target(self) -> None:
        self.target_shown = True
        s = self.sample
        if "target" in s:
            ptr = self.base + "/target"
            target = self.att.resolve(s["target"], ptr)
            self.raw(ptr, "sample/target", target, notice=f"Target: {value_text(target)}")

    def write_tail(self) -> None:
        s = self.sample
        base = self.base
        if not self.target_shown:
            self.target()
        self._scores()
        if "output" in s:
            self.raw(base + "/output", "sample/output", self.att.resolve(s["output"], base + "/output"))
        if s.get("limit") is not None:
            self._limit(s["limit"], base + "/limit")
        for name in ("metadata", "store", "error_retries"):
            if name in s:
                self.raw(base + "/" + name, f"sample/{name}", self.att.resolve(s[name], f"{base}/{name}"))
        if "attachments" in s:
            self.raw(base + "/attachments", "sample/attachments", s["attachments"])
        if "events_data" in s:
            self.raw(base + "/events_data", "sample/events_data", s["events_data"])
        if "transcript" in s:  # before 0.3.4x; its events were read as the events when ``events`` is absent
            legacy = s["transcript"]
            if self.events_key != "events" and type(legacy) is dict:
                legacy = {k: v for k, v in legacy.items() if k != "events"}
            self.raw(base + "/transcript", "sample/transcript", legacy)
        for p in self.tail:
            keep(self.out, p)
        end = iso_ms(s.get("completed_at"))
        if s.get("error") is not None:
            self._error(s["error"], base + "/error", end)
        rest = {k: v for k, v in s.items() if k not in OWN_PARTS}
        self.out.begin(self.origin(base), "sample", None, rest)
        if s.get("error") is None and self.out.turn_open:
            self.out.end_turn({"kind": "completed"}, end)
        self.out.end(time=end)

    def _scores(self) -> None:
        s = self.sample
        base = self.base
        scores = s.get("scores")
        if scores is None and s.get("score") is not None:  # before ``scores``: one score of the first scorer
            scores = {self.info.scorer_names[0] if self.info.scorer_names else "score": s["score"]}
            base_ptr = base + "/score"
            single = True
        else:
            base_ptr = base + "/scores"
            single = False
        if scores is None:
            return
        if type(scores) is not dict:
            self.warn(base_ptr, f"scores are {json_type(scores)}, not an object; kept as a raw record")
            self.raw(base_ptr, "sample/scores", scores)
            return
        for name, value in scores.items():
            ptr = base_ptr if single else base_ptr + pointer(name)
            score = convert_at(value, ScoreRec, ptr)
            if isinstance(score, Refusal):
                self.warn(score.pointer, f"score not understood ({score.reason}); kept as a raw record")
                self.raw(ptr, "sample/score", value)
                continue
            explanation = self.att.resolve(score.explanation, ptr + "/explanation")
            dup = next((p for ev, p in self.shown_scores if not ev.intermediate and ev.scorer in (None, name)
                        and ev.score.value == score.value and ev.score.answer == score.answer
                        and self.att.resolve(ev.score.explanation, p + "/score/explanation") == explanation), None)
            notice = None if dup else score_text(f"Score {name}", score.value, score.answer, explanation)
            self.raw(ptr, "sample/score", self.att.resolve(value, ptr), notice=notice, duplicate_of=dup)

    def _limit(self, value: Any, ptr: str) -> None:
        limit = convert_at(value, LimitRec, ptr)
        if isinstance(limit, Refusal):
            self.warn(limit.pointer, f"limit not understood ({limit.reason}); kept as a raw record")
            self.raw(ptr, "sample/limit", value)
            return
        dup = self.shown_limits.get(limit.type)
        amount = f" ({limit.limit:g})" if limit.limit is not None else ""
        self.raw(ptr, "sample/limit", value, notice=None if dup else f"{limit.type} limit{amount} reached",
                 duplicate_of=dup)

    def _error(self, value: Any, ptr: str, time: int) -> None:
        error = convert_at(value, EvalErrorRec, ptr)
        if isinstance(error, Refusal):
            self.warn(error.pointer, f"sample error not understood ({error.reason}); kept as a raw record")
            self.raw(ptr, "sample/error", value)
            return
        out = self.out
        out.begin(self.origin(ptr), "sample/error", record_text(value))
        if not out.turn_open:
            out.start_turn(time)
        out.end_turn({"kind": "error", "error": {"message": error.message, "code": "sample-error"}}, time)
        out.end(time=time)
