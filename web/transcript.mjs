// @ts-check
// The Chat view: an ordered list of node metadata laid out by a virtual list (vlist.mjs): only the rows near the
// viewport exist in the DOM, and their HTML is rendered lazily, by the worker's Python, when they are attached
// (DESIGN rule 8); rows far away are removed, so the DOM stays bounded on any session. Recently rendered HTML is
// kept (by revision) so scrolling back does not ask the worker again. Collapsed rows (Think, tool, context) render
// their body when opened; long text renders in slices behind "Show more". Only HTML produced by our Python renderer
// is ever assigned with innerHTML; every other string goes through textContent.
import { VirtualList } from "./vlist.mjs";
import { linkChildren } from "./childlinks.mjs";
import { summaryText } from "./summary.mjs";

/**
 * A chat node as the worker describes it (no HTML).
 * @typedef {{key: string, kind: string, seq: number, rev: number, size?: number, role?: string, hidden?: boolean,
 *   turn?: number | null}} NodeMeta
 */

const HTML_CACHE_ROWS = 600; // rendered rows kept for scrolling back

/** @param {NodeMeta | undefined} meta */
function estimateHeight(meta) {
  if (!meta) return 48;
  const size = Math.min(meta.size || 0, 20000);
  switch (meta.kind) {
    case "turn-tail": return 28;
    case "tool": case "event": case "turn-notice": case "retry-notice": return 44;
    case "input-message": return meta.role === "context" ? 44 : 56 + Math.ceil(size / 90) * 22;
    case "assistant-step": return 48 + Math.ceil(size / 90) * 22;
    default: return 48;
  }
}

// The viewport y below the sticky page header: the reader's row is the first one reaching below it.
function headerBottom() {
  const header = document.querySelector(".app-header");
  return header ? header.getBoundingClientRect().bottom : 0;
}

export class TranscriptView {
  /**
   * @param {HTMLElement} container
   * @param {any} bridge
   * @param {{onError?: (err: Error) => void, onFilled?: (article: HTMLElement) => void}} [options]
   */
  constructor(container, bridge, { onError = () => {}, onFilled = () => {} } = {}) {
    /** A local folder's sessions, when the open file is one of them (app.mjs sets it): its links open locally.
     * @type {{current: () => any, entries: () => any[], open: (entry: any) => void} | null} */
    this.localLinks = null;
    this.container = container;
    this.bridge = bridge;
    this.onError = onError;
    this.onFilled = onFilled; // (article) after its HTML (or an opened section) changed: search marks, records
    // Called with each row's meta after its HTML is filled in; returns an element to append (the copy buttons).
    /** @type {(meta: any) => HTMLElement | null} */
    this.decorate = (_meta) => null;
    this.metas = new Map(); // key → node meta from the worker
    /** @type {string[]} keys in display order */
    this.order = [];
    /** @type {string[]} the keys of `order` that are shown (events only with "Events") */
    this.shown = [];
    this.els = new Map(); // key → <article>, for the rows in the DOM only
    this.renderedRev = new Map(); // key → rev of the HTML in its <article>
    this.cache = new Map(); // key → {rev, html}, most recently filled last
    this.wanted = new Set();
    this.showEvents = false;
    /** @type {((meta: NodeMeta) => boolean) | null} the row filters (filters.mjs): false hides a row */
    this.rowFilter = null;
    /** @type {(key: string) => boolean} a row the filters hide is asked for (a deep link): true shows it */
    this.onHiddenKey = () => false;
    this.inflight = null;
    /** @type {(() => void)[]} */
    this.idleWaiters = [];
    /** @type {{turnCount?: number, usage?: any, model?: string | null} | null} the whole session's figures */
    this.whole = null;
    /** @type {any} the last session summary shown, and whether the window held only the newest part */
    this.lastSummary = null;
    this.partial = false;
    this.epoch = 0; // bumped by clear(): answers to requests made before it are dropped (keys repeat across windows)
    this.list = new VirtualList(container, {
      key: (i) => this.shown[i],
      estimate: (i) => estimateHeight(this.metas.get(this.shown[i])),
      create: (i) => this._create(this.shown[i]),
      release: (key) => { this.els.delete(key); this.renderedRev.delete(key); },
      inset: () => headerBottom(),
    });
    container.addEventListener("toggle", (e) => this._onToggle(e), true);
    // A click on a section's summary (before it opens or closes): the reader's row stays where it is on screen.
    container.addEventListener("click", (e) => {
      const summary = e.target instanceof Element ? e.target.closest("summary") : null;
      const row = summary?.closest("article[data-key]");
      if (row instanceof HTMLElement && container.contains(row)) this.hold(row);
    }, true);
    container.addEventListener("click", (e) => this._onClick(e));
  }

