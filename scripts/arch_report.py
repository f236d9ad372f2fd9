"""Print the architecture at a glance: import edges between the parts, module sizes, and the duplicate-code report.

    .venv/bin/python scripts/arch_report.py [--no-duplicates] [--lazy]

Parts: Records, Readers (other harnesses' logs), Views, Session, History, Assembly, Definitions, Render, Edges,
Perf. Every module of the trees belongs to one (``unmapped`` lists any that does not, and the layout test fails on
it). Every ``import`` and ``from ... import`` of a module (top level; ``--lazy`` also counts imports inside
functions) is resolved to the module it names and counted as an edge between the two modules' parts; imports inside
one part are not edges; an edge that runs back up (to a later part), from Render into the engine (``ENGINE``) or
from Render into the Readers is marked. Module sizes are physical lines, largest first, with the modules over 400
and 500 lines marked. The duplicate report is the ``duplicates`` command over ``assembler``, ``definitions`` and
``perf`` when it is on PATH. Reads files only.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("assembler", "definitions", "perf")

# Longest prefix wins; a module under none of these is left out of the graph (the package ``__init__`` re-exports).
PARTS: dict[str, str] = {
    "assembler.errors": "Records",
    "assembler.records": "Records",
    "assembler.chunk_rows": "Records",
    "assembler.delta_lines": "Records",
    "assembler.lazy_rows": "Records",
    "assembler.jsontext": "Records",
    "assembler.logfile": "Records",
    "assembler.formats": "Records",
    "assembler.facts": "Records",
    "assembler.text": "Records",
    "assembler.textdiff": "Records",
    "assembler.tooltext": "Records",
    "assembler.demo": "Records",
    "assembler.interop": "Readers",
    "assembler.session": "Session",
    "assembler.surface": "Session",
    "assembler.invariants": "Session",
    "assembler.repair": "Session",
    "assembler.history": "History",
    "assembler.journal": "History",
    "assembler.live_repack": "Assembly",
    "assembler.conversation": "Assembly",
    "assembler.definition": "Assembly",
    "assembler.display": "Assembly",
    "assembler.folding": "Assembly",
    "assembler.locations": "Assembly",
    "assembler.views": "Views",
    "assembler.comparison": "Views",
    "assembler.transcript": "Assembly",
    "assembler.compare": "Assembly",
    "definitions": "Definitions",
    "assembler.render": "Render",
    "assembler.store": "Edges",
    "assembler.server": "Edges",
    "assembler.browser": "Edges",
    "assembler.commands": "Edges",
    "assembler.cli": "Edges",
    "assembler.__main__": "Edges",
    "perf": "Perf",
}
ORDER = ["Records", "Readers", "Views", "Session", "History", "Assembly", "Definitions", "Render", "Edges", "Perf"]
"""Lowest first: an edge to a part later in this list (except from Perf) runs back up and is marked."""
ENGINE = ("Session", "History", "Assembly", "Definitions")
"""The parts that read and fold a session: Render imports none of them (it turns view nodes into HTML, and takes
what the engine decided as plain data of the Views part)."""


def wrong_way(src: str, dst: str) -> str:
    """Why an edge between parts is not allowed ("" when it is): it runs back up, or render reaches the engine."""
    rank = {p: i for i, p in enumerate(ORDER)}
    if rank[dst] > rank[src] and src != "Perf":
        return "runs back up"
    if src == "Render" and dst in ENGINE:
        return "render reaches into the engine"
    if src == "Render" and dst == "Readers":
        return "render reads another harness's format (it renders our events only)"
    return ""


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def part_of(module: str) -> str | None:
    best = None
    for prefix, part in PARTS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, part)
    return None if best is None else best[1]


def resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imports_of(path: Path, lazy: bool) -> list[tuple[str, bool]]:
    """``(imported module, is_lazy)`` for every import in ``path`` (``from x import y`` also names ``x.y``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path)
    is_package = path.name == "__init__.py"
    top_level = {id(n) for n in tree.body}
    for node in tree.body:  # imports under ``if TYPE_CHECKING`` / ``try`` at the top level are top level too
        if isinstance(node, (ast.If, ast.Try)):
            top_level.update(id(n) for n in ast.walk(node))
    out: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        is_lazy = id(node) not in top_level
        if is_lazy and not lazy:
            continue
        if isinstance(node, ast.Import):
            out.extend((alias.name, is_lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = resolve(name, is_package, node.level, node.module)
            out.append((target, is_lazy))
            out.extend((f"{target}.{alias.name}", is_lazy) for alias in node.names)
    return out


def sources() -> list[Path]:
    return sorted(p for tree in TREES for p in (ROOT / tree).rglob("*.py") if "__pycache__" not in p.parts)


def graph(lazy: bool) -> dict[tuple[str, str], set[str]]:
    known = {module_name(p) for p in sources()}
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sources():
        importer = module_name(path)
        src = part_of(importer)
        if src is None:
            continue
        for target, is_lazy in imports_of(path, lazy):
            if target not in known:
                continue
            dst = part_of(target)
            if dst is None or dst == src:
                continue
            edges[(src, dst)].add(f"{importer} -> {target}" + (" (lazy)" if is_lazy else ""))
    return edges


def unmapped() -> list[str]:
    """The modules of the trees no part claims (package faces, whose re-exports are not edges, excepted)."""
    return sorted(m for p in sources() if p.name != "__init__.py" and part_of(m := module_name(p)) is None)


def print_graph(lazy: bool) -> None:
    edges = graph(lazy)
    missing = unmapped()
    if missing:
        print(f"## Modules in no part: {', '.join(missing)}\n")
    print(f"## Import edges between parts ({'top-level and lazy' if lazy else 'top-level'} imports)")
    print()
    rank = {p: i for i, p in enumerate(ORDER)}
    for (src, dst), via in sorted(edges.items(), key=lambda kv: (rank[kv[0][0]], rank[kv[0][1]])):
        why = wrong_way(src, dst)
        back = f" <- {why}" if why else ""
        print(f"{src:>11} -> {dst:<11} {len(via):3d} import(s){back}")
        for line in sorted(via)[:6]:
            print(f"{'':15}{line}")
        if len(via) > 6:
            print(f"{'':15}... {len(via) - 6} more")
    print(f"\n{len(edges)} part edges")


def print_sizes() -> None:
    print("## Module sizes (lines)")
    print()
    rows = sorted(((len(p.read_text(encoding="utf-8").splitlines()), p.relative_to(ROOT)) for p in sources()),
                  reverse=True)
    for lines, rel in rows[:25]:
        mark = "  > 500" if lines > 500 else "  > 400" if lines > 400 else ""
        print(f"{lines:6d}  {rel}{mark}")
    total = sum(n for n, _ in rows)
    print(f"\n{len(rows)} modules, {total} lines; over 500: {sum(1 for n, _ in rows if n > 500)}, "
          f"over 400: {sum(1 for n, _ in rows if n > 400)}")


def print_duplicates() -> None:
    print("## Duplicate code (`duplicates --most 40`: the whole repository, then per tree)")
    print()
    tool = shutil.which("duplicates")
    if tool is None:
        print("duplicates: not on PATH, skipped")
        return
    for tree in (".", *TREES):
        out = subprocess.run([tool, "--most", "40", "--seconds", "60", "--repo", str(ROOT / tree)],
                             capture_output=True, text=True, check=False)
        print(f"### {tree}/")
        print(out.stdout.rstrip())
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-duplicates", action="store_true")
    parser.add_argument("--lazy", action="store_true", help="count imports inside functions too")
    args = parser.parse_args(argv)
    print_graph(args.lazy)
    print()
    print_sizes()
    if not args.no_duplicates:
        print()
        print_duplicates()
    return 0


if __name__ == "__main__":
    sys.exit(main())
