// @ts-check
// The server side of the viewer: the session list (GET /api/sessions), message-aligned pages
// (GET /api/sessions/{id}/page) and live follow (GET /api/sessions/{id}/follow, Server-Sent Events: a snapshot
// frame, then one scalar event frame per event). Frames are handed to the worker as bytes, batched per animation
// frame; the journal in Python keeps the window continuous (dedupe, gap repair, reconnect). The follow stream is
// read as bytes (sseframes.mjs): frame data is never made a string on this side.
import { PAGE_SIZE, RETRY_MAX_MS, RETRY_MIN_MS, STALL_MS } from "./config.mjs";
import { isPublished, requestUrl, sessionPath } from "./site.mjs";
import { SseSplitter } from "./sseframes.mjs";
import { earlyList } from "./worker-start.mjs";

export { sessionPath };

/** @param {import("./site.mjs").SiteRequest} request */
function urlOf(request) {
  const url = requestUrl(request);
  if (url === null) throw new Error("this published site holds no such file (a published session is read-only)");
  return url;
}

/**
 * One entry of GET /api/sessions (the contract is assembler/server/listing.py; a local folder's entries have the
 * same shape, from assembler/browser/folder.py, plus `local`).
 * @typedef {{id: string, title: string | null, file: string, path: string, lastActivity: number | null,
 *   lastActivitySource: "events" | "mtime", eventCount: number, turnCount: number, model: string | null,
 *   status: "live" | "ended" | "interrupted" | "damaged", error: string | null, bytes: number,
 *   format?: string, harness?: string, cwd?: string, warmup?: boolean, usage?: Record<string, number>,
 *   sessionId?: string, parentSession?: string, subagentLabel?: string,
 *   local?: {path?: string, key: string | null}}} SessionEntry
 */

/** @type {Promise<Response> | null} */
let earlyAsk = earlyList;

/**
 * A published site's search index, as its catalog names it (assembler/server/site_index.py).
 * @typedef {{shards: {file: string, bytes: number}[], sessions: number, rows: number, filter?: {file: string, bytes: number}}} SiteIndex
 */

/** @type {SiteIndex | null | undefined} */
let siteIndex; // undefined: no catalog read yet; null: the catalog names no index

/** The search index the last catalog read names (a published site), null when it names none, undefined before the
 * first catalog was read. */
export function publishedIndex() {
  return siteIndex;
}

/**
 * The sessions the server offers: `{sessions}`, `{sessions: null}` when there is no server API (a static file
 * host), or `{sessions: null, offline: true}` when the server does not answer.
 * @returns {Promise<{sessions: SessionEntry[] | null, offline?: boolean, pending?: number}>}
 */
export async function listSessions() {
  const early = earlyAsk;
  earlyAsk = null; // the page's first list is the one asked for as it started; later ones ask again
  let response;
  try {
    response = await (early ?? fetch(urlOf({ kind: "list" }), { headers: { accept: "application/json" } }));
  } catch {
    return { sessions: null, offline: true };
  }
  if (!response.ok || !(response.headers.get("content-type") || "").includes("json")) return { sessions: null };
  const body = await response.json();
  if (isPublished()) {
    const index = body.index;
    siteIndex = index && Array.isArray(index.shards) ? index : null;
  }
  return { sessions: Array.isArray(body.sessions) ? body.sessions : null,
    pending: Number.isInteger(body.pending) ? body.pending : 0 };
}

/**
 * Reads one page (`through: null`: through the last seq, the first page); resolves to its bytes (Uint8Array),
 * rejects with a readable error.
 * @param {string} id
 * @param {{through: number | null, before?: number | null, maxMessages?: number, fromSeq?: number | null}} request
 * @returns {Promise<Uint8Array<ArrayBuffer>>}
 */
