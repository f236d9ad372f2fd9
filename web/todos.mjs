// @ts-check
// The plan panel: the session's latest todo list (the window's last todo/write, assembler/browser/panels.py:
// latest_todos) kept in view beside the chat, each item's state marked, "N of M done" in its summary. It follows the
// window: refreshed (debounced) after each update, hidden when the window holds no plan or another view is shown.
// Plain text only (textContent): an item's words are the model's.

const MARKS = { completed: "☑", in_progress: "◐", pending: "☐" };
const STATES = { completed: "done", in_progress: "in progress", pending: "to do" };

export class TodoPanel {
  /**
   * @param {{root: HTMLElement, bridge: {json: (op: string) => Promise<any>}}} opts  root: an <aside> with a
   *   <details> holding a <summary> and a <ul>
   */
  constructor({ root, bridge }) {
    this.root = root;
    this.bridge = bridge;
    this.details = /** @type {HTMLDetailsElement} */ (root.querySelector("details"));
    this.summary = /** @type {HTMLElement} */ (root.querySelector("summary"));
    this.list = /** @type {HTMLElement} */ (root.querySelector("ul"));
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null;
    this.epoch = 0; // bumped by clear(): an answer for the last window is dropped
    this.shown = "";
    // Narrow, the panel sits over the chat: it starts as its one summary line (the reader opens it).
    if (window.matchMedia("(max-width: 1100px)").matches) this.details.open = false;
  }

  /** The window changed: ask again once the updates settle. */
  changed() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 250);
  }

  async refresh() {
    this.timer = null;
    const epoch = this.epoch;
    let value;
    try {
      value = await this.bridge.json("todos");
    } catch {
      return; // the panel is a convenience: a failure here leaves it as it was (the worker's error is reported elsewhere)
    }
    if (epoch === this.epoch) this.show(value);
  }

  /** @param {{seq: number, todos: {content: string, status: string}[]} | null} value */
  show(value) {
    const todos = value?.todos ?? [];
    const key = JSON.stringify(todos);
    this.root.hidden = todos.length === 0;
    if (key === this.shown) return;
    this.shown = key;
    const done = todos.filter((t) => t.status === "completed").length;
    this.summary.textContent = `Plan · ${done} of ${todos.length} done`;
    this.list.replaceChildren(...todos.map((t) => {
      const li = document.createElement("li");
      li.className = `todo todo-${t.status}`;
      li.dataset.status = t.status;
      const mark = /** @type {Record<string, string>} */ (MARKS)[t.status] ?? "☐";
      const state = /** @type {Record<string, string>} */ (STATES)[t.status] ?? "to do";
      li.textContent = `${mark} ${t.content}`;
      li.title = state;
      li.setAttribute("aria-label", `${t.content} (${state})`);
      return li;
    }));
  }

  /** A new window: forget the last plan. */
  clear() {
    this.epoch += 1;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.shown = "";
    this.root.hidden = true;
    this.list.replaceChildren();
  }
}
