// @ts-check
// Search over the whole transcript: the worker counts occurrences in every chat row's joined text blocks (rendered
// or not: reasoning, tool arguments and results, the text inside packed rows), case-insensitively; this module keeps
// the counter ("3 of 17"), moves between matches (Enter / Shift+Enter), opens the closed Think and tool rows that
// hold the current match, scrolls it into view and wraps every visible occurrence in <mark> by splitting text
// nodes (never innerHTML). `/` focuses the box, Esc clears it.
// The worker holds the loaded window only: while older history is not loaded the counter says so ("3 of 17 · older
// not searched"), and "Search older" (or Shift+Enter / ↑ at the oldest loaded match, Enter when nothing loaded
// matches) loads older pages one at a time (`older.load`, flows.loadOlder) until the query matches in a row older
// than the loaded matches, then moves to the newest of those; the counter shows the walk ("Searching older… page
// 2"), Esc or a new query stops it, a failed load is said (the alert names why, the counter that it stopped).

/** Lowercases one character at a time so offsets stay those of the original text. @param {string} text */
export function foldCase(text) {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  let out = "";
  for (const ch of text) {
    const l = ch.toLowerCase();
    out += l.length === ch.length ? l : ch;
  }
  return out;
}

/**
 * Removes the marks this module added under `root` (their text goes back, adjacent text nodes are merged).
 * @param {Element} root
 */
export function clearMarks(root) {
  const marks = root.querySelectorAll("mark.search-hit");
  if (!marks.length) return;
  const parents = new Set();
  for (const mark of marks) {
    parents.add(mark.parentNode);
    mark.replaceWith(...mark.childNodes);
  }
  for (const p of parents) p?.normalize();
}

/**
 * Wraps every occurrence of `query` (already case-folded) in the text under `root` in <mark class="search-hit">;
 * an occurrence across several text nodes gets one mark per piece (same data-hit). Returns the first mark of each
 * occurrence, in document order. Text inside buttons and <mark> itself is skipped (`skip`: a row whose buttons are
 * its content, as a trajectory row's tool names, passes its own).
 * @param {Element} root
 * @param {string} query
 * @param {string} [skip]
 * @returns {HTMLElement[]}
 */
export function markText(root, query, skip = "button, mark, .vlist-spacer") {
  if (!query) return [];
  /** @type {Text[]} */
  const nodes = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.parentElement?.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(/** @type {Text} */ (n));
  if (!nodes.length) return [];
  const starts = [];
  let text = "";
  for (const n of nodes) {
    starts.push(text.length);
    text += n.data;
  }
  const folded = foldCase(text);
  /** @type {[number, number][]} */
  const hits = [];
  for (let at = folded.indexOf(query); at >= 0; at = folded.indexOf(query, at + query.length)) hits.push([at, at + query.length]);
  if (!hits.length) return [];
  /** @type {HTMLElement[][]} */
  const pieces = hits.map(() => []);
  // Right to left, so splitting a text node never moves an offset still to be handled.
  for (let h = hits.length - 1; h >= 0; h--) {
    const [s, e] = hits[h];
    for (let k = nodes.length - 1; k >= 0; k--) {
      const n0 = starts[k];
      const node = nodes[k];
      const n1 = n0 + node.data.length;
      if (n1 <= s || n0 >= e) continue;
      const a = Math.max(s, n0) - n0;
      const b = Math.min(e, n1) - n0;
      let target = node;
      if (b < target.data.length) target.splitText(b);
      if (a > 0) target = target.splitText(a);
      const mark = document.createElement("mark");
      mark.className = "search-hit";
      mark.dataset.hit = String(h);
      target.replaceWith(mark);
      mark.append(target);
      pieces[h].unshift(mark);
      // Keep the node list valid: the part before `a` stays as `node`.
      if (a === 0) nodes[k] = document.createTextNode(""); // consumed; never matched again (hits are disjoint)
    }
  }
  return pieces.map((p) => p[0]);
}

/** @param {string} className @param {string} text */
function span(className, text) {
  const el = document.createElement("span");
  el.className = className;
  el.textContent = text;
  return el;
}

