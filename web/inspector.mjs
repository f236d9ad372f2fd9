// @ts-check
// The request inspector: one model request of the Trajectory view, in a modal <dialog> (Escape closes it, the focus
// goes back to what opened it). The worker computes everything (assembler/browser/inspector.py: request_value):
// the request's number, retry and failure, provider, model and settings, timing (each figure or "unavailable" and
// why), usage, what changed in the prompt since the previous request, the estimated size of its parts, the tools
// offered and the system prompt. Plain text only (textContent): every word here is the log's.
import { durationText } from "./views.mjs";
import { formatCount, tokenCount } from "./summary.mjs";

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

/** @param {string} title @param {...Node} children */
function section(title, ...children) {
  const node = el("section", "ri-section");
  node.append(el("h3", "", title), ...children);
  return node;
}

/** A two-column list of [name, value] pairs; a value null reads "unavailable". @param {[string, string][]} pairs */
function pairs(pairs) {
  const dl = el("dl", "ri-pairs");
  for (const [name, value] of pairs) dl.append(el("dt", "", name), el("dd", "", value));
  return dl;
}

const TIMING = /** @type {const} */ ([["started", "Started"], ["total", "Total"], ["ttft", "Time to first token"],
  ["generation", "Generation"], ["tokensPerSecond", "Tokens per second"]]);

/** @param {string} key @param {any} value */
function timingText(key, value) {
  if (key === "started") return new Date(value).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  if (key === "tokensPerSecond") return `${value} tokens/s`;
  return durationText(value);
}

const USAGE = /** @type {const} */ ([["inputTokens", "Input"], ["outputTokens", "Output"],
  ["cacheReadTokens", "Cache read"], ["cacheWriteTokens", "Cache write"], ["reasoningTokens", "Reasoning"]]);

const CAUSES = {
  step: "sent at the start of the step",
  retry: "a retry of the step's failed request",
  resent: "sent again for the same step after its previous request failed (no retry event)",
  stream: "the log records no step start for it (known from its response)",
};

/** @param {any} change */
function changeItem(change) {
  const li = el("li", `ri-change${change.replaced.length ? " is-replace" : ""}`);
  const head = el("div", "ri-change-head");
  const mark = change.replaced.length ? "replaced" : "added";
  head.append(el("span", `badge ri-${mark}`, mark), el("span", "ri-role", change.role),
    el("span", "ri-seq", `seq ${change.seq} · ${formatCount(change.chars)} characters`));
  li.append(head, el("div", "ri-preview", change.preview || "(no text)"));
  if (change.replaced.length) {
    const n = change.replaced.length;
    const details = el("details", "ri-replaced-more");
    details.append(el("summary", "", `It stands in place of ${n} message${n === 1 ? "" : "s"} the model no longer sees`));
    const list = el("ul", "ri-replaced-list");
    for (const old of change.replaced) {
      const item = el("li", "ri-removed");
      item.append(el("span", "badge ri-removed-mark", "removed"), el("span", "ri-role", old.role),
        el("span", "ri-seq", `seq ${old.seq}`), el("div", "ri-preview", old.preview || "(no text)"));
      list.append(item);
    }
    details.append(list);
    li.append(details);
  }
  return li;
}

/** @param {any} prompt @param {boolean} windowed */
function promptSection(prompt, windowed) {
  const n = prompt.messages;
  let sentence;
  if (prompt.first) {
    sentence = windowed
      ? `The first request of the loaded window: its ${formatCount(n)} message${n === 1 ? "" : "s"} are listed as added (older history is not loaded).`
      : `The session's first request: all ${formatCount(n)} message${n === 1 ? "" : "s"} are new.`;
  } else {
    const parts = [`${prompt.added} added`];
    const summaries = prompt.changes.filter((/** @type {any} */ c) => c.replaced.length).length;
    if (prompt.removed) parts.push(`${prompt.removed} replaced by ${summaries === 1 ? "a compaction summary" : `${summaries} compaction summaries`}`);
    sentence = `${formatCount(n)} message${n === 1 ? "" : "s"} (the previous request had ${formatCount(prompt.before)}): ${parts.join(", ")}.`;
  }
  const list = el("ol", "ri-changes");
  list.append(...prompt.changes.map(changeItem));
  const body = [el("p", "ri-sentence", sentence)];
  if (prompt.changes.length) body.push(list);
  else if (!prompt.first) body.push(el("p", "ri-note", "Nothing changed: the model received the same messages."));
  return section("What changed in the prompt", ...body);
}

