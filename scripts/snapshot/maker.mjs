// @ts-check
// Build-time only (scripts/make_snapshot.py): runs maker-worker.mjs and POSTs its snapshot to the build's own
// server (./snapshot.bin); the outcome is left on window.snapshotMaker.
const worker = new Worker(new URL("./maker-worker.mjs", import.meta.url), { type: "module" });
worker.onmessage = async (event) => {
  const { bytes, info, error } = event.data;
  if (error) {
    Object.assign(window, { snapshotMaker: { error } });
    return;
  }
  const response = await fetch("./snapshot.bin", { method: "POST", body: bytes });
  Object.assign(window, { snapshotMaker: response.ok ? { size: bytes.length, info } : { error: `upload: HTTP ${response.status}` } });
};
worker.onerror = (event) => Object.assign(window, { snapshotMaker: { error: event.message || "the worker failed" } });
