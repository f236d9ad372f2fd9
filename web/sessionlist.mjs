// @ts-check
// The session list, drawn by plain JavaScript before Python is ready. Its entries come from the server
// (GET /api/sessions), from a folder opened in the page (described in the worker: assembler/browser/folder.py) and
// from a local file holding several sessions (an Inspect log: its samples); all have the server's entry shape.
// Entries are grouped (sessiongroups.mjs) by project (the entry's cwd, else the folder holding the file: a Claude Code project folder's
// encoded name is not reversible, the recorded cwd is); a child session (its parentSession names another entry's
// sessionId) is listed under its parent, indented and collapsible, never as a row of its own; warm-up sessions
// hide behind a toggle. Each entry says its title, then harness, model, recency, turns and usage in one line, then
// its file and status. Sorted by last activity (a toggle: groups by their newest entry), filtered by title, file,
// id or project (a parent stays to show a matching child), reached with one Tab stop: arrow keys, Home and End move
// within the list (a roving tabindex), ArrowRight / ArrowLeft open and close a parent's children. The sidebar
// collapses. Every row has a Compare button (`c` on the focused row), which compare.mjs handles. Over 400 lines:
// one concept, the list's rows and their keyboard, drawn in one place (grouping lives in sessiongroups.mjs).
import { els } from "./dom.mjs";
import { listSessions } from "./sessions.mjs";
import { describeTime, factsLine, grouped, localUid, usageTitle } from "./sessiongroups.mjs";
import { formatCount } from "./summary.mjs";
import { clearAlert, setAlert } from "./status.mjs";

export { localUid };

/** @typedef {import("./sessions.mjs").SessionEntry} SessionEntry */
/** @typedef {import("./sessiongroups.mjs").SortOrder} SortOrder */
/** @typedef {import("./sessiongroups.mjs").ListSource} ListSource */
/** @typedef {import("./sessiongroups.mjs").Row} Row */

/** @type {{sessions: SessionEntry[] | null, folder: ListSource | null, file: ListSource | null, sort: SortOrder,
 *          filter: string, current: string | null, warmups: boolean, pending: number, expanded: Set<string>,
 *          onPick: (id: string) => void, onPickLocal: (entry: SessionEntry, source: "folder" | "file") => void,
 *          onCompare: (id: string, button: boolean) => void, comparing: () => string | null,
 *          loaded: boolean, byUid: Map<string, {entry: SessionEntry, source: ListSource}>,
 *          since: number | null, sinceLabel: string}} */
const list = {
  sessions: null, folder: null, file: null, sort: "newest", filter: "", current: null, warmups: false, pending: 0,
  expanded: new Set(), onPick: () => {}, onPickLocal: () => {}, onCompare: () => {}, comparing: () => null,
  loaded: false, byUid: new Map(), since: null, sinceLabel: "",
};

/** The date filter (filters.mjs): entries last active at or after `since` (null: any date).
 * @param {number | null} since @param {string} label */
export function setSince(since, label) {
  list.since = since;
  list.sinceLabel = label;
  redrawList();
}

/** @type {Record<SortOrder, {label: string, next: SortOrder}>} */
const SORTS = {
  newest: { label: "Newest first", next: "oldest" },
  oldest: { label: "Oldest first", next: "name" },
  name: { label: "By name", next: "newest" },
};

/** @param {string} tag @param {string} cls @param {string} text */
function el(tag, cls, text = "") {
  const node = document.createElement(tag);
  node.className = cls;
  node.textContent = text;
  return node;
}

/**
 * What each entry's file is called in the list: its name, or, where several entries share one (every harness
 * fixture is a `session.jsonl`), as many of the folders above it as tell them apart ("hook-cc-stop/session.jsonl").
 * @param {SessionEntry[]} entries
 * @returns {Map<SessionEntry, string>}
 */
