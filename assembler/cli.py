"""Command line: ``transcript-assembler COMMAND ...`` (also ``python -m assembler``).

Every command is listed in ``COMMANDS`` with the module of ``assembler/commands/`` that implements it; that module's
``register(subparsers)`` adds its parser(s) and sets ``func``. Only the module of the command being run is imported
(``--help``, no command or an unknown one import them all, in table order), so a command pays start-up only for what
it uses. Every command ends in ``commands._output.run``: errors on stderr as ``FILE:LINE: error: message`` with exit
status 1, a signal as one line (SIGINT 130), never a traceback; a signal that arrives while the command is still
starting (parsing, importing its module) is one line too and exit status 128 + its number, and a signal the
command was started with ignored (``nohup``) stays ignored throughout.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from importlib import import_module
from typing import Any

from . import __version__

__all__ = ["COMMANDS", "main", "build_parser"]

COMMANDS: dict[str, str] = {
    "assemble": "assemble",
    "export": "export",
    "compare": "compare",
    "unpack": "files",
    "pack": "files",
    "stats": "files",
    "page": "page",
    "serve": "serve",
    "publish": "publish",
    "convert": "session_cmds",
    "messages": "session_cmds",
    "check": "session_cmds",
    "repair": "session_cmds",
}
"""Command name -> its module under ``assembler.commands``."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser: with ``command`` (a key of ``COMMANDS``) only its module's commands, with ``""`` none (for
    ``--version``), else every command."""
    parser = argparse.ArgumentParser(
        prog="transcript-assembler",
        description="Read LLM agent session logs (packed chunk rows included) and turn them into transcripts.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if command == "":
        modules = []
    elif command in COMMANDS:
        modules = [COMMANDS[command]]
    else:
        modules = list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        import_module(f"{__package__}.commands.{name}").register(sub)
    for command_parser in sub.choices.values():
        command_parser.add_argument(
            "--max-line-bytes", type=_byte_count, default=None, metavar="N",
            help="a longer log line is an error naming it (default 256 MiB; K, M, G suffixes)")
        if command_parser.prog.split()[-1] not in ("serve", "publish"):
            command_parser.add_argument(
                "--session", default=None, metavar="KEY",
                help="which session of a file that holds several (an Inspect log: SAMPLE_epoch_N); the first by "
                     "default")
    return parser


def _byte_count(text: str) -> int:
    """``N``, ``NK``, ``NM`` or ``NG`` (binary units) as bytes, at least 1."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    scale = units.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isascii() or not digits.isdigit() or int(digits) < 1:
        raise argparse.ArgumentTypeError(f"expected a byte count such as 1048576 or 64M, got {text!r}")
    return int(digits) * scale


def _command(argv: Sequence[str]) -> str | None:
    """The command word: the first argument that is not an option (the top level has only flag options); ``""``
    when ``--version`` comes first, None for ``--help`` or no command."""
    for arg in argv:
        if arg == "--version":
            return ""
        if arg in ("-h", "--help"):
            return None
        if not arg.startswith("-"):
            return arg
    return None


class _EarlyStop(BaseException):
    """A signal that arrived before the command's own handlers (``_output.run``) were in place."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop_early(signum: int, frame: object) -> None:
    raise _EarlyStop(signum)


def _early_signals() -> dict[int, Any]:
    """From the first line of ``main``: SIGINT, SIGTERM and SIGHUP end the command with one line (nothing has been
    written yet), not by the default action; a signal that is ignored (``nohup``, a background job) stays ignored.
    Returns the handlers to put back."""
    import signal

    previous: dict[int, Any] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _stop_early)
    return previous


def main(argv: Sequence[str] | None = None) -> int:
    previous = _early_signals() if threading.current_thread() is threading.main_thread() else {}
    try:
        args_list = list(sys.argv[1:] if argv is None else argv)
        from .store.remote import RemoteError, check_location, shown

        for arg in args_list:  # before anything reads: a password in a URL is never used, nor printed back
            try:
                check_location(arg)
            except RemoteError as exc:
                sys.stderr.write(f"transcript-assembler: {shown(arg)}: error: {exc.strerror}\n")
                return 2
        parser = build_parser(_command(args_list))
        args = parser.parse_args(args_list)
        from .commands._common import configure
        from .commands._output import run

        configure(max_line_bytes=args.max_line_bytes, session=getattr(args, "session", None))
        return run(args.func, args)  # output errors and signals end a command there (one line, exit status)
    except _EarlyStop as stop:
        import signal

        sys.stderr.write(f"transcript-assembler: stopped by {signal.Signals(stop.signum).name} before the command "
                         "started; nothing was written\n")
        return 128 + stop.signum
    finally:
        import signal

        for signum, handler in previous.items():
            signal.signal(signum, handler)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
