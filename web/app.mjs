// The viewer page: wires the Python worker (bridge.mjs), the Chat view (transcript.mjs), the server's sessions
// and live follow (sessions.mjs), local files (files.mjs) and themes (theme.mjs). The main thread only does DOM,
// fetch/EventSource and messaging. Exposes window.transcriptViewer, the benchmark and test hook:
//   ready            Promise → boot timings, once Pyodide and the packages are loaded (rejects on failure)
//   loadPage(bytes)  bytes of a SessionPage JSON → {records, inputs, chatNodes, trajectoryNodes,
//                    ms: {decode, journal, fold, render, total}}; replaces the window and renders the first screen
//   openFile(blob, {all, maxMessages})  a local .jsonl / .jsonl.zst → the same summary, plus error and warnings
//   runPython(code)  test hook: runs code in the worker's Python, returns its str result
//   heapSize()       the worker's wasm heap in bytes; idle() resolves when no render is pending
//   digest()         after loadPage/openFile: {digest, canonicalBytes, ms} of the transcript the window shows
//   replay()         the "Replay benchmark" panel's run: the open window replayed scalar and packed (replay.mjs)
//   replayPage(bytes) one SessionPage replayed in a scratch window, stage by stage (perf.bench_browser)
import { Bridge, ownedBytes } from "./bridge.mjs";
import { initFiles } from "./files.mjs";
import { initReplay } from "./replay.mjs";
import { Follow, fetchPage, listSessions } from "./sessions.mjs";
import { initTheme, toggleTheme } from "./theme.mjs";
import { TranscriptView } from "./transcript.mjs";

const $ = (id) => document.getElementById(id);
const els = {
  status: $("boot-status"),
  bootError: $("boot-error"),
  banner: $("error-banner"),
  notice: $("notice"),
  progress: $("progress"),
  progressBar: $("progress-bar"),
  progressText: $("progress-text"),
  transcript: $("transcript"),
  older: $("load-older"),
  stats: $("stats"),
  welcome: $("welcome"),
  title: $("session-title"),
  sessions: $("sessions"),
  sessionList: $("session-list"),
  refresh: $("refresh-sessions"),
  showEvents: $("show-events"),
  live: $("live-state"),
};

const bridge = new Bridge(new URL("./worker.mjs", import.meta.url));
const view = new TranscriptView(els.transcript, bridge, { onError: (err) => showBanner(`Rendering failed: ${err.message}`) });
const state = { mode: "none", sessionId: null, follow: null, liveOpened: false, canLoadOlder: false, busy: 0 };
const viewer = { timings: {} };
window.transcriptViewer = viewer;

// --- status, progress, errors ----------------------------------------------------------------------------------

function setStatus(stage, text) {
  document.documentElement.dataset.boot = stage; // "loading" | "ready" | "error", for styling and tests
  els.status.textContent = text;
}

function showBanner(text) {
  els.banner.textContent = text;
  els.banner.hidden = !text;
}

function showNotice(text) {
  els.notice.textContent = text;
  els.notice.hidden = !text;
}

function describeError(error) {
  if (!error) return "";
  if (error.where === "file") {
    const where = error.line ? `Line ${error.line}` : "The file";
    return `${where}: ${error.message}. Everything before it is shown.`;
  }
  if (error.where === "live") return `Live stream: ${error.text || error.message}. Reconnecting…`;
  if (error.where === "older") return `Could not load older messages: ${error.text || error.message}`;
  return error.text || error.message || String(error);
}

function progressStart(text) {
  state.busy += 1;
  document.documentElement.dataset.busy = "1";
  els.progress.hidden = false;
  els.progressBar.removeAttribute("value");
  els.progressText.textContent = text;
}

function progressEnd() {
  state.busy = Math.max(0, state.busy - 1);
  if (state.busy === 0) {
    els.progress.hidden = true;
    delete document.documentElement.dataset.busy;
  }
}

