// @ts-check
// "Latest ↓": while a served session is followed and the reader is not at the end, rows that arrive or grow below
// show a button that takes the reader to the end (where the list follows again). Reaching the end any other way,
// another view or another session hides it.
import { els } from "./dom.mjs";
import { state, view } from "./runtime.mjs";

/** A live update changed rows while the reader was away from the end. */
export function rowsArrivedBelow() {
  if (state.mode !== "live" || els.transcript.hidden || view.atEnd()) return;
  els.latest.hidden = false;
}

export function hideLatest() {
  els.latest.hidden = true;
}

export function initLatest() {
  els.latest.addEventListener("click", () => {
    hideLatest();
    view.scrollToEnd();
  });
  window.addEventListener("scroll", () => {
    if (!els.latest.hidden && (els.transcript.hidden || view.atEnd())) hideLatest();
  }, { passive: true });
}
