// @ts-check
// The trajectory overview: above the Trajectory view's rows, a timeline of the run — each model step (top lane) and
// tool call (bottom lane) a bar, turns marked — drawn on ONE <canvas>, so the DOM stays the same size on any
// session. It covers the WHOLE run: when the window holds only the newest pages, the whole session's timeline is
// asked for (`fetchRun`: the server's GET .../timeline, a published site's timeline.json, the worker's fold of a
// local file), the same value made by the same Python (assembler/browser/timeline.py: run_timeline), and the note
// says what the bars cover ("the whole run" or "the loaded history"); a bar of a step not loaded yet loads it as a
// deep link does (`pick`); reading the whole run is wholerun.mjs. One module above 400 lines: the canvas, its
// controls and what it covers are one widget. Bars take equal widths (the run's order) or their actual durations;
// actual durations come only from recorded times (the worker's assembler/browser/timeline.py: a log whose times were rebuilt offers equal widths
// only, and the note says why), with idle stretches over a minute shortened and marked. Zoom and pan: the wheel
// (Shift or a sideways wheel pans), dragging, the −/+/Fit buttons, and on the focused canvas ←/→ (pan), +/− (zoom),
// 0 (fit), Enter (show the picked bar in the chat). Clicking a bar picks it: its trajectory row is scrolled into
// view and marked, and the note offers "Show in chat". Collapse all / Expand all fold the rows to their first line.
import { formatCount } from "./summary.mjs";
import { durationText } from "./views.mjs";
import { WholeRun } from "./wholerun.mjs";

const HEIGHT = 76; // css px
const AXIS = 16; // the tick labels' band
const LANE = { step: [AXIS + 6, 20], tool: [AXIS + 32, 14] };
const ZOOM = 1.6;

/** @param {string} tag @param {string} [cls] @param {string} [text] */
function el(tag, cls = "", text = "") {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text) node.textContent = text;
  return node;
}

/** @param {string} text @param {string} title */
function button(text, title) {
  const b = /** @type {HTMLButtonElement} */ (el("button", "small-button", text));
  b.type = "button";
  b.title = title;
  return b;
}

export class TimelineOverview {
  /**
   * @param {{
   *   before: HTMLElement, rows: HTMLElement,
   *   pick: (span: any) => void | Promise<void>, showInChat: (span: any) => void, refold: () => void,
   *   hasOlder: () => boolean,
   *   fetchRun: () => Promise<any>, last: () => number, onError: (err: Error) => void,
   * }} opts  the overview goes just before `before`; `rows` is the trajectory's list (folded by Collapse all);
   *   `fetchRun` reads the whole session's timeline (null: none to read), `last` is the window's last seq
   */
  constructor(opts) {
    this.opts = opts;
    /** @type {any} the timeline drawn: the window's (`loaded`) or the whole run's (`run`) */
    this.data = null;
    /** @type {any} the worker's timeline of the window's rows */
    this.loaded = null;
    /** the whole session's timeline (wholerun.mjs) */
    this.whole = new WholeRun({ fetch: opts.fetchRun, onError: opts.onError, changed: () => this._choose() });
    /** @type {"equal" | "actual"} */
    this.mode = "equal";
    this.lo = 0;
    this.hi = 1;
    this.selected = -1;
    this.root = el("section", "traj-overview");
    this.root.id = "traj-overview";
    this.root.setAttribute("aria-label", "Timeline of the run");
    const bar = el("div", "tl-bar");
    bar.setAttribute("role", "toolbar");
    bar.setAttribute("aria-label", "Timeline");
    this.equal = button("Equal widths", "Each step and tool call the same width, in the run's order");
    this.actual = button("Actual durations", "Each bar as long as it took (recorded times only)");
    const modes = el("span", "button-group");
    modes.setAttribute("role", "group");
    modes.setAttribute("aria-label", "Bar widths");
    modes.append(this.equal, this.actual);
    this.equal.addEventListener("click", () => this.setMode("equal"));
    this.actual.addEventListener("click", () => this.setMode("actual"));
    const zoomOut = button("−", "Zoom out (−)");
    const zoomIn = button("+", "Zoom in (+)");
    const fit = button("Fit", "Show the whole run (0)");
    zoomOut.setAttribute("aria-label", "Zoom out");
    zoomIn.setAttribute("aria-label", "Zoom in");
    zoomOut.addEventListener("click", () => this.zoom(ZOOM));
    zoomIn.addEventListener("click", () => this.zoom(1 / ZOOM));
    fit.addEventListener("click", () => this.fit());
    this.collapse = button("Collapse all", "Fold every trajectory row to its first line");
    this.expand = button("Expand all", "Unfold every trajectory row");
    this.collapse.addEventListener("click", () => this.fold(true));
    this.expand.addEventListener("click", () => this.fold(false));
    bar.append(el("span", "tl-title", "Timeline"), modes, zoomOut, zoomIn, fit, el("span", "tl-gap"), this.collapse, this.expand);
    this.canvas = /** @type {HTMLCanvasElement} */ (el("canvas", "tl-canvas"));
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute("role", "img");
    this.note = el("p", "tl-note");
    this.note.setAttribute("role", "status");
    this.pickedLine = el("p", "tl-picked");
    this.root.append(bar, this.canvas, this.note, this.pickedLine);
    opts.before.before(this.root);
    this._wire();
    this.fold(false);
  }

