// The types of web/pyodide/pyodide.mjs (copied from node_modules/pyodide into build/site/pyodide/ by the build):
// tsconfig.worker.json's rootDirs lay types/ over web/, so the worker's `./pyodide/pyodide.mjs` import resolves here.
export * from "../../node_modules/pyodide/pyodide.js";
