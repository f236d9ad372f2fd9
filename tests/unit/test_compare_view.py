"""The page's "Compare two runs" edge (``assembler/browser/compare_view.py``) on CPython: two whole-session pages
compared, their turns' HTML on request, the export through ``render.compare``, and a side that cannot be read named
in the error. The sessions are generated (``session_builder``)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from assembler.browser import Viewer
from assembler.history import MessageIndex
from assembler.logfile import parse_session_bytes
from tests.browser.session_builder import Session


def run(sid: str, prompts: list[str], *, path_arg: str = "notes.txt") -> bytes:
    s = Session(sid)
    for n, prompt in enumerate(prompts, 1):
        s.user(prompt)
        arg = path_arg if prompt == "look" else f"file-{n}.txt"
        s.assistant([("text", f"Reading for {prompt}.")], calls=[(f"call-{n}", "read", f'{{"path": "{arg}"}}')])
        s.tool_result(f"call-{n}", f"contents of {arg}")
        s.end_step()
        s.assistant([("text", f"Done with {prompt}.")])
        s.end_step()
        s.end_turn()
    return s.to_bytes()


def page(log: bytes) -> bytes:
    result = parse_session_bytes(log)
    assert result.error is None
    return msgspec.json.encode(MessageIndex(result.records).session_page(None, None, None))


def value(data: bytes) -> Any:
    return json.loads(data)


def test_a_session_against_itself_has_no_difference() -> None:
    v = Viewer()
    p = page(run("same", ["start", "look"]))
    out = value(v.compare_open(p, p, "same", "same"))
    assert out["differences"] == []
    assert [t["match"] for t in out["turns"]] == ["same-prompt", "same-prompt"]
    assert out["counts"]["differing"] == 0
    assert out["title"] == "same vs same: start"  # equal titles: the ids tell the sides apart


def test_an_inserted_turn_and_another_argument_are_named_and_rendered() -> None:
    v = Viewer()
    out = value(v.compare_open(page(run("a", ["start", "look"])),
                               page(run("b", ["start", "<b>check</b>", "look"], path_arg="other.txt")), "a", "b"))
    assert [(t["match"], t["matchLabel"]) for t in out["turns"]] == [
        ("same-prompt", "same prompt"), ("only-b", "only in B"), ("same-prompt", "same prompt")]
    assert "arguments" in out["turns"][2]["differences"]
    assert out["labels"] == {"a": "a: start", "b": "b: start"}
    turns = value(v.compare_turns([1, 2, 99]))["turns"]
    assert sorted(turns) == ["1", "2"]  # an index past the end is no turn
    inserted = turns["1"]
    assert "&lt;b&gt;check&lt;/b&gt;" in inserted["header"]
    assert "<b>check" not in inserted["header"] + inserted["columns"]
    assert "No such turn." in inserted["columns"]
    look = turns["2"]
    assert "notes.txt" in look["header"] and "other.txt" in look["header"]
    assert look["columns"].count('class="compare-side"') == 2 and "<article" in look["columns"]
    md = value(v.compare_export("md"))
    assert md["name"] == "compare-a-b.md" and "only in B" in md["text"]
    html = value(v.compare_export("html"))
    assert html["name"] == "compare-a-b.html" and html["text"].count('class="compare-turn"') == 3
    v.compare_close()
    assert "error" in value(v.compare_turns([0])) and "error" in value(v.compare_export("html"))


def test_a_side_that_cannot_be_read_is_named() -> None:
    v = Viewer()
    good = page(run("a", ["start"]))
    out = value(v.compare_open(good, b'{"records": 3}', "a", "broken"))
    assert out["error"]["side"] == "b" and out["error"]["id"] == "broken"
    assert "session page" in out["error"]["text"]
    assert "error" in value(v.compare_turns([0]))  # nothing half-open is kept


def test_the_page_columns_are_lazy_and_their_parts_come_on_request() -> None:
    import re

    from assembler.render.slices import SLICE_CHARS

    long = " ".join(f"word{i}" for i in range(SLICE_CHARS // 3))  # past one slice
    s = Session("long")
    s.user("start")
    s.assistant([("text", long)], calls=[("call-1", "read", '{"path": "notes.txt"}')])
    s.tool_result("call-1", "contents of notes.txt")
    s.end_step()
    s.end_turn()
    v = Viewer()
    out = value(v.compare_open(page(s.to_bytes()), page(run("b", ["start"])), "long", "b"))
    columns = value(v.compare_turns([0]))["turns"]["0"]["columns"]
    assert '<div class="compare-side" data-side="a">' in columns and 'data-side="b"' in columns
    # Rows as the chat view renders them: keyed articles (no id: both sides may hold the same seq), the tool's body
    # left to be asked for, the long text one slice and a "Show more".
    assert 'id="seq-' not in columns and "contents of notes.txt" not in columns
    keys = re.findall(r'<article [^>]*data-key="([^"]+)"', columns)
    assert len(keys) >= 4
    assert long not in columns and 'class="show-more"' in columns
    more = re.search(r'class="show-more" data-key="([^"]+)" data-block="(\d+)" data-offset="(\d+)"', columns)
    assert more is not None
    rest = value(v.compare_more("a", more[1], int(more[2]), int(more[3])))["html"]
    assert "word" in rest and not rest.startswith("<p>word0 ")  # the next slice, not the first again
    tool = re.search(r'<article class="node kind-tool" data-kind="tool" data-key="([^"]+)"', columns)
    assert tool is not None
    assert "contents of notes.txt" in value(v.compare_section("a", tool[1], 0))["html"]
    # Side B's row of that key (if any) is B's: unknown keys and closed comparisons give nothing.
    assert value(v.compare_section("b", "no-such-key", 0))["html"] == ""
    v.compare_close()
    assert value(v.compare_section("a", tool[1], 0))["html"] == ""
    # The export stays whole: every text and body in full.
    assert out["records"]["a"] > 0


def test_local_files_are_read_per_side_and_compared_without_touching_the_window() -> None:
    v = Viewer()
    good = run("a", ["start", "look"])
    lines = run("bad", ["start", "look"]).split(b"\n")
    cut = next(i for i, line in enumerate(lines) if b"Reading for look" in line)
    bad = b"\n".join([*lines[:cut], b"{broken", *lines[cut + 1:]])
    for side, name, data in (("a", "a.jsonl", good), ("b", "bad.jsonl", bad)):
        v.compare_file_begin(side, name, len(data))
        half = len(data) // 2
        v.compare_file_feed(side, data[:half])  # slices, as the worker feeds them
        v.compare_file_feed(side, data[half:])
    read_a, read_b = value(v.compare_file_finish("a")), value(v.compare_file_finish("b"))
    assert read_a["error"] is None and read_a["warning"] is None and read_a["records"] > 0
    assert read_b["error"] is None and read_b["warning"].startswith(f"bad.jsonl:{cut + 1}: invalid JSON")
    out = value(v.compare_open(None, None, "folder:a.jsonl", "folder:bad.jsonl"))
    assert [t["match"] for t in out["turns"]] == ["same-prompt", "same-prompt"]
    assert len(v.window.chat) == 0  # the chat window was left as it was
    # Nothing readable is an error; a side never read is named when compared.
    v.compare_file_begin("a", "notes.txt", 5)
    v.compare_file_feed("a", b"hello")
    assert value(v.compare_file_finish("a"))["error"]
    out = value(v.compare_open(None, page(good), "folder:notes.txt", "b"))
    assert out["error"]["side"] == "a" and "not read" in out["error"]["text"]
