"""A published site, for real: ``transcript-assembler publish`` of a folder (generated sessions, one of several
pages, and a real Claude Code project from the fixtures) served by Debian's nginx at a sub-path (``/team/site/``),
opened in Chromium: the list, opening a session (the read-only line, no live badge, no API request), "Load older",
the three views, the whole-session export from the page; nginx answers the gzip variants beside the files; the
filter box searches the text of every session through the site's index shards (fetched and queried in the worker;
the site is published in several shards, and a search fetches the index's filter, then only the shard that holds its
word, saying so while it loads): a hit opens its session at its row with the match marked, and a query syntax error
is a message.

nginx runs as this test's own process on 127.0.0.1 with a generated config whose pid, logs and temp folders are
under the test's tmp folder (``make site-deps`` installs the package: scripts/install_nginx.sh).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from assembler.browser.viewer import Viewer
from assembler.server.site_paths import ALL_MESSAGES, site_path
from tests.browser.conftest import BOOT_TIMEOUT_MS, SITE
from tests.browser.test_text_search import AT, WORD, current_mark, long_session
from tests.claude_projects import PARENT, PARENT_PROMPT, claude_projects
from tests.unit.test_server import write_log

NGINX = Path("/usr/sbin/nginx")
SUB = "team/site"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def nginx_conf(tmp: Path, www: Path, port: int) -> str:
    user = "user root;\n" if os.geteuid() == 0 else ""  # as root, workers would run as nobody (tmp is 0700)
    temps = "".join(f"  {name}_temp_path {tmp / name};\n" for name in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                        "scgi"))
    return f"""{user}daemon off;