let progressTicks = 0;
bridge.onBoot = (text) => setStatus("loading", text);
bridge.onProgress = (msg) => {
  progressTicks += 1;
  document.documentElement.dataset.progressTicks = String(progressTicks);
  const mb = (n) => (n / 1e6).toFixed(1);
  if (msg.phase === "read" && msg.size) {
    els.progressBar.max = msg.size;
    els.progressBar.value = msg.bytes;
    els.progressText.textContent =
      `Reading ${msg.name || "file"}: ${mb(msg.bytes)} / ${mb(msg.size)} MB, ${(msg.lines || 0).toLocaleString()} lines`;
  } else if (msg.phase === "fold") {
    els.progressBar.removeAttribute("value");
    els.progressText.textContent = "Assembling the transcript…";
  }
};

function showStats(update) {
  const s = update.stats || {};
  const shown = view.shownKeys().length;
  const more = update.hasMore ? " · older history available" : "";
  els.stats.textContent =
    `${shown.toLocaleString()} rows · ${(s.records ?? 0).toLocaleString()} records · ${(s.inputs ?? 0).toLocaleString()} inputs${more}`;
}

// --- applying updates ----------------------------------------------------------------------------------------

function applyUpdate(update, { scroll = "keep" } = {}) {
  if (!update) return;
  const wasAtEnd = view.atEnd();
  if (Array.isArray(update.nodes)) {
    view.apply(update);
    els.welcome.hidden = true;
  }
  if (update.hasMore !== undefined) {
    state.canLoadOlder = Boolean(update.canLoadOlder);
    els.older.hidden = !update.hasMore;
    els.older.disabled = !update.canLoadOlder;
    showStats(update);
  }
  if (update.error) showBanner(describeError(update.error));
  if (update.warnings?.length) showNotice(update.warnings.join("; "));
  if (update.requests?.length) void answerRequests(update.requests);
  if (scroll === "end" || (scroll === "follow" && wasAtEnd)) view.scrollToEnd();
}

// Fetches the pages the journal asked for (gap repair, older pages) and hands them back.
async function answerRequests(requests) {
  for (const request of requests) {
    if (!state.sessionId) continue;
    let update;
    try {
      const bytes = await fetchPage(state.sessionId, {
        through: request.through, before: request.before, maxMessages: request.maxMessages ?? 50,
      });
      update = await bridge.json("answer", { requestId: request.id, bytes }, [bytes.buffer]);
    } catch (err) {
      update = await bridge.json("pageFailed", { requestId: request.id, reason: err.message });
    }
    applyUpdate(update, { scroll: request.kind === "repair" ? "follow" : "keep" });
    if (update?.error?.where === "live") state.follow?.restart();
  }
}

async function renderFirstScreen() {
  view.scrollToEnd();
  await view.renderKeys(view.visibleKeys(200));
  view.scrollToEnd();
}

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

function resetView() {
  stopFollow();
  showBanner("");
  showNotice("");
  view.clear();
  els.older.hidden = true;
}

// --- the hook: pages and files ----------------------------------------------------------------------------------

