"""Search across sessions on a served bucket (issue 21 items 3 and 4): the viewer served over ``s3://`` (moto's S3
server on 127.0.0.1, the standard AWS environment) with its search index; the session list's filter box finds a word
of a session in the bucket, and the hit opens that session at its row with the word marked."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

# The cloud extra and moto are part of `make setup`'s install: a missing one fails here, it never skips the test.
import boto3
import moto.server as moto_server
import pytest
import s3fs  # noqa: F401  (the s3:// filesystem fsspec loads by name)
from conftest import BOOT_TIMEOUT_MS, SITE
from test_text_search import AT, WORD, current_mark, long_session

BUCKET = "ta-search-page"
_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing-secret", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture(scope="module")
def bucket_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The viewer serving ``s3://BUCKET/sessions`` (two sessions, one holding ``WORD``), its index started."""
    from assembler.server import create_app
    from perf.load_follow import ServerThread

    s3 = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    s3.start()
    host, port = s3.get_host_and_port()
    tmp = tmp_path_factory.mktemp("bucket")
    env = {**_ENV, "AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "none"),
           "AWS_CONFIG_FILE": str(tmp / "none")}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    server: Any = None
    app: Any = None
    try:
        client = boto3.client("s3")
        client.create_bucket(Bucket=BUCKET)
        for sid, at in (("bucket-a", None), ("bucket-b", AT)):
            client.put_object(Bucket=BUCKET, Key=f"sessions/{sid}.jsonl", Body=long_session(sid, at))
        app = create_app([f"s3://{BUCKET}/sessions"], static_dir=SITE, index_dir=tmp / "search-index",
                         index_interval=0.3)
        server = ServerThread(app).__enter__()
        app.state.indexer.start()
        yield f"{server.base_url}/"
    finally:
        if app is not None:
            app.state.indexer.stop()
        if server is not None:
            server.__exit__()
        s3.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def test_a_text_hit_in_a_bucket_opens_its_session_at_the_row_marked(browser: Any, bucket_server: str) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{bucket_server}?test=1")
        page.wait_for_function("() => window.transcriptViewer && window.transcriptViewer.ready", timeout=30_000)
        page.evaluate("(ms) => Promise.race([window.transcriptViewer.ready, new Promise((_, no) => "
                      "setTimeout(() => no(new Error('boot timed out')), ms))])", BOOT_TIMEOUT_MS)
        page.wait_for_selector("#session-list button[data-id='bucket-b']", timeout=30_000)
        page.wait_for_function("async (w) => (await (await fetch('api/search?q=' + w)).json()).results.length > 0",
                               arg=WORD, timeout=30_000, polling=300)

        page.fill("#session-filter", WORD)
        hit = page.locator("#session-hits button.hit-button[data-session='bucket-b']")
        hit.wait_for(timeout=10_000)
        assert hit.locator("mark.hit-mark").inner_text() == WORD
        assert "bucket-b answer 12," in hit.locator(".hit-snippet").inner_text()
        seq = int(hit.get_attribute("data-seq") or "-1")

        hit.click()
        page.wait_for_function("() => location.hash.startsWith('#session=bucket-b&seq=') "
                               "&& document.querySelector('mark.search-hit.search-current')", timeout=60_000)
        page.evaluate("() => window.transcriptViewer.idle()")
        where = current_mark(page)
        assert where["text"].lower() == WORD and where["inView"], where
        assert "bucket-b answer 12," in where["rowText"] and where["seq"] <= seq
        assert not errors, errors
    finally:
        context.close()
