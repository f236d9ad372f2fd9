// @ts-check
// The viewer's Python side: a module Web Worker that boots Pyodide from ./pyodide/ (never a CDN), loads our wheel
// and its pinned dependencies by name from ./pyodide/lock.json, and runs assembler.browser. Everything heavy
// (parsing a 100 MB file, folding, rendering HTML) happens here, so the page's main thread stays responsive.
// Python starts from the build's memory snapshot (./pyodide/snapshot.bin.gz, see boot.mjs) when there is one and it
// restores; otherwise it initialises from scratch, and the runtime stage says why.
//
// Protocol: the page posts {id, op, args}; the worker answers {id, ok: true, value} or {id, ok: false, error}.
// Bytes travel as transferred ArrayBuffers: into Python as a Uint8Array converted with pyodide.toPy (a
// memoryview, one copy), out of Python as the bytes of msgspec-encoded JSON. Unsolicited messages:
// {type: "stage", stage, text, ms} at each boot stage (runtime, packages, ready: see config.BOOT_STAGES) and
// {type: "progress", id, ...} while a file (phase read, then fold) or a folder (phase folder: done of total files)
// is read; {type: "preview", id, update} once while a big file is read (the part read so far, JSON bytes);
// {type: "fetching", id, ...} while a published site's search fetches files of its index (siteSearch). A
// refused openFile answers {id, ok: false, error, kind}: kind "cancelled" (a newer open superseded it) or
// "too-big" (Python's memory passed FILE_HEAP_LIMIT). The test hook runPython exists only when this worker's URL
// carries ?test=1 (the page passes its own flag on).
// Over 400 lines: one concept, the worker's one table of operations (OPS) with the I/O a few of them need before
// Python sees their bytes (a file's slices, a folder's files, a comparison side, a published site's index shards).
import { AFTER_RESTORE, PACKAGES, SNAPSHOT_PATH, pyodideOptions } from "./boot.mjs";
import { FILE_HEAP_LIMIT, PAGE_SIZE, PREVIEW_BYTES, PREVIEW_FILE_BYTES, SLICE_BYTES, TEST_MODE } from "./config.mjs";
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { IdleWarmUp } from "./warmup.mjs";

const T0 = performance.now();
/** @type {import("./pyodide/pyodide.mjs").PyodideAPI} */
let pyodide;
/** @type {any} */
let api = null; // assembler.browser.VIEWER
/** @type {Record<string, number>} */
const timings = {};

/** There is no snapshot to restore (its fetch failed or was answered with an error status). */
class NoSnapshot extends Error {}

/** The snapshot's bytes, fetched while loadPyodide fetches and compiles the runtime (it awaits them only before
 * instantiating the wasm module); rejects with NoSnapshot when there are none. */
const snapshotBytes = fetch(new URL(`./${SNAPSHOT_PATH}`, import.meta.url)).then(
  async (response) => {
    if (!response.ok) throw new NoSnapshot(`HTTP ${response.status}`);
    if (!response.body) throw new NoSnapshot("an empty response");
    // The browser inflates it natively, while it downloads.
    const inflated = new Response(response.body.pipeThrough(new DecompressionStream("gzip")));
    const bytes = new Uint8Array(await inflated.arrayBuffer());
    timings.snapshotFetchMs = Math.round(performance.now() - T0);
    return bytes;
  },
  (err) => { throw new NoSnapshot(`fetch failed: ${String(err?.message || err)}`); },
);
snapshotBytes.catch(() => {}); // boot() reads the outcome; this only keeps an early rejection from being "unhandled"

/**
 * @param {any} message
 * @param {Transferable[]} [transfer]
 */
function post(message, transfer = []) {
  self.postMessage(message, transfer);
}

/** How Python started: "snapshot", or "scratch (…why…)" (read by perf.bench_boot and the boot tests). */
let started = "";

