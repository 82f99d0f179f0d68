/**
 * Timings for the numbers that matter to a reconciler: an unchanged poll, the first fetch of a
 * large repository, and a poll after a one-file change, over file:// and over smart HTTP.
 *
 *   node packages/git/src/fetch.bench.ts [files=10000] [rounds=20]
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GitFetcher } from "./fetcher.ts";
import { git, SourceRepo, tempDir } from "./testing/git-fixture.ts";
import { startGitHttpServer } from "./testing/git-http-server.ts";

const fileCount = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 20);

async function time<T>(task: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await task();
  return { ms: performance.now() - started, value };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const root = await tempDir("bench");
const server = await startGitHttpServer({ projectRoot: root.path, username: "bench", token: "bench-token" });
try {
  const source = await SourceRepo.create(root.path);
  for (let i = 0; i < fileCount; i++) {
    const dir = join(source.work, "config", `team-${String(i % 100)}`);
    if (i < 100) await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, `cm-${String(i)}.yaml`),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${String(i)}\ndata:\n  n: "${String(i)}"\n`,
    );
  }
  await git(source.work, "add", "--all");
  await git(source.work, "commit", "--quiet", "-m", "many files");
  await source.push("master");

  const transports = [
    { name: "file://", spec: { repo: source.fileUrl, dir: "config" }, credentials: undefined },
    {
      name: "http (Basic auth)",
      spec: { repo: server.url("remote.git"), dir: "config" },
      credentials: { auth: "token", username: "bench", token: "bench-token" } as const,
    },
  ];
  console.log(`${String(fileCount)} files, median of ${String(rounds)} rounds where repeated`);
  for (const [index, transport] of transports.entries()) {
    const fetcher = new GitFetcher({ cacheDir: join(root.path, `cache-${String(index)}`), allowFileTransport: true });
    const request = { syncKey: "bench", spec: transport.spec, credentials: transport.credentials };

    const first = await time(() => fetcher.fetch(request));
    const polls: number[] = [];
    const resolves: number[] = [];
    for (let round = 0; round < rounds; round++) {
      polls.push((await time(() => fetcher.fetch(request))).ms);
      resolves.push((await time(() => fetcher.resolveRemote(request))).ms);
    }
    const changes: number[] = [];
    for (let round = 0; round < Math.min(rounds, 5); round++) {
      await source.commit({ [`config/team-0/cm-0.yaml`]: `changed ${String(round)}\n` });
      await source.push("master");
      const changed = await time(() => fetcher.fetch(request));
      if (!changed.value.fetched) throw new Error("expected a fetch");
      changes.push(changed.ms);
    }
    console.log(
      [
        `${transport.name}:`,
        `  first fetch + checkout: ${first.ms.toFixed(0)} ms`,
        `  resolveRemote (ls-remote): ${median(resolves).toFixed(1)} ms`,
        `  fetch, unchanged remote: ${median(polls).toFixed(1)} ms`,
        `  fetch after a one-file change (fetch + incremental checkout): ${median(changes).toFixed(0)} ms`,
      ].join("\n"),
    );
  }
} finally {
  await server.close();
  await root.remove();
}
