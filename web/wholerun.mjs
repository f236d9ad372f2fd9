// @ts-check
// The whole session's trajectory overview as the page reads it (timeline.mjs draws it): the server's GET
// .../timeline, a published site's timeline.json or the worker's fold of a local file (`fetch`), read once per
// window and again when a live window grew past it, at most every `againMs` (a timer reads it then even if nothing
// else changes). A late answer for a window already replaced is dropped; a failure is said once (`onError`) and
// not retried for that window.

const AGAIN_MS = 10_000;

export class WholeRun {
  /** @param {{fetch: () => Promise<any>, onError: (err: Error) => void, changed: () => void}} opts */
  constructor(opts) {
    this.opts = opts;
    /** @type {any} the whole run's timeline, once read */
    this.value = null;
    /** @type {Promise<void> | null} being read */
    this.asking = null;
    this.askedAt = 0;
    this.failed = "";
    this.againMs = AGAIN_MS;
    this.timer = 0;
    this.generation = 0;
  }

  /** Reads the whole run unless what was read reaches `last` (the window's last seq). @param {() => number} last */
  ask(last) {
    if (this.asking || this.failed) return;
    if (this.value && (this.value.last ?? -1) >= last()) return;
    const wait = this.value ? this.askedAt + this.againMs - Date.now() : 0;
    if (wait > 0) {
      if (!this.timer) this.timer = window.setTimeout(() => { this.timer = 0; this.ask(last); }, wait);
      return;
    }
    const generation = this.generation;
    this.askedAt = Date.now();
    this.asking = this.opts.fetch().then((/** @type {any} */ value) => {
      if (generation === this.generation && value && Array.isArray(value.spans)) this.value = value;
    }, (/** @type {Error} */ err) => {
      if (generation !== this.generation) return;
      this.failed = err.message;
      this.opts.onError(new Error(`the whole run's timeline could not be read (${err.message}); the overview `
        + "shows the loaded history"));
    }).finally(() => {
      if (generation !== this.generation) return;
      this.asking = null;
      this.opts.changed();
    });
  }

  /** Another window: nothing read, nothing asked. */
  reset() {
    this.generation += 1;
    clearTimeout(this.timer);
    this.timer = 0;
    this.value = null;
    this.asking = null;
    this.failed = "";
  }
}
