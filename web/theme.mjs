// @ts-check
// Light and dark themes: follows the system setting until the user picks one (remembered in localStorage).
// The choice is applied as data-theme on <html>, which the stylesheets key their colours on.

const KEY = "transcript-viewer-theme";
const media = window.matchMedia("(prefers-color-scheme: dark)");

function stored() {
  try {
    const value = localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : null;
  } catch {
    return null; // storage may be unavailable (file://, privacy settings)
  }
}

export function currentTheme() {
  return document.documentElement.dataset.theme;
}

function apply() {
  document.documentElement.dataset.theme = stored() ?? (media.matches ? "dark" : "light");
}

export function toggleTheme() {
  const next = currentTheme() === "dark" ? "light" : "dark";
  try { localStorage.setItem(KEY, next); } catch { /* keep it for this page only */ }
  document.documentElement.dataset.theme = next;
  return next;
}

/** @param {HTMLElement | null} button */
export function initTheme(button) {
  apply();
  media.addEventListener("change", apply);
  if (button) {
    const label = () => {
      const theme = currentTheme();
      button.setAttribute("aria-label", theme === "dark" ? "Switch to light theme" : "Switch to dark theme");
      button.title = button.getAttribute("aria-label") ?? "";
    };
    label();
    button.addEventListener("click", () => { toggleTheme(); label(); });
    media.addEventListener("change", label);
  }
}
