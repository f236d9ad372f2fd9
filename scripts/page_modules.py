"""The page's main-thread JavaScript as the built site serves it: one bundle and the modules the page starts with.

Rules: ``index.html`` loads two module scripts. ``worker-start.mjs`` starts the worker and asks for the session list
as the page starts (its own small graph: the *early modules*); ``app.mjs`` and everything it imports is bundled
by esbuild (``package.json``, pinned) into ``app.bundle.mjs``, with the early modules left as imports, so each of
them is one module instance shared by both scripts (a second copy would start a second worker). One request and one
parse instead of ~45 modules fetched and linked one by one: the session list of a 200-session folder showed sooner
(medians 0.41–0.53 s against 0.71–0.78 s in two alternating runs under the same load; ``perf.bench_interop``).
The bundle is not minified (its errors name readable code). Every module stays in the site as it is in ``web/`` (a
test may import one for its pure functions). The modules the page loads are preloaded (``modulepreload``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["BUNDLE", "EARLY", "PRELOAD_MARK", "PageModuleError", "bundle_app", "module_graph", "write_page_modules"]

ROOT = Path(__file__).resolve().parent.parent
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
BUNDLE = "app.bundle.mjs"
EARLY = "worker-start.mjs"
APP_SCRIPT = '<script type="module" src="app.mjs"></script>'
PRELOAD_MARK = "<!-- @MODULEPRELOAD@ -->"  # web/index.html: the build lists the page's module graph there
_IMPORT = re.compile(r"""^\s*(?:import|export)\s[^;]*?from\s+["']\./([\w.-]+\.mjs)["']"""
                     r"""|^\s*import\s+["']\./([\w.-]+\.mjs)["']""", re.MULTILINE)


class PageModuleError(Exception):
    """The page's modules cannot be bundled or listed (the message says what to do)."""


def module_graph(out: Path, roots: tuple[str, ...]) -> list[str]:
    """Every module imported statically from ``roots`` (files in ``out``), in discovery order."""
    seen: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop(0)
        if name in seen or not (out / name).is_file():
            continue
        seen.append(name)
        for found in _IMPORT.finditer((out / name).read_text(encoding="utf-8")):
            todo.append(found.group(1) or found.group(2))
    return seen


def bundle_app(out: Path) -> list[str]:
    """``out/app.bundle.mjs`` from ``out/app.mjs``, the early modules left as imports; returns those modules."""
    if not ESBUILD.is_file():
        raise PageModuleError(f"{ESBUILD.relative_to(ROOT)} is missing: run `make js-deps` (npm ci)")
    early = module_graph(out, (EARLY,))
    command = [str(ESBUILD), "app.mjs", "--bundle", "--format=esm", "--target=es2022", "--log-level=warning",
               f"--outfile={BUNDLE}", *(f"--external:./{name}" for name in early)]
    done = subprocess.run(command, cwd=out, capture_output=True, text=True)
    if done.returncode != 0:
        raise PageModuleError(f"esbuild failed on web/app.mjs:\n{done.stderr.strip()}")
    return early


def write_page_modules(out: Path) -> list[str]:
    """Bundle the page's modules, load the bundle from ``index.html`` and preload what the page loads; returns the
    preloaded modules (the early ones and the bundle)."""
    index = out / "index.html"
    html = index.read_text(encoding="utf-8")
    for mark in (PRELOAD_MARK, APP_SCRIPT):
        if mark not in html:
            raise PageModuleError(f"web/index.html has no {mark}")
    bundle_app(out)
    modules = module_graph(out, (EARLY, BUNDLE))
    links = "\n  ".join(f'<link rel="modulepreload" href="{name}">' for name in modules)
    html = html.replace(PRELOAD_MARK, links).replace(APP_SCRIPT, f'<script type="module" src="{BUNDLE}"></script>')
    index.write_text(html, encoding="utf-8")
    return modules
