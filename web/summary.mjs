// @ts-check
// The header's session totals as one line of plain text (the Chat view shows it; no durations).
const USAGE_LABELS = [["inputTokens", "input"], ["outputTokens", "output"], ["cacheReadTokens", "cache read"],
  ["cacheWriteTokens", "cache write"], ["reasoningTokens", "reasoning"]];

const COUNT = new Intl.NumberFormat("en-US");

/**
 * A count with thousands separators ("12,345"), from one shared formatter (`toLocaleString` builds one per call).
 * @param {number} n
 */
export function formatCount(n) {
  return COUNT.format(n);
}

/** @param {number} n @param {string} noun */
function plural(n, noun) {
  return `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * A token count, short from ten thousand on ("12.3K", "4.2M"), as render/texts.py: token_count_text writes it.
 * @param {number} n
 */
export function tokenCount(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  return n >= 10000 ? `${(n / 1000).toFixed(1)}K` : formatCount(n);
}

// The header's session totals (assembler.transcript.SessionSummary, sent with updates): counts, token usage as
// recorded (any subset), models. Durations are never shown here; plain text only.
// When the window holds only the newest messages (`partial`), the figures of the whole session come from `whole`
// (the session list's entry, or the local file's `session_facts`: turns, usage, model) and the loaded part's steps
// and tool calls are named as such; without `whole` the line says it counts only what is loaded.
/**
 * @param {any} summary the update's session summary (of the loaded window)
 * @param {{turnCount?: number, usage?: any, model?: string | null} | null} [whole] the whole session's figures
 * @param {boolean} [partial] the window holds only the newest part of the session
 */
export function summaryText(summary, whole = null, partial = false) {
  if (!summary || typeof summary !== "object") return "";
  if (partial) return partialText(summary, whole);
  const parts = [plural(summary.turns || 0, "turn"), plural(summary.steps || 0, "step"),
    plural(summary.toolCalls || 0, "tool call")];
  parts.push(...usageAndModels(summary.usage, summary.models));
  return parts.join(" · ");
}

/** @param {any} summary @param {{turnCount?: number, usage?: any, model?: string | null} | null} whole */
function partialText(summary, whole) {
  const loaded = `newest ${plural(summary.turns || 0, "turn")} loaded: ${plural(summary.steps || 0, "step")}, `
    + `${plural(summary.toolCalls || 0, "tool call")}`;
  if (whole && Number.isInteger(whole.turnCount)) {
    const models = whole.model ? [whole.model] : summary.models;
    return [plural(/** @type {number} */ (whole.turnCount), "turn"), ...usageAndModels(whole.usage, models), loaded]
      .join(" · ");
  }
  return [loaded, ...usageAndModels(summary.usage, summary.models).map((p, i) => (i === 0 && p.startsWith("tokens")
    ? `loaded ${p}` : p))].join(" · ");
}

/** @param {any} usage @param {any} models @returns {string[]} */
function usageAndModels(usage, models) {
  const parts = [];
  if (usage && typeof usage === "object") {
    const figures = USAGE_LABELS.filter(([k]) => Number.isInteger(usage[k])).map(([k, label]) => `${tokenCount(usage[k])} ${label}`);
    if (figures.length) parts.push(`tokens: ${figures.join(", ")}`);
  }
  if (Array.isArray(models) && models.length) parts.push(models.join(", "));
  return parts;
}
