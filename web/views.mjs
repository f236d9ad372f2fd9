// @ts-check
// The Trajectory and Model-context views, and the switch between them and the Chat view: `#...&view=chat|trajectory|
// context`, the header tabs and the keys 1/2/3. The element holding the views carries data-view. Both lists are
// computed by the worker from the window the chat shows (assembler/browser/panels.py) and laid out here with
// textContent only (no HTML from the transcript), in virtual lists (vlist.mjs) so the DOM stays bounded.
import { formatCount, tokenCount } from "./summary.mjs";
import { VirtualList } from "./vlist.mjs";

export const VIEWS = /** @type {const} */ (["chat", "trajectory", "context"]);

/** @param {number | null | undefined} ms */
export function durationText(ms) {
  if (typeof ms !== "number" || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
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

/** A list of rows from the worker, laid out by a VirtualList. */
class RowList {
  /**
   * @param {HTMLElement} container
   * @param {(row: any) => HTMLElement} build
   * @param {(row: any) => number} estimate
   * @param {(row: any) => string} key  a row's unique key
   */
  constructor(container, build, estimate, key) {
    /** @type {any[]} */
    this.rows = [];
    /** @type {(node: HTMLElement) => void} called with each row built (search marks: features.mjs) */
    this.onRow = () => {};
    this.list = new VirtualList(container, {
      key: (i) => key(this.rows[i]),
      estimate: (i) => estimate(this.rows[i]),
      create: (i) => {
        const node = build(this.rows[i]);
        node.dataset.key = key(this.rows[i]);
        this.onRow(node);
        return node;
      },
    });
  }

  /** @param {any[]} rows */
  set(rows) {
    this.rows = rows;
    this.list.heights.clear(); // rows are rebuilt from scratch: a key may name another row now
    this.list.detachAll();
    this.list.setCount(rows.length);
  }
}

/** A step row's metrics as its row shows them: "TTFT 1.2 s · 3.4 s · 1.2k in / 300 out / 50 reasoning", the parts
 * recorded ("" when none). One text for the row (`trajectoryRow`) and its search (trajsearch.mjs). @param {any} row */
export function stepMetrics(row) {
  const metrics = [];
  if (row.ttftMs !== null && row.ttftMs !== undefined) metrics.push(`TTFT ${durationText(row.ttftMs)}`);
  if (row.durationMs !== null && row.durationMs !== undefined) metrics.push(durationText(row.durationMs));
  const t = row.tokens;
  if (t) {
    const parts = [];
    if (typeof t.inputTokens === "number") parts.push(`${tokenCount(t.inputTokens)} in`);
    if (typeof t.outputTokens === "number") parts.push(`${tokenCount(t.outputTokens)} out`);
    if (typeof t.reasoningTokens === "number") parts.push(`${tokenCount(t.reasoningTokens)} reasoning`);
    if (parts.length) metrics.push(parts.join(" / "));
  }
  return metrics.join(" · ");
}

/**
 * @param {any} row
 * @param {(key: string | null, seq: number) => void} jump
 * @param {((row: any, node: HTMLElement) => void) | undefined} [decorate]  adds a step's request button (inspector.mjs)
 */
export function trajectoryRow(row, jump, decorate) {
  const node = el("div", `traj-row traj-${row.kind} status-${row.status}`);
  node.tabIndex = 0;
  node.setAttribute("role", "button");
  const head = el("div", "traj-head");
  head.append(el("span", `badge traj-status status-${row.status}`, row.status));
  if (row.kind === "turn-end") {
    head.append(el("span", "traj-where", `Turn ${row.turn ?? "?"} ended`));
    if (row.durationMs !== null && row.durationMs !== undefined) {
      head.append(el("span", "traj-metrics", `turn ran ${durationText(row.durationMs)}`));
    }
    node.append(head);
    if (row.error) node.append(el("div", "traj-error", row.error));
  } else {
    head.append(el("span", "traj-where", `Turn ${row.turn ?? "?"} · step ${row.step ?? "?"}`));
    if (row.model) head.append(el("span", "traj-model", row.model));
    const metrics = stepMetrics(row);
    if (metrics) head.append(el("span", "traj-metrics", metrics));
    node.append(head);
    if (row.bar) {
      const bar = el("div", "traj-bar");
      bar.title = "This step within its turn";
      const fill = el("span", "traj-bar-fill");
      fill.style.marginLeft = `${(row.bar.left * 100).toFixed(2)}%`;
      fill.style.width = `${Math.max(0.3, row.bar.width * 100).toFixed(2)}%`;
      bar.append(fill);
      node.append(bar);
    }
    if (row.error) node.append(el("div", "traj-error", row.retry !== null && row.retry !== undefined ? `Retry ${row.retry}: ${row.error}` : row.error));
    if (row.summary) node.append(el("div", "traj-summary", row.summary));
    if (row.tools?.length) {
      const list = el("ul", "traj-tools");
      for (const tool of row.tools) {
        const li = el("li", `traj-tool status-${tool.status}`);
        const button = el("button", "traj-tool-name", tool.name);
        /** @type {HTMLButtonElement} */ (button).type = "button";
        button.addEventListener("click", (e) => { e.stopPropagation(); jump(tool.key || row.chatKey, row.seq); });
        li.append(button, el("span", `badge status-${tool.status}`, tool.status));
        list.append(li);
      }
      node.append(list);
    }
  }
  decorate?.(row, node);
  const go = () => jump(row.chatKey ?? null, row.seq);
  node.addEventListener("click", go);
  node.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); go(); } });
  return node;
}