  _wire() {
    const c = this.canvas;
    new ResizeObserver(() => this.draw()).observe(c);
    c.addEventListener("wheel", (e) => {
      if (!this.data) return;
      e.preventDefault();
      const sideways = e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY);
      if (sideways) this.pan((e.shiftKey ? e.deltaY : e.deltaX) / Math.max(1, c.clientWidth));
      else this.zoom(Math.exp(e.deltaY * 0.002), this._fraction(e.clientX));
    }, { passive: false });
    /** @type {{x: number, lo: number, hi: number, moved: boolean} | null} */
    let drag = null;
    c.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, lo: this.lo, hi: this.hi, moved: false };
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener("pointermove", (e) => {
      if (!drag) {
        const i = this.hitAt(e.clientX, e.clientY);
        c.title = i >= 0 ? this._describe(this.data.spans[i]) : "";
        return;
      }
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (!drag.moved) return;
      const shift = -dx / Math.max(1, c.clientWidth) * (drag.hi - drag.lo);
      this._setRange(drag.lo + shift, drag.hi + shift);
    });
    c.addEventListener("pointerup", (e) => {
      const clicked = drag && !drag.moved;
      drag = null;
      if (!clicked) return;
      const i = this.hitAt(e.clientX, e.clientY);
      if (i >= 0) this.select(i, true);
    });
    c.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const keys = /** @type {Record<string, () => void>} */ ({
        ArrowLeft: () => this.pan(-0.1), ArrowRight: () => this.pan(0.1),
        "+": () => this.zoom(1 / ZOOM), "=": () => this.zoom(1 / ZOOM), "-": () => this.zoom(ZOOM),
        0: () => this.fit(), Home: () => this.fit(),
        Enter: () => { if (this.selected >= 0) this.opts.showInChat(this.data.spans[this.selected]); },
      });
      const run = keys[e.key];
      if (!run) return;
      e.preventDefault();
      e.stopPropagation(); // "-" and "0" are not the page's shortcuts here
      run();
    });
  }

  /** The worker's timeline of the rows just laid out: drawn, unless it covers only the loaded history and the
   * whole run's is read (asked for here when it is not). @param {any} data */
  setLoaded(data) {
    this.loaded = data;
    if (data.scope !== "run") this.whole.ask(this.opts.last);
    this._choose();
  }

  /** Draws the whole run's timeline when the window does not hold it all, else the window's. */
  _choose() {
    const loaded = this.loaded;
    const run = this.whole.value;
    const next = loaded && loaded.scope !== "run" && run ? run : loaded;
    if (next && next !== this.data) this.set(next);
    else {
      this.draw(); // the loaded part's shading moved
      this._controls();
    }
  }

  /** Draws a timeline value (the window's or the whole run's). @param {any} data */
  set(data) {
    const [o0, o1] = this._domain();
    // A reader who saw the whole run sees the whole grown run (a live session, Load older); a zoomed one keeps
    // the range while it still lies inside the run (and the bars cover the same part of it).
    const whole = this.data === null || (this.lo <= o0 + 1e-9 && this.hi >= o1 - 1e-9) || this.data.scope !== data.scope;
    const picked = this.selected >= 0 ? this.data.spans[this.selected] : null;
    this.data = data;
    this.root.dataset.scope = data.scope === "run" ? "run" : "loaded";
    if (!data.timed && this.mode === "actual") this.mode = "equal";
    // The same step or tool call in the new value (keys may differ between two folds: its seq and label do not).
    this.selected = picked ? data.spans.findIndex((/** @type {any} */ s) => s.seq === picked.seq
      && s.lane === picked.lane && s.label === picked.label) : -1;
    if (this.selected < 0) this.pickedLine.replaceChildren();
    if (whole || this.hi > this._domain()[1] || this.lo < 0) this.fit();
    else this.draw();
    this._controls();
  }

  /** A new window (another session or file): the whole run, nothing picked. */
  reset() {
    this.whole.reset();
    this.data = null;
    this.loaded = null;
    delete this.root.dataset.scope;
    this.selected = -1;
    this.pickedLine.replaceChildren();
  }

  /** @param {"equal" | "actual"} mode */
  setMode(mode) {
    if (mode === "actual" && !this.data?.timed) return;
    if (this.mode === mode) return;
    this.mode = mode;
    this.fit();
    this._controls();
  }

  _controls() {
    const d = this.data;
    this.equal.setAttribute("aria-pressed", String(this.mode === "equal"));
    this.actual.setAttribute("aria-pressed", String(this.mode === "actual"));
    this.actual.disabled = !d?.timed;
    this.actual.title = d?.timed ? "Each bar as long as it took (recorded times only)" : d?.reason || "Actual durations are unavailable: no recorded times.";
    this.root.dataset.mode = this.mode;
    if (!d) return;
    const steps = d.spans.filter((/** @type {any} */ s) => s.lane === "step").length;
    const calls = d.total - steps;
    const counts = `${formatCount(steps)} step${steps === 1 ? "" : "s"} and ${formatCount(calls)} tool call`
      + `${calls === 1 ? "" : "s"} in ${formatCount(d.turns.length)} turn${d.turns.length === 1 ? "" : "s"}`;
    const parts = [];
    if (d.scope === "run" && d !== this.loaded) {
      const grown = typeof d.last === "number" && this.opts.last() > d.last;
      parts.push(`The whole run: ${counts}${grown ? ` through seq ${d.last} (newer steps are in the rows below)` : ""}.`);
      if (this.opts.hasOlder()) parts.push("The shaded part is loaded; a bar of a step not loaded yet loads it.");
    } else if (d.scope === "run") {
      parts.push(`The whole run: ${counts}.`);
    } else {
      const why = this.whole.asking ? " Reading the whole run…" : this.whole.failed ? " The whole run could not be read."
        : this.opts.hasOlder() ? " Load older adds the earlier turns." : "";
      parts.push(`The loaded history: ${counts}.${why}`);
    }
    if (!d.timed && d.total) parts.push(d.reason);
    else if (this.mode === "actual") {
      if (d.timed < d.total) parts.push(`${d.total - d.timed} without recorded times are not drawn.`);
      if (d.gaps.length) parts.push(`${d.gaps.length} idle stretch${d.gaps.length === 1 ? "" : "es"} over a minute shortened (dashed lines).`);
    }
    this.note.textContent = parts.join(" ");
  }

  /** @returns {[number, number]} */
  _domain() {
    if (!this.data) return [0, 1];
    if (this.mode === "actual") return [0, Math.max(1, this.data.end)];
    return [0, Math.max(1, this.data.slots)];
  }

  /** A span's extent on the current axis, or null (no recorded times). @param {any} s @returns {[number, number] | null} */
  _extent(s) {
    if (this.mode === "equal") return [s.slot, s.slot + 1];
    return s.t0 === null || s.t0 === undefined ? null : [s.t0, s.t1];
  }

  fit() {
    const [lo, hi] = this._domain();
    this._setRange(lo, hi);
  }

  /** @param {number} factor >1 zooms out @param {number} [at] the fixed point, a fraction of the width */
  zoom(factor, at = 0.5) {
    const span = this.hi - this.lo;
    const [d0, d1] = this._domain();
    const min = this.mode === "equal" ? 4 : 50;
    const next = Math.max(min, Math.min(d1 - d0, span * factor));
    const pivot = this.lo + span * at;
    this._setRange(pivot - next * at, pivot + next * (1 - at));
  }

  /** @param {number} fraction of the visible range (negative: to the start) */
  pan(fraction) {
    const shift = fraction * (this.hi - this.lo);
    this._setRange(this.lo + shift, this.hi + shift);
  }

  /** @param {number} lo @param {number} hi */
  _setRange(lo, hi) {
    const [d0, d1] = this._domain();
    const width = Math.min(hi - lo, d1 - d0);
    lo = Math.max(d0, Math.min(lo, d1 - width));
    this.lo = lo;
    this.hi = lo + width;
    this.root.dataset.range = `${this.lo.toFixed(1)}-${this.hi.toFixed(1)}`;
    this.draw();
  }

  /** @param {number} clientX */
  _fraction(clientX) {
    const r = this.canvas.getBoundingClientRect();
    return r.width ? Math.max(0, Math.min(1, (clientX - r.left) / r.width)) : 0.5;
  }

  /** The viewport x of span i's middle (null when it is not drawn): for tests and keyboard help. @param {number} i */
  xOf(i) {
    const ext = this.data ? this._extent(this.data.spans[i]) : null;
    if (!ext) return null;
    const r = this.canvas.getBoundingClientRect();
    const mid = (Math.max(ext[0], this.lo) + Math.min(ext[1], this.hi)) / 2;
    if (mid < this.lo || mid > this.hi) return null;
    return r.left + (mid - this.lo) / (this.hi - this.lo) * r.width;
  }

  /** The viewport y of a lane's middle. @param {"step" | "tool"} lane */
  yOf(lane) {
    const [top, h] = LANE[lane];
    return this.canvas.getBoundingClientRect().top + top + h / 2;
  }

  /** The span under a viewport point, or -1. @param {number} clientX @param {number} clientY */
  hitAt(clientX, clientY) {
    if (!this.data) return -1;
    const r = this.canvas.getBoundingClientRect();
    const y = clientY - r.top;
    const lane = Object.entries(LANE).find(([, [top, h]]) => y >= top - 3 && y <= top + h + 3)?.[0];
    if (!lane) return -1;
    const x = (clientX - r.left) / Math.max(1, r.width) * (this.hi - this.lo) + this.lo;
    const slack = 3 / Math.max(1, r.width) * (this.hi - this.lo);
    let best = -1;
    let bestDistance = Infinity;
    this.data.spans.forEach((/** @type {any} */ s, /** @type {number} */ i) => {
      if (s.lane !== lane) return;
      const ext = this._extent(s);
      if (!ext || x < ext[0] - slack || x > ext[1] + slack) return;
      const distance = x < ext[0] ? ext[0] - x : x > ext[1] ? x - ext[1] : 0;
      if (distance < bestDistance) { best = i; bestDistance = distance; }
    });
    return best;
  }

  /** Where the loaded rows begin on the axis while the whole run is drawn (null otherwise). */
  _loadedFrom() {
    const d = this.data;
    const spans = this.loaded?.spans;
    if (!d || d === this.loaded || !spans?.length) return null;
    const first = Math.min(...spans.map((/** @type {any} */ s) => s.seq));
    const at = d.spans.find((/** @type {any} */ s) => s.seq >= first);
    if (!at) return null;
    return this.mode === "equal" ? at.slot : at.t0 ?? null;
  }

  /** @param {any} s */
  _describe(s) {
    const took = s.t0 !== null && s.t0 !== undefined ? ` · ${durationText(s.t1 - s.t0)}` : "";
    return `${s.lane === "tool" ? "Tool call" : "Step"} ${s.label} · ${s.status}${took}`;
  }

  /** Picks span i: its row is shown in the trajectory (with `go`), the note offers the chat. @param {number} i @param {boolean} [go] */
  select(i, go = false) {
    if (!this.data || i < 0 || i >= this.data.spans.length) return;
    this.selected = i;
    const s = this.data.spans[i];
    const show = button("Show in chat", "Show this step or tool call in the chat (Enter)");
    show.addEventListener("click", () => this.opts.showInChat(s));
    this.pickedLine.replaceChildren(el("span", "", this._describe(s)), show);
    this.draw();
    if (go) this.opts.pick(s);
  }

  /** Folds (or unfolds) every trajectory row to its first line. @param {boolean} folded */
  fold(folded) {
    this.opts.rows.classList.toggle("traj-folded", folded);
    this.collapse.setAttribute("aria-pressed", String(folded));
    this.expand.setAttribute("aria-pressed", String(!folded));
    this.opts.refold();
  }

  draw() {
    const c = this.canvas;
    const width = c.clientWidth;
    if (!width) return;
    const dpr = window.devicePixelRatio || 1;
    if (c.width !== Math.round(width * dpr) || c.height !== Math.round(HEIGHT * dpr)) {
      c.width = Math.round(width * dpr);
      c.height = Math.round(HEIGHT * dpr);
    }
    const ctx = c.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, HEIGHT);
    const css = getComputedStyle(c);
    const color = (/** @type {string} */ name, /** @type {string} */ fallback) => css.getPropertyValue(name).trim() || fallback;
    const fg = color("--fg", "#222");
    const muted = color("--muted", "#888");
    const accent = color("--accent", "#2563eb");
    const tool = color("--tl-tool", "#0d9488");
    const error = color("--error-fg", "#c00");
    const border = color("--border", "#ccc");
    const d = this.data;
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "top";
    if (!d || !d.total) {
      ctx.fillStyle = muted;
      ctx.fillText(d ? `No model steps in ${d.scope === "run" ? "the run" : "the loaded history"}.` : "", 4, AXIS + 10);
      this.canvas.setAttribute("aria-label", "Timeline: no model steps");
      return;
    }
    const scale = width / (this.hi - this.lo);
    const xAt = (/** @type {number} */ v) => (v - this.lo) * scale;
    // The whole run drawn while only its newest part is loaded: that part is shaded.
    const loadedFrom = this._loadedFrom();
    if (loadedFrom !== null && loadedFrom < this.hi) {
      ctx.fillStyle = border;
      ctx.globalAlpha = 0.5;
      ctx.fillRect(Math.max(0, xAt(loadedFrom)), AXIS, width, HEIGHT - AXIS);
      ctx.globalAlpha = 1;
    }
    // Turns: a line and a label where each begins (labels only where there is room).
    ctx.strokeStyle = border;
    ctx.fillStyle = muted;
    let lastLabel = -Infinity;
    let lastLine = -Infinity;
    for (const turn of d.turns) {
      const at = this.mode === "equal" ? turn.slot : turn.t;
      if (at === null || at === undefined || at < this.lo || at > this.hi) continue;
      const x = Math.round(xAt(at)) + 0.5;
      if (x - lastLine < 4) continue; // thousands of turns: a line where there is room, not a grey wash
      lastLine = x;
      ctx.beginPath();
      ctx.moveTo(x, AXIS);
      ctx.lineTo(x, HEIGHT);
      ctx.stroke();
      const text = `T${turn.turn ?? "?"}`;
      if (x > lastLabel) { // a label only where the last one ended (T4999 is wider than T9)
        ctx.fillText(text, x + 2, 2);
        lastLabel = x + ctx.measureText(text).width + 8;
      }
    }
    if (this.mode === "actual") {
      ctx.setLineDash([3, 3]);
      ctx.strokeStyle = muted;
      for (const gap of d.gaps) {
        if (gap.t < this.lo || gap.t > this.hi) continue;
        const x = Math.round(xAt(gap.t)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, AXIS);
        ctx.lineTo(x, HEIGHT);
        ctx.stroke();
      }
      ctx.setLineDash([]);
    }
    // Bars: only the ones in the visible range are drawn.
    d.spans.forEach((/** @type {any} */ s, /** @type {number} */ i) => {
      const ext = this._extent(s);
      if (!ext || ext[1] < this.lo || ext[0] > this.hi) return;
      const [top, h] = LANE[/** @type {"step" | "tool"} */ (s.lane)];
      const x0 = xAt(ext[0]);
      const w = Math.max(1, xAt(ext[1]) - x0 - (this.mode === "equal" && scale > 4 ? 1 : 0));
      ctx.fillStyle = s.status === "error" ? error : s.status === "running" ? muted : s.lane === "tool" ? tool : accent;
      ctx.fillRect(x0, top, w, h);
      if (i === this.selected) {
        ctx.strokeStyle = fg;
        ctx.lineWidth = 2;
        ctx.strokeRect(x0 - 1, top - 1, w + 2, h + 2);
        ctx.lineWidth = 1;
      }
    });
    // The visible range at the ends of the axis band.
    ctx.fillStyle = muted;
    const label = (/** @type {number} */ v) => (this.mode === "equal" ? `#${Math.floor(v) + 1}` : durationText(v) || "0 ms");
    const right = label(Math.max(this.lo, this.hi - 1e-9));
    ctx.textAlign = "right";
    ctx.fillText(right, width - 2, HEIGHT - 12);
    ctx.textAlign = "left";
    ctx.fillText(label(this.lo), 2, HEIGHT - 12);
    this.canvas.setAttribute("aria-label", `Timeline, ${this.mode === "equal" ? "equal widths" : "actual durations"}: `
      + `${label(this.lo)} to ${right} of ${d.total} bars. Arrow keys pan, + and − zoom, 0 fits.`);
  }
}