/** @param {any} value */
function build(value) {
  const out = [];
  // Request: identity, status, retry and failure, provider, model and settings.
  const where = `Turn ${value.turn ?? "?"} · step ${value.step ?? "?"} · ${value.status}`;
  const facts = /** @type {[string, string][]} */ ([["Status", value.status], ["How it was sent", /** @type {any} */ (CAUSES)[value.cause] ?? value.cause]]);
  if (value.retry) {
    const r = value.retry;
    const of = typeof r.maxRetries === "number" ? ` of ${r.maxRetries}` : "";
    const delay = typeof r.delayMs === "number" ? `, after waiting ${durationText(r.delayMs)}` : "";
    facts.push(["Retry", `${r.retry ?? "?"}${of}${delay}${r.mode ? ` (${r.mode} mode)` : ""}`]);
  }
  if (value.failure) facts.push(["Failure", `${value.failure.message || "(no message)"}${value.failure.code ? ` (${value.failure.code})` : ""}`]);
  if (value.finish) facts.push(["Finish", value.finish]);
  facts.push(["Provider", value.provider ?? "not recorded"], ["Model", value.model ?? "not recorded"]);
  for (const [k, v] of value.config) if (k !== "provider" && k !== "model") facts.push([k, v]);
  out.push(section("Request", pairs(facts)));
  // Timing: each figure or why it is unavailable.
  // One reason shared by every unavailable figure is said once, under them.
  // (Tokens per second follows from the generation time: when that is unavailable, so is the rate, for its reason.)
  const times = TIMING.filter(([key]) => key !== "tokensPerSecond").map(([key]) => value.timing[key]);
  const whys = new Set(times.filter((f) => f.value === null).map((f) => f.why));
  const shared = whys.size === 1 && times.every((f) => f.value === null) ? [...whys][0] : null;
  const timing = pairs(TIMING.map(([key, label]) => {
    const f = value.timing[key];
    if (f.value !== null) return [label, timingText(key, f.value)];
    const derived = key === "tokensPerSecond" && value.timing.generation.value === null;
    return [label, shared && (derived || key !== "tokensPerSecond") ? "unavailable" : `unavailable: ${f.why}`];
  }));
  timing.classList.add("ri-timing");
  out.push(section("Timing", timing, ...(shared ? [el("p", "ri-note ri-timing-why", `Unavailable: ${shared}.`)] : [])));
  // Usage, as recorded.
  if (value.usage) {
    const rows = /** @type {[string, string][]} */ (USAGE.filter(([k]) => typeof value.usage[k] === "number")
      .map(([k, label]) => [label, `${formatCount(value.usage[k])} token${value.usage[k] === 1 ? "" : "s"}`]));
    if (value.input !== null) rows.push(["Prompt size", `${formatCount(value.input)} tokens (input + cache, as recorded)`]);
    out.push(section("Usage", pairs(rows)));
  } else {
    out.push(section("Usage", el("p", "ri-note", "The log records no token usage for this request.")));
  }
  out.push(promptSection(value.prompt, value.windowed));
  const s = value.sizes;
  const unlogged = "not in the log (no request header)";
  out.push(section("Size of the prompt (estimate)", pairs([
    ["System prompt", value.headerSeq === null ? unlogged : `≈ ${tokenCount(s.system)} tokens`],
    ["Tools", value.headerSeq === null ? unlogged : `≈ ${tokenCount(s.tools)} tokens`],
    ["Conversation", `≈ ${tokenCount(s.conversation)} tokens (${formatCount(value.prompt.messages)} messages)`]]),
  el("p", "ri-note", `Estimated from characters (${value.charsPerToken} per token), not counted by a tokenizer.`)));
  // Tools offered.
  const tools = el("ul", "ri-tools");
  for (const tool of value.tools.items) {
    const li = el("li", "ri-tool");
    if (tool.description || tool.schema) {
      const details = el("details");
      details.append(el("summary", "ri-tool-name", tool.name));
      if (tool.description) details.append(el("p", "ri-tool-desc", tool.description));
      if (tool.schema) details.append(el("pre", "ri-schema", tool.schema));
      li.append(details);
    } else {
      li.append(el("span", "ri-tool-name", tool.name));
    }
    tools.append(li);
  }
  const toolBody = [];
  if (value.tools.items.length) toolBody.push(tools);
  if (value.tools.note) toolBody.push(el("p", "ri-note", value.tools.note));
  out.push(section(`Tools offered (${value.tools.items.length})`, ...toolBody));
  if (value.system) {
    const details = el("details", "ri-system");
    details.append(el("summary", "", `System prompt (${formatCount(value.system.chars)} characters)`),
      el("pre", "ri-system-text", value.system.text));
    if (value.system.chars > value.system.text.length) details.append(el("p", "ri-note", `The first ${formatCount(value.system.text.length)} characters.`));
    out.push(details);
  } else {
    out.push(el("p", "ri-note", "The log records no system prompt for this request."));
  }
  return { where, body: out };
}

