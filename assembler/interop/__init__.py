"""Readers of other agent harnesses' session logs (``../shared/spec/FORMATS.md``): Claude Code, Codex, Inspect AI,
Gemini CLI, SWE-agent, mini-swe-agent and OpenHands, each mapped onto our event model so every view, export and
command works on them as on our own logs.

Rules: part of the core: sans-I/O (bytes or decoded records in, our events out), the same code on CPython and in
Pyodide, records decoded with msgspec Structs. Which reader reads a file is decided by ``assembler.formats`` (the
one table), from the bytes. Every source record is kept beside the events made from it (``base.SOURCE``) or as a
raw event (``base.RAW``); nothing is dropped.
"""

from __future__ import annotations

from .base import RAW, SOURCE, LineLoader, LineReader, LogBuilder, SessionLog, SourceError, read_lines

__all__ = ["RAW", "SOURCE", "LineLoader", "LineReader", "LogBuilder", "SessionLog", "SourceError", "read_lines"]
