"""Images a transcript holds (an ``image`` block's attachment: Claude Code ``{mediaType, bytes, encoding, data}``,
Codex and Inspect ``{url: "data:…", mediaType?}``, Gemini CLI ``{mediaType, data}``, or a URL or path only).

Rules (DESIGN rule 7): an image is shown as ``<img src="data:…">`` only when it is a raster type (PNG, JPEG, GIF,
WebP; never SVG, which can hold script and links), its data is base64 we have, and it decodes to at most
``IMAGE_MAX_BYTES``; the ``data:`` URL is rebuilt from the checked media type and the checked base64, never taken as
recorded. Anything else is a placeholder naming the type and size (``[image: image/png, 3.1 MB, not shown: larger
than 2 MB]``); a URL or file path is never loaded. The page's and the export's CSP allow ``img-src data:`` for this
and nothing else new. Pure.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any, Final

__all__ = ["RASTER_TYPES", "IMAGE_MAX_BYTES", "image_data", "image_label", "image_html"]

RASTER_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
IMAGE_MAX_BYTES: Final = 2 << 20
"""The largest image (decoded bytes) a transcript shows inline."""

_ALIASES: Final = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg"}
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_DATA_URL: Final = re.compile(r"data:([^;,]*)((?:;[^;,]*)*),", re.IGNORECASE)
_SPACE: Final = re.compile(r"\s+")


def _media(value: Any) -> str | None:
    if type(value) is not str or not value.strip():
        return None
    media = value.strip().lower()
    return _ALIASES.get(media, media)


def _decoded_size(b64: str) -> int:
    pad = 2 if b64.endswith("==") else 1 if b64.endswith("=") else 0
    return max(0, len(b64) * 3 // 4 - pad)


def _parts(attachment: Any) -> tuple[str | None, str | None, int | None]:
    """``(media type, base64 data or None, decoded size or None)`` of an attachment, as far as it says."""
    if type(attachment) is not dict:
        return None, None, None
    media = _media(attachment.get("mediaType"))
    size = attachment.get("bytes")
    size = size if type(size) is int and size >= 0 else None
    data = attachment.get("data")
    b64: str | None = None
    if type(data) is str and attachment.get("encoding", "base64") == "base64":
        b64 = data
    url = attachment.get("url")
    if b64 is None and type(url) is str and url[:5].lower() == "data:":
        found = _DATA_URL.match(url)
        if found is not None:
            media = media or _media(found.group(1))
            if ";base64" in found.group(2).lower():
                b64 = url[found.end():]
    if b64 is not None:
        if not _BASE64.fullmatch(b64):
            b64 = _SPACE.sub("", b64)  # base64 wrapped in lines
            if not _BASE64.fullmatch(b64) or len(b64) % 4:
                b64 = None
        if b64 is not None:
            size = _decoded_size(b64)
    return media, b64, size


def _size_text(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1 << 20:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1 << 20):.1f} MB"


def image_data(attachment: Any) -> str | None:
    """The ``data:`` URL an attachment may be shown as (see the module rules), else None."""
    media, b64, size = _parts(attachment)
    if media not in RASTER_TYPES or b64 is None or not b64 or size is None or size > IMAGE_MAX_BYTES:
        return None
    return f"data:{media};base64,{b64}"


def _why_not(attachment: Any) -> str | None:
    media, b64, size = _parts(attachment)
    if media is not None and media not in RASTER_TYPES:
        return "not a raster image type"
    if b64 is None or not b64:
        if type(attachment) is dict and type(attachment.get("url")) is str and \
                not attachment["url"][:5].lower() == "data:":
            return "a link, not loaded"
        if type(attachment) is dict and type(attachment.get("path")) is str:
            return "a file path, not loaded"
        return "its data is not in the log"
    if media is None:
        return "no media type"
    if size is not None and size > IMAGE_MAX_BYTES:
        return f"larger than {_size_text(IMAGE_MAX_BYTES)}"
    return None


def image_label(attachment: Any) -> str:
    """Plain text of an image: ``[image: image/png, 12 KB]`` (what is known of it)."""
    media, _, size = _parts(attachment)
    facts = [x for x in (media, _size_text(size) if size is not None else None) if x]
    return f"[image: {', '.join(facts)}]" if facts else "[image]"


def image_html(attachment: Any) -> str:
    """The image as HTML: an ``<img>`` of its checked ``data:`` URL, or a placeholder saying why not."""
    src = image_data(attachment)
    label = image_label(attachment)
    if src is not None:
        alt = escape(label[1:-1])
        return (f'<figure class="image-block"><img class="attached-image" src="{escape(src)}" alt="{alt}" '
                f'loading="lazy" decoding="async"></figure>')
    why = _why_not(attachment)
    text = f"{label[:-1]}, not shown: {why}]" if why else label
    return f'<div class="image-block image-placeholder">{escape(text)}</div>'
