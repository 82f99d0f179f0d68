/** Structured JSON logs, one object per line on stdout: what log pipelines in a cluster expect. */
import { redactCredentials } from "@driftless/api";

export interface Logger {
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void;
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
  child(fields: Readonly<Record<string, unknown>>): Logger;
  /** Whether lines of `level` are written: for fields that cost something to compute. */
  enabled(level: Level): boolean;
}

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type Level = keyof typeof levels;

export function createLogger(
  base: Readonly<Record<string, unknown>> = {},
  options: { readonly level?: Level; readonly write?: (line: string) => void } = {},
): Logger {
  const min = levels[options.level ?? "info"];
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const emit = (level: Level, message: string, fields?: Readonly<Record<string, unknown>>): void => {
    if (levels[level] < min) return;
    // Redacted as a whole line: a URL with credentials may hide in any field, or an error's message.
    const line = JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...base, ...fields });
    write(redactCredentials(line) + "\n");
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ ...base, ...fields }, options),
    enabled: (level) => levels[level] >= min,
  };
}

let crashLog: Logger | undefined;

/**
 * Logs an uncaught exception or unhandled rejection as one redacted `error` line, then exits 1 as Node
 * would. Node's own report prints the message and stack as they are, and a message may carry a URL with
 * a token. Calling it again (once the logger knows more) changes the logger, not the handlers.
 */
export function logCrashes(log: Logger): void {
  if (crashLog === undefined) {
    const crash = (what: string) => (error: unknown) => {
      crashLog?.error(what, {
        error: error instanceof Error ? error.message : String(error),
        ...(error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {}),
      });
      process.exit(1);
    };
    process.on("uncaughtException", crash("uncaught exception"));
    process.on("unhandledRejection", crash("unhandled promise rejection"));
  }
  crashLog = log;
}
