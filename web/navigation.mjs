// @ts-check
// Moving around: deep links (#session=ID&seq=N), the URL following the row in view (replaceState, so Back is not
// flooded), and "Load older" by itself when the reader scrolls near the top.
import { LOAD_OLDER_NEAR_TOP_PX, PAGE_SIZE, SEQ_SEARCH_PAGES, URL_FOLLOW_MS, USER_SCROLL_MS } from "./config.mjs";
import { els } from "./dom.mjs";
import { loadOlder } from "./flows.mjs";
import { openSession } from "./live.mjs";
import { bridge, hooks, state, view } from "./runtime.mjs";
import { isPublished } from "./site.mjs";
import { setAlert } from "./status.mjs";
import { formatCount } from "./summary.mjs";

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

/** Scrolls to the row a seq points at, loading older history while it lies before the window (one page that
 * reaches back to it, up to SEQ_SEARCH_PAGES pages' worth of messages; page by page on a published site, whose
 * pages are fixed files); resolves to the row's key (null when there is none). What stops it is said in the alert,
 * naming the row as `what` (a link's, or the timeline's step).
 * @param {number} seq @param {{what?: string}} [options] @returns {Promise<string | null>} */
export async function scrollToSeq(seq, { what = "The link's row" } = {}) {
  linkHeld = true; // the link's seq stays in the URL until the reader scrolls by hand
  const perLoad = isPublished() ? 1 : SEQ_SEARCH_PAGES; // pages' worth one load reaches back
  let found;
  for (let pages = 0; ; pages += perLoad) {
    found = await bridge.json("findSeq", { seq });
    if (found.inWindow || !state.canLoadOlder) {
      if (found.beyond) {
        setAlert("navigation", `${what} seq ${seq} is past the end of this session (its last seq is `
          + `${found.last}): the last row is shown.`, "warning");
      }
      if (!found.key) return null;
      const key = found.key;
      await view.renderKeys([key]);
      view.focusKey(key, { block: "center" });
      for (const el of els.transcript.querySelectorAll(".is-target")) el.classList.remove("is-target");
      view.element(key)?.classList.add("is-target");
      await view.renderKeys(view.visibleKeys(200));
      view.focusKey(key, { block: "center" });
      return key;
    }
    if (pages >= SEQ_SEARCH_PAGES) break;
    if (!(await loadOlder({ toSeq: seq }))) {
      setAlert("navigation", `${what} seq ${seq} could not be reached: loading older messages failed.`);
      return null;
    }
  }
  if (found.key) { // the oldest row loaded, the nearest to the link's, with Load older just above it
    await view.renderKeys([found.key]);
    view.focusKey(found.key, { block: "start" });
  }
  setAlert("navigation", `${what} seq ${seq} lies more than ${formatCount(SEQ_SEARCH_PAGES * PAGE_SIZE)} `
    + `messages (${SEQ_SEARCH_PAGES} pages) back, the most a link loads: the oldest loaded row is seq `
    + `${found.first}. Scroll up (or Load older) to go on.`, "warning");
  return null;
}

/** A deep link's seq stays in the URL while the page itself scrolls to it, until the reader scrolls by hand. */
let linkHeld = false;

/** Text to mark in the row the next #seq link opens (a hit of the search across sessions: textsearch.mjs). */
let markNext = "";

/** Scrolls to `seq`, then marks the text a search hit asked for in that row. @param {number} seq */
async function scrollAndMark(seq) {
  const text = markNext;
  markNext = "";
  const key = await scrollToSeq(seq);
  if (text && key) await hooks.markQuery(text, key);
}

/** Opens a served session at row `seq` with `text` marked in it (#session=ID&seq=N).
 * @param {string} session @param {number} seq @param {string} text */
export function openAt(session, seq, text) {
  markNext = text;
  // The hit's seq is held from the start: the session's own first scroll (to its end) must not replace it in the
  // URL before the rows it names are loaded (a published session opens fast enough to race it).
  linkHeld = true;
  const hash = `#${new URLSearchParams({ session, seq: String(seq) })}`;
  if (location.hash === hash) void followHash(); // the same link again: no hashchange
  else location.hash = hash;
}

