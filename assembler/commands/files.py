"""``unpack``, ``pack`` and ``stats``: the chunk-row codec over whole session files."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..chunk_rows import expand_records, is_storage_row, repack_records
from ..jsontext import format_json
from ..records import encode
from ..store.jsonl import SessionStream, write_jsonl
from ..store.open import file_size
from ._common import report_problems, stream
from ._output import output, preflight, print_stdout, write_stdout

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("unpack", help="expand every packed row: the header, then one logical event per line")
    p.add_argument("file")
    p.add_argument("-o", "--output", help="output file (default stdout; .zst compresses)")
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_unpack)

    p = sub.add_parser("pack", help="write canonical packed session JSONL (input packed, unpacked or mixed)")
    p.add_argument("file")
    p.add_argument("-o", "--output", help="output file (default stdout; .zst compresses)")
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_pack)

    p = sub.add_parser("stats", help="events, rows, row members, bytes and counts by event type")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_stats)


def _write(args: argparse.Namespace, records: Callable[[Iterable[Any]], Iterable[Any]], *,
           packing: bool = False) -> int:
    """Stream the input through ``records`` into the output: one pass, nothing held but a run being packed."""
    preflight(args.output, inputs=[args.file])
    source = stream(args.file, strict=args.strict, pack_deltas=packing)
    if source is None:
        return 1
    if source.header is None:
        report_problems(args.file, source.result)
        return 1
    try:
        with output(args.output, inputs=[args.file]) as out:
            write_jsonl(out, source.header, records(source))
    finally:
        report_problems(args.file, source.result)
    return 0 if source.result.ok else 1


def cmd_unpack(args: argparse.Namespace) -> int:
    return _write(args, expand_records)


def cmd_pack(args: argparse.Namespace) -> int:
    return _write(args, repack_records, packing=True)


def collect_stats(path: str, source: SessionStream) -> dict[str, Any]:
    """Counts over one pass of ``source`` (its records are not kept)."""
    by_type: Counter[str] = Counter()
    rows_by_kind: Counter[str] = Counter()
    record: Any
    for record in source:
        if is_storage_row(record):
            rows_by_kind[record.type] += 1
            by_type["assistant/chunk"] += record.members
        else:
            by_type[record["type"]] += 1
    result = source.result
    header = result.header or {}
    return {
        "file": path,
        "bytes": file_size(path),
        "sessionId": header.get("id"),
        "lines": result.lines,
        "records": source.record_count,
        "events": result.event_count,
        "rows": result.row_count,
        "rowMembers": result.row_members,
        "rowsByKind": dict(sorted(rows_by_kind.items())),
        "eventsByType": dict(by_type.most_common()),
        "warnings": result.warnings,
        "error": str(result.error) if result.error else None,
    }


def cmd_stats(args: argparse.Namespace) -> int:
    source = stream(args.file, strict=args.strict)
    if source is None:
        return 1
    try:
        stats = collect_stats(args.file, source)
    finally:
        report_problems(args.file, source.result)
    if args.json:
        write_stdout(format_json(encode(stats), indent=2) + b"\n")
    else:
        print_stdout(render_stats(stats))
    return 0 if source.result.ok else 1


def render_stats(stats: dict[str, Any]) -> str:
    lines = [
        f"file          {stats['file']}",
        f"session       {stats['sessionId']}",
        f"bytes         {stats['bytes']:,}",
        f"lines         {stats['lines']:,}",
        f"records       {stats['records']:,}  (storage lines after the header)",
        f"events        {stats['events']:,}  (logical, rows expanded)",
        f"rows          {stats['rows']:,}  holding {stats['rowMembers']:,} deltas",
    ]
    for kind, n in stats["rowsByKind"].items():
        lines.append(f"  {kind:<20} {n:,}")
    lines.append("events by type")
    width = max((len(t) for t in stats["eventsByType"]), default=10)
    for etype, n in stats["eventsByType"].items():
        lines.append(f"  {etype:<{width}}  {n:>10,}")
    if stats["error"]:
        lines.append(f"stopped at     {stats['error']}")
    return "\n".join(lines)