async function boot() {
  const t0 = T0;
  timings.startedAt = Math.round(performance.timeOrigin + t0); // epoch ms, comparable with the page's clock
  /** @param {string} name */
  const mark = (name) => { timings[name] = Math.round(performance.now() - t0); };
  /** @param {string} stage @param {string} text */
  const stage = (stage, text) => post({ type: "stage", stage, text, ms: Math.round(performance.now() - t0) });
  stage("runtime", "loading the Python runtime");
  const options = pyodideOptions(new URL("./", import.meta.url));
  try {
    pyodide = await loadPyodide({ ...options, _loadSnapshot: snapshotBytes });
    pyodide.runPython(AFTER_RESTORE);
    started = "snapshot";
  } catch (err) {
    const why = String(/** @type {any} */ (err)?.message || err);
    started = err instanceof NoSnapshot
      ? `scratch (no snapshot: ${why})`
      : `scratch (the snapshot did not restore: ${why})`;
  }
  if (started !== "snapshot") {
    stage("runtime", `initialising Python from scratch, ${started.slice("scratch (".length, -1)}`);
    pyodide = await loadPyodide(options);
  }
  mark("runtimeMs");
  stage("packages", "loading packages");
  // loadPackage does not reject when a wheel fails (404, sha256 mismatch): collect the errors and throw.
  /** @type {string[]} */
  const failures = [];
  await pyodide.loadPackage(PACKAGES, {
    messageCallback: () => {},
    errorCallback: (msg) => failures.push(msg),
  });
  if (failures.length) throw new Error(`loading packages failed: ${failures.join(" ")}`);
  mark("packagesMs");
  stage("ready", "starting the assembler");
  const module = pyodide.pyimport("assembler.browser"); // kept alive: VIEWER is an attribute proxy borrowed from it
  api = module.VIEWER;
  mark("importMs");
  timings.bootMs = timings.importMs;
  return { ...timings, started };
}

const ready = boot();

/**
 * Calls a Python method; Python bytes come back as a Uint8Array that owns its buffer (transferable).
 * @param {string} method
 * @param {...any} args
 * @returns {any}
 */
function call(method, ...args) {
  /** @type {any[]} */
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

/** @param {ArrayBuffer | Uint8Array} bytes */
function replayed(bytes) {
  const result = JSON.parse(decoder.decode(bytes));
  result.wasmHeapBytes = /** @type {any} */ (pyodide)._module.HEAP8.length;
  return result;
}

/** @param {ArrayBuffer | Uint8Array} buffer */
const bytesOf = (buffer) => (buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer));

const decoder = new TextDecoder();
const encoder = new TextEncoder();
/** @param {any} bytes */
const parsed = (bytes) => JSON.parse(decoder.decode(bytes));

