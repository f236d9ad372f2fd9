// @ts-check
// The Chat view: an ordered list of node placeholders whose HTML is rendered lazily, by the worker's Python, for
// the nodes in or near the viewport (DESIGN rule 8). Collapsed rows (Think, tool, context) render their body
// when opened; long text renders in slices behind "Show more". Only HTML produced by our Python renderer is ever
// assigned with innerHTML; every other string goes through textContent.

import { NEAR_MARGIN } from "./config.mjs";

/**
 * A chat node as the worker describes it (no HTML): its key, kind, seq, revision and whether it is hidden.
 * @typedef {{key: string, kind: string, seq: number, rev: number, size?: number, role?: string, hidden?: boolean}} NodeMeta
 */

/** @param {NodeMeta} meta */
function estimateHeight(meta) {
  const size = Math.min(meta.size || 0, 20000);
  switch (meta.kind) {
    case "turn-tail": return 28;
    case "tool": case "event": case "turn-notice": case "retry-notice": return 44;
    case "input-message": return meta.role === "context" ? 44 : 56 + Math.ceil(size / 90) * 22;
    case "assistant-step": return 48 + Math.ceil(size / 90) * 22;
    default: return 48;
  }
}

export class TranscriptView {
  /**
   * @param {HTMLElement} container
   * @param {import("./bridge.mjs").Bridge} bridge
   * @param {{onError?: (err: Error) => void}} [options]
   */
  constructor(container, bridge, { onError = () => {} } = {}) {
    this.container = container;
    this.bridge = bridge;
    this.onError = onError;
    /** The row the reader was at when rows were added above it ("Load older"): it stays put while the rows
     * around it render, until the reader scrolls by hand (wheel, touch, keys).
     * @type {HTMLElement | null} */
    this.pinned = null;
    for (const type of ["wheel", "touchmove", "keydown", "mousedown"]) {
      window.addEventListener(type, () => { this.pinned = null; }, { passive: true, capture: true });
    }
    /** Called with each row after its HTML is filled in (the page appends its copy buttons).
     * @type {(meta: NodeMeta) => HTMLElement | null} */
    this.decorate = () => null;
    /** @type {Map<string, NodeMeta>} key → node meta from the worker */
    this.metas = new Map();
    /** @type {string[]} keys in display order */
    this.order = [];
    /** @type {Map<string, HTMLElement>} key → <article> */
    this.els = new Map();
    /** @type {Map<string, number>} key → rev of the HTML in the DOM */
    this.renderedRev = new Map();
    /** @type {Set<string>} keys whose element is in or near the viewport */
    this.near = new Set();
    /** @type {Set<string>} */
    this.wanted = new Set();
    this.showEvents = false;
    /** @type {Promise<void> | null} */
    this.inflight = null;
    /** @type {(() => void)[]} */
    this.idleWaiters = [];
    this.epoch = 0; // bumped by clear(): answers to requests made before it are dropped (keys repeat across windows)
    this.observer = new IntersectionObserver((entries) => this._observe(entries), { rootMargin: NEAR_MARGIN });
    container.addEventListener("toggle", (e) => this._onToggle(e), true);
    container.addEventListener("click", (e) => this._onClick(e));
  }

  // --- updates from the worker -------------------------------------------------------------------------------

  clear() {
    this.epoch += 1;
    this.pinned = null;
    for (const el of this.els.values()) this.observer.unobserve(el);
    this.container.replaceChildren();
    this.metas.clear();
    this.order = [];
    this.els.clear();
    this.renderedRev.clear();
    this.near.clear();
    this.wanted.clear();
  }

