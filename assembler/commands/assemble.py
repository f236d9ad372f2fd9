"""``assemble``: fold a session log into the canonical transcript JSON (or its sha256) in packed or scalar mode.

Rules: every line is decoded once by the log parser (rows straight into their Structs; in packed mode a run of
delta lines straight into its row); the page comes from the no-expansion pager as typed records, never through JSON
again. ``packed`` keeps delta runs as rows, ``scalar`` expands every row into one event record per delta. Both modes
print byte-identical output (ASSEMBLY 5, DESIGN rule 2). This is an edge: it wires in the default Definitions.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import AssemblerError
from ._common import fail, report_problems, stream, warn_faults
from ._output import error, write_stdout

__all__ = ["register", "cmd_assemble"]


def register(sub: Any) -> None:
    p = sub.add_parser("assemble", help="fold a session into {chat, trajectory, turns} JSON (or its --digest)")
    p.add_argument("file")
    p.add_argument("--mode", choices=("packed", "scalar"), default="packed",
                   help="packed rows (default) or every delta as its own event; the output is identical")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--max-messages", type=int, metavar="K",
                       help="only the newest page holding K append-origin messages (PROTOCOL 3.2)")
    group.add_argument("--all", action="store_true", help="the whole log (the default)")
    p.add_argument("--digest", action="store_true", help="print the sha256 of the canonical JSON instead")
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_assemble)


def cmd_assemble(args: argparse.Namespace) -> int:
    from definitions import default_definitions

    from ..chunk_rows import repack_records
    from ..history import MessageIndex
    from ..transcript import assemble_checked, canonical_json, digest

    if args.max_messages is not None and args.max_messages < 1:
        return fail("--max-messages must be >= 1", 2)
    source = stream(args.file, strict=args.strict, pack_deltas=args.mode == "packed")
    if source is None:
        return 1
    try:
        # Packed mode folds rows: deltas are packed while the file streams by (packed = scalar, DESIGN rule 2), so
        # an unpacked log is never held as one object per delta.
        records = list(source) if args.mode == "scalar" else list(repack_records(source))
    finally:
        report_problems(args.file, source.result)
    result = source.result
    if result.header is None:
        return 1
    max_messages = None if args.all else args.max_messages
    try:
        # Packed: the records were just repacked (canonical), so the page repacks only its edges: one repack.
        index = MessageIndex(records, canonical=args.mode == "packed")
        page = index.session_page(None, None, max_messages, scalar=args.mode == "scalar")
        del records
        value, faults = assemble_checked(page.records, page.hasMore, default_definitions())
        out = canonical_json(value)
    except AssemblerError as exc:
        error(args.file, str(exc))
        return 1
    warn_faults(args.file, faults)
    write_stdout(digest(out).encode("ascii") + b"\n" if args.digest else out + b"\n")
    return 0 if result.ok else 1