export async function fetchPage(id, { through, before = null, maxMessages = PAGE_SIZE, fromSeq = null }) {
  const response = await fetch(urlOf({ kind: "page", id, through, before, maxMessages, fromSeq }));
  if (!response.ok) {
    let detail = `HTTP ${response.status}`;
    try { detail = (await response.json()).detail || detail; } catch { /* not JSON */ }
    throw new Error(`could not read a page: ${detail}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * The whole session's trajectory overview (GET api/sessions/ID/timeline, a published site's timeline.json: the
 * value of assembler/browser/timeline.py), or rejects with a readable error.
 * @param {string} id
 * @returns {Promise<any>}
 */
export async function fetchTimeline(id) {
  const response = await fetch(urlOf({ kind: "timeline", id }), { headers: { accept: "application/json" } });
  if (!response.ok) {
    let detail = `HTTP ${response.status}`;
    try { detail = (await response.json()).detail || detail; } catch { /* not JSON */ }
    throw new Error(detail);
  }
  return response.json();
}

const textDecoder = new TextDecoder();

/**
 * What the server says about a session it cannot follow: a malformed line (SSE `event: error`).
 * @typedef {{error: string, detail: string, line: number | null, seq: number | null, following: boolean}} StreamFault
 */

/**
 * Asks the server whether a session exists: "ok", "gone" (404: unknown or deleted) or "offline" (no answer).
 * @param {string} id
 * @returns {Promise<"ok" | "gone" | "offline">}
 */
export async function probeSession(id) {
  try {
    const response = await fetch(urlOf({ kind: "page", id, through: null, maxMessages: isPublished() ? PAGE_SIZE : 1 }),
      { method: "GET" });
    await response.arrayBuffer();
    return response.status === 404 ? "gone" : "ok";
  } catch {
    return "offline";
  }
}

/**
 * Follows one session: GET .../follow read with `fetch` as bytes, split by `SseSplitter` (an event's data reaches
 * the worker as the bytes the server sent, never as a string nor a copy). `onFrames(frames)` receives batches of
 * frame bytes (Uint8Array[]: views of the chunks they arrived in, every view of a chunk in the same batch, so the
 * batch's distinct buffers can be transferred) and must return a promise; batches are delivered one at a time, in
 * order. A reconnect sends the last event ID the stream gave (`Last-Event-ID`: the
 * seq of the last `id:`); a `retry:` field sets the wait before reconnecting. Every end of a connection is handled
 * here: the session is probed; a 404 stops for good (`onGone`), no answer is "offline" with a countdown to the next
 * try (backoff), anything else reconnects. An open stream silent for `STALL_MS` (the server sends a keep-alive
 * comment far more often) counts as dropped, so "live" is never shown over a dead connection. The server answers
 * every connection with a fresh snapshot, which the journal takes as a new generation.
 */
export class Follow {
  /**
   * @param {string} id
   * @param {{maxMessages?: number, onFrames: (frames: Uint8Array[]) => Promise<void>,
   *   onState?: (state: import("./status.mjs").LiveState, options?: {retryAt?: number}) => void,
   *   onFault?: (fault: StreamFault) => void, onGone?: () => void}} options
   */
  constructor(id, { maxMessages = PAGE_SIZE, onFrames, onState = () => {}, onFault = () => {}, onGone = () => {} }) {
    this.id = id;
    this.maxMessages = maxMessages;
    this.onFrames = onFrames;
    this.onState = onState;
    this.onFault = onFault;
    this.onGone = onGone;
    /** @type {Uint8Array[]} */
    this.queue = [];
    this.draining = false;
    this.closed = false;
    this.stopped = false; // the server said following stopped (a malformed line): no reconnect
    this.retryMs = RETRY_MIN_MS;
    this.reconnectMs = RETRY_MIN_MS; // the wait before reconnecting to a server that answers (its `retry:`)
    this.lastEventId = ""; // sent as Last-Event-ID when not empty
    /** @type {AbortController | null} */
    this.connection = null; // the current connection; aborting it ends its reading
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null;
    this.connections = 0; // connections asked for
    this.opens = 0; // connections established
    this._open();
  }

  _open() {
    if (this.closed || this.stopped) return;
    const connection = new AbortController();
    this.connection = connection;
    this.connections += 1;
    this.onState(this.opens ? "reconnecting" : "connecting");
    void this._read(connection);
  }

  /** Reads one connection to its end, then hands it to `_retry` unless it was replaced, closed or stopped.
   * @param {AbortController} connection */
  async _read(connection) {
    const current = () => !this.closed && !this.stopped && this.connection === connection;
    /** @type {Record<string, string>} */
    const headers = { accept: "text/event-stream" };
    if (this.lastEventId) headers["last-event-id"] = this.lastEventId;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let stall;
    try {
      const response = await fetch(urlOf({ kind: "follow", id: this.id, maxMessages: this.maxMessages }),
        { headers, cache: "no-store", signal: connection.signal });
      const type = response.headers.get("content-type") || "";
      if (!response.ok || !response.body || !type.startsWith("text/event-stream")) throw new Error("not a stream");
      if (!current()) return;
      if (!this.opens) performance.mark("viewer:follow-response"); // the server's answer to the first connection
      this.opens += 1;
      this.retryMs = RETRY_MIN_MS;
      this.onState("live");
      const splitter = new SseSplitter();
      const reader = response.body.getReader();
      for (;;) {
        clearTimeout(stall);
        stall = setTimeout(() => connection.abort(), STALL_MS);
        const { done, value } = await reader.read();
        if (done || !current()) break;
        this._take(splitter.push(value), splitter);
      }
    } catch {
      // refused, dropped or aborted: whether to try again is decided below
    } finally {
      clearTimeout(stall);
    }
    if (!current()) return;
    connection.abort();
    void this._retry(connection);
  }

  /** @param {import("./sseframes.mjs").SseFrame[]} frames @param {SseSplitter} splitter */
  _take(frames, splitter) {
    this.lastEventId = splitter.lastEventId;
    if (splitter.retry !== null) this.reconnectMs = splitter.retry;
    for (const frame of frames) {
      if (this.stopped) return;
      if (frame.event === "error") this._fault(textDecoder.decode(frame.data)); // the server's `event: error`
      else if (frame.event === "message") this.queue.push(frame.data);
    }
    if (this.queue.length) this._schedule();
  }

  /** @param {string} data */
  _fault(data) {
    /** @type {StreamFault} */
    let fault;
    try {
      fault = JSON.parse(data);
    } catch {
      fault = { error: "bad-frame", detail: data.slice(0, 200), line: null, seq: null, following: false };
    }
    if (!fault.following) {
      this.stopped = true;
      this.connection?.abort();
      this.onState("stopped");
    }
    this.onFault(fault);
  }

  /** @param {AbortController} connection */
  async _retry(connection) {
    const answer = await probeSession(this.id);
    if (this.closed || this.connection !== connection) return;
    if (answer === "gone") {
      this.stopped = true;
      this.onState("missing");
      this.onGone();
      return;
    }
    const wait = answer === "offline" ? this.retryMs : this.reconnectMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    if (answer === "offline") this.onState("offline", { retryAt: performance.now() + wait });
    else this.onState("reconnecting");
    this.timer = setTimeout(() => { if (this.connection === connection) this._open(); }, wait);
  }

  // Drops the connection and opens a new one (used after the journal reported a protocol violation).
  restart() {
    if (this.closed || this.stopped) return;
    this.connection?.abort();
    this.queue = [];
    this._open();
  }

  _schedule() {
    if (this.draining) return;
    this.draining = true;
    requestAnimationFrame(() => this._drain());
  }

  async _drain() {
    try {
      while (this.queue.length && !this.closed) {
        const batch = this.queue;
        this.queue = [];
        await this.onFrames(batch);
      }
    } finally {
      this.draining = false;
      if (this.queue.length && !this.closed) this._schedule();
    }
  }

  close() {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.connection?.abort();
    this.queue = [];
    this.onState("closed");
  }
}
