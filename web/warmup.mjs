// @ts-check
// The worker's idle warm-up (assembler/browser/warmup.py): from boot until the first request that reads or shows a
// session, Python folds a small generated session in a scratch viewer, one short step per task, so the first page a
// reader opens does not pay for first use (V8 compiling and tiering up the wasm, Python's specialised bytecode,
// msgspec's decoders). The open window is never touched. A request waits for one step at most: steps run one per
// task, and a request that reads or shows a session ends the warm-up for good (it never starts when one came first,
// as when a page opened by a link has its session's frames waiting before Python is ready). The first step is the
// long one (about 100 ms in Chromium on a small machine, later ones about 20 ms): it is the first-use cost a first
// request would pay itself.

/** Requests that do not read or show a session: they leave the warm-up running. */
const PASSIVE = new Set(["ready", "heapSize", "runPython"]);

export class IdleWarmUp {
  /**
   * @param {() => {step: number, path: string, ms: number, done: boolean}} step runs one step in Python
   * @param {Record<string, number>} timings the worker's boot timings: `warmSteps`, `warmMs` and `warmDone` are set there
   */
  constructor(step, timings) {
    this.step = step;
    this.timings = timings;
    this.engaged = false;
  }

  /** A request has come (before its handler runs). @param {string} op */
  engage(op) {
    if (!PASSIVE.has(op)) this.engaged = true;
  }

  /** Runs the steps (call once Python is ready); a failing step is reported on the console and ends the warm-up. */
  async run() {
    const started = performance.now();
    try {
      for (let steps = 1; !this.engaged; steps++) {
        await new Promise((resolve) => setTimeout(resolve, 0)); // a request posted meanwhile is taken first
        if (this.engaged) break;
        const { done } = this.step();
        this.timings.warmSteps = steps;
        this.timings.warmMs = Math.round(performance.now() - started);
        if (done) {
          this.timings.warmDone = 1;
          break;
        }
      }
    } catch (err) {
      console.error(`the idle warm-up failed: ${String(/** @type {any} */ (err)?.message || err)}`);
    }
  }
}