export function fileLabels(entries) {
  const parts = new Map(entries.map((s) => [s, String(s.path || s.file || "").split("/").filter(Boolean)]));
  const labels = new Map(entries.map((s) => [s, s.file]));
  for (let depth = 2; depth <= 4; depth++) {
    /** @type {Map<string, number>} */
    const counts = new Map();
    for (const label of labels.values()) counts.set(label, (counts.get(label) || 0) + 1);
    const clashing = entries.filter((s) => (counts.get(/** @type {string} */ (labels.get(s))) || 0) > 1);
    if (!clashing.length) break;
    for (const s of clashing) {
      const p = /** @type {string[]} */ (parts.get(s));
      if (p.length >= depth) labels.set(s, p.slice(-depth).join("/"));
    }
  }
  return labels;
}

/** @type {Map<SessionEntry, string>} the file labels of the list drawn last (``fileLabels``) */
let labels = new Map();

/** @param {Row} row @param {number} depth */
function entryItem(row, depth) {
  const s = row.entry;
  const fileLabel = labels.get(s) ?? s.file;
  const li = el("li", depth ? "session-entry session-child" : "session-entry");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "session-button";
  button.dataset.id = row.uid;
  button.tabIndex = -1;
  button.setAttribute("aria-current", row.uid === list.current ? "true" : "false");
  const name = (depth && s.subagentLabel) || s.title || (s.eventCount === 0 && !s.error ? "Empty session" : fileLabel);
  const facts = el("span", "session-meta session-facts", factsLine(s));
  facts.title = `${describeTime(s)}\n${s.model ? `${s.model}\n` : ""}${formatCount(s.eventCount)} events · ${usageTitle(s)}`;
  const file = el("span", "session-file", fileLabel);
  file.title = s.path;
  const status = el("span", "session-status", s.status);
  status.dataset.status = s.status;
  if (s.error) status.title = s.error;
  const tail = el("span", "session-tail");
  tail.append(status, file);
  button.append(el("span", "session-name", name), facts, tail);
  if (s.warmup) button.append(el("span", "session-meta", "warm-up"));
  button.title = `${s.title || s.file}\n${s.cwd ? `${s.cwd}\n` : ""}${s.path}`;
  li.append(button);
  // compare.mjs: this row and another, side by side (served or local: a local one is read in the worker)
  const compare = el("button", "session-compare small-button", "Compare");
  compare.setAttribute("type", "button");
  compare.tabIndex = -1; // the list keeps one Tab stop (the row's own button)
  compare.dataset.compare = row.uid;
  const picked = list.comparing();
  compare.setAttribute("aria-pressed", picked === row.uid ? "true" : "false");
  compare.title = picked === row.uid ? "Cancel the comparison" : picked ? "Compare with this session"
    : "Compare this session with another (then choose the other)";
  compare.setAttribute("aria-label", `Compare ${name}`);
  li.append(compare);
  if (row.children.length) {
    const open = list.expanded.has(row.uid);
    const toggle = el("button", "session-expand small-button",
      `${open ? "▾" : "▸"} ${row.children.length} subagent${row.children.length === 1 ? "" : "s"}`);
    toggle.setAttribute("type", "button");
    toggle.tabIndex = -1; // reached with ArrowRight / ArrowLeft on its parent: the list keeps one Tab stop
    toggle.dataset.expand = row.uid;
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    toggle.title = open ? "Hide the subagent sessions (ArrowLeft)" : "Show the subagent sessions (ArrowRight)";
    li.append(toggle);
    if (open) {
      const ul = el("ul", "session-children");
      ul.append(...row.children.map((child) => entryItem(child, depth + 1)));
      li.append(ul);
    }
  }
  return li;
}

/** The sources shown, in order: a local file's sessions, the open folder, the server's. @returns {ListSource[]} */
function sources() {
  /** @type {ListSource[]} */
  const out = [];
  if (list.file) out.push(list.file);
  if (list.folder) out.push(list.folder);
  if (list.sessions) out.push({ kind: "served", name: "Served sessions", entries: list.sessions });
  return out;
}

