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

// Bytecode for our own wheel (Python 3.14, as the viewer runs it), compiled after the snapshot is taken so the
// snapshot does not see it: unchecked-hash .pyc files (PEP 552), which the import system uses without comparing
// timestamps (a wheel's files get new ones when installed). Returns a zip of __pycache__/*.pyc, relative to the
// wheel's root; the build adds them to the wheel.
const COMPILE = `
import importlib.util, io, os, py_compile, sysconfig, zipfile
root = "/tmp/own-wheel"
runtime = sysconfig.get_path("purelib")
out = io.BytesIO()
with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
    for dirpath, dirnames, files in os.walk(root):
        dirnames.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            cached = importlib.util.cache_from_source(rel)
            py_compile.compile(os.path.join(root, rel), cfile=os.path.join(root, cached),
                               dfile=os.path.join(runtime, rel), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
            with open(os.path.join(root, cached), "rb") as f:
                zf.writestr(zipfile.ZipInfo(cached, date_time=(1980, 1, 1, 0, 0, 0)), f.read())
out.getvalue()
`;

/** @param {any} entry a lock.json package entry */
async function wheelBytes(entry) {
  const response = await fetch(new URL(`../pyodide/${entry.file_name}`, import.meta.url));
  if (!response.ok) throw new Error(`${entry.file_name}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

try {
  const options = pyodideOptions(new URL("../", import.meta.url));
  const pyodide = await loadPyodide({ ...options, env: { PYTHONHASHSEED: "0" }, _makeSnapshot: true });
  // Installed with unpackArchive, not loadPackage: loadPackage leaves JavaScript state behind that a snapshot
  // cannot hold ("Unexpected hiwire entry"). The worker's loadPackage installs the same wheels again after a
  // restore. Into site-packages, where loadPackage puts them: a module's __path__ must name the files it finds
  // after a restore.
  const extractDir = String(pyodide.runPython("import sysconfig\nsysconfig.get_path('purelib')"));
  const lock = /** @type {any} */ (pyodide).lockfile;
  for (const name of SNAPSHOT_PACKAGES) {
    const entry = lock.packages[name];
    if (!entry) throw new Error(`${name} is not in lock.json`);
    pyodide.unpackArchive(await wheelBytes(entry), "wheel", { extractDir });
  }
  const info = JSON.parse(pyodide.runPython(CHECK));
  info.heapBytes = /** @type {any} */ (pyodide)._module.HEAP8.length; // checked against the initial memory
  const bytes = pyodide.makeMemorySnapshot();
  const own = await wheelBytes(lock.packages["transcript-assembler"]);
  pyodide.unpackArchive(own, "wheel", { extractDir: "/tmp/own-wheel" });
  const compiled = pyodide.runPython(COMPILE);
  const pyc = compiled.toJs();
  compiled.destroy();
  self.postMessage({ bytes, info, pyc }, [bytes.buffer, pyc.buffer]);
} catch (err) {
  self.postMessage({ error: String(/** @type {any} */ (err)?.stack || err) });
}
