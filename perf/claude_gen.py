"""A deterministic, seeded generator of Claude Code-shaped session files (FORMATS §4.2) for benchmarks: our own
code and our own text, no copied data.

A session is turns of: a typed prompt, then responses of one to four records sharing a ``message.id`` (thinking,
text, one or more ``tool_use`` blocks, each its own record with provisional usage, the final usage on the last),
the tool results in later user records with a ``toolUseResult`` side copy (Bash, Read, Edit, Write, Grep,
TodoWrite), hook lines between a response's records, a final text answer, and a ``system/turn_duration``. With
``sidechains`` each turn also runs an inline 1.0.x sidechain (a Task call, its ``isSidechain`` records, the
result). The same ``(size, seed, sidechains)`` always gives the same bytes.

Usage: ``python -m perf.claude_gen OUT.jsonl --mb 50 [--seed 7] [--sidechains]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["generate", "records", "main"]

_WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
          "upsilon phi chi psi omega module function parser reader record session token stream block result "
          "value index cache layer file line error check test build patch step turn").split()
_TOOLS = ("Bash", "Read", "Edit", "Write", "Grep", "TodoWrite")
_T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def _iso(ms: int) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``, as Claude Code writes them."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class _Gen:
    def __init__(self, seed: int, sidechains: bool) -> None:
        self.rng = random.Random(seed)
        self.sidechains = sidechains
        self.time = _T0
        self.n = 0
        self.parent: str | None = None
        self.session = f"{self.rng.getrandbits(128):032x}"

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(n))

    def text(self, lines: int, width: int = 12) -> str:
        return "\n".join(self.words(self.rng.randint(3, width)) for _ in range(lines))

    def uid(self) -> str:
        self.n += 1
        return f"{self.rng.getrandbits(32):08x}-0000-4000-8000-{self.n:012x}"

    def tick(self, lo: int = 5, hi: int = 900) -> str:
        self.time += self.rng.randint(lo, hi)
        return _iso(self.time)

    def envelope(self, rtype: str, *, sidechain: bool = False, parent: str | None = None) -> dict[str, Any]:
        uuid = self.uid()
        rec = {"parentUuid": self.parent if parent is None else parent, "isSidechain": sidechain,
               "userType": "external", "cwd": "/home/user/proj", "sessionId": self.session, "version": "2.0.99",
               "gitBranch": "main", "type": rtype, "uuid": uuid, "timestamp": self.tick()}
        self.parent = uuid
        return rec

    def user(self, content: Any, **extra: Any) -> dict[str, Any]:
        rec = self.envelope("user", **{k: extra.pop(k) for k in ("sidechain", "parent") if k in extra})
        rec["message"] = {"role": "user", "content": content}
        rec.update(extra)
        return rec

    def response(self, blocks: list[dict[str, Any]], stop: str | None, sidechain: bool = False) -> Iterator[
            dict[str, Any]]:
        """One API response: one record per block, sharing the message id; provisional usage until the last."""
        mid = f"msg_{self.rng.getrandbits(96):024x}"
        inp, read, write = self.rng.randint(1, 9), self.rng.randint(1000, 90_000), self.rng.randint(0, 5000)
        out = self.rng.randint(20, 2000)
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            rec = self.envelope("assistant", sidechain=sidechain)
            rec["requestId"] = f"req_{mid[4:20]}"
            rec["message"] = {"id": mid, "type": "message", "role": "assistant", "model": "claude-synthetic-1",
                              "content": [block], "stop_reason": stop if last else None, "stop_sequence": None,
                              "usage": {"input_tokens": inp, "cache_creation_input_tokens": write,
                                        "cache_read_input_tokens": read, "output_tokens": out if last else 1}}
            yield rec
            if not last and self.rng.random() < 0.2:  # a hook line between the records of one response
                hook = self.envelope("system")
                hook.update({"content": "Running \x1b[1mPostToolUse\x1b[22m...", "level": "info", "isMeta": False})
                yield hook

    def tool(self, name: str) -> tuple[dict[str, Any], str, Any]:
        """A tool_use block, the result text the model gets and the toolUseResult side copy."""
        call = f"toolu_{self.rng.getrandbits(96):024x}"
        path = f"/home/user/proj/{self.rng.choice(_WORDS)}/{self.rng.choice(_WORDS)}.py"
        if name == "Bash":
            out = self.text(self.rng.randint(1, 30), 16)
            return ({"type": "tool_use", "id": call, "name": name, "input": {"command": f"ls {path}"}}, out,
                    {"stdout": out, "stderr": "", "interrupted": False, "isImage": False})
        if name == "Read":
            body = self.text(self.rng.randint(5, 120), 14).split("\n")
            numbered = "\n".join(f"{i + 1:6d}\u2192{line}" for i, line in enumerate(body))
            return ({"type": "tool_use", "id": call, "name": name, "input": {"file_path": path}}, numbered,
                    {"type": "text", "file": {"filePath": path, "content": "\n".join(body), "numLines": len(body),
                                              "startLine": 1, "totalLines": len(body)}})
        if name == "Edit":
            old, new = self.text(3), self.text(4)
            patch = [{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 4,
                      "lines": [f"-{x}" for x in old.split("\n")] + [f"+{x}" for x in new.split("\n")]}]
            return ({"type": "tool_use", "id": call, "name": name,
                     "input": {"file_path": path, "old_string": old, "new_string": new}},
                    f"The file {path} has been updated.",
                    {"filePath": path, "oldString": old, "newString": new, "structuredPatch": patch,
                     "userModified": False, "replaceAll": False})
        if name == "Write":
            content = self.text(self.rng.randint(5, 60))
            return ({"type": "tool_use", "id": call, "name": name, "input": {"file_path": path, "content": content}},
                    f"File created successfully at: {path}",
                    {"type": "create", "filePath": path, "content": content, "structuredPatch": []})
        if name == "Grep":
            files = [f"/home/user/proj/{self.rng.choice(_WORDS)}.py" for _ in range(self.rng.randint(1, 8))]
            return ({"type": "tool_use", "id": call, "name": name, "input": {"pattern": self.rng.choice(_WORDS)}},
                    "\n".join(files), {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)})
        todos = [{"content": self.words(5), "status": self.rng.choice(("pending", "in_progress", "completed")),
                  "activeForm": self.words(5)} for _ in range(self.rng.randint(1, 6))]
        return ({"type": "tool_use", "id": call, "name": "TodoWrite", "input": {"todos": todos}},
                "Todos have been modified successfully.", {"oldTodos": [], "newTodos": todos})

    def turn(self) -> Iterator[dict[str, Any]]:
        yield self.user(self.text(self.rng.randint(1, 6)))
        start = self.time
        for _ in range(self.rng.randint(1, 6)):
            calls = [self.tool(self.rng.choice(_TOOLS)) for _ in range(self.rng.randint(1, 3))]
            blocks: list[dict[str, Any]] = []
            if self.rng.random() < 0.7:
                blocks.append({"type": "thinking", "thinking": self.text(self.rng.randint(2, 25), 18),
                               "signature": f"{self.rng.getrandbits(256):064x}"})
            if self.rng.random() < 0.5:
                blocks.append({"type": "text", "text": self.text(self.rng.randint(1, 4))})
            blocks.extend(c[0] for c in calls)
            yield from self.response(blocks, "tool_use")
            calling = self.parent
            for use, text, side in calls:
                yield self.user([{"tool_use_id": use["id"], "type": "tool_result", "content": text,
                                  "is_error": False}], parent=calling, toolUseResult=side)
        if self.sidechains:
            yield from self.sidechain()
        yield from self.response([{"type": "text", "text": self.text(self.rng.randint(2, 20))}], "end_turn")
        duration = self.envelope("system")
        duration.update({"subtype": "turn_duration", "durationMs": self.time - start, "isMeta": False})
        yield duration

    def sidechain(self) -> Iterator[dict[str, Any]]:
        """A 1.0.x inline subagent: the Task call, its sidechain records, then its result in the main chain."""
        prompt = self.text(3)
        call = f"toolu_{self.rng.getrandbits(96):024x}"
        yield from self.response([{"type": "tool_use", "id": call, "name": "Task",
                                   "input": {"description": self.words(4), "prompt": prompt}}], "tool_use")
        main = self.parent
        self.parent = None
        yield self.user(prompt, sidechain=True, parent=None)
        use, text, side = self.tool("Read")
        yield from self.response([use], "tool_use", sidechain=True)
        yield self.user([{"tool_use_id": use["id"], "type": "tool_result", "content": text}], sidechain=True,
                        toolUseResult=side)
        answer = self.text(self.rng.randint(2, 10))
        yield from self.response([{"type": "text", "text": answer}], "end_turn", sidechain=True)
        self.parent = main
        yield self.user([{"tool_use_id": call, "type": "tool_result", "content": [{"type": "text", "text": answer}]}],
                        toolUseResult={"status": "completed", "prompt": prompt,
                                       "content": [{"type": "text", "text": answer}], "totalToolUseCount": 1})


def records(seed: int = 7, sidechains: bool = False) -> Iterator[dict[str, Any]]:
    """An endless stream of records of one session (take as many as you need)."""
    gen = _Gen(seed, sidechains)
    yield {"type": "summary", "summary": "Synthetic session", "leafUuid": "00000000-0000-4000-8000-000000000000"}
    while True:
        yield from gen.turn()


def generate(size_bytes: int, seed: int = 7, sidechains: bool = False) -> bytes:
    """A session file of at least ``size_bytes`` bytes (whole turns: it ends after a turn's duration record)."""
    out: list[bytes] = []
    total = 0
    for rec in records(seed, sidechains):
        line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        out.append(line)
        total += len(line)
        if total >= size_bytes and rec.get("subtype") == "turn_duration":
            break
    return b"".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", help="the .jsonl file to write")
    parser.add_argument("--mb", type=float, default=50.0, help="size in MB (default 50)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sidechains", action="store_true", help="also write inline 1.0.x sidechains")
    args = parser.parse_args(argv)
    data = generate(int(args.mb * 1_000_000), args.seed, args.sidechains)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, args.out)
    print(f"{args.out}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
