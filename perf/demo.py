"""Writes the built-in demo session (``assembler.demo``) packed: one append batch per step, as a live writer would.

    python -m perf.demo OUT.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from assembler.demo import demo_session

__all__ = ["main", "write_demo"]


def write_demo(path: str) -> None:
    from assembler.store.jsonl import SessionWriter

    header, batches = demo_session()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with SessionWriter(path, header) as writer:
        for batch in batches:
            writer.append(batch)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the built-in demo session (packed JSONL).")
    parser.add_argument("output", help="path of the .jsonl (or .jsonl.zst) to write")
    args = parser.parse_args(argv)
    write_demo(args.output)
    header, batches = demo_session()
    print(json.dumps({"wrote": args.output, "events": sum(len(b) for b in batches)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
