// The main thread's side of the worker protocol (see worker.mjs): call(op, args, transfer) → Promise.
// Results that are JSON bytes are decoded here (TextDecoder + JSON.parse); nothing else crosses as a string.

const decoder = new TextDecoder();

export function decodeJson(value) {
  if (value instanceof Uint8Array) return JSON.parse(decoder.decode(value));
  return value;
}

export class Bridge {
  constructor(url) {
    this.worker = new Worker(url, { type: "module" });
    this.pending = new Map();
    this.nextId = 1;
    this.onBoot = () => {};
    this.onProgress = () => {};
    this.ready = new Promise((resolve, reject) => {
      this._resolveReady = resolve;
      this._rejectReady = reject;
    });
    this.worker.onmessage = (event) => this._receive(event.data);
    this.worker.onerror = (event) => {
      const err = new Error(`the Python worker failed: ${event.message || "could not start"}`);
      this._rejectReady(err);
      for (const { reject } of this.pending.values()) reject(err);
      this.pending.clear();
    };
  }

  _receive(msg) {
    if (msg.type === "boot") return this.onBoot(msg.text);
    if (msg.type === "ready") return this._resolveReady(msg.timings);
    if (msg.type === "failed") return this._rejectReady(new Error(msg.error));
    if (msg.type === "progress") return this.onProgress(msg);
    const entry = this.pending.get(msg.id);
    if (!entry) return;
    this.pending.delete(msg.id);
    if (msg.ok) entry.resolve(msg.value);
    else entry.reject(new Error(msg.error));
  }

  // Posts one request; `transfer` lists ArrayBuffers handed over (they become unusable here).
  call(op, args = {}, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args }, transfer);
    });
  }

  // Like call, for ops whose result is JSON bytes.
  async json(op, args = {}, transfer = []) {
    return decodeJson(await this.call(op, args, transfer));
  }

  get busy() {
    return this.pending.size > 0;
  }
}

// A private copy of some bytes in an ArrayBuffer of its own, ready to transfer.
export function ownedBytes(data) {
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  if (typeof data === "string") return new TextEncoder().encode(data);
  throw new TypeError("expected bytes (ArrayBuffer or Uint8Array)");
}
