/**
 * `npm run bench`: runs every benchmark (`packages/*\/bench/*.bench.ts`, `test/bench/*.bench.ts`) one after
 * another (they would disturb each other's timings in parallel), each printing a markdown table, and
 * collects their JSON results in bench-results/<name>.json. Numbers go into docs/benchmarks.md by hand,
 * with the machine they were measured on.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, existsSync } from "node:fs";
import { basename, join } from "node:path";

const root = join(import.meta.dirname, "..");
const dirs = [
  ...readdirSync(join(root, "packages")).map((p) => join(root, "packages", p, "bench")),
  join(root, "test", "bench"),
];
const only = process.argv[2];
const benches = dirs
  .filter((d) => existsSync(d))
  .flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith(".bench.ts"))
      .map((f) => join(d, f)),
  )
  .filter((f) => only === undefined || f.includes(only));

const outDir = join(root, "bench-results");
mkdirSync(outDir, { recursive: true });
let failed = 0;
for (const file of benches) {
  const name = basename(file, ".bench.ts");
  process.stdout.write(`\n## ${name} (${file.slice(root.length + 1)})\n\n`);
  const run = spawnSync(process.execPath, [file], {
    stdio: "inherit",
    env: { ...process.env, BENCH_OUT: join(outDir, `${name}.json`) },
  });
  if (run.status !== 0) {
    failed++;
    process.stdout.write(`\n${name}: FAILED (exit ${run.status ?? run.signal})\n`);
  }
}
process.exit(failed === 0 ? 0 : 1);
