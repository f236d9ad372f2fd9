// @ts-check
// Filters: show or hide the chat's rows by kind, and the session list's date filter.
// Row kinds ("facets") are decided in Python (assembler/browser/facets.py, sent as each row's meta.facet/think):
// user, assistant, thinking, tool:NAME, notice. The menu counts each kind among the loaded rows (recounted as rows
// arrive, live ones included) and hides the unticked ones through the Chat view's own row list (TranscriptView
// .rowFilter), so the virtual list, j/k and search (the worker searches only the rows shown: searchShown) see the
// same rows. Hiding "thinking" also hides the Think sections of rows that have text. A row asked for while hidden
// (a deep link, a jump from the trajectory) is shown anyway and the bar says so. The choice is kept in
// localStorage. Everything is built with textContent.
import { formatCount } from "./summary.mjs";

const STORE = "transcript-viewer.hidden-rows";
const DATE_STORE = "transcript-viewer.session-dates";
const FIXED = /** @type {const} */ (["user", "assistant", "thinking", "notice"]);
/** @type {Record<string, string>} */
const LABELS = { user: "User", assistant: "Assistant", thinking: "Thinking", notice: "Notices & activity" };
/** @type {Record<string, string>} */
const TITLES = {
  user: "Messages from the user (and steering, context)",
  assistant: "The model's text",
  thinking: "Reasoning: rows holding only a Think section, and the Think sections of the others",
  notice: "Notices, activity (approvals, goals, hooks, subagents), compaction, commands, turn tails and events",
};

/** @param {string} tag @param {string} [cls] @param {string} [text] */
function el(tag, cls = "", text = "") {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text) node.textContent = text;
  return node;
}

/** @param {string} facet */
export function facetLabel(facet) {
  return facet.startsWith("tool:") ? facet.slice(5) : LABELS[facet] || facet;
}

/** @param {string} key @returns {string[]} */
function loadList(key) {
  try {
    const value = JSON.parse(localStorage.getItem(key) || "[]");
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}

/**
 * Counts of the rows the Chat view would show without the filters, by facet (a row holding a Think section
 * counts under "thinking" too).
 * @param {Iterable<{facet?: string, think?: boolean, hidden?: boolean}>} metas @param {boolean} showEvents
 */
export function facetCounts(metas, showEvents) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const meta of metas) {
    if (meta.hidden && !showEvents) continue;
    const facet = meta.facet || "notice";
    counts.set(facet, (counts.get(facet) || 0) + 1);
    if (meta.think && facet !== "thinking") counts.set("thinking", (counts.get("thinking") || 0) + 1);
  }
  return counts;
}

export class RowFilters {
  /**
   * @param {{view: any, before: HTMLElement, onChange: () => void}} opts  view: the TranscriptView; the bar goes
   *   just before `before`
   */
  constructor(opts) {
    this.opts = opts;
    this.view = opts.view;
    /** @type {Set<string>} */
    this.hidden = new Set(loadList(STORE));
    /** @type {Set<string>} rows shown although their kind is hidden (asked for by a link) */
    this.pinned = new Set();
    /** @type {Map<string, number>} */
    this.counts = new Map();
    /** @type {Map<string, {label: HTMLElement, input: HTMLInputElement, count: HTMLElement}>} */
    this.items = new Map();
    this.frame = 0;
    this.bar = el("div", "row-filters");
    this.bar.id = "row-filters";
    this.menu = /** @type {HTMLDetailsElement} */ (el("details", "menu filter-menu"));
    this.summary = el("summary", "", "Filter rows");
    this.summary.title = "Show or hide rows by kind (counts of the loaded rows)";
    this.list = el("div", "menu-items filter-items");
    this.list.setAttribute("role", "group");
    this.list.setAttribute("aria-label", "Row kinds");
    this.tools = el("p", "filter-group", "Tools");
    const all = /** @type {HTMLButtonElement} */ (el("button", "small-button", "Show all"));
    all.type = "button";
    all.addEventListener("click", () => this.set([]));
    this.allButton = all;
    this.list.append(this.tools, all);
    this.menu.append(this.summary, this.list);
    this.note = el("span", "filter-note");
    this.note.setAttribute("role", "status");
    this.bar.append(this.menu, this.note);
    opts.before.before(this.bar);
    this.view.rowFilter = (/** @type {any} */ meta) => !this.hidden.has(meta.facet || "notice") || this.pinned.has(meta.key);
    this.view.onHiddenKey = (/** @type {string} */ key) => {
      const meta = this.view.metas.get(key);
      if (!meta || !this.hidden.has(meta.facet || "notice") || (meta.hidden && !this.view.showEvents)) return false;
      this.pinned.add(key);
      this.pinnedNote = `The row you asked for (seq ${meta.seq}, ${facetLabel(meta.facet || "notice")}) is a kind the `
        + "filters hide: it is shown anyway.";
      this._note();
      return true;
    };
    this.pinnedNote = "";
    this._apply();
  }

  /** The hidden facets, for the worker's search. */
  hiddenList() {
    return [...this.hidden];
  }

  /** Hides exactly `facets`. @param {Iterable<string>} facets */
  set(facets) {
    this.hidden = new Set(facets);
    this.pinned.clear();
    this.pinnedNote = "";
    try { localStorage.setItem(STORE, JSON.stringify([...this.hidden])); } catch { /* storage refused: not kept */ }
    this._apply();
    this.opts.onChange();
  }

