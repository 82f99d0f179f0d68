/**
 * `npm run build` (after `tsc -b`): bundles each app into one ES module under dist/, the form
 * production runs (the Dockerfile, the manager's reconciler children when the manager itself runs
 * from dist/). Tests and development run the TypeScript sources directly.
 *
 * Why bundle: a reconciler started from sources pays for Node's type stripper and for loading some
 * 150 modules one by one, ~133 MiB of RSS before its first pass; the bundle starts at ~80 MiB
 * (docs/benchmarks.md). Third-party packages are bundled too, except those loaded lazily or
 * natively: @kubernetes/client-node (only for exec/auth-provider kubeconfigs) and msgpackr's
 * optional native extension.
 */
import { build, type BuildOptions } from "esbuild";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
export const bundleDir = join(root, "dist");

/** Entry points: the file each app's package.json `bin` names. */
const apps: Record<string, string> = {
  "driftless-reconciler": "apps/reconciler/src/main.ts",
  "driftless-manager": "apps/manager/src/main.ts",
  driftless: "apps/cli/src/main.ts",
};

const shared: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  outExtension: { ".js": ".mjs" },
  outdir: bundleDir,
  external: ["@kubernetes/client-node", "msgpackr-extract"],
  // CommonJS dependencies (ioredis, prom-client, yaml) call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __driftlessRequire } from 'node:module'; const require = __driftlessRequire(import.meta.url);",
  },
  sourcemap: "linked",
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: "linked",
  logLevel: "warning",
};

await build({ ...shared, entryPoints: Object.entries(apps).map(([out, in_]) => ({ out, in: join(root, in_) })) });

// V8 keeps a script's source in memory, one byte per character only if every character is Latin-1:
// a single Greek letter in a regular expression (esbuild escapes strings, not regexes) doubled the
// reconciler's 2 MiB source. Write such characters as \u escapes.
for (const out of Object.keys(apps)) {
  const text = readFileSync(join(bundleDir, `${out}.mjs`), "utf8");
  const at = text.search(/[^\u0000-\u00ff]/);
  if (at !== -1) {
    throw new Error(
      `dist/${out}.mjs has a character outside Latin-1 near: ${text.slice(Math.max(0, at - 40), at + 10)}`,
    );
  }
}
