"""Command line: ``transcript-assembler COMMAND ...`` (also ``python -m assembler``).

Every command is listed in ``COMMANDS`` with the module of ``assembler/commands/`` that implements it; that module's
``register(subparsers)`` adds its parser(s) and sets ``func``. Only the module of the command being run is imported
(``--help``, no command or an unknown one import them all, in table order), so a command pays start-up only for what
it uses. Every command ends in ``commands._output.run``: errors on stderr as ``FILE:LINE: error: message`` with exit
status 1, a signal as one line (SIGINT 130), never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from . import __version__

__all__ = ["COMMANDS", "main", "build_parser"]

COMMANDS: dict[str, str] = {
    "assemble": "assemble",
    "export": "export",
    "unpack": "files",
    "pack": "files",
    "stats": "files",
    "page": "page",
    "serve": "serve",
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
        if command_parser.prog.split()[-1] != "serve":
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


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command(args_list))
    args = parser.parse_args(args_list)
    from .commands._common import configure
    from .commands._output import run

    configure(max_line_bytes=args.max_line_bytes, session=getattr(args, "session", None))
    return run(args.func, args)  # output errors and signals end a command there (one line, exit status)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