  // --- updates from the worker -------------------------------------------------------------------------------

  clear() {
    this.epoch += 1;
    this.metas.clear();
    this.order = [];
    this.shown = [];
    this.cache.clear();
    this.wanted.clear();
    this.list.heights.clear();
    this.list.setCount(0);
    this.whole = null;
    this._showSummary(null);
    /** @type {Promise<any[]> | null} the served list, asked again for the next session */
    this.served = null;
  }

  // The session totals element: in the page header when there is one, else just above the transcript.
  _summaryElement() {
    let el = document.getElementById("session-summary");
    if (!el) {
      el = document.createElement("span");
      el.id = "session-summary";
      el.className = "session-summary";
      const title = document.getElementById("session-title");
      if (title) title.after(el);
      else this.container.before(el);
    }
    return el;
  }

  /**
   * The whole session's figures (a served session's list entry, a local file's facts), shown in the header while
   * the window holds only its newest part; null forgets them.
   * @param {{turnCount?: number, usage?: any, model?: string | null} | null} facts
   */
  setWhole(facts) {
    this.whole = facts;
    if (this.lastSummary) this._showSummary(this.lastSummary, this.partial);
  }

  /** @param {any} summary @param {boolean} [partial] the window holds only the newest part */
  _showSummary(summary, partial = false) {
    this.lastSummary = summary;
    this.partial = partial;
    const text = summaryText(summary, this.whole, partial);
    if (!text && !document.getElementById("session-summary")) return;
    const el = this._summaryElement();
    el.textContent = text;
    el.title = text; // the header shows one line, cut with an ellipsis when narrow: the whole line on hover
    el.hidden = !text;
    if (summary) el.dataset.recordedTimes = String(Boolean(summary.recordedTimes));
  }

  // Applies an update ({replace, nodes, removed}); returns true when the set of nodes changed.
  /** @param {{replace?: boolean, nodes?: NodeMeta[], removed?: string[], summary?: any, hasMore?: boolean}} update */
  apply(update) {
    if (!update || !Array.isArray(update.nodes)) return false;
    if (update.summary) this._showSummary(update.summary, Boolean(update.hasMore));
    if (update.replace) {
      const keep = new Set(update.nodes.map((/** @type {NodeMeta} */ n) => n.key));
      for (const key of [...this.metas.keys()]) if (!keep.has(key)) this._forget(key);
      for (const meta of update.nodes) this.metas.set(meta.key, meta);
      this.order = update.nodes.map((/** @type {NodeMeta} */ n) => n.key);
    } else {
      for (const key of update.removed || []) this._forget(key);
      for (const meta of update.nodes) {
        const old = this.metas.get(meta.key);
        this.metas.set(meta.key, meta);
        if (!old) this._insertOrdered(meta.key);
        else if (old.seq !== meta.seq) {
          this.order.splice(this.order.indexOf(meta.key), 1);
          this._insertOrdered(meta.key);
        }
      }
    }
    this._reshow();
    this._refreshStale();
    return true;
  }

