// @ts-check
// Opening a session of a published site (site.mjs): its first page is a file, read once and folded like any page;
// "Load older" and the whole-session export read the other files the same way (sessions.mjs: fetchPage). Nothing
// is followed: a visible line says the session is a read-only copy, and no live badge shows.
import { els } from "./dom.mjs";
import { applyUpdate, renderFirstScreen, resetView } from "./flows.mjs";
import { bridge, state, view } from "./runtime.mjs";
import { servedEntry } from "./sessionlist.mjs";
import { fetchPage } from "./sessions.mjs";
import { progressEnd, progressStart, setAlert, setQueued } from "./status.mjs";

let opens = 0; // published sessions opened so far (the last one is the one shown)

/**
 * @param {string} id
 * @param {{onOpened?: () => void}} [options] `onOpened` runs once the first page is on screen
 */
export async function openPublished(id, { onOpened = () => {} } = {}) {
  const mine = ++opens;
  resetView();
  state.mode = "live"; // a session of the list, as a served one: its id is in the URL, its export reads its pages
  state.sessionId = id;
  state.liveOpened = false;
  const entry = servedEntry(id);
  els.title.textContent = entry?.title || id;
  els.title.title = id;
  view.setWhole(entry);
  document.dispatchEvent(new CustomEvent("session-opened", { detail: id }));
  els.publishedNote.textContent = "A published copy: read-only and not followed. It shows this session as it was "
    + "when the site was published.";
  els.publishedNote.hidden = false;
  const waiting = !bridge.isReady;
  if (waiting) setQueued(`session ${id}`);
  progressStart(waiting ? "Starting Python…" : "Opening session…");
  try {
    const bytes = await fetchPage(id, { through: null });
    if (mine !== opens) return;
    // paged: "Load older" asks for the older pages, which are files too
    const update = await bridge.json("loadPage", { bytes, paged: true }, [bytes.buffer]);
    if (mine !== opens) return;
    if (update.html) view.prime(update.html); // the first screen's rows came with the page
    applyUpdate(update, { scroll: "end" });
    state.liveOpened = true;
    if (entry?.status === "damaged" && entry.error) {
      setAlert("session", `Session ${entry.title || id}: ${entry.error}. The valid part before it is shown.`);
    }
    await renderFirstScreen();
    onOpened();
  } catch (err) {
    if (mine === opens) setAlert("session", `Session ${id} could not be opened: ${/** @type {Error} */ (err).message}.`);
  } finally {
    progressEnd();
  }
}
