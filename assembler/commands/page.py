"""``page``: print one message-aligned ``SessionPage`` of a session file as JSON (PROTOCOL 3.2).

The page comes from the no-expansion pager over the file's storage records; a fault in the file is reported on
stderr and in the page's extra ``error`` field, and the valid part before it is paged.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..history import DEFAULT_MAX_MESSAGES, MessageIndex, PageRequestError, check_page_request
from ..records import encode
from ._common import fail, load
from ._output import write_stdout

__all__ = ["register", "cmd_page"]


def register(sub: Any) -> None:
    p = sub.add_parser("page", help="print a message-aligned history page (SessionPage JSON) of a session log")
    p.add_argument("file")
    p.add_argument("--through", type=int, default=None, metavar="N",
                   help="inclusive last seq of the log cut (default: the last seq)")
    p.add_argument("--before", type=int, default=None, metavar="M", help="the page ends just before this seq")
    p.add_argument("--max-messages", type=int, default=DEFAULT_MAX_MESSAGES, metavar="K",
                   help=f"messages per page (default {DEFAULT_MAX_MESSAGES})")
    p.set_defaults(func=cmd_page)


def cmd_page(args: argparse.Namespace) -> int:
    result = load(args.file, pack_deltas=True)  # the pager repacks: runs of delta lines are held as rows
    if result is None:
        return 1
    index = MessageIndex(result.records)
    through = index.last_seq if args.through is None else args.through
    try:
        check_page_request(through, args.before, args.max_messages, index.last_seq)
    except PageRequestError as exc:
        return fail(f"bad request: {exc}", 2)
    value = index.page(through, args.before, args.max_messages)
    if result.error is not None:
        value["error"] = {"error": "malformed-session", "detail": str(result.error)}
    write_stdout(encode(value) + b"\n")
    return 0 if result.ok else 1
