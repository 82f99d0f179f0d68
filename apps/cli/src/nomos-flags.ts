/**
 * nomos's flags are cobra's, so its scripts write `--flat=true`, `--keep-output=false` and a bare
 * `--threshold`, and kubectl's users `-n=team-a`: rewritten here into the forms node:util's parseArgs reads.
 */

/** Objects per cluster that a bare `--threshold` allows, nomos's default. */
export const defaultObjectThreshold = 1000;

/** `argv` with cobra's boolean `--flag=true|false` and bare `--threshold` rewritten; nothing after `--`. */
export function nomosFlagForms(argv: readonly string[], booleanFlags: ReadonlySet<string>): string[] {
  const end = argv.indexOf("--");
  const flags = end === -1 ? argv : argv.slice(0, end);
  const rewritten = flags.flatMap((arg) => {
    if (arg === "--threshold") return [`--threshold=${defaultObjectThreshold}`];
    const match = /^--([^=]+)=(true|false)$/i.exec(arg);
    const name = match?.[1];
    if (name === undefined || !booleanFlags.has(name)) return [arg];
    return match?.[2]?.toLowerCase() === "true" ? [`--${name}`] : [];
  });
  return end === -1 ? rewritten : [...rewritten, ...argv.slice(end)];
}

/** The boolean flags written `--flag=false`, which nomosFlagForms drops, so a verb's own-flag check sees them. */
export function negatedBooleanFlags(argv: readonly string[], booleanFlags: ReadonlySet<string>): string[] {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).flatMap((arg) => {
    const name = /^--([^=]+)=false$/i.exec(arg)?.[1];
    return name !== undefined && booleanFlags.has(name) ? [name] : [];
  });
}

/**
 * `argv` with pflag's `-n=VALUE` for a shorthand that takes a value (`valueShorthands`: `n`, `o`) split
 * into `-n VALUE`, as kubectl reads it; parseArgs would take `=VALUE` as the value. Nothing after `--`.
 */
export function shorthandValueForms(argv: readonly string[], valueShorthands: ReadonlySet<string>): string[] {
  const end = argv.indexOf("--");
  const flags = end === -1 ? argv : argv.slice(0, end);
  const rewritten = flags.flatMap((arg) => {
    const match = /^-([A-Za-z])=(.*)$/s.exec(arg);
    const letter = match?.[1];
    return letter !== undefined && valueShorthands.has(letter) ? [`-${letter}`, match?.[2] ?? ""] : [arg];
  });
  return end === -1 ? rewritten : [...rewritten, ...argv.slice(end)];
}
