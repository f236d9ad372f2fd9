"""Storage edges: session files on disk (JSONL, ``.jsonl.zst``, SQLite) and atomic outputs. The core never imports
this package.

Names are imported on first use (PEP 562), so a command pays only for the stores it uses (``sqlite3`` is imported
only when a database is read or written; Pyodide ships it, and the page reads a local database with
``store.sqlite`` as the command line does).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from .atomic import OutputError, SameFileError, UnsafeOutputError, atomic_output, check_output
    from .jsonl import SessionWriter, read_session, read_stream, write_session
    from .open import load_any, save_any, session_format
    from .sqlite import (
        SCHEMA_VERSION,
        SchemaVersionError,
        SqliteSessionStore,
        StoreError,
        is_sqlite_path,
        read_sqlite,
        write_sqlite,
    )
    from .zstd import ZstdStreamError, is_zstd_path

_WHERE = {
    "atomic": ("OutputError", "SameFileError", "UnsafeOutputError", "atomic_output", "check_output"),
    "jsonl": ("SessionWriter", "read_session", "read_stream", "write_session"),
    "open": ("load_any", "save_any", "session_format"),
    "sqlite": ("SCHEMA_VERSION", "SchemaVersionError", "SqliteSessionStore", "StoreError", "is_sqlite_path",
               "read_sqlite", "write_sqlite"),
    "zstd": ("ZstdStreamError", "is_zstd_path"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "OutputError", "SameFileError", "UnsafeOutputError", "atomic_output", "check_output",
    "SessionWriter", "read_session", "read_stream", "write_session",
    "load_any", "save_any", "session_format",
    "SCHEMA_VERSION", "SchemaVersionError", "SqliteSessionStore", "StoreError", "is_sqlite_path", "read_sqlite",
    "write_sqlite",
    "ZstdStreamError", "is_zstd_path",
]
assert sorted(__all__) == sorted(_MODULE_OF)


def __getattr__(name: str) -> _Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
