"""``serve``: the history HTTP server (pages, follow over SSE, raw files, the viewer) over session files/folders.

Binds 127.0.0.1 unless told otherwise and prints the URL it listens on. There is no authentication: bound to any
other address it warns that every served session is readable by anyone who can reach it. Requests must name the
server in ``Host`` (loopback names, the bound address, or ``--allow-host`` names), against DNS rebinding. A path that
does not exist, a port outside 0-65535 or a malformed ``--allow-host`` is an error before anything starts; SIGINT or
SIGTERM ends the follow streams, then the server, with one line. The viewer at ``/`` is ``server.site.find_site()``
(the checkout's ``build/site``, else the one the installed wheel carries) unless ``--static`` names one; its folder is
printed, and its absence is a warning (the API is still served). ``--open`` opens the default browser once the socket
listens (connections wait in its backlog until the server accepts them), from a thread: a console browser would
otherwise hold the server back; no browser is a message with the URL to open, not an error. The search index
(``server.indexer``) lives in ``--index-dir`` (default under ``$XDG_CACHE_HOME``), its file printed (one per set of
served roots; a bucket's named by its location, so serving it again reuses its index); ``--no-index`` turns it off; an
SQLite without FTS5 or an index folder that cannot be written is an error naming ``--no-index``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register", "cmd_serve"]


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve session logs over HTTP: pages, live follow (SSE), raw, the viewer")
    p.add_argument("paths", nargs="*", metavar="PATH", help="session files or folders (default: .)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument("--static", default=None, metavar="DIR",
                   help="viewer build to serve at / (default: the checkout's build/site, else the installed one)")
    p.add_argument("--no-static", action="store_true", help="serve the API only")
    p.add_argument("--open", action="store_true", help="open the viewer in the default browser")
    p.add_argument("--poll", type=float, default=0.2, metavar="S", help="file growth poll interval in seconds")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME[:PORT]",
                   help="also answer requests whose Host is NAME (any port) or NAME:PORT; repeatable (default: "
                        "only localhost, 127.0.0.1, [::1] and the bound address, on the bound port)")
    p.add_argument("--cache", type=int, default=64, metavar="MB",
                   help="file megabytes of parsed sessions kept for pages (default 64; least recently used evicted)")
    p.add_argument("--index-dir", default=None, metavar="DIR",
                   help="folder of the search index, a cache you may delete (default: "
                        "$XDG_CACHE_HOME/transcript-assembler/search-index, else ~/.cache/...)")
    p.add_argument("--no-index", action="store_true", help="keep no search index (no search across sessions)")
    p.set_defaults(func=cmd_serve)


def _port(text: str) -> int:
    """A TCP port: ASCII digits, 0-65535."""
    if not text.isascii() or not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535 (0 picks a free one), got {text!r}")
    return int(text)


def cmd_serve(args: argparse.Namespace) -> int:
    from ._common import missing_roots

    missing = missing_roots(list(args.paths))
    if missing is not None:
        sys.stderr.write(f"transcript-assembler: serve: {missing[0]}: {missing[1]} (nothing to serve)\n")
        return 2
    try:
        import uvicorn

        from ..server import create_app
        from ..server.hosts import host_name, is_loopback, listening_socket
        from ._common import max_line_bytes
    except ImportError as exc:  # pragma: no cover - an install without its dependencies (pip --no-deps)
        sys.stderr.write(f"transcript-assembler: serve needs starlette and uvicorn, dependencies of the package "
                         f"({exc}): pip install starlette uvicorn\n")
        return 1
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        sys.stderr.write(f"transcript-assembler: cannot bind {args.host}:{args.port}: {exc.strerror or exc}\n")
        return 1
    host, port = sock.getsockname()[:2]
    from ..server.indexer import index_dir_default
    from ..server.search_index import SearchUnavailable

    index_dir = None if args.no_index else (args.index_dir or index_dir_default())
    try:
        app = create_app(args.paths or ["."], static_dir=args.static, serve_static=not args.no_static,
                         poll_interval=args.poll, allowed_hosts=args.allow_host, bound_host=host,
                         max_line_bytes=max_line_bytes(), cache_bytes=max(0, args.cache) << 20, index_dir=index_dir)
    except ValueError as exc:  # a malformed --allow-host
        sock.close()
        sys.stderr.write(f"transcript-assembler: --allow-host: {exc}\n")
        return 2
    except SearchUnavailable as exc:  # no FTS5, or the index folder cannot be written
        sock.close()
        sys.stderr.write(f"transcript-assembler: serve: {exc} (serve --no-index runs without search)\n")
        return 1
    shown = host_name(host)
    if not is_loopback(host):
        sys.stderr.write(
            f"transcript-assembler: warning: listening on {shown}:{port}, not a loopback address: every session "
            "under the served paths is readable by anyone who can reach it (there is no authentication). "
            "Browsers must reach it by a name allowed with --allow-host (or the bound address itself).\n")
    registry = app.state.registry
    url = f"http://{shown}:{port}/"
    print(f"serving {len(registry.scan())} session(s) at {url}", flush=True)
    if app.state.site is not None:
        print(f"viewer: {app.state.site}", flush=True)
    if app.state.indexer is not None:
        print(f"search index: {app.state.indexer.path} (a cache: delete it at will)", flush=True)
    if app.state.site is None and not args.no_static:
        where = f"{args.static} holds no viewer" if args.static else "no built viewer was found (neither a " \
            "checkout's build/site nor the installed package's)"
        sys.stderr.write(f"transcript-assembler: warning: {where}; serving the API only\n")
    sock.listen(2048)  # uvicorn's own backlog; from here a browser's connection waits for the server
    if args.open:
        _open_browser(url)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # Follow streams never end on their own: end them first, so the graceful shutdown has nothing to
            # cancel (a cancelled stream was a 40-line CancelledError traceback on SIGTERM).
            registry.close_followers()
            await super().shutdown(sockets)

    server = Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2))
    from ..store.atomic import Interrupted

    try:
        server.run(sockets=[sock])
    except (KeyboardInterrupt, Interrupted) as exc:  # uvicorn stops, then raises the signal it caught again
        import signal

        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        sys.stderr.write(f"transcript-assembler: serve stopped by {signal.Signals(signum).name}\n")
        return 128 + signum
    return 0


def _open_browser(url: str) -> None:
    """Opens ``url`` in the default browser from a daemon thread (``webbrowser`` waits for a console browser to
    exit); says so on stderr when there is no browser to open."""
    import threading
    import webbrowser

    def run() -> None:
        try:
            opened = webbrowser.open(url)
        except Exception as exc:  # webbrowser.Error or an OSError from a broken $BROWSER
            opened = False
            sys.stderr.write(f"transcript-assembler: --open: {exc}\n")
        if not opened:
            sys.stderr.write(f"transcript-assembler: --open: no web browser could be started; open {url} yourself\n")
            sys.stderr.flush()

    threading.Thread(target=run, name="open-browser", daemon=True).start()
