"""Other harnesses' logs in the page (issue 20): a Claude Code project folder opened with "Open folder…" (read in
the worker, nothing uploaded) lists its sessions grouped by project with the subagent under its parent, and opens
each; a Codex rollout and an Inspect ``.eval`` open from the file picker; the Inspect log's samples are listed and
another one opens by its key, locally and as a served ``FILE_ID/KEY``; a dropped folder is walked; a screenshot in
a Claude Code log shows; a growing Claude Code file served by the server is followed live. Real fixture text is
asserted in the page; the logs are copied into temporary folders at test time."""

from __future__ import annotations

import copy
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page

from tests.claude_projects import (
    AGENT,
    AGENT_PROMPT,
    CWD,
    META,
    PARENT,
    PARENT_PROMPT,
    WARMUP_AGENT,
    add_warmup,
    claude_projects,
)
from tests.interop_support import interop_file

if TYPE_CHECKING:
    from conftest import Viewer

CODEX = ("codex/codemie-ai+codemie-code@8e8d4ce/src/agents/plugins/codex/__tests__/fixtures/"
         "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
INSPECT = "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/log_formats.eval"
CLAUDE_IMAGE = "claude-code/claude-code-log-1.7.0/dev-docs/messages/claude-code/user/image.jsonl"
INSPECT_PROMPT = "Is the following statement something you would say?"  # the real sample's prompt
SECOND_PROMPT = "A second sample, copied from the first for this test: is this the second one?"
PARENT_ANSWER = "Here's an overview of the claude-code-log project organization"  # rendered from **…** markdown


def transcript_has(page: Page, text: str, timeout: float = 30_000) -> None:
    page.wait_for_function("(text) => document.getElementById('transcript').innerText.includes(text)", arg=text,
                           timeout=timeout)


def opened(viewer: Viewer, title: str) -> str:
    """Waits until the page shows ``title`` and its load has ended; the text of every row (the list is virtual:
    a row far from the end is only in the DOM once scrolled to)."""
    viewer.page.wait_for_function(
        "(title) => [document.getElementById('session-title').textContent,"
        " document.getElementById('session-title').title].includes(title)"  # a served session: its id is the tooltip
        " && document.getElementById('progress').hidden && document.getElementById('transcript').childElementCount",
        arg=title, timeout=30_000)
    return viewer.render_all()


def no_alert(page: Page) -> None:
    assert page.locator("[role=alert]").is_hidden(), page.locator("[role=alert]").inner_text()


def two_sample_eval() -> bytes:
    """The real .eval with a second sample: the first copied under id 2 with a prompt of its own."""
    source = zipfile.ZipFile(io.BytesIO(interop_file(INSPECT).read_bytes()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in source.infolist():
            z.writestr(info.filename, source.read(info.filename))
        second = copy.deepcopy(json.loads(source.read("samples/1_epoch_1.json")))
        second["id"] = 2
        for message in second["messages"]:
            if message["role"] == "user":
                message["content"] = SECOND_PROMPT
        second["input"] = SECOND_PROMPT
        z.writestr("samples/2_epoch_1.json", json.dumps(second))
    return out.getvalue()


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return claude_projects(tmp_path_factory.mktemp("claude"))


def entry(page: Page, prefix: str, ending: str) -> str:
    """The list id of the entry whose id starts with ``prefix`` and ends with ``ending``."""
    found = page.evaluate(
        """([prefix, ending]) => [...document.querySelectorAll('#session-list button[data-id]')]
            .map((b) => b.dataset.id).filter((id) => id.startsWith(prefix) && id.endsWith(ending))""",
        [prefix, ending])
    assert len(found) == 1, found
    return str(found[0])


def test_a_claude_project_folder_opens_from_the_folder_picker(viewer: Viewer, projects: Path) -> None:
    page = viewer.page
    page.set_input_files("#folder-input", str(projects))
    page.wait_for_selector("#session-list .session-source:has-text('Folder: projects')")
    group = page.locator("#session-list .session-group").filter(
        has=page.locator(f".group-head[title='{CWD}']"))
    assert group.count() == 1  # the project, by its recorded cwd
    parent = entry(page, "folder:", f"{PARENT}.jsonl")
    assert page.locator(f"#session-list button[data-id$='{AGENT}.jsonl']").count() == 0  # collapsed under it
    toggle = group.locator(".session-expand")
    assert toggle.inner_text() == "▸ 1 subagent"
    facts = group.locator(f"button[data-id='{parent}'] .session-facts").inner_text()
    assert facts.startswith("Claude Code · claude-opus-4-5 · ") and "1 turn" in facts and "tokens" in facts
    toggle.click()
    child = entry(page, "folder:", f"{AGENT}.jsonl")
    nested = group.locator(f".session-children button[data-id='{child}']")
    assert nested.locator(".session-name").inner_text() == META["description"]  # the .meta.json's label
    nested.click()
    assert AGENT_PROMPT in opened(viewer, f"{AGENT}.jsonl")
    no_alert(page)
    assert page.locator(f"button[data-id='{child}']").get_attribute("aria-current") == "true"
    page.locator(f"#session-list button[data-id='{parent}']").click()
    text = opened(viewer, f"{PARENT}.jsonl")
    assert PARENT_PROMPT in text and PARENT_ANSWER in text
    no_alert(page)
    # The Task row links its subagent session within the folder (no server involved).
    page.evaluate("() => window.scrollTo(0, 0)")
    link = page.locator("#transcript details.tool a[data-local-session]")
    link.wait_for()
    assert link.inner_text() == "open the child session" and (link.get_attribute("data-local-session") or "").endswith(
        f"{AGENT}.jsonl")
    link.click()
    assert AGENT_PROMPT in opened(viewer, f"{AGENT}.jsonl")
    assert page.locator(f"#session-list button[data-id='{child}']").get_attribute("aria-current") == "true"


def test_arrow_keys_open_and_close_a_parents_subagents(viewer: Viewer, projects: Path) -> None:
    page = viewer.page
    if page.locator("#session-list .session-source:has-text('Folder: projects')").count() == 0:
        page.set_input_files("#folder-input", str(projects))
        page.wait_for_selector("#session-list .session-source:has-text('Folder: projects')")
    parent = entry(page, "folder:", f"{PARENT}.jsonl")
    page.locator(f"#session-list button[data-id='{parent}']").focus()
    expanded = page.locator(f"#session-list button[data-id$='{AGENT}.jsonl']").count() == 1
    if expanded:
        page.keyboard.press("ArrowLeft")
    assert page.locator(f"#session-list button[data-id$='{AGENT}.jsonl']").count() == 0
    page.keyboard.press("ArrowRight")
    assert page.locator(f"#session-list button[data-id$='{AGENT}.jsonl']").count() == 1
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => document.activeElement.dataset.id").endswith(f"{AGENT}.jsonl")
    page.keyboard.press("ArrowLeft")  # from a child: back to its parent
    assert page.evaluate("() => document.activeElement.dataset.id") == parent
    tab_stops = page.evaluate("() => [...document.querySelectorAll('#session-list button')]"
                              ".filter((b) => b.tabIndex === 0).length")
    assert tab_stops == 1


def test_warm_up_sessions_hide_behind_a_toggle(viewer: Viewer, tmp_path: Path) -> None:
    page = viewer.page
    projects = claude_projects(tmp_path)
    add_warmup(projects)
    page.set_input_files("#folder-input", str(projects))
    page.wait_for_selector("#warmups-toggle", state="visible")  # the folder is read: it holds a warm-up
    warm_button = f"button[data-id$='{WARMUP_AGENT}.jsonl']"
    warm = f"#session-list {warm_button}"
    expand = f"#session-list button[data-expand$='{PARENT}.jsonl']"
    toggle = page.locator(expand)
    assert page.inner_text("#warmups-label").strip() == "Warm-ups (1)"
    if toggle.get_attribute("aria-expanded") == "false":
        toggle.click()
    assert page.locator(warm).count() == 0 and page.inner_text(expand) == "▾ 1 subagent"
    page.check("#show-warmups")
    assert page.locator(warm).count() == 1  # under its parent, beside the real subagent
    assert page.inner_text(expand) == "▾ 2 subagents"
    assert page.locator(f"#session-list .session-children {warm_button}").count() == 1
    page.uncheck("#show-warmups")
    assert page.locator(warm).count() == 0


def test_a_codex_rollout_opens_from_the_file_picker(viewer: Viewer) -> None:
    page = viewer.page
    page.set_input_files("#file-input", str(interop_file(CODEX)))
    text = opened(viewer, interop_file(CODEX).name)
    assert "The transcript clearly assigns User to draft the demo scenario" in text
    assert "there is a need for nikita to draft demo scenario around governance" in text
    assert "The Codemie-relevant action items are:" in text
    no_alert(page)


def test_an_inspect_eval_opens_from_the_file_picker_and_lists_its_samples(viewer: Viewer,
                                                                            tmp_path: Path) -> None:
    page = viewer.page
    path = tmp_path / "run.eval"
    path.write_bytes(two_sample_eval())
    page.set_input_files("#file-input", str(path))
    assert INSPECT_PROMPT in opened(viewer, "run.eval")
    no_alert(page)
    page.wait_for_selector("#session-list .session-source:has-text('File: run.eval')")
    first, second = "file:1_epoch_1", "file:2_epoch_1"
    assert page.locator(f"#session-list button[data-id='{first}']").get_attribute("aria-current") == "true"
    page.locator(f"#session-list button[data-id='{second}']").click()
    text = opened(viewer, "run.eval · 2_epoch_1")
    assert SECOND_PROMPT in text and INSPECT_PROMPT not in text
    assert page.locator(f"#session-list button[data-id='{second}']").get_attribute("aria-current") == "true"
    page.locator(f"#session-list button[data-id='{first}']").click()  # and back: the same file, its first sample
    assert INSPECT_PROMPT in opened(viewer, "run.eval · 1_epoch_1")


def test_a_served_inspect_sample_opens_by_file_id_and_key(viewer: Viewer) -> None:
    page = viewer.page
    (viewer.served.sessions / "inspect-run.eval").write_bytes(two_sample_eval())
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list button[data-id='inspect-run/2_epoch_1']")
    assert page.locator("#session-list button[data-id='inspect-run/1_epoch_1']").count() == 1
    page.evaluate("() => { location.hash = 'session=' + encodeURIComponent('inspect-run/2_epoch_1'); }")
    assert SECOND_PROMPT in opened(viewer, "inspect-run/2_epoch_1")
    assert page.locator("#session-list button[data-id='inspect-run/2_epoch_1']").get_attribute(
        "aria-current") == "true"
    no_alert(page)


def test_a_dropped_folder_is_walked_entry_by_entry(viewer: Viewer, projects: Path) -> None:
    """files.mjs walkEntry over a directory entry whose reader answers in batches (as Chromium's does, 100 at a
    time), then the drop of several files, which lists them as a folder."""
    page = viewer.page
    walked = page.evaluate(
        """async () => {
            const { walkEntry } = await import("./files.mjs");
            const file = (path) => ({ isFile: true, isDirectory: false, fullPath: "/" + path,
                                      file: (ok) => ok(new File(["{}"], path.split("/").pop())) });
            const dir = (path, children) => {
                const batches = [children.slice(0, 2), children.slice(2), []];
                return { isFile: false, isDirectory: true, fullPath: "/" + path, name: path.split("/").pop(),
                         createReader: () => ({ readEntries: (ok) => ok(batches.shift() || []) }) };
            };
            const root = dir("p", [file("p/a.jsonl"), file("p/b.jsonl"),
                                   dir("p/s", [file("p/s/c.jsonl")]), file("p/d.json")]);
            return (await walkEntry(root)).map((f) => f.path);
        }""")
    assert walked == ["p/a.jsonl", "p/b.jsonl", "p/s/c.jsonl", "p/d.json"]
    app = projects / "-src-experiments-claude_p"
    data = {name: (app / name).read_text() for name in (f"{PARENT}.jsonl",)}
    data["notes.jsonl"] = "these are notes, not a log\n"
    page.evaluate(
        """(files) => {
            const transfer = new DataTransfer();
            for (const [name, text] of Object.entries(files)) transfer.items.add(new File([text], name));
            document.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
        }""", data)
    page.wait_for_selector("#session-list .session-source:has-text('Folder: Dropped files')")
    page.wait_for_selector(f"#session-list button[data-id='folder:{PARENT}.jsonl']")
    damaged = page.locator("#session-list button[data-id='folder:notes.jsonl'] .session-status")
    assert damaged.inner_text() == "damaged" and "not a known session log" in (damaged.get_attribute("title") or "")


def test_a_screenshot_in_a_claude_code_log_shows_as_an_image(viewer: Viewer) -> None:
    page = viewer.page
    page.set_input_files("#file-input", str(interop_file(CLAUDE_IMAGE)))
    assert "Do you think we could set up rewrites for the JS and CSS?" in opened(viewer, "image.jsonl")
    image = page.locator("#transcript .user-message img.attached-image")
    image.wait_for()
    assert (image.get_attribute("src") or "").startswith("data:image/png;base64,iVBORw0KGgo")
    page.wait_for_function("() => { const i = document.querySelector('#transcript img.attached-image');"
                           " return i && i.complete && i.naturalWidth > 0; }")  # decoded: the CSP let it in
    # (test_boot injects an inline script on purpose into the shared page: only an image's refusal counts here)
    assert not [c for c in viewer.console if "Content Security Policy" in c and "img-src" in c]
    no_alert(page)


def test_a_growing_claude_code_file_is_followed_live(viewer: Viewer, projects: Path) -> None:
    page = viewer.page
    folder = viewer.served.sessions / "claude-live"
    folder.mkdir(exist_ok=True)
    source = projects / "-src-experiments-claude_p" / f"{PARENT}.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    path = folder / f"{PARENT}.jsonl"
    path.write_bytes(b"".join(lines[:3]))
    sid = f"claude-live/{PARENT}"
    page.evaluate("(sid) => { location.hash = 'session=' + encodeURIComponent(sid); }", sid)
    transcript_has(page, PARENT_PROMPT)
    page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'live'")
    with path.open("ab") as out:
        out.write(lines[3] + lines[4])  # the Task call and the subagent's result
    viewer.served.update(sid)
    page.wait_for_selector("#transcript details.tool[data-tool-kind]")
    with path.open("ab") as out:
        out.write(lines[5][:200])  # a torn line: nothing of it yet
    viewer.served.update(sid)
    with path.open("ab") as out:
        out.write(lines[5][200:])
    viewer.served.update(sid)
    transcript_has(page, PARENT_ANSWER)  # the answer streams in before its response is closed
    assert page.inner_text("#transcript").count(PARENT_ANSWER) == 1
    no_alert(page)
    shutil.rmtree(folder)


def test_a_big_claude_code_file_shows_its_first_part_while_the_rest_is_read(viewer: Viewer) -> None:
    from assembler.browser import Viewer as PyViewer
    from perf.claude_gen import generate

    data = generate(10 << 20, seed=11)  # past config.PREVIEW_FILE_BYTES (8 MB)
    path = viewer.add_file("big-claude.jsonl", data)
    page = viewer.page
    page.evaluate("""async (path) => {
        const bytes = await (await fetch(path)).arrayBuffer();
        window.__bigOpen = window.transcriptViewer.openFile(new File([bytes], "big-claude.jsonl"), {});
    }""", path)
    page.wait_for_function(  # the preview: rows shown while the progress bar still reads the file
        "() => !document.getElementById('progress').hidden"
        " && document.getElementById('progress-text').textContent.includes('showing the part read so far')"
        " && document.querySelector('#transcript > article[data-key]:not(.placeholder)')", timeout=60_000)
    preview_keys = page.evaluate("() => window.transcriptViewer.view.shownKeys()")
    result = page.evaluate("() => window.__bigOpen")
    assert result["previewed"] is True and result["error"] is None
    assert result["ms"]["firstRows"] < result["ms"]["total"]
    final_keys = page.evaluate("() => window.transcriptViewer.view.shownKeys()")
    expected = PyViewer()  # the same file read whole in CPython, no preview: the page ends with the same rows
    expected.file_begin("big-claude.jsonl", len(data))
    expected.file_feed(data)
    update = json.loads(expected.file_finish())
    assert [n["key"] for n in update["nodes"] if not n.get("hidden")][-5:] == final_keys[-5:]
    assert final_keys[-1] not in preview_keys
    assert page.locator("#progress").is_hidden()
    no_alert(page)
