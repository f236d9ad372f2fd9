"""The page names no format of its own: the build writes the format table (``formats.json``) and the file
picker's ``accept`` list from ``assembler.formats``, and no script of the page holds a list of suffixes (the
worker's loader decides from the content)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assembler.formats import SUFFIXES, table

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"


def _site_file(name: str) -> str:
    path = SITE / name
    if not path.is_file():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run `make build`")
    return path.read_text(encoding="utf-8")


def test_the_file_pickers_accept_list_is_the_tables_suffixes() -> None:
    html = _site_file("index.html")
    accepts = re.findall(r'<input type="file" id="file-input" accept="([^"]*)"', html)
    assert len(accepts) == 1
    assert accepts[0].split(",") == [*SUFFIXES, ".zst"]  # .zst: a compressed log of ours (detected inside)
    assert "@FORMATS@" not in html


def test_the_build_writes_the_table_the_page_reads() -> None:
    written = json.loads(_site_file("formats.json"))
    assert written == {"formats": table(), "suffixes": list(SUFFIXES)}


def test_the_folder_picker_is_a_directory_input() -> None:
    html = _site_file("index.html")
    assert re.search(r'<input type="file" id="folder-input" webkitdirectory multiple hidden>', html)


_LITERAL = re.compile(r"""(["'`])((?:(?!\1).)*)\1""")


def _published_names() -> set[str]:
    """The file names of a published site (``site_paths.LAYOUT``), as ``web/site.mjs`` spells them in template
    literals: the site's own URL scheme, not a readable format (``test_publish_pages`` holds the two equal)."""
    from assembler.server.site_paths import LAYOUT

    names = set()
    for template in LAYOUT.values():
        name = template.rsplit("/", 1)[-1]
        names.add(name)
        names.add(name.replace("{beforeSeq}", "${before}"))
        names.add(re.sub(r"^sessions/\{dir\}/", "${base}/", template).replace("{beforeSeq}", "${before}"))
    return names


def test_no_script_of_the_page_lists_suffixes() -> None:
    suffixes = sorted(SUFFIXES, key=len, reverse=True)
    published = _published_names()
    found = []
    for script in sorted((ROOT / "web").glob("*.mjs")):
        for n, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//", 1)[0] if not line.lstrip().startswith("*") else ""
            for _, text in _LITERAL.findall(code):
                if text == "formats.json" or text.startswith("./"):
                    continue  # the table itself, and the files the page loads
                if script.name == "site.mjs" and text in published:
                    continue  # a published site's file names
                if any(text.endswith(s) or f"{s}|" in text or f"|{s[1:]}" in text for s in suffixes):
                    found.append(f"{script.name}:{n}: {text}")
            if re.search(r"/\\\.\((?:jsonl|json|eval|sqlite)", code):  # a suffix regex like /\.(jsonl|...)$/
                found.append(f"{script.name}:{n}: {code.strip()}")
    assert not found, found


def test_the_page_loads_one_bundle_and_preloads_what_it_loads() -> None:
    """The build bundles the page's modules (``scripts/page_modules.py``): ``index.html`` loads ``worker-start.mjs``
    and ``app.bundle.mjs``; the bundle imports only the early modules (``worker-start.mjs``'s own graph), so each is
    one instance shared by both scripts; every module the page loads is a modulepreload link, and only those: the
    worker's own modules load in the worker."""
    import re as _re

    from tests.corpus import REPO

    site = REPO / "build" / "site"
    if not (site / "index.html").is_file():
        pytest.skip("build/site is not built (make build)")
    html = (site / "index.html").read_text(encoding="utf-8")
    scripts = _re.findall(r'<script type="module" src="([\w.-]+\.mjs)"></script>', html)
    assert scripts == ["worker-start.mjs", "app.bundle.mjs"]
    preloaded = _re.findall(r'<link rel="modulepreload" href="([\w.-]+\.mjs)">', html)
    assert "@MODULEPRELOAD@" not in html
    assert preloaded[:2] == scripts and len(preloaded) == len(set(preloaded))

    def imports(name: str) -> set[str]:
        return set(_re.findall(r"""from\s+["']\./([\w.-]+\.mjs)["']""", (site / name).read_text(encoding="utf-8")))

    early = {"worker-start.mjs"}
    for name in sorted(early):
        early |= imports(name)
    assert imports("app.bundle.mjs") == early  # nothing of the page's own graph is loaded twice
    assert set(preloaded) == early | {"app.bundle.mjs"}
    assert "worker.mjs" not in preloaded and "pyodide.mjs" not in preloaded
