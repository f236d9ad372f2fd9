// @ts-check
// "Show records": the history records a chat row was folded from, as stored (assembler/browser/search.py). A packed
// row is one line with its member count, seq range and time span; its members are expanded by the worker only
// when asked, for that row only. Everything is text (textContent), never HTML.
import { formatCount } from "./summary.mjs";
import { durationText } from "./views.mjs";

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

/** @param {string} text */
function button(text) {
  const b = /** @type {HTMLButtonElement} */ (el("button", "", text));
  b.type = "button";
  return b;
}

/**
 * Where a source record sits: its line, or its zip member and JSON pointer.
 * @param {any} origin
 */
function originText(origin) {
  if (!origin || typeof origin !== "object") return "";
  if (typeof origin.line === "number") return `line ${origin.line}`;
  return [origin.member, origin.pointer].filter((x) => typeof x === "string" && x).join(" ") || "";
}

/**
 * A record's JSON text indented for reading (as written when it does not parse).
 * @param {string} text
 */
function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * The records panel of one row.
 * @param {string} key
 * @param {{json: (op: string, args?: Record<string, unknown>) => Promise<any>}} bridge
 * @returns {Promise<HTMLElement>}
 */
export async function recordsPanel(key, bridge) {
  const value = await bridge.json("records", { key });
  const panel = el("div", "records");
  panel.dataset.records = String(value.records.length);
  const sources = Array.isArray(value.sources) ? value.sources : [];
  if (sources.length) {
    // Another harness's log: the original records (lines, or a document's elements) these events were made from.
    panel.dataset.sources = String(sources.length);
    panel.append(el("div", "records-head", `${sources.length} source record${sources.length === 1 ? "" : "s"}`));
    const originals = el("ol", "records-list records-sources");
    for (const src of sources) {
      const li = el("li", "record record-source");
      li.append(el("div", "record-summary", `${src.recordType ?? "record"} · ${originText(src.origin)} · became ${formatCount((src.events || []).length)} event${(src.events || []).length === 1 ? "" : "s"}`));
      li.append(el("pre", "record-json", prettyJson(src.text ?? "")));
      originals.append(li);
    }
    panel.append(originals);
  }
  panel.append(el("div", "records-head", `${value.records.length} stored record${value.records.length === 1 ? "" : "s"}`));
  const list = el("ol", "records-list");
  for (const rec of value.records) {
    const li = el("li", rec.packed ? "record record-packed" : "record");
    if (!rec.packed) {
      li.append(el("pre", "record-json", rec.json));
    } else {
      const span = rec.lastTime - rec.time;
      const timed = rec.time > 0 ? ` · ${durationText(span)}` : "";
      li.append(el("div", "record-summary",
        `${rec.type} row · ${formatCount(rec.members)} members · seq ${rec.seq}–${rec.lastSeq}${timed} · ${formatCount(rec.bytes)} bytes`));
      const open = button(`Show the ${formatCount(rec.members)} members`);
      open.className = "record-expand";
      open.addEventListener("click", async () => {
        open.disabled = true;
        const full = await bridge.json("recordMembers", { key, index: rec.index });
        const stored = el("pre", "record-json", full.json);
        const members = el("pre", "record-members", full.members.join("\n"));
        members.dataset.members = String(full.members.length);
        open.replaceWith(el("div", "section-label", "As stored"), stored, el("div", "section-label", "Members"), members);
      });
      li.append(open);
    }
    list.append(li);
  }
  panel.append(list);
  return panel;
}

/**
 * Adds the "Show records" control to a rendered row (called after each fill: the row's HTML replaces its content).
 * @param {HTMLElement} row
 * @param {{json: (op: string, args?: Record<string, unknown>) => Promise<any>}} bridge
 * @param {(err: Error) => void} onError
 */
export function addRecordsButton(row, bridge, onError) {
  const key = row.dataset.key;
  if (!key || row.querySelector(":scope .show-records")) return;
  // Beside the row's copy buttons (shown on hover or focus), not on a line of its own under every row.
  const tools = row.querySelector(":scope > .row-tools");
  const bar = tools instanceof HTMLElement ? tools : el("div", "records-bar");
  const show = button("Show records");
  show.className = "show-records";
  show.setAttribute("aria-expanded", "false");
  show.addEventListener("click", async () => {
    const open = row.querySelector(":scope > .records");
    if (open) {
      open.remove();
      show.setAttribute("aria-expanded", "false");
      show.textContent = "Show records";
      return;
    }
    show.disabled = true;
    try {
      const panel = await recordsPanel(key, bridge);
      bar.after(panel);
      show.setAttribute("aria-expanded", "true");
      show.textContent = "Hide records";
    } catch (err) {
      onError(/** @type {Error} */ (err));
    } finally {
      show.disabled = false;
    }
  });
  bar.prepend(show);
  if (bar !== tools) row.append(bar);
}