/** An answer that is no result: the page gets {ok: false, kind, error}. */
class Refusal extends Error {
  /** @param {"cancelled" | "too-big"} kind @param {string} message */
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/** Which local-file open is the current one: a newer open supersedes the one in flight. */
let currentOpen = 0;

/** @param {number} n */
const megabytes = (n) => `${(n / 1e6).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB`;

/**
 * Reads a local file into Python in slices. A newer openFile cancels this one at its next slice (the slices are read
 * with an await, and a newer open resets Python's file load meanwhile: feeding it this file's bytes would mix the
 * two). It stops at the first slice after which the parse has failed (a file of no known format, a bad line:
 * nothing after it would be read anyway), so a 2 GB file that is no log is not read to its end. When Python's
 * memory passes `heapLimit` (or Python fails while it is near it), the open stops with "too big to open in the
 * page". `key` picks one session of a file holding several; `local` is its path in the open folder.
 * @param {number} id
 * @param {{file: Blob & {name?: string}, all?: boolean, maxMessages?: number, heapLimit?: number,
 *   key?: string | null, local?: string | null}} args
 */
async function openFile(id, { file, all = false, maxMessages = PAGE_SIZE, heapLimit = FILE_HEAP_LIMIT, key = null,
  local = null }) {
  const mine = ++currentOpen;
  const size = file.size;
  const name = file.name || "session";
  const heap = () => /** @type {any} */ (pyodide)._module.HEAP8.length;
  let offset = 0;
  /** @param {unknown} [cause] */
  const tooBig = (cause) => {
    try { call("reset"); } catch { /* the memory is what failed: nothing more to free */ }
    const why = cause ? ` (${String(/** @type {any} */ (cause)?.message || cause).slice(0, 120)})` : "";
    return new Refusal("too-big", `${name} is too big to open in the page: it is ${megabytes(size)}, and Python's `
      + `memory here passed ${megabytes(heapLimit)} after ${megabytes(offset)} of it${why}. `
      + "`transcript-assembler serve` opens it (run it on the file's folder and pick the session from the list).");
  };
  call("file_begin", name, size, key ?? undefined, local ?? undefined); // undefined reaches Python as None
  let lastPost = 0;
  post({ type: "progress", id, phase: "read", bytes: 0, size, name });
  try {
    // A big file shows its first part while the rest is read (config.PREVIEW_FILE_BYTES): a smaller first slice,
    // then one preview update, posted as {type: "preview", id, update}.
    let preview = !all && size > PREVIEW_FILE_BYTES;
    while (offset < size) {
      const end = offset + (preview ? PREVIEW_BYTES : SLICE_BYTES);
      const slice = new Uint8Array(await file.slice(offset, end).arrayBuffer());
      if (mine !== currentOpen) throw new Refusal("cancelled", `opening ${name} was cancelled by a newer open`);
      offset += slice.length;
      const progress = parsed(call("file_feed", slice));
      if (heap() > heapLimit) throw tooBig();
      if (preview && !progress.error && offset < size) {
        preview = false;
        const update = call("file_preview", maxMessages);
        post({ type: "preview", id, update }, [update.buffer]);
      }
      const now = performance.now();
      if (now - lastPost > 50 || offset >= size || progress.error) {
        lastPost = now;
        post({ type: "progress", id, phase: "read", ...progress });
      }
      if (progress.error) break;
    }
    post({ type: "progress", id, phase: "fold", bytes: offset, size, name });
    const update = call("file_finish", all, maxMessages);
    if (heap() > heapLimit) throw tooBig();
    return update;
  } catch (err) {
    if (err instanceof Refusal) throw err;
    // Out of memory, Python answers with an exception or with garbage bytes (not JSON): near the limit either is
    // "too big", never the garbage itself.
    if (heap() > heapLimit * 0.75 || /MemoryError|out of memory/i.test(String(/** @type {any} */ (err)?.message))) {
      throw tooBig(err);
    }
    throw err;
  }
}

/** The files of the folder the page opened last, by their path in it: read again when one is opened. */
/** @type {Map<string, File>} */
let folderFiles = new Map();

/**
 * Describes a folder's session files for the list (assembler/browser/folder.py decides what is read and in which
 * order): the sidecars and the first bytes of the .jsonl files first, then each candidate whole, in slices, its
 * records counted and dropped. Progress is posted per file.
 * @param {number} id
 * @param {{files: File[], paths: string[]}} args
 */
async function describeFolder(id, { files, paths }) {
  folderFiles = new Map(paths.map((path, i) => [path, files[i]]));
  const list = paths.map((path, i) => ({ path, size: files[i].size, lastModified: files[i].lastModified }));
  const needs = parsed(call("folder_open", encoder.encode(JSON.stringify(list))));
  /** @param {string} path @param {number} [end] */
  const bytes = async (path, end) => {
    const file = /** @type {File} */ (folderFiles.get(path));
    return new Uint8Array(await (end === undefined ? file : file.slice(0, end)).arrayBuffer());
  };
  for (const path of needs.sidecars) call("folder_give", "sidecar", path, await bytes(path, needs.sidecarBytes));
  for (const path of needs.heads) call("folder_give", "head", path, await bytes(path, needs.headBytes));
  /** @type {string[]} */
  const order = parsed(call("folder_order"));
  let lastPost = 0;
  for (const [done, path] of order.entries()) {
    const now = performance.now();
    if (now - lastPost > 50) {
      lastPost = now;
      post({ type: "progress", id, phase: "folder", done, total: order.length, name: path });
    }
    const file = /** @type {File} */ (folderFiles.get(path));
    call("folder_read_begin", path);
    for (let offset = 0; offset < file.size;) {
      const slice = new Uint8Array(await file.slice(offset, offset + SLICE_BYTES).arrayBuffer());
      offset += slice.length;
      if (!parsed(call("folder_read_feed", slice)).go) break; // its parse failed: the rest is not read
    }
    call("folder_read_finish");
  }
  post({ type: "progress", id, phase: "folder", done: order.length, total: order.length, name: "" });
  return call("folder_entries");
}

/**
 * Opens a file of the open folder (its reader gets the folder's context: the sidecar, the project's older uuids).
 * @param {number} id
 * @param {{path: string, key?: string | null, all?: boolean, maxMessages?: number, heapLimit?: number}} args
 */
async function openLocal(id, { path, key = null, all = false, maxMessages = PAGE_SIZE, heapLimit = FILE_HEAP_LIMIT }) {
  const file = folderFiles.get(path);
  if (!file) throw new Error(`${path} is not a file of the open folder (open the folder again)`);
  return openFile(id, { file, key, all, maxMessages, heapLimit, local: path });
}

/**
 * Reads one side of a comparison from a local file (a file of the open folder: `local`, or `file`, the file the page
 * opened) in slices into a load of its own (compare_view.py); the chat window is left as it was. Resolves to the
 * JSON bytes of `{records, bytes, error, warning}`; the whole-history page stays in Python for compareOpen.
 * @param {{side: "a" | "b", local?: string | null, file?: (Blob & {name?: string}) | null, key?: string | null}} args
 */
async function compareLocal({ side, local = null, file = null, key = null }) {
  const blob = local ? folderFiles.get(local) : file;
  if (!blob) throw new Error(`${local || "the file"} is not open in the page any more (open it again)`);
  call("compare_file_begin", side, blob.name || local || "session", blob.size, key ?? undefined, local ?? undefined);
  for (let offset = 0; offset < blob.size;) {
    const slice = new Uint8Array(await blob.slice(offset, offset + SLICE_BYTES).arrayBuffer());
    offset += slice.length;
    if (!parsed(call("compare_file_feed", side, slice)).go) break; // its parse failed: the rest is not read
  }
  return call("compare_file_finish", side);
}

/** Files of a published site's search index being fetched, by name (each is fetched once; a name is a hash of its
 * bytes). */
/** @type {Map<string, Promise<Uint8Array>>} */
const indexFetches = new Map();
/** The filter file handed to Python (catalog.json: index.filter.file), "" before the first search. */
let openFilter = "";

/**
 * Fetches one file of the site's index; `onBytes` gets the bytes read so far as they arrive.
 * @param {string} name its path in the site (catalog.json: index.shards[].file, index.filter.file)
 * @param {(bytes: number) => void} onBytes
 */
async function fetchIndexFile(name, onBytes) {
  // Relative to this worker, which sits at the site's root: the site works under any sub-path.
  const response = await fetch(new URL(`./${name}`, import.meta.url));
  if (!response.ok || !response.body) {
    throw new Error(`the search index file ${name} could not be read (HTTP ${response.status}); the site may have `
      + "been published again since this page was loaded: reload the page");
  }
  /** @type {Uint8Array[]} */
  const parts = [];
  let read = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    read += value.length;
    onBytes(read);
  }
  const bytes = new Uint8Array(read);
  let at = 0;
  for (const part of parts) { bytes.set(part, at); at += part.length; }
  return bytes;
}

