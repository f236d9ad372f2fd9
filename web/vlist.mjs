// @ts-check
// A virtual list over the document's scroll: only the rows within `overscan` pixels of the viewport are in the DOM;
// the rest are two spacers whose heights come from each row's measured height (or its estimate until it has been
// seen). Rows far from the viewport are removed, not hidden, so the DOM stays bounded at any scroll position.
//
// The reader's row keeps its place on screen. The list marks it (its key and viewport top) whenever the page is
// scrolled by anyone else, when it scrolls to a row itself, and when the rows change (the first row whose bottom is
// below the reading line, `inset`: the sticky header's bottom). Every update measures the rows it attaches at once
// (one layout) and puts the marked row back before the frame is painted, so rows attached above it at heights other
// than their estimates, or inserted above it ("Load older"), do not move it; when rows change height later (their
// HTML arrives, a section opens), the ResizeObserver takes the new heights and puts it back again. The list does
// this itself, so the browser's own scroll anchoring is off in it (it picked other nodes and corrected twice).
//
// A reader at the end stays at the end instead (live follow): the list is *pinned* when a scroll it did not make
// leaves the page at the end or when it scrolls to the last row's end itself, and only a scroll it did not make
// going up and leaving the page off its end (or its own scroll to another row) unpins it. Rows changing height never
// do, nor the browser moving the page down (the end has moved further by then): while pinned, every update and every
// height change ends with the end in view, so content laid out late (rows attached, sections opened, blocks the
// browser skipped while off screen) cannot take the reader off the end. Opening or closing a section of a row is
// reading that row: it keeps its place (`hold`), and the list follows the end again once the reader is back there.

/**
 * @typedef {{
 *   key: (i: number) => string,
 *   estimate: (i: number) => number,
 *   create: (i: number) => HTMLElement,
 *   release?: (key: string, el: HTMLElement) => void,
 *   overscan?: number,
 *   inset?: () => number,
 * }} ListOptions
 */

export class VirtualList {
  /**
   * @param {HTMLElement} container  the element that holds the rows (nothing else is put in it)
   * @param {ListOptions} options
   */
  constructor(container, options) {
    this.container = container;
    this.opts = options;
    this.overscan = options.overscan ?? 1200;
    /** the viewport y of the reading line: rows above it are covered (by a sticky header) */
    this.inset = options.inset ?? (() => 0);
    this.count = 0;
    /** @type {Map<string, number>} measured heights by key (kept across updates) */
    this.heights = new Map();
    /** @type {Map<string, HTMLElement>} attached rows by key */
    this.attached = new Map();
    /** @type {Float64Array} offsets[i] = top of row i; offsets[count] = total height */
    this.offsets = new Float64Array(1);
    this.dirty = true;
    this.first = 0; // attached range [first, last)
    this.last = 0;
    this.top = document.createElement("div");
    this.bottom = document.createElement("div");
    this.top.className = "vlist-spacer";
    this.bottom.className = "vlist-spacer";
    this.top.setAttribute("aria-hidden", "true");
    this.bottom.setAttribute("aria-hidden", "true");
    container.replaceChildren(this.top, this.bottom);
    // The list keeps the reader's row in place itself: no scroll anchoring in it, nor in the page (the browser would
    // pick a node outside the list, such as a button after it, and move the page when rows change height).
    container.style.overflowAnchor = "none";
    document.documentElement.style.overflowAnchor = "none";
    this.frame = 0;
    this.suspended = false;
    this.resize = new ResizeObserver((entries) => this._resized(entries));
    this.pinned = false; // the reader is at the end: growing rows keep the end in view (live follow)
    this._onScroll = () => {
      this._scrolledByOthers();
      this.schedule();
    };
    window.addEventListener("scroll", this._onScroll, { passive: true });
    window.addEventListener("resize", this._onScroll, { passive: true });
    /** @type {{key: string, top: number} | null} the reader's row and its viewport top as last shown */
    this.mark = null;
    this.ownY = -1; // scrollY after the list's own last scroll
  }

