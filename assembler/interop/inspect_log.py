"""What the sessions of one Inspect log share (FORMATS.md §6.1): the eval's recorded fields that go into every
session's header and label, and the log's own records (``Part``) each session keeps as raw events.

Rules: a header field the log does not record is absent, never invented; a label is built from recorded fields
only (``<eval.task> · <id> · epoch <n>``, each part left out when it is unknown). The log header (``header.json``,
or ``_journal/start.json`` with status ``started``) is kept in every session, with a notice when the status is not
``success`` or an error is recorded; the per-sample arrays (summaries, reductions) are split by sample, each entry
kept in its own sample's sessions (a summary as a copy of its sample), a reduction's own fields (scorer, reducer)
in the first session.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final, NamedTuple

from .base import LogBuilder, SessionLog, SourceError, iso_ms, json_type, member_origin
from .inspect_records import EvalErrorRec, EvalSpecRec, Refusal, convert_at

__all__ = ["Part", "LogInfo", "LogRecords", "keep", "error_session", "escape_id"]

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]")


def escape_id(text: str) -> str:
    """``text`` with every character outside ``[A-Za-z0-9._-]`` written as ``%XX`` of its UTF-8 bytes."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8", "surrogatepass")), text)


class Part(NamedTuple):
    """A record of the log (not of a sample), or a sample kept whole, that a session holds as a raw event."""

    origin: dict[str, Any]
    record_type: str
    record: Any
    notice: str | None = None
    duplicate_of: Any = None


def keep(out: LogBuilder, part: Part) -> None:
    """Write ``part`` as one raw event."""
    out.begin(part.origin, part.record_type, None, part.record)
    out.end(notice=part.notice, duplicate_of=part.duplicate_of)


class LogInfo:
    """What every session of one log shares: the format, the file's stem, the eval's fields."""

    def __init__(self, fmt: str, stem: str) -> None:
        self.fmt = fmt
        self.stem = stem
        self.task: str | None = None
        self.model: str | None = None
        self.status: str | None = None
        self.run_id: str | None = None
        self.eval_id: str | None = None
        self.created = 0
        self.scorer_names: list[str] = []  # results.scores[].name (a legacy single ``score`` takes the first)

    def header(self, sample_id: Any, epoch: Any) -> dict[str, Any]:
        """The session header's fields (None ones are left out by ``LogBuilder``)."""
        return {"task": self.task, "model": self.model, "status": self.status, "sampleId": sample_id,
                "epoch": epoch, "runId": self.run_id, "evalId": self.eval_id,
                "createdAt": self.created or None}

    def label(self, sample_id: Any, epoch: Any) -> str:
        parts = [self.task] if self.task else []
        if sample_id is not None:
            parts.append(str(sample_id))
        if epoch is not None:
            parts.append(f"epoch {epoch}")
        return " · ".join(parts)


def error_session(info: LogInfo, key: str, sample_id: Any, epoch: Any, error: SourceError,
                  head: Iterable[Part] = ()) -> tuple[SessionLog, LogBuilder]:
    """The session of a sample that could not be read: the log's records (and the sample, when it decoded) and the
    error. ``sample_id`` and ``epoch`` are what is known of it (None: nothing), its label says where it is when
    they are unknown."""
    out = LogBuilder(info.fmt, f"{info.stem}:{key}", **info.header(sample_id, epoch))
    for p in head:
        keep(out, p)
    result = out.result()
    result.error = error
    label = info.label(sample_id, epoch)
    if sample_id is None:
        label += f" · {error.member or ''}{error.pointer or ''}"
    return SessionLog(key, label.lstrip(" ·"), result), out


