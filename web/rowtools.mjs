// @ts-check
// Each row's copy buttons (Clipboard API): a link to the row (#session=ID&seq=N) and its text; a tool row copies
// its arguments and its result separately. The texts come whole from Python (not from the rendered slice).
import { hashFor } from "./navigation.mjs";
import { bridge } from "./runtime.mjs";
import { setAlert } from "./status.mjs";

/** @type {Record<string, string>} */
const LABELS = { link: "Copy link", text: "Copy text", arguments: "Copy arguments", result: "Copy result" };

/**
 * A button's label lives in aria-label and is drawn by CSS (content: attr(aria-label)), so the row's own text
 * (innerText, "Copy text", search) never contains it.
 * @param {HTMLButtonElement} button
 * @param {string} label
 */
function setLabel(button, label) {
  button.setAttribute("aria-label", label);
}

/**
 * The tool bar appended to a rendered row.
 * @param {{kind: string}} meta
 * @returns {HTMLElement}
 */
export function rowTools(meta) {
  const bar = document.createElement("div");
  bar.className = "row-tools";
  const kinds = meta.kind === "tool" ? ["link", "arguments", "result"] : ["link", "text"];
  for (const kind of kinds) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.dataset.copy = kind;
    setLabel(button, LABELS[kind]);
    bar.append(button);
  }
  return bar;
}

/**
 * What a copy button puts on the clipboard.
 * @param {HTMLElement} article
 * @param {string} kind
 * @returns {Promise<string | null>}
 */
async function copyText(article, kind) {
  if (kind === "link") {
    const url = new URL(location.href);
    url.hash = hashFor(Number(article.dataset.seq));
    return url.href;
  }
  const value = await bridge.json("rowText", { key: article.dataset.key });
  if (kind === "text") return value.text ?? null;
  return value[kind] ?? null;
}

/** @param {HTMLElement} container */
export function initRowTools(container) {
  container.addEventListener("click", async (event) => {
    const button = /** @type {Element} */ (event.target).closest?.("button[data-copy]");
    const article = button?.closest("article[data-key]");
    if (!(button instanceof HTMLButtonElement) || !(article instanceof HTMLElement)) return;
    event.preventDefault();
    const kind = button.dataset.copy || "text";
    try {
      const text = await copyText(article, kind);
      if (text === null) {
        button.dataset.copied = "none";
        setLabel(button, kind === "result" ? "No result yet" : "Nothing to copy");
        return;
      }
      await navigator.clipboard.writeText(text);
      button.dataset.copied = "yes";
      setLabel(button, "Copied");
    } catch (err) {
      setAlert("copy", `Could not copy (${LABELS[kind].toLowerCase()}) of row seq ${article.dataset.seq}: ${/** @type {Error} */ (err).message}`);
      return;
    }
    setTimeout(() => { setLabel(button, LABELS[kind]); delete button.dataset.copied; }, 1500);
  });
}