  /** Whether the page is scrolled to (within `slack` pixels of) its end now. @param {number} [slack] */
  atEnd(slack = 48) {
    const doc = document.scrollingElement || document.documentElement;
    return doc.scrollHeight - window.scrollY - window.innerHeight <= slack;
  }

  /** Scrolls to the end of the page (the list's own scroll). */
  _toEnd() {
    const doc = document.scrollingElement || document.documentElement;
    const y = Math.max(0, doc.scrollHeight - window.innerHeight);
    if (Math.abs(window.scrollY - y) > 0.5) this._scrollTo(y);
    else this.ownY = window.scrollY;
  }

  /** Rows changed (count, order or membership); keeps the first row on screen where it was, or the end in view while
   * the list is pinned. Attached rows whose key is still within the new range stay attached (not re-created). */
  /** @param {number} count */
  setCount(count) {
    const anchor = this.pinned ? null : this._markNow() ?? this._anchor();
    this.count = count;
    this.first = Math.min(this.first, count);
    this.last = Math.min(this.last, count);
    this.dirty = true;
    this.update(anchor);
    if (!this.container.getClientRects().length) this._attach(0, 0); // hidden: keep nothing attached
  }

  /** Removes every attached row (their content is stale); the next update creates them again. */
  detachAll() {
    for (const [key, el] of [...this.attached]) {
      this.resize.unobserve(el);
      el.remove();
      this.attached.delete(key);
      this.opts.release?.(key, el);
    }
  }

  /** When the page was scrolled by the reader or by someone else (scrollIntoView) since the list's own last scroll,
   * the row they see now is the one to keep. Checked on the scroll event and before the list moves anything itself:
   * Chromium may run an animation frame before it dispatches the scroll event of a programmatic scroll. */
  _scrolledByOthers() {
    if (Math.abs(window.scrollY - this.ownY) <= 1) return;
    // Only someone else's scroll says where the reader wants to be: a page left at its end is followed, and a reader
    // following the end leaves it only by scrolling up (the browser may move the page down by itself, and rows may
    // have grown since the scroll, so "not at the end now" alone is not enough).
    this.pinned = this.atEnd() || (this.pinned && window.scrollY > this.ownY);
    this.ownY = window.scrollY;
    this.mark = this.container.getClientRects().length ? this._anchor() : null;
  }

  /** Call before changing the content of attached rows: a scroll someone else made since the list last looked (its
   * event may not have been dispatched yet) is taken with the layout the reader saw, not the changed one. */
  noteScroll() {
    if (this.container.isConnected) this._scrolledByOthers();
  }

  /** The reader acts on a row (opens or closes a section of it): the row keeps its place on screen as it changes
   * height, at the end too (the list stops following the end until the reader goes back to it).
   * @param {HTMLElement} el */
  hold(el) {
    const key = el.dataset.key;
    if (!key || this.attached.get(key) !== el) return;
    this._scrolledByOthers();
    this.pinned = false;
    this.mark = { key, top: el.getBoundingClientRect().top };
  }

  /** The mark, while its row is attached and shown. */
  _markNow() {
    const el = this.mark ? this.attached.get(this.mark.key) : undefined;
    return el && !el.hidden ? this.mark : null;
  }

  /** The key and viewport top of the reader's row (the first attached row whose bottom is below the reading line);
   * with `onScreen`, only a row that reaches into the viewport (after a jump the attached rows may be far away). */
  /** @param {boolean} [onScreen] */
  _anchor(onScreen = false) {
    const line = this.inset();
    for (let el = this.top.nextElementSibling; el && el !== this.bottom; el = el.nextElementSibling) {
      const key = /** @type {HTMLElement} */ (el).dataset.key;
      if (!key || /** @type {HTMLElement} */ (el).hidden) continue;
      const r = el.getBoundingClientRect();
      if (r.bottom > line + 1) return onScreen && r.top >= window.innerHeight ? null : { key, top: r.top };
    }
    return null;
  }

