// @ts-check
// Starts the Python worker as early as possible: index.html loads this module (and config.mjs and site.mjs, its only imports)
// before app.mjs, so Pyodide starts fetching while the page's own module graph still loads. Messages the worker
// sends before the page's Bridge (bridge.mjs) adopts it are kept and handed over in order. The server's session
// list is asked for here too (`earlyList`), so it is on its way while the rest of the page loads.
import { TEST_MODE } from "./config.mjs";
import { requestUrl } from "./site.mjs";

const url = new URL("./worker.mjs", import.meta.url);
if (TEST_MODE) url.searchParams.set("test", "1");

/** The first GET api/sessions (a published site's catalog.json: site.mjs), made as the page starts (sessions.mjs:
 * listSessions takes it once). Another static host answers it with an error status or no JSON, which the list reads
 * as "no server". */
export const earlyList = fetch(/** @type {string} */ (requestUrl({ kind: "list" })), { headers: { accept: "application/json" } });
earlyList.catch(() => {}); // listSessions reads the outcome; this only keeps an early failure from being "unhandled"

/** The viewer's one worker. */
export const worker = new Worker(url, { type: "module" });

/** @type {MessageEvent[]} */
const early = [];
/** @type {ErrorEvent | null} */
let earlyError = null;
worker.onmessage = (/** @type {MessageEvent} */ event) => { early.push(event); };
worker.onerror = (/** @type {ErrorEvent} */ event) => { earlyError = event; };

/**
 * Hands the worker's events to their real handlers: first the ones that arrived before (in a microtask, so the
 * rest of the page's module graph has set its hooks by then), then the rest as they come.
 * @param {(event: MessageEvent) => void} onMessage
 * @param {(event: ErrorEvent) => void} onError
 */
export function adoptWorker(onMessage, onError) {
  worker.onmessage = onMessage;
  worker.onerror = onError;
  queueMicrotask(() => {
    for (const event of early.splice(0)) onMessage(event);
    if (earlyError) onError(earlyError);
  });
  return worker;
}
