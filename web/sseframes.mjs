// @ts-check
// Server-Sent Events split as bytes: the event-stream rules of the HTML standard (lines end in CRLF, LF or CR; a
// blank line dispatches; `:` starts a comment; one space after the colon is dropped; `data` lines join with LF;
// `id` sets the last event ID even for an event without data, never when it holds NUL; `retry` takes digits only;
// a leading BOM is dropped), applied to the bytes a `fetch` body yields. An event's data is never made a string:
// it comes out as a Uint8Array over an ArrayBuffer of its own (one copy at most), ready to transfer to a worker.
// Field names and the small `event`/`id`/`retry` values are decoded as text; chunks may split anything, a UTF-8
// sequence included.

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const NUL = "\u0000";
const DATA = [0x64, 0x61, 0x74, 0x61]; // "data"
const textDecoder = new TextDecoder();

/**
 * One dispatched event: its type ("message" unless an `event:` line named another), its data bytes and the last
 * event ID as of its dispatch ("" when none was set).
 * @typedef {{event: string, data: Uint8Array<ArrayBuffer>, id: string}} SseFrame
 */

/**
 * A line as assembled from the chunks: `owned` when its bytes are a fresh copy (a line split across chunks)
 * rather than a view of a chunk the caller handed in.
 * @typedef {{bytes: Uint8Array, owned: boolean}} Line
 */

/** @param {Uint8Array[]} parts @returns {Uint8Array<ArrayBuffer>} */
function concat(parts) {
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** @param {Uint8Array} line @param {number[]} name */
function named(line, name) {
  if (line.length < name.length || (line.length > name.length && line[name.length] !== COLON)) return false;
  for (let i = 0; i < name.length; i++) if (line[i] !== name[i]) return false;
  return true;
}

/** The bytes of a `data` line after its field name: the colon and one space dropped. @param {Uint8Array} line */
function dataValue(line) {
  let at = DATA.length;
  if (at < line.length) at += 1; // the colon (`named` checked it is one)
  if (line[at] === SPACE) at += 1;
  return line.subarray(at);
}

/** Splits an event stream's bytes into events; `push` each chunk in order, `end` when the body ended. */
export class SseSplitter {
  constructor() {
    /** @type {Uint8Array[]} */
    this.partial = []; // the current line's bytes so far (no terminator seen yet)
    this.skipLF = false; // the last chunk ended in CR: an LF starting the next one belongs to it
    this.started = false; // a byte was seen (the BOM rule looks at the first three)
    /** @type {Line[]} */
    this.dataLines = [];
    this.eventType = "";
    this.idBuffer = "";
    this.lastEventId = ""; // as of the last dispatch: what a reconnect sends as Last-Event-ID
    /** @type {number | null} */
    this.retry = null; // the last valid `retry:` value, in milliseconds
  }

  /**
   * The events the chunk completes, in order.
   * @param {Uint8Array} chunk
   * @returns {SseFrame[]}
   */
  push(chunk) {
    /** @type {SseFrame[]} */
    const frames = [];
    let start = 0;
    if (!this.started && chunk.length) {
      const head = this.partial.length ? concat([...this.partial, chunk]) : chunk;
      if (head.length < 3 && head.every((b, i) => b === [0xef, 0xbb, 0xbf][i])) {
        this.partial = [head]; // could still be a BOM: wait for its third byte
        return frames;
      }
      this.started = true;
      this.partial = [];
      chunk = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? head.subarray(3) : head;
    }
    if (this.skipLF && chunk.length) {
      this.skipLF = false;
      if (chunk[0] === LF) start = 1;
    }
    for (let i = start; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte !== LF && byte !== CR) continue;
      this._line(chunk.subarray(start, i), frames);
      if (byte === CR) {
        if (i + 1 === chunk.length) this.skipLF = true;
        else if (chunk[i + 1] === LF) i += 1;
      }
      start = i + 1;
    }
    if (start < chunk.length) this.partial.push(chunk.subarray(start));
    return frames;
  }

  /** The body ended: a last event without its blank line is dropped, as the standard says. */
  end() {
    this.partial = [];
    this.dataLines = [];
    this.eventType = "";
    this.skipLF = false;
  }

  /** @param {Uint8Array} tail the line's bytes in the current chunk @param {SseFrame[]} frames */
  _line(tail, frames) {
    /** @type {Line} */
    const line = this.partial.length ? { bytes: concat([...this.partial, tail]), owned: true }
      : { bytes: tail, owned: false };
    this.partial = [];
    const bytes = line.bytes;
    if (!bytes.length) {
      this._dispatch(frames);
      return;
    }
    if (bytes[0] === COLON) return; // a comment (the server's keep-alive)
    if (named(bytes, DATA)) {
      this.dataLines.push({ bytes: dataValue(bytes), owned: line.owned });
      return;
    }
    const colon = bytes.indexOf(COLON);
    const field = textDecoder.decode(colon < 0 ? bytes : bytes.subarray(0, colon));
    let value = colon < 0 ? "" : textDecoder.decode(bytes.subarray(colon + 1));
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.eventType = value;
    else if (field === "id" && !value.includes(NUL)) this.idBuffer = value;
    else if (field === "retry" && /^[0-9]+$/.test(value)) this.retry = Number(value);
  }

  /** @param {SseFrame[]} frames */
  _dispatch(frames) {
    this.lastEventId = this.idBuffer;
    const lines = this.dataLines;
    const event = this.eventType || "message";
    this.dataLines = [];
    this.eventType = "";
    if (!lines.length) return;
    /** @type {Uint8Array<ArrayBuffer>} */
    let data;
    if (lines.length === 1) {
      const only = lines[0];
      // A fresh line's buffer is this event's own (its field name before the view is harmless); a view of the
      // caller's chunk is copied, so transferring the data never takes the chunk away from the next event.
      data = only.owned ? /** @type {Uint8Array<ArrayBuffer>} */ (only.bytes) : only.bytes.slice();
    } else {
      const parts = [];
      for (const [i, one] of lines.entries()) {
        if (i) parts.push(Uint8Array.of(LF));
        parts.push(one.bytes);
      }
      data = concat(parts);
    }
    frames.push({ event, data, id: this.lastEventId });
  }
}
