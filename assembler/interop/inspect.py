"""Inspect AI eval logs (FORMATS.md §6): a ``.eval`` zip or a ``.json`` document, one task run over samples and
epochs, read as one session per (sample id, epoch).

Rules: sessions are listed in Inspect's order (epoch, then id: integer ids compare as zero-filled numbers, string
ids as themselves). ``SessionLog.key`` is ``<id>_epoch_<n>`` with every character of the id outside
``[A-Za-z0-9._-]`` written as ``%XX`` (its UTF-8 bytes), so the key is one safe URL or path segment and different
ids give different keys (a second sample with the same key, possible only in a hand-made ``.json``, gets ``~2``).
``label`` is ``<eval.task> · <id> · epoch <n>``; no title event is written. The header of every session carries
``id`` (``<file stem>:<key>``), ``format``, ``task``, ``model``, ``status`` (the log's), ``sampleId``, ``epoch``,
``runId``, ``evalId`` and ``createdAt`` (the sample's ``started_at``, else the eval's ``created``) when recorded.

Each session keeps the log's own records as raw events: the header (``header.json``, or ``_journal/start.json``
with status ``started`` while the run is being written; in a ``.json`` log the document without its per-sample
arrays), shown as a notice when the status is not ``success`` or an error is recorded; its own entries of the
per-sample arrays (summaries, reductions); and the first session also every log record that belongs to no sample.
A log with no sample at all is one session with key ``""`` holding only the log's records.

Failures: both readers raise ``SourceError`` only when nothing can be read (not a zip; not JSON, with the line and
column; not an object). Anything else is reported where the sessions are: a sample that cannot be read is a
session of its key (from the member name) whose ``result.error`` is a ``SourceError`` with ``member`` and
``pointer``; a failure of the log itself (a cut-off zip whose cut is not in a sample, an unreadable header) is on a
last session with key ``""`` (``location`` is ``MEMBER:/pointer``, what an edge prints between ``FILE:`` and
``: error:``). Everything read completely before the failure is in the sessions before it. Records of unexpected
types are kept raw with a warning naming ``MEMBER:/pointer`` (``result.warnings``). ``log_errors`` lists them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from ..formats import session_stem
from .base import LogBuilder, SessionLog, SourceError, json_type, member_origin
from .inspect_log import LogRecords, Part, error_session, escape_id, keep
from .inspect_records import DocumentError, decode_document
from .inspect_sample import SampleReader
from .inspect_zip import EvalZip, ZipDamage

__all__ = ["read_eval", "read_json", "sample_key", "log_errors", "LOG_KEY"]

LOG_KEY: Final = ""
"""The key of the session that holds a log's own records when it has no sample or a failure of its own."""

_MEMBER: Final = re.compile(r"samples/(.*)_epoch_(\d+)\.json")


def sample_key(sample_id: int | str, epoch: int) -> str:
    """``<id>_epoch_<n>``, the id escaped into one URL- and path-safe segment."""
    return f"{escape_id(str(sample_id))}_epoch_{epoch}"


def _order(sample_id: Any, epoch: Any) -> tuple[int, str]:
    """Inspect's ``sort_samples`` key: epoch, then the id (an integer zero-filled to 20 digits); a sample whose
    epoch is unknown (unreadable) after the others."""
    epoch_n = epoch if type(epoch) is int else 1 << 62
    return epoch_n, str(sample_id).zfill(20) if type(sample_id) is int else str(sample_id)


def log_errors(sessions: Iterable[SessionLog]) -> list[SourceError]:
    """Every failure the reader reported, in session order."""
    return [s.result.error for s in sessions if isinstance(s.result.error, SourceError)]


