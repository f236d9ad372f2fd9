"""``convert``, ``messages``, ``check`` and ``repair``: the session model and its stores on whole files.

Every command loads through ``store.open.load_any`` (``.jsonl``, ``.jsonl.zst``, ``.sqlite``/``.db``) and writes
through ``save_any`` or ``_output.output`` (atomic: a failed or interrupted write leaves no half-written output, and
an output is never one of the inputs). Problems go to stderr as ``FILE: error: message`` with exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..chunk_rows import expand_records, pack_chunk_runs
from ..errors import AssemblerError
from ..invariants import check_events
from ..jsontext import format_json
from ..logfile import LoadResult
from ..records import encode
from ..repair import interrupted_turn_closers
from ..session import Session
from ..store.atomic import OutputError
from ..store.open import save_any
from ._common import load
from ._output import error, error_from, output, preflight, print_stdout

__all__ = ["register", "load_session_file"]


def register(sub: Any) -> None:
    p = sub.add_parser("convert", help="copy a session between formats by extension (.jsonl, .jsonl.zst, "
                                       ".sqlite/.db); lossless both ways")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("messages", help="the messages the model sees (the surface, after compaction), as JSON")
    p.add_argument("file")
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.add_argument("--seqs", action="store_true", help="wrap each message as {seq, type, message}")
    p.set_defaults(func=cmd_messages)

    p = sub.add_parser("check", help="report every provenance/surface invariant violation with its seq "
                                     "(exit 1 if any)")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("repair", help="close a turn a crash left open (tool/result closers, step/end, "
                                      "turn/end interrupted)")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, help="repaired session (format by extension)")
    p.set_defaults(func=cmd_repair)


def load_session_file(path: str, *, strict: bool = False) -> LoadResult | None:
    """Load any supported session file; print warnings and faults. None when it cannot be used at all."""
    result = load(path, strict=strict)
    if result is None or result.header is None:
        return None
    return result


def _dump(value: Any, out_path: str | None, inputs: list[str]) -> None:
    with output(out_path, inputs=inputs) as stream:
        stream.write(format_json(encode(value), indent=2) + b"\n")


def cmd_convert(args: argparse.Namespace) -> int:
    preflight(args.output, inputs=[args.input], database=True)
    result = load_session_file(args.input, strict=args.strict)
    if result is None:
        return 1
    if not result.ok:
        error(args.output, "not written (the input has a fault)")
        return 1
    assert result.header is not None
    try:
        save_any(args.output, result.header, result.records, inputs=[args.input])
    except OutputError:
        raise  # ends the command as ``OUT: error: ...`` (``_output.run``)
    except AssemblerError as exc:  # SQLite refused a record, or the records do not continue each other
        error_from(args.output, exc)
        return 1
    return 0


def cmd_messages(args: argparse.Namespace) -> int:
    preflight(args.output, inputs=[args.file])
    result = load_session_file(args.file)
    if result is None:
        return 1
    try:
        session = Session.from_records(result.records, header=result.header)
    except AssemblerError as exc:
        error(args.file, str(exc))
        return 1
    if args.seqs:
        from ..surface import message_of
        value: Any = [{"seq": n.seq, "type": n.event["type"], "message": message_of(n.event)}
                      for n in session.surface]
    else:
        value = session.derive_messages()
    _dump(value, args.output, [args.file])
    return 0 if result.ok else 1


def cmd_check(args: argparse.Namespace) -> int:
    result = load_session_file(args.file)
    if result is None:
        return 1
    try:
        violations = check_events(expand_records(result.records))
    except AssemblerError as exc:
        error(args.file, str(exc))
        return 1
    if args.json:
        _dump({"file": args.file, "events": result.event_count,
               "violations": [{"seq": v.seq, "rule": v.rule, "message": v.message} for v in violations]}, None,
              [args.file])
    else:
        if violations:
            print_stdout("\n".join(f"{args.file}: {v}" for v in violations))
        print(f"{args.file}: {result.event_count} events, {len(violations)} violation(s)", file=sys.stderr)
    return 1 if violations or not result.ok else 0


def cmd_repair(args: argparse.Namespace) -> int:
    preflight(args.output, inputs=[args.file], database=True)
    result = load_session_file(args.file)
    if result is None:
        return 1
    if not result.ok:
        error(args.output, "not written (the input has a fault before its end)")
        return 1
    assert result.header is not None
    problems: list[str] = []
    closers = interrupted_turn_closers(result.records, problems)
    for problem in problems:
        print(f"{args.file}: warning: {problem}", file=sys.stderr)
    try:
        save_any(args.output, result.header, [*result.records, *pack_chunk_runs(closers)], inputs=[args.file])
    except OutputError:
        raise
    except AssemblerError as exc:  # SQLite refused a record, or the records do not continue each other
        error_from(args.output, exc)
        return 1
    kinds = ", ".join(f"{c['type']}@{c['seq']}" for c in closers) or "nothing to repair"
    print(f"{args.file}: {len(closers)} closer(s): {kinds}", file=sys.stderr)
    return 0
