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
 * A token count, short from ten thousand on ("12.3K").
 * @param {number} n
 */
export function tokenCount(n) {
  return n >= 10000 ? `${(n / 1000).toFixed(1)}K` : formatCount(n);
}

// The header's session totals (assembler.transcript.SessionSummary, sent with updates): counts, token usage as
// recorded (any subset), models. Durations are never shown here; plain text only.
/** @param {any} summary the update's session summary */
export function summaryText(summary) {
  if (!summary || typeof summary !== "object") return "";
  const parts = [plural(summary.turns || 0, "turn"), plural(summary.steps || 0, "step"),
    plural(summary.toolCalls || 0, "tool call")];
  const usage = summary.usage;
  if (usage && typeof usage === "object") {
    const figures = USAGE_LABELS.filter(([k]) => Number.isInteger(usage[k])).map(([k, label]) => `${tokenCount(usage[k])} ${label}`);
    if (figures.length) parts.push(`tokens: ${figures.join(", ")}`);
  }
  if (Array.isArray(summary.models) && summary.models.length) parts.push(summary.models.join(", "));
  return parts.join(" · ");
}