  /**
   * Applies an update ({replace, nodes, removed}); returns true when the set of nodes changed.
   * @param {{replace?: boolean, nodes?: NodeMeta[], removed?: string[]}} update
   */
  apply(update) {
    if (!update || !Array.isArray(update.nodes)) return false;
    if (update.replace) {
      const keep = new Set(update.nodes.map((n) => n.key));
      for (const key of [...this.metas.keys()]) if (!keep.has(key)) this._remove(key);
      for (const meta of update.nodes) this._upsert(meta, false);
      this.order = update.nodes.map((n) => n.key);
      this._reorder();
    } else {
      for (const key of update.removed || []) this._remove(key);
      for (const meta of update.nodes) this._upsert(meta, true);
    }
    this._refreshStale();
    return true;
  }

  /** @param {NodeMeta} meta */
  _article(meta) {
    const el = document.createElement("article");
    el.className = `node kind-${meta.kind} placeholder`;
    el.dataset.key = meta.key;
    el.tabIndex = -1;
    el.style.minHeight = `${estimateHeight(meta)}px`;
    return el;
  }

  /** @param {NodeMeta} meta @param {boolean} place */
  _upsert(meta, place) {
    const old = this.metas.get(meta.key);
    this.metas.set(meta.key, meta);
    let el = this.els.get(meta.key);
    if (!el) {
      el = this._article(meta);
      this.els.set(meta.key, el);
      if (place) this._insertOrdered(meta.key);
      this.observer.observe(el);
    } else if (place && old && old.seq !== meta.seq) {
      this.order.splice(this.order.indexOf(meta.key), 1);
      this._insertOrdered(meta.key);
    }
    el.dataset.seq = String(meta.seq);
    el.dataset.kind = meta.kind;
    if (meta.role) el.dataset.role = meta.role;
    el.hidden = !this._shown(meta);
  }

  /** @param {NodeMeta} meta */
  _shown(meta) {
    return this.showEvents || !meta.hidden; // meta.hidden: decided once, in Python (assembler.views)
  }

