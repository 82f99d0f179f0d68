/**
 * Where kustomize and helm are: --render-tools-dir / DRIFTLESS_RENDER_TOOLS_DIR, else (local mode, run
 * from a checkout of driftless) the newest folder packages/sync/scripts/build-render-tools.sh left in
 * DRIFTLESS_BIN_CACHE, where that script builds them when it is set, or in .local/bin, else undefined:
 * the tools on PATH (the image).
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

export function defaultRenderToolsDir(
  from: string = import.meta.dirname,
  binCache: string | undefined = process.env["DRIFTLESS_BIN_CACHE"],
): string | undefined {
  if (binCache !== undefined && binCache !== "") {
    const built = newestRenderTools(binCache);
    if (built !== undefined) return built;
  }
  for (let dir = from, depth = 0; depth < 5; dir = dirname(dir), depth++) {
    const built = newestRenderTools(join(dir, ".local", "bin"));
    if (built !== undefined) return built;
  }
  return undefined;
}

/** The newest finished render-tools folder in `bin`, if any. */
function newestRenderTools(bin: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(bin).filter((n) => n.startsWith("render-kustomize-") && !n.endsWith(".partial"));
  } catch {
    return undefined;
  }
  return names.map((n) => ({ path: join(bin, n), at: statSync(join(bin, n)).mtimeMs })).sort((a, b) => b.at - a.at)[0]
    ?.path;
}
