// @ts-check
// The viewer page. The shell and the session list come up from plain JavaScript at once; Python boots in the
// worker meanwhile (status.mjs shows its stages). Modules: config (constants), dom (elements), status (status
// line, the one alert, the live badge, progress), runtime (worker bridge, Chat view, state), flows (pages, files,
// "Load older"), live (served sessions), sessionlist, navigation (deep links, URL follows the row in view), keys,
// rowtools (copy buttons), files (picker, drag and drop), theme.
//
// window.transcriptViewer, the documented surface (benchmarks and users rely on it):
//   ready            Promise → boot timings ({runtimeMs, packagesMs, importMs, bootMs, startedAt, stages}), once
//                    Python is ready (rejects on failure)
//   loadPage(bytes)  bytes of a SessionPage JSON → {records, inputs, chatNodes, trajectoryNodes,
//                    ms: {decode, journal, fold, html, render, total}}; replaces the window and renders the first
//                    screen (its rows' HTML comes with the page: html is the worker's share, render the page's)
//   openFile(blob, {all, maxMessages, key})  a local file of any format of the table (assembler/formats.py) → the
//                    same summary, plus error, warnings and (a file holding several) sessions; key picks one
//   openFolder(name, [{file, path}])  a folder read in the worker → its list entries (also shown in the sidebar)
//   openSession(id)  follows a served session
//   search(text)     searches the whole transcript (case-insensitive) → {matches}, moves to the first (search.mjs)
//   showView(name)   chat | trajectory | context; exportFile({format, scope}) (features.mjs)
//   digest()         after loadPage/openFile: {digest, canonicalBytes, ms} of the transcript the window shows
//                    (computed on request, off loadPage's timed path)
//   heapSize()       the worker's wasm heap in bytes
//   warmUp()         the worker's idle warm-up so far (warmup.mjs): {steps, ms, done}; steps 0 when a request that
//                    reads or shows a session came before Python was ready
//   idle()           resolves when no render is pending
//   replay()         the "Replay benchmark" panel's run: the open window replayed scalar and packed (replay.mjs)
//   replayPage(bytes) one SessionPage replayed in a scratch window, stage by stage (perf.bench_browser)
// With ?test=1 only: runPython(code), state, view, timeline (page-side boot marks).
import { initCompare } from "./compare.mjs";
import { TEST_MODE } from "./config.mjs";
import { els } from "./dom.mjs";
import { initFeatures } from "./features.mjs";
import { initFiles } from "./files.mjs";
import { initDateFilter } from "./filters.mjs";
import { describeFolder, loadOlder, loadPage, openFile } from "./flows.mjs";
import { formatTable, harnessNames, scanned } from "./formats.mjs";
import { initKeys } from "./keys.mjs";
import { initLatest } from "./latest.mjs";
import { openSession } from "./live.mjs";
import { afterFileOpened, beforeFileOpens, followHash, initNavigation, openAt, scrollToSeq } from "./navigation.mjs";
import { initReplay } from "./replay.mjs";
import { initRowTools, rowTools } from "./rowtools.mjs";
import { bridge, hooks, state, view } from "./runtime.mjs";
import { fetchPage, fetchTimeline } from "./sessions.mjs";
import { currentFolderEntry, folderEntries, initSessionList, localEntry, localUid, markCurrent, redrawList,
  refreshSessions, servedEntry, setLocal, setSince } from "./sessionlist.mjs";
import { bootFailed, bootReady, fileProgress, setAlert, setBootStage } from "./status.mjs";
import { initTheme } from "./theme.mjs";
import { initTextSearch } from "./textsearch.mjs";

/** Page-side marks (ms since navigation start): when the list showed, when Python was ready, stage arrivals. */
const timeline = /** @type {Record<string, number>} */ ({});
/** @param {string} name */
const mark = (name) => {
  if (name in timeline) return;
  timeline[name] = Math.round(performance.now());
  performance.mark(`viewer:${name}`); // read by perf/bench_boot.py (User Timing, no test hook needed)
};

/** @type {{stage: string, ms: number, text: string}[]} */
const stages = [];
bridge.onStage = (stage) => {
  stages.push({ stage: stage.stage, ms: stage.ms, text: stage.text });
  mark(`stage:${stage.stage}`);
  setBootStage(stage.stage, stage.text);
};
bridge.onProgress = fileProgress;
view.decorate = rowTools;
view.localLinks = {
  current: () => (state.mode === "file" ? currentFolderEntry() : null),
  entries: folderEntries,
  open: (/** @type {any} */ entry) => void guarded(`Opening ${entry.file}`,
    () => openFileAndSeek(null, { local: entry.local?.path, key: entry.local?.key ?? null })),
};

