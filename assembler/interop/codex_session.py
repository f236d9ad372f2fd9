"""What a Codex ``session_meta`` says about the session (FORMATS.md §5.3, §5.5): the header fields, the
``request/header`` with the system prompt, and, for a spawned child thread, its ``subagent/descriptor``.

Rules: the header keeps our own ``id`` (the file stem) and ``version`` (our log format's); the thread id is
``sessionId`` and the Codex version ``harnessVersion``. A ``source`` object names a subagent: ``{"subagent":
{"thread_spawn": {parent_thread_id, depth, agent_nickname, agent_role}}}`` links the parent (``parentSession``),
``{"subagent": "<name>"}`` and ``{"subagent": {"other": "<name>"}}`` only label it; any other shape is not read (the
record stays in the raw view). Pure.
"""

from __future__ import annotations

from typing import Any

from .base import iso_ms
from .codex_records import SessionMeta

__all__ = ["meta_header", "request_header", "subagent_descriptor", "subagent_of"]


def _str(value: Any) -> str | None:
    return value if type(value) is str and value else None


def subagent_of(meta: SessionMeta) -> dict[str, Any] | None:
    """``{label, parent?, depth?, role?}`` when ``source`` names this rollout a subagent's, else None."""
    source = meta.source
    if type(source) is not dict or "subagent" not in source:
        return None
    sub = source["subagent"]
    found: dict[str, Any] = {}
    if type(sub) is str:
        found["label"] = sub
    elif type(sub) is dict and type(sub.get("thread_spawn")) is dict:
        spawn = sub["thread_spawn"]
        if _str(spawn.get("parent_thread_id")):
            found["parent"] = spawn["parent_thread_id"]
        if type(spawn.get("depth")) is int:
            found["depth"] = spawn["depth"]
        if _str(spawn.get("agent_role")):
            found["role"] = spawn["agent_role"]
        found["label"] = _str(spawn.get("agent_nickname")) or found.get("role")
    elif type(sub) is dict and _str(sub.get("other")):
        found["label"] = sub["other"]
    else:
        return None
    found["label"] = found.get("label") or meta.agent_nickname or meta.agent_role or "subagent"
    return found


def meta_header(meta: SessionMeta, time: int) -> dict[str, Any]:
    """The header fields ``session_meta`` gives (only those it records)."""
    # The thread id is the session's identity: a subagent rollout names its parent by it (FORMATS §5.5).
    header: dict[str, Any] = {"id": meta.id or None, "sessionId": meta.id, "cwd": meta.cwd,
                              "harnessVersion": meta.cli_version, "originator": meta.originator,
                              "createdAt": iso_ms(meta.timestamp) or time or None}
    sub = subagent_of(meta)
    if sub is not None:
        header["origin"] = "subagent"
        header["parentSession"] = sub.get("parent")
        header["delegationDepth"] = sub.get("depth")
    return {k: v for k, v in header.items() if v is not None}


def request_header(meta: SessionMeta, provider: str | None, model: str | None) -> dict[str, Any] | None:
    """``request/header {header:{config:{provider, model}, system}, reason:'initial'}`` from
    ``base_instructions.text``; the older ``instructions`` (the user's instruction files) go beside ``system`` as
    ``instructions`` (log-only: the model-context view shows the context items the rollout records). None when
    the record gives neither."""
    system = meta.base_instructions.text if meta.base_instructions is not None else None
    if system is None and meta.instructions is None:
        return None
    config: dict[str, Any] = {}
    if provider is not None:
        config["provider"] = provider
    if model is not None:
        config["model"] = model
    header: dict[str, Any] = {"config": config}
    if system is not None:
        header["system"] = system
    if meta.instructions is not None:
        header["instructions"] = meta.instructions
    return {"header": header, "reason": "initial"}


def subagent_descriptor(meta: SessionMeta) -> dict[str, Any] | None:
    """``subagent/descriptor`` of a child rollout: ``{version, kind:'subagent', label, mode:'continuable',
    childSessionId, parentSessionId?, role?, depth?}`` (a Codex child thread can be messaged again)."""
    sub = subagent_of(meta)
    if sub is None:
        return None
    out: dict[str, Any] = {"version": 2, "kind": "subagent", "label": sub["label"], "mode": "continuable",
                           "provider": "codex", "childSessionId": meta.id}
    for key, name in (("parent", "parentSessionId"), ("role", "role"), ("depth", "depth")):
        if key in sub:
            out[name] = sub[key]
    return out
