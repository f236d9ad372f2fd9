// @ts-check
// Search inside the Trajectory view: while it is shown, the header's search box (search.mjs) counts and marks the
// query in the trajectory's rows and moves through them there, never switching to the Chat view. A row's text is
// the text its element shows (`trajectoryText`, in the element's order, without building it: a test checks it
// equals the element's textContent; tool names included, which is why its rows let the marks into their buttons),
// so the counter and the marks agree. Cached per row value. Plain JavaScript: the rows are the worker's values.
import { foldCase } from "./search.mjs";
import { durationText, stepMetrics } from "./views.mjs";

/** @param {unknown} v */
const known = (v) => v !== null && v !== undefined;

/** The text of a trajectory row's element (views.trajectoryRow), in document order. @param {any} row */
export function trajectoryText(row) {
  const parts = [row.status];
  if (row.kind === "turn-end") {
    parts.push(`Turn ${row.turn ?? "?"} ended`);
    if (known(row.durationMs)) parts.push(`turn ran ${durationText(row.durationMs)}`);
    if (row.error) parts.push(row.error);
    return parts.join("");
  }
  parts.push(`Turn ${row.turn ?? "?"} · step ${row.step ?? "?"}`);
  if (row.model) parts.push(row.model);
  const metrics = stepMetrics(row);
  if (metrics) parts.push(metrics);
  if (row.error) parts.push(known(row.retry) ? `Retry ${row.retry}: ${row.error}` : row.error);
  if (row.summary) parts.push(row.summary);
  for (const tool of row.tools || []) parts.push(tool.name || "", tool.status || "");
  return parts.join("");
}

/** Non-overlapping occurrences of `q` in `text`. @param {string} text @param {string} q */
function occurrences(text, q) {
  let n = 0;
  for (let at = text.indexOf(q); at >= 0; at = text.indexOf(q, at + q.length)) n += 1;
  return n;
}

export class TrajectorySearch {
  /** @param {{trajectory: {rows: any[], list: import("./vlist.mjs").VirtualList}}} views */
  constructor(views) {
    this.views = views;
    /** @type {WeakMap<object, string>} a row value's folded text */
    this.texts = new WeakMap();
  }

  /** The folded text the row's element shows. @param {any} row */
  text(row) {
    let text = this.texts.get(row);
    if (text === undefined) {
      text = foldCase(trajectoryText(row));
      this.texts.set(row, text);
    }
    return text;
  }

  /** The worker search's answer shape over the trajectory rows: `{query, total, hits: [[key, count, []]]}`.
   * @param {string} query */
  search(query) {
    const q = foldCase(query);
    /** @type {[string, number, number[]][]} */
    const hits = [];
    let total = 0;
    if (q) {
      for (const row of this.views.trajectory.rows) {
        const n = occurrences(this.text(row), q);
        if (n) {
          hits.push([String(row.key), n, []]);
          total += n;
        }
      }
    }
    return { query, total, hits, ms: 0 };
  }

  /** Scrolls row `key` into view; its element. @param {string} key */
  reveal(key) {
    const i = this.views.trajectory.rows.findIndex((r) => String(r.key) === key);
    if (i < 0) return null;
    const { list } = this.views.trajectory;
    list.scrollToIndex(i, "center");
    return list.element(key);
  }

  /** The trajectory rows in the DOM. */
  attached() {
    return [...this.views.trajectory.list.attached.values()];
  }
}
