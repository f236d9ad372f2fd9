// Boots Pyodide from ./pyodide/ (served by us, never a CDN), loads our package and its dependencies by name
// from ./pyodide/lock.json, and imports it. Exposes window.transcriptViewer = { ready, pyodide, timings }:
// `ready` resolves to the timings once Python is usable and rejects (with the error shown on the page) if not.
import { loadPyodide } from "./pyodide/pyodide.mjs";

const PACKAGES = ["transcript-assembler"]; // the lock pulls in msgspec, markdown-it-py, mdurl, pygments
const IMPORTS = ["assembler", "definitions"];

const statusEl = document.getElementById("boot-status");
const errorEl = document.getElementById("boot-error");
const viewer = { ready: null, pyodide: null, timings: {} };
window.transcriptViewer = viewer;

function setStatus(state, text) {
  document.documentElement.dataset.boot = state; // "loading" | "ready" | "error", for styling and tests
  statusEl.textContent = text;
}

function showError(err) {
  setStatus("error", "Failed to start Python.");
  errorEl.textContent = `The viewer could not start: ${err?.message ?? err}`;
  errorEl.hidden = false;
  console.error("transcriptViewer boot failed:", err);
}

async function boot() {
  const t0 = performance.now();
  const mark = (name) => { viewer.timings[name] = Math.round(performance.now() - t0); };

  setStatus("loading", "Loading the Python runtime…");
  const pyodide = await loadPyodide({
    indexURL: new URL("./pyodide/", location.href).href,
    lockFileURL: new URL("./pyodide/lock.json", location.href).href, // must be absolute
  });
  viewer.pyodide = pyodide;
  mark("runtimeMs");

  setStatus("loading", "Loading packages…");
  // loadPackage does not reject when a wheel fails (404, sha256 mismatch): collect the errors and throw.
  const failures = [];
  await pyodide.loadPackage(PACKAGES, {
    messageCallback: () => {},
    errorCallback: (msg) => failures.push(msg),
  });
  if (failures.length) {
    throw new Error(`loading packages failed: ${failures.join(" ")}`);
  }
  mark("packagesMs");

  setStatus("loading", "Starting the assembler…");
  for (const name of IMPORTS) {
    pyodide.pyimport(name).destroy();
  }
  mark("importMs");

  viewer.timings.bootMs = viewer.timings.importMs;
  setStatus("ready", `Ready (Python started in ${(viewer.timings.bootMs / 1000).toFixed(1)} s).`);
  return { ...viewer.timings };
}

viewer.ready = boot();
viewer.ready.catch(showError);
