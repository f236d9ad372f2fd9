// @ts-check
// Loading flows: a page (loadPage), a local file (openFile) or folder (describeFolder), "Load older" (which keeps the reader's place) and the
// page requests the journal asks for. Every update from the worker goes through applyUpdate.
import { ownedBytes } from "./bridge.mjs";
import { FIRST_SCREEN_MARGIN_PX, PAGE_SIZE, SEQ_SEARCH_PAGES } from "./config.mjs";
import { els } from "./dom.mjs";
import { fetchPage } from "./sessions.mjs";
import { isPublished } from "./site.mjs";
import { formatCount } from "./summary.mjs";
import { hideLatest, rowsArrivedBelow } from "./latest.mjs";
import { clearAlert, clearAlerts, progressEnd, progressNote, progressStart, setAlert } from "./status.mjs";
import { bridge, hooks, state, view } from "./runtime.mjs";

/**
 * An error from the worker: where it happened and what still shows.
 * @typedef {{where: string, message: string, line: number | null, seq: number | null, text?: string, type?: string,
 *   nothingRead?: boolean}} UpdateError
 */

/**
 * The alert text for an update's error, naming the file (or session), the line and the seq when known.
 * @param {UpdateError} error
 * @returns {string}
 */
export function describeError(error) {
  const name = state.mode === "live" ? `Session ${state.sessionId}` : state.fileName || "The file";
  const at = [error.line ? `line ${error.line}` : "", error.seq !== null && error.seq !== undefined ? `seq ${error.seq}` : ""]
    .filter(Boolean).join(", ");
  const where = at ? `${name}, ${at}` : name;
  // The message alone when the line and seq are named already (``text`` repeats them: "line 37: ...").
  const detail = at ? error.message || error.text : error.text || error.message;
  switch (error.where) {
    case "file": return error.nothingRead ? `${where}: ${error.message}. Nothing was read.`
      : `${where}: ${error.message}. Everything before it is shown.`;
    case "page": return `${where}: ${error.message}. The page could not be shown.`;
    case "live": return `${where}: ${detail}. Reconnecting; the rows shown so far stay.`;
    case "older": return `${where}: could not load older messages: ${detail}. The rows shown stay.`;
    default: return `${where}: ${detail}`;
  }
}

/** @param {UpdateError} error */
function alertSource(error) {
  return /** @type {import("./status.mjs").AlertSource} */ (
    ["file", "page", "live", "older"].includes(error.where) ? error.where : "worker");
}

/**
 * Applies one update from the worker: its nodes, its paging state, its error and warnings, its page requests.
 * @param {any} update
 * @param {{scroll?: "keep" | "end" | "follow"}} [options]
 */
export function applyUpdate(update, { scroll = "keep" } = {}) {
  if (!update) return;
  const wasAtEnd = view.atEnd();
  if (Array.isArray(update.nodes)) {
    view.apply(update);
    hooks.changed(update);
    els.welcome.hidden = true;
    // A session with nothing to show (a header and no events yet) says so instead of leaving a blank page.
    const empty = view.order.length === 0 && !update.error;
    els.emptySession.hidden = !empty;
    if (empty) {
      els.emptySession.textContent = state.mode === "live"
        ? "This session has no events yet: they appear here as they are written."
        : "This session has no events (only its header).";
    }
  }
  if (update.hasMore !== undefined) {
    state.canLoadOlder = Boolean(update.canLoadOlder);
    state.hasMore = Boolean(update.hasMore);
    els.older.hidden = !update.hasMore;
    els.older.disabled = !update.canLoadOlder;
    showStats(update);
  }
  if (update.error) {
    const also = update.warnings?.length ? ` Also: ${update.warnings.join("; ")}` : "";
    setAlert(alertSource(update.error), describeError(update.error) + also);
  } else if (update.warnings?.length) {
    const name = state.fileName || state.sessionId || "The file";
    setAlert("file", `${name}: ${update.warnings.join("; ")}. The rest is shown.`, "warning");
  }
  if (update.requests?.length) void answerRequests(update.requests);
  if (scroll === "end" || (scroll === "follow" && wasAtEnd)) view.scrollToEnd();
  else if (scroll === "follow" && Array.isArray(update.nodes) && update.nodes.length) rowsArrivedBelow();
}

/** @param {any} update */
function showStats(update) {
  const s = update.stats || {};
  const shown = view.shownKeys().length;
  if (!shown && update.error) { // a failed open with nothing read: no counts of nothing
    els.stats.textContent = "";
    return;
  }
  const more = update.hasMore ? " · older history available" : "";
  els.stats.textContent =
    `${formatCount(shown)} rows · ${formatCount(s.records ?? 0)} records · ${formatCount(s.inputs ?? 0)} inputs${more}`;
}

/**
 * Fetches the pages the journal asked for (gap repair, older pages) and hands them back; resolves to false when an
 * answer was an error (said in the alert).
 * @param {{id: number, kind: string, through: number, before: number | null, maxMessages?: number,
 *   fromSeq?: number | null}[]} requests
 */
