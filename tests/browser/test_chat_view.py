"""The Chat view: its rows, lazy rendering, "Show more", deep links, keyboard, themes, local files (picker,
drag-and-drop, .jsonl.zst), "Load older" from a local file, and the benchmark hook's ``loadPage``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from conversation_support import assemble_page, storage_page_bytes
from session_builder import Session

from assembler.records import decode_page
from assembler.transcript import digest

if TYPE_CHECKING:
    from conftest import Viewer

LONG_TEXT = "\n\n".join(f"Paragraph {i}: " + "words " * 150 for i in range(120))  # ~110k characters


def feature_session() -> Session:
    s = Session("features")
    s.user("Please run the tools.")
    s.assistant([("reasoning", "First I think.\nSecond line of thought."), ("text", "Running them now.")],
                calls=[("call-ok", "bash", '{"command": "echo ok"}'), ("call-bad", "read", '{"path": "missing.txt"}')])
    s.tool_result("call-ok", "ok")
    s.tool_result("call-bad", "not found: missing.txt", is_error=True)
    s.end_step()
    b = s.b
    s.assistant([("text", LONG_TEXT)], retry={
        "retryId": "r1", "provider": "p", "mode": "normal", "policyKey": "k", "retry": 1, "maxRetries": 3,
        "delayMs": 1500, "failure": {"message": "rate limited", "code": "RATE_LIMIT"}})
    s.end_step()
    s.end_turn()
    s.user("Now hit the token limit.")
    s.assistant([("text", "A truncated answ")])
    s.end_step()
    s.end_turn({"kind": "max-tokens"})
    s.user("This one gets interrupted.")
    s.end_turn({"kind": "aborted", "reason": {"kind": "user"}})
    s.user("And this one fails.")
    s.end_turn({"kind": "error", "error": {"message": "upstream exploded", "code": "UPSTREAM"}})
    b.add("compaction/start", {"compactionId": "c1", "turn": None})
    b.add("compaction/summary", {"compactionId": "c1", "summary": [{"type": "text", "text": "The summary of it all."}],
                                 "shadowedRange": {"start": 1, "end": 5}, "shadowedSeqs": [1, 2, 3, 4, 5],
                                 "shadowedTokenCount": 1234, "provider": "p", "model": "m"})
    b.add("compaction/end", {"compactionId": "c1", "turn": None})
    s.user("Injected context from a plugin.", source={"kind": "plugin", "plugin": "my-plugin"})
    return s


def viewer_height(page: Any) -> int:
    return int(page.evaluate("() => innerHeight"))


def cpython_digest(data: bytes) -> str:
    from assembler.logfile import parse_session_bytes

    result = parse_session_bytes(data)
    return digest(assemble_page(decode_page(storage_page_bytes(result.records, "packed", None))))


@pytest.fixture(scope="module")
def features(viewer: Viewer) -> Iterator[tuple[Viewer, dict[str, Any]]]:
    data = feature_session().to_bytes()
    result = viewer.open_file(viewer.add_file("features.jsonl", data), all=True)
    assert result["error"] is None
    assert result["digest"] == cpython_digest(data)
    viewer.render_all()
    viewer.attach_all()  # a small transcript: its structure is checked with every row in the DOM
    yield viewer, result
    viewer.attach_all(False)


def test_rows_for_every_kind_of_transcript_item(features: tuple[Viewer, dict[str, Any]]) -> None:
    viewer, _ = features
    page = viewer.page
    text = page.inner_text("#transcript")
    assert page.locator("#transcript .user-message").count() == 4
    assert page.locator("#transcript details.think").count() >= 1
    tools = page.locator("#transcript article.kind-tool")
    assert tools.count() == 2
    assert "bash" in tools.nth(0).inner_text() and "echo ok" in tools.nth(0).inner_text()
    assert tools.nth(1).locator("details.tool-error .badge-error").inner_text() == "Failed"
    assert "Retrying" in text and "attempt 1/3" in text and "rate limited" in text
    assert "Max tokens" in text
    assert "Interrupted" in text and "by the user" in text
    assert "Error (UPSTREAM)" in text and "upstream exploded" in text
    assert "Compacted 5 history items (~1,234 tokens)" in text
    assert "Context injection my-plugin" in text
    tail = page.locator("#transcript .turn-tail").first.inner_text()
    assert "Ran for" in tail and "TTFT" in tail and "tok/s" in tail
    # Turn 1's usage is unavailable (its retried attempt has no usage sample, ASSEMBLY 5.4); turn 2's is shown.
    assert "Input 100 tok · Output 20 tok" in page.locator("#transcript .turn-tail").nth(1).inner_text()
    # A tool call is shown once: in its tool row, not again inside the assistant step.
    assert page.locator("#transcript .tool-streaming").count() == 0


def test_collapsed_rows_render_their_body_only_when_opened(features: tuple[Viewer, dict[str, Any]]) -> None:
    page = features[0].page
    think = page.locator("#transcript details.think").first
    body = think.locator(".think-body")
    assert think.get_attribute("open") is None
    assert body.get_attribute("data-pending") == "1" and body.inner_html() == ""
    think.locator("summary").click()
    page.wait_for_function("() => !document.querySelector('#transcript details.think .think-body[data-pending]')")
    assert "Second line of thought." in body.inner_text()
    tool = page.locator("#transcript article.kind-tool details").nth(1)
    tool.locator("summary").click()
    page.wait_for_function(
        "() => document.querySelectorAll('#transcript article.kind-tool .tool-body[data-pending]').length < 2")
    # The body arrives from the worker after the request started: wait for it, not just for the request.
    page.wait_for_function("""() => [...document.querySelectorAll('#transcript article.kind-tool details')][1]
                                      ?.querySelector('.tool-body:not(.loading)')?.innerText.length > 0""")
    assert "not found: missing.txt" in tool.inner_text()


def test_long_text_renders_in_slices_with_show_more(features: tuple[Viewer, dict[str, Any]]) -> None:
    page = features[0].page
    answer = page.locator("#transcript .assistant-text", has_text="Paragraph 0:")
    assert "Paragraph 119:" not in answer.inner_text()
    button = answer.locator("button.show-more")
    assert button.count() == 1
    for _ in range(10):
        if answer.locator("button.show-more").count() == 0:
            break
        more = answer.locator("button.show-more").element_handle()
        more.click()
        page.wait_for_function("(button) => !button.isConnected", arg=more)  # the slice replaced the button
    page.wait_for_function(
        """() => [...document.querySelectorAll('#transcript .assistant-text')]
                   .some((e) => e.innerText.includes('Paragraph 119:'))""")
    assert answer.locator("button.show-more").count() == 0


def test_deep_link_scrolls_to_the_node(features: tuple[Viewer, dict[str, Any]]) -> None:
    page = features[0].page
    page.evaluate("() => window.scrollTo(0, document.scrollingElement.scrollHeight)")
    seq = page.locator("#transcript article.kind-tool").first.get_attribute("data-seq")
    page.evaluate("(seq) => { location.hash = `seq=${seq}`; }", seq)
    page.wait_for_function("() => document.querySelector('#transcript article.is-target')")
    target = page.locator("#transcript article.is-target")
    assert target.get_attribute("data-seq") == seq
    top = target.evaluate("(el) => el.getBoundingClientRect().top")
    assert 0 <= top < viewer_height(page)
    page.evaluate("() => { history.replaceState(null, '', location.pathname); }")


def test_keyboard_moves_between_rows_and_opens_them(features: tuple[Viewer, dict[str, Any]]) -> None:
    page = features[0].page
    page.keyboard.press("g")
    first = page.evaluate("() => document.activeElement.dataset.key")
    page.keyboard.press("j")
    second = page.evaluate("() => document.activeElement.dataset.key")
    assert first and second and first != second
    page.keyboard.press("k")
    assert page.evaluate("() => document.activeElement.dataset.key") == first
    page.keyboard.press("j")
    before = page.evaluate("() => document.activeElement.querySelector('details')?.open")
    page.keyboard.press("o")
    assert page.evaluate("() => document.activeElement.querySelector('details')?.open") is (not before)


def test_theme_toggle_switches_colours_and_code_highlighting(features: tuple[Viewer, dict[str, Any]]) -> None:
    page = features[0].page
    read = """() => ({theme: document.documentElement.dataset.theme,
                      bg: getComputedStyle(document.body).backgroundColor})"""
    before = page.evaluate(read)
    page.keyboard.press("t")
    after = page.evaluate(read)
    assert before["theme"] != after["theme"] and before["bg"] != after["bg"]
    page.click("#theme-toggle")
    assert page.evaluate(read) == before


def test_events_toggle_shows_unclaimed_events(viewer: Viewer) -> None:
    s = Session("events")
    s.user("hi")
    s.b.add("session/title", {"title": "Events test"})
    s.end_turn()
    viewer.open_file(viewer.add_file("events.jsonl", s.to_bytes()), all=True)
    page = viewer.page
    assert viewer.row_count("event", shown=False) >= 1 and viewer.row_count("event") == 0  # hidden: not laid out
    assert page.locator("#transcript article.kind-event").count() == 0
    page.check("#show-events")
    assert viewer.row_count("event") == viewer.row_count("event", shown=False)
    viewer.render_all()
    assert "session/title" in page.inner_text("#transcript")
    page.uncheck("#show-events")


def test_file_picker_opens_a_zstd_log(viewer: Viewer, tmp_path: Any) -> None:
    import zstandard

    path = tmp_path / "picked.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(feature_session().to_bytes()))
    page = viewer.page
    page.set_input_files("#file-input", str(path))
    page.wait_for_function("""() => document.getElementById('session-title').textContent === 'picked.jsonl.zst'
                                  && document.querySelectorAll('#transcript article').length > 5
                                  && !document.documentElement.dataset.busy""")
    assert "Context injection my-plugin" in viewer.render_all()


def test_drag_and_drop_opens_a_log(viewer: Viewer) -> None:
    s = Session("dropped")
    s.user("Dropped onto the page.")
    s.end_turn()
    path = viewer.add_file("dropped.jsonl", s.to_bytes())
    page = viewer.page
    transfer = page.evaluate_handle(
        """async (path) => {
            const dt = new DataTransfer();
            dt.items.add(new File([await (await fetch(path)).arrayBuffer()], "dropped.jsonl"));
            return dt;
        }""",
        path,
    )
    page.dispatch_event("body", "dragenter", {"dataTransfer": transfer})
    assert page.locator("#drop-overlay").is_visible()
    page.dispatch_event("body", "drop", {"dataTransfer": transfer})
    page.wait_for_function("() => document.getElementById('transcript').innerText.includes('Dropped onto the page.')")
    assert page.locator("#drop-overlay").is_hidden()


def test_load_older_pages_a_local_file_without_expanding_it(viewer: Viewer) -> None:
    s = Session("older")
    for n in range(1, 61):
        s.user(f"Older question {n}")
        s.assistant([("text", f"Older answer {n} " + "streamed " * 20)])
        s.end_step()
        s.end_turn()
    result = viewer.open_file(viewer.add_file("older.jsonl", s.to_bytes()))
    assert result["inputs"] < 400  # the newest 50 of 120 messages only (the whole log has 660 records)
    page = viewer.page
    assert page.locator("#load-older").is_visible()
    # The rows laid out (by label): scrolling to the top would load older messages by itself.
    labels = page.evaluate("""() => { const v = window.transcriptViewer.view;
                                      return v.shownKeys().map((k) => v.metas.get(k).label); }""")
    assert "Older question 1" not in labels and "Older question 60" in labels
    for _ in range(2):  # 120 messages: the tail page and two older pages of 50
        # A DOM click: Playwright's own click scrolls the button into view first, and near the top scrolling loads
        # older messages by itself (navigation.mjs), which would race the click.
        page.evaluate("document.getElementById('load-older').click()")
        page.wait_for_function("() => !document.documentElement.dataset.busy")
    assert page.locator("#load-older").is_hidden()
    text = viewer.render_all()
    assert "Older question 1\n" in text + "\n" and text.count("Older answer 35 ") == 1
    inputs = viewer.run_python("import json\nfrom assembler.browser import VIEWER\njson.dumps(VIEWER.window.stats())")
    assert inputs["inputs"] == inputs["records"]


def test_load_page_hook_reports_counts_timings_and_the_digest(viewer: Viewer) -> None:
    from assembler.logfile import parse_session_bytes

    data = feature_session().to_bytes()
    page_bytes = storage_page_bytes(parse_session_bytes(data).records, "packed", None)
    path = viewer.add_file("features-page.json", page_bytes)
    result = viewer.page.evaluate(
        """async (path) => {
            const bytes = new Uint8Array(await (await fetch(path)).arrayBuffer());
            const result = await window.transcriptViewer.loadPage(bytes);
            result.asked = await window.transcriptViewer.digest();
            return result;
        }""",
        path,
    )
    assert result["digest"] is None  # off loadPage's timed path
    assert result["asked"]["digest"] == cpython_digest(data)
    assert set(result["ms"]) >= {"decode", "journal", "fold", "render"}
    assert all(v >= 0 for v in result["ms"].values())
    page = decode_page(page_bytes)
    assert result["records"] == result["inputs"] == len(page.records)
    transcript = assemble_page(page)
    assert result["chatNodes"] == len(transcript.chat)
    assert result["trajectoryNodes"] == len(transcript.trajectory)
    # Only the first screen was rendered: rows far above it are still placeholders.
    assert viewer.page.locator("#transcript article.placeholder").count() >= 0
