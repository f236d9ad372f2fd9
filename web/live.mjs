// @ts-check
// Opening a served session: the follow stream (sessions.mjs) feeds the worker; the first snapshot renders the
// first screen. A session picked before Python is ready is opened at once (the stream's frames wait in the
// worker, in order) and the status line says "Starting Python…".
import { OPEN_TIMEOUT_MS } from "./config.mjs";
import { els } from "./dom.mjs";
import { applyUpdate, renderFirstScreen, resetView } from "./flows.mjs";
import { openPublished } from "./published.mjs";
import { bridge, state, view } from "./runtime.mjs";
import { servedEntry } from "./sessionlist.mjs";
import { Follow } from "./sessions.mjs";
import { isPublished } from "./site.mjs";
import { clearAlert, progressEnd, progressStart, setAlert, setLive, setQueued } from "./status.mjs";

/** The server's fault text (`str` of the error: "line 26: invalid JSON ...") without the "line N: " it starts
 * with: the alert names the line already, once. @param {{detail: string, line?: number | null}} fault */
function faultText(fault) {
  const detail = String(fault.detail);
  return fault.line ? detail.replace(new RegExp(`^line ${fault.line}: `), "") : detail;
}

/**
 * @param {string} id
 * @param {{onOpened?: () => void}} [options] `onOpened` runs once the first snapshot is on screen
 */
export function openSession(id, { onOpened = () => {} } = {}) {
  if (isPublished()) {
    void openPublished(id, { onOpened }); // a published site's session: its pages are files, nothing is followed
    return;
  }
  resetView();
  state.mode = "live";
  state.sessionId = id;
  state.liveOpened = false;
  const entry = servedEntry(id); // the header names the session by its title (the id path is the tooltip)
  els.title.textContent = entry?.title || id;
  els.title.title = id;
  view.setWhole(entry);
  document.dispatchEvent(new CustomEvent("session-opened", { detail: id }));
  const waiting = !bridge.isReady;
  if (waiting) setQueued(`session ${id}`);
  progressStart(waiting ? "Starting Python…" : "Opening session…");
  void bridge.call("reset").catch(() => {}); // forget the last file or page (its pager must not answer "Load older")
  let opening = true;
  const done = () => {
    if (!opening) return;
    opening = false;
    progressEnd();
  };
  /** @type {Follow | null} */
  let follow = null; // assigned below; its callbacks only run for the stream the page still shows
  const current = () => follow !== null && state.follow === follow;
  follow = new Follow(id, {
    onState: (s, options) => {
      if (follow === null || current() || s === "closed") setLive(s, { ...options, sessionStatus: servedEntry(id)?.status });
    },
    onFrames: async (frames) => {
      let update;
      const first = !state.liveOpened; // these frames open the session (its snapshot)
      if (first) performance.mark("viewer:snapshot-received"); // read whole, split, about to go to the worker
      try {
        update = await bridge.json("frames", { frames }, [...new Set(frames.map((f) => f.buffer))]);
        if (first) performance.mark("viewer:snapshot-folded");
      } catch (err) {
        setAlert("worker", `Python failed on session ${id}: ${/** @type {Error} */ (err).message}. The rows shown stay.`);
        done();
        return;
      }
      if (!current()) return;
      state.liveOpened = true;
      if (update.html) view.prime(update.html); // a snapshot's first screen came with it: no second trip
      if (!update.error) clearAlert("live"); // recovered
      if (update.sessionError) {
        const e = update.sessionError;
        const at = [e.line ? `line ${e.line}` : "", e.seq !== null && e.seq !== undefined ? `seq ${e.seq}` : ""]
          .filter(Boolean).join(", ");
        setAlert("session", `Session ${id}${at ? `, ${at}` : ""}: ${faultText(e)}. The valid part before it is shown.`);
      }
      applyUpdate(update, { scroll: first ? "end" : "follow" });
      if (first) {
        await renderFirstScreen();
        if (!performance.getEntriesByName("viewer:first-row").length) performance.mark("viewer:first-row");
        done();
        onOpened();
      }
      if (update.error?.where === "live") follow?.restart();
    },
    onFault: (fault) => {
      const at = [fault.line ? `line ${fault.line}` : "", fault.seq !== null ? `seq ${fault.seq}` : ""].filter(Boolean).join(", ");
      const next = fault.following ? "Following continues with the lines after it." : "Following stopped; the rows before it are shown.";
      setAlert("live", `Session ${id}${at ? `, ${at}` : ""}: ${faultText(fault)}. ${next}`);
      done();
    },
    onGone: () => {
      setAlert("session", `Session ${id} does not exist on the server (unknown or deleted). Nothing more will be tried; pick another session.`);
      done();
    },
  });
  state.follow = follow;
  setTimeout(done, OPEN_TIMEOUT_MS);
}