export async function answerRequests(requests) {
  let ok = true;
  for (const request of requests) {
    if (!state.sessionId) continue;
    let update;
    try {
      const bytes = await fetchPage(state.sessionId, {
        through: request.through, before: request.before, maxMessages: request.maxMessages ?? PAGE_SIZE,
        fromSeq: request.fromSeq ?? null,
      });
      update = await bridge.json("answer", { requestId: request.id, bytes }, [bytes.buffer]);
    } catch (err) {
      update = await bridge.json("pageFailed", { requestId: request.id, reason: /** @type {Error} */ (err).message });
    }
    const apply = () => applyUpdate(update, { scroll: request.kind === "repair" ? "follow" : "keep" });
    if (request.kind === "prepend") keepPlace(apply);
    else apply();
    if (update?.error?.where === "live") state.follow?.restart();
    if (update?.error) ok = false;
  }
  return ok;
}

export async function renderFirstScreen() {
  view.scrollToEnd();
  await view.renderKeys(view.visibleKeys(FIRST_SCREEN_MARGIN_PX));
  view.scrollToEnd();
}

/**
 * @param {any} update
 * @param {Record<string, unknown>} [extra]
 */
function summary(update, extra = {}) {
  const s = update.stats || {};
  return {
    records: s.records ?? 0,
    inputs: s.inputs ?? 0,
    chatNodes: s.chatNodes ?? 0,
    trajectoryNodes: s.trajectoryNodes ?? 0,
    digest: update.digest ?? null,
    ...extra,
  };
}

/** Forgets what was shown: the rows, the alerts of the last load, the follow stream. */
export function resetView() {
  els.stats.textContent = ""; // the last session's counts never stay over the next one (or its failure)
  els.emptySession.hidden = true;
  els.publishedNote.hidden = true;
  state.follow?.close();
  state.follow = null;
  state.sessionId = null;
  state.fileName = null;
  clearAlerts();
  view.clear();
  hooks.reset();
  hideLatest();
  els.older.hidden = true;
}

/**
 * Replaces the window with a SessionPage (its JSON bytes) and renders the first screen.
 * @param {ArrayBuffer | ArrayBufferView | string} bytes
 */
export async function loadPage(bytes) {
  resetView();
  state.mode = "page";
  state.fileName = "Page";
  els.title.textContent = "Page";
  els.title.title = "";
  progressStart("Loading page…");
  try {
    const data = ownedBytes(bytes);
    const t0 = performance.now();
    const update = await bridge.json("loadPage", { bytes: data }, [data.buffer]);
    const tRender = performance.now();
    if (update.html) view.prime(update.html); // the first screen's rows, rendered with the page: no second trip
    applyUpdate(update, { scroll: "end" });
    if (update.error) throw new Error(describeError(update.error));
    await renderFirstScreen();
    const render = performance.now() - tRender;
    const ms = { ...update.ms, render: Math.round(render * 1000) / 1000, total: Math.round((performance.now() - t0) * 1000) / 1000 };
    return summary(update, { ms, digestMs: update.msDigest ?? null });
  } finally {
    progressEnd();
  }
}

let opens = 0; // local-file opens so far (the last one is the current one)

/**
 * Opens a local file: any format of the table (assembler/formats.py); the worker's loader decides from the content
 * and a file of no known format is the one alert naming the formats tried. `key` picks one session of a file
 * holding several (an Inspect log; the first by default); `local` is the file's path in the open folder (the worker
 * reads its own copy of the File, with the folder's context), and then `blob` may be null. A newer call cancels
 * this one (it resolves with `cancelled: true` and shows nothing); a file whose parse passes Python's memory limit
 * (`heapLimit`, default config.FILE_HEAP_LIMIT) is an alert saying it is too big for the page.
 * @param {(Blob & {name?: string}) | null} blob
 * @param {{all?: boolean, maxMessages?: number, name?: string, key?: string | null, local?: string | null,
 *   heapLimit?: number}} [options]
 */
