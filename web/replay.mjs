// @ts-check
// The "Replay benchmark" panel: replays the open window scalar and packed in the worker (assembler/browser/replay.py,
// the same measurement perf.bench_browser runs) and shows decode, journal, fold and render times side by side as an
// SVG bar chart built with DOM APIs (no CDN, no inline script or style, nothing parsed as HTML), with the ratios,
// record counts, digests and the wasm heap, plus "Copy as JSON".
//
// initReplay({bridge, toolbar, before, title, onError}) adds the toolbar button and the panel (inserted before
// `before`) and returns {run, replayPage}: run() replays the open window and shows it; replayPage(bytes) replays one
// SessionPage's bytes (the benchmark hook) without touching the window.

const SVG = "http://www.w3.org/2000/svg";
const STAGES = ["decode", "journal", "fold", "render"];
const MODES = /** @type {const} */ (["scalar", "packed"]);
const REPEAT = 3; // runs per mode, alternating scalar and packed; the medians are shown

/** @typedef {Record<string, number>} StageMs milliseconds per stage (decode, journal, fold, render) */
/**
 * One replay of one mode, as the worker's replayWindow / replayPage answer it (assembler/browser/replay.py).
 * @typedef {{ms: StageMs, records: number, inputs: number, pageBytes: number, wasmHeapBytes: number,
 *   digest?: string | null, error?: {message: string} | null, [field: string]: unknown}} ReplayRun
 */
/** @typedef {ReplayRun & {msRuns: StageMs[], digestsAgree: boolean}} ModeFigures one mode's medians */
/**
 * What "Copy as JSON" gives.
 * @typedef {{benchmark: string, session: string, stages: string[], modes: {scalar: ModeFigures, packed: ModeFigures},
 *   ratios: Record<string, number | null>, repeat: number, sameDigest: boolean, date: string}} ReplayResult
 */

/**
 * @param {string} tag
 * @param {Record<string, string>} [attrs]
 * @param {string} [text]
 * @returns {HTMLElement}
 */
function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @param {string} [text]
 * @returns {SVGElement}
 */
function svg(tag, attrs = {}, text = "") {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text) node.textContent = text;
  return node;
}