  /** @param {string} key */
  _forget(key) {
    this.metas.delete(key);
    this.cache.delete(key);
    const i = this.order.indexOf(key);
    if (i >= 0) this.order.splice(i, 1);
  }

  /** @param {string} key */
  _insertOrdered(key) {
    const seq = this.metas.get(key).seq;
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.metas.get(this.order[mid]).seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, key);
  }

  /** @param {NodeMeta} meta */
  _shown(meta) {
    // meta.hidden: decided once, in Python (assembler.views); the filters' choice after it
    return (this.showEvents || !meta.hidden) && (!this.rowFilter || this.rowFilter(meta));
  }

  /** The filters changed: lay out the rows they show. */
  refilter() {
    this._reshow();
  }

  _reshow() {
    this.shown = this.order.filter((k) => this._shown(this.metas.get(k)));
    this.list.prune(new Set(this.shown));
    this.list.setCount(this.shown.length);
  }

  /** @param {boolean} on */
  setShowEvents(on) {
    this.showEvents = on;
    this._reshow();
  }

  /** @param {string} key */
  _create(key) {
    const meta = this.metas.get(key);
    const el = document.createElement("article");
    el.className = `node kind-${meta.kind} placeholder`;
    el.dataset.key = key;
    el.dataset.seq = String(meta.seq);
    el.dataset.kind = meta.kind;
    if (meta.role) el.dataset.role = meta.role;
    if (meta.turn !== undefined && meta.turn !== null) el.dataset.turn = String(meta.turn);
    el.tabIndex = -1;
    this.els.set(key, el);
    const cached = this.cache.get(key);
    if (cached && cached.rev === meta.rev) {
      this._set(el, key, cached.html, cached.rev);
    } else {
      el.style.minHeight = `${estimateHeight(meta)}px`;
      this.wanted.add(key);
      queueMicrotask(() => this._pump());
    }
    return el;
  }

  // --- lazy rendering -------------------------------------------------------------------------------------------

  _refreshStale() {
    for (const key of this.els.keys()) {
      const meta = this.metas.get(key);
      if (meta && this.renderedRev.get(key) !== meta.rev) this.wanted.add(key);
    }
    this._pump();
  }

  // Renders the given keys now (awaits the worker); a key not in the DOM is rendered into the cache.
  /** @param {string[]} keys */
  async renderKeys(keys) {
    for (const key of keys) this.wanted.add(key);
    await this._pump();
    await this.idle();
  }

  // The keys of the rows in the DOM that intersect the viewport (plus `margin` px), in display order.
  visibleKeys(margin = 200) {
    const top = -margin;
    const bottom = window.innerHeight + margin;
    const out = [];
    for (let i = this.list.first; i < this.list.last; i++) {
      const key = this.shown[i];
      const el = this.els.get(key);
      if (!el) continue;
      const r = el.getBoundingClientRect();
      if (r.bottom >= top && r.top <= bottom) out.push(key);
    }
    return out;
  }

  _pump() {
    if (this.inflight) return this.inflight;
    const keys = [];
    for (const k of this.wanted) {
      const meta = this.metas.get(k);
      if (!meta) continue;
      const cached = this.cache.get(k);
      if (cached && cached.rev === meta.rev) { // rendered before: no need to ask the worker
        const el = this.els.get(k);
        if (el && this.renderedRev.get(k) !== meta.rev) this._set(el, k, cached.html, cached.rev);
        continue;
      }
      keys.push(k);
    }
    this.wanted.clear();
    if (!keys.length) {
      this._settle();
      return Promise.resolve();
    }
    const epoch = this.epoch;
    this.inflight = this.bridge.json("render", { keys }).then(
      (/** @type {any} */ result) => { if (epoch === this.epoch) this._fill(result); },
      (/** @type {Error} */ err) => { this.onError(err); },
    ).finally(() => {
      this.inflight = null;
      return this._pump();
    });
    return this.inflight;
  }

  // HTML rendered ahead (a loaded page's first screen): kept for the rows about to be attached.
  /** @param {{html: Record<string, string>, revs: Record<string, number>}} result */
  prime(result) { this._fill(result); }

  /** @param {{html?: Record<string, string>, revs?: Record<string, number>, error?: {message?: string}}} result */
  _fill({ html, revs, error }) {
    // the worker's last line of defence answers an unexpected Python error with {error} instead of rows
    if (!html || !revs) return this.onError(new Error(error?.message || "the worker sent no rows"));
    for (const [key, markup] of Object.entries(html)) {
      this.cache.delete(key);
      this.cache.set(key, { rev: revs[key], html: markup });
      const el = this.els.get(key);
      if (el) this._set(el, key, markup, revs[key]);
      // Asked again only when the page already knows a newer revision than the worker rendered. A newer one from
      // the worker means the page's update is on its way (its refresh renders what is stale then): asking again
      // now would repeat the same answer for as long as that update takes, or for ever if it never comes.
      const known = this.metas.get(key)?.rev;
      if (el && known !== undefined && known > revs[key]) this.wanted.add(key);
    }
    while (this.cache.size > HTML_CACHE_ROWS) this.cache.delete(this.cache.keys().next().value);
  }

  /** @param {HTMLElement} el @param {string} key @param {string} markup @param {number} rev */
  _set(el, key, markup, rev) {
    if (el.isConnected) this.list.noteScroll();
    const open = [...el.querySelectorAll("details[open]")].map((d) => /** @type {HTMLElement} */ (d).dataset.block);
    el.innerHTML = markup; // produced by assembler.render (escaped, sanitised markdown)
    el.classList.remove("placeholder");
    el.style.minHeight = "";
    this.renderedRev.set(key, rev);
    const meta = this.metas.get(key);
    const tools = meta ? this.decorate(meta) : null;
    if (tools) el.append(tools);
    for (const block of open) {
      const d = el.querySelector(`details[data-block="${CSS.escape(block ?? "")}"]`);
      if (d instanceof HTMLDetailsElement) d.open = true; // the toggle handler renders its body again
    }
    this.onFilled(el);
    if (el.querySelector(".child-link:empty")) void linkChildren(this, el);
  }

  _settle() {
    if (this.inflight || this.wanted.size) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  // Resolves once no render request is pending.
  idle() {
    if (!this.inflight && !this.wanted.size) return Promise.resolve();
    return new Promise((resolve) => { this.idleWaiters.push(() => resolve(undefined)); });
  }

  // --- collapsed bodies and "Show more" -------------------------------------------------------------------------

  /** @param {Event} event */
  _onToggle(event) {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open) return;
    void this._loadSection(details);
  }

  // Renders the body of an opened collapsed row (once); resolves when it is in place.
  /** @param {HTMLDetailsElement} details */
  async _loadSection(details) {
    const body = details.querySelector(":scope > [data-pending]");
    const article = details.closest("article[data-key]");
    if (!(body instanceof HTMLElement) || !(article instanceof HTMLElement)) return;
    body.removeAttribute("data-pending");
    body.classList.add("loading");
    const epoch = this.epoch;
    try {
      const { html } = await this.bridge.json("renderSection", {
        key: article.dataset.key, block: Number(body.dataset.thinkBlock || 0),
      });
      if (epoch === this.epoch && body.isConnected) {
        this.list.noteScroll();
        body.innerHTML = html; // produced by assembler.render
        this.onFilled(article);
      }
    } catch (err) {
      this.onError(/** @type {Error} */ (err));
    } finally {
      body.classList.remove("loading");
    }
  }

  // Opens the collapsed parts of a row that hold text blocks `blocks` (a search match) and renders their bodies.
  /** @param {string} key @param {string[]} blocks */
  async openBlocks(key, blocks) {
    const el = this.els.get(key);
    if (!el) return;
    const loads = [];
    for (const block of blocks) {
      const d = el.querySelector(`details[data-block="${block}"]`) ||
        (["tool", "command", "compaction"].includes(el.dataset.kind) ? el.querySelector("details") : null);
      if (!d || d.open) continue;
      d.open = true;
      loads.push(this._loadSection(d));
    }
    await Promise.all(loads);
  }

  /** @param {MouseEvent} event */
  async _onClick(event) {
    const button = event.target instanceof Element ? event.target.closest("button.show-more") : null;
    if (!(button instanceof HTMLButtonElement) || !this.container.contains(button)) return;
    button.disabled = true;
    const epoch = this.epoch;
    try {
      const { html } = await this.bridge.json("renderMore", {
        key: button.dataset.key, block: Number(button.dataset.block), offset: Number(button.dataset.offset),
      });
      if (epoch !== this.epoch || !button.isConnected) return;
      const article = button.closest("article[data-key]");
      button.insertAdjacentHTML("beforebegin", html); // produced by assembler.render
      button.remove();
      if (article instanceof HTMLElement) this.onFilled(article);
    } catch (err) {
      button.disabled = false;
      this.onError(/** @type {Error} */ (err));
    }
  }

  // --- navigation -------------------------------------------------------------------------------------------------

  shownKeys() { return this.shown; }

  /** @param {string} key */
  element(key) { return this.els.get(key) || null; }

  // The rows in the DOM, in display order.
  attached() {
    const out = [];
    for (let i = this.list.first; i < this.list.last; i++) {
      const el = this.els.get(this.shown[i]);
      if (el) out.push(el);
    }
    return out;
  }

  // The first attached row whose bottom is below the page header (the row the reader is at), or null.
  firstInView() {
    const top = headerBottom();
    for (const el of this.attached()) {
      if (el.hidden) continue;
      const r = el.getBoundingClientRect();
      if (r.bottom > top + 1) return r.top < window.innerHeight ? el : null;
    }
    return null;
  }

  // Moves keyboard focus by `delta` shown nodes from the focused one (or from the top of the viewport).
  /** @param {number} delta */
  focusBy(delta) {
    const keys = this.shown;
    if (!keys.length) return;
    const current = document.activeElement?.closest?.("article[data-key]");
    let i = current instanceof HTMLElement ? keys.indexOf(current.dataset.key ?? "") : -1;
    if (i < 0) {
      const visible = this.visibleKeys(0);
      i = visible.length ? keys.indexOf(delta > 0 ? visible[0] : visible[visible.length - 1]) - delta : -1;
    }
    const next = Math.max(0, Math.min(keys.length - 1, i + delta));
    this.focusKey(keys[next]);
  }

  // Scrolls a row into view (attaching it) and focuses it; returns its element.
  /**
   * @param {string} key
   * @param {{block?: ScrollLogicalPosition}} [options]
   */
  focusKey(key, { block = "nearest" } = {}) {
    const el = this.revealKey(key, { block });
    el?.focus({ preventScroll: true });
    return el;
  }

  // Scrolls a row into view (attaching it) without moving the focus; returns its element.
  /**
   * @param {string} key
   * @param {{block?: ScrollLogicalPosition}} [options]
   */
  revealKey(key, { block = "nearest" } = {}) {
    if (!this.shown.includes(key) && this.metas.has(key) && this.onHiddenKey(key)) this._reshow();
    return this.list.scrollToIndex(this.shown.indexOf(key), block);
  }

  scrollToEnd() {
    if (this.shown.length) this.list.scrollToIndex(this.shown.length - 1, "end");
  }

  /** The reader is about to open or close a section of this row: it keeps its place. @param {HTMLElement} row */
  hold(row) {
    this.list.hold(row);
  }

  /** The reader follows the end: the list is pinned there (see vlist.mjs), or the page is at its end now. */
  atEnd(slack = 48) {
    return this.list.pinned || this.list.atEnd(slack);
  }
}
