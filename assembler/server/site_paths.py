"""The published site's URL scheme (``publish``): where each request the viewer makes of ``serve`` is a file.

The scheme, named here once for the publish side (the page's twin is ``web/site.mjs: requestUrl``; the two must
agree, and ``tests/unit/test_publish_pages.py`` checks them against each other)::

    GET api/sessions                                     -> catalog.json
    GET api/sessions/ID/page?maxMessages=P               -> sessions/DIR/page.json          (the first page)
    GET api/sessions/ID/page?throughSeq=L&beforeSeq=B&maxMessages=P
                                                         -> sessions/DIR/page-B.json        ("Load older")
    GET api/sessions/ID/page?throughSeq=L&maxMessages=ALL -> sessions/DIR/all.json          (whole-session export)
    GET api/sessions/ID/follow, .../raw                  -> nothing (a published session is read-only)

``P`` is ``PAGE_SIZE`` (the page's and the server's default), ``L`` the session's last seq (a published session never
grows, so every page the viewer asks for is read through it), ``ALL`` the page's "every message" (JavaScript's
``Number.MAX_SAFE_INTEGER``). ``DIR`` is the session id as ONE path segment: every byte of its UTF-8 outside
``A-Z a-z 0-9 . _ -`` (``/`` included) and a leading ``.`` are written ``~XX`` (upper-case hex), so the site's paths
need no percent-encoding on any host or object store, no id nests inside another's folder, and no segment is ``.``,
``..`` or hidden. Every path is relative to the site's folder (the site works under any sub-path).

The same scheme as data is ``LAYOUT`` (path templates, ``{dir}`` and ``{beforeSeq}`` filled in); ``publish`` writes
it into the site's manifest (``site.json``) and ``site_path`` fills it in, so the two never disagree.

Rules: pure functions of their arguments (no I/O); ``site_path`` answers None for a request the site has no file
for.
"""

from __future__ import annotations

from ..history import DEFAULT_MAX_MESSAGES

__all__ = ["ALL_MESSAGES", "CATALOG", "LAYOUT", "MANIFEST", "MARKER", "PAGE_SIZE", "SESSIONS", "session_dir",
           "site_path"]

PAGE_SIZE = DEFAULT_MAX_MESSAGES
"""Messages per page: the server's default, and the page's (``web/config.mjs: PAGE_SIZE``)."""
ALL_MESSAGES = (1 << 53) - 1
"""The ``maxMessages`` of the page's whole-session export (``Number.MAX_SAFE_INTEGER``)."""
CATALOG = "catalog.json"
MANIFEST = "site.json"
SESSIONS = "sessions"
MARKER = '<meta name="transcript-assembler-site" content="published">'
"""What ``publish`` adds to the viewer's ``index.html``: the page reads its sessions from the site's files."""

LAYOUT: dict[str, str] = {
    "catalog": CATALOG,
    "first": f"{SESSIONS}/{{dir}}/page.json",
    "older": f"{SESSIONS}/{{dir}}/page-{{beforeSeq}}.json",
    "all": f"{SESSIONS}/{{dir}}/all.json",
    "timeline": f"{SESSIONS}/{{dir}}/timeline.json",
    "dir": "the session id, every UTF-8 byte outside A-Z a-z 0-9 . _ - (and a leading .) written ~XX",
}
"""The scheme as path templates (see the module doc), relative to the site's folder."""

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def session_dir(sid: str) -> str:
    """The session id as one safe path segment (see the module doc)."""
    out = []
    for i, byte in enumerate(sid.encode("utf-8", "surrogatepass")):
        if byte in _SAFE and not (i == 0 and byte == 0x2E):
            out.append(chr(byte))
        else:
            out.append(f"~{byte:02X}")
    return "".join(out)


def site_path(kind: str, sid: str | None = None, *, before: int | None = None,
              max_messages: int = PAGE_SIZE) -> str | None:
    """The site file answering a request: ``kind`` ``"list"`` (the session list), ``"timeline"`` (the whole run's
    overview of ``sid``) or ``"page"`` (a page of ``sid``, older than ``before`` when given, ``max_messages`` long);
    None when the site has none (follow, raw, another page size)."""
    if kind == "list":
        return CATALOG
    if kind == "timeline" and sid:
        return LAYOUT["timeline"].format(dir=session_dir(sid))
    if kind != "page" or not sid:
        return None
    folder = session_dir(sid)
    if max_messages == ALL_MESSAGES and before is None:
        return LAYOUT["all"].format(dir=folder)
    if max_messages != PAGE_SIZE:
        return None
    if before is None:
        return LAYOUT["first"].format(dir=folder)
    return LAYOUT["older"].format(dir=folder, beforeSeq=before)
