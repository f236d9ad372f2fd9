// @ts-check
// "Compare two runs" (the page side): two served sessions side by side, turn by turn. Chosen with the
// Compare button of a session-list row and then a second row (the sidebar says "Comparing with X — choose another
// session", with Cancel), or by the URL #compare=ID_A,ID_B (each id percent-encoded). Both sessions' WHOLE history
// is fetched (one page of every message each, as the whole-session export does) and handed to the worker, which
// folds, compares and renders them in Python (assembler/browser/compare_view.py over assembler.compare and
// assembler/render/compare.py, the CLI's compare): nothing is compared or rendered here. The page shows the
// session summary, then one block per aligned turn; a block's header (how it was matched, what differs) and its
// two columns (each side's rows as the chat export renders them) are asked for when it nears the viewport and
// dropped again far from it (its height kept), and the blocks are in chunks of CHUNK, a chunk far from the viewport
// one empty element of its height, so the DOM stays bounded however long the sessions are. Every HTML
// string comes from assembler.render (escaped, sanitised), inserted as the chat view inserts its rows. The export
// buttons download the comparison as the CLI writes it (HTML or Markdown). The rows are rendered as the chat view's
// (long texts one slice and "Show more", collapsed bodies asked for when opened), and opening or closing a row opens
// or closes its twin on the other side. A session that cannot be loaded or
// compared is said in the one alert (which side, which id, why); the view shows no spinner then.
// Over 400 lines: one concept, the comparison's page side (choosing, the view's bounded blocks, its rows' lazy
// bodies and twins, the export), whose parts share the open comparison's state.
import { download } from "./export.mjs";
import { ALL_MESSAGES } from "./site.mjs";
import { fetchPage } from "./sessions.mjs";
import { clearAlert, progressEnd, progressStart, setAlert, sizeText } from "./status.mjs";

/** A session's history above this many bytes is called out: the comparison holds both whole in the page. */
export const BIG_SESSION_BYTES = 20e6;
/** Blocks this near the viewport get their header and rows; farther than FAR they are emptied again. */
const NEAR = "1000px 0px";
const FAR = "2500px 0px";
/** The turns are in chunks of CHUNK blocks; a chunk farther than CHUNK_FAR from the viewport is one empty element of
 * the height it had (an estimate until it has been shown), so the DOM does not grow with the number of turns. */
const CHUNK = 40;
const CHUNK_FAR = "4000px 0px";
const LIGHT_PX = 48; // a block's light height before it has been laid out

/** @param {string} id */
const enc = (id) => encodeURIComponent(id);
/** The list id of a local session (sessiongroups.mjs localUid): a folder's file or a local file's session. */
const LOCAL_ID = /^(folder|file):/;

/** The hash that opens the comparison of `a` with `b`. @param {string} a @param {string} b */
export function compareHash(a, b) {
  return `#compare=${enc(a)},${enc(b)}`;
}

