// @ts-check
// Subagent rows link their child session (and a child's row its parent): when the server serves the session, by
// its served list; when the open file is one of a folder opened in the page, by the folder's entries (opened
// locally, no server involved). A list says each session's header id (sessionId), parent (parentSession) and own
// label (subagentLabel); the row's empty `.child-link` span says the child's id or label (or `parentLink`).
import { listSessions } from "./sessions.mjs";

/** @typedef {import("./sessions.mjs").SessionEntry} SessionEntry */

/**
 * Fills the empty `.child-link` spans under `root` with links.
 * @param {{served?: Promise<SessionEntry[]> | null, localLinks: {current: () => any, entries: () => any[],
 *   open: (entry: any) => void} | null}} view the Chat view (it caches the served list for the open session)
 * @param {HTMLElement} root
 */
export async function linkChildren(view, root) {
  const links = view.localLinks;
  const local = links?.current() ?? null; // a file of a folder opened in the page: link within it
  /** @type {SessionEntry[]} */
  let list;
  /** @type {SessionEntry | undefined} */
  let me;
  if (local && links) {
    list = links.entries();
    me = local;
  } else {
    view.served ??= listSessions().then((answer) => answer.sessions || [], () => []);
    list = await view.served;
    const current = new URLSearchParams(location.hash.replace(/^#/, "")).get("session");
    me = list.find((s) => s.id === current);
  }
  for (const span of root.querySelectorAll(".child-link:empty")) {
    if (!(span instanceof HTMLElement)) continue;
    const { childSession, subagentLabel, parentLink } = span.dataset;
    let target = null;
    if (parentLink) {
      target = me?.parentSession ? list.find((s) => s.sessionId === me?.parentSession) : null;
    } else {
      if (childSession) target = list.find((s) => s.sessionId === childSession);
      if (!target && subagentLabel && me?.sessionId) {
        target = list.find((s) => s.parentSession === me?.sessionId && s.subagentLabel === subagentLabel);
      }
    }
    if (!target) continue;
    const a = document.createElement("a");
    a.textContent = parentLink ? "open the parent session" : "open the child session";
    if (local && links) {
      const found = target;
      a.href = "#";
      a.dataset.localSession = target.id;
      a.addEventListener("click", (e) => { e.preventDefault(); e.stopPropagation(); links.open(found); });
    } else {
      a.href = `#session=${encodeURIComponent(target.id)}`;
      a.addEventListener("click", (e) => e.stopPropagation()); // inside a <summary>: follow, do not toggle
    }
    span.replaceChildren(a);
  }
}
