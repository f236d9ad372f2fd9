// @ts-check
// What the page tells the user: the status line (Python's boot stages), the one role="alert" element for every
// error and warning, the live badge (with the retry countdown when offline) and the progress bar of a load.
// State lives in these module variables, never in the DOM's text.
import { BOOT_STAGES } from "./config.mjs";
import { els } from "./dom.mjs";
import { formatCount } from "./summary.mjs";

// --- the status line: Python's boot ------------------------------------------------------------------------------

/** @typedef {"loading" | "ready" | "error"} BootState */

/** @type {BootState} */
let bootState = "loading";
let queued = ""; // what waits for Python (shown as "Starting Python…")

/** @returns {BootState} */
export function bootStateNow() {
  return bootState;
}

/**
 * Shows a boot stage: `stage` is one of BOOT_STAGES (the one being worked on).
 * @param {string} stage
 * @param {string} text
 */
export function setBootStage(stage, text) {
  const step = Math.max(0, BOOT_STAGES.indexOf(/** @type {any} */ (stage)));
  els.bootSteps.max = BOOT_STAGES.length;
  els.bootSteps.value = step;
  els.bootSteps.hidden = false;
  document.documentElement.dataset.bootStage = stage;
  bootLine(`Starting Python: ${text} (step ${step + 1} of ${BOOT_STAGES.length})`);
}

/** @param {string} text */
function bootLine(text) {
  els.status.textContent = queued ? `${text} · ${queued} opens when it is ready` : text;
  els.status.hidden = false;
}

/** Something waits for Python (a session or file the user picked before it was ready); "" when nothing does.
 * @param {string} what */
export function setQueued(what) {
  queued = what;
  if (bootState === "loading") {
    els.status.textContent = what ? `Starting Python… ${what} opens when it is ready` : "Starting Python…";
    els.status.hidden = false;
  }
}

/** Python is ready: the status line goes away (the state stays on <html data-boot>). */
export function bootReady() {
  bootState = "ready";
  queued = "";
  document.documentElement.dataset.boot = "ready";
  document.documentElement.dataset.bootStage = "ready";
  els.bootSteps.value = BOOT_STAGES.length;
  els.bootSteps.hidden = true;
  els.status.textContent = "";
  els.status.hidden = true;
}

/** @param {string} message */
export function bootFailed(message) {
  bootState = "error";
  document.documentElement.dataset.boot = "error";
  els.bootSteps.hidden = true;
  els.status.textContent = "Python did not start: sessions can be listed but not shown.";
  els.status.hidden = false;
  setAlert("boot", `The viewer could not start Python: ${message}. Reload the page to try again.`);
}

// --- the alert: every error and warning, in one role="alert" element ------------------------------------------

/** @typedef {"boot" | "worker" | "file" | "page" | "live" | "older" | "session" | "server" | "render" | "copy" | "replay" | "view" | "navigation" | "compare"} AlertSource */
/** @typedef {"error" | "warning"} AlertLevel */

/** @type {Map<AlertSource, {text: string, level: AlertLevel}>} */
const alerts = new Map();

/**
 * Shows (or replaces) the message of one source; an empty text clears it.
 * @param {AlertSource} source
 * @param {string} text
 * @param {AlertLevel} [level]
 */
export function setAlert(source, text, level = "error") {
  if (text) alerts.set(source, { text, level });
  else alerts.delete(source);
  renderAlerts();
}

/** @param {AlertSource} source */
export function clearAlert(source) {
  setAlert(source, "");
}

/** Clears every message except those of `keep` (the boot failure and the server's state outlive a load).
 * @param {AlertSource[]} [keep] */
export function clearAlerts(keep = ["boot", "server"]) {
  for (const source of [...alerts.keys()]) if (!keep.includes(source)) alerts.delete(source);
  renderAlerts();
}

/** @param {AlertSource} source */
export function hasAlert(source) {
  return alerts.has(source);
}

/** The messages the reader dismissed (their texts): hidden until a message changes or a new one comes. */
let dismissed = "";

function renderAlerts() {
  const items = [...alerts.entries()].map(([source, { text, level }]) => {
    const p = document.createElement("p");
    p.dataset.source = source;
    p.dataset.level = level;
    p.textContent = text;
    return p;
  });
  const shown = JSON.stringify([...alerts.values()].map((a) => a.text));
  // Its label is drawn by CSS (content: "×"), so the alert's text (innerText) is the messages alone.
  const close = document.createElement("button");
  close.type = "button";
  close.className = "alert-dismiss";
  close.setAttribute("aria-label", "Dismiss these messages");
  close.title = "Dismiss these messages (a new one shows again)";
  close.addEventListener("click", () => {
    dismissed = shown;
    els.alert.hidden = true;
  });
  els.alert.replaceChildren(close, ...items);
  els.alert.hidden = items.length === 0 || shown === dismissed;
  els.alert.dataset.level = [...alerts.values()].some((a) => a.level === "error") ? "error" : "warning";
}

