"""The layout states the architecture: public exports resolve, and imports flow one way (DESIGN "Layout").

The core is sans-I/O: no ``js``, ``pyodide``, ``asyncio``, sockets, files or clocks, and it never imports
``definitions`` or an edge. Definitions never import an edge or anything that knows HTML.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ["records", "chunk_rows", "logfile", "errors", "history", "journal", "journal.errors", "journal.publications",
        "journal.journal", "conversation", "locations", "surface", "session", "invariants", "repair", "text"]
EDGES = {"store", "server", "cli", "browser", "render", "commands"}
FORBIDDEN_IN_CORE = {"js", "pyodide", "asyncio", "socket", "time", "datetime", "os", "pathlib", "io", "sqlite3",
                     "subprocess", "threading", "urllib", "http", "definitions", "starlette", "uvicorn"}


def module_path(name: str) -> Path:
    """The source file of core module ``name`` (dotted, under ``assembler``); a package is its ``__init__.py``."""
    base = ROOT / "assembler" / Path(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_name(base.name + ".py")


def imported_modules(path: Path) -> set[str]:
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


@pytest.mark.parametrize("package", ["assembler", "assembler.store", "assembler.journal", "assembler.server",
                                     "assembler.render", "assembler.browser", "definitions"])
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, package
    assert len(set(module.__all__)) == len(module.__all__), "duplicate export"
    for name in module.__all__:
        assert hasattr(module, name), f"{package}.{name}"


@pytest.mark.parametrize("name", CORE)
def test_core_module_is_sans_io_and_imports_no_edge(name: str) -> None:
    path = module_path(name)
    for imported in imported_modules(path):
        top = imported.lstrip(".").split(".")[0]
        if imported.startswith("."):
            assert top not in EDGES, f"{name} imports edge {imported}"
        else:
            assert top not in FORBIDDEN_IN_CORE, f"{name} imports {imported}"
    assert not calls_open(path), f"{name} opens files"


def test_core_list_names_every_module_of_a_core_package() -> None:
    for name in CORE:
        package = ROOT / "assembler" / Path(*name.split("."))
        if package.is_dir():
            found = {f"{name}.{path.stem}" for path in package.glob("*.py") if path.stem != "__init__"}
            assert found <= set(CORE), f"add {sorted(found - set(CORE))} to CORE"


def test_definitions_import_no_edge_and_no_html() -> None:
    for path in sorted((ROOT / "definitions").glob("*.py")):
        for imported in imported_modules(path):
            parts = imported.lstrip(".").split(".")
            assert not (parts[0] == "assembler" and len(parts) > 1 and parts[1] in EDGES), (path.name, imported)
            assert parts[0] not in {"markdown_it", "pygments", "js", "pyodide", "asyncio"}, (path.name, imported)


def test_core_imports_with_js_absent() -> None:
    import sys

    assert "js" not in sys.modules and "pyodide" not in sys.modules
    for name in CORE:
        importlib.import_module(f"assembler.{name}")
    assert "js" not in sys.modules and "pyodide" not in sys.modules