function draw() {
  list.byUid.clear();
  /** @type {HTMLElement[]} */
  const items = [];
  let shown = 0;
  let warm = 0;
  const all = sources();
  labels = fileLabels(all.flatMap((source) => source.entries));
  for (const source of all) {
    warm += source.entries.filter((s) => s.warmup).length;
    if (all.length > 1 || source.kind !== "served") {
      const head = el("li", "session-source", source.kind === "served" ? "Served"
        : source.kind === "folder" ? `Folder: ${source.name}` : `File: ${source.name}`);
      head.setAttribute("role", "presentation");
      items.push(head);
    }
    const groups = grouped(source, { sort: list.sort, filter: list.filter, warmups: list.warmups,
      expanded: list.expanded, seen: list.byUid, since: list.since });
    for (const group of groups) {
      const li = el("li", "session-group");
      const head = el("h3", "group-head", group.label);
      head.title = group.key || group.label;
      const ul = el("ul", "group-entries");
      ul.append(...group.rows.map((row) => entryItem(row, 0)));
      li.append(head, ul);
      items.push(li);
      shown += group.rows.length;
    }
    if (!source.entries.length) {
      items.push(el("li", "session-meta", source.kind === "served" ? "No sessions in the served folder."
        : "No session log in this folder (no file of a format the viewer reads)."));
    } else if (!groups.length) {
      items.push(el("li", "session-meta", list.filter ? `No session matches “${list.filter}”${list.since !== null ? ` (${list.sinceLabel.toLowerCase()})` : ""}.`
        : list.since !== null ? `No session active in this period (${list.sinceLabel.toLowerCase()}).` : "Only warm-up sessions (shown with Warm-ups)."));
    }
  }
  if (list.pending > 0 && list.sessions) {
    items.unshift(el("li", "session-meta session-pending", `Reading the folder: ${formatCount(list.pending)} more `
      + `session file${list.pending === 1 ? "" : "s"} to list…`));
  }
  els.sessionList.replaceChildren(...items);
  const buttons = entryButtons();
  const current = buttons.find((b) => b.dataset.id === list.current) || buttons[0];
  if (current) current.tabIndex = 0; // the one Tab stop of the list
  els.sessionSort.textContent = SORTS[list.sort].label;
  els.sessionSort.title = `Sorted: ${SORTS[list.sort].label.toLowerCase()} (click for ${SORTS[SORTS[list.sort].next].label.toLowerCase()})`;
  els.sessionList.dataset.count = String(shown);
  els.warmups.hidden = warm === 0;
  els.warmupsLabel.textContent = ` Warm-ups (${formatCount(warm)})`;
}

/** Draws the list again (a change of state its rows show: the session picked first for a comparison). */
export function redrawList() {
  if (!els.sessions.hidden) draw();
}

/** @returns {HTMLButtonElement[]} */
function entryButtons() {
  return [...els.sessionList.querySelectorAll("button[data-id]")].filter((b) => b instanceof HTMLButtonElement);
}

/** @param {string} uid @param {boolean} open */
function setExpanded(uid, open) {
  if (open) list.expanded.add(uid);
  else list.expanded.delete(uid);
  draw();
  focusEntry(uid);
}

/** @param {string} uid */
function focusEntry(uid) {
  const buttons = entryButtons();
  const target = buttons.find((b) => b.dataset.id === uid);
  if (!target) return;
  for (const b of buttons) b.tabIndex = -1;
  target.tabIndex = 0;
  target.focus();
}

