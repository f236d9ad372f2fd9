// @ts-check
// Build-time only (scripts/make_snapshot.py): boots Pyodide in a Web Worker with the viewer's own options
// (../boot.mjs), installs the pure-Python wheels, imports SNAPSHOT_IMPORTS and posts the memory snapshot.
// PYTHONHASHSEED=0 and random.seed(0) make the snapshot nearly reproducible (str hashes are otherwise salted per
// run); the restored interpreter keeps that hash seed, as it keeps everything else computed here.
// Fails (posts {error}) if any compiled extension module was loaded: a snapshot cannot hold one.
import { SNAPSHOT_IMPORTS, SNAPSHOT_PACKAGES, pyodideOptions } from "../boot.mjs";
import { loadPyodide } from "../pyodide/pyodide.mjs";

const CHECK = `
import importlib, json, sys, sysconfig
for name in json.loads(${JSON.stringify(JSON.stringify(SNAPSHOT_IMPORTS))}):
    importlib.import_module(name)
loaded = sorted(
    name for name, module in list(sys.modules.items())
    if str(getattr(module, "__file__", "") or "").endswith(".so")
)
if loaded:
    raise RuntimeError("a snapshot cannot hold compiled extension modules, but these are loaded: " + ", ".join(loaded))
purelib = sysconfig.get_path("purelib")
elsewhere = sorted(
    name for name, module in list(sys.modules.items())
    if str(getattr(module, "__file__", "") or "").startswith("/home/")
)
if elsewhere:
    raise RuntimeError(f"modules imported from outside the stdlib and {purelib}: " + ", ".join(elsewhere))
import random
random.seed(0)  # the same bytes from the same inputs; every page reseeds after its restore (AFTER_RESTORE)
json.dumps({"modules": len(sys.modules), "python": sys.version.split()[0]})
`;

try {
  const options = pyodideOptions(new URL("../", import.meta.url));
  const pyodide = await loadPyodide({ ...options, env: { PYTHONHASHSEED: "0" }, _makeSnapshot: true });
  // Installed with unpackArchive, not loadPackage: loadPackage leaves JavaScript state behind that a snapshot
  // cannot hold ("Unexpected hiwire entry"). The worker's loadPackage installs the same wheels again after a restore.
  // Into site-packages, where loadPackage puts them: a module's __path__ must name the files it finds after a restore.
  const extractDir = String(pyodide.runPython("import sysconfig\nsysconfig.get_path('purelib')"));
  const lock = /** @type {any} */ (pyodide).lockfile;
  for (const name of SNAPSHOT_PACKAGES) {
    const entry = lock.packages[name];
    if (!entry) throw new Error(`${name} is not in lock.json`);
    const response = await fetch(new URL(`../pyodide/${entry.file_name}`, import.meta.url));
    if (!response.ok) throw new Error(`${entry.file_name}: HTTP ${response.status}`);
    pyodide.unpackArchive(await response.arrayBuffer(), "wheel", { extractDir });
  }
  const info = JSON.parse(pyodide.runPython(CHECK));
  const bytes = pyodide.makeMemorySnapshot();
  self.postMessage({ bytes, info }, [bytes.buffer]);
} catch (err) {
  self.postMessage({ error: String(/** @type {any} */ (err)?.stack || err) });
}