  /** Reads the height of every attached row now (one layout); returns true when one differs from the list's. */
  _measure() {
    let changed = false;
    for (const [key, el] of this.attached) {
      const h = el.getBoundingClientRect().height;
      if (h > 0 && this.heights.get(key) !== h) {
        this.heights.set(key, h);
        changed = true;
      }
    }
    if (changed) this.dirty = true;
    return changed;
  }

  /** @param {number} i */
  _height(i) {
    return this.heights.get(this.opts.key(i)) ?? this.opts.estimate(i);
  }

  _layout() {
    if (!this.dirty) return;
    const n = this.count;
    if (this.offsets.length !== n + 1) this.offsets = new Float64Array(n + 1);
    let y = 0;
    for (let i = 0; i < n; i++) {
      this.offsets[i] = y;
      y += this._height(i);
    }
    this.offsets[n] = y;
    this.dirty = false;
  }

  /** The first index whose bottom lies below y. */
  /** @param {number} y */
  _indexAt(y) {
    const o = this.offsets;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (o[mid + 1] <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of a key, or -1 (linear: call with care). */
  /** @param {string} key */
  indexOf(key) {
    for (let i = 0; i < this.count; i++) if (this.opts.key(i) === key) return i;
    return -1;
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.update();
    });
  }

  /** @param {number} y */
  _scrollTo(y) {
    window.scrollTo(0, y);
    this.ownY = window.scrollY;
  }

  _containerTop() {
    return this.container.getBoundingClientRect().top + window.scrollY;
  }

  /**
   * Attaches the rows near the viewport and detaches the rest. The rows just attached are measured at once (one
   * layout), so the list's heights are the heights on screen from here on, and the reader's row is put back where it
   * was (or where `anchor` says) before the frame is painted.
   * @param {{key: string, top: number} | null} [anchor] keep this row at this viewport top (default: the reader's
   *   row where it is now)
   */
  update(anchor = null) {
    if (this.suspended || !this.container.isConnected || !this.container.getClientRects().length) return;
    this._layout();
    if (!anchor) this._scrolledByOthers(); // (may unpin: a scroll whose event has not been dispatched yet)
    if (anchor) {
      const at = this.indexOf(anchor.key);
      // near enough to attach the right rows (the old spacers may clamp it); corrected below from the element
      if (at >= 0) this._scrollTo(this._containerTop() + this.offsets[at] - anchor.top);
    } else if (this.pinned) {
      this._setSpacers(); // the page's end as the list knows it now, before the rows there are attached
      this._toEnd();
    } else {
      anchor = this._markNow() ?? this._anchor(true);
    }
    this._attachInView();
    if (this._measure()) {
      this._layout();
      this._setSpacers();
      this.schedule(); // the rows in reach may differ a little now
    }
    if (this.pinned && !anchor) {
      this._toEnd();
      this.mark = this._anchor(true);
    } else {
      this._restore(anchor);
    }
  }

  /** Puts the anchor's row back at the anchor's viewport top (when it is attached) and marks it as shown there;
   * without one, marks the reader's row where it is. @param {{key: string, top: number} | null} anchor */
  _restore(anchor) {
    const el = anchor ? this.attached.get(anchor.key) : undefined;
    if (!anchor || !el || el.hidden) {
      this.mark = this._anchor(true);
      return;
    }
    const moved = el.getBoundingClientRect().top - anchor.top;
    if (Math.abs(moved) > 0.5) this._scrollTo(window.scrollY + moved);
    this.mark = { key: anchor.key, top: anchor.top };
  }

  /** Attaches the rows within `overscan` of the viewport. */
  _attachInView() {
    const base = this._containerTop();
    const viewTop = window.scrollY - base - this.overscan;
    const viewBottom = window.scrollY - base + window.innerHeight + this.overscan;
    const first = Math.min(this._indexAt(Math.max(0, viewTop)), this.count);
    let last = first;
    while (last < this.count && this.offsets[last] < viewBottom) last++;
    this._attach(first, last);
  }

