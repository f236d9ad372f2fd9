"""Where ``serve`` finds the viewer (``assembler.server.site.find_site``): a checkout's built ``build/site`` first,
else the site an installed wheel carries (``assembler/_site``), else none (API only, with a warning); and
``serve --open`` starts the default browser once the socket accepts connections, or says there is none."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from conftest import ROOT

from assembler.server.site import CHECKOUT_SITE, PACKAGED_SITE, find_site


def _site(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html>")
    return folder


def _package(root: Path, *, checkout: bool) -> Path:
    package = root / "assembler"
    package.mkdir(parents=True)
    if checkout:
        (root / "pyproject.toml").write_text("[project]\n")
    return package


def test_a_checkout_serves_its_own_build_site_before_a_packaged_one(tmp_path: Path) -> None:
    package = _package(tmp_path, checkout=True)
    _site(package / "_site")
    built = _site(tmp_path / "build" / "site")
    assert find_site(package) == built


def test_a_checkout_without_a_build_falls_back_to_the_packaged_site(tmp_path: Path) -> None:
    package = _package(tmp_path, checkout=True)
    (tmp_path / "build" / "site").mkdir(parents=True)  # a folder without index.html is no site
    assert find_site(package) is None
    packaged = _site(package / "_site")
    assert find_site(package) == packaged


def test_an_installed_package_ignores_a_build_site_beside_site_packages(tmp_path: Path) -> None:
    package = _package(tmp_path / "site-packages", checkout=False)
    _site(tmp_path / "site-packages" / "build" / "site")  # not a checkout: no pyproject.toml beside the package
    packaged = _site(package / "_site")
    assert find_site(package) == packaged


def test_no_site_anywhere_is_none(tmp_path: Path) -> None:
    assert find_site(_package(tmp_path, checkout=False)) is None


def test_this_checkout_decides_between_its_two_places() -> None:
    assert CHECKOUT_SITE == ROOT / "build" / "site" and PACKAGED_SITE == ROOT / "assembler" / "_site"
    assert not PACKAGED_SITE.exists(), "the built site is copied in at dist time, never kept in the checkout"
    assert find_site() == (CHECKOUT_SITE if (CHECKOUT_SITE / "index.html").is_file() else None)


def _serve_open(tmp_path: Path, env: dict[str, str]) -> tuple[str, subprocess.Popen[str]]:
    (tmp_path / "s").mkdir()
    process = subprocess.Popen([sys.executable, "-m", "assembler", "serve", str(tmp_path / "s"), "--port", "0",
                                "--no-static", "--open"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("serving 0 session(s) at http://127.0.0.1:"), line
    return line.split(" at ", 1)[1].strip(), process


def _stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    return stderr


def test_open_starts_the_browser_on_the_url_and_the_server_answers_it(tmp_path: Path) -> None:
    seen = tmp_path / "browser.txt"
    browser = tmp_path / "browser.py"
    # A stand-in browser ($BROWSER, which webbrowser tries first): fetches the URL at once and notes the status.
    browser.write_text(f"#!{sys.executable}\nimport sys, urllib.request\n"
                       "status = urllib.request.urlopen(sys.argv[1] + 'api/sessions', timeout=20).status\n"
                       f"open({str(seen)!r}, 'w').write(sys.argv[1] + ' ' + str(status))\n")
    browser.chmod(0o755)
    url, process = _serve_open(tmp_path, {**os.environ, "BROWSER": str(browser)})
    try:
        deadline = time.monotonic() + 30
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stderr = _stop(process)
    assert seen.read_text() == f"{url} 200", stderr
    assert "--open" not in stderr


def test_open_without_a_browser_says_so_and_keeps_serving(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    url, process = _serve_open(tmp_path, {**env, "PATH": str(empty)})
    lines: list[str] = []
    try:
        stream = process.stderr
        assert stream is not None
        reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
        reader.start()
        reader.join(30)
        assert urllib.request.urlopen(url + "api/sessions", timeout=20).status == 200  # still serving
    finally:
        _stop(process)
    assert lines == [f"transcript-assembler: --open: no web browser could be started; open {url} yourself\n"]