/** @param {KeyboardEvent} event */
function onListKey(event) {
  const buttons = entryButtons();
  const focused = /** @type {HTMLButtonElement} */ (document.activeElement);
  const at = buttons.indexOf(focused);
  if (at < 0) return;
  let next = at;
  const uid = focused.dataset.id || "";
  const item = focused.closest("li.session-entry");
  switch (event.key) {
    case "ArrowDown": next = Math.min(buttons.length - 1, at + 1); break;
    case "ArrowUp": next = Math.max(0, at - 1); break;
    case "Home": next = 0; break;
    case "End": next = buttons.length - 1; break;
    case "c": { // the row's Compare button, from the keyboard (the button itself is no Tab stop)
      if (!item?.querySelector(":scope > .session-compare")) return;
      event.preventDefault();
      event.stopPropagation();
      list.onCompare(uid, true);
      draw();
      focusEntry(uid);
      return;
    }
    case "ArrowRight":
      if (item?.querySelector(":scope > .session-expand") && !list.expanded.has(uid)) {
        event.preventDefault();
        setExpanded(uid, true);
      }
      return;
    case "ArrowLeft": {
      if (list.expanded.has(uid) && item?.querySelector(":scope > .session-expand")) {
        event.preventDefault();
        setExpanded(uid, false);
        return;
      }
      const parent = item?.parentElement?.closest("li.session-entry")?.querySelector(":scope > button[data-id]");
      if (parent instanceof HTMLButtonElement && parent.dataset.id) {
        event.preventDefault();
        focusEntry(parent.dataset.id);
      }
      return;
    }
    default: return;
  }
  event.preventDefault();
  event.stopPropagation();
  for (const b of buttons) b.tabIndex = -1;
  buttons[next].tabIndex = 0;
  buttons[next].focus();
}

/** The served session's list entry, if the list holds it. @param {string} id @returns {SessionEntry | null} */
export function servedEntry(id) {
  return list.sessions?.find((s) => s.id === id) ?? null;
}

/**
 * The local entry of a list id (`folder:…` of the open folder, `file:…` of the local file's sessions), if the list
 * holds it. @param {string} uid @returns {{entry: SessionEntry, kind: "folder" | "file"} | null}
 */
export function localEntry(uid) {
  for (const [kind, source] of /** @type {const} */ ([["folder", list.folder], ["file", list.file]])) {
    const entry = source?.entries.find((s) => localUid(kind, s) === uid);
    if (entry) return { entry, kind };
  }
  return null;
}

/** Marks the open session in the list (a served id, or a local entry's list id). @param {string | null} id */
export function markCurrent(id) {
  list.current = id;
  for (const b of entryButtons()) b.setAttribute("aria-current", b.dataset.id === id ? "true" : "false");
}

function showSidebar() {
  els.sessions.hidden = !(list.sessions || list.folder || list.file);
}

/** Fetches and draws the list; resolves to the sessions (null without a server API). */
/** How soon the list asks again while the server is still reading its files. */
const PENDING_RETRY_MS = 1000;
const PENDING_RETRY_MAX_MS = 5000;
let pendingWait = 0;
/** @type {ReturnType<typeof setTimeout> | null} */
let pendingTimer = null;

export async function refreshSessions() {
  const { sessions, offline, pending = 0 } = await listSessions();
  // A big folder is listed as it is read: the server says how many files it has not read yet; ask again soon.
  list.pending = pending;
  if (pendingTimer !== null) clearTimeout(pendingTimer);
  // Backing off (1, 2, 4, then every 5 s): a folder of thousands is redrawn a few times, not every second.
  pendingWait = pending > 0 ? Math.min(pendingWait ? pendingWait * 2 : PENDING_RETRY_MS, PENDING_RETRY_MAX_MS) : 0;
  pendingTimer = pending > 0 ? setTimeout(() => { pendingTimer = null; void refreshSessions(); }, pendingWait) : null;
  if (offline) {
    setAlert("server", "The server does not answer: the session list could not be read. Local files still open.");
    return list.sessions;
  }
  clearAlert("server");
  list.loaded = true;
  document.documentElement.dataset.sessionList = sessions ? "shown" : "none";
  list.sessions = sessions;
  showSidebar();
  if (!els.sessions.hidden) draw();
  return sessions;
}

