"""Storage edges: session files on disk (JSONL, ``.jsonl.zst``, SQLite). The core never imports this package."""

from .jsonl import SessionWriter, iter_session_lines, read_session, write_session
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
from .zstd import is_zstd_path

__all__ = ["SessionWriter", "iter_session_lines", "read_session", "write_session", "is_zstd_path"]
__all__ += ["SCHEMA_VERSION", "SchemaVersionError", "SqliteSessionStore", "StoreError", "is_sqlite_path",
            "read_sqlite", "write_sqlite", "load_any", "save_any", "session_format"]
