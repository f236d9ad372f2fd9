"""``publish``: write a static site (the viewer plus every session's pages and the session list) any host serves.

The work is ``server.publish`` (see its rules: the same sessions, ids, list and page bytes as ``serve``; relative
paths only; gzip/brotli variants beside each file; a republish rewrites only the sessions whose source changed and
swaps the catalog last). A session that fails to parse is reported as ``FILE:LINE: error: message`` and the rest are
published; then the exit status is 1. A path that does not exist, an output folder that is not a published site
(or lies inside a published path) and a missing viewer build are errors (status 2) before anything is written.

Secrets (``server.secrets_scan``: API keys, tokens, private keys, found by detect-secrets in every page and list
entry the site would hold) stop the publish: one ``FILE: error: session SID: seq N: KIND found`` line each (never the
secret), status 1, and nothing is written (an existing site stays as it was). ``--redact`` publishes them replaced
by ``[REDACTED:KIND]`` in the site's copy only (each listed as a ``warning: ... redacted`` line; the logs are not
touched).

The site's search index (``server.site_index``) is split into files of about ``--index-shard-mb`` (4 by default);
``--no-index`` writes none. A Python whose SQLite lacks FTS5 is an error (status 2) naming ``--no-index``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "cmd_publish"]


def register(sub: Any) -> None:
    p = sub.add_parser("publish", help="write a static site of session logs (viewer, pages, list) for any web host")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="session files or folders (or s3://bucket/prefix with the cloud extra)")
    p.add_argument("-o", "--output", required=True, metavar="SITE", help="the site's folder (made if missing)")
    p.add_argument("--static", default=None, metavar="DIR",
                   help="the viewer build to publish (default: the one serve serves)")
    p.add_argument("--redact", action="store_true",
                   help="publish the secrets found replaced by [REDACTED:KIND] (default: refuse, write nothing)")
    p.add_argument("--index-shard-mb", type=float, default=4.0, metavar="MB",
                   help="split the search index into files of about this size (default 4)")
    p.add_argument("--no-index", action="store_true", help="write no search index (the page searches titles only)")
    p.set_defaults(func=cmd_publish)


def _inside(path: Path, roots: list[Path]) -> Path | None:
    return next((root for root in roots if path == root or path.is_relative_to(root)), None)


def cmd_publish(args: argparse.Namespace) -> int:
    import asyncio

    from ..server.publish import PublishError, publish
    from ..server.site import find_site
    from ..store.remote import is_remote
    from ._common import max_line_bytes, missing_roots
    from ._output import error

    missing = missing_roots(list(args.paths))
    if missing is not None:
        error(missing[0], f"{missing[1]} (nothing to publish)")
        return 2
    out = Path(args.output).resolve()
    roots = [Path(p).resolve() for p in args.paths if not is_remote(p)]
    inside = _inside(out, [r for r in roots if r.is_dir()])
    if inside is not None:
        error(args.output, f"the site would be inside the published folder {inside} (its files would be read as "
                           "sessions next time); choose a folder outside it")
        return 2
    if not (math.isfinite(args.index_shard_mb) and args.index_shard_mb * (1 << 20) >= 4096):
        error("publish", f"--index-shard-mb must be at least 0.004 (4 KiB), got {args.index_shard_mb}")
        return 2
    static = Path(args.static) if args.static is not None else find_site()  # the viewer ``serve`` would serve
    if static is None:
        error("publish", "no built viewer was found (neither a checkout's build/site nor the installed package's); "
                         "run `make build` or pass --static DIR")
        return 2
    try:
        report = asyncio.run(publish(list(args.paths), out, static_dir=static, max_line_bytes=max_line_bytes(),
                                     redacting=args.redact,
                                     index_shard_bytes=None if args.no_index else int(args.index_shard_mb * (1 << 20))))
    except PublishError as exc:
        sys.stderr.write(f"transcript-assembler: publish: {exc}\n")
        return 2
    for line in report.errors + report.findings:
        sys.stderr.write(line + "\n")
    if report.refused:
        sys.stderr.write(f"transcript-assembler: publish: {report.secrets} secret(s) found in "
                         f"{report.secret_sessions} session(s); nothing was written (--redact publishes them "
                         "redacted)\n")
        return 1
    print(f"published {report.sessions} session(s) to {args.output}: {report.rewritten} written, "
          f"{report.unchanged} unchanged, {report.files_removed} old file(s) removed; viewer: "
          f"{report.viewer_written} file(s) written"
          + (f"; search index: {len(report.index['shards'])} shard(s), "
             f"{sum(s['bytes'] for s in report.index['shards']):,} bytes, {report.index_written} written"
             if report.index is not None else "; no search index")
          + (f"; {report.secrets} secret(s) redacted in {report.secret_sessions} session(s)" if report.secrets else ""),
          flush=True)
    return 1 if report.errors else 0
