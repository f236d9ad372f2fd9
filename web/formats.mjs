// @ts-check
// The format table the build writes (build/site/formats.json, from assembler.formats): the suffixes a folder scan
// hands to the worker and the names the page shows. The page names no format of its own: without the table (a
// failed fetch) every file of a folder goes to the worker, which applies the same table in Python.

/**
 * One row of the table (assembler.formats.table).
 * @typedef {{name: string, label: string, harness: string, suffixes: string[], container: string,
 *   growth: string, live: boolean, sessions: "one" | "many"}} FormatRow
 * @typedef {{formats: FormatRow[], suffixes: string[]}} FormatTable
 */

/** @type {Promise<FormatTable> | null} */
let table = null;

/** @returns {Promise<FormatTable>} */
export function formatTable() {
  table ??= fetch("formats.json")
    .then((response) => (response.ok ? response.json() : { formats: [], suffixes: [] }))
    .catch(() => ({ formats: [], suffixes: [] }));
  return table;
}

/** The harnesses the table reads, each once, in the table's order. @param {FormatTable} t */
export function harnessNames(t) {
  return [...new Set(t.formats.map((f) => f.harness).filter(Boolean))];
}

/**
 * Whether a folder scan hands `name` to the worker: it ends in a suffix of the table (every file when the table
 * could not be read).
 * @param {string} name
 * @param {FormatTable} t
 */
export function scanned(name, t) {
  return !t.suffixes.length || t.suffixes.some((suffix) => name.endsWith(suffix));
}