export class RequestInspector {
  /**
   * @param {{bridge: {json: (op: string, args?: Record<string, unknown>) => Promise<any>}, onError: (err: Error) => void}} opts
   */
  constructor({ bridge, onError }) {
    this.bridge = bridge;
    this.onError = onError;
    this.dialog = /** @type {HTMLDialogElement} */ (el("dialog", "request-inspector"));
    this.dialog.id = "request-inspector";
    this.dialog.setAttribute("aria-labelledby", "ri-title");
    const head = el("div", "ri-head");
    this.title = el("h2", "", "Request");
    this.title.id = "ri-title";
    this.where = el("p", "ri-where");
    const close = /** @type {HTMLButtonElement} */ (el("button", "ri-close", "Close"));
    close.type = "button";
    close.setAttribute("aria-label", "Close the request inspector (Escape)");
    close.addEventListener("click", () => this.close());
    head.append(this.title, close);
    this.attempts = el("nav", "ri-attempts");
    this.attempts.setAttribute("aria-label", "The requests of this step");
    this.body = el("div", "ri-body");
    this.dialog.append(head, this.where, this.attempts, this.body);
    this.dialog.addEventListener("close", () => { this.opener?.focus({ preventScroll: true }); this.opener = null; });
    // A click on the backdrop (outside the panel) closes it too.
    this.dialog.addEventListener("click", (e) => { if (e.target === this.dialog) this.close(); });
    document.body.append(this.dialog);
    /** @type {HTMLElement | null} */
    this.opener = null;
    this.seq = -1;
  }

  /**
   * Opens the inspector on the request whose first event is `seq`, or with `step` on the last request of the step
   * whose trajectory row's seq it is.
   * @param {number} seq
   * @param {boolean} [step]
   */
  async open(seq, step = false) {
    if (!this.dialog.open) this.opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    let value;
    try {
      value = await this.bridge.json("requestInspector", { seq, step });
    } catch (err) {
      this.onError(/** @type {Error} */ (err));
      return;
    }
    if (value.error) {
      this.onError(new Error(value.error.message || String(value.error)));
      return;
    }
    this.show(value);
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** @param {any} value */
  show(value) {
    if (value.missing !== undefined) {
      this.seq = value.missing;
      this.title.textContent = "Request";
      this.where.textContent = "";
      this.attempts.replaceChildren();
      this.body.replaceChildren(el("p", "ri-note", `The loaded window holds no model request at seq ${value.missing}.`));
      return;
    }
    this.seq = value.seq;
    this.dialog.dataset.seq = String(value.seq);
    this.dialog.dataset.status = value.status;
    const scope = value.windowed ? "in the loaded window" : "in this session";
    this.title.textContent = `Request ${value.number} of ${value.count} ${scope}`;
    const { where, body } = build(value);
    this.where.textContent = where;
    this.attempts.replaceChildren();
    if (value.attempts.length > 1) {
      this.attempts.append(el("span", "ri-attempts-label", "This step sent:"));
      for (const a of value.attempts) {
        const b = /** @type {HTMLButtonElement} */ (el("button", `ri-attempt status-${a.status}`, `request ${a.number} · ${a.status}`));
        b.type = "button";
        if (a.seq === value.seq) b.setAttribute("aria-current", "true");
        b.addEventListener("click", () => void this.open(a.seq));
        this.attempts.append(b);
      }
    }
    this.body.replaceChildren(...body);
    this.body.scrollTop = 0;
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }
}

/**
 * The Trajectory view's hook for a step row: a "Request" button (and the key `i` on the focused row) opens the
 * inspector on the row's request.
 * @param {RequestInspector} inspector
 * @returns {(row: any, node: HTMLElement) => void}
 */
export function stepDecorator(inspector) {
  return (row, node) => {
    if (row.kind !== "step") return;
    // A row's own request (a failed one the trajectory adds), else its step's last request.
    const open = () => (typeof row.request === "number" ? inspector.open(row.request) : inspector.open(row.seq, true));
    const button = /** @type {HTMLButtonElement} */ (el("button", "traj-inspect", "Request ›"));
    button.type = "button";
    button.title = "Inspect this step's model request: settings, timing, usage, tools, what changed in the prompt (i)";
    button.setAttribute("aria-label", `Inspect the request of turn ${row.turn ?? "?"} step ${row.step ?? "?"}`);
    button.addEventListener("click", (e) => { e.stopPropagation(); void open(); });
    button.addEventListener("keydown", (e) => e.stopPropagation()); // Enter here is the button's, not the row's
    node.querySelector(".traj-head")?.append(button);
    node.addEventListener("keydown", (e) => {
      if (e.key === "i" && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); e.stopPropagation(); void open(); }
    });
  };
}