/**
 * @param {any} message
 * @param {{jump: (key: string | null, seq: number) => void, full: (seq: number) => Promise<string>}} hooks
 */
function contextMessage(message, hooks) {
  const node = el("article", `ctx-msg role-${message.role}${message.shadowed.length ? " is-summary" : ""}`);
  const head = el("div", "ctx-head");
  head.append(el("span", "ctx-role", message.role), el("span", "ctx-seq", `seq ${message.seq} · ${message.type}`));
  const n = message.shadowed.length;
  if (n) head.append(el("span", "badge", `compaction summary of ${n} message${n === 1 ? "" : "s"}`));
  const several = message.links.length > 1;
  for (const [i, key] of message.links.entries()) {
    const label = several ? `Show in chat (${i + 1} of ${message.links.length})` : "Show in chat";
    const link = /** @type {HTMLButtonElement} */ (el("button", "ctx-link", label));
    link.type = "button";
    link.title = several ? `Show chat row ${i + 1} of the ${message.links.length} this message came from`
      : "Show the chat row this message came from";
    link.addEventListener("click", () => hooks.jump(key, message.seq));
    head.append(link);
  }
  const text = el("pre", "ctx-text", message.text || "(no text)");
  node.append(head, text);
  if (message.chars > message.text.length) {
    const more = /** @type {HTMLButtonElement} */ (el("button", "show-more", `Show all ${formatCount(message.chars)} characters`));
    more.type = "button";
    more.addEventListener("click", async () => {
      more.disabled = true;
      text.textContent = await hooks.full(message.seq);
      more.remove();
    });
    node.append(more);
  }
  if (message.shadowed.length) {
    const details = el("details", "ctx-shadowed");
    const first = message.shadowed[0].seq;
    const last = message.shadowed[message.shadowed.length - 1].seq;
    const span = first === last ? `seq ${first}` : `seq ${first} to ${last}`;
    details.append(el("summary", "", n === 1 ? `The message it replaced (${span})` : `The ${n} messages it replaced (${span})`));
    details.addEventListener("toggle", () => {
      if (!(/** @type {HTMLDetailsElement} */ (details)).open || details.childElementCount > 1) return;
      for (const m of message.shadowed) details.append(contextMessage(m, hooks));
    });
    node.append(details);
  }
  return node;
}

/** The view switch and the two worker-computed views. */
export class ViewSwitch {
  /**
   * @param {{
   *   root: HTMLElement, tabs: HTMLElement, chat: HTMLElement[], trajectory: HTMLElement, context: HTMLElement,
   *   contextNote: HTMLElement,
   *   bridge: {json: (op: string, args?: Record<string, unknown>) => Promise<any>},
   *   jumpToChat: (key: string | null, seq: number) => Promise<void> | void,
   *   decorateStep?: (row: any, node: HTMLElement) => void,
   *   onError: (err: Error) => void,
   * }} opts
   */
  constructor(opts) {
    this.opts = opts;
    /** @type {"chat" | "trajectory" | "context"} */
    this.current = "chat";
    this.generation = 0; // bumped whenever the window changes
    /** @type {Record<string, number>} the generation each view was built from */
    this.built = { trajectory: -1, context: -1 };
    /** @type {Promise<unknown>} */
    this.loading = Promise.resolve();
    this.timer = 0;
    /** @type {((value: unknown) => void) | null} */
    this.pending = null;
    /** @type {(view: string, previous: string) => void} after a view is shown (features.mjs) */
    this.onShow = () => {};
    /** @type {(value: any) => void} after the trajectory's rows are in place, with the worker's value (timeline) */
    this.onTrajectory = () => {};
    const jump = (/** @type {string | null} */ key, /** @type {number} */ seq) => {
      this.show("chat");
      void opts.jumpToChat(key, seq);
    };
    this.trajectory = new RowList(opts.trajectory, (row) => trajectoryRow(row, jump, opts.decorateStep),
      (row) => (row.kind === "turn-end" ? 40 : 70 + (row.tools?.length ? 28 : 0)), (row) => String(row.key));
    const hooks = {
      jump,
      full: async (/** @type {number} */ seq) => (await opts.bridge.json("contextMessage", { seq })).text,
    };
    this.context = new RowList(opts.context, (m) => contextMessage(m, hooks),
      (m) => 60 + Math.min(20, Math.ceil((m.text?.length || 0) / 90)) * 20, (m) => `seq-${m.seq}`);
    for (const button of opts.tabs.querySelectorAll("button[data-view-tab]")) {
      button.addEventListener("click", () => this.show(/** @type {any} */ (/** @type {HTMLElement} */ (button).dataset.viewTab), { hash: true }));
    }
    this._mark();
  }