worker_processes 1;
pid {tmp / 'nginx.pid'};
error_log {tmp / 'error.log'} warn;
events {{ worker_connections 64; }}
http {{
  include /etc/nginx/mime.types;
  types {{ text/javascript mjs; }}
  default_type application/octet-stream;
  access_log {tmp / 'access.log'};
{temps}  gzip_static on;
  server {{
    listen 127.0.0.1:{port};
    root {www};
  }}
}}
"""


@dataclass
class Published:
    url: str  # the site's URL (a sub-path of the nginx server)
    site: Path
    first_prompt: str  # the big session's first prompt: only in its oldest page
    requests: list[str] = field(default_factory=list)


def first_user_text(events: list[dict[str, Any]]) -> str:
    for event in events:
        if event["type"] == "user/message":
            for block in event["data"]["content"]:
                if block.get("type") == "text" and block["text"].strip():
                    return str(block["text"])
    raise AssertionError("no user text")


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Published]:
    if not os.access(NGINX, os.X_OK):
        pytest.fail(f"{NGINX} is missing: run `make site-deps` (bash scripts/install_nginx.sh)")
    if not (SITE / "index.html").is_file():
        pytest.fail("build/site is missing: run `make build`")
    tmp = tmp_path_factory.mktemp("published")
    root = claude_projects(tmp / "home")
    events = write_log(root / "gen" / "big.jsonl", 3000)
    write_log(root / "gen" / "small.jsonl", 60, seed=3, title="Small one")
    (root / "gen" / "words.jsonl").write_bytes(long_session("words", AT))  # a rare word in an older page
    www = tmp / "www"
    site = www / SUB
    # the command as a user runs it (a process of its own: sync Playwright holds this thread's event loop)
    done = subprocess.run([sys.executable, "-m", "assembler", "publish", str(root), "-o", str(site), "--static",
                           str(SITE), "--index-shard-mb", "0.1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp / name).mkdir()
    port = free_port()
    conf = tmp / "nginx.conf"
    conf.write_text(nginx_conf(tmp, www, port))
    process = subprocess.Popen([str(NGINX), "-p", str(tmp), "-e", str(tmp / "error.log"), "-c", str(conf)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    err = process.stderr.read().decode() if process.stderr else ""
                    log = (tmp / "error.log").read_text() if (tmp / "error.log").exists() else ""
                    pytest.fail(f"nginx did not start: {err}\n{log}")
                time.sleep(0.05)
        yield Published(f"http://127.0.0.1:{port}/{SUB}/", site, first_user_text(events))
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def page(browser: Browser, published: Published) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    page = context.new_page()
    context.on("request", lambda request: published.requests.append(request.url))
    page.goto(f"{published.url}?test=1")
    page.evaluate("(ms) => Promise.race([window.transcriptViewer.ready, new Promise((_, no) => "
                  "setTimeout(() => no(new Error('boot timed out')), ms))])", BOOT_TIMEOUT_MS)
    yield page
    context.close()


def rows(page: Page) -> int:
    return int(page.evaluate("() => window.transcriptViewer.view.order.length"))


def test_nginx_serves_the_gzip_variant(published: Published) -> None:
    rel = site_path("page", "gen/big")
    assert rel is not None
    request = urllib.request.Request(published.url + rel, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        body = response.read()
    assert body == (published.site / f"{rel}.gz").read_bytes()
    assert gzip.decompress(body) == (published.site / rel).read_bytes()


def test_list_open_older_views_export(page: Page, published: Published) -> None:
    page.wait_for_selector("#session-list button[data-id='gen/big']")
    listed = page.evaluate(
        "() => [...document.querySelectorAll('#session-list button[data-id]')].map(b => b.dataset.id)")
    assert "gen/small" in listed and any(PARENT in i for i in listed), listed
    page.click("#session-list button[data-id='gen/big']")
    page.wait_for_function("() => window.transcriptViewer.view.order.length > 0")
    note = page.locator("#published-note")
    assert note.is_visible() and "read-only" in note.inner_text()
    assert page.locator("#live-state").is_hidden()
    assert "session=gen%2Fbig" in page.url or "session=gen/big" in page.url
    first = rows(page)

    # The trajectory overview covers the whole run while only the first page is in: the site's timeline.json
    page.evaluate("() => window.transcriptViewer.showView('trajectory')")
    page.wait_for_selector("#traj-overview[data-scope='run']", timeout=60_000)
    drawn = page.evaluate("() => window.transcriptViewer.overview.data")
    assert drawn == json.loads((published.site / str(site_path("timeline", "gen/big"))).read_bytes())
    assert drawn["total"] > page.evaluate("() => window.transcriptViewer.overview.loaded.total")
    assert any(u.endswith("/timeline.json") and u.startswith(published.url) for u in published.requests)
    page.evaluate("() => window.transcriptViewer.showView('chat')")

    # Load older, until the oldest page is in: each request a published file under the sub-path
    older = page.locator("#load-older")
    assert older.is_visible()
    loads = 0
    while older.is_visible():
        page.click("#load-older")
        page.wait_for_function("() => !document.documentElement.dataset.loadingOlder")
        loads += 1
        assert loads < 10
    assert loads >= 2 and rows(page) > first
    asked = [u for u in published.requests if "/sessions/" in u]
    assert any("/page-" in u for u in asked) and all(u.startswith(published.url) for u in asked), asked
    assert not [u for u in published.requests if "/api/" in u]  # no server API asked, no follow stream
    # the window now holds the whole session: the same transcript as the published whole-session page
    walked = page.evaluate("() => window.transcriptViewer.digest()")["digest"]
    whole = Viewer()
    whole.load_page((published.site / str(site_path("page", "gen/big", max_messages=ALL_MESSAGES))).read_bytes())
    assert walked == json.loads(whole.digest())["digest"]

    # the three views
    for view, selector in (("trajectory", "#trajectory"), ("context", "#context"), ("chat", "#transcript")):
        page.evaluate("(v) => window.transcriptViewer.showView(v)", view)
        assert page.locator(selector).is_visible(), view
        page.wait_for_function("(s) => document.querySelector(s).innerText.trim().length > 0", arg=selector)

    # the whole-session export from the page (its all.json): the first prompt is in it
    page.click("#export-menu > summary")
    with page.expect_download() as info:
        page.click('#export-menu button[data-format="md"][data-scope="session"]')
    path = info.value.path()
    assert path is not None
    text = Path(path).read_text(encoding="utf-8")
    first_page = (published.site / str(site_path("page", "gen/big"))).read_bytes()
    assert f'"text":"{published.first_prompt}"'.encode() not in first_page  # only in the oldest page
    assert text.startswith("# ") and re.search(rf"(?m)^{re.escape(published.first_prompt)}\s*$", text), text[:2000]
    assert any(u.endswith("/all.json") for u in published.requests)


def test_real_claude_session_opens(page: Page, published: Published) -> None:
    page.evaluate(f"() => {{ location.hash = 'session=' + encodeURIComponent('-src-experiments-claude_p/{PARENT}'); }}")
    page.wait_for_function("(t) => document.querySelector('#transcript').innerText.includes(t)", arg=PARENT_PROMPT)
    assert page.locator("#published-note").is_visible()
    assert page.locator("#alert").is_hidden() or not page.locator("#alert").inner_text().strip()


def test_text_search_in_the_published_index(page: Page, published: Published) -> None:
    catalog = json.loads((published.site / "catalog.json").read_bytes())
    shards = [s["file"] for s in catalog["index"]["shards"]]
    assert len(shards) >= 3 and all((published.site / f).is_file() for f in shards)
    manifest = json.loads((published.site / "site.json").read_bytes())
    holder = next(s["file"] for s in manifest["index"]["shards"] if "gen/words" in s["sessions"])
    page.evaluate("() => { location.hash = ''; }")
    page.wait_for_selector("#session-list button[data-id='gen/words']")
    page.evaluate("""() => {  // every loading note the hits section shows
        window.__notes = [];
        new MutationObserver(() => {
            const note = document.querySelector('#session-hits .hits-loading');
            if (note && window.__notes.at(-1) !== note.textContent) window.__notes.push(note.textContent);
        }).observe(document.querySelector('#session-hits'), { childList: true, subtree: true, characterData: true });
    }""")
    before = len(published.requests)
    page.fill("#session-filter", '"unclosed')
    note = page.locator("#session-hits .hits-note")
    note.wait_for(timeout=60_000)
    page.wait_for_function("() => !document.querySelector('#session-hits .hits-loading')", timeout=60_000)
    assert "quote" in note.inner_text()  # a query syntax error is a message
    filter_file = catalog["index"]["filter"]["file"]
    # the filter is fetched with the first search; a query the rules refuse fetches no shard
    assert [u.rsplit(f"/{SUB}/", 1)[1] for u in published.requests[before:] if "/search/" in u] == [filter_file]

    page.fill("#session-filter", WORD)
    hit = page.locator("#session-hits button.hit-button[data-session='gen/words']")
    hit.wait_for(timeout=30_000)
    assert hit.locator("mark.hit-mark").inner_text() == WORD
    assert "words answer 12," in hit.locator(".hit-snippet").inner_text()
    assert page.locator("#session-hits button.hit-button").count() == 1
    asked = [u for u in published.requests if "/search/" in u]
    # the word is in one session, so in one shard: that shard is the only one fetched, and only once
    assert [u.rsplit(f"/{SUB}/", 1)[1] for u in asked] == [filter_file, holder], (asked, holder)
    assert all(u.startswith(published.url) for u in asked) and not [u for u in published.requests if "/api/" in u]
    notes = page.evaluate("() => window.__notes")
    assert any(n.startswith("Loading the text index's word filter (") for n in notes), notes
    assert any(n.startswith(f"Loading 1 of the text index's {len(shards)} parts") for n in notes), notes
    page.fill("#session-filter", "")
    page.wait_for_function("() => document.querySelector('#session-hits').hidden", timeout=30_000)
    page.fill("#session-filter", WORD)  # again: nothing fetched again
    hit.wait_for(timeout=30_000)
    assert [u for u in published.requests if "/search/" in u] == asked
    seq = int(hit.get_attribute("data-seq") or "-1")

    hit.click()
    page.wait_for_function("() => location.hash.startsWith('#session=gen%2Fwords&seq=') "
                           "|| location.hash.startsWith('#session=gen/words&seq=')", timeout=30_000)
    page.wait_for_function("() => document.querySelector('mark.search-hit.search-current')", timeout=60_000)
    page.evaluate("() => window.transcriptViewer.idle()")
    where = current_mark(page)
    assert where["text"].lower() == WORD and where["inView"], where
    assert "words answer 12," in where["rowText"] and where["seq"] <= seq
    assert page.locator("#published-note").is_visible()
    page.fill("#session-filter", "")
