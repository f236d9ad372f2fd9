// @ts-check
// Server-Sent Events split as bytes: the event-stream rules of the HTML standard (lines end in CRLF, LF or CR; a
// blank line dispatches; `:` starts a comment; one space after the colon is dropped; `data` lines join with LF;
// `id` sets the last event ID even for an event without data, never when it holds NUL; `retry` takes digits only;
// a leading BOM is dropped), applied to the bytes a `fetch` body yields. An event's data is never made a string nor
// copied: it is a view of the chunk it arrived in, or of a fresh buffer when its line was split between chunks or it
// has several lines. Once `push` returns the splitter holds no view of that chunk (the start of a line it cut is
// copied), so the chunk's buffer and its events' buffers can be transferred to a worker together. Field names and
// the small `event`/`id`/`retry` values are decoded as text; chunks may split anything, a UTF-8 sequence included.

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
 * @typedef {{event: string, data: Uint8Array, id: string}} SseFrame
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

/** A field name or a short value as text (ASCII directly: every `id:` line has one). @param {Uint8Array} bytes */
function text(bytes) {
  if (bytes.length <= 64 && bytes.every((b) => b < 0x80)) return String.fromCharCode(...bytes);
  return textDecoder.decode(bytes);
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
    /** @type {Uint8Array[]} */
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
        this.partial = [head.slice()]; // could still be a BOM: wait for its third byte
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
    let cr = chunk.indexOf(CR, start); // found once per CR, so a stream without any scans each chunk once
    while (start < chunk.length) {
      const lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
      const end = cr !== -1 && (lf === -1 || cr < lf) ? cr : lf;
      if (end === -1) break;
      this._line(chunk.subarray(start, end), frames);
      start = end + 1;
      if (end === cr) {
        if (start === chunk.length) this.skipLF = true;
        else if (chunk[start] === LF) start += 1;
      }
    }
    if (start < chunk.length) this.partial.push(chunk.slice(start));
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
    const bytes = this.partial.length ? concat([...this.partial, tail]) : tail;
    this.partial = [];
    if (!bytes.length) {
      this._dispatch(frames);
      return;
    }
    if (bytes[0] === COLON) return; // a comment (the server's keep-alive)
    if (named(bytes, DATA)) {
      this.dataLines.push(dataValue(bytes));
      return;
    }
    const colon = bytes.indexOf(COLON);
    const field = text(colon < 0 ? bytes : bytes.subarray(0, colon));
    let value = colon < 0 ? "" : text(bytes.subarray(colon + 1));
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
    let data = lines[0];
    if (lines.length > 1) {
      const parts = [];
      for (const [i, one] of lines.entries()) {
        if (i) parts.push(Uint8Array.of(LF));
        parts.push(one);
      }
      data = concat(parts);
    }
    frames.push({ event, data, id: this.lastEventId });
  }
}