/**
 * A published site's text search (assembler/browser/sitesearch.py): fetches the catalog's filter once, asks Python
 * which shards the query needs that are not open yet (a shard that cannot hold a hit is never fetched), fetches
 * those (all at once; the page gets {type: "fetching", id, filter, files, of, total, read} as they arrive: the filter or
 * how many shards of how many, their bytes and the bytes read), opens them in Python's sqlite3, and answers
 * {status, body} as GET /api/search would.
 * @param {number} id
 * @param {{query: string, limit: number, shards: {file: string, bytes?: number}[], filter?: {file: string, bytes?: number} | null}} args
 */
async function siteSearch(id, { query, limit, shards, filter = null }) {
  const names = shards.map((shard) => String(shard.file));
  const filterName = filter && typeof filter.file === "string" ? filter.file : "";
  const sizes = new Map(shards.map((shard) => [String(shard.file), Number(shard.bytes) || 0]));
  /** @param {string[]} files @param {boolean} isFilter */
  const fetchAll = async (files, isFilter) => {
    const total = files.reduce((sum, name) => sum + (isFilter ? Number(filter?.bytes) || 0 : sizes.get(name) || 0), 0);
    /** @type {Map<string, number>} */
    const got = new Map();
    let lastPost = 0;
    const note = (/** @type {boolean} */ force) => {
      const now = performance.now();
      if (!force && now - lastPost < 100) return;
      lastPost = now;
      const read = [...got.values()].reduce((a, b) => a + b, 0);
      post({ type: "fetching", id, filter: isFilter, files: files.length, of: names.length, total, read });
    };
    note(true);
    const pending = files.map((name) => {
      let bytes = indexFetches.get(name);
      if (!bytes) {
        bytes = fetchIndexFile(name, (n) => { got.set(name, n); note(false); });
        indexFetches.set(name, bytes);
      }
      return bytes;
    });
    pending.forEach((promise) => promise.catch(() => {})); // each is awaited below, in order
    return pending;
  };
  if (filterName && filterName !== openFilter) {
    const [bytes] = await fetchAll([filterName], true);
    try {
      const opened = parsed(call("site_filter_open", filterName, await bytes));
      if (!opened.ok) throw new Error(opened.error);
      openFilter = filterName;
    } finally {
      indexFetches.delete(filterName);
    }
  }
  const wanted = parsed(call("site_index_plan", String(query), names, filterName || undefined));
  if (wanted.length) {
    const pending = await fetchAll(wanted, false);
    try {
      for (const [i, name] of wanted.entries()) {
        const opened = parsed(call("site_index_open", name, await pending[i]));
        if (!opened.ok) throw new Error(opened.error);
      }
    } finally {
      for (const name of wanted) indexFetches.delete(name);
    }
  }
  return call("site_search", String(query), Number(limit), names, filterName || undefined);
}

