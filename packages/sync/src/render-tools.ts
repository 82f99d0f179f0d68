/**
 * Where kustomize and helm are: --render-tools-dir / DRIFTLESS_RENDER_TOOLS_DIR, else (local mode, run
 * from a checkout of driftless) the newest folder packages/sync/scripts/build-render-tools.sh left in
 * .local/bin, else undefined: the tools on PATH (the image).
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

export function defaultRenderToolsDir(from: string = import.meta.dirname): string | undefined {
  for (let dir = from, depth = 0; depth < 5; dir = dirname(dir), depth++) {
    const bin = join(dir, ".local", "bin");
    let names: string[];
    try {
      names = readdirSync(bin).filter((n) => n.startsWith("render-kustomize-") && !n.endsWith(".partial"));
    } catch {
      continue;
    }
    const newest = names
      .map((n) => ({ path: join(bin, n), at: statSync(join(bin, n)).mtimeMs }))
      .sort((a, b) => b.at - a.at)[0];
    if (newest !== undefined) return newest.path;
  }
  return undefined;
}
