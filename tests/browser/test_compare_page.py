"""Compare two runs in the page (issue 24, the page side): two sessions chosen in the list (Compare, then another
row) or by #compare=ID_A,ID_B, compared in the worker by ``assembler.compare`` and shown turn by turn
(``assembler/browser/compare_view.py`` over ``render/compare.py``), exported as HTML and Markdown, and an unknown
id said in the one alert; a row opened on one side opens its twin; served sessions, the sessions of a folder or an
Inspect log opened in the page, and real fixtures (a Claude Code run beside one of ours, a session against itself,
one against a header-only session). The small sessions are generated here (``session_builder``); the real logs are
copied into temporary folders at test time."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest
from playwright.sync_api import Page
from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer


def run(sid: str, prompts: list[str], *, path_arg: str = "notes.txt", answer: str = "All done") -> bytes:
    """A session of one turn per prompt: a ``read`` tool call (argument ``path_arg`` in the turn "look"), its
    result, then a final answer."""
    s = Session(sid)
    for n, prompt in enumerate(prompts, 1):
        s.user(prompt)
        arg = path_arg if prompt == "look" else f"file-{n}.txt"
        s.assistant([("text", f"Reading for {prompt}.")], calls=[(f"call-{n}", "read", f'{{"path": "{arg}"}}')])
        s.tool_result(f"call-{n}", f"contents of {arg}")
        s.end_step()
        s.assistant([("text", f"{answer} with {prompt}.")])
        s.end_step()
        s.end_turn()
    return s.to_bytes()


@pytest.fixture(scope="module")
def compared(viewer: Viewer) -> Page:
    folder: Path = viewer.served.sessions
    (folder / "cmp-base.jsonl").write_bytes(run("cmp-base", ["start", "look", "finish"]))
    # One inserted turn ("check") and another argument of the "look" turn's call.
    (folder / "cmp-other.jsonl").write_bytes(run("cmp-other", ["start", "check", "look", "finish"],
                                                path_arg="other.txt"))
    page = viewer.page
    for box in ("#session-filter", "#search"):  # earlier tests may leave them filled
        page.fill(box, "")
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list button[data-id='cmp-other']")
    return page


def open_compare(page: Page, a: str, b: str) -> None:
    page.evaluate("(h) => { location.hash = h; }", f"#compare={quote(a, safe='')},{quote(b, safe='')}")
    page.wait_for_selector("#compare[data-state='shown'], #compare[data-state='error']", timeout=30_000)


def turn_matches(page: Page) -> list[str]:
    return list(page.evaluate("() => [...document.querySelectorAll('#compare-turns .compare-turn')]"
                              ".map((s) => s.dataset.match)"))


def wait_filled(page: Page, n: int) -> None:
    page.wait_for_function("(n) => Number(document.getElementById('compare').dataset.filled || 0) >= n", arg=n,
                           timeout=15_000)


def show(page: Page, n: int) -> None:
    """Scrolls aligned turn ``n`` into view and waits for its rows (a block far from the viewport is emptied)."""
    page.evaluate("(n) => document.getElementById(`compare-turn-${n}`).scrollIntoView()", n)
    page.wait_for_selector(f"#compare-turn-{n} .compare-side", timeout=15_000)


def match_labels(page: Page) -> list[str]:
    """How each aligned turn was matched, as its block says it (filled: its heading; emptied: its one line)."""
    return list(page.evaluate("() => [...document.querySelectorAll('#compare-turns .compare-turn')].map((s) =>"
                              " s.querySelector('.compare-match')?.textContent ?? s.textContent.split(' · ').pop())"))


def test_a_session_against_itself_reports_no_difference(compared: Page) -> None:
    open_compare(compared, "cmp-base", "cmp-base")
    root = compared.locator("#compare")
    assert root.get_attribute("data-state") == "shown"
    assert root.get_attribute("data-same") == "1"
    assert "No difference" in compared.locator("#compare-status").inner_text()
    assert turn_matches(compared) == ["same-prompt"] * 3
    wait_filled(compared, 3)
    # No row of any summary table is marked as differing, and no final-text diff has insertions or deletions.
    assert compared.locator("#compare .compare-summary tr.differs").count() == 0
    assert compared.locator("#compare ins, #compare del").count() == 0
    # The chat view is out of the way while the comparison is shown.
    assert not compared.locator("#view-root").is_visible()
    assert compared.locator("#alert").is_hidden()


def test_two_runs_align_an_inserted_turn_and_name_the_other_argument(compared: Page) -> None:
    open_compare(compared, "cmp-base", "cmp-other")
    root = compared.locator("#compare")
    assert root.get_attribute("data-same") == "0"
    assert turn_matches(compared) == ["same-prompt", "only-b", "same-prompt", "same-prompt"]
    assert match_labels(compared) == ["same prompt", "only in B", "same prompt", "same prompt"]
    show(compared, 3)
    assert match_labels(compared) == ["same prompt", "only in B", "same prompt", "same prompt"]
    look = compared.locator("#compare-turn-3")
    assert "arguments" in (look.get_attribute("data-differences") or "").split()
    args = look.locator(".compare-args").inner_text()
    assert "notes.txt" in args and "other.txt" in args
    # Each side's rows are the chat export's rows: the prompt and the tool call on both sides of the "look" turn.
    sides = look.locator(".compare-side")
    assert sides.count() == 2
    for i in range(2):
        assert sides.nth(i).locator("article.node").count() >= 3
        assert "look" in sides.nth(i).inner_text()
    show(compared, 2)
    inserted = compared.locator("#compare-turn-2 .compare-side")
    assert "No such turn" in inserted.nth(0).inner_text()
    assert "check" in inserted.nth(1).inner_text()
    # The session summary says how the turns were matched.
    summary = compared.locator("#compare-summary").inner_text()
    assert "3 turns with the same prompt, 0 paired by position, 0 only in A, 1 only in B" in summary


def test_the_list_compare_button_then_another_row_opens_the_comparison(compared: Page) -> None:
    compared.evaluate("() => { location.hash = ''; }")
    compared.wait_for_selector("#compare", state="hidden")
    compared.click("#session-list button[data-compare='cmp-base']")
    bar = compared.locator("#compare-pick")
    assert bar.is_visible()
    assert "choose another session" in bar.inner_text()
    assert compared.locator("#session-list button[data-compare='cmp-base']").get_attribute("aria-pressed") == "true"
    # Cancel, Escape or the same Compare button again forget the first pick.
    compared.click("#compare-pick-cancel")
    assert bar.is_hidden()
    compared.click("#session-list button[data-compare='cmp-base']")
    compared.keyboard.press("Escape")
    assert bar.is_hidden()
    compared.click("#session-list button[data-compare='cmp-base']")
    compared.click("#session-list button[data-compare='cmp-base']")
    assert bar.is_hidden()
    # From the keyboard: c on a focused row is its Compare button.
    compared.focus("#session-list button[data-id='cmp-other']")
    compared.keyboard.press("c")
    assert bar.is_visible() and "cmp-other" in bar.inner_text()
    compared.click("#compare-pick-cancel")
    compared.click("#session-list button[data-compare='cmp-base']")
    compared.click("#session-list button[data-id='cmp-other']")
    compared.wait_for_selector("#compare[data-state='shown']", timeout=30_000)
    assert bar.is_hidden()
    assert compared.evaluate("() => location.hash") == "#compare=cmp-base,cmp-other"
    assert turn_matches(compared) == ["same-prompt", "only-b", "same-prompt", "same-prompt"]


def test_the_export_downloads_html_and_markdown_with_both_sides(compared: Page) -> None:
    open_compare(compared, "cmp-base", "cmp-other")
    texts = {}
    for fmt in ("html", "md"):
        with compared.expect_download() as info:
            compared.click(f"#compare button[data-compare-export='{fmt}']")
        download = info.value
        assert download.suggested_filename == f"compare-cmp-base-cmp-other.{fmt}"
        texts[fmt] = Path(download.path()).read_text(encoding="utf-8")
    html, md = texts["html"], texts["md"]
    assert html.startswith("<!doctype html>") and "script-src" not in html and "<script" not in html
    assert "cmp-base" in html and "cmp-other" in html and "other.txt" in html and "notes.txt" in html
    assert html.count('class="compare-turn"') == 4
    assert "cmp-base" in md and "cmp-other" in md and "only in B" in md


def test_an_unknown_id_says_which_in_the_alert_and_leaves_no_spinner(compared: Page) -> None:
    open_compare(compared, "cmp-base", "no-such-session")
    alert = compared.locator("#alert")
    assert alert.is_visible()
    text = alert.inner_text()
    assert "session B" in text and "no-such-session" in text
    assert compared.locator("#compare").get_attribute("data-state") == "error"
    assert compared.locator("#progress").is_hidden()
    assert compared.locator("#compare-turns .compare-turn").count() == 0
    # Leaving the comparison clears its alert.
    compared.evaluate("() => { location.hash = ''; }")
    compared.wait_for_selector("#compare", state="hidden")
    assert "no-such-session" not in (compared.locator("#alert").inner_text() if alert.is_visible() else "")


# ---- real fixtures: a Claude Code run beside one of ours, a session against itself, one against an empty session

REAL_B = "apps/web/tests/snapshots/fresh-round-trip/session.jsonl"
REAL_B_PROMPT = "Use the bash tool to run exactly: echo WEB_E2E_OK."  # the fixture's real prompt


@pytest.fixture(scope="module")
def real_pair(viewer: Viewer) -> Iterator[tuple[str, str, str]]:
    """The ids of a served Claude Code session (the real 2.1.17 log with a Task call), one of our harness's real
    logs and a session of ours with its header only, copied into the served folder at test time and removed after
    this module (a later test that opens the same Claude project from a folder expects it listed once)."""
    from corpus import FIXTURES

    from tests.claude_projects import PARENT, REAL
    from tests.interop_support import interop_file

    folder: Path = viewer.served.sessions / "cmp-real"
    folder.mkdir(exist_ok=True)
    claude = interop_file(f"{REAL}/real_projects/-src-experiments-claude_p/{PARENT}.jsonl")
    (folder / f"{PARENT}.jsonl").write_bytes(claude.read_bytes())
    (folder / "fresh-round-trip.jsonl").write_bytes((FIXTURES / REAL_B).read_bytes())
    (folder / "empty.jsonl").write_bytes(b'{"type":"session","version":0,"id":"cmp-empty","createdAt":0}\n')
    yield f"cmp-real/{PARENT}", "cmp-real/fresh-round-trip", "cmp-real/empty"
    shutil.rmtree(folder)
    viewer.page.evaluate("document.getElementById('refresh-sessions').click()")


def test_a_claude_code_run_beside_one_of_ours(compared: Page, real_pair: tuple[str, str, str]) -> None:
    from tests.claude_projects import PARENT_PROMPT

    claude, ours, _ = real_pair
    open_compare(compared, claude, ours)
    root = compared.locator("#compare")
    assert root.get_attribute("data-state") == "shown", compared.locator("#alert").inner_text()
    assert root.get_attribute("data-same") == "0"
    # One turn each, their prompts differ: paired by position, and the view says so.
    assert turn_matches(compared) == ["position"]
    assert "Differs in: turns, prompts, call order" in compared.locator("#compare-status").inner_text()
    wait_filled(compared, 1)
    assert compared.locator("#compare-turn-1 .compare-match").inner_text() == "paired by position (the prompts differ)"
    block = compared.locator("#compare-turn-1")
    differences = (block.get_attribute("data-differences") or "").split()
    assert {"prompt", "toolSequence", "finalText"} <= set(differences)
    # Tool calls by name: the Claude Code run's Task call against our run's bash call, one each.
    tools = [r.split("\t") for r in block.locator("table.compare-summary").nth(1).locator("tbody tr")
             .all_inner_texts()]
    assert [[c.strip() for c in r] for r in tools] == [["Task", "1", "0"], ["bash", "0", "1"]]
    assert "A Task; B bash" in block.inner_text()
    sides = block.locator(".compare-side")
    assert PARENT_PROMPT in sides.nth(0).inner_text() and REAL_B_PROMPT in sides.nth(1).inner_text()
    assert sides.nth(0).locator("details.tool").count() >= 1 and sides.nth(1).locator("details.tool").count() >= 1
    # Twins are rows of the same kind and tool name: opening A's Task call leaves B's bash call closed.
    sides.nth(0).locator("details.tool").first.locator("summary").click()
    compared.wait_for_function("() => !document.querySelector(\"#compare-turn-1 .compare-side[data-side='a'] "
                               "details.tool [data-pending]\")")
    assert sides.nth(0).locator("details.tool").first.get_attribute("open") is not None
    assert sides.nth(1).locator("details.tool[open]").count() == 0
    # The final texts' word diff has both deletions and insertions.
    assert block.locator(".compare-diff del").count() >= 1 and block.locator(".compare-diff ins").count() >= 1
    assert compared.locator("#alert").is_hidden()


def test_a_real_session_against_itself_shows_no_difference(compared: Page, real_pair: tuple[str, str, str]) -> None:
    claude, _, _ = real_pair
    open_compare(compared, claude, claude)
    root = compared.locator("#compare")
    assert root.get_attribute("data-state") == "shown" and root.get_attribute("data-same") == "1"
    assert compared.locator("#compare-status").inner_text().startswith("No difference")
    assert turn_matches(compared) == ["same-prompt"]
    wait_filled(compared, 1)
    assert compared.locator("#compare .compare-summary tr.differs").count() == 0
    assert compared.locator("#compare ins, #compare del").count() == 0
    assert "The final texts are the same." in compared.locator("#compare-turn-1").inner_text()


def test_a_session_against_an_empty_one(compared: Page, real_pair: tuple[str, str, str]) -> None:
    _, ours, empty = real_pair
    open_compare(compared, ours, empty)
    root = compared.locator("#compare")
    assert root.get_attribute("data-state") == "shown", compared.locator("#alert").inner_text()
    assert root.get_attribute("data-same") == "0"
    assert turn_matches(compared) == ["only-a"]
    summary = compared.locator("#compare-summary").inner_text()
    assert "0 turns with the same prompt, 0 paired by position, 1 only in A, 0 only in B" in summary
    wait_filled(compared, 1)
    sides = compared.locator("#compare-turn-1 .compare-side")
    assert REAL_B_PROMPT in sides.nth(0).inner_text()
    assert "No such turn" in sides.nth(1).inner_text()
    # The other way round: the empty session is A.
    open_compare(compared, empty, ours)
    assert turn_matches(compared) == ["only-b"]
    assert compared.locator("#alert").is_hidden()


def test_a_row_opened_or_closed_on_one_side_does_the_same_to_its_twin(compared: Page) -> None:
    open_compare(compared, "cmp-base", "cmp-other")
    show(compared, 3)
    look = compared.locator("#compare-turn-3")
    a, b = (look.locator(f".compare-side[data-side='{s}'] details.tool") for s in "ab")
    assert a.count() == 1 and b.count() == 1
    # Collapsed bodies are empty until opened (rendered as the chat view renders its rows).
    assert b.locator("[data-pending]").count() == 1
    a.locator("summary").click()
    compared.wait_for_function("() => document.querySelector(\"#compare-turn-3 .compare-side[data-side='b'] "
                               "details.tool\").open")
    # The twin's body is asked for as its own opening would: B's call read other.txt, A's notes.txt.
    compared.wait_for_function("() => !document.querySelector('#compare-turn-3 [data-pending]')")
    assert "contents of notes.txt" in a.inner_text() and "contents of other.txt" in b.inner_text()
    b.locator("summary").click()  # closing B closes A
    compared.wait_for_function("() => !document.querySelector(\"#compare-turn-3 .compare-side[data-side='a'] "
                               "details.tool\").open")
    # A turn only in B has no twin: opening its row leaves the other column as it was.
    show(compared, 2)
    only = compared.locator("#compare-turn-2 .compare-side[data-side='b'] details.tool")
    only.locator("summary").click()
    compared.wait_for_function("() => document.querySelector(\"#compare-turn-2 .compare-side[data-side='b'] "
                               "details.tool\").open")
    assert compared.locator("#compare-turn-2 .compare-side[data-side='a'] details").count() == 0
    # The k-th call of a name is the twin of the other side's k-th call of that name, not of another tool's row.
    show(compared, 1)
    first = compared.locator("#compare-turn-1 .compare-side[data-side='a'] details.tool")
    first.locator("summary").click()
    compared.wait_for_function("() => document.querySelector(\"#compare-turn-1 .compare-side[data-side='b'] "
                               "details.tool\").open")
    assert compared.locator("#compare-turn-4 details[open]").count() == 0
    assert compared.locator("#alert").is_hidden()


# ---- local files and folders opened in the page

def test_sessions_of_an_opened_folder_are_compared_in_the_page(compared: Page, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "loc-a.jsonl").write_bytes(run("loc-a", ["start", "look", "finish"]))
    (folder / "loc-b.jsonl").write_bytes(run("loc-b", ["start", "look", "finish"], path_arg="local.txt",
                                             answer="Finished"))
    lines = run("loc-bad", ["start", "look", "finish"]).split(b"\n")
    cut = next(i for i, line in enumerate(lines) if b"Reading for look" in line)
    (folder / "loc-bad.jsonl").write_bytes(b"\n".join([*lines[:cut], b"{broken", *lines[cut + 1:]]))
    compared.evaluate("() => { location.hash = ''; }")
    title_before = compared.locator("#session-title").inner_text()
    requests: list[str] = []
    compared.on("request", lambda r: requests.append(r.url))
    compared.set_input_files("#folder-input", str(folder))
    compared.wait_for_selector("#session-list .session-source:has-text('Folder: runs')")
    ids = compared.evaluate("() => [...document.querySelectorAll('#session-list button[data-id^=\"folder:\"]')]"
                            ".map((b) => b.dataset.id)")
    a = next(i for i in ids if i.endswith("loc-a.jsonl"))
    b = next(i for i in ids if i.endswith("loc-b.jsonl"))
    # Compare on a local row, then another local row: both read in the worker, nothing fetched for them.
    compared.click(f"#session-list button[data-compare='{a}']")
    assert "choose another session" in compared.locator("#compare-pick").inner_text()
    compared.click(f"#session-list button[data-id='{b}']")
    compared.wait_for_selector("#compare[data-state='shown'], #compare[data-state='error']", timeout=30_000)
    assert compared.locator("#compare").get_attribute("data-state") == "shown", compared.locator("#alert").inner_text()
    assert compared.evaluate("() => location.hash") == f"#compare={quote(a, safe='')},{quote(b, safe='')}"
    assert turn_matches(compared) == ["same-prompt"] * 3
    show(compared, 2)
    look = compared.locator("#compare-turn-2")
    assert {"arguments", "finalText"} <= set((look.get_attribute("data-differences") or "").split())
    assert "local.txt" in look.locator(".compare-args").inner_text()
    assert look.locator(".compare-diff del").inner_text() == "All done" and \
        look.locator(".compare-diff ins").inner_text() == "Finished"
    assert not [u for u in requests if "loc-a" in u or "loc-b" in u or "/api/sessions/" in u]
    # A local session beside a served one.
    open_compare(compared, a, "cmp-other")
    assert compared.locator("#compare").get_attribute("data-state") == "shown"
    assert turn_matches(compared) == ["same-prompt", "only-b", "same-prompt", "same-prompt"]
    # The chat window was left as it was.
    compared.evaluate("() => { location.hash = ''; }")
    compared.wait_for_selector("#compare", state="hidden")
    assert compared.locator("#session-title").inner_text() == title_before
    # Opening a session while a comparison is shown gives the page back to the chat.
    open_compare(compared, a, b)
    compared.click(f"#session-list button[data-id='{a}']")
    compared.wait_for_selector("#compare", state="hidden")
    compared.wait_for_function("() => document.getElementById('transcript').innerText.includes('Reading for look')",
                               timeout=30_000)
    assert not compared.evaluate("() => location.hash").startswith("#compare")
    # A local file with a bad line is compared as far as it was read, and the alert says so, naming the side.
    bad = next(i for i in ids if i.endswith("loc-bad.jsonl"))
    open_compare(compared, a, bad)
    assert compared.locator("#compare").get_attribute("data-state") == "shown"
    assert turn_matches(compared) == ["same-prompt", "same-prompt", "only-a"]  # read up to turn 2's prompt
    text = compared.locator("#alert").inner_text()
    assert "Compared what was read before a fault" in text and "session B" in text
    assert f"loc-bad.jsonl:{cut + 1}: invalid JSON" in text
    # A local id whose folder is not open any more says so, naming the side.
    open_compare(compared, "cmp-base", "folder:gone/loc-z.jsonl")
    text = compared.locator("#alert").inner_text()
    assert "session B" in text and "not open in the page" in text
    compared.evaluate("() => { location.hash = ''; }")


def test_two_samples_of_an_opened_inspect_log_are_compared(compared: Page, tmp_path: Path) -> None:
    import test_other_harnesses as other  # the real .eval with a second sample (a module, so nothing is re-collected)

    path = tmp_path / "run.eval"
    path.write_bytes(other.two_sample_eval())
    compared.set_input_files("#file-input", str(path))
    compared.wait_for_selector("#session-list .session-source:has-text('File: run.eval')", timeout=30_000)
    open_compare(compared, "file:1_epoch_1", "file:2_epoch_1")
    assert compared.locator("#compare").get_attribute("data-state") == "shown", compared.locator("#alert").inner_text()
    assert turn_matches(compared) == ["position"]
    wait_filled(compared, 1)
    sides = compared.locator("#compare-turn-1 .compare-side")
    assert other.INSPECT_PROMPT in sides.nth(0).inner_text() and other.SECOND_PROMPT in sides.nth(1).inner_text()
    assert compared.locator("#alert").is_hidden()
    compared.evaluate("() => { location.hash = ''; }")


def test_a_long_comparison_keeps_only_the_turns_near_the_viewport(compared: Page, viewer: Viewer) -> None:
    prompts = [f"question {n}" for n in range(1, 241)]
    (viewer.served.sessions / "cmp-long-a.jsonl").write_bytes(run("cmp-long-a", prompts))
    (viewer.served.sessions / "cmp-long-b.jsonl").write_bytes(run("cmp-long-b", prompts, answer="Finished"))
    open_compare(compared, "cmp-long-a", "cmp-long-b")
    assert compared.locator("#compare").get_attribute("data-turns") == "240"
    wait_filled(compared, 1)
    in_dom = compared.locator("#compare-turns .compare-turn").count()
    assert 40 <= in_dom < 240  # the first chunks only
    assert compared.locator("#compare-turn-240").count() == 0
    compared.evaluate("() => window.scrollTo(0, document.scrollingElement.scrollHeight)")
    compared.wait_for_function("() => { window.scrollTo(0, document.scrollingElement.scrollHeight);"
                               " return document.querySelector('#compare-turn-240 .compare-side'); }", timeout=30_000)
    assert compared.locator("#compare-turn-1").count() == 0  # the first chunk is one empty element again
    assert compared.locator("#compare-turns .compare-turn").count() < 240
    assert "Finished with question 240" in compared.locator("#compare-turn-240").inner_text()
    compared.evaluate("() => window.scrollTo(0, 0)")
    compared.wait_for_function("() => document.querySelector('#compare-turn-1 .compare-side')", timeout=30_000)
    assert compared.locator("#compare-turn-240").count() == 0
    assert compared.locator("#alert").is_hidden()
    compared.evaluate("() => { location.hash = ''; }")


def test_two_runs_of_one_scenario_picked_as_files_are_compared(compared: Page, tmp_path: Path) -> None:
    """The shared logs hold one scenario (advanced-toolchain) run by two of the reference's agents; picking both
    files at once with Open file… lists them as a folder is, and the two rows compare as any two rows do."""
    from corpus import FIXTURES, require_corpus

    require_corpus()

    paths = []
    for agent in ("headless-agent", "acp-agent"):
        path = tmp_path / f"{agent}.jsonl"
        path.write_bytes((FIXTURES / f"examples/{agent}/tests/snapshots/advanced-toolchain/session.jsonl").read_bytes())
        paths.append(str(path))
    compared.evaluate("() => { location.hash = ''; }")
    compared.set_input_files("#file-input", paths)
    compared.wait_for_selector("#session-list .session-source:has-text('Folder: Picked files')")
    ids = compared.evaluate("() => [...document.querySelectorAll('#session-list button[data-id^=\"folder:\"]')]"
                            ".map((b) => b.dataset.id)")
    a = next(i for i in ids if i.endswith("headless-agent.jsonl"))
    b = next(i for i in ids if i.endswith("acp-agent.jsonl"))
    compared.click(f"#session-list button[data-compare='{a}']")
    compared.click(f"#session-list button[data-id='{b}']")
    compared.wait_for_selector("#compare[data-state='shown'], #compare[data-state='error']", timeout=30_000)
    assert compared.locator("#compare").get_attribute("data-state") == "shown", compared.locator("#alert").inner_text()
    # The CLI's verdict on the same pair: one turn, paired by position (the agents word the prompt apart), whose
    # tool arguments and final text differ.
    assert turn_matches(compared) == ["position"]
    show(compared, 1)
    differences = set((compared.locator("#compare-turn-1").get_attribute("data-differences") or "").split())
    assert {"prompt", "arguments", "finalText"} <= differences
    compared.evaluate("() => { location.hash = ''; }")
    compared.wait_for_selector("#compare", state="hidden")