function seqInHash() {
  const params = hashParams();
  const seq = Number(params.get("seq"));
  return params.has("seq") && Number.isFinite(seq) ? seq : null;
}

/** Applies the hash: opens its session, then scrolls to its seq. */
export async function followHash() {
  hooks.followHash();
  // The link's seq is read now and held from the start: while the session opens, the page's own first scroll (to
  // its end) writes its row into the URL, which is not a link (read after the open, it held the URL at the end).
  const seq = seqInHash();
  linkHeld = seq !== null;
  const session = hashParams().get("session");
  if (session && session !== state.sessionId) {
    openSession(session, {
      onOpened: () => {
        if (seq !== null) void scrollAndMark(seq);
      },
    });
    return;
  }
  if (seq !== null && view.order.length) await scrollAndMark(seq);
}

/** A #seq=N the page was opened with (no session): it applies to the first local file opened. */
let fileDeepLink = hashParams().has("session") ? null : seqInHash();

/** Before a local file opens: the hash of what was shown before no longer applies. */
export function beforeFileOpens() {
  linkHeld = false;
  if (!location.hash) return;
  const shown = hashParams().get("view"); // the view tab (views.mjs) stays
  const hash = shown ? `#${new URLSearchParams({ view: shown })}` : "";
  history.replaceState(history.state, "", location.pathname + location.search + hash);
}

/** After a local file opened: the page's deep link #seq=N, once. */
export function afterFileOpened() {
  const seq = fileDeepLink;
  fileDeepLink = null;
  if (seq !== null) void scrollToSeq(seq);
}

// --- the URL follows the row in view; near the top, older messages load -------------------------------------

/** @type {ReturnType<typeof setTimeout> | null} */
let pending = null;

function followScroll() {
  pending = null;
  if (state.mode !== "live" && state.mode !== "file") return;
  if (linkHeld) return; // the shared link is kept until the reader moves
  if (document.documentElement.dataset.compare) return; // the comparison (compare.mjs) owns the URL while shown
  if (els.transcript.hidden) return; // another view is shown: the chat's place is not the reader's
  const el = view.firstInView();
  const seq = el ? Number(el.dataset.seq) : NaN;
  if (!Number.isFinite(seq)) return;
  const hash = hashFor(seq);
  if (hash !== location.hash) history.replaceState(history.state, "", hash);
  document.documentElement.dataset.urlSeq = String(seq);
}

let lastTop = 0;
let lastInput = -Infinity; // when the reader last scrolled by hand (wheel, touch, keys, the scroll bar)

function onScroll() {
  if (pending === null) pending = setTimeout(followScroll, URL_FOLLOW_MS);
  const doc = document.scrollingElement || document.documentElement;
  // Only the reader scrolling up loads more: never a short first screen, never the page's own scrolling.
  const up = doc.scrollTop < lastTop && performance.now() - lastInput < USER_SCROLL_MS;
  lastTop = doc.scrollTop;
  if (up && !els.transcript.hidden && !document.documentElement.dataset.compare && doc.scrollTop <= LOAD_OLDER_NEAR_TOP_PX && state.canLoadOlder && view.order.length && !els.older.hidden) {
    void loadOlder();
  }
}

export function initNavigation() {
  const byHand = () => { lastInput = performance.now(); linkHeld = false; };
  for (const type of ["wheel", "touchmove"]) window.addEventListener(type, byHand, { passive: true, capture: true });
  window.addEventListener("keydown", (event) => {
    if (["ArrowUp", "PageUp", "Home", " ", "k", "g"].includes(event.key)) byHand();
  }, { capture: true });
  window.addEventListener("pointerdown", (event) => {
    if (event.target === document.documentElement) byHand(); // the page's scroll bar
  }, { capture: true });
  window.addEventListener("scroll", onScroll, { passive: true });
  // What sits above the rows (the header, the row filters' bar) can change height with no scroll: the row at the
  // top is then another one, and the URL follows it as after a scroll.
  const above = new ResizeObserver(() => {
    if (pending === null) pending = setTimeout(followScroll, URL_FOLLOW_MS);
  });
  above.observe(els.transcript);
  for (const el of document.querySelectorAll(".app-header, #row-filters")) above.observe(el);
  window.addEventListener("hashchange", () => void followHash());
}