async function loadPage(bytes) {
  await bridge.ready;
  resetView();
  state.mode = "page";
  els.title.textContent = "Page";
  progressStart("Loading page…");
  try {
    const data = ownedBytes(bytes);
    const t0 = performance.now();
    const update = await bridge.json("loadPage", { bytes: data }, [data.buffer]);
    const tRender = performance.now();
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

async function openFile(blob, { all = false, maxMessages = 50, name } = {}) {
  await bridge.ready;
  resetView();
  state.mode = "file";
  const fileName = name || blob.name || "session.jsonl";
  els.title.textContent = fileName;
  progressStart(`Reading ${fileName}…`);
  try {
    const t0 = performance.now();
    const update = await bridge.json("openFile", { file: blob, all, maxMessages, name: fileName });
    const tRender = performance.now();
    applyUpdate(update, { scroll: "end" });
    await renderFirstScreen();
    const ms = { ...update.ms, render: performance.now() - tRender, total: performance.now() - t0 };
    const seq = Number(hashParams().get("seq"));
    if (hashParams().has("seq") && Number.isFinite(seq)) void scrollToSeq(seq);
    return summary(update, { ms, error: update.error ?? null, warnings: update.warnings ?? [], file: update.file ?? null });
  } finally {
    progressEnd();
  }
}

async function loadOlder() {
  if (!state.canLoadOlder) return false;
  els.older.disabled = true;
  progressStart("Loading older messages…");
  try {
    const result = await bridge.json("older", { maxMessages: 50 });
    if (Array.isArray(result.nodes)) applyUpdate(result);
    else if (result.requests) await answerRequests(result.requests);
    else applyUpdate(result);
    return true;
  } catch (err) {
    showBanner(`Could not load older messages: ${err.message}`);
    return false;
  } finally {
    progressEnd();
    els.older.disabled = !state.canLoadOlder;
  }
}

// --- live sessions -----------------------------------------------------------------------------------------------

function stopFollow() {
  if (state.follow) state.follow.close();
  state.follow = null;
  state.sessionId = null;
  els.live.hidden = true;
}

async function openSession(id) {
  await bridge.ready;
  resetView();
  state.mode = "live";
  state.sessionId = id;
  state.liveOpened = false;
  els.title.textContent = id;
  for (const li of els.sessionList.querySelectorAll("button[data-id]")) {
    li.setAttribute("aria-current", li.dataset.id === id ? "true" : "false");
  }
  progressStart("Opening session…");
  await bridge.call("reset"); // forget the last file or page (its pager must not answer "Load older" here)
  let opening = true;
  const follow = new Follow(id, {
    onState: (s) => {
      els.live.hidden = false;
      els.live.textContent = s;
      els.live.dataset.state = s;
    },
    onFrames: async (frames) => {
      const update = await bridge.json("frames", { frames }, frames.map((f) => f.buffer));
      if (state.follow !== follow) return;
      const first = !state.liveOpened;
      state.liveOpened = true;
      if (!update.error && els.banner.textContent.startsWith("Live stream:")) showBanner(""); // recovered
      applyUpdate(update, { scroll: first ? "end" : "follow" });
      if (first) {
        await renderFirstScreen();
        if (opening) { opening = false; progressEnd(); }
        if (location.hash.includes("seq=")) void followHash();
      }
      if (update.error?.where === "live") follow.restart();
    },
  });
  state.follow = follow;
  setTimeout(() => { if (opening) { opening = false; progressEnd(); } }, 15000);
}

async function refreshSessions() {
  const sessions = await listSessions();
  if (!sessions) {
    els.sessions.hidden = true;
    return null;
  }
  els.sessions.hidden = false;
  const items = sessions.map((s) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.id = s.id;
    button.setAttribute("aria-current", s.id === state.sessionId ? "true" : "false");
    const title = document.createElement("span");
    title.className = "session-name";
    title.textContent = s.title || s.id;
    const meta = document.createElement("span");
    meta.className = "session-meta";
    const when = s.lastActivity ? new Date(s.lastActivity).toLocaleString() : "";
    meta.textContent = `${(s.eventCount ?? 0).toLocaleString()} events${when ? ` · ${when}` : ""}${s.error ? " · damaged" : ""}`;
    button.append(title, meta);
    button.addEventListener("click", () => { location.hash = `session=${encodeURIComponent(s.id)}`; });
    li.append(button);
    return li;
  });
  els.sessionList.replaceChildren(...items);
  if (!sessions.length) {
    const li = document.createElement("li");
    li.className = "session-meta";
    li.textContent = "No sessions in the served folder.";
    els.sessionList.append(li);
  }
  return sessions;
}

// --- deep links: #session=ID&seq=N --------------------------------------------------------------------------------

function hashParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

async function scrollToSeq(seq) {
  for (let i = 0; i < 50; i++) {
    const found = await bridge.json("findSeq", { seq });
    if (found.inWindow || !state.canLoadOlder) {
      if (!found.key) return false;
      const key = found.key;
      await view.renderKeys([key]);
      view.focusKey(key, { block: "center" });
      for (const el of els.transcript.querySelectorAll(".is-target")) el.classList.remove("is-target");
      view.element(key)?.classList.add("is-target");
      await view.renderKeys(view.visibleKeys(200));
      view.focusKey(key, { block: "center" });
      return true;
    }
    if (!(await loadOlder())) return false;
  }
  return false;
}

async function followHash() {
  const params = hashParams();
  const session = params.get("session");
  if (session && session !== state.sessionId) {
    await openSession(session);
    return; // the seq (if any) is applied once the snapshot arrives
  }
  const seq = Number(params.get("seq"));
  if (params.has("seq") && Number.isFinite(seq) && view.order.length) await scrollToSeq(seq);
}

// --- keyboard ----------------------------------------------------------------------------------------------------

function onKey(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target?.isContentEditable) return;
  const focused = document.activeElement?.closest?.("article[data-key]");
  switch (event.key) {
    case "j": view.focusBy(1); break;
    case "k": view.focusBy(-1); break;
    case "g": case "Home": { const k = view.shownKeys(); if (k.length) view.focusKey(k[0], { block: "start" }); break; }
    case "G": case "End": { const k = view.shownKeys(); if (k.length) view.focusKey(k[k.length - 1], { block: "end" }); break; }
    case "o": case "Enter": {
      if (!focused || target !== focused) return;
      const details = focused.querySelector("details");
      if (details) details.open = !details.open;
      break;
    }
    case "t": toggleTheme(); break;
    case "[": void loadOlder(); break;
    case "e": els.showEvents.checked = !els.showEvents.checked; view.setShowEvents(els.showEvents.checked); break;
    default: return;
  }
  event.preventDefault();
}