class LogRecords:
    """The log's own records, sorted into where they go: ``head`` (every session), ``first`` (the first session,
    or the log's own), ``summaries`` by (escaped id, epoch) and ``reductions`` by escaped id (their samples'
    sessions); ``errors`` the log's own failures, ``warnings`` the rest."""

    def __init__(self, fmt: str, stem: str) -> None:
        self.info = LogInfo(fmt, stem)
        self.head: list[Part] = []  # in every session
        self.first: list[Part] = []  # in the first session (or the log's own)
        self.summaries: dict[tuple[str, int], list[Part]] = {}
        self.reductions: dict[str, list[Part]] = {}
        self.errors: list[SourceError] = []
        self.warnings: list[str] = []

    def warn(self, member: str | None, ptr: str, message: str) -> None:
        self.warnings.append(f"{member}:{ptr or '/'}: {message}" if member else f"{ptr or '/'}: {message}")

    # -- the log's records ------------------------------------------------------------------------------------

    def take_header(self, value: Any, member: str | None, record_type: str, *, started: bool = False) -> None:
        info = self.info
        if type(value) is not dict:
            self.warn(member, "", f"the log header is {json_type(value)}, not an object; kept as a raw record")
            self.head.append(Part(member_origin(member, ""), record_type, value))
            return
        status = "started" if started else value.get("status")
        info.status = status if type(status) is str else None
        if not started and "status" in value and info.status is None:
            self.warn(member, "/status", f"status is {json_type(value['status'])}, not a string")
        spec = convert_at(value.get("eval"), EvalSpecRec, "/eval")
        if isinstance(spec, Refusal):
            self.warn(member, spec.pointer, f"eval not understood ({spec.reason}); task and model unknown")
        else:
            info.task, info.model, info.run_id, info.eval_id = spec.task, spec.model, spec.run_id, spec.eval_id
            info.created = iso_ms(spec.created)
        results = value.get("results")
        scores = results.get("scores") if type(results) is dict else None
        if type(scores) is list:
            info.scorer_names = [s["name"] for s in scores if type(s) is dict and type(s.get("name")) is str]
        notes = []
        if info.status is not None and info.status != "success":
            notes.append(f"Eval status: {info.status}")
        if value.get("error") is not None:
            error = convert_at(value["error"], EvalErrorRec, "/error")
            if isinstance(error, Refusal):
                notes.append("Eval error (not understood)")
                self.warn(member, error.pointer, f"error not understood ({error.reason})")
            else:
                notes.append(f"Eval error: {error.message}")
        self.head.append(Part(member_origin(member, ""), record_type, value, "; ".join(notes) or None))

    def take_summaries(self, value: Any, member: str | None, base: str, record_type: str) -> None:
        if type(value) is not list:
            self.warn(member, base, f"expected an array, got {json_type(value)}; kept as a raw record")
            self.first.append(Part(member_origin(member, base), record_type, value))
            return
        for k, entry in enumerate(value):
            origin = member_origin(member, f"{base}/{k}")
            if type(entry) is dict and type(entry.get("id")) in (int, str) and type(entry.get("epoch")) is int:
                key = (escape_id(str(entry["id"])), entry["epoch"])
                self.summaries.setdefault(key, []).append(Part(origin, record_type, entry))
            else:
                self.warn(member, f"{base}/{k}", "summary without an id and epoch; kept as a raw record")
                self.first.append(Part(origin, record_type, entry))

    def take_reductions(self, value: Any, member: str | None, base: str) -> None:
        """Reductions: each entry of a reduction's ``samples`` goes to its sample's sessions; the reduction
        itself (scorer, reducer), without that array, to the first session."""
        if type(value) is not list:
            self.warn(member, base, f"expected an array, got {json_type(value)}; kept as a raw record")
            self.first.append(Part(member_origin(member, base), "reductions", value))
            return
        for k, reduction in enumerate(value):
            ptr = f"{base}/{k}"
            entries = reduction.get("samples") if type(reduction) is dict else None
            if type(entries) is not list:
                self.warn(member, ptr, "reduction without a samples array; kept as a raw record")
                self.first.append(Part(member_origin(member, ptr), "reduction", reduction))
                continue
            own = {name: v for name, v in reduction.items() if name != "samples"}
            self.first.append(Part(member_origin(member, ptr), "reduction", own))
            for m, entry in enumerate(entries):
                origin = member_origin(member, f"{ptr}/samples/{m}")
                if type(entry) is dict and type(entry.get("sample_id")) in (int, str):
                    self.reductions.setdefault(escape_id(str(entry["sample_id"])), []).append(
                        Part(origin, "reduction/sample", entry))
                else:
                    self.warn(member, f"{ptr}/samples/{m}", "reduction entry without a sample_id; kept raw")
                    self.first.append(Part(origin, "reduction/sample", entry))
