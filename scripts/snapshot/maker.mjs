// @ts-check
// Build-time only (scripts/make_snapshot.py): runs maker-worker.mjs and POSTs its snapshot and our wheel's bytecode
// to the build's own server (./snapshot.bin, ./own-pyc.zip); the outcome is left on window.snapshotMaker.
const worker = new Worker(new URL("./maker-worker.mjs", import.meta.url), { type: "module" });
worker.onmessage = async (event) => {
  const { bytes, info, pyc, error } = event.data;
  if (error) {
    Object.assign(window, { snapshotMaker: { error } });
    return;
  }
  for (const [name, body] of [["snapshot.bin", bytes], ["own-pyc.zip", pyc]]) {
    const response = await fetch(`./${name}`, { method: "POST", body });
    if (!response.ok) {
      Object.assign(window, { snapshotMaker: { error: `upload of ${name}: HTTP ${response.status}` } });
      return;
    }
  }
  Object.assign(window, { snapshotMaker: { size: bytes.length, pycSize: pyc.length, info } });
};
worker.onerror = (event) => Object.assign(window, { snapshotMaker: { error: event.message || "the worker failed" } });
