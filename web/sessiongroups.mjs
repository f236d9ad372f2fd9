// @ts-check
// What the session list shows, without the DOM: its entries as groups by project (the entry's recorded cwd, else
// the folder holding the file; a Claude Code project folder's encoded name is not reversible, the cwd is), a child
// session (its parentSession names another entry's sessionId) as a row under its parent, warm-ups left out unless
// shown, the filter and the sort applied; and each entry's one line of facts (harness, model, recency, turns,
// usage). sessionlist.mjs draws them.
import { formatCount, tokenCount } from "./summary.mjs";

/** @typedef {import("./sessions.mjs").SessionEntry} SessionEntry */
/** @typedef {"newest" | "oldest" | "name"} SortOrder */
/**
 * Where entries come from: the server, a folder opened in the page, or a local file's sessions. A local entry has
 * `local: {path, key}` (a folder's file) or `local: {key}` (a session of the open file).
 * @typedef {{kind: "served" | "folder" | "file", name: string, entries: SessionEntry[]}} ListSource
 * @typedef {{entry: SessionEntry, uid: string, children: Row[]}} Row
 * @typedef {{key: string, label: string, rows: Row[], newest: number}} Group
 */

/** @param {SessionEntry} s */
const activity = (s) => s.lastActivity ?? -Infinity;

/** @param {SortOrder} sort @returns {(a: SessionEntry, b: SessionEntry) => number} */
function comparer(sort) {
  return (a, b) => {
    if (sort === "name") return (a.title || a.file).localeCompare(b.title || b.file) || a.id.localeCompare(b.id);
    return (activity(a) - activity(b)) * (sort === "newest" ? -1 : 1) || a.id.localeCompare(b.id);
  };
}

/** The id a list button carries: served entries keep theirs (the #session= link), local ones are prefixed.
 * @param {ListSource} source @param {SessionEntry} s */
export function uidOf(source, s) {
  return source.kind === "served" ? s.id : localUid(source.kind, s);
}

/** The list id of a local entry (what `markCurrent` takes). @param {"folder" | "file"} kind @param {{id: string}} s */
export function localUid(kind, s) {
  return `${kind}:${s.id}`;
}

/** The folder holding the entry's file: the id's folder for a served entry (an id is a relative path), the path's
 * for a local one. @param {ListSource} source @param {SessionEntry} s */
function folderOf(source, s) {
  const where = source.kind === "served" ? s.id : s.path;
  const cut = where.lastIndexOf("/");
  return cut > 0 ? where.slice(0, cut) : "";
}

/** @param {ListSource} source @param {SessionEntry} s */
function projectOf(source, s) {
  if (s.cwd) return s.cwd;
  if (source.kind === "file") return source.name;
  let folder = folderOf(source, s);
  const parts = folder.split("/");
  if (parts.length >= 2 && parts[parts.length - 1] === "subagents") folder = parts.slice(0, -2).join("/");
  return folder;
}

