"""The browser edge: the entry points the viewer's Web Worker calls in Pyodide, bytes in and JSON bytes out.

Rules: this is the only package the page's JavaScript talks to (``web/worker.mjs`` imports it and calls methods of
``VIEWER`` by name). Inputs arrive as bytes (a ``Uint8Array`` becomes a ``memoryview``; a JS string is never
parsed); results go back as msgspec-encoded JSON bytes. Pages and follow frames go through the journal (PROTOCOL 4)
into one Conversation assembler wired with the default Definitions; local files are parsed in slices (so the worker
can report progress), their storage rows renamed to wire rows, never expanded, and "Load older" for a file is
answered here from the no-expansion pager. HTML is rendered on demand, per node, by ``render`` (DESIGN rule 8).
Nothing here touches the DOM, the network or ``js``; the worker does the I/O. Works on CPython too, which is how it
is unit-tested.

Modules: ``viewer`` (the wire API: ``Viewer``, whose entry points the worker calls, and the worker's ``VIEWER``),
``window`` (the window's state: journal, assembler, nodes), the features the API composes (``folder``,
``compare_view``, ``sitesearch``, ``view_api``, ``inspector``, ``filters``, ``replay``), ``local`` (local files
parsed in slices), ``updates`` (bytes in, and the JSON values the page gets back), ``guard`` (the entry points' last
line of defence), ``gcpause`` (the cycle collector paused around a page load). Import from this package.
"""

from .local import (
    FileLoad,
)
from .updates import (
    as_bytes,
)
from .viewer import (
    VIEWER,
    Viewer,
)

__all__ = ["FileLoad", "Viewer", "VIEWER", "as_bytes"]
