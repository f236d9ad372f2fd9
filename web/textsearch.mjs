// @ts-check
// Text search across the served sessions, from the session list's filter box: while a server answers
// GET /api/search (assembler/server/search_api.py), what is typed there is also looked up in the text of every
// session, and the hits are listed under the list's entries (the session's title, then a snippet with the match
// marked). Picking a hit opens that session at the hit's row (#session=ID&seq=N, navigation.mjs) and starts the
// in-page search (search.mjs) with the words that matched, so the row's match is marked there too.
// Rules: typing is debounced; only the newest answer is drawn; snippets are plain text, the marks are built as
// <mark> elements from the answer's offsets (never innerHTML); a query the server refuses (400) shows its reason;
// no server API (a static host, serve --no-index: 404) hides the section. While the index is being built the
// section says "indexing N of M sessions" and asks again until it is done.
// A published site (site.mjs) has no server: its catalog names the index shards publish wrote
// (assembler/server/site_index.py) and their filter (site_filter.py); the worker fetches the filter once, then only
// the shards a query may find words in, each once, opens them with Pyodide's sqlite3 and answers with the same JSON
// (assembler/browser/sitesearch.py). While it fetches, the section says what and how much (shards of shards, bytes
// read of bytes). A catalog that names no index hides the section, as the 404 does.
import { els } from "./dom.mjs";
import { bridge } from "./runtime.mjs";
import { publishedIndex } from "./sessions.mjs";
import { isPublished } from "./site.mjs";

const DEBOUNCE_MS = 250;
const MIN_CHARS = 2;
const LIMIT = 20;
const POLL_WHILE_INDEXING_MS = 1500;

/** @typedef {{session: string, seq: number, key: string, title: string, snippet: string, marks: number[][]}} Hit */

/** @param {string} tag @param {string} cls @param {string} text */
function el(tag, cls, text = "") {
  const node = document.createElement(tag);
  node.className = cls;
  node.textContent = text;
  return node;
}

/**
 * The snippet with its marked spans as <mark> elements (offsets are UTF-16 indices: JavaScript's own).
 * @param {string} text @param {number[][]} marks
 */
export function markedSnippet(text, marks) {
  const span = el("span", "hit-snippet");
  let at = 0;
  for (const [start, end] of [...marks].sort((a, b) => a[0] - b[0])) {
    if (!(start >= at && end > start && end <= text.length)) continue;
    span.append(text.slice(at, start), el("mark", "hit-mark", text.slice(start, end)));
    at = end;
  }
  span.append(text.slice(at));
  return span;
}

/** A size for a loading note: kB below a megabyte, else MB with one decimal. @param {number} n */
const sized = (n) => (n < 1e6 ? `${Math.max(0, Math.round(n / 1e3))} kB`
  : `${(n / 1e6).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`);

/**
 * The loading note for a worker's {type: "fetching"} message (worker.mjs siteSearch): the filter, or which parts of
 * the index (the shards the query may find words in), with the bytes read of the bytes to read.
 * @param {{filter: boolean, files: number, of: number, total: number, read: number}} fetching
 */
export function fetchingNote({ filter, files, of, total, read }) {
  const size = `${sized(Math.min(read, total))} of ${sized(total)}`;
  if (filter) return `Loading the text index's word filter (${size})…`;
  if (files === of) return `Loading the text index (${of === 1 ? "1 part" : `all ${of} parts`}, ${size})…`;
  return `Loading ${files} of the text index's ${of} parts (${size})…`;
}

/**
 * The answer to a query: {status, body} from GET /api/search, or on a published site from its index in the worker;
 * null when nothing answers (the server is gone: the list says so). `onLoading` gets a note while a published
 * site's index is fetched for the first time.
 * @param {string} query
 * @param {(note: string) => void} onLoading
 * @returns {Promise<{status: number, body: any} | null>}
 */
async function ask(query, onLoading) {
  if (isPublished()) {
    const index = publishedIndex();
    if (!index) return { status: 404, body: null };
    try {
      return await bridge.json("siteSearch", { query, limit: LIMIT, shards: index.shards, filter: index.filter ?? null },
        [], undefined, (/** @type {any} */ fetching) => onLoading(fetchingNote(fetching)));
    } catch (err) {
      return { status: 503, body: { detail: `Text search failed: ${/** @type {Error} */ (err).message}.` } };
    }
  }
  let response;
  try {
    response = await fetch(`api/search?${new URLSearchParams({ q: query, limit: String(LIMIT) })}`,
      { headers: { accept: "application/json" } });
  } catch {
    return null;
  }
  /** @type {any} */
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  return { status: response.status, body };
}

/** The words that matched in a hit (its first mark), for the in-page search. @param {Hit} hit */
function matchedText(hit) {
  const [start, end] = hit.marks[0] || [0, 0];
  return hit.snippet.slice(start, end);
}

/**
 * @param {{open: (hit: Hit, text: string) => void}} options
 */
export function initTextSearch({ open }) {
  const found = document.getElementById("session-hits");
  if (!(found instanceof HTMLElement)) return;
  const box = found;
  let timer = 0;
  let ticket = 0;
  let available = true; // until the server says it keeps no index

  /** @param {string} query */
  async function run(query) {
    clearTimeout(timer);
    const mine = ++ticket;
    if (!available || query.length < MIN_CHARS || document.documentElement.dataset.sessionList !== "shown") {
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    const head = el("h3", "group-head", "Text matches");
    const answer = await ask(query, (note) => {
      if (mine !== ticket) return;
      box.replaceChildren(head, el("p", "session-meta hits-note hits-loading", note));
      box.hidden = false;
    });
    if (mine !== ticket || answer === null) return; // null: the server is gone, the list says so
    const { status, body } = answer;
    if (status === 404) {
      available = isPublished(); // a published site's next catalog may name an index
      box.hidden = true;
      return;
    }
    const items = [head];
    if (status !== 200) {
      items.push(el("p", "session-meta hits-note", body?.detail || `Search failed (HTTP ${status}).`));
    } else {
      const indexing = body.indexing || { done: 0, pending: 0 };
      if (indexing.pending > 0) {
        items.push(el("p", "session-meta hits-note hits-indexing",
          `indexing ${indexing.done} of ${indexing.done + indexing.pending} sessions…`));
        timer = window.setTimeout(() => void run(query), POLL_WHILE_INDEXING_MS);
      }
      /** @type {Hit[]} */
      const hits = body.results || [];
      if (!hits.length) items.push(el("p", "session-meta hits-note", `No text matches “${query}”.`));
      else {
        const ul = el("ul", "hit-list");
        for (const hit of hits) {
          const li = el("li", "hit-entry");
          const button = el("button", "hit-button");
          button.setAttribute("type", "button");
          button.dataset.session = hit.session;
          button.dataset.seq = String(hit.seq);
          button.title = `${hit.title}\n${hit.session} · row ${hit.seq}`;
          button.append(el("span", "session-name", hit.title), markedSnippet(hit.snippet, hit.marks));
          button.addEventListener("click", () => open(hit, matchedText(hit)));
          li.append(button);
          ul.append(li);
        }
        items.push(ul);
        const total = Number(body.total) || 0;
        if (total > hits.length) items.push(el("p", "session-meta hits-note", `the best ${hits.length} of ${total}${body.more ? "+" : ""} rows`));
      }
    }
    box.replaceChildren(...items);
    box.hidden = false;
  }

  els.sessionFilter.addEventListener("input", () => {
    clearTimeout(timer);
    const query = els.sessionFilter.value.trim();
    timer = window.setTimeout(() => void run(query), DEBOUNCE_MS);
  });
}
