// @ts-check
// Where the page's requests go, named once for the page (its twin on the publish side is
// assembler/server/site_paths.py: site_path; tests/unit/test_publish_pages.py holds the two to the same answers):
// the server's API (`serve`), or the files of a site `publish` wrote, whose index.html carries the marker
// <meta name="transcript-assembler-site" content="published">. A session's whole-run overview (timeline) is
// GET api/sessions/ID/timeline, or the site's sessions/DIR/timeline.json. Every URL is relative, so a published site works
// under any sub-path, from a plain file host, an object store or a CDN. A published session is read-only: it has
// no follow stream and no raw file.
import { PAGE_SIZE } from "./config.mjs";

/** The page's whole-session export asks for this many messages (every one). */
export const ALL_MESSAGES = Number.MAX_SAFE_INTEGER;

/** Whether this page is a published site (the marker publish puts in index.html). */
export function isPublished() {
  return typeof document !== "undefined"
    && document.querySelector('meta[name="transcript-assembler-site"][content="published"]') !== null;
}

/** An id as the server's URL path: each segment percent-encoded. @param {string} id */
export function sessionPath(id) {
  return id.split("/").map(encodeURIComponent).join("/");
}

const SAFE = /^[A-Za-z0-9._-]$/;

/** An id as ONE path segment of a published site: each UTF-8 byte outside A-Z a-z 0-9 . _ - (and a leading .)
 * written ~XX, so no host needs percent-encoding and no id nests in another's folder. @param {string} id */
export function sessionDir(id) {
  let out = "";
  new TextEncoder().encode(id).forEach((byte, i) => {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && SAFE.test(c) && !(i === 0 && c === ".") ? c : `~${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  });
  return out;
}

/**
 * A request of the page to the server, and what answers it.
 * @typedef {{kind: "list"}
 *   | {kind: "page", id: string, through?: number | null, before?: number | null, maxMessages?: number,
 *      fromSeq?: number | null}
 *   | {kind: "follow", id: string, maxMessages?: number}
 *   | {kind: "timeline", id: string}} SiteRequest
 */

/**
 * The URL (relative to the page) that answers `request`: the server's API, or on a published site its file; null
 * when a published site has none (a follow stream, a page size it was not published with). A published session
 * never grows, so its every page is read through its last seq and the file needs no `through`.
 * @param {SiteRequest} request
 * @param {boolean} [published]
 * @returns {string | null}
 */
export function requestUrl(request, published = isPublished()) {
  if (request.kind === "list") return published ? "catalog.json" : "api/sessions";
  if (request.kind === "timeline") {
    if (!request.id) return null;
    const base = `sessions/${sessionDir(request.id)}`;
    return published ? `${base}/timeline.json` : `api/sessions/${sessionPath(request.id)}/timeline`;
  }
  const maxMessages = request.maxMessages ?? PAGE_SIZE;
  if (!published) {
    const path = `api/sessions/${sessionPath(request.id)}`;
    if (request.kind === "follow") return `${path}/follow?maxMessages=${maxMessages}`;
    const params = new URLSearchParams();
    if (request.through !== null && request.through !== undefined) params.set("throughSeq", String(request.through));
    params.set("maxMessages", String(maxMessages));
    if (request.before !== null && request.before !== undefined) params.set("beforeSeq", String(request.before));
    if (request.fromSeq !== null && request.fromSeq !== undefined) params.set("fromSeq", String(request.fromSeq));
    return `${path}/page?${params}`;
  }
  if (request.kind !== "page" || !request.id) return null;
  const base = `sessions/${sessionDir(request.id)}`;
  const before = request.before ?? null;
  if (maxMessages === ALL_MESSAGES && before === null) return `${base}/all.json`;
  if (maxMessages !== PAGE_SIZE) return null;
  return before === null ? `${base}/page.json` : `${base}/page-${before}.json`;
}
