"""Command line: ``transcript-assembler COMMAND ...`` (also ``python -m assembler``).

Each command lives in its own module under ``assembler/commands/`` and exposes ``register(subparsers)``; this file
only dispatches. Errors go to stderr as ``file:line: message`` with a non-zero exit.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from . import __version__, commands
from .commands._output import run

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="transcript-assembler",
        description="Read LLM agent session logs (packed chunk rows included) and turn them into transcripts.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return run(args.func, args)  # output errors and signals end a command there (one line, exit status)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
