// @ts-check
// The Export menu: the whole session or the rows loaded in the window, as static HTML (the CLI export's renderer)
// or Markdown, built by the worker and downloaded as a file from a Blob (no server needed; works offline).

/**
 * Saves text as a file download.
 * @param {string} text
 * @param {string} name
 * @param {string} type
 */
export function download(text, name, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * Builds an export in the worker and downloads it; resolves with {name, bytes, ms}.
 * @param {{json: (op: string, args?: Record<string, unknown>, transfer?: Transferable[]) => Promise<any>}} bridge
 * @param {{format: "html" | "md", scope: "session" | "window" | "trajectory" | "context", title: string, page?: () => Promise<Uint8Array | null>}} options
 */
export async function exportFile(bridge, { format, scope, title, page }) {
  const t0 = performance.now();
  const bytes = scope === "session" && page ? await page() : null;
  const args = { format, scope, title, ...(bytes ? { bytes } : {}) };
  const value = await bridge.json("export", args, bytes ? [bytes.buffer] : []);
  if (value.error) throw new Error(value.error.text || value.error.message);
  const type = format === "md" ? "text/markdown;charset=utf-8" : "text/html;charset=utf-8";
  download(value.text, value.name, type);
  return { name: value.name, bytes: value.text.length, ms: performance.now() - t0, workerMs: value.ms };
}

/**
 * Wires the menu: each button carries data-format and data-scope.
 * @param {HTMLElement} menu  a <details> with the buttons
 * @param {(format: "html" | "md", scope: "session" | "window" | "view") => Promise<unknown>} run
 */
export function initExportMenu(menu, run) {
  for (const b of menu.querySelectorAll("button[data-format]")) {
    const item = /** @type {HTMLButtonElement} */ (b);
    item.addEventListener("click", async () => {
      item.disabled = true;
      try {
        await run(/** @type {any} */ (item.dataset.format), /** @type {any} */ (item.dataset.scope));
      } finally {
        item.disabled = false;
        /** @type {HTMLDetailsElement} */ (menu).open = false;
      }
    });
  }
}