// --- start ---------------------------------------------------------------------------------------------------------

async function runPython(code) {
  await bridge.ready;
  return bridge.call("runPython", { code });
}

// The transcript digest of what the window shows (computed on request, off loadPage's timed path).
async function digest() {
  await bridge.ready;
  return bridge.json("digest");
}

async function heapSize() {
  await bridge.ready;
  return bridge.call("heapSize");
}

Object.assign(viewer, {
  ready: bridge.ready,
  loadPage,
  openFile,
  openSession,
  loadOlder,
  scrollToSeq,
  runPython,
  heapSize,
  digest,
  idle: () => view.idle(),
  state,
  view,
});

const replay = initReplay({ bridge, toolbar: document.querySelector(".toolbar"), before: els.transcript,
  title: () => els.title.textContent, onError: showBanner });
viewer.replay = replay.run;
viewer.replayPage = replay.replayPage;

initTheme($("theme-toggle"));
initFiles({
  button: $("open-file"),
  input: $("file-input"),
  overlay: $("drop-overlay"),
  onFile: (file) => openFile(file).catch((err) => showBanner(`Could not open ${file.name}: ${err.message}`)),
});
els.older.addEventListener("click", () => void loadOlder());
els.showEvents.addEventListener("change", () => view.setShowEvents(els.showEvents.checked));
els.refresh.addEventListener("click", () => void refreshSessions());
document.addEventListener("keydown", onKey);
window.addEventListener("hashchange", () => void followHash());

setStatus("loading", "Loading the Python runtime…");
bridge.ready.then(
  (timings) => {
    viewer.timings = timings;
    setStatus("ready", `Ready (Python started in ${(timings.bootMs / 1000).toFixed(1)} s).`);
    void refreshSessions().then(() => followHash());
  },
  (err) => {
    setStatus("error", "Failed to start Python.");
    els.bootError.textContent = `The viewer could not start: ${err.message}`;
    els.bootError.hidden = false;
    console.error("transcriptViewer boot failed:", err);
  },
);
