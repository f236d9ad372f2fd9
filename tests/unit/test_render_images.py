"""render/images: an image a log holds is shown as ``<img src="data:…">`` only for PNG, JPEG, GIF or WebP base64
of at most 2 MB, the ``data:`` URL rebuilt from what was checked; anything else (SVG, a larger image, a link, a
path, data not in the log, broken base64) is a placeholder naming what it is. The page's and the export's CSP allow
``img-src data:``, in the page, the HTML export and the Markdown export's text."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from assembler.browser import Viewer
from assembler.render.images import IMAGE_MAX_BYTES, image_data, image_html, image_label
from assembler.server.csp import CSP
from tests.interop_support import interop_file

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(56)).decode()
CLAUDE_IMAGE = "claude-code/claude-code-log-1.7.0/dev-docs/messages/claude-code/user/image.jsonl"
INSPECT_IMAGES = "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/log_images.json"
ROOT = Path(__file__).resolve().parents[2]


def claude(media: str, data: str) -> dict[str, Any]:
    return {"attachmentId": "line1/0", "mediaType": media, "bytes": len(base64.b64decode(data)), "encoding": "base64",
            "data": data}


@pytest.mark.parametrize("media", ["image/png", "image/jpeg", "image/gif", "image/webp", "IMAGE/PNG", "image/jpg"])
def test_raster_base64_is_shown_inline(media: str) -> None:
    src = image_data(claude(media, PNG))
    checked = {"image/jpg": "image/jpeg"}.get(media.lower(), media.lower())
    assert src == f"data:{checked};base64,{PNG}"
    html = image_html(claude(media, PNG))
    assert html.startswith('<figure class="image-block"><img class="attached-image" src="data:')
    assert f'alt="image: {checked}, 64 B"' in html


def test_a_data_url_is_rebuilt_from_its_checked_parts() -> None:
    assert image_data({"url": f"data:image/png;base64,{PNG}"}) == f"data:image/png;base64,{PNG}"  # Codex, Inspect
    assert image_data({"mediaType": "image/webp", "data": PNG}) == f"data:image/webp;base64,{PNG}"  # Gemini
    wrapped = "\n".join(PNG[i:i + 16] for i in range(0, len(PNG), 16))
    assert image_data(claude("image/png", wrapped)) == f"data:image/png;base64,{PNG}"


@pytest.mark.parametrize("attachment, why", [
    (claude("image/svg+xml", base64.b64encode(b"<svg onload='alert(1)'/>").decode()), "not a raster image type"),
    ({"url": "data:image/svg+xml;base64," + PNG}, "not a raster image type"),
    ({"url": "data:text/html;base64," + PNG}, "not a raster image type"),
    ({"url": "data:image/png," + "%89PNG"}, "its data is not in the log"),  # not base64
    (claude("image/png", 'AAAA" onerror="alert(1)'), "its data is not in the log"),
    ({"url": "https://example.com/cat.png", "mediaType": "image/png"}, "a link, not loaded"),
    ({"path": "/home/u/shot.png"}, "a file path, not loaded"),
    ({"attachmentId": "x", "mediaType": "image/png", "omitted": True}, "its data is not in the log"),
    ({"data": PNG}, "no media type"),
])
def test_anything_else_is_a_placeholder_saying_why(attachment: dict[str, Any], why: str) -> None:
    assert image_data(attachment) is None
    html = image_html(attachment)
    assert "<img" not in html and why in html and "onerror" not in html.replace("&quot;", "")


def test_an_image_over_the_cap_is_a_placeholder_with_its_type_and_size() -> None:
    big = "A" * ((IMAGE_MAX_BYTES // 3 + 1) * 4)  # decodes to just over 2 MB
    html = image_html(claude("image/png", big))
    assert "<img" not in html and "[image: image/png, 2.0 MB, not shown: larger than 2.0 MB]" in html
    just = "A" * (IMAGE_MAX_BYTES // 3 * 4)
    assert image_data(claude("image/png", just)) is not None
    assert image_label({"mediaType": "image/gif", "bytes": 3_300_000}) == "[image: image/gif, 3.1 MB]"


def _viewer(path: Path) -> Viewer:
    data = path.read_bytes()
    viewer = Viewer()
    viewer.file_begin(path.name, len(data))
    viewer.file_feed(data)
    value = json.loads(viewer.file_finish(True))
    assert value["error"] is None
    return viewer


def _export(viewer: Viewer, fmt: str) -> str:
    return str(json.loads(viewer.export(fmt, "session"))["text"])


def test_a_claude_code_screenshot_shows_in_the_page_and_the_html_export() -> None:
    path = interop_file(CLAUDE_IMAGE)
    record = json.loads(path.read_bytes().split(b"\n", 1)[0])
    source = next(b for b in record["message"]["content"] if b["type"] == "image")["source"]
    viewer = _viewer(path)
    html = _export(viewer, "html")
    assert f'src="data:image/png;base64,{source["data"]}"' in html
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None and "img-src data:" in csp.group(1) and "script-src" not in csp.group(1)
    rows = json.loads(viewer.render(list(viewer.window.chat)))["html"]  # the page's rows, as the worker renders them
    user = next(html for html in rows.values() if 'class="user-message' in html)
    assert f'<img class="attached-image" src="data:image/png;base64,{source["data"]}"' in user
    assert "[image" not in user  # the picture itself, not its label beside it
    size = len(base64.b64decode(source["data"]))
    assert f"[image: image/png, {size / 1024:.0f} KB]" in _export(viewer, "md")  # Markdown names it


def test_an_inspect_image_resolved_from_its_attachment_shows_inline() -> None:
    html = _export(_viewer(interop_file(INSPECT_IMAGES)), "html")
    assert '<img class="attached-image" src="data:image/png;base64,iVBORw0KGgo' in html


def test_the_csps_allow_data_images_and_nothing_else_new() -> None:
    index = (ROOT / "web" / "index.html").read_text()
    page = re.search(r'content="(default-src[^"]+)"', index)
    assert page is not None and page.group(1) == CSP
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["img-src"] == "'self' data:"
    assert directives["default-src"] == "'self'" and directives["connect-src"] == "'self'"
    assert "data:" not in CSP.replace("img-src 'self' data:", "")  # data: is allowed for images only


def test_a_tool_results_image_shows_after_its_text() -> None:
    from conversation_support import view_node

    from assembler.render import render_section
    from assembler.views import ImageBlockView, TextBlockView, ToolData, ToolResultView

    blocks = [TextBlockView("Screenshot taken"), ImageBlockView(claude("image/png", PNG))]
    data = ToolData(kind="tool", callId="c", name="Read", arguments='{"file_path": "shot.png"}', turn=1, step=1,
                    status="done", callSeq=1, result=ToolResultView(seq=2, time=0, isError=False, blocks=blocks))
    body = render_section(view_node("tool", data, key="1:toolc"), 0)
    assert "Screenshot taken" in body
    assert body.index("Screenshot taken") < body.index(f'<img class="attached-image" src="data:image/png;base64,{PNG}"')