/** @type {Record<string, (id: number, args: any) => Promise<any>>} */
const OPS = {
  ready: async () => ({ ...timings, started }),
  loadPage: async (_id, { bytes, paged = false }) => call("load_page", bytesOf(bytes), Boolean(paged)),
  openFile: async (id, args) => openFile(id, args),
  describeFolder: async (id, args) => describeFolder(id, args),
  openLocal: async (id, args) => openLocal(id, args),
  frames: async (_id, { frames }) => call("apply_frames", frames.map((/** @type {ArrayBuffer | Uint8Array} */ f) => bytesOf(f))),
  older: async (_id, { maxMessages = PAGE_SIZE, fromSeq = null }) =>
    call("request_older", maxMessages, fromSeq ?? undefined), // undefined reaches Python as None (null: JsNull)
  answer: async (_id, { requestId, bytes }) => call("answer_page", requestId, bytesOf(bytes)),
  pageFailed: async (_id, { requestId, reason }) => call("page_failed", requestId, String(reason)),
  reset: async () => { call("reset"); return null; },
  render: async (_id, { keys }) => call("render", keys),
  renderMore: async (_id, { key, block, offset }) => call("render_more", key, block, offset),
  renderSection: async (_id, { key, block }) => call("render_section", key, block),
  findSeq: async (_id, { seq }) => call("find_seq", seq),
  rowText: async (_id, { key }) => call("row_text", key),
  // Pyodide has no public API for its heap size; wasm memory is reached through its (documented) module object.
  heapSize: async () => /** @type {any} */ (pyodide)._module.HEAP8.length,
  digest: async () => call("digest"),
  trajectory: async () => call("trajectory_view"),
  runTimeline: async () => call("run_timeline"), // a local file's whole-run overview (view_api.py)
  sessionFacts: async () => call("session_facts"),
  todos: async () => call("todo_list"),
  context: async () => call("context_view"),
  contextMessage: async (_id, { seq }) => call("context_message", seq),
  requestInspector: async (_id, { seq, step = false }) => call("request_inspector", Number(seq), Boolean(step)), // assembler/browser/inspector.py
  contextMeter: async () => call("context_meter"),
  siteSearch: async (id, args) => siteSearch(id, args),
  search: async (_id, { query, includeHidden = false }) => call("search", String(query), Boolean(includeHidden)),
  searchShown: async (_id, { query, includeHidden = false, hidden = [] }) =>
    call("search_shown", String(query), Boolean(includeHidden), hidden.map(String)), // filters.mjs
  records: async (_id, { key }) => call("records", String(key)),
  recordMembers: async (_id, { key, index }) => call("record_members", String(key), index),
  export: async (_id, { format, scope, title, bytes }) =>
    call("export", String(format), String(scope), String(title || ""), bytes ? bytesOf(bytes) : undefined), // undefined reaches Python as None (null would be JsNull)
  // Compare two runs (assembler/browser/compare_view.py): both whole-session pages in, the comparison out.
  // A side given as null was read from a local file by compareLocal.
  compareLocal: async (_id, args) => compareLocal(args),
  compareOpen: async (_id, { a, b, idA, idB }) =>
    call("compare_open", a ? bytesOf(a) : undefined, b ? bytesOf(b) : undefined, String(idA), String(idB)),
  compareTurns: async (_id, { indices }) => call("compare_turns", indices.map(Number)),
  compareSection: async (_id, { side, key, block }) => call("compare_section", String(side), String(key), Number(block)),
  compareMore: async (_id, { side, key, block, offset }) =>
    call("compare_more", String(side), String(key), Number(block), Number(offset)),
  compareExport: async (_id, { format }) => call("compare_export", String(format)),
  compareClose: async () => { call("compare_close"); return null; },
  // The replay measurement (assembler/browser/replay.py), shared by the "Replay benchmark" panel and
  // perf.bench_browser: one page folded in a scratch window; the wasm heap is read right after it.
  replayPage: async (_id, { bytes }) => replayed(call("replay_page", bytesOf(bytes))),
  replayWindow: async (_id, { mode }) => replayed(call("replay_window", String(mode))),
};

