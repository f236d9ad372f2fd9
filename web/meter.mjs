// @ts-check
// The context meter above the Trajectory and Model-context views: how full the model's context was at each request
// of the window, one bar per request, split into system prompt, tools and conversation, with compactions and failed
// requests marked and the model's context window drawn when the log records it. The numbers come from the worker
// (assembler/browser/inspector.py: meter_value): a bar's height is the recorded prompt size where the log has usage,
// else an estimate (drawn with a dashed outline); the split is always an estimate, and the legend says so. Built with DOM calls
// (SVG elements with numeric attributes, text by textContent); a bar opens the request inspector.
import { formatCount, tokenCount } from "./summary.mjs";

const SVG = "http://www.w3.org/2000/svg";
const PARTS = /** @type {const} */ ([["system", "System prompt"], ["tools", "Tools"], ["conversation", "Conversation"],
  ["unknown", "Not in the log (system prompt, tools)"]]);
const BAR = 10; // user units per bar (the SVG stretches to the width)
const HEIGHT = 100;
const MIN_SLOTS = 48; // the chart has room for at least this many bars
const MIN_HEIGHT = 1.5; // user units: a prompt of a few tokens under a large window is still a visible bar

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 */
function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/**
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 */
function el(tag, className = "", text = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}

/** @param {any} bar */
function barTitle(bar) {
  const which = bar.first === bar.last ? `Request ${bar.number}` : `Requests ${bar.first}–${bar.last} (the fullest: ${bar.number})`;
  const size = bar.basis === "recorded" ? `${formatCount(bar.total)} tokens recorded` : `≈ ${formatCount(bar.total)} tokens (estimate: no usage recorded)`;
  const pct = bar.window ? ` · ${((100 * bar.total) / bar.window).toFixed(1)}% of ${formatCount(bar.window)}` : "";
  const parts = PARTS.filter(([k]) => bar.parts[k] > 0).map(([k, label]) => `${label} ≈ ${tokenCount(bar.parts[k])}`).join(", ");
  const marks = [bar.compaction ? "after a compaction" : "", bar.failed ? "failed" : ""].filter(Boolean).join(", ");
  return `${which}, turn ${bar.turn ?? "?"} step ${bar.step ?? "?"}: ${size}${pct}. ${parts}${marks ? `. ${marks}` : ""}. Click to inspect.`;
}

export class ContextMeter {
  /**
   * @param {{root: HTMLElement, before: HTMLElement, bridge: {json: (op: string) => Promise<any>}, open: (seq: number) => void}} opts
   *   root: the element holding the views (its data-view says which is shown); before: the meter goes before it
   */
  constructor({ root, before, bridge, open }) {
    this.root = root;
    this.bridge = bridge;
    this.openRequest = open;
    this.section = el("section", "context-meter");
    this.section.id = "context-meter";
    this.section.setAttribute("aria-label", "Context meter: how full the model's context was at each request");
    this.section.hidden = true;
    const head = el("div", "cm-head");
    head.append(el("h2", "cm-title", "Context per request"));
    this.peak = el("span", "cm-peak");
    this.scale = el("span", "cm-scale");
    head.append(this.peak, this.scale);
    this.chart = svg("svg", { class: "cm-chart", preserveAspectRatio: "none", role: "img" });
    const legend = el("ul", "cm-legend");
    for (const [k, label] of PARTS) {
      const li = el("li", `cm-key cm-${k}`);
      li.dataset.part = k;
      li.append(el("span", "cm-swatch"), document.createTextNode(label));
      legend.append(li);
    }
    for (const [k, label] of [["compaction", "Compaction"], ["failed", "Failed request"], ["estimate", "Estimated height"],
      ["window", "Context window"]]) {
      const li = el("li", `cm-key cm-key-${k}`);
      li.dataset.part = k;
      li.append(el("span", "cm-swatch"), document.createTextNode(label));
      legend.append(li);
    }
    this.legend = legend;
    this.note = el("p", "cm-note");
    this.section.append(head, this.chart, legend, this.note);
    before.before(this.section);
    this.generation = 0; // bumped when the window changes
    this.built = -1;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null;
    /** @type {Promise<void>} */
    this.loading = Promise.resolve();
    new MutationObserver(() => this._maybeRefresh()).observe(root, { attributes: true, attributeFilter: ["data-view"] });
  }

  get visibleView() {
    const view = this.root.dataset.view;
    return view === "trajectory" || view === "context";
  }

  /** The window changed: rebuild once the updates settle, if a view showing the meter is open. */
  changed() {
    this.generation += 1;
    this._maybeRefresh();
  }

  _maybeRefresh() {
    if (!this.visibleView || this.built === this.generation) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.loading = new Promise((resolve) => {
      this.timer = setTimeout(() => { this.timer = null; void this.refresh().then(resolve); }, 150);
    });
  }

  async refresh() {
    const generation = this.generation;
    let value;
    try {
      value = await this.bridge.json("contextMeter");
    } catch {
      return; // the meter is a convenience: the worker's error is reported where the views report theirs
    }
    if (generation !== this.generation || !value || !Array.isArray(value.bars)) return;
    this.built = generation;
    this.show(value);
  }

  /** Resolves when the meter shows the current window (tests). */
  async ready() {
    await this.loading;
  }

