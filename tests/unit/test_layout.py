"""The layout states the architecture: public exports resolve, imports flow one way, the core is sans-I/O, and no
module outgrows its concept (DESIGN "Layout", STYLE 1-3).

The core is every module of ``assembler`` outside the edges; it imports no ``js``, ``pyodide``, ``asyncio``, sockets,
files or clocks, and never ``definitions`` or an edge, relatively or absolutely. Definitions never import an edge or
anything that knows HTML.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EDGES = {"store", "server", "cli", "browser", "render", "commands", "__main__"}
FORBIDDEN_IN_CORE = {"js", "pyodide", "asyncio", "socket", "time", "datetime", "os", "pathlib", "io", "sqlite3",
                     "subprocess", "threading", "urllib", "http", "definitions", "starlette", "uvicorn"}
READS_BYTES_AS_A_FILE = {"io", "zipfile"}
"""What a core module may import to read a zip held in memory (``zipfile`` over ``io.BytesIO``, FORMATS §1.5): an
Inspect ``.eval`` log is a zip. Only readers of other harnesses' logs (``interop.*``) may."""
LOADED_BY_NO_CORE_MODULE = {"js", "pyodide", "asyncio", "socket", "sqlite3", "starlette", "uvicorn", "definitions"}
MAX_LINES = 500


def core_modules() -> list[str]:
    """Dotted names (under ``assembler``) of every core module: everything but the edge packages and modules."""
    out = []
    for path in sorted((ROOT / "assembler").rglob("*.py")):
        rel = path.relative_to(ROOT / "assembler").with_suffix("")
        parts = list(rel.parts)
        if parts[0] in EDGES or parts == ["__init__"]:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


CORE = core_modules()


def module_path(name: str) -> Path:
    """The source file of core module ``name`` (dotted, under ``assembler``); a package is its ``__init__.py``."""
    base = ROOT / "assembler" / Path(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_name(base.name + ".py")


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it: absolute names, and relative ones with their leading dots."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            names.add(base)
            if node.level and not node.module:
                names.update("." * node.level + alias.name for alias in node.names)
    return names


def calls_open(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "open"
               for n in ast.walk(tree))


def edge_of(imported: str) -> str | None:
    """The edge a core module's import reaches (``..server``, ``assembler.server.app`` ...), else None."""
    parts = imported.lstrip(".").split(".")
    if imported.startswith("."):
        return parts[0] if parts[0] in EDGES else None
    if parts[0] == "assembler" and len(parts) > 1 and parts[1] in EDGES:
        return parts[1]
    return None


@pytest.mark.parametrize("package", ["assembler", "assembler.store", "assembler.journal", "assembler.server",
                                     "assembler.render", "assembler.browser", "definitions"])
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, package
    assert len(set(module.__all__)) == len(module.__all__), "duplicate export"
    for name in module.__all__:
        assert hasattr(module, name), f"{package}.{name}"


def test_the_core_is_sans_io_and_imports_no_edge() -> None:
    """Statically, per core module: no I/O, clock or browser import and no edge (relative or absolute), no
    ``open``; then at run time, importing the whole core loads none of them."""
    problems = []
    for name in CORE:
        path = module_path(name)
        for imported in imported_modules(path):
            if edge_of(imported) is not None:
                problems.append(f"{name} imports edge {imported}")
            elif not imported.startswith(".") and imported.split(".")[0] in FORBIDDEN_IN_CORE:
                if name.startswith("interop.") and imported in READS_BYTES_AS_A_FILE:
                    continue
                problems.append(f"{name} imports {imported}")
        if calls_open(path):
            problems.append(f"{name} opens files")
    assert problems == []
    code = (f"import sys; [__import__('assembler.' + m) for m in {CORE!r}]; "
            f"print(sorted(set({sorted(LOADED_BY_NO_CORE_MODULE)!r}) & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_a_core_import_of_an_edge_is_caught() -> None:
    assert edge_of("assembler.server") == "server"
    assert edge_of("assembler.render.nodes") == "render"
    assert edge_of("..browser") == "browser" and edge_of(".store") == "store"
    assert edge_of("assembler.records") is None and edge_of(".views") is None


def test_definitions_import_no_edge_and_no_html() -> None:
    for path in sorted((ROOT / "definitions").glob("*.py")):
        for imported in imported_modules(path):
            parts = imported.lstrip(".").split(".")
            assert not (parts[0] == "assembler" and len(parts) > 1 and parts[1] in EDGES), (path.name, imported)
            assert parts[0] not in {"markdown_it", "pygments", "js", "pyodide", "asyncio"}, (path.name, imported)


def test_definitions_fold_only() -> None:
    """Paging, expansion, the transcript and the page decoder live in the core; a Definition imports none of them."""
    for path in sorted((ROOT / "definitions").glob("*.py")):
        imported = imported_modules(path)
        for name in ("assembler.history", "assembler.chunk_rows", "assembler.transcript", "assembler.conversation",
                     "assembler.lazy_rows"):  # a decoder's types stay out: row text through records.joined
            assert name not in imported, (path.name, name)


@pytest.mark.parametrize("tree", ["assembler", "definitions", "perf"])
def test_no_module_passes_the_size_cap(tree: str) -> None:
    big = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / tree).rglob("*.py"))
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert big == {}


