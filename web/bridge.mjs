// @ts-check
// The main thread's side of the worker protocol (see worker.mjs): call(op, args, transfer) → Promise.
// Results that are JSON bytes are decoded here (TextDecoder + JSON.parse); nothing else crosses as a string.

import { adoptWorker } from "./worker-start.mjs";

const decoder = new TextDecoder();

/** @param {unknown} value */
export function decodeJson(value) {
  if (value instanceof Uint8Array) return JSON.parse(decoder.decode(value));
  return value;
}

/** @typedef {{stage: string, text: string, ms: number}} BootStage */
/** @typedef {Record<string, number>} BootTimings */

export class Bridge {
  constructor() {
    /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void, onPreview?: (u: any) => void, onFetching?: (m: any) => void}>} */
    this.pending = new Map();
    this.nextId = 1;
    this.isReady = false;
    /** @type {(stage: BootStage) => void} */
    this.onStage = () => {};
    /** @type {(msg: any) => void} */
    this.onProgress = () => {};
    /** @type {(resolve: BootTimings) => void} */
    let resolveReady = () => {};
    /** @type {(err: Error) => void} */
    let rejectReady = () => {};
    /** @type {Promise<BootTimings>} */
    this.ready = new Promise((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    this._resolveReady = resolveReady;
    this._rejectReady = rejectReady;
    // The worker was started by worker-start.mjs, before this module graph finished loading.
    this.worker = adoptWorker((event) => this._receive(event.data), (event) => {
      const err = new Error(`the Python worker failed: ${event.message || "could not start"}`);
      this._rejectReady(err);
      for (const { reject } of this.pending.values()) reject(err);
      this.pending.clear();
    });
  }

  /** @param {any} msg */
  _receive(msg) {
    if (msg.type === "stage") return this.onStage(msg);
    if (msg.type === "ready") {
      this.isReady = true;
      return this._resolveReady(msg.timings);
    }
    if (msg.type === "failed") return this._rejectReady(new Error(msg.error));
    if (msg.type === "progress") return this.onProgress(msg);
    if (msg.type === "preview") return this.pending.get(msg.id)?.onPreview?.(decodeJson(msg.update));
    if (msg.type === "fetching") return this.pending.get(msg.id)?.onFetching?.(msg);
    const entry = this.pending.get(msg.id);
    if (!entry) return;
    this.pending.delete(msg.id);
    if (msg.ok) entry.resolve(msg.value);
    else entry.reject(Object.assign(new Error(msg.error), { kind: msg.kind })); // kind: "cancelled", "too-big"
  }

  /**
   * Posts one request; `transfer` lists ArrayBuffers handed over (they become unusable here). Requests made before
   * Python is ready wait in the worker, in order.
   * @param {string} op
   * @param {Record<string, unknown>} [args]
   * @param {Transferable[]} [transfer]
   * @param {(update: any) => void} [onPreview] gets the request's preview updates (an openFile of a big file)
   * @param {(message: any) => void} [onFetching] gets the request's notes of files it fetches (a siteSearch)
   * @returns {Promise<any>}
   */
  call(op, args = {}, transfer = [], onPreview = undefined, onFetching = undefined) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onPreview, onFetching });
      this.worker.postMessage({ id, op, args }, transfer);
    });
  }

  /**
   * Like call, for ops whose result is JSON bytes.
   * @param {string} op
   * @param {Record<string, unknown>} [args]
   * @param {Transferable[]} [transfer]
   * @param {(update: any) => void} [onPreview]
   * @param {(message: any) => void} [onFetching]
   * @returns {Promise<any>}
   */
  async json(op, args = {}, transfer = [], onPreview = undefined, onFetching = undefined) {
    return decodeJson(await this.call(op, args, transfer, onPreview, onFetching));
  }

  get busy() {
    return this.pending.size > 0;
  }
}

/**
 * A private copy of some bytes in an ArrayBuffer of its own, ready to transfer.
 * @param {ArrayBuffer | ArrayBufferView | string} data
 * @returns {Uint8Array<ArrayBuffer>}
 */
export function ownedBytes(data) {
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  if (ArrayBuffer.isView(data)) {
    // One pass (slice copies into a fresh buffer); `new Uint8Array(n)` + `set` zero-fills first.
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  }
  if (typeof data === "string") return new TextEncoder().encode(data);
  throw new TypeError("expected bytes (ArrayBuffer or Uint8Array)");
}