class _Log(LogRecords):
    """The records of one log and the sessions made so far, for both containers."""

    def __init__(self, fmt: str, file: str) -> None:
        super().__init__(fmt, session_stem(file))
        self.sessions: list[tuple[tuple[int, str], SessionLog, LogBuilder]] = []
        self.keys: set[str] = set()
        self.used_ids: set[str] = set()  # escaped ids of the samples read (their reductions were given out)

    # -- samples ------------------------------------------------------------------------------------------------

    def sample(self, value: Any, member: str | None, base: str, fallback_key: str, fallback_id: Any,
               fallback_epoch: Any, head: list[Part]) -> None:
        """Read one decoded sample into a session (or an error session when its id and epoch are unusable)."""
        info = self.info
        problem = None
        if type(value) is not dict:
            problem = (base, f"expected a sample object, got {json_type(value)}")
        elif type(value.get("id")) not in (int, str):
            problem = (base + "/id", f"sample id is {json_type(value.get('id'))}, not an integer or a string")
        elif type(value.get("epoch")) is not int:
            problem = (base + "/epoch", f"sample epoch is {json_type(value.get('epoch'))}, not an integer")
        if problem is not None:  # the sample is kept whole as a raw record beside the error
            error = SourceError(problem[1], member=member, pointer=problem[0])
            self.failed(fallback_key, fallback_id, fallback_epoch, error,
                        [*head, Part(member_origin(member, base), "sample", value)])
            return
        assert type(value) is dict
        sid, epoch = value["id"], value["epoch"]
        key = self._unique(sample_key(sid, epoch), member, base)
        escaped = escape_id(str(sid))
        tail = self.summaries.pop((escaped, epoch), [])
        tail += self.reductions.get(escaped, [])
        dup = member_origin(member, base)
        tail = [Part(p.origin, p.record_type, p.record, p.notice, dup) if p.record_type.endswith("summary")
                else p for p in tail]
        session, builder = SampleReader(info, key, value, member, base, [*self.head, *head], tail).read()
        self.used_ids.add(escaped)
        self.sessions.append((_order(sid, epoch), session, builder))

    def failed(self, key: str, sample_id: Any, epoch: Any, error: SourceError, head: Iterable[Part] = ()) -> None:
        key = self._unique(key, error.member, error.pointer or "")
        session, builder = error_session(self.info, key, sample_id, epoch, error, [*self.head, *head])
        self.sessions.append((_order(sample_id, epoch), session, builder))

    def _unique(self, key: str, member: str | None, ptr: str) -> str:
        if key in self.keys:
            n = 2
            while f"{key}~{n}" in self.keys:
                n += 1
            self.warn(member, ptr, f"a second sample with key {key}; this one is {key}~{n}")
            key = f"{key}~{n}"
        self.keys.add(key)
        return key

    # -- the result ---------------------------------------------------------------------------------------------

    def finish(self) -> list[SessionLog]:
        self.sessions.sort(key=lambda s: s[0])
        first = list(self.first)
        for parts in self.summaries.values():
            first += parts
        for sid, parts in self.reductions.items():
            if sid not in self.used_ids:
                first += parts
        out = [s for _, s, _ in self.sessions]
        if self.errors or not out:
            own = LogBuilder(self.info.fmt, self.info.stem, **self.info.header(None, None))
            for p in [*self.head, *first]:
                keep(own, p)
            result = own.result()
            result.warnings.extend(self.warnings)
            if self.errors:
                result.error = self.errors[0]
                result.warnings.extend(f"{e.location}: {e.message}" for e in self.errors[1:])
            label = f"{self.info.task} · log" if self.info.task else "log"
            out.append(SessionLog(LOG_KEY, label, result))
            return out
        _, session, builder = self.sessions[0]
        for p in first:
            keep(builder, p)
        session.result.event_count = len(session.result.records)
        for _, s, _ in self.sessions:
            s.result.warnings[:0] = self.warnings
        return out


# -- .eval ---------------------------------------------------------------------------------------------------------


_LOG_MEMBERS: Final = {"header.json", "_journal/start.json", "summaries.json", "reductions.json"}


def read_eval(data: bytes, file: str) -> list[SessionLog]:
    """The sessions of an Inspect ``.eval`` log (``file`` names it; its stem starts each session's id).

    Raises:
        SourceError: ``data`` is not a zip archive at all.
    """
    data = bytes(data)
    archive = EvalZip(data)
    if not archive.whole and not data.startswith(b"PK\x03\x04"):
        raise SourceError("not a zip archive (an Inspect .eval log is one)")
    log = _Log("inspect-eval", file)
    names = archive.names
    last: dict[str, int] = {}
    for i, name in enumerate(names):
        last[name] = i

    def member_json(i: int) -> Any:
        name = names[i]
        try:
            return decode_document(archive.read(i))
        except ZipDamage as exc:
            raise SourceError(exc.reason, member=name, pointer="") from None
        except DocumentError as exc:
            raise SourceError(str(exc), member=name, pointer="") from None

    def log_member(name: str) -> Any:
        if name not in last:
            return None
        try:
            return member_json(last[name])
        except SourceError as exc:
            log.errors.append(exc)
            return None

    header = log_member("header.json")
    start = log_member("_journal/start.json")
    if header is not None:
        log.take_header(header, "header.json", "header")
        if start is not None:
            log.first.append(Part(member_origin("_journal/start.json", ""), "start", start, None, "header.json"))
    elif start is not None:
        log.take_header(start, "_journal/start.json", "start", started=True)
    elif not log.errors:
        log.warn(None, "", "neither header.json nor _journal/start.json: task, model and status unknown")
    value = log_member("reductions.json")
    if value is not None:
        log.take_reductions(value, "reductions.json", "")
    value = log_member("summaries.json")
    if value is not None:
        log.take_summaries(value, "summaries.json", "", "summary")
    for i, name in enumerate(names):
        if name.startswith("_journal/summaries/"):
            value = _member_or_error(log, member_json, i)
            if value is not None:
                log.take_summaries(value, name, "", "journal/summary")
        elif name not in _LOG_MEMBERS and not name.startswith("samples/") and not name.endswith("/"):
            _other_member(log, archive, i, name)
        elif name in _LOG_MEMBERS and last[name] != i:
            log.first.append(Part(member_origin(name, ""), "member", _member_or_error(log, member_json, i),
                                  None, name))
    superseded: dict[str, list[Part]] = {}
    for i, name in enumerate(names):
        if not (name.startswith("samples/") and name.endswith(".json")):
            continue
        if last[name] != i:  # a re-logged sample: the later member of this name is the sample
            try:
                copy = member_json(i)
            except SourceError as exc:
                copy = {"unreadable": exc.message}
            log.warn(name, "", "an earlier copy of this member (a later one of the same name replaces it); "
                               "kept as a raw record")
            superseded.setdefault(name, []).append(Part(member_origin(name, ""), "sample/superseded", copy,
                                                        None, name))
            continue
        key, sid, epoch = _member_key(name)
        try:
            value = member_json(i)
        except SourceError as exc:
            log.failed(key, sid, epoch, exc, superseded.get(name, []))
            continue
        log.sample(value, name, "", key, sid, epoch, superseded.get(name, []))
    damage = archive.damage
    if damage is not None:
        error = SourceError(damage.reason, member=damage.member, pointer="")
        if damage.member is not None and _MEMBER.fullmatch(damage.member):
            key, sid, epoch = _member_key(damage.member)
            log.failed(key, sid, epoch, error)
        else:
            log.errors.append(error)
    return log.finish()


