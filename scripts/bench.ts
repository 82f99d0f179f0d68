/**
 * `npm run bench`: runs every benchmark (`packages/*\/bench/*.bench.ts`, `packages/*\/src/*.bench.ts`,
 * `test/bench/*.bench.ts`) one after another (they would disturb each other's timings in parallel), each
 * printing a markdown table, and collects their JSON results in bench-results/<name>.json. Numbers go
 * into docs/benchmarks.md by hand, with the machine they were measured on.
 * `npm run bench <name>` runs the one of that name (its file name without `.bench.ts`); `--list` prints
 * the names. An unknown name is an error: it used to run nothing and exit 0, which read as a pass.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, existsSync } from "node:fs";
import { basename, join } from "node:path";

const root = join(import.meta.dirname, "..");

/** Every benchmark file, by its name. A package keeps them in `bench/`, or beside the code in `src/`. */
function benchFiles(): Map<string, string> {
  const dirs = [
    ...readdirSync(join(root, "packages")).flatMap((p) => [
      join(root, "packages", p, "bench"),
      join(root, "packages", p, "src"),
    ]),
    join(root, "test", "bench"),
  ];
  const files = dirs
    .filter((d) => existsSync(d))
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => f.endsWith(".bench.ts"))
        .map((f) => join(d, f)),
    );
  const byName = new Map<string, string>();
  for (const file of files) {
    const name = basename(file, ".bench.ts");
    const other = byName.get(name);
    // A second file of one name would never run, not even under a plain `npm run bench`.
    if (other !== undefined) throw new Error(`two benchmarks named ${JSON.stringify(name)}: ${other} and ${file}`);
    byName.set(name, file);
  }
  return byName;
}

function runAll(benches: readonly [string, string][]): number {
  const outDir = join(root, "bench-results");
  mkdirSync(outDir, { recursive: true });
  let failed = 0;
  for (const [name, file] of benches) {
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
  return failed === 0 ? 0 : 1;
}

function main(only: string | undefined): number {
  let all: Map<string, string>;
  try {
    all = benchFiles();
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    return 2;
  }
  if (only === "--list") {
    process.stdout.write([...all.keys()].sort().join("\n") + "\n");
    return 0;
  }
  if (only === undefined) return runAll([...all]);
  const file = all.get(only);
  if (file === undefined) {
    process.stderr.write(
      `bench: no benchmark named ${JSON.stringify(only)}; one of: ${[...all.keys()].sort().join(", ")}\n`,
    );
    return 2;
  }
  return runAll([[only, file]]);
}

process.exit(main(process.argv[2]));
