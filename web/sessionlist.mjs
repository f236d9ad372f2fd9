// @ts-check
// The session list (GET /api/sessions), drawn by plain JavaScript before Python is ready: title, file name (full
// path as tooltip), last activity (the events' own time; the file's mtime only as a labelled fallback), event and
// turn counts, model, status. Sorted by last activity (a toggle), filtered by title or file name, reached with one
// Tab stop: arrow keys, Home and End move within the list (a roving tabindex). The sidebar collapses.
import { els } from "./dom.mjs";
import { listSessions } from "./sessions.mjs";
import { formatCount } from "./summary.mjs";
import { clearAlert, setAlert } from "./status.mjs";

/** @typedef {import("./sessions.mjs").SessionEntry} SessionEntry */
/** @typedef {"newest" | "oldest" | "name"} SortOrder */

/** @type {{sessions: SessionEntry[] | null, sort: SortOrder, filter: string, current: string | null,
 *          onPick: (id: string) => void, loaded: boolean}} */
const list = { sessions: null, sort: "newest", filter: "", current: null, onPick: () => {}, loaded: false };

/** @type {Record<SortOrder, {label: string, next: SortOrder}>} */
const SORTS = {
  newest: { label: "Newest first", next: "oldest" },
  oldest: { label: "Oldest first", next: "name" },
  name: { label: "By name", next: "newest" },
};

/** @param {SessionEntry} s */
const activity = (s) => s.lastActivity ?? -Infinity;

/** @param {SessionEntry[]} sessions */
function sorted(sessions) {
  const out = [...sessions];
  if (list.sort === "name") out.sort((a, b) => (a.title || a.file).localeCompare(b.title || b.file));
  else out.sort((a, b) => (activity(a) - activity(b)) * (list.sort === "newest" ? -1 : 1) || a.id.localeCompare(b.id));
  return out;
}

/** @param {SessionEntry} s */
function matches(s) {
  if (!list.filter) return true;
  const needle = list.filter.toLowerCase();
  return [s.title || "", s.file, s.id].some((text) => text.toLowerCase().includes(needle));
}

/** @param {SessionEntry} s */
function describeTime(s) {
  if (s.lastActivity === null || s.lastActivity === undefined) return "no time recorded";
  const when = new Date(s.lastActivity).toLocaleString();
  return s.lastActivitySource === "mtime" ? `${when} (file modified; the log records no time)` : when;
}

/** @param {string} cls @param {string} text */
function span(cls, text) {
  const el = document.createElement("span");
  el.className = cls;
  el.textContent = text;
  return el;
}

/** @param {SessionEntry} s */
function entry(s) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.id = s.id;
  button.tabIndex = -1;
  button.setAttribute("aria-current", s.id === list.current ? "true" : "false");
  const file = span("session-file", s.file);
  file.title = s.path;
  const counts = `${formatCount(s.eventCount)} events · ${formatCount(s.turnCount)} turn${s.turnCount === 1 ? "" : "s"}`;
  const status = span("session-status", s.status);
  status.dataset.status = s.status;
  if (s.error) status.title = s.error;
  button.append(
    span("session-name", s.title || s.file),
    file,
    span("session-meta", `${describeTime(s)}`),
    span("session-meta", `${counts}${s.model ? ` · ${s.model}` : ""}`),
    status,
  );
  button.title = `${s.title || s.file}\n${s.path}`;
  li.append(button);
  return li;
}

function draw() {
  const sessions = list.sessions || [];
  const shown = sorted(sessions).filter(matches);
  const items = shown.map(entry);
  if (!sessions.length) items.push(Object.assign(document.createElement("li"), { className: "session-meta", textContent: "No sessions in the served folder." }));
  else if (!shown.length) items.push(Object.assign(document.createElement("li"), { className: "session-meta", textContent: `No session matches “${list.filter}”.` }));
  els.sessionList.replaceChildren(...items);
  const buttons = entryButtons();
  const current = buttons.find((b) => b.dataset.id === list.current) || buttons[0];
  if (current) current.tabIndex = 0; // the one Tab stop of the list
  els.sessionSort.textContent = SORTS[list.sort].label;
  els.sessionSort.title = `Sorted: ${SORTS[list.sort].label.toLowerCase()} (click for ${SORTS[SORTS[list.sort].next].label.toLowerCase()})`;
  els.sessionList.dataset.count = String(shown.length);
}

/** @returns {HTMLButtonElement[]} */
function entryButtons() {
  return [...els.sessionList.querySelectorAll("button[data-id]")].filter((b) => b instanceof HTMLButtonElement);
}

/** @param {KeyboardEvent} event */
function onListKey(event) {
  const buttons = entryButtons();
  const at = buttons.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
  if (at < 0) return;
  let next = at;
  switch (event.key) {
    case "ArrowDown": next = Math.min(buttons.length - 1, at + 1); break;
    case "ArrowUp": next = Math.max(0, at - 1); break;
    case "Home": next = 0; break;
    case "End": next = buttons.length - 1; break;
    default: return;
  }
  event.preventDefault();
  event.stopPropagation();
  for (const b of buttons) b.tabIndex = -1;
  buttons[next].tabIndex = 0;
  buttons[next].focus();
}

/** Marks the open session in the list. @param {string | null} id */
export function markCurrent(id) {
  list.current = id;
  for (const b of entryButtons()) b.setAttribute("aria-current", b.dataset.id === id ? "true" : "false");
}

/** Fetches and draws the list; resolves to the sessions (null without a server API). */
export async function refreshSessions() {
  const { sessions, offline } = await listSessions();
  if (offline) {
    setAlert("server", "The server does not answer: the session list could not be read. Local files still open.");
    return list.sessions;
  }
  clearAlert("server");
  list.loaded = true;
  document.documentElement.dataset.sessionList = sessions ? "shown" : "none";
  if (!sessions) {
    els.sessions.hidden = true;
    return null;
  }
  list.sessions = sessions;
  els.sessions.hidden = false;
  draw();
  return sessions;
}

/** @param {boolean} collapsed */
function setCollapsed(collapsed) {
  document.documentElement.dataset.sidebar = collapsed ? "collapsed" : "open";
  els.sessionsToggle.setAttribute("aria-expanded", collapsed ? "false" : "true");
  els.sessionsToggle.title = collapsed ? "Show the session list" : "Hide the session list";
}

/** @param {{onPick: (id: string) => void}} options */
export function initSessionList({ onPick }) {
  list.onPick = onPick;
  els.sessionList.addEventListener("click", (event) => {
    const button = /** @type {Element} */ (event.target).closest?.("button[data-id]");
    if (button instanceof HTMLButtonElement && button.dataset.id) list.onPick(button.dataset.id);
  });
  els.sessionList.addEventListener("keydown", onListKey);
  els.sessionFilter.addEventListener("input", () => { list.filter = els.sessionFilter.value.trim(); draw(); });
  els.sessionSort.addEventListener("click", () => { list.sort = SORTS[list.sort].next; draw(); });
  els.refresh.addEventListener("click", () => void refreshSessions());
  setCollapsed(window.matchMedia("(max-width: 600px)").matches);
  els.sessionsToggle.addEventListener("click", () => setCollapsed(document.documentElement.dataset.sidebar !== "collapsed"));
  document.addEventListener("session-opened", (event) => markCurrent(/** @type {CustomEvent<string>} */ (event).detail));
}