def _member_or_error(log: _Log, member_json: Any, i: int) -> Any:
    try:
        return member_json(i)
    except SourceError as exc:
        log.errors.append(exc)
        return None


def _other_member(log: _Log, archive: EvalZip, i: int, name: str) -> None:
    """A member this reader does not map (config updates, members of later versions): kept raw, decoded when it
    is JSON."""
    try:
        raw = archive.read(i)
    except ZipDamage as exc:
        log.errors.append(SourceError(exc.reason, member=name, pointer=""))
        return
    try:
        record: Any = decode_document(raw)
    except DocumentError:
        record = raw.decode("utf-8", "replace")
        log.warn(name, "", "member is not JSON; kept as text in a raw record")
    log.first.append(Part(member_origin(name, ""), "member", record))


def _member_key(name: str) -> tuple[str, Any, Any]:
    """(key, id, epoch) from a sample member's name ``samples/<id>_epoch_<n>.json`` (an all-digit id read as an
    integer, as Inspect's names do not say)."""
    found = _MEMBER.fullmatch(name)
    if found is None:
        stem = name[len("samples/"):].removesuffix(".json")
        return escape_id(stem), stem, None
    text, epoch = found.group(1), int(found.group(2))
    sid: Any = int(text) if text.isdigit() and len(text) < 20 else text
    return sample_key(sid, epoch), sid, epoch


# -- .json ---------------------------------------------------------------------------------------------------------


def read_json(data: bytes, file: str) -> list[SessionLog]:
    """The sessions of an Inspect ``.json`` log.

    Raises:
        SourceError: not JSON (``line`` and the column in the message) or not an object.
    """
    try:
        doc = decode_document(bytes(data))
    except DocumentError as exc:
        if exc.line is None:
            raise SourceError(exc.reason, pointer="") from None
        detail = f": {exc.detail}" if exc.detail else ""
        raise SourceError(f"{exc.reason} at column {exc.column}{detail}", line=exc.line) from None
    if type(doc) is not dict:
        raise SourceError(f"expected a JSON object (an Inspect log), got {json_type(doc)}", pointer="")
    log = _Log("inspect-json", file)
    head = {k: v for k, v in doc.items() if k not in ("samples", "reductions")}
    results = head.get("results")
    if type(results) is dict and "sample_reductions" in results:
        head["results"] = {k: v for k, v in results.items() if k != "sample_reductions"}
        log.take_reductions(results["sample_reductions"], None, "/results/sample_reductions")
    log.take_header(head, None, "header")
    if "reductions" in doc:
        log.take_reductions(doc["reductions"], None, "/reductions")
    samples = doc.get("samples")
    if samples is not None and type(samples) is not list:
        log.errors.append(SourceError(f"samples is {json_type(samples)}, not an array", pointer="/samples"))
        log.first.append(Part(member_origin(None, "/samples"), "samples", samples))
        samples = None
    for i, value in enumerate(samples or []):
        ptr = f"/samples/{i}"
        log.sample(value, None, ptr, f"_sample_{i}", None, None, [])
    return log.finish()

