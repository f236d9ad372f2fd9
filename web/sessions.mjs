// The server side of the viewer: the session list (GET /api/sessions), message-aligned pages
// (GET /api/sessions/{id}/page) and live follow (GET /api/sessions/{id}/follow, Server-Sent Events: a snapshot
// frame, then one scalar event frame per event). Frames are handed to the worker as bytes, batched per animation
// frame; the journal in Python keeps the window continuous (dedupe, gap repair, reconnect).

export function sessionPath(id) {
  return id.split("/").map(encodeURIComponent).join("/");
}

// The sessions the server offers, or null when there is no server API (a static file host).
export async function listSessions() {
  let response;
  try {
    response = await fetch("api/sessions", { headers: { accept: "application/json" } });
  } catch {
    return null;
  }
  if (!response.ok || !(response.headers.get("content-type") || "").includes("json")) return null;
  const body = await response.json();
  return Array.isArray(body.sessions) ? body.sessions : null;
}

// Reads one page; resolves to its bytes (Uint8Array), rejects with a readable error.
export async function fetchPage(id, { through, before = null, maxMessages = 50 }) {
  const params = new URLSearchParams({ throughSeq: String(through), maxMessages: String(maxMessages) });
  if (before !== null && before !== undefined) params.set("beforeSeq", String(before));
  const response = await fetch(`api/sessions/${sessionPath(id)}/page?${params}`);
  if (!response.ok) {
    let detail = `HTTP ${response.status}`;
    try { detail = (await response.json()).detail || detail; } catch { /* not JSON */ }
    throw new Error(`could not read a page: ${detail}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

const encoder = new TextEncoder();

// Follows one session. `onFrames(frames)` receives batches of frame bytes (Uint8Array[]) and must return a
// promise; batches are delivered one at a time, in order. EventSource reconnects by itself; the server answers a
// reconnect with a fresh snapshot, which the journal takes as a new generation. A connection that the browser
// gives up on (readyState CLOSED) is reopened with backoff.
export class Follow {
  constructor(id, { maxMessages = 50, onFrames, onState = () => {} }) {
    this.id = id;
    this.maxMessages = maxMessages;
    this.onFrames = onFrames;
    this.onState = onState;
    this.queue = [];
    this.draining = false;
    this.closed = false;
    this.retryMs = 500;
    this.connections = 0; // EventSource objects created (a browser-side reopen after CLOSED creates a new one)
    this.opens = 0; // connections established, automatic EventSource reconnects included
    this._open();
  }

  _open() {
    if (this.closed) return;
    const url = `api/sessions/${sessionPath(this.id)}/follow?maxMessages=${this.maxMessages}`;
    const source = new EventSource(url);
    this.source = source;
    this.connections += 1;
    this.onState("connecting");
    source.onopen = () => {
      this.opens += 1;
      this.retryMs = 500;
      this.onState("live");
    };
    source.onmessage = (event) => {
      this.queue.push(encoder.encode(event.data));
      this._schedule();
    };
    source.onerror = () => {
      if (this.closed) return;
      if (source.readyState === EventSource.CLOSED) {
        this.onState("offline");
        setTimeout(() => { if (this.source === source) this._open(); }, this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, 15000);
      } else {
        this.onState("reconnecting");
      }
    };
  }

  // Drops the connection and opens a new one (used after the journal reported a protocol violation).
  restart() {
    if (this.closed) return;
    this.source?.close();
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
    this.source?.close();
    this.queue = [];
    this.onState("closed");
  }
}
