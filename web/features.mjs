// @ts-check
// Wires the views (views.mjs), search (search.mjs), raw records (records.mjs) and the Export menu (export.mjs) into
// the page, with a few hooks the app calls: `changed(update)` after every update the chat applied, `followHash()`
// on navigation, and `onFilled(row)` from the Chat view after a row's HTML changed. Keys: 1/2/3 switch views, `/`
// focuses search. Adds to window.transcriptViewer: search(text), showView(name), views, exportFile(options).
import { exportFile, initExportMenu } from "./export.mjs";
import { RowFilters } from "./filters.mjs";
import { RequestInspector, stepDecorator } from "./inspector.mjs";
import { ContextMeter } from "./meter.mjs";
import { addRecordsButton } from "./records.mjs";
import { Search, clearMarks } from "./search.mjs";
import { TimelineOverview } from "./timeline.mjs";
import { TodoPanel } from "./todos.mjs";
import { TrajectorySearch } from "./trajsearch.mjs";
import { ViewSwitch, hashView } from "./views.mjs";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * @template {Element} T
 * @param {string} id
 * @param {new (...args: any[]) => T} type
 * @returns {T}
 */
function byId(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`the page has no #${id} (${type.name})`);
  return el;
}

/**
 * @param {{
 *   bridge: {json: (op: string, args?: Record<string, unknown>, transfer?: Transferable[]) => Promise<any>},
 *   view: any,
 *   viewer: Record<string, any>,
 *   showEvents: () => boolean,
 *   title: () => string,
 *   session: () => string | null,
 *   fetchPage: (id: string, options: {through: number, maxMessages: number}) => Promise<Uint8Array>,
 *   fetchRun: () => Promise<any>,
 *   scrollToSeq: (seq: number, options?: {what?: string}) => Promise<string | null>,
 *   older: {exists: () => boolean, canLoad: () => boolean, load: () => Promise<boolean>},
 *   onError: (text: string) => void,
 * }} app
 */