FACADES = ["assembler", "assembler.store", "assembler.journal", "assembler.server", "assembler.render",
           "assembler.browser", "assembler.interop", "definitions"]


@pytest.mark.parametrize("package", FACADES)
def test_a_package_face_exports_exactly_its_all(package: str) -> None:
    """trio's ``test_exports``: every public name a package face binds is in ``__all__`` and every name of
    ``__all__`` is bound there (a lazy face binds them on first use: asked for each), written once."""
    module = importlib.import_module(package)
    declared = list(module.__all__)
    assert len(declared) == len(set(declared)), sorted(n for n in declared if declared.count(n) > 1)
    for name in declared:
        getattr(module, name)
    submodules = {n for n, v in vars(module).items() if type(v).__name__ == "module"}
    public = {n for n in vars(module) if not n.startswith("_") and n not in submodules and n != "annotations"}
    assert public == set(declared), {"not in __all__": sorted(public - set(declared)),
                                     "not bound": sorted(set(declared) - public)}


def test_the_architecture_report_maps_every_module_and_no_import_runs_back_up() -> None:
    """``scripts/arch_report.py`` names a part for every module, and no import, lazy ones included, goes from a part
    to a later one (the engine never imports an edge), from render into the engine (``arch_report.ENGINE``) or from
    render into the readers of other harnesses' logs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    try:
        import arch_report
    finally:
        sys.path.pop(0)
    assert arch_report.unmapped() == []
    wrong = {edge: via for edge, via in arch_report.graph(lazy=True).items() if arch_report.wrong_way(*edge)}
    assert wrong == {}
    assert arch_report.wrong_way("Render", "Assembly") and arch_report.wrong_way("Assembly", "Edges")
    assert arch_report.wrong_way("Render", "Readers")
    assert not arch_report.wrong_way("Render", "Views")


def test_the_browser_edge_is_composed_not_mixed_in() -> None:
    """``assembler.browser``: the wire API (``viewer.Viewer``) composes the window and the features, each a plain
    class or function given the state it needs: no class inherits from another of the package (no mixins), no
    module reads a private name of another object (``obj._x``, only ``self._x``) or imports one, and nothing is
    patched onto a class (``setattr``)."""
    problems = []
    trees = {path: ast.parse(path.read_text(encoding="utf-8"))
             for path in sorted((ROOT / "assembler" / "browser").glob("*.py"))}
    ours = {n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                if any(b in ours or b.endswith("Mixin") for b in bases):
                    problems.append(f"{path.name}:{node.lineno}: {node.name}({', '.join(bases)})")
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    problems.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, ast.ImportFrom) and node.level:
                problems.extend(f"{path.name}:{node.lineno}: imports {a.name}" for a in node.names
                                if a.name.startswith("_"))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                problems.append(f"{path.name}:{node.lineno}: setattr")
    assert problems == []


# Private names of objects that are not ours, used because their library offers no public one.
FOREIGN_PRIVATE = {("assembler/store/remote.py", "fs._strip_protocol")}
"""fsspec: a filesystem's path for a URL without building a new filesystem (``url_to_fs`` builds one)."""


def _own_privates(cls: ast.ClassDef) -> set[str]:
    """The private attributes a class sets on its instances (``self._x = ...``, ``__slots__``)."""
    names = {t.attr for n in ast.walk(cls) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
             for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
             if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    return {n for n in names if n.startswith("_")}


def test_no_module_reads_a_private_name_of_another_object() -> None:
    """Across the package and the Definitions, ``obj._x`` is read only on ``self``/``cls``, or inside the class that
    owns ``_x`` (another instance of itself: ``__eq__``, an alternative constructor); an object of another class
    is asked through its public surface."""
    problems = []
    for path in sorted([*(ROOT / "assembler").rglob("*.py"), *(ROOT / "definitions").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed: dict[int, set[str]] = {}
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            own = _own_privates(cls)
            for inner in ast.walk(cls):
                allowed.setdefault(id(inner), set()).update(own)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr in allowed.get(id(node), set()) or (rel, ast.unparse(node)) in FOREIGN_PRIVATE:
                continue
            problems.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert problems == []
