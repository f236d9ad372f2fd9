// @ts-check
// The page's shared parts: the Python worker (bridge), the Chat view, and what is open now (state).
import { Bridge } from "./bridge.mjs";
import { els } from "./dom.mjs";
import { setAlert } from "./status.mjs";
import { TranscriptView } from "./transcript.mjs";

export const bridge = new Bridge(); // the worker itself starts in worker-start.mjs

export const view = new TranscriptView(els.transcript, bridge, {
  onError: (/** @type {Error} */ err) => setAlert("render", `Rendering failed in Python: ${err.message}. The rows already shown stay.`),
});

/**
 * What is open now. `mode`: nothing, a page (loadPage), a local file or a served session.
 * @type {{mode: "none" | "page" | "file" | "live", sessionId: string | null, fileName: string | null,
 *         follow: import("./sessions.mjs").Follow | null, liveOpened: boolean, canLoadOlder: boolean,
 *         hasMore: boolean, pending: string | null}}
 */
export const state = {
  mode: "none",
  sessionId: null,
  fileName: null,
  follow: null,
  liveOpened: false,
  canLoadOlder: false,
  hasMore: false,
  pending: null, // a session id picked before Python was ready (the latest pick wins)
};

/**
 * What the views, search, raw records and the Export menu (features.mjs) need to hear; app.mjs fills them in.
 * `markQuery(text, key)` starts the in-page search for `text` at row `key` (a hit of the search across sessions).
 * @type {{changed: (update: any) => void, reset: () => void, followHash: () => void, eventsToggled: () => void,
 *         markQuery: (text: string, key: string) => Promise<void>}}
 */
export const hooks = { changed: () => {}, reset: () => {}, followHash: () => {}, eventsToggled: () => {},
  markQuery: async () => {} };