/**
 * Runs a user action that talks to Python; a Python error becomes an alert and the page stays usable.
 * @template T
 * @param {string} what
 * @param {() => Promise<T>} action
 * @returns {Promise<T | undefined>}
 */
async function guarded(what, action) {
  try {
    return await action();
  } catch (err) {
    setAlert("worker", `${what} failed in Python: ${/** @type {Error} */ (err).message}. The page stays usable; the rows shown stay.`);
    return undefined;
  }
}

/** The local file opened last with the picker or by a drop (its other sessions re-open it with their key). */
/** @type {(Blob & {name?: string}) | null} */
let localFile = null;

/**
 * The list entries of a local file's sessions (an Inspect log's samples), from its load's outcome.
 * @param {any} result @param {string} name
 * @returns {import("./sessions.mjs").SessionEntry[]}
 */
function fileSessions(result, name) {
  return result.sessions.map((/** @type {any} */ s) => ({
    id: s.key, title: s.label || s.key, file: name, path: name, lastActivity: null, lastActivitySource: "events",
    eventCount: s.events, turnCount: /** @type {any} */ (undefined), model: null,
    status: s.error ? "damaged" : "ended", error: s.error, bytes: result.file?.bytes ?? 0,
    harness: result.file?.harness ?? undefined, local: { key: s.key },
  }));
}

/**
 * Opens a local file (or a file of the open folder: `local`). A file holding several sessions lists them in the
 * sidebar; picking one re-opens the file with its key.
 * @param {(Blob & {name?: string}) | null} blob
 * @param {{all?: boolean, maxMessages?: number, name?: string, key?: string | null, local?: string | null}} [options]
 */
async function openFileAndSeek(blob, options = {}) {
  beforeFileOpens();
  compare.follow(); // a comparison shown gives way to the file opened (beforeFileOpens dropped its #compare)
  const again = blob !== null && blob === localFile && Boolean(options.key); // another session of the same file
  if (blob !== null && !options.local) localFile = blob;
  // A folder's file is marked before it loads: its rows link its parent and children within the folder.
  if (options.local) {
    markCurrent(localUid("folder", { id: options.key ? `${options.local}/${options.key}` : options.local }));
  }
  const result = /** @type {any} */ (await openFile(blob, options));
  afterFileOpened();
  if (!options.local && Array.isArray(result.sessions) && result.sessions.length > 1) {
    const name = options.name || blob?.name || "file";
    if (!again) setLocal("file", { name, entries: fileSessions(result, name) });
    markCurrent(localUid("file", { id: result.session }));
  } else if (!options.local && !again) setLocal("file", null);
  return result;
}

/**
 * Describes a folder in the worker and lists its sessions (grouped by project, subagents under their parent).
 * @param {string} name @param {{file: File, path: string}[]} files
 */
async function openFolder(name, files) {
  const table = await formatTable();
  const candidates = files.filter((f) => scanned(f.path, table));
  const entries = await describeFolder(candidates);
  setLocal("folder", { name, entries });
  return entries;
}

/** @type {Record<string, unknown>} */
const viewer = {
  ready: bridge.ready.then((timings) => ({ ...timings, stages })),
  loadPage,
  openFile: openFileAndSeek,
  openFolder,
  openSession: (/** @type {string} */ id) => openSession(id),
  loadOlder,
  scrollToSeq,
  digest: async () => { await bridge.ready; return bridge.json("digest"); },
  heapSize: () => bridge.call("heapSize"),
  warmUp: async () => {
    const t = await bridge.call("ready");
    return { steps: t.warmSteps ?? 0, ms: t.warmMs ?? 0, done: Boolean(t.warmDone) };
  },
  idle: () => view.idle(),
  timings: {},
};
if (TEST_MODE) {
  Object.assign(viewer, {
    runPython: (/** @type {string} */ code) => bridge.call("runPython", { code }),
    state,
    view,
    timeline,
  });
}
// The replay benchmark is a developer's tool: it lives in the "More tools" menu, not in the main toolbar.
const replay = initReplay({ bridge, toolbar: /** @type {HTMLElement} */ (document.getElementById("more-items")),
  before: els.transcript, title: () => els.title.textContent || "",
  onError: (/** @type {string} */ text) => setAlert("replay", text) });
