import { readFile } from "node:fs/promises";

/** The last meaningful lines of a process log, folded to one line for an error message. */
export async function tailLog(file: string, lines = 5): Promise<string> {
  try {
    const text = await readFile(file, "utf8");
    return text.trim().split("\n").slice(-lines).join(" | ").slice(-1_500);
  } catch {
    return "(no log)";
  }
}
