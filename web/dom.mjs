// @ts-check
// The page's elements, looked up once and checked for their type (a missing element fails at start, loudly).

/**
 * @template {Element} T
 * @param {string} id
 * @param {new (...args: any[]) => T} type
 * @returns {T}
 */
export function byId(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`the page has no #${id} (${type.name})`);
  return el;
}

export const els = {
  status: byId("boot-status", HTMLElement),
  bootSteps: byId("boot-steps", HTMLProgressElement),
  alert: byId("alert", HTMLElement),
  progress: byId("progress", HTMLElement),
  progressBar: byId("progress-bar", HTMLProgressElement),
  progressText: byId("progress-text", HTMLElement),
  transcript: byId("transcript", HTMLElement),
  older: byId("load-older", HTMLButtonElement),
  stats: byId("stats", HTMLElement),
  welcome: byId("welcome", HTMLElement),
  emptySession: byId("empty-session", HTMLElement),
  publishedNote: byId("published-note", HTMLElement),
  title: byId("session-title", HTMLElement),
  sessions: byId("sessions", HTMLElement),
  sessionList: byId("session-list", HTMLElement),
  sessionFilter: byId("session-filter", HTMLInputElement),
  sessionSort: byId("session-sort", HTMLButtonElement),
  sessionsToggle: byId("sessions-toggle", HTMLButtonElement),
  refresh: byId("refresh-sessions", HTMLButtonElement),
  showEvents: byId("show-events", HTMLInputElement),
  live: byId("live-state", HTMLElement),
  latest: byId("to-latest", HTMLButtonElement),
  help: byId("key-help", HTMLDialogElement),
  helpClose: byId("key-help-close", HTMLButtonElement),
  openFile: byId("open-file", HTMLButtonElement),
  fileInput: byId("file-input", HTMLInputElement),
  openFolder: byId("open-folder", HTMLButtonElement),
  folderInput: byId("folder-input", HTMLInputElement),
  warmups: byId("warmups-toggle", HTMLElement),
  showWarmups: byId("show-warmups", HTMLInputElement),
  warmupsLabel: byId("warmups-label", HTMLElement),
  dropOverlay: byId("drop-overlay", HTMLElement),
  themeToggle: byId("theme-toggle", HTMLButtonElement),
};