  /** @param {string} key */
  _insertOrdered(key) {
    const seq = this.meta(key).seq;
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.meta(this.order[mid]).seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, key);
    const next = lo + 1 < this.order.length ? this.el(this.order[lo + 1]) : null;
    this.container.insertBefore(this.el(key), next);
  }

  /** @param {string} key */
  meta(key) {
    const meta = this.metas.get(key);
    if (!meta) throw new Error(`no node ${key}`);
    return meta;
  }

  /** @param {string} key */
  el(key) {
    const el = this.els.get(key);
    if (!el) throw new Error(`no element for node ${key}`);
    return el;
  }

  _reorder() {
    let cursor = this.container.firstElementChild;
    for (const key of this.order) {
      const el = this.el(key);
      if (el === cursor) {
        cursor = cursor.nextElementSibling;
      } else {
        this.container.insertBefore(el, cursor);
      }
    }
  }

  /** @param {string} key */
  _remove(key) {
    const el = this.els.get(key);
    if (el) {
      this.observer.unobserve(el);
      el.remove();
    }
    this.els.delete(key);
    this.metas.delete(key);
    this.renderedRev.delete(key);
    this.near.delete(key);
    const i = this.order.indexOf(key);
    if (i >= 0) this.order.splice(i, 1);
  }

  /** @param {boolean} on */
  setShowEvents(on) {
    this.showEvents = on;
    for (const [key, meta] of this.metas) this.el(key).hidden = !this._shown(meta);
  }

  // --- lazy rendering -------------------------------------------------------------------------------------------

  /** @param {IntersectionObserverEntry[]} entries */
  _observe(entries) {
    for (const entry of entries) {
      const key = /** @type {HTMLElement} */ (entry.target).dataset.key ?? "";
      if (entry.isIntersecting) {
        this.near.add(key);
        if (this.renderedRev.get(key) !== this.metas.get(key)?.rev) this.wanted.add(key);
      } else {
        this.near.delete(key);
      }
    }
    this._pump();
  }

  _refreshStale() {
    for (const key of this.near) {
      const meta = this.metas.get(key);
      if (meta && this.renderedRev.get(key) !== meta.rev) this.wanted.add(key);
    }
    this._pump();
  }

  /**
   * Renders the given keys now (awaits the worker); used for the first screen.
   * @param {string[]} keys
   */
  async renderKeys(keys) {
    for (const key of keys) this.wanted.add(key);
    await this._pump();
    await this.idle();
  }

  /**
   * The keys whose element intersects the viewport (plus `margin` px), by layout, in display order.
   * @param {number} [margin]
   */
  visibleKeys(margin = 200) {
    const top = -margin;
    const bottom = window.innerHeight + margin;
    /** @type {string[]} */
    const out = [];
    for (const key of this.order) {
      const el = this.el(key);
      if (el.hidden) continue;
      const r = el.getBoundingClientRect();
      if (r.bottom >= top && r.top <= bottom) out.push(key);
    }
    return out;
  }

  /** The top of the reading area: the bottom of the sticky header. */
  readingTop() {
    const header = document.querySelector(".app-header");
    return header ? header.getBoundingClientRect().bottom : 0;
  }

  /**
   * The row that keeps its place when rows above it change: the first shown row that starts inside the reading
   * area (rows above it move it) and is not in `skip`, else the row covering the top.
   * @param {Set<string>} [skip]
   * @returns {HTMLElement | null}
   */
  anchorRow(skip) {
    const top = this.readingTop() - 0.5;
    for (const key of this.order) {
      const el = this.el(key);
      if (el.hidden || skip?.has(key)) continue;
      const r = el.getBoundingClientRect();
      if (r.top >= top) return r.top < window.innerHeight ? el : this.firstInView();
    }
    return this.firstInView();
  }

  /** The first shown row whose bottom is below the top of the reading area (the row the URL names), or null. */
  firstInView() {
    const top = this.readingTop();
    for (const key of this.order) {
      const el = this.el(key);
      if (el.hidden) continue;
      const r = el.getBoundingClientRect();
      if (r.bottom > top + 1) return r.top < window.innerHeight ? el : null;
    }
    return null;
  }

  /** @returns {Promise<void>} */
  _pump() {
    if (this.inflight) return this.inflight;
    const keys = [...this.wanted].filter((k) => this.metas.has(k) && !this.el(k).hidden);
    this.wanted.clear();
    if (!keys.length) {
      this._settle();
      return Promise.resolve();
    }
    const epoch = this.epoch;
    this.inflight = this.bridge.json("render", { keys }).then(
      (result) => { if (epoch === this.epoch) this._fill(result); },
      (err) => { this.onError(err); },
    ).finally(() => {
      this.inflight = null;
      return this._pump();
    });
    return this.inflight;
  }

  /**
   * Fills rendered rows in. The first row in view stays where it is on screen (rows rendered above it change
   * height; the browser's own scroll anchoring gives up when the anchor's size changes).
   * @param {{html: Record<string, string>, revs: Record<string, number>}} result
   */
  _fill({ html, revs }) {
    const filling = new Set(Object.keys(html)); // a row being filled keeps its top, not its height
    const pinned = this.pinned?.isConnected && !this.pinned.hidden ? this.pinned : null;
    const anchor = pinned || this.anchorRow(filling);
    const top = anchor ? anchor.getBoundingClientRect().top : 0;
    this._fillRows(html, revs);
    if (anchor?.isConnected) {
      const moved = anchor.getBoundingClientRect().top - top;
      if (Math.abs(moved) > 0.5) window.scrollBy(0, moved);
    }
  }

  /**
   * @param {Record<string, string>} html
   * @param {Record<string, number>} revs
   */
  _fillRows(html, revs) {
    for (const [key, markup] of Object.entries(html)) {
      const el = this.els.get(key);
      if (!el) continue;
      const open = [...el.querySelectorAll("details[open]")].map((d) => /** @type {HTMLElement} */ (d).dataset.block);
      el.innerHTML = markup; // produced by assembler.render (escaped, sanitised markdown)
      const meta = this.metas.get(key);
      const tools = meta ? this.decorate(meta) : null;
      if (tools) el.append(tools);
      el.classList.remove("placeholder");
      el.style.minHeight = "";
      this.renderedRev.set(key, revs[key]);
      for (const block of open) {
        const d = el.querySelector(`details[data-block="${CSS.escape(block ?? "")}"]`);
        if (d instanceof HTMLDetailsElement) d.open = true; // the toggle handler renders its body again
      }
      if (this.metas.get(key)?.rev !== revs[key]) this.wanted.add(key);
    }
  }

  _settle() {
    if (this.inflight || this.wanted.size) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves once no render request is pending. @returns {Promise<void>} */
  idle() {
    if (!this.inflight && !this.wanted.size) return Promise.resolve();
    return new Promise((resolve) => { this.idleWaiters.push(resolve); });
  }

  // --- collapsed bodies and "Show more" -------------------------------------------------------------------------

  /** @param {Event} event */
  async _onToggle(event) {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open) return;
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
      if (epoch === this.epoch && body.isConnected) body.innerHTML = html; // produced by assembler.render
    } catch (err) {
      this.onError(/** @type {Error} */ (err));
    } finally {
      body.classList.remove("loading");
    }
  }

  /** @param {MouseEvent} event */
  async _onClick(event) {
    const button = /** @type {Element} */ (event.target).closest?.("button.show-more");
    if (!(button instanceof HTMLButtonElement) || !this.container.contains(button)) return;
    button.disabled = true;
    const epoch = this.epoch;
    try {
      const { html } = await this.bridge.json("renderMore", {
        key: button.dataset.key, block: Number(button.dataset.block), offset: Number(button.dataset.offset),
      });
      if (epoch !== this.epoch || !button.isConnected) return;
      button.insertAdjacentHTML("beforebegin", html); // produced by assembler.render
      button.remove();
    } catch (err) {
      button.disabled = false;
      this.onError(/** @type {Error} */ (err));
    }
  }

  // --- navigation -------------------------------------------------------------------------------------------------

  shownKeys() {
    return this.order.filter((k) => !this.el(k).hidden);
  }

  /** @param {string} key */
  element(key) {
    return this.els.get(key) || null;
  }

  /**
   * Moves keyboard focus by `delta` shown nodes from the focused one (or from the top of the viewport).
   * @param {number} delta
   */
  focusBy(delta) {
    const keys = this.shownKeys();
    if (!keys.length) return;
    const current = document.activeElement?.closest?.("article[data-key]");
    let i = current instanceof HTMLElement ? keys.indexOf(current.dataset.key ?? "") : -1;
    if (i < 0) {
      const visible = this.visibleKeys(0).filter((k) => !this.el(k).hidden);
      i = visible.length ? keys.indexOf(delta > 0 ? visible[0] : visible[visible.length - 1]) - delta : -1;
    }
    const next = Math.max(0, Math.min(keys.length - 1, i + delta));
    this.focusKey(keys[next]);
  }

  /**
   * @param {string} key
   * @param {{block?: ScrollLogicalPosition}} [options]
   */
  focusKey(key, { block = "nearest" } = {}) {
    this.pinned = null; // going somewhere on purpose
    const el = this.els.get(key);
    if (!el) return;
    el.scrollIntoView({ block });
    el.focus({ preventScroll: true });
  }

  scrollToEnd() {
    this.pinned = null;
    const keys = this.shownKeys();
    if (keys.length) this.el(keys[keys.length - 1]).scrollIntoView({ block: "end" });
  }

  /** @param {number} [slack] */
  atEnd(slack = 48) {
    const doc = document.scrollingElement || document.documentElement;
    return doc.scrollHeight - doc.scrollTop - window.innerHeight <= slack;
  }
}
