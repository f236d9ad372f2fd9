"""Definitions: one module per assembled view node kind, plus the shared block fold (scalar and packed, linear).

Rules: Definitions fold, nothing else: they import the core's contract and vocabulary only (``assembler.definition``,
``views``, ``records``, ``locations``, ``text``), never paging, expansion, an edge or anything that knows HTML.
``default_definitions()`` is the full set in registration order (Chat Definitions first, then Trajectory, then the
state-only inbox, the fallback last); the edges wire it in.
"""

from __future__ import annotations

from assembler.definition import Definition as _Definition

from .activity import Approval, GoalChange, HookBlock, OverflowNotice, Subagent
from .chat_assistant import ChatAssistant
from .command import Command
from .fallback import Fallback
from .input_message import InboxNextStep, InputMessage
from .notices import Compaction, RetryNotice, TurnNotice
from .records import RecordNotice, SourceRecord
from .tool import Tool
from .trajectory_assistant import TrajectoryAssistant, TrajectoryTurnEnd
from .turn_tail import TurnTail

__all__ = [
    "ChatAssistant",
    "TurnTail",
    "TrajectoryAssistant",
    "TrajectoryTurnEnd",
    "InputMessage",
    "InboxNextStep",
    "Command",
    "Tool",
    "TurnNotice",
    "RetryNotice",
    "Compaction",
    "Approval",
    "GoalChange",
    "HookBlock",
    "Subagent",
    "OverflowNotice",
    "SourceRecord",
    "RecordNotice",
    "Fallback",
    "default_definitions",
    "core_definitions",
]


def default_definitions() -> list[_Definition]:
    """A fresh instance of every Definition, in registration order."""
    return [
        InputMessage(),
        Command(),
        ChatAssistant(),
        Tool(),
        TurnNotice(),
        RetryNotice(),
        Compaction(),
        Approval(),
        GoalChange(),
        HookBlock(),
        Subagent(),
        OverflowNotice(),
        SourceRecord(),
        RecordNotice(),
        TurnTail(),
        TrajectoryAssistant(),
        TrajectoryTurnEnd(),
        InboxNextStep(),
        Fallback(),
    ]


def core_definitions() -> list[_Definition]:
    """Chat Assistant, Turn Tail and Trajectory Assistant only (the ASSEMBLY 6 benchmark fold)."""
    return [ChatAssistant(), TurnTail(), TrajectoryAssistant()]