export class Search {
  /**
   * @param {{
   *   input: HTMLInputElement, counter: HTMLElement, prev: HTMLButtonElement, next: HTMLButtonElement,
   *   bridge: {json: (op: string, args?: Record<string, unknown>) => Promise<any>},
   *   includeHidden: () => boolean,
   *   reveal: (key: string, blocks: number[]) => Promise<HTMLElement | null>,
   *   attached: () => Iterable<HTMLElement>,
   *   onError: (err: Error) => void,
   *   older?: {button: HTMLButtonElement, exists: () => boolean, canLoad: () => boolean, load: () => Promise<boolean>},
   * }} opts
   */
  constructor(opts) {
    this.opts = opts;
    this.query = "";
    this.folded = "";
    this.total = 0;
    /** @type {[string, number, number[]][]} */
    this.hits = [];
    /** @type {number[]} cumulative counts: hits[i] holds matches cum[i] .. cum[i+1]-1 */
    this.cum = [0];
    this.index = -1;
    this.timer = 0;
    this.seq = 0;
    /** @type {{page: number} | null} the walk through older history under way */
    this.walk = null;
    this.olderFailed = false; // the last walk stopped at a failed load (the alert says why)
    opts.input.addEventListener("input", () => {
      this.stopOlder();
      clearTimeout(this.timer);
      this.timer = window.setTimeout(() => void this.run(opts.input.value), 250);
    });
    opts.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        if (opts.input.value !== this.query) void this.run(opts.input.value);
        else if (!this.total && !this.walk) void this.searchOlder();
        else void this.step(e.shiftKey ? -1 : 1);
      } else if (e.key === "Escape") {
        e.preventDefault();
        opts.input.value = "";
        void this.run("");
        opts.input.blur();
      }
    });
    opts.next.addEventListener("click", () => void this.step(1));
    opts.prev.addEventListener("click", () => void this.step(-1));
    const more = opts.older?.button;
    more?.addEventListener("mousedown", (e) => e.preventDefault()); // the focus stays in the box
    more?.addEventListener("click", () => {
      if (this.walk) this.stopOlder();
      else void this.searchOlder();
    });
    this._count();
  }

  focus() {
    this.opts.input.focus();
    this.opts.input.select();
  }

  /**
   * Searches for `text` and moves to the first match (with `move`; otherwise keeps the current position, as when
   * the window grows); resolves with {matches, ms}.
   * @param {string} text
   * @param {{move?: boolean}} [options]
   */
  async run(text, { move = true } = {}) {
    clearTimeout(this.timer);
    const ticket = ++this.seq;
    this.walk = null; // any run supersedes a walk through older history
    if (text !== this.query) this.olderFailed = false;
    this.query = text;
    this.folded = foldCase(text);
    if (this.opts.input.value !== text) this.opts.input.value = text;
    if (!text) {
      this.hits = [];
      this.cum = [0];
      this.total = 0;
      this.index = -1;
      this._count();
      this.decorateAll();
      return { matches: 0, ms: 0 };
    }
    const t0 = performance.now();
    let value;
    try {
      value = await this.opts.bridge.json("search", { query: text, includeHidden: this.opts.includeHidden() });
    } catch (err) {
      this.opts.onError(/** @type {Error} */ (err));
      return { matches: 0, ms: 0 };
    }
    if (ticket !== this.seq) return { matches: value.total, ms: performance.now() - t0, stale: true };
    this._take(value);
    if (move) this.index = this.total ? 0 : -1;
    this._count();
    this.decorateAll();
    if (this.total && move) await this._go();
    return { matches: this.total, ms: performance.now() - t0, workerMs: value.ms };
  }

  /**
   * Searches for `text` and moves to its first match in row `key` (a hit of the search across sessions opened
   * there), else to the first match; resolves with {matches}.
   * @param {string} text @param {string} key
   */
  async runAt(text, key) {
    const value = await this.run(text, { move: false });
    if (!this.total || value.stale) return value;
    const at = this.hits.findIndex((h) => h[0] === key);
    this.index = at < 0 ? 0 : this.cum[at];
    this._count();
    await this._go();
    return value;
  }

  /** Takes a search answer; the current match stays the same occurrence of the same row when the window grew
   * (older rows prepended), else the index is kept within the new total. @param {any} value */
  _take(value) {
    const was = this.index >= 0 && this.hits.length ? this._where() : null;
    this.hits = value.hits;
    this.total = value.total;
    this.cum = [0];
    for (const [, n] of this.hits) this.cum.push(this.cum[this.cum.length - 1] + n);
    const at = was ? this.hits.findIndex((h) => h[0] === was.hit[0]) : -1;
    this.index = !this.total ? -1 : was && at >= 0 ? Math.min(this.cum[at] + was.within, this.cum[at + 1] - 1)
      : Math.max(0, Math.min(this.index, this.total - 1));
  }

  /** Whether older history can be loaded and searched. */
  _canWalk() {
    const older = this.opts.older;
    return Boolean(older && this.query && older.exists() && older.canLoad());
  }

  /**
   * Loads older pages one at a time until the query matches in a row older than the loaded matches (then moves to
   * the newest of those), or nothing older is left, or a load fails; resolves to whether it found one.
   */
  async searchOlder() {
    const older = this.opts.older;
    if (!older || this.walk || !this._canWalk()) return false;
    clearTimeout(this.timer);
    const ticket = this.seq; // a new query (or Esc) bumps it: the walk stops
    const job = { page: 0 };
    this.walk = job;
    this.olderFailed = false;
    const live = () => ticket === this.seq && this.walk === job;
    const oldest = this.hits.length ? this.hits[0][0] : null;
    const before = this.total;
    try {
      while (older.exists() && older.canLoad()) {
        job.page += 1;
        this._count();
        const loaded = await older.load();
        if (!live()) return false;
        if (!loaded) {
          this.olderFailed = older.exists();
          break;
        }
        const value = await this.opts.bridge.json("search", { query: this.query, includeHidden: this.opts.includeHidden() });
        if (!live()) return false;
        this._take(value);
        // The matches older than the oldest one seen before: those in rows before its row (or all, when none was).
        const at = oldest === null ? this.hits.length : this.hits.findIndex((h) => h[0] === oldest);
        const found = at < 0 ? this.total - before : this.cum[at];
        if (found > 0) {
          this.walk = null;
          this.index = found - 1;
          this._count();
          this.decorateAll();
          await this._go();
          return true;
        }
      }
    } catch (err) {
      if (live()) this.opts.onError(/** @type {Error} */ (err));
    } finally {
      if (this.walk === job) this.walk = null;
    }
    if (ticket === this.seq) {
      this._count();
      this.decorateAll();
    }
    return false;
  }

  /** Stops a walk through older history (the page under way still loads; nothing moves after it). */
  stopOlder() {
    if (!this.walk) return;
    this.walk = null;
    this._count();
  }

  /** The window changed: search again (keeps the query). A query typed but not searched yet is left to its own
   * pending run (which searches the new window): the old query must not come back over what the box says. */
  refresh() {
    if (this.walk || !this.query || this.opts.input.value !== this.query) return;
    clearTimeout(this.timer);
    const query = this.query;
    this.timer = window.setTimeout(() => void this.run(query, { move: false }), 300);
  }

  /** @param {number} delta */
  async step(delta) {
    if (this.walk) return;
    // Back past the oldest loaded match: on into older history, while there is some.
    if ((delta < 0 && this.index <= 0) && this._canWalk()) {
      await this.searchOlder();
      return;
    }
    if (!this.total) return;
    this.index = (this.index + delta + this.total) % this.total;
    this._count();
    await this._go();
  }

  _count() {
    const { counter, prev, next, older } = this.opts;
    const partial = Boolean(older && this.query && older.exists());
    const walking = this.walk !== null;
    const base = !this.query ? "" : this.total ? `${this.index + 1} of ${this.total}` : "no matches";
    // Two short lines in the header (style.css), one text for tests and screen readers: "3 of 17 · older not searched".
    const [first, sep, note] = walking ? ["Searching older…", " ", `page ${this.walk?.page ?? 1}`]
      : partial ? [base, " · ", this.olderFailed ? "older could not load" : "older not searched"] : [base, "", ""];
    counter.parentElement?.toggleAttribute("data-older", partial || walking);
    if (!note) counter.textContent = first;
    else counter.replaceChildren(first, span("search-sep", sep), span("search-note", note));
    const canWalk = !walking && this._canWalk();
    next.disabled = walking || this.total < 2;
    prev.disabled = walking || (this.total < 2 && !canWalk);
    if (older) {
      older.button.hidden = !walking && !canWalk;
      older.button.textContent = walking ? "Stop" : "Search older";
      older.button.title = walking ? "Stop searching older history (Esc)"
        : "Only the loaded rows are searched: load older pages until a match (Shift+Enter at the oldest match)";
    }
  }

  /** The row and the occurrence within it of the current match. */
  _where() {
    const cum = this.cum;
    let lo = 0;
    let hi = this.hits.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (cum[mid] <= this.index) lo = mid;
      else hi = mid - 1;
    }
    return { hit: this.hits[lo], within: this.index - cum[lo] };
  }

  async _go() {
    const { hit } = this._where();
    const [key, , blocks] = hit;
    const ticket = this.seq;
    const row = await this.opts.reveal(key, blocks);
    if (!row || ticket !== this.seq) return;
    for (const m of document.querySelectorAll("mark.search-current")) m.classList.remove("search-current");
    this.decorate(row);
    const current = row.querySelector("mark.search-current");
    (current ?? row).scrollIntoView({ block: "center" });
    row.dataset.searchCurrent = "1";
  }

  /** Marks the query in one row element (after it was rendered or opened), the current match's pieces as such;
   * returns its marks. @param {Element} row */
  decorate(row) {
    clearMarks(row);
    if (!this.folded || !this.total) return [];
    const key = /** @type {HTMLElement} */ (row).dataset?.key;
    if (key && !this.hits.some((h) => h[0] === key)) return [];
    const marks = markText(row, this.folded, /** @type {HTMLElement} */ (row).dataset?.markButtons ? "mark, .vlist-spacer" : undefined);
    const { hit, within } = this.index >= 0 ? this._where() : { hit: null, within: 0 };
    const current = hit && hit[0] === key ? marks[Math.min(within, marks.length - 1)] : null;
    if (current) {
      for (const piece of row.querySelectorAll(`mark.search-hit[data-hit="${current.dataset.hit}"]`)) piece.classList.add("search-current");
    }
    return marks;
  }

  decorateAll() {
    for (const row of this.opts.attached()) this.decorate(row);
  }
}
