"""Where the viewer's built site is: the one decision ``serve`` and ``create_app`` use.

Rules: a checkout (``pyproject.toml`` beside the ``assembler`` package) serves its own ``build/site`` when that is
built, so a developer's ``make build`` is what they see; otherwise the site the wheel carries as package data
(``assembler/_site``, copied in by ``scripts/build_dist.py`` at ``make dist`` time, never committed). A folder counts
as a site only when it holds ``index.html``. None when there is neither: the server then answers the API only.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHECKOUT_SITE", "PACKAGED_SITE", "find_site", "is_site"]

_PACKAGE = Path(__file__).resolve().parents[1]
CHECKOUT_SITE = _PACKAGE.parent / "build" / "site"
"""``build/site`` of the checkout this package runs from (``make build`` writes it)."""
PACKAGED_SITE = _PACKAGE / "_site"
"""The site an installed wheel carries (absent in a checkout)."""


def is_site(folder: Path) -> bool:
    """Whether ``folder`` holds a built viewer (its ``index.html``)."""
    return (folder / "index.html").is_file()


def find_site(package: Path = _PACKAGE) -> Path | None:
    """The built viewer to serve at ``/``: the checkout's ``build/site`` when ``package`` (this ``assembler``
    folder) sits in a checkout that has one, else the installed package's ``_site``, else None."""
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file() and is_site(checkout / "build" / "site"):
        return checkout / "build" / "site"
    if is_site(package / "_site"):
        return package / "_site"
    return None