if (TEST_MODE) {
  // Test hook: runs code in this worker's Python; the last expression must be a str.
  OPS.runPython = async (_id, { code }) => {
    const result = pyodide.runPython(code);
    if (result && typeof result === "object" && typeof result.destroy === "function") {
      const text = String(result);
      result.destroy();
      return text;
    }
    return result;
  };
}

const warmUp = new IdleWarmUp(() => parsed(call("warm_up")), timings); // until a request reads or shows a session

self.onmessage = async (event) => {
  const { id, op, args } = /** @type {{id: number, op: string, args: any}} */ (event.data);
  warmUp.engage(op);
  try {
    await ready;
    const handler = OPS[op];
    if (!handler) throw new Error(`unknown op ${op}`);
    const value = await handler(id, args || {});
    const transfer = value instanceof Uint8Array ? [value.buffer] : [];
    post({ id, ok: true, value }, transfer);
  } catch (err) {
    const kind = err instanceof Refusal ? err.kind : undefined;
    post({ id, ok: false, error: String(/** @type {any} */ (err)?.message || err), kind });
  } finally {
    // A page load (or a comparison's two folds) leaves Python's cycle collector paused (Viewer.defer_gc): resume
    // it once the answer (or the error) is on its way.
    if ((op === "loadPage" || op === "answer" || op === "compareOpen") && api) setTimeout(() => call("settle"), 0);
  }
};

ready.then(
  (t) => { post({ type: "ready", timings: t }); void warmUp.run(); },
  (err) => post({ type: "failed", error: String(err?.message || err) }),
);