// --- the live badge ------------------------------------------------------------------------------------------------

/** @typedef {"connecting" | "live" | "reconnecting" | "offline" | "ended" | "missing" | "stopped" | "closed"} LiveState */

/** @type {ReturnType<typeof setInterval> | null} */
let countdown = null;

/** What the badge says for a state other than offline (whose text counts down). @type {Record<string, string>} */
const LIVE_TEXT = { connecting: "connecting", reconnecting: "reconnecting", ended: "ended", missing: "not found",
  stopped: "stopped", closed: "" };

/**
 * Shows the follow stream's state; `retryAt` (performance.now() ms) adds a countdown to the next try. A connected
 * stream reads "live" only when the session itself is (`sessionStatus`, the list's status: a turn open and the file
 * written lately); any other connected session reads "following" (its new lines would appear, none are expected).
 * @param {LiveState} state
 * @param {{retryAt?: number, sessionStatus?: string | null}} [options]
 */
export function setLive(state, { retryAt, sessionStatus = null } = {}) {
  if (countdown !== null) clearInterval(countdown);
  countdown = null;
  els.live.dataset.state = state;
  els.live.hidden = state === "closed";
  if (state === "offline" && retryAt !== undefined) {
    const tick = () => {
      const left = Math.max(0, Math.ceil((retryAt - performance.now()) / 1000));
      els.live.textContent = left > 0 ? `offline · retrying in ${left} s` : "offline · retrying…";
    };
    tick();
    countdown = setInterval(tick, 250);
  } else if (state === "live") {
    const live = sessionStatus === "live";
    els.live.textContent = live ? "live" : "following";
    els.live.title = live ? "The session is being written: new rows appear as they come"
      : `Connected: new lines of the file would appear as they are written (the session is ${sessionStatus || "not listed"})`;
  } else {
    els.live.textContent = LIVE_TEXT[state] ?? state;
    els.live.title = "";
  }
}

// --- the progress bar of a load -------------------------------------------------------------------------------

let busy = 0;
let progressSuffix = ""; // what the page shows while the load goes on (progressNote)

/** @param {string} text */
export function progressStart(text) {
  busy += 1;
  progressSuffix = "";
  document.documentElement.dataset.busy = "1";
  els.progress.hidden = false;
  els.progressBar.removeAttribute("value");
  els.progressText.textContent = text;
}

/** Says, after the progress of the load under way, what the page shows meanwhile ("showing the part read so far").
 * @param {string} note */
export function progressNote(note) {
  progressSuffix = note;
  if (!els.progress.hidden && !els.progressText.textContent?.endsWith(note)) {
    els.progressText.textContent = `${els.progressText.textContent} — ${note}`;
  }
}

export function progressEnd() {
  busy = Math.max(0, busy - 1);
  progressSuffix = "";
  if (busy === 0) {
    els.progress.hidden = true;
    delete document.documentElement.dataset.busy;
  }
}

let progressTicks = 0;
let progressName = "";

/** A byte count as a reader says it: "820 bytes", "12 KB", "3.4 MB", "1.2 GB".
 * @param {number} n */
export function sizeText(n) {
  if (n < 1000) return `${n} byte${n === 1 ? "" : "s"}`;
  if (n < 1e6) return `${Math.round(n / 1e3)} KB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/** A progress message from the worker while it reads a local file (or, phase "folder", a folder's files).
 * @param {{phase?: string, size?: number, bytes?: number, name?: string, lines?: number, done?: number,
 *   total?: number}} msg */
export function fileProgress(msg) {
  progressTicks += 1;
  document.documentElement.dataset.progressTicks = String(progressTicks);
  if (msg.phase === "read" && msg.size) {
    els.progressBar.max = msg.size;
    els.progressBar.value = msg.bytes ?? 0;
    const lines = msg.lines ? `, ${formatCount(msg.lines)} line${msg.lines === 1 ? "" : "s"}` : "";
    if (msg.name) progressName = msg.name;
    els.progressText.textContent =
      `Reading ${progressName || "the file"}: ${sizeText(msg.bytes ?? 0)} of ${sizeText(msg.size)}${lines}`
      + (progressSuffix ? ` — ${progressSuffix}` : "");
  } else if (msg.phase === "folder" && msg.total) {
    els.progressBar.max = msg.total;
    els.progressBar.value = msg.done ?? 0;
    els.progressText.textContent = `Reading the folder: ${formatCount(msg.done ?? 0)} of ${formatCount(msg.total)} files`
      + (msg.name ? ` (${msg.name.split("/").pop()})` : "");
  } else if (msg.phase === "fold") {
    els.progressBar.removeAttribute("value");
    els.progressText.textContent = "Assembling the transcript…";
  }
}
