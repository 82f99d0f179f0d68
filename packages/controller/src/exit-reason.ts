/**
 * Why a reconciler process ended, from the end of its own log: the last line at level error (the
 * reconciler writes one JSON line before it exits on a failure), or Node's own fatal message. Read
 * only after an exit, so its cost never touches a running reconciler.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { redactCredentials } from "@driftless/api";

/** Enough for the last few log lines; a reason is one line. */
const tailBytes = 16 * 1024;
/** Reasons go on a condition: long enough to read, short enough for a status. */
const maxReasonChars = 512;

export function lastErrorInLog(file: string): string | undefined {
  let text: string;
  try {
    const fd = openSync(file, "r");
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, tailBytes);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      text = buffer.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // no log yet
  }
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  for (let i = lines.length - 1; i >= 0; i--) {
    const reason = reasonOf(lines[i] ?? "");
    if (reason !== undefined) return clip(redactCredentials(reason));
  }
  return undefined;
}

function reasonOf(line: string): string | undefined {
  if (line.startsWith("{")) {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry["level"] !== "error" && entry["level"] !== "fatal") return undefined;
      const message = typeof entry["msg"] === "string" ? entry["msg"] : "error";
      return typeof entry["error"] === "string" ? `${message}: ${entry["error"]}` : message;
    } catch {
      return undefined;
    }
  }
  // Node's own last words: an out-of-memory abort or an uncaught exception before logging started.
  return /^(FATAL ERROR|Error|TypeError|RangeError)\b/.test(line) ? line : undefined;
}

function clip(text: string): string {
  return text.length <= maxReasonChars ? text : `${text.slice(0, maxReasonChars - 1)}…`;
}