/** @param {StageMs} ms */
function total(ms) {
  return STAGES.reduce((sum, s) => sum + (ms[s] || 0), 0);
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// One mode's runs → its figures: the median of each stage, the largest heap, the other fields of the last run.
/**
 * @param {ReplayRun[]} runs
 * @returns {ModeFigures}
 */
export function medianRun(runs) {
  const last = runs[runs.length - 1];
  /** @type {StageMs} */
  const ms = {};
  for (const s of STAGES) ms[s] = median(runs.map((r) => r.ms[s]));
  return { ...last, ms, msRuns: runs.map((r) => r.ms), wasmHeapBytes: Math.max(...runs.map((r) => r.wasmHeapBytes)),
    digestsAgree: runs.every((r) => r.digest === last.digest) };
}

/**
 * @param {number} a
 * @param {number} b
 * @returns {number | null}
 */
function ratio(a, b) {
  return b > 0 ? Math.round((a / b) * 100) / 100 : null;
}

// The result as "Copy as JSON" gives it (medians of REPEAT alternating runs per mode): both modes, the ratios (scalar ÷ packed) and whether the digests agree.
/**
 * @param {{scalar: ModeFigures, packed: ModeFigures}} modes
 * @param {string} session
 * @returns {ReplayResult}
 */
export function summarize(modes, session) {
  const scalar = modes.scalar;
  const packed = modes.packed;
  /** @type {Record<string, number | null>} */
  const ratios = {};
  for (const s of STAGES) ratios[s] = ratio(scalar.ms[s], packed.ms[s]);
  ratios.total = ratio(total(scalar.ms), total(packed.ms));
  return {
    benchmark: "replay",
    session,
    stages: STAGES,
    modes,
    ratios,
    repeat: scalar.msRuns ? scalar.msRuns.length : 1,
    sameDigest: scalar.digest === packed.digest && scalar.digestsAgree !== false && packed.digestsAgree !== false,
    date: new Date().toISOString(),
  };
}

/** @param {ReplayResult} result */
function chart(result) {
  const rows = [...STAGES, "total"];
  /** @type {(mode: "scalar" | "packed", stage: string) => number} */
  const value = (mode, stage) => (stage === "total" ? total(result.modes[mode].ms) : result.modes[mode].ms[stage]);
  const max = Math.max(1e-6, ...rows.flatMap((s) => MODES.map((m) => value(m, s))));
  const labelW = 70;
  const barW = 360;
  const barH = 12;
  const rowH = 2 * barH + 12;
  const height = rows.length * rowH + 24;
  const root = svg("svg", { viewBox: `0 0 ${labelW + barW + 130} ${height}`, class: "replay-chart", role: "img",
    "aria-label": "Replay times per stage, scalar and packed, in milliseconds" });
  rows.forEach((stage, i) => {
    const y = i * rowH + 4;
    root.append(svg("text", { x: 0, y: y + barH + 4, class: "replay-label" }, stage));
    MODES.forEach((mode, j) => {
      const ms = value(mode, stage);
      const w = Math.max(1, (ms / max) * barW);
      const by = y + j * barH;
      root.append(svg("rect", { x: labelW, y: by, width: w.toFixed(1), height: barH - 2, class: `replay-bar ${mode}` }));
      root.append(svg("text", { x: labelW + w + 4, y: by + barH - 3, class: "replay-value" }, `${ms.toFixed(1)} ms ${mode}`));
    });
  });
  const ly = rows.length * rowH + 14;
  MODES.forEach((mode, j) => {
    root.append(svg("rect", { x: labelW + j * 90, y: ly - 9, width: 10, height: 10, class: `replay-bar ${mode}` }));
    root.append(svg("text", { x: labelW + j * 90 + 14, y: ly, class: "replay-label" }, mode));
  });
  return root;
}

/** @param {ReplayResult} result */
function figures(result) {
  const table = el("table", { class: "replay-figures" });
  const head = el("tr");
  for (const h of ["", ...MODES, "scalar ÷ packed"]) head.append(el("th", {}, h));
  table.append(head);
  /** @type {[string, (m: ModeFigures) => string, number | null][]} */
  const rows = [
    ...STAGES.map((s) => /** @type {[string, (m: ModeFigures) => string, number | null]} */ (
      [`${s} ms`, (m) => m.ms[s].toFixed(2), result.ratios[s]])),
    ["total ms", (m) => total(m.ms).toFixed(2), result.ratios.total],
    ["records", (m) => String(m.records), ratio(result.modes.scalar.records, result.modes.packed.records)],
    ["inputs", (m) => String(m.inputs), null],
    ["page bytes", (m) => String(m.pageBytes), ratio(result.modes.scalar.pageBytes, result.modes.packed.pageBytes)],
    ["wasm heap MB", (m) => (m.wasmHeapBytes / 1048576).toFixed(1), null],
    ["digest", (m) => m.digest || "", null],
  ];
  for (const [name, cell, r] of rows) {
    const tr = el("tr");
    tr.append(el("th", { scope: "row" }, name));
    for (const mode of MODES) tr.append(el("td", { "data-mode": mode, "data-field": name }, cell(result.modes[mode])));
    tr.append(el("td", {}, r === null || r === undefined ? "" : `${r}×`));
    table.append(tr);
  }
  return table;
}

/**
 * @param {{bridge: any, toolbar: HTMLElement, before: HTMLElement, title?: () => string,
 *   onError?: (text: string) => void}} options
 */
export function initReplay({ bridge, toolbar, before, title = () => "", onError = () => {} }) {
  const button = el("button", { type: "button", id: "replay-open", title: "Replay the open window scalar and packed in the worker and compare" }, "Replay benchmark");
  toolbar.prepend(button);
  // Opening the panel closes the menu that holds the button.
  button.addEventListener("click", () => { const menu = button.closest("details"); if (menu) menu.open = false; });
  const panel = el("section", { id: "replay-panel", class: "replay-panel", "aria-label": "Replay benchmark" });
  panel.hidden = true;
  const heading = el("h2", {}, "Replay benchmark");
  const status = el("p", { class: "replay-status", role: "status", "aria-live": "polite" });
  const body = el("div", { class: "replay-body" });
  const again = /** @type {HTMLButtonElement} */ (el("button", { type: "button", id: "replay-run" }, "Run again"));
  const copy = /** @type {HTMLButtonElement} */ (el("button", { type: "button", id: "replay-copy", disabled: "" }, "Copy as JSON"));
  const close = el("button", { type: "button", id: "replay-close" }, "Close");
  const actions = el("div", { class: "replay-actions" });
  actions.append(again, copy, close);
  panel.append(heading, status, body, actions);
  before.before(panel);
  /** @type {ReplayResult | null} */
  let last = null;
  /** @type {Promise<ReplayResult> | null} */
  let running = null;

  /**
   * @param {string} mode
   * @returns {Promise<ReplayRun>}
   */
  async function replayMode(mode) {
    const value = await bridge.call("replayWindow", { mode });
    if (value.error) throw new Error(value.error.message);
    return value;
  }

  /** @returns {Promise<ReplayResult>} */
  async function run() {
    if (running) return running;
    running = (async () => {
      await bridge.ready;
      panel.hidden = false;
      status.textContent = "Replaying the window scalar, then packed…";
      copy.disabled = true;
      again.disabled = true;
      try {
        /** @type {Record<string, ReplayRun[]>} */
        const runs = { scalar: [], packed: [] };
        for (let i = 0; i < REPEAT; i++) {
          for (const mode of MODES) {
            status.textContent = `Replaying the window ${mode} (${i + 1} of ${REPEAT})…`;
            runs[mode].push(await replayMode(mode));
          }
        }
        const modes = { scalar: medianRun(runs.scalar), packed: medianRun(runs.packed) };
        last = summarize(modes, title());
        body.replaceChildren(chart(last), figures(last));
        const r = last.ratios.total;
        status.textContent = `Packed is ${r === null ? "–" : `${r}×`} faster end to end on ${modes.scalar.records} scalar vs `
          + `${modes.packed.records} packed records; digests ${last.sameDigest ? "agree" : "DIFFER"}.`;
        copy.disabled = false;
        return last;
      } catch (err) {
        status.textContent = "The replay failed.";
        onError(`Replay benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      } finally {
        again.disabled = false;
        running = null;
      }
    })();
    return running;
  }

  async function copyJson() {
    if (!last) return;
    try {
      await navigator.clipboard.writeText(JSON.stringify(last, null, 2));
      status.textContent = "Copied the results as JSON.";
    } catch (err) {
      onError(`Could not copy to the clipboard: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  // The benchmark hook: one SessionPage's bytes replayed in a scratch window (the open window is untouched).
  /** @param {ArrayBuffer | ArrayLike<number> | Uint8Array} bytes */
  async function replayPage(bytes) {
    await bridge.ready;
    const data = bytes instanceof Uint8Array ? bytes.slice() : new Uint8Array(bytes);
    return bridge.call("replayPage", { bytes: data }, [data.buffer]);
  }

  button.addEventListener("click", () => void run().catch(() => {}));
  again.addEventListener("click", () => void run().catch(() => {}));
  copy.addEventListener("click", () => void copyJson());
  close.addEventListener("click", () => { panel.hidden = true; });
  return { run, replayPage, last: () => last };
}