  /** @param {string} facet @param {boolean} shown */
  toggle(facet, shown) {
    const next = new Set(this.hidden);
    if (shown) next.delete(facet);
    else next.add(facet);
    this.set(next);
  }

  /** Rows arrived or changed (or Events was toggled): count again, once per frame. */
  changed() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this._recount();
    });
  }

  /** A new window replaces the last one: rows asked for before are forgotten. */
  reset() {
    this.pinned.clear();
    this.pinnedNote = "";
    this.changed();
  }

  _apply() {
    this.view.container.classList.toggle("hide-thinking", this.hidden.has("thinking"));
    this.view.refilter();
    this._recount();
  }

  _recount() {
    this.counts = facetCounts(this.view.metas.values(), this.view.showEvents);
    const facets = [...FIXED, ...[...new Set([...this.counts.keys(), ...this.hidden])]
      .filter((f) => f.startsWith("tool:")).sort((a, b) => a.localeCompare(b))];
    for (const facet of facets) {
      let item = this.items.get(facet);
      if (!item) {
        const label = el("label", "toggle filter-item");
        const input = /** @type {HTMLInputElement} */ (el("input"));
        input.type = "checkbox";
        input.dataset.facet = facet;
        input.addEventListener("change", () => this.toggle(facet, input.checked));
        const count = el("span", "filter-count");
        label.append(input, ` ${facetLabel(facet)} `, count);
        label.title = TITLES[facet] || `Calls of the tool ${facetLabel(facet)}`;
        item = { label, input, count };
        this.items.set(facet, item);
        if (facet.startsWith("tool:")) {
          // keep the tools sorted: before the first tool that sorts after it
          const after = [...this.items.keys()].filter((f) => f.startsWith("tool:") && f.localeCompare(facet) > 0)
            .sort((a, b) => a.localeCompare(b))[0];
          const next = after ? this.items.get(after)?.label : this.allButton;
          this.list.insertBefore(label, next || this.allButton);
        } else this.list.insertBefore(label, this.tools);
      }
      item.input.checked = !this.hidden.has(facet);
      item.count.textContent = formatCount(this.counts.get(facet) || 0);
    }
    const listed = new Set(facets);
    for (const [facet, item] of this.items) {
      if (listed.has(facet)) item.label.hidden = false;
      else { // a tool the loaded rows no longer call: out of the menu until it is called again
        item.count.textContent = "0";
        item.label.hidden = true;
      }
    }
    this.tools.hidden = !facets.some((f) => f.startsWith("tool:"));
    this._note();
  }

  _note() {
    const kinds = this.hidden.size;
    let rows = 0;
    for (const facet of this.hidden) rows += this.counts.get(facet) || 0;
    this.summary.textContent = kinds ? `Filter rows · ${kinds} kind${kinds === 1 ? "" : "s"} hidden` : "Filter rows";
    this.bar.dataset.active = kinds ? "1" : "";
    const hiddenText = kinds
      ? `${formatCount(rows)} loaded row${rows === 1 ? "" : "s"} hidden (${[...this.hidden].map(facetLabel).join(", ")}).`
      : "";
    this.note.textContent = [hiddenText, this.pinnedNote].filter(Boolean).join(" ");
  }
}

/** The session list's date choices: [value, label, since(now) in epoch ms or null]. */
export const DATE_RANGES = /** @type {const} */ ([
  ["all", "Any date"],
  ["today", "Today"],
  ["7d", "Last 7 days"],
  ["30d", "Last 30 days"],
]);

/** The earliest last-activity time a date choice keeps (null: every entry). @param {string} range @param {Date} now */
export function sinceFor(range, now = new Date()) {
  if (range === "today") return new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  if (range === "7d") return now.getTime() - 7 * 86_400_000;
  if (range === "30d") return now.getTime() - 30 * 86_400_000;
  return null;
}

/**
 * The session list's date filter: a <select> just before `before` (the list's filter box, so Tab still goes from
 * that box into the list); `onChange(since)` with the earliest last
 * activity to keep (null: any date). An entry that records no activity time is hidden while a date is chosen.
 * @param {HTMLElement} before @param {(since: number | null, label: string) => void} onChange
 */
export function initDateFilter(before, onChange) {
  const select = /** @type {HTMLSelectElement} */ (el("select", "session-dates"));
  select.id = "session-dates";
  select.setAttribute("aria-label", "Show the sessions active in this period (by their last activity)");
  select.title = "By last activity; sessions with no recorded time are hidden while a period is chosen";
  for (const [value, label] of DATE_RANGES) {
    const option = /** @type {HTMLOptionElement} */ (el("option", "", label));
    option.value = value;
    select.append(option);
  }
  const saved = loadList(DATE_STORE)[0];
  if (DATE_RANGES.some(([v]) => v === saved)) select.value = saved;
  const emit = () => onChange(sinceFor(select.value), select.selectedOptions[0]?.textContent || "");
  select.addEventListener("change", () => {
    try { localStorage.setItem(DATE_STORE, JSON.stringify([select.value])); } catch { /* not kept */ }
    emit();
  });
  before.before(select);
  if (select.value !== "all") emit();
  return select;
}