  /** @param {number} first @param {number} last */
  _attach(first, last) {
    this._layout();
    const keep = new Set();
    for (let i = first; i < last; i++) keep.add(this.opts.key(i));
    for (const [key, el] of [...this.attached]) {
      if (keep.has(key)) continue;
      this.resize.unobserve(el);
      el.remove();
      this.attached.delete(key);
      this.opts.release?.(key, el);
    }
    let cursor = this.top.nextSibling;
    for (let i = first; i < last; i++) {
      const key = this.opts.key(i);
      let el = this.attached.get(key);
      if (!el) {
        el = this.opts.create(i);
        this.attached.set(key, el);
        this.resize.observe(el);
      }
      if (el !== cursor) this.container.insertBefore(el, cursor);
      else cursor = cursor.nextSibling;
    }
    this.first = first;
    this.last = last;
    this._setSpacers();
  }

  _setSpacers() {
    this.top.style.height = `${this.offsets[this.first]}px`;
    this.bottom.style.height = `${this.offsets[this.count] - this.offsets[this.last]}px`;
  }

  /** @param {ResizeObserverEntry[]} entries */
  _resized(entries) {
    // Rows changed height since they were measured (their HTML arrived, a section opened, the width changed): the
    // list takes the new heights, and the reader's row goes back to where it was last shown.
    this._scrolledByOthers(); // (before the heights change the layout)
    let changed = false;
    for (const entry of entries) {
      const el = /** @type {HTMLElement} */ (entry.target);
      const key = el.dataset.key;
      if (!key || !el.isConnected || !this.attached.has(key)) continue;
      const h = el.getBoundingClientRect().height;
      if (h > 0 && this.heights.get(key) !== h) {
        this.heights.set(key, h);
        changed = true;
      }
    }
    if (!changed) return;
    this.dirty = true;
    this._layout();
    this._setSpacers();
    if (this.pinned) {
      this._toEnd();
    } else {
      this._restore(this._markNow());
    }
    this.schedule();
  }

  /**
   * Scrolls row i into view (estimated first, then by its element) and returns its element.
   * @param {number} i
   * @param {ScrollLogicalPosition} [block]
   */
  scrollToIndex(i, block = "start") {
    if (i < 0 || i >= this.count) return null;
    this.mark = null;
    this.pinned = block === "end" && i === this.count - 1;
    this._layout();
    const base = this._containerTop();
    const y = base + this.offsets[i];
    const h = this._height(i);
    const target = block === "center" ? y - (window.innerHeight - h) / 2
      : block === "end" ? y + h - window.innerHeight : block === "nearest" ? null : y;
    if (target !== null) this._scrollTo(Math.max(0, target));
    else if (y < window.scrollY || y + h > window.scrollY + window.innerHeight) this._scrollTo(Math.max(0, y));
    this.update();
    const el = this.attached.get(this.opts.key(i)) || null;
    if (el && this.pinned) {
      this._toEnd(); // the page's end (the last row's end may not be: something may follow the list)
      this.mark = this._anchor(true);
    } else if (el) {
      el.scrollIntoView({ block });
      this.ownY = window.scrollY;
      this.mark = { key: this.opts.key(i), top: el.getBoundingClientRect().top }; // kept there while rows above fill in
    }
    return el;
  }

  /** The attached row of a key, if it is in the DOM. */
  /** @param {string} key */
  element(key) {
    return this.attached.get(key) || null;
  }

  /** Forget measured heights of keys no longer present. */
  /** @param {Set<string>} keys */
  prune(keys) {
    for (const key of [...this.heights.keys()]) if (!keys.has(key)) this.heights.delete(key);
  }

  destroy() {
    window.removeEventListener("scroll", this._onScroll);
    window.removeEventListener("resize", this._onScroll);
    this.resize.disconnect();
    if (this.frame) cancelAnimationFrame(this.frame);
  }
}