/** A project's name as shown: its last two path segments (the whole path is the tooltip). @param {string} key */
function projectLabel(key, /** @type {ListSource} */ source) {
  if (!key) return source.kind === "served" ? "Served folder" : source.name;
  const parts = key.split("/").filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join("/")}` : key;
}

/** @param {SessionEntry} s @param {string} filter */
function matches(s, filter) {
  if (!filter) return true;
  const needle = filter.toLowerCase();
  return [s.title || "", s.file, s.id, s.cwd || "", s.subagentLabel || ""].some((text) => text.toLowerCase().includes(needle));
}

/**
 * The source's entries as groups of rows: children under their parent (by sessionId), warm-ups left out unless
 * shown, the filter applied (a row stays when it or a child matches; a matching child opens its parent).
 * `seen` gets every row's list id (its entry and source), shown or not; `expanded` gets a parent a matching child
 * opens.
 * @param {ListSource} source
 * @param {{sort: SortOrder, filter: string, warmups: boolean, expanded: Set<string>,
 *   seen: Map<string, {entry: SessionEntry, source: ListSource}>, since?: number | null}} options  since: the date
 *   filter (entries last active before it, or with no activity time, are left out)
 * @returns {Group[]}
 */
export function grouped(source, { sort, filter, warmups, expanded, seen, since = null }) {
  const compare = comparer(sort);
  const entries = source.entries.filter((s) => (warmups || !s.warmup) && (since === null || activity(s) >= since));
  /** @type {Map<string, SessionEntry>} */
  const bySession = new Map();
  for (const s of entries) if (s.sessionId && !bySession.has(s.sessionId)) bySession.set(s.sessionId, s);
  /** @type {Map<SessionEntry, SessionEntry[]>} */
  const children = new Map();
  /** @type {SessionEntry[]} */
  const top = [];
  for (const s of entries) {
    const parent = s.parentSession ? bySession.get(s.parentSession) : undefined;
    if (parent && parent !== s) {
      if (!children.has(parent)) children.set(parent, []);
      /** @type {SessionEntry[]} */ (children.get(parent)).push(s);
    } else top.push(s);
  }
  /** @param {SessionEntry} s @param {number} depth @returns {Row | null} */
  const rowOf = (s, depth) => {
    const kids = depth < 8 ? (children.get(s) || []).sort(compare).map((c) => rowOf(c, depth + 1))
      .filter((r) => r !== null) : [];
    const uid = uidOf(source, s);
    seen.set(uid, { entry: s, source });
    if (!matches(s, filter) && !kids.length) return null;
    if (filter && kids.length) expanded.add(uid); // a matching child is shown
    return { entry: s, uid, children: /** @type {Row[]} */ (kids) };
  };
  /** @type {Map<string, Group>} */
  const groups = new Map();
  for (const s of top.sort(compare)) {
    const row = rowOf(s, 0);
    if (!row) continue;
    const key = projectOf(source, s);
    let group = groups.get(key);
    if (!group) groups.set(key, group = { key, label: projectLabel(key, source), rows: [], newest: -Infinity });
    group.rows.push(row);
    group.newest = Math.max(group.newest, activity(s));
  }
  const out = [...groups.values()];
  if (sort === "name") out.sort((a, b) => a.label.localeCompare(b.label));
  else out.sort((a, b) => (a.newest - b.newest) * (sort === "newest" ? -1 : 1) || a.key.localeCompare(b.key));
  return out;
}

const RELATIVE = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const DATE = new Intl.DateTimeFormat("en", { dateStyle: "medium" });

/** How long ago, short ("5 min ago", "yesterday", "3 Jan 2026"). @param {number} ms */
export function recency(ms, now = Date.now()) {
  const s = (now - ms) / 1000;
  if (s < 45) return "just now";
  if (s < 3600) return RELATIVE.format(-Math.round(s / 60), "minute");
  if (s < 86400) return RELATIVE.format(-Math.round(s / 3600), "hour");
  if (s < 7 * 86400) return RELATIVE.format(-Math.round(s / 86400), "day");
  return DATE.format(new Date(ms));
}

/** @param {SessionEntry} s */
export function describeTime(s) {
  if (s.lastActivity === null || s.lastActivity === undefined) return "no time recorded";
  const when = new Date(s.lastActivity).toLocaleString();
  return s.lastActivitySource === "mtime" ? `${when} (file modified; the log records no time)` : when;
}

const USAGE = /** @type {const} */ ([["inputTokens", "input"], ["outputTokens", "output"],
  ["cacheReadTokens", "cache read"], ["cacheWriteTokens", "cache write"], ["reasoningTokens", "reasoning"]]);

/** A model name without its release date ("claude-opus-4-5-20251101" → "claude-opus-4-5"; the tooltip has it
 * whole). @param {string} model */
export function shortModel(model) {
  return model.replace(/-(?:20\d{6}|\d{4}-\d{2}-\d{2})$/, "");
}

/** The entry's one line of facts: harness, model, recency, turns, usage (what it records). @param {SessionEntry} s */
export function factsLine(s) {
  const parts = [];
  if (s.harness) parts.push(s.harness);
  if (s.model) parts.push(shortModel(s.model));
  if (s.lastActivity !== null && s.lastActivity !== undefined) {
    parts.push(`${s.lastActivitySource === "mtime" ? "~" : ""}${recency(s.lastActivity)}`);
  }
  if (Number.isInteger(s.turnCount)) parts.push(`${formatCount(s.turnCount)} turn${s.turnCount === 1 ? "" : "s"}`);
  else parts.push(`${formatCount(s.eventCount)} events`); // a local file's session: only its events are counted
  const usage = s.usage || {};
  const total = USAGE.reduce((sum, [k]) => sum + (Number.isInteger(usage[k]) ? usage[k] : 0), 0);
  if (total) parts.push(`${tokenCount(total)} tokens`);
  return parts.join(" · ");
}

/** @param {SessionEntry} s */
export function usageTitle(s) {
  const usage = s.usage || {};
  const figures = USAGE.filter(([k]) => Number.isInteger(usage[k])).map(([k, label]) => `${formatCount(usage[k])} ${label}`);
  return figures.length ? `tokens: ${figures.join(", ")}` : "no token usage recorded";
}
