// @ts-check
// Moving around: deep links (#session=ID&seq=N), the URL following the row in view (replaceState, so Back is not
// flooded), and "Load older" by itself when the reader scrolls near the top.
import { LOAD_OLDER_NEAR_TOP_PX, SEQ_SEARCH_PAGES, URL_FOLLOW_MS } from "./config.mjs";
import { els } from "./dom.mjs";
import { loadOlder } from "./flows.mjs";
import { openSession } from "./live.mjs";
import { bridge, hooks, state, view } from "./runtime.mjs";

export function hashParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

/** The hash for the open session (or file) at `seq`. @param {number | null} seq */
export function hashFor(seq) {
  const params = new URLSearchParams();
  if (state.mode === "live" && state.sessionId) params.set("session", state.sessionId);
  if (seq !== null) params.set("seq", String(seq));
  const shown = hashParams().get("view"); // the view tab (views.mjs) stays in the URL
  if (shown) params.set("view", shown);
  return `#${params.toString()}`;
}

/** Scrolls to the row a seq points at, loading older pages while it lies before the window.
 * @param {number} seq */
export async function scrollToSeq(seq) {
  for (let i = 0; i < SEQ_SEARCH_PAGES; i++) {
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

function seqInHash() {
  const params = hashParams();
  const seq = Number(params.get("seq"));
  return params.has("seq") && Number.isFinite(seq) ? seq : null;
}

/** Applies the hash: opens its session, then scrolls to its seq. */
export async function followHash() {
  hooks.followHash();
  const session = hashParams().get("session");
  if (session && session !== state.sessionId) {
    openSession(session, {
      onOpened: () => {
        const seq = seqInHash();
        if (seq !== null) void scrollToSeq(seq);
      },
    });
    return;
  }
  const seq = seqInHash();
  if (seq !== null && view.order.length) await scrollToSeq(seq);
}

/** After a local file opened: its #seq=N, if any. */
export function afterFileOpened() {
  const seq = seqInHash();
  if (seq !== null) void scrollToSeq(seq);
}

// --- the URL follows the row in view; near the top, older messages load -------------------------------------

/** @type {ReturnType<typeof setTimeout> | null} */
let pending = null;

function followScroll() {
  pending = null;
  if (state.mode !== "live" && state.mode !== "file") return;
  if (els.transcript.hidden) return; // another view is shown: the chat's place is not the reader's
  const el = view.firstInView();
  const seq = el ? Number(el.dataset.seq) : NaN;
  if (!Number.isFinite(seq)) return;
  const hash = hashFor(seq);
  if (hash !== location.hash) history.replaceState(history.state, "", hash);
  document.documentElement.dataset.urlSeq = String(seq);
}

let lastTop = 0;

function onScroll() {
  if (pending === null) pending = setTimeout(followScroll, URL_FOLLOW_MS);
  const doc = document.scrollingElement || document.documentElement;
  const up = doc.scrollTop < lastTop; // only the reader scrolling up loads more (never a short first screen)
  lastTop = doc.scrollTop;
  if (up && !els.transcript.hidden && doc.scrollTop <= LOAD_OLDER_NEAR_TOP_PX && state.canLoadOlder && view.order.length && !els.older.hidden) {
    void loadOlder();
  }
}

export function initNavigation() {
  window.addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("hashchange", () => void followHash());
}
