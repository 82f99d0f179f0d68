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
import { build, type BuildOptions, type Plugin } from "esbuild";
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
export const bundleDir = join(root, "dist");

/** Entry points: the file each app's package.json `bin` names. */
const apps: Record<string, string> = {
  "driftless-reconciler": "apps/reconciler/src/main.ts",
  "driftless-manager": "apps/manager/src/main.ts",
  "driftless-resource-group-controller": "apps/manager/src/resource-group-controller.ts",
  driftless: "apps/cli/src/main.ts",
};

/**
 * Node's built-in modules through require(), not `import`: Node builds the ES module face of a
 * built-in by reading every export, which runs the lazy getters (node:http's WebSocket,
 * MessageEvent, …) and so loads and runs undici and the web streams in every process: 1.2 MiB of
 * heap in an idle reconciler that never calls fetch. require() returns the module as it is.
 */
const builtinsThroughRequire: Plugin = {
  name: "builtins-through-require",
  setup(b) {
    const builtins = new Set(builtinModules);
    b.onResolve({ filter: /^(node:)?[a-z_/0-9]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, "");
      if (args.kind !== "import-statement" || !builtins.has(name)) return undefined;
      return { path: `node:${name}`, namespace: "builtin-require" };
    });
    b.onLoad({ filter: /.*/, namespace: "builtin-require" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};

/**
 * BullMQ's index loads its PostgreSQL backend (250 KiB of SQL text held as strings, `pg` glue) for
 * anyone who imports it; driftless queues on Redis only, so that part is left out.
 */
const bullmqWithoutPostgres: Plugin = {
  name: "bullmq-without-postgres",
  setup(b) {
    b.onResolve({ filter: /^\.\/postgres$/ }, (args) =>
      /[/\\]bullmq[/\\]dist[/\\]cjs[/\\]index\.js$/.test(args.importer)
        ? { path: "bullmq-postgres", namespace: "left-out" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "left-out" }, () => ({ contents: "module.exports = {};", loader: "js" }));
  },
};

const shared: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  outExtension: { ".js": ".mjs" },
  outdir: bundleDir,
  external: ["@kubernetes/client-node", "msgpackr-extract"],
  plugins: [builtinsThroughRequire, bullmqWithoutPostgres],
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
