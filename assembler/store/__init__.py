"""Storage edges: session files on disk (JSONL, ``.jsonl.zst``, SQLite). The core never imports this package."""

from .jsonl import SessionWriter, iter_session_lines, read_session, write_session
from .zstd import is_zstd_path

__all__ = ["SessionWriter", "iter_session_lines", "read_session", "write_session", "is_zstd_path"]