viewer.replay = replay.run;
viewer.replayPage = replay.replayPage;
// Views, search, raw records and the Export menu (features.mjs) add search(), showView(), views, exportFile().
const features = initFeatures({
  bridge, view, viewer,
  showEvents: () => els.showEvents.checked,
  // A served session's title (its list entry's); else the worker titles the export from the records, as the CLI
  // does (a local file's header shows its name, a session with no title its id path).
  title: () => (state.mode === "live" && state.sessionId ? servedEntry(state.sessionId)?.title || "" : ""),
  session: () => (state.mode === "live" ? state.sessionId : null),
  fetchPage,
  // The whole session's timeline (timeline.mjs): the server's or the published site's file, a local file's pager.
  fetchRun: async () => {
    if (state.mode === "live" && state.sessionId) return fetchTimeline(state.sessionId);
    if (state.mode === "file") return bridge.json("runTimeline");
    return null;
  },
  scrollToSeq,
  older: { exists: () => state.hasMore, canLoad: () => state.canLoadOlder, load: () => loadOlder() },
  onError: (text) => setAlert("view", text),
});
Object.assign(hooks, {
  changed: features.changed,
  reset: features.reset,
  followHash: features.followHash,
  eventsToggled: () => { features.search.refresh(); features.filters.changed(); },
  markQuery: features.markQuery,
});
Object.assign(window, { transcriptViewer: viewer });

initTheme(els.themeToggle);
// The sidebar sits below the sticky header, whose height changes as it wraps (a long title, a narrow window).
const header = document.querySelector(".app-header");
if (header instanceof HTMLElement) {
  new ResizeObserver(() => document.documentElement.style.setProperty("--header-height", `${header.offsetHeight}px`))
    .observe(header);
}
initFiles({
  button: els.openFile,
  input: els.fileInput,
  overlay: els.dropOverlay,
  folderButton: els.openFolder,
  folderInput: els.folderInput,
  onFile: (file) => void guarded(`Opening ${file.name}`, () => openFileAndSeek(file)),
  onFolder: (name, files) => void guarded(`Reading the folder ${name}`, () => openFolder(name, files)),
});
// Compare two runs (compare.mjs): a row's Compare button, then another row; or #compare=ID_A,ID_B.
// A local row (a file of the open folder, a session of the local file) is read in the worker, by its path or blob.
const compare = initCompare({ bridge, changed: redrawList, title: (id) => {
  const local = localEntry(id)?.entry;
  if (local) return `“${local.title || local.file}” (${local.file})`;
  const title = servedEntry(id)?.title;
  return title && title !== id ? `“${title}” (${id})` : id;
}, local: (id) => {
  const found = localEntry(id);
  if (!found) return null;
  const key = found.entry.local?.key ?? null;
  return found.kind === "folder" ? { local: found.entry.local?.path ?? null, key } : { file: localFile, key };
} });
initSessionList({
  onPick: (id) => { location.hash = `session=${encodeURIComponent(id)}`; },
  onCompare: (id, button) => compare.choose(id, button),
  comparing: () => compare.picking(),
  onPickLocal: (entry, kind) => void guarded(`Opening ${entry.file}`, () => (kind === "folder"
    ? openFileAndSeek(null, { local: entry.local?.path, key: entry.local?.key ?? null })
    : openFileAndSeek(localFile, { key: entry.local?.key ?? null }))),
});
// The list's filter box also searches the served sessions' text (textsearch.mjs); a hit opens its row, marked.
initTextSearch({ open: (hit, text) => openAt(hit.session, hit.seq, text) });
initDateFilter(els.sessionFilter, setSince); // the list's date filter, above its filter box (filters.mjs)
// The formats the viewer reads, named from the build's table (formats.json), never from a list of our own.
void formatTable().then((table) => {
  const names = harnessNames(table);
  if (!names.length) return;
  els.openFile.title = `Open a session log (${names.join(", ")}), or drop it on the page; it is read here, nothing is uploaded`;
  const line = document.getElementById("welcome-formats");
  if (line) line.textContent = `Reads: ${table.formats.map((f) => f.label).join("; ")}.`;
});
initNavigation();
initKeys();
initLatest();
initRowTools(els.transcript);
els.older.addEventListener("click", () => void loadOlder());
els.showEvents.addEventListener("change", () => { view.setShowEvents(els.showEvents.checked); hooks.eventsToggled(); });
// The ⋯ menu's stand-ins for the toolbar controls a narrow screen hides: each clicks the control it names.
for (const item of document.querySelectorAll("#more-items [data-proxy]")) {
  const target = document.getElementById(/** @type {HTMLElement} */ (item).dataset.proxy || "");
  item.addEventListener("click", () => {
    target?.click();
    item.closest("details")?.removeAttribute("open");
  });
}
const eventsItem = document.querySelector('#more-items [data-proxy="show-events"]');
els.showEvents.addEventListener("change", () => eventsItem?.setAttribute("aria-pressed", String(els.showEvents.checked)));

// The shell first: the list and a #session=ID link open now, while Python boots in the background.
setBootStage("runtime", "loading the Python runtime");
void refreshSessions().then(() => mark("listShown"));
void followHash();
bridge.ready.then(
  (timings) => {
    mark("ready");
    viewer.timings = timings;
    bootReady();
  },
  (err) => {
    bootFailed(err.message);
    console.error("transcriptViewer boot failed:", err);
  },
);
