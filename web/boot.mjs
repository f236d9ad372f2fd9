// @ts-check
// How Python starts, shared by the viewer's worker (worker.mjs) and the build's snapshot maker
// (scripts/snapshot/maker-worker.mjs), so a memory snapshot is made with exactly the options it is restored with.
//
// The build boots Pyodide once in headless Chromium with `_makeSnapshot`, loads the pure-Python wheels below and
// imports SNAPSHOT_IMPORTS, then saves the wasm heap, gzipped, as pyodide/snapshot.bin.gz. The worker restores that
// heap instead of initialising Python (Py_Initialize and Pyodide's own bootstrap take ~2 s of a cold load), then loads
// our wheel and msgspec as usual. A snapshot holds no compiled extension (.so): a dlopen'ed library's code and
// function-table slots live outside the heap and would not survive a restore, so msgspec and everything importing
// it (our own package) load after the restore. Files are not in the heap either: the restored interpreter gets
// the stdlib zip again from Pyodide's preRun, and the wheels are installed again by loadPackage.

/** What the worker loads by name from ./pyodide/lock.json (which pulls in msgspec, markdown-it-py, mdurl, pygments). */
export const PACKAGES = ["transcript-assembler"];

/** The snapshot the build writes next to the runtime (the worker boots from scratch when it is missing or does not
 * restore). */
export const SNAPSHOT_PATH = "pyodide/snapshot.bin.gz"; // gzip: a quarter of the bytes to serve

/** Pure-Python wheels installed before the snapshot is taken (no .so: see above). */
export const SNAPSHOT_PACKAGES = ["pygments", "markdown-it-py", "mdurl"];

/** Modules imported before the snapshot is taken: the stdlib and pure-Python part of `import assembler.browser`
 * and of loadPackage (tarfile, importlib.metadata). A name that no longer imports fails the build. */
export const SNAPSHOT_IMPORTS = [
  "tarfile", "importlib.metadata", "email", "datetime", "uuid", "decimal", "hashlib", "hmac", "secrets",
  "html", "html.entities", "html.parser", "urllib.parse", "ipaddress", "difflib", "unicodedata",
  "dataclasses", "typing", "json", "base64",
  "mdurl", "markdown_it", "markdown_it.main",
  "pygments", "pygments.util", "pygments.token", "pygments.lexer", "pygments.lexers", "pygments.filters",
  "pygments.formatter", "pygments.formatters", "pygments.formatters.html", "pygments.style", "pygments.styles",
  "pygments.styles.default",
];
// Keep this list small: the heap must not outgrow the runtime's initial wasm memory (30 MiB in Pyodide 314.0.7),
// since a restore cannot grow it (the build fails, saying so). Instantiating ~20 Pygments lexers here crossed it.

/** Python run right after a restore: what the snapshot froze that must differ per page (the `random` seed). */
export const AFTER_RESTORE = "import random\nrandom.seed()";

/**
 * loadPyodide's options for the site whose root is `base` (the same for a normal boot, a restore and the maker).
 * @param {URL} base
 */
export function pyodideOptions(base) {
  return {
    indexURL: new URL("./pyodide/", base).href,
    lockFileURL: new URL("./pyodide/lock.json", base).href, // must be absolute
  };
}