  /** The window changed: rebuild the visible worker view, the other one when next shown. */
  changed() {
    this.generation += 1;
    if (this.current === "chat") return;
    // A live session changes the window many times a second: rebuild once it settles (tests await ready()).
    clearTimeout(this.timer);
    if (!this.pending) this.loading = new Promise((resolve) => { this.pending = resolve; });
    this.timer = window.setTimeout(() => {
      const resolve = this.pending;
      this.pending = null;
      const view = this.current;
      resolve?.(view === "chat" ? undefined : this._refresh(view));
    }, 200);
  }

  /**
   * @param {"chat" | "trajectory" | "context"} view
   * @param {{hash?: boolean}} [options] write the view into the URL
   */
  show(view, { hash = false } = {}) {
    if (!VIEWS.includes(view)) view = "chat";
    const previous = this.current;
    this.current = view;
    this._mark();
    if (hash) writeHashView(view);
    if (view !== "chat" && this.built[view] !== this.generation) this.loading = this._refresh(view);
    else if (view === "trajectory") this.trajectory.list.update();
    else if (view === "context") this.context.list.update();
    this.onShow(view, previous);
    return previous !== view;
  }

  _mark() {
    const { root, tabs, chat, trajectory, context } = this.opts;
    root.dataset.view = this.current;
    // "Load older" serves the trajectory too (its rows come from the same window); the chat rows only the chat.
    for (const node of chat) node.hidden = this.current !== "chat" && !(node.id === "chat-older" && this.current === "trajectory");
    trajectory.hidden = this.current !== "trajectory";
    context.hidden = this.current !== "context";
    this.opts.contextNote.hidden = this.current !== "context" || !this.opts.contextNote.textContent;
    for (const button of tabs.querySelectorAll("button[data-view-tab]")) {
      const on = /** @type {HTMLElement} */ (button).dataset.viewTab === this.current;
      button.setAttribute("aria-selected", on ? "true" : "false");
    }
  }

  /** @param {"trajectory" | "context"} view */
  async _refresh(view) {
    const generation = this.generation;
    try {
      if (view === "trajectory") {
        const value = await this.opts.bridge.json("trajectory");
        if (generation !== this.generation) return;
        this.built.trajectory = generation;
        this.opts.trajectory.dataset.rows = String(value.rows.length);
        this.trajectory.set(value.rows);
        this.onTrajectory(value);
      } else {
        const value = await this.opts.bridge.json("context");
        if (generation !== this.generation) return;
        this.built.context = generation;
        this.opts.context.dataset.rows = String(value.messages.length);
        const note = this.opts.contextNote;
        const summaries = value.messages.filter((/** @type {any} */ m) => m.shadowed.length).length;
        note.textContent = [
          value.problems.length
            ? `The loaded window starts inside compacted history: ${value.problems.map((/** @type {{seq: number, reason: string}} */ p) => `seq ${p.seq}: ${p.reason}`).slice(0, 3).join("; ")}.`
            : "",
          summaries
            ? `What the model saw after ${summaries === 1 ? "a compaction" : `${summaries} compactions`}: each summary`
              + " stands where the messages it replaced were, so the seq numbers run out of order there; open a"
              + " summary to read what it replaced."
            : "",
        ].filter(Boolean).join(" ");
        note.hidden = !note.textContent || this.current !== "context";
        this.context.set(value.messages);
      }
    } catch (err) {
      this.opts.onError(/** @type {Error} */ (err));
    }
  }

  /** Resolves when the current view's rows are in place. */
  async ready() {
    await this.loading;
  }
}

/** The view named in the URL (`#...&view=NAME`), default chat. */
export function hashView() {
  const view = new URLSearchParams(location.hash.replace(/^#/, "")).get("view");
  return VIEWS.includes(/** @type {any} */ (view)) ? /** @type {"chat" | "trajectory" | "context"} */ (view) : "chat";
}

/** Writes the view into the URL without a navigation (keeps session and seq). */
/** @param {string} view */
export function writeHashView(view) {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (view === "chat") params.delete("view");
  else params.set("view", view);
  const hash = params.toString();
  history.replaceState(null, "", hash ? `#${hash}` : location.pathname + location.search);
}
