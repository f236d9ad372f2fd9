// The viewer's Python side: a module Web Worker that boots Pyodide from ./pyodide/ (never a CDN), loads our wheel
// and its pinned dependencies by name from ./pyodide/lock.json, and runs assembler.browser. Everything heavy
// (parsing a 100 MB file, folding, rendering HTML) happens here, so the page's main thread stays responsive.
//
// Protocol: the page posts {id, op, args}; the worker answers {id, ok: true, value} or {id, ok: false, error}.
// Bytes travel as transferred ArrayBuffers: into Python as a Uint8Array converted with pyodide.toPy (a
// memoryview, one copy), out of Python as the bytes of msgspec-encoded JSON. Unsolicited messages:
// {type: "boot", text} while starting and {type: "progress", id, ...} while a file is read.
import { loadPyodide } from "./pyodide/pyodide.mjs";

const PACKAGES = ["transcript-assembler"]; // the lock pulls in msgspec, markdown-it-py, mdurl, pygments
const SLICE_BYTES = 4 << 20; // a local file is parsed in 4 MB slices, with a progress message after each

let pyodide = null;
let api = null; // assembler.browser.VIEWER
const timings = {};

function post(message, transfer = []) {
  self.postMessage(message, transfer);
}

async function boot() {
  const t0 = performance.now();
  const mark = (name) => { timings[name] = Math.round(performance.now() - t0); };
  post({ type: "boot", text: "Loading the Python runtime…" });
  const base = new URL("./", import.meta.url);
  pyodide = await loadPyodide({
    indexURL: new URL("./pyodide/", base).href,
    lockFileURL: new URL("./pyodide/lock.json", base).href, // must be absolute
  });
  mark("runtimeMs");
  post({ type: "boot", text: "Loading packages…" });
  // loadPackage does not reject when a wheel fails (404, sha256 mismatch): collect the errors and throw.
  const failures = [];
  await pyodide.loadPackage(PACKAGES, {
    messageCallback: () => {},
    errorCallback: (msg) => failures.push(msg),
  });
  if (failures.length) throw new Error(`loading packages failed: ${failures.join(" ")}`);
  mark("packagesMs");
  post({ type: "boot", text: "Starting the assembler…" });
  const module = pyodide.pyimport("assembler.browser"); // kept alive: VIEWER is an attribute proxy borrowed from it
  api = module.VIEWER;
  mark("importMs");
  timings.bootMs = timings.importMs;
  return { ...timings };
}

const ready = boot();

// Calls a Python method; Python bytes come back as a Uint8Array that owns its buffer (transferable).
function call(method, ...args) {
  const proxies = [];
  const pyArgs = args.map((a) => {
    if (a instanceof Uint8Array || Array.isArray(a)) {
      const p = pyodide.toPy(a); // Uint8Array → memoryview; an array → list (of memoryviews / strs)
      proxies.push(p);
      return p;
    }
    return a;
  });
  const fn = api[method];
  try {
    const result = fn(...pyArgs);
    if (result === undefined || result === null || typeof result !== "object") return result;
    try {
      return result.toJs();
    } finally {
      result.destroy();
    }
  } finally {
    fn.destroy();
    for (const p of proxies) p.destroy();
  }
}

function replayed(bytes) {
  const result = JSON.parse(new TextDecoder().decode(bytes));
  result.wasmHeapBytes = pyodide._module.HEAP8.length;
  return result;
}

function bytesOf(buffer) {
  return buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer);
}

async function openFile(id, { file, all = false, maxMessages = 50 }) {
  const size = file.size;
  const name = file.name || "session.jsonl";
  call("file_begin", name, size);
  let offset = 0;
  let lastPost = 0;
  post({ type: "progress", id, phase: "read", bytes: 0, size, name });
  while (offset < size) {
    const slice = new Uint8Array(await file.slice(offset, offset + SLICE_BYTES).arrayBuffer());
    offset += slice.length;
    const progress = JSON.parse(new TextDecoder().decode(call("file_feed", slice)));
    const now = performance.now();
    if (now - lastPost > 50 || offset >= size) {
      lastPost = now;
      post({ type: "progress", id, phase: "read", ...progress });
    }
  }
  post({ type: "progress", id, phase: "fold", bytes: size, size, name });
  return call("file_finish", all, maxMessages);
}

const OPS = {
  ready: async () => ({ ...timings }),
  loadPage: async (_id, { bytes }) => call("load_page", bytesOf(bytes)),
  openFile: async (id, args) => openFile(id, args),
  frames: async (_id, { frames }) => call("apply_frames", frames.map((f) => bytesOf(f))),
  older: async (_id, { maxMessages = 50 }) => call("request_older", maxMessages),
  answer: async (_id, { requestId, bytes }) => call("answer_page", requestId, bytesOf(bytes)),
  pageFailed: async (_id, { requestId, reason }) => call("page_failed", requestId, String(reason)),
  reset: async () => { call("reset"); return null; },
  render: async (_id, { keys }) => call("render", keys),
  renderMore: async (_id, { key, block, offset }) => call("render_more", key, block, offset),
  renderSection: async (_id, { key, block }) => call("render_section", key, block),
  findSeq: async (_id, { seq }) => call("find_seq", seq),
  digest: async () => call("digest"),
  heapSize: async () => pyodide._module.HEAP8.length,
  // The replay measurement (assembler/browser/replay.py), shared by the "Replay benchmark" panel and
  // perf.bench_browser: one page folded in a scratch window; the wasm heap is read right after it.
  replayPage: async (_id, { bytes }) => replayed(call("replay_page", bytesOf(bytes))),
  replayWindow: async (_id, { mode }) => replayed(call("replay_window", String(mode))),
  // Test and benchmark hook: runs code in this worker's Python; the last expression must be a str.
  runPython: async (_id, { code }) => {
    const result = pyodide.runPython(code);
    if (result && typeof result === "object" && typeof result.destroy === "function") {
      const text = String(result);
      result.destroy();
      return text;
    }
    return result;
  },
};

self.onmessage = async (event) => {
  const { id, op, args } = event.data;
  try {
    await ready;
    const handler = OPS[op];
    if (!handler) throw new Error(`unknown op ${op}`);
    const value = await handler(id, args || {});
    const transfer = value instanceof Uint8Array ? [value.buffer] : [];
    post({ id, ok: true, value }, transfer);
  } catch (err) {
    post({ id, ok: false, error: String(err && err.message || err) });
  }
};

ready.then(
  (t) => post({ type: "ready", timings: t }),
  (err) => post({ type: "failed", error: String(err && err.message || err) }),
);