/**
 * Shows the entries of a folder opened in the page (replacing the last folder's), or of the local file holding
 * several sessions (`kind: "file"`; null forgets it).
 * @param {"folder" | "file"} kind
 * @param {{name: string, entries: SessionEntry[]} | null} what
 */
export function setLocal(kind, what) {
  list[kind] = what ? { kind, name: what.name, entries: what.entries } : null;
  showSidebar();
  if (!els.sessions.hidden) {
    setCollapsed(false);
    draw();
  }
}

/** The open folder's entries (none without a folder). */
export function folderEntries() {
  return list.folder?.entries ?? [];
}

/** The folder entry open now, if the open session is one of the folder's. */
export function currentFolderEntry() {
  const found = list.current ? list.byUid.get(list.current) ?? folderEntryByUid(list.current) : undefined;
  return found && found.source.kind === "folder" ? found.entry : null;
}

/** @param {string} uid */
function folderEntryByUid(uid) {
  const source = list.folder;
  const entry = source?.entries.find((s) => localUid("folder", s) === uid);
  return source && entry ? { entry, source } : undefined;
}

/** The local file's sessions shown now, if any (its name). */
export function localFileName() {
  return list.file?.name ?? null;
}

/** @param {boolean} collapsed */
function setCollapsed(collapsed) {
  document.documentElement.dataset.sidebar = collapsed ? "collapsed" : "open";
  els.sessionsToggle.setAttribute("aria-expanded", collapsed ? "false" : "true");
  els.sessionsToggle.title = collapsed ? "Show the session list" : "Hide the session list";
}

/**
 * `onCompare(id, button)`: a row's Compare button was clicked (`button`), or, while `comparing()` names the
 * session picked first, a row itself, served or local (compare.mjs).
 * @param {{onPick: (id: string) => void, onPickLocal: (entry: SessionEntry, source: "folder" | "file") => void,
 *   onCompare?: (id: string, button: boolean) => void, comparing?: () => string | null}} options
 */
export function initSessionList({ onPick, onPickLocal, onCompare, comparing }) {
  list.onPick = onPick;
  list.onPickLocal = onPickLocal;
  if (onCompare) list.onCompare = onCompare;
  if (comparing) list.comparing = comparing;
  els.sessionList.addEventListener("click", (event) => {
    const target = /** @type {Element} */ (event.target);
    const expand = target.closest?.("button[data-expand]");
    if (expand instanceof HTMLButtonElement && expand.dataset.expand) {
      setExpanded(expand.dataset.expand, !list.expanded.has(expand.dataset.expand));
      return;
    }
    const compare = target.closest?.("button[data-compare]");
    if (compare instanceof HTMLButtonElement && compare.dataset.compare) {
      list.onCompare(compare.dataset.compare, true);
      draw();
      return;
    }
    const button = target.closest?.("button[data-id]");
    if (!(button instanceof HTMLButtonElement) || !button.dataset.id) return;
    const found = list.byUid.get(button.dataset.id);
    if (list.comparing() !== null) {
      list.onCompare(button.dataset.id, false);
      draw();
    } else if (found && found.source.kind !== "served") {
      markCurrent(button.dataset.id);
      list.onPickLocal(found.entry, found.source.kind);
    } else list.onPick(button.dataset.id);
  });
  els.sessionList.addEventListener("keydown", onListKey);
  els.sessionFilter.addEventListener("input", () => { list.filter = els.sessionFilter.value.trim(); draw(); });
  els.sessionSort.addEventListener("click", () => { list.sort = SORTS[list.sort].next; draw(); });
  els.showWarmups.addEventListener("change", () => { list.warmups = els.showWarmups.checked; draw(); });
  els.refresh.addEventListener("click", () => void refreshSessions());
  setCollapsed(window.matchMedia("(max-width: 600px)").matches);
  els.sessionsToggle.addEventListener("click", () => setCollapsed(document.documentElement.dataset.sidebar !== "collapsed"));
  document.addEventListener("session-opened", (event) => markCurrent(/** @type {CustomEvent<string>} */ (event).detail));
}