export async function openFile(blob, { all = false, maxMessages = PAGE_SIZE, name, key = null, local = null,
  heapLimit } = {}) {
  const mine = ++opens; // a newer open supersedes this one: its answer (if any) is dropped
  resetView();
  state.mode = "file";
  const fileName = name || blob?.name || local?.split("/").pop() || "session";
  state.fileName = fileName;
  els.title.textContent = key ? `${fileName} · ${key}` : fileName;
  els.title.title = local || fileName;
  progressStart(`Reading ${fileName}…`);
  try {
    const t0 = performance.now();
    /** @type {number | null} */
    let firstRowsMs = null; // when the first rows showed: the preview's, or the whole file's
    /** @type {Promise<void>} */
    let previewShown = Promise.resolve();
    /** A big file's first part, shown while the rest is read (worker.mjs: PREVIEW_FILE_BYTES). */
    const onPreview = (/** @type {any} */ preview) => {
      if (mine !== opens || !preview) return;
      if (preview.html) view.prime(preview.html);
      applyUpdate(preview, { scroll: "end" });
      progressNote("showing the part read so far");
      previewShown = renderFirstScreen().then(() => { firstRowsMs ??= performance.now() - t0; });
    };
    /** @type {any} */
    let update;
    try {
      update = local
        ? await bridge.json("openLocal", { path: local, key, all, maxMessages, heapLimit }, [], onPreview)
        : await bridge.json("openFile", { file: blob, all, maxMessages, name: fileName, key, heapLimit }, [], onPreview);
      await previewShown;
    } catch (err) {
      const kind = /** @type {any} */ (err).kind;
      if (kind === "cancelled" || mine !== opens) return summary({}, { cancelled: true, error: null, warnings: [], file: null });
      if (kind !== "too-big") throw err;
      const text = /** @type {Error} */ (err).message;
      setAlert("file", text);
      return summary({}, { error: { where: "file", message: text, line: null, seq: null }, warnings: [], file: null });
    }
    if (mine !== opens) return summary({}, { cancelled: true, error: null, warnings: [], file: null });
    const tRender = performance.now();
    applyUpdate(update, { scroll: "end" });
    await renderFirstScreen();
    if (update.hasMore) { // the header counts the whole file, not only its newest page (after the first screen)
      void bridge.json("sessionFacts").then((facts) => { if (mine === opens) view.setWhole(facts); }, () => {});
    }
    const ms = { ...update.ms, render: performance.now() - tRender, total: performance.now() - t0,
      firstRows: firstRowsMs ?? performance.now() - t0 };
    return summary(update, { ms, error: update.error ?? null, warnings: update.warnings ?? [], file: update.file ?? null,
      sessions: update.sessions ?? null, session: update.session ?? null, previewed: firstRowsMs !== null });
  } finally {
    progressEnd();
  }
}

/**
 * Describes a folder's session files in the worker (nothing uploaded): resolves to list entries of the server's
 * shape (assembler/browser/folder.py), each with `local: {path, key}`.
 * @param {{file: File, path: string}[]} files
 */
export async function describeFolder(files) {
  progressStart(`Reading ${files.length} files…`);
  try {
    return await bridge.json("describeFolder", { files: files.map((f) => f.file), paths: files.map((f) => f.path) });
  } finally {
    progressEnd();
  }
}

/**
 * Runs `change` (which adds rows above) and scrolls so that the first row in view stays where it was.
 * @param {() => void} change
 */
export function keepPlace(change) {
  const anchor = view.firstInView();
  const top = anchor ? anchor.getBoundingClientRect().top : 0;
  change();
  if (anchor?.isConnected) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
}

/** @type {Promise<boolean> | null} the load of older rows under way */
let loadingOlder = null;

/** "Load older": prepends the previous page; the first row in view stays in place. `toSeq` (a deep link's row):
 * one page reaches back to that seq, up to SEQ_SEARCH_PAGES pages' worth of messages (the server's `fromSeq`; a
 * published site has fixed page files, so there it is one page at a time). Resolves to false when nothing older
 * could be loaded (none left, or the load failed: the alert says why); a call while a load is under way resolves
 * with that load.
 * @param {{toSeq?: number}} [options] @returns {Promise<boolean>} */
export function loadOlder({ toSeq } = {}) {
  if (loadingOlder) return loadingOlder;
  if (!state.canLoadOlder) return Promise.resolve(false);
  loadingOlder = prependOlder(toSeq);
  return loadingOlder;
}

/** @param {number | undefined} toSeq */
async function prependOlder(toSeq) {
  document.documentElement.dataset.loadingOlder = "1"; // until the older rows are in
  els.older.disabled = true;
  progressStart("Loading older messages…");
  try {
    const reach = toSeq !== undefined && !isPublished();
    const result = await bridge.json("older", reach
      // a seq the URL names may lie between two rows (35.5): the message at or before it is at or before 35
      ? { maxMessages: PAGE_SIZE * SEQ_SEARCH_PAGES, fromSeq: Math.floor(toSeq) } : { maxMessages: PAGE_SIZE });
    clearAlert("older");
    let ok = !result.error;
    if (Array.isArray(result.nodes)) keepPlace(() => applyUpdate(result));
    else if (result.requests) ok = (await answerRequests(result.requests)) && ok;
    else applyUpdate(result);
    await view.renderKeys(view.visibleKeys(FIRST_SCREEN_MARGIN_PX));
    return ok;
  } catch (err) {
    setAlert("older", `Could not load older messages: ${/** @type {Error} */ (err).message}. The rows shown stay.`);
    return false;
  } finally {
    loadingOlder = null;
    delete document.documentElement.dataset.loadingOlder;
    progressEnd();
    els.older.disabled = !state.canLoadOlder;
  }
}