  /** @param {any} value */
  show(value) {
    const bars = value.bars;
    this.section.hidden = bars.length === 0;
    this.section.dataset.requests = String(value.requests);
    this.section.dataset.recorded = String(value.recorded);
    if (!bars.length) { this.chart.replaceChildren(); return; }
    const top = Math.max(value.contextWindow ?? 0, ...bars.map((/** @type {any} */ b) => b.total)) || 1;
    const width = Math.max(bars.length, MIN_SLOTS) * BAR; // a few requests get narrow bars, left-aligned
    this.chart.setAttribute("viewBox", `0 0 ${width} ${HEIGHT}`);
    const nodes = [];
    for (const [i, bar] of bars.entries()) {
      const g = svg("g", { class: `cm-bar${bar.basis === "estimate" ? " is-estimate" : ""}${bar.failed ? " is-failed" : ""}`, "data-seq": bar.seq });
      const title = svg("title");
      title.textContent = barTitle(bar);
      g.append(title);
      const sum = PARTS.reduce((acc, [k]) => acc + bar.parts[k], 0) || 1;
      const full = bar.total > 0 ? Math.max(MIN_HEIGHT, (HEIGHT * bar.total) / top) : 0; // a small prompt stays visible
      let y = HEIGHT;
      for (const [k] of PARTS) {
        const h = (full * bar.parts[k]) / sum;
        if (h <= 0) continue;
        y -= h;
        g.append(svg("rect", { class: `cm-part cm-${k}`, x: i * BAR + 1, y, width: BAR - 2, height: h }));
      }
      if (full <= 0) g.append(svg("rect", { class: "cm-part cm-empty", x: i * BAR + 1, y: HEIGHT - 0.5, width: BAR - 2, height: 0.5 }));
      // The whole column is the click target (a short bar is hard to hit).
      g.append(svg("rect", { class: "cm-hit", x: i * BAR, y: 0, width: BAR, height: HEIGHT }));
      g.addEventListener("click", () => this.openRequest(bar.seq));
      nodes.push(g);
      // Lines keep their screen width however the chart is stretched (non-scaling stroke).
      if (bar.compaction) nodes.push(svg("line", { class: "cm-compaction", x1: i * BAR, x2: i * BAR, y1: 0, y2: HEIGHT, "vector-effect": "non-scaling-stroke" }));
    }
    if (value.contextWindow) {
      const y = Math.max(0.5, HEIGHT - (HEIGHT * value.contextWindow) / top);
      nodes.push(svg("line", { class: "cm-window", x1: 0, x2: width, y1: y, y2: y, "vector-effect": "non-scaling-stroke" }));
    }
    this.chart.replaceChildren(...nodes);
    this.chart.setAttribute("aria-label", `${formatCount(value.requests)} requests; ${bars.filter((/** @type {any} */ b) => b.compaction).length} after a compaction`);
    const peak = bars.reduce((/** @type {any} */ a, /** @type {any} */ b) => (b.total > a.total ? b : a));
    const pct = peak.window ? ` (${((100 * peak.total) / peak.window).toFixed(1)}% of the window)` : "";
    this.peak.textContent = `fullest: request ${peak.number}, ${peak.basis === "recorded" ? "" : "≈ "}${tokenCount(peak.total)} tokens${pct}`;
    this.scale.textContent = `scale: 0 to ${tokenCount(top)} tokens`;
    const unknown = bars.some((/** @type {any} */ b) => b.parts.unknown > 0);
    const present = { unknown, window: Boolean(value.contextWindow), failed: bars.some((/** @type {any} */ b) => b.failed),
      compaction: bars.some((/** @type {any} */ b) => b.compaction), estimate: value.recorded < value.requests };
    for (const [part, on] of Object.entries(present)) {
      const li = /** @type {HTMLElement | null} */ (this.legend.querySelector(`li[data-part=${part}]`));
      if (li) li.hidden = !on;
    }
    const n = value.requests;
    const sentences = [
      value.recorded === n
        ? `Height: the prompt size the provider reported (input + cache tokens) for all ${formatCount(n)} requests.`
        : value.recorded
          ? `Height: the prompt size the provider reported (input + cache tokens) for ${formatCount(value.recorded)} of ${formatCount(n)} requests; the others are estimates (dashed outline).`
          : `Height: an estimate for every request (the log records no usage).`,
      `The split into system prompt, tools and conversation is an estimate (${value.charsPerToken} characters per token).`,
      value.headers < n ? `${value.headers ? `${formatCount(n - value.headers)} of ${formatCount(n)} requests have` : "The log records"} no system prompt or tool list: what the recorded size holds beyond the conversation is marked as not in the log.` : "",
      value.contextWindow ? `The line is the model's context window (${formatCount(value.contextWindow)} tokens).`
        : "The log records no context window: the scale is the fullest request.",
      value.perBar > 1 ? `Each bar stands for ${value.perBar} consecutive requests (the fullest of them).` : "",
      value.windowed ? "Only the loaded window's requests." : "",
    ];
    this.note.textContent = sentences.filter(Boolean).join(" ");
  }

  /** A new window: forget the last one. */
  clear() {
    this.generation += 1;
    this.section.hidden = true;
    this.chart.replaceChildren();
  }
}
