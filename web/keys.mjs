// @ts-check
// Keyboard: j/k next/previous row, o/Enter open or close it, g/G first/last, [ load older, e events, t theme,
// f the session filter, ? this help (1/2/3 and / belong to features.mjs). Keys typed into a field are left alone.
import { els } from "./dom.mjs";
import { loadOlder } from "./flows.mjs";
import { hooks, view } from "./runtime.mjs";
import { toggleTheme } from "./theme.mjs";

export function showHelp() {
  if (!els.help.open) els.help.showModal();
}

/** @param {KeyboardEvent} event */
function onKey(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement
      || (target instanceof HTMLElement && target.isContentEditable)) return;
  if (els.help.open) return; // the dialog handles Escape itself
  const focused = document.activeElement?.closest?.("article[data-key]");
  switch (event.key) {
    case "j": view.focusBy(1); break;
    case "k": view.focusBy(-1); break;
    case "g": case "Home": { const k = view.shownKeys(); if (k.length) view.focusKey(k[0], { block: "start" }); break; }
    case "G": case "End": { const k = view.shownKeys(); if (k.length) view.focusKey(k[k.length - 1], { block: "end" }); break; }
    case "o": case "Enter": {
      if (!focused || target !== focused) return;
      const details = focused.querySelector("details");
      if (!details) break;
      if (focused instanceof HTMLElement) view.hold(focused);
      details.open = !details.open;
      break;
    }
    case "t": toggleTheme(); break;
    case "[": void loadOlder(); break;
    case "e": els.showEvents.checked = !els.showEvents.checked; view.setShowEvents(els.showEvents.checked); hooks.eventsToggled(); break;
    case "f": if (!els.sessions.hidden) els.sessionFilter.focus(); else return; break;
    case "?": showHelp(); break;
    default: return;
  }
  event.preventDefault();
}

export function initKeys() {
  document.addEventListener("keydown", onKey);
  els.helpClose.addEventListener("click", () => els.help.close());
}
