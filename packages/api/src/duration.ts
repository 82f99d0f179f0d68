/**
 * Go duration strings (`15s`, `1m30s`, `500ms`, `1.5h`), the format Config Sync uses for
 * spec.git.period, override.reconcileTimeout and friends. Parsed here once so every package
 * agrees on what `period: 1m` means.
 */

// Go accepts both micro signs (U+00B5 and U+03BC). Written as escapes: one character outside
// Latin-1 anywhere in a bundle makes V8 keep the whole bundle's source as two-byte text (+2 MiB).
const unitMs: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "\u00b5s": 1e-3,
  "\u03bcs": 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/**
 * Milliseconds in a Go duration string, or undefined when it is not one. Negative durations are
 * rejected: no field that takes a duration means anything by them.
 */
export function parseDuration(text: string): number | undefined {
  const input = text.trim();
  if (input === "0") return 0;
  if (input === "" || input.startsWith("-")) return undefined;
  const body = input.startsWith("+") ? input.slice(1) : input;
  let total = 0;
  part.lastIndex = 0;
  while (part.lastIndex < body.length) {
    const at = part.lastIndex;
    const match = part.exec(body);
    if (match === null || match.index !== at) return undefined;
    const [, amount, unit] = match;
    if (amount === undefined || unit === undefined) return undefined;
    const factor = unitMs[unit];
    if (factor === undefined) return undefined;
    total += Number(amount) * factor;
  }
  return total;
}

/** Formats milliseconds the way Go prints a duration (`1m30s`, `500ms`, `0s`), for status and logs. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1_000) return `${ms}ms`;
  let rest = ms;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1_000;
  let out = "";
  if (hours > 0) out += `${hours}h`;
  if (hours > 0 || minutes > 0) out += `${minutes}m`;
  out += `${seconds}s`;
  return out;
}