/** The two ids of a #compare=A,B hash (read raw: a decoded %2C must not split an id), else null. */
export function hashPair(hash = location.hash) {
  const part = hash.replace(/^#/, "").split("&").find((p) => p.startsWith("compare="));
  if (part === undefined) return null;
  const ids = part.slice("compare=".length).split(",");
  if (ids.length !== 2 || !ids[0] || !ids[1]) return { error: "a #compare link names two sessions: #compare=ID_A,ID_B" };
  try {
    return { a: decodeURIComponent(ids[0]), b: decodeURIComponent(ids[1]) };
  } catch {
    return { error: "the #compare link's ids are not percent-encoded correctly" };
  }
}

/**
 * @param {string} tag @param {string} cls @param {string} [text]
 * @returns {HTMLElement}
 */
function el(tag, cls, text = "") {
  const node = document.createElement(tag);
  node.className = cls;
  node.textContent = text;
  return node;
}

/** @param {string} id @returns {HTMLElement} */
function byId(id) {
  const node = document.getElementById(id);
  if (!(node instanceof HTMLElement)) throw new Error(`the page has no #${id}`);
  return node;
}

/**
 * @param {{
 *   bridge: {ready: Promise<unknown>, json: (op: string, args?: Record<string, unknown>, transfer?: Transferable[]) => Promise<any>,
 *     call: (op: string, args?: Record<string, unknown>) => Promise<any>},
 *   title: (id: string) => string,
 *   changed: () => void,
 *   local: (id: string) => ({local?: string | null, file?: Blob | null, key: string | null} | null),
 * }} app
 */
export function initCompare(app) {
  const { bridge } = app;
  const root = byId("compare");
  const heading = byId("compare-title");
  const status = byId("compare-status");
  const summary = byId("compare-summary");
  const turnsRoot = byId("compare-turns");
  const pickBar = byId("compare-pick");
  const pickText = byId("compare-pick-text");
  /** The session picked first in the list (the comparison's A), while the second is chosen. */
  let first = /** @type {string | null} */ (null);
  /** The pair shown (or loading) now, and a counter that makes a newer open win. */
  let shown = /** @type {{a: string, b: string} | null} */ (null);
  let generation = 0;
  let ready = false; // a comparison is open in the worker (its turns can be asked for)
  /** @type {Map<number, {section: HTMLElement, turn: any, filled: boolean}>} */
  const blocks = new Map();
  /** @type {Set<number>} */
  const wanted = new Set();
  let asking = false;

  // ---- choosing the two sessions in the list

  const showPick = () => {
    pickBar.hidden = first === null;
    if (first !== null) pickText.textContent = `Comparing with ${app.title(first)} — choose another session`;
    app.changed();
  };
  const cancelPick = () => { first = null; showPick(); };
  byId("compare-pick-cancel").addEventListener("click", cancelPick);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && first !== null && !event.defaultPrevented) cancelPick();
  });

  /** A row's Compare button (`button`: true) or, while picking, a row itself was chosen. @param {string} id @param {boolean} button */
  const choose = (id, button) => {
    if (first === null) {
      first = id;
      showPick();
      return;
    }
    if (button && id === first) { cancelPick(); return; } // its own Compare button again: changed one's mind
    const a = first;
    cancelPick();
    location.hash = compareHash(a, id);
  };

  // ---- the view

  const exports = /** @type {HTMLButtonElement[]} */ ([...root.querySelectorAll("button[data-compare-export]")]);
  /** The export buttons work once a comparison is open in the worker. @param {boolean} on */
  const setReady = (on) => {
    ready = on;
    for (const b of exports) b.disabled = !on;
  };

  const setShown = (/** @type {boolean} */ on) => {
    root.hidden = !on;
    if (on) document.documentElement.dataset.compare = "1";
    else delete document.documentElement.dataset.compare;
  };

  const near = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const index = Number(/** @type {HTMLElement} */ (entry.target).dataset.index);
      if (entry.isIntersecting && !blocks.get(index)?.filled) wanted.add(index);
      else if (!entry.isIntersecting) wanted.delete(index);
    }
    void fill();
  }, { rootMargin: NEAR });
  const far = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) continue;
      const block = blocks.get(Number(/** @type {HTMLElement} */ (entry.target).dataset.index));
      if (block?.filled) empty(block);
    }
  }, { rootMargin: FAR });

  /** A block's light form: one element, its title and how it was matched as text (its height kept once it has been
   * filled), so a long comparison costs one element per turn away from the viewport. */
  const light = (/** @type {{section: HTMLElement, turn: any, filled: boolean}} */ block, keepHeight = false) => {
    const { section, turn } = block;
    if (keepHeight) section.style.minHeight = `${section.offsetHeight}px`; // CSSOM, not an inline style attribute
    section.textContent = `${turn.title} · ${turn.matchLabel}`;
    section.classList.add("compare-light");
    block.filled = false;
  };
  const empty = (/** @type {{section: HTMLElement, turn: any, filled: boolean}} */ block) => light(block, true);

  const fill = async () => {
    if (asking || !ready || !wanted.size) return;
    asking = true;
    const mine = generation;
    const indices = [...wanted].filter((i) => !blocks.get(i)?.filled).sort((x, y) => x - y).slice(0, 12);
    for (const i of indices) wanted.delete(i);
    try {
      const value = await bridge.json("compareTurns", { indices });
      if (mine !== generation) return;
      if (value.error) throw new Error(value.error.text);
      for (const [key, html] of Object.entries(value.turns)) {
        const block = blocks.get(Number(key));
        if (!block) continue;
        // Produced by assembler.render (escaped, sanitised markdown), as the chat view's rows.
        block.section.innerHTML = html.header + html.columns;
        block.section.classList.remove("compare-light");
        block.section.style.minHeight = "";
        block.filled = true;
      }
      root.dataset.filled = String([...blocks.values()].filter((b) => b.filled).length);
    } catch (err) {
      if (mine === generation) setAlert("compare", `Rendering the comparison failed in Python: ${/** @type {Error} */ (err).message}.`);
    } finally {
      asking = false;
      if (mine === generation && wanted.size) void fill();
    }
  };

  // ---- the rows: collapsed bodies and "Show more" asked for as in the chat view; a row opened or closed on one
  // side opens or closes its twin on the other (the row of the same kind, and for a tool call the same name, at
  // the same position among such rows of that turn's column)

  /** The row's side ("a" or "b") and key. @param {Element} node */
  const rowOf = (node) => {
    const article = node.closest("article[data-key]");
    const side = article?.closest(".compare-side[data-side]");
    if (!(article instanceof HTMLElement) || !(side instanceof HTMLElement)) return null;
    return { article, side, key: article.dataset.key || "", name: side.dataset.side === "b" ? "b" : "a" };
  };
  /** @param {HTMLElement} article */
  const twinKind = (article) => `${article.dataset.kind}\u0000${article.querySelector(".tool-name")?.textContent ?? ""}`;
  /** The collapsible part of the other column that is `details`'s twin, if any. @param {HTMLDetailsElement} details */
  const twinOf = (details) => {
    const row = rowOf(details);
    const other = row?.side.parentElement?.querySelector(`:scope > .compare-side[data-side="${row.name === "a" ? "b" : "a"}"]`);
    if (!row || !other) return null;
    const kind = twinKind(row.article);
    const same = (/** @type {Element} */ side) => [...side.querySelectorAll(":scope > article[data-key]")]
      .filter((a) => twinKind(/** @type {HTMLElement} */ (a)) === kind);
    const position = same(row.side).indexOf(row.article);
    const article = same(other)[position];
    const index = [...row.article.querySelectorAll("details")].indexOf(details);
    const twin = article?.querySelectorAll("details")[index];
    return twin instanceof HTMLDetailsElement ? twin : null;
  };
  /** Renders an opened row's body (once). @param {HTMLDetailsElement} details */
  const loadBody = async (details) => {
    const body = details.querySelector(":scope > [data-pending]");
    const row = rowOf(details);
    if (!(body instanceof HTMLElement) || !row) return;
    body.removeAttribute("data-pending");
    body.classList.add("loading");
    const mine = generation;
    try {
      const { html } = await bridge.json("compareSection", { side: row.name, key: row.key,
        block: Number(body.dataset.thinkBlock || 0) });
      if (mine === generation && body.isConnected) body.innerHTML = html; // produced by assembler.render
    } catch (err) {
      setAlert("compare", `Rendering a row failed in Python: ${/** @type {Error} */ (err).message}.`);
    } finally {
      body.classList.remove("loading");
    }
  };
  turnsRoot.addEventListener("toggle", (event) => {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !rowOf(details)) return;
    if (details.open) void loadBody(details);
    const twin = twinOf(details);
    if (twin && twin.open !== details.open) twin.open = details.open; // its own toggle then loads its body
  }, true); // toggle does not bubble
  turnsRoot.addEventListener("click", async (event) => {
    const button = event.target instanceof Element ? event.target.closest("button.show-more") : null;
    const row = button ? rowOf(button) : null;
    if (!(button instanceof HTMLButtonElement) || !row) return;
    button.disabled = true;
    const mine = generation;
    try {
      const { html } = await bridge.json("compareMore", { side: row.name, key: row.key,
        block: Number(button.dataset.block), offset: Number(button.dataset.offset) });
      if (mine !== generation || !button.isConnected) return;
      button.insertAdjacentHTML("beforebegin", html); // produced by assembler.render
      button.remove();
    } catch (err) {
      button.disabled = false;
      setAlert("compare", `Showing more failed in Python: ${/** @type {Error} */ (err).message}.`);
    }
  });

  // ---- chunks of blocks: shown near the viewport, one empty element of their height far from it

  /** @type {WeakMap<HTMLElement, any[]>} */
  const chunkTurns = new WeakMap();
  /** Creates a chunk's blocks (light). @param {HTMLElement} chunk */
  const expand = (chunk) => {
    if (chunk.dataset.expanded) return;
    chunk.dataset.expanded = "1";
    const sections = (chunkTurns.get(chunk) || []).map((/** @type {any} */ turn) => {
      const section = el("section", "compare-turn");
      section.id = `compare-turn-${turn.index + 1}`;
      section.dataset.index = String(turn.index);
      section.dataset.match = turn.match;
      section.dataset.differences = turn.differences.join(" ");
      const block = { section, turn, filled: false };
      blocks.set(turn.index, block);
      light(block);
      return section;
    });
    chunk.replaceChildren(...sections);
    chunk.style.minHeight = "";
    for (const section of sections) { near.observe(section); far.observe(section); }
  };
  /** Drops a chunk's blocks, keeping its height. @param {HTMLElement} chunk */
  const collapse = (chunk) => {
    if (!chunk.dataset.expanded) return;
    chunk.style.minHeight = `${chunk.offsetHeight}px`;
    for (const section of /** @type {HTMLElement[]} */ ([...chunk.children])) {
      near.unobserve(section);
      far.unobserve(section);
      blocks.delete(Number(section.dataset.index));
      wanted.delete(Number(section.dataset.index));
    }
    chunk.replaceChildren();
    delete chunk.dataset.expanded;
    root.dataset.filled = String([...blocks.values()].filter((b) => b.filled).length);
  };
  const chunked = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const chunk = /** @type {HTMLElement} */ (entry.target);
      if (entry.isIntersecting) expand(chunk);
      else collapse(chunk);
    }
  }, { rootMargin: CHUNK_FAR });

  const clearView = () => {
    chunked.disconnect();
    near.disconnect();
    far.disconnect();
    blocks.clear();
    wanted.clear();
    summary.replaceChildren();
    turnsRoot.replaceChildren();
    delete root.dataset.filled;
    delete root.dataset.state;
    delete root.dataset.turns;
  };

  /**
   * Loads one side's whole history: a served session's page (`bytes`), or a local file's session read in the worker
   * (`bytes` null: the page waits there); rejects with an error naming the side.
   * @param {"A" | "B"} side @param {string} id
   * @returns {Promise<{bytes: Uint8Array | null, size: number, warning: string | null}>}
   */
  const load = async (side, id) => {
    try {
      const local = app.local(id);
      if (local) {
        const read = await bridge.json("compareLocal", { side: side === "B" ? "b" : "a", ...local });
        if (read.error) throw new Error(read.error);
        return { bytes: null, size: read.bytes, warning: read.warning ? `session ${side} “${id}”: ${read.warning}` : null };
      }
      if (LOCAL_ID.test(id)) {
        throw new Error("it is a session of a local file or folder that is not open in the page (open it again, then "
          + "choose it in the list)");
      }
      const bytes = await fetchPage(id, { through: null, maxMessages: ALL_MESSAGES });
      return { bytes, size: bytes.length, warning: null };
    } catch (err) {
      throw new Error(`session ${side} “${id}” could not be loaded: ${/** @type {Error} */ (err).message}`);
    }
  };

  /** Opens the comparison of `a` (the reference) with `b`. @param {string} a @param {string} b */
  const open = async (a, b) => {
    const mine = ++generation;
    shown = { a, b };
    setReady(false);
    void bridge.ready.then(() => bridge.call("compareClose")).catch(() => {});
    clearView();
    setShown(true);
    clearAlert("compare");
    heading.textContent = `Comparing ${app.title(a)} with ${app.title(b)}`;
    root.dataset.state = "loading";
    status.textContent = "Loading both sessions' whole history…";
    const t0 = performance.now();
    progressStart(`Comparing: loading ${app.title(a)} and ${app.title(b)}`);
    try {
      await bridge.ready;
      const [pa, pb] = await Promise.all([load("A", a), load("B", b)]);
      if (mine !== generation) return;
      const bytes = { a: pa.size, b: pb.size };
      status.textContent = "Comparing in Python…";
      const transfer = [pa.bytes, pb.bytes].flatMap((p) => (p ? [p.buffer] : []));
      const value = await bridge.json("compareOpen", { a: pa.bytes, b: pb.bytes, idA: a, idB: b }, transfer);
      if (mine !== generation) return;
      if (value.error) {
        const side = value.error.side === "b" ? "B" : "A";
        throw new Error(`session ${side} “${value.error.id}” could not be compared: ${value.error.text}`);
      }
      setReady(true);
      draw(value, bytes, performance.now() - t0);
      // A local file read up to a fault is compared as far as it was read, and the alert says so.
      const warnings = [pa.warning, pb.warning].filter(Boolean);
      if (warnings.length) setAlert("compare", `Compared what was read before a fault: ${warnings.join("; ")}.`);
    } catch (err) {
      if (mine !== generation) return;
      root.dataset.state = "error";
      status.textContent = "The comparison could not be shown (the alert above says why).";
      setAlert("compare", `Comparing failed: ${/** @type {Error} */ (err).message}.`);
    } finally {
      progressEnd();
    }
  };

  /** @param {any} value @param {{a: number, b: number}} bytes @param {number} ms */
  const draw = (value, bytes, ms) => {
    heading.textContent = value.title;
    // Produced by assembler.render.compare (every text escaped).
    summary.innerHTML = value.summary;
    const same = value.differences.length === 0;
    const big = [["A", bytes.a], ["B", bytes.b]].filter(([, n]) => Number(n) > BIG_SESSION_BYTES);
    const notes = [same ? "No difference: the two sessions have the same turns, calls, counts and final texts."
      : `Differs in: ${value.differenceLabels.join(", ")}.`,
    `Both sessions' whole history is loaded for the comparison (A ${sizeText(bytes.a)}, B ${sizeText(bytes.b)}; `
      + `${value.turns.length} aligned turn${value.turns.length === 1 ? "" : "s"}, shown in ${Math.round(ms)} ms).`];
    if (big.length) {
      notes.push(`${big.map(([side]) => side).join(" and ")} ${big.length === 1 ? "is" : "are"} large: the page holds `
        + "both whole histories in memory while the comparison is open (Close frees them).");
    }
    status.textContent = notes.join(" ");
    root.dataset.state = "shown";
    root.dataset.same = same ? "1" : "0";
    root.dataset.ms = JSON.stringify({ ...value.ms, shown: Math.round(ms) }); // the worker's split (perf/bench_compare.py)
    root.dataset.turns = String(value.turns.length);
    const chunks = [];
    for (let start = 0; start < value.turns.length; start += CHUNK) {
      const chunk = el("div", "compare-chunk");
      const turns = value.turns.slice(start, start + CHUNK);
      chunk.style.minHeight = `${turns.length * LIGHT_PX}px`; // CSSOM, not an inline style attribute
      chunkTurns.set(chunk, turns);
      chunks.push(chunk);
    }
    turnsRoot.replaceChildren(...chunks);
    if (chunks.length) expand(chunks[0]); // the first turns at once; the others as they near the viewport
    for (const chunk of chunks) chunked.observe(chunk);
  };

  const close = () => {
    generation++;
    shown = null;
    setReady(false);
    clearView();
    setShown(false);
    clearAlert("compare");
    void bridge.ready.then(() => bridge.call("compareClose")).catch(() => {});
  };

  /** Applies the URL: #compare=A,B opens (or keeps) that comparison; any other hash closes it. */
  const follow = () => {
    const pair = hashPair();
    if (pair === null) {
      if (shown !== null || !root.hidden) close();
      return;
    }
    if ("error" in pair) {
      close();
      setAlert("compare", `Comparing failed: ${pair.error}.`);
      return;
    }
    if (shown && shown.a === pair.a && shown.b === pair.b) return;
    void open(pair.a, pair.b);
  };

  for (const b of exports) {
    b.addEventListener("click", async () => {
      b.disabled = true;
      try {
        if (!ready) throw new Error("no comparison is shown yet");
        const format = b.dataset.compareExport === "md" ? "md" : "html";
        const value = await bridge.json("compareExport", { format });
        if (value.error) throw new Error(value.error.text);
        download(value.text, value.name, format === "md" ? "text/markdown;charset=utf-8" : "text/html;charset=utf-8");
      } catch (err) {
        setAlert("compare", `Exporting the comparison failed: ${/** @type {Error} */ (err).message}.`);
      } finally {
        b.disabled = !ready;
      }
    });
  }
  byId("compare-close").addEventListener("click", () => {
    // Back to what the URL showed before, else to an empty hash.
    history.pushState(history.state, "", location.pathname + location.search);
    close();
  });

  window.addEventListener("hashchange", follow);
  follow();
  return {
    choose,
    picking: () => first,
    cancelPick,
    follow,
  };
}