export function initFeatures(app) {
  const { bridge, view } = app;
  let last = -1; // the window's last seq (for a whole-session export of a served session)
  const report = (/** @type {string} */ what) => (/** @type {Error} */ err) => app.onError(`${what}: ${err.message}`);

  const inspector = new RequestInspector({ bridge, onError: report("Could not inspect the request") });
  const views = new ViewSwitch({
    root: byId("view-root", HTMLElement),
    tabs: byId("view-tabs", HTMLElement),
    chat: [byId("transcript", HTMLElement), byId("chat-older", HTMLElement)],
    trajectory: byId("trajectory", HTMLElement),
    context: byId("context", HTMLElement),
    contextNote: byId("context-note", HTMLElement),
    bridge,
    jumpToChat: async (key, seq) => {
      if (!key) {
        const found = await bridge.json("findSeq", { seq });
        key = found.key;
      }
      if (!key) return;
      view.focusKey(key, { block: "center" });
      await view.renderKeys([key]);
      const el = view.focusKey(key, { block: "center" });
      for (const t of document.querySelectorAll("#transcript .is-target")) t.classList.remove("is-target");
      el?.classList.add("is-target");
    },
    decorateStep: stepDecorator(inspector),
    onError: report("Could not build the view"),
  });
  const meter = new ContextMeter({ root: byId("view-root", HTMLElement), before: byId("trajectory", HTMLElement),
    bridge, open: (seq) => void inspector.open(seq) });

  // While the Trajectory view is shown, search looks in its rows and stays there (trajsearch.mjs); in the chat it
  // searches the rows the filters show (filters.mjs).
  const trajSearch = new TrajectorySearch(views);
  const inTrajectory = () => views.current === "trajectory";
  const filters = new RowFilters({ view, before: byId("transcript", HTMLElement), onChange: () => { search.refresh(); views.changed(); } });
  const search = new Search({
    input: byId("search", HTMLInputElement),
    counter: byId("search-count", HTMLElement),
    prev: byId("search-prev", HTMLButtonElement),
    next: byId("search-next", HTMLButtonElement),
    bridge: {
      json: async (op, args) => {
        if (op !== "search") return bridge.json(op, args);
        if (inTrajectory()) {
          await views.ready();
          return trajSearch.search(String(args?.query ?? ""));
        }
        return bridge.json("searchShown", { ...args, hidden: filters.hiddenList() });
      },
    },
    includeHidden: app.showEvents,
    reveal: async (key, blocks) => {
      if (inTrajectory()) return trajSearch.reveal(key);
      views.show("chat", { hash: true });
      if (!view.shownKeys().includes(key)) return null;
      // The match is scrolled into view and marked; the focus stays in the search box (Enter goes on to the next).
      view.revealKey(key, { block: "center" });
      await view.renderKeys([key]);
      view.revealKey(key, { block: "center" });
      await view.openBlocks(key, blocks);
      return view.element(key);
    },
    attached: () => (inTrajectory() ? trajSearch.attached() : view.attached()),
    onError: report("Search failed"),
    // Older history not loaded yet (flows.loadOlder; the trajectory's rows come from the same window).
    older: { button: byId("search-older", HTMLButtonElement), ...app.older },
  });
  views.trajectory.onRow = (node) => {
    node.dataset.markButtons = "1"; // its tool names are buttons, and searched
    search.decorate(node);
  };
  views.onShow = (now, previous) => {
    if (now !== previous && (now === "trajectory" || previous === "trajectory")) {
      // The view left keeps no marks: hidden, they would outlive its query (and a stale "current" mark would be
      // the first the page finds); the view shown is searched again.
      clearMarks(byId(previous === "trajectory" ? "trajectory" : "transcript", HTMLElement));
      search.refresh();
    }
  };
  const trajectoryRows = byId("trajectory", HTMLElement);
  const overview = new TimelineOverview({
    before: trajectoryRows,
    rows: trajectoryRows,
    hasOlder: () => !byId("load-older", HTMLElement).hidden,
    fetchRun: app.fetchRun,
    last: () => last,
    onError: report("Timeline"),
    pick: async (span) => {
      for (const t of trajectoryRows.querySelectorAll(".is-target")) t.classList.remove("is-target");
      let row = stepRow(span);
      if (!row && typeof span.seq === "number") {
        // A step of the whole run not loaded yet: its page is loaded as a deep link's is, then its row is shown.
        await app.scrollToSeq(span.seq, { what: `The timeline's ${span.lane === "tool" ? "tool call" : "step"}` });
        views.changed();
        await views.ready();
        row = stepRow(span);
      }
      if (row) trajSearch.reveal(String(row.key))?.classList.add("is-target");
    },
    showInChat: (span) => {
      const row = stepRow(span);
      views.show("chat", { hash: true });
      // The chat key of a loaded row (a whole-run span's keys come from another fold): else its seq finds it.
      void views.opts.jumpToChat(row ? span.chat ?? row.chatKey ?? null : null, row?.seq ?? span.seq ?? 0);
    },
    refold: () => {
      views.trajectory.list.heights.clear();
      views.trajectory.list.dirty = true;
      views.trajectory.list.update();
    },
  });
  views.onTrajectory = (value) => overview.setLoaded(value.timeline);
  /** The loaded trajectory row of a span: the window's own spans by key, the whole run's by seq. @param {any} span */
  const stepRow = (span) => (span === null ? null : views.trajectory.rows.find((r) => (overview.data?.scope === "run"
    && overview.data !== overview.loaded ? r.kind === "step" && r.seq === span.seq : String(r.key) === String(span.row))));

  view.onFilled = (/** @type {HTMLElement} */ row) => {
    addRecordsButton(row, bridge, report("Could not read the records"));
    search.decorate(row);
  };

  const runExport = async (/** @type {"html" | "md"} */ format, /** @type {"session" | "window" | "view"} */ scope) => {
    // Nothing open is nothing to export: say so, never download an empty file.
    if (!view.order.length) throw new Error("nothing is open: open a session or a file first");
    return exportNow(format, scope);
  };
  const exportNow = (/** @type {"html" | "md"} */ format, /** @type {"session" | "window" | "view"} */ scope) => exportFile(bridge, {
    format, title: app.title(),
    // "view": the view shown now (the chat's loaded rows, the trajectory or the model context)
    scope: scope === "view" ? (views.current === "chat" ? "window" : views.current) : scope,
    page: async () => {
      const id = app.session();
      return id && last >= 0 ? app.fetchPage(id, { through: last, maxMessages: MAX_SAFE }) : null;
    },
  });
  const todos = new TodoPanel({ root: byId("todo-panel", HTMLElement), bridge });

  const menu = byId("export-menu", HTMLElement);
  initExportMenu(menu, (format, scope) => runExport(format, scope).catch(report("Export failed")));

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || (target instanceof HTMLElement && target.isContentEditable)) return;
    const named = { 1: "chat", 2: "trajectory", 3: "context" }[event.key];
    if (named) views.show(/** @type {any} */ (named), { hash: true });
    else if (event.key === "/") search.focus();
    else return;
    event.preventDefault();
  });

  Object.assign(app.viewer, {
    views,
    overview,
    filters,
    inspector,
    meter,
    search: (/** @type {string} */ text) => search.run(String(text)),
    showView: async (/** @type {any} */ name) => { views.show(name, { hash: true }); await views.ready(); },
    exportFile: runExport,
  });

  return {
    views,
    search,
    filters,
    /** After the chat applied an update from the worker. @param {any} update */
    changed(update) {
      if (update && typeof update.last === "number") last = update.last;
      if (!update || !Array.isArray(update.nodes)) return;
      views.changed();
      search.refresh();
      todos.changed();
      filters.changed();
      meter.changed();
    },
    /** Marks `text` in row `key` with the in-page search (a hit of the search across sessions). */
    markQuery: async (/** @type {string} */ text, /** @type {string} */ key) => { await search.runAt(text, key); },
    /** The URL changed (or the page opened): show the view it names. */
    followHash() {
      views.show(hashView());
    },
    /** A new window (file, page or session) replaces the last one. */
    reset() {
      last = -1;
      search.stopOlder();
      filters.reset();
      overview.reset();
      todos.clear();
      meter.clear();
      inspector.close();
      views.changed();
    },
  };
}
