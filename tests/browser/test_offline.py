"""The viewer is fully offline: every request goes to 127.0.0.1, and a CJK transcript renders (screenshot kept).

The screenshot is written to ``build/screenshots/cjk.png`` for a person to look at once (glyphs, not boxes); the
test checks the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "build" / "screenshots" / "cjk.png"
USER = "请把这个会话的内容总结一下。日本語の要約もお願いします。한국어로도 부탁해요."
REASONING = "用户想要三种语言的摘要。先用中文，再用日语和韩语。"
ANSWER = (
    "## 摘要\n\n"
    "这个会话演示了**打包的增量行**：每一行保存一个块的连续片段。\n\n"
    "- 日本語：チャンク行はトークンの境界をそのまま保存します。\n"
    "- 한국어: 청크 행은 토큰 경계를 그대로 보존합니다.\n\n"
    "```python\nprint(\"你好，世界\")  # こんにちは 안녕하세요\n```"
)


def cjk_session() -> bytes:
    s = Session("cjk")
    s.user(USER)
    s.assistant([("reasoning", REASONING), ("text", ANSWER)])
    s.end_step()
    s.end_turn()
    return s.to_bytes()


def _offsite(urls: list[str]) -> list[str]:
    return [u for u in urls if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).hostname != "127.0.0.1"]


def test_cjk_transcript_renders_and_is_screenshotted(viewer: Viewer) -> None:
    result = viewer.open_file(viewer.add_file("cjk.jsonl", cjk_session()), all=True)
    assert result["error"] is None
    page = viewer.page
    page.locator("#transcript details.think summary").first.click()
    page.wait_for_function("() => !document.querySelector('#transcript [data-pending], #transcript .loading')")
    text = viewer.render_all()
    assert USER in text
    assert REASONING in text
    for fragment in ("摘要", "打包的增量行", "チャンク行はトークンの境界をそのまま保存します。",
                     "청크 행은 토큰 경계를 그대로 보존합니다.", 'print("你好，世界")'):
        assert fragment in text, fragment
    assert page.locator("#transcript h2").first.inner_text() == "摘要"
    assert page.locator("#transcript pre.highlight .nb").count() >= 1  # Pygments classes on the code block
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000


def test_the_live_demo_session_is_listed_and_follows_offline(viewer: Viewer) -> None:
    page = viewer.page
    page.evaluate("() => { location.hash = 'session=demo-session'; }")
    page.wait_for_function("() => document.querySelectorAll('#transcript article.kind-turn-tail').length === 2")
    assert page.locator("#session-list button[data-id='demo-session']").count() == 1
    text = viewer.render_all()
    assert "How many lines does `README.md` have?" in text
    assert "has 42 lines." in text
    page.evaluate("() => { history.replaceState(null, '', location.pathname); }")


def test_zero_requests_leave_127_0_0_1(viewer: Viewer) -> None:
    assert viewer.requests, "no requests were recorded"
    assert _offsite(viewer.requests) == []
    assert viewer.real_failures() == []
