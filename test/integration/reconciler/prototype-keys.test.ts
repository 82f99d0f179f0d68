import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:https";
import type { RequestOptions } from "node:https";
import {
  createRepoSync,
  eventually,
  kubeConfig,
  type JsonObject,
  repoSyncStatus,
  startReconciler,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

/** Resolves once status says `commit` is synced with no errors. */
function synced(namespace: string, commit: string): Promise<JsonObject> {
  return eventually(
    async () => {
      const status = await repoSyncStatus(namespace);
      const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
      return status["lastSyncedCommit"] === commit && syncing?.["status"] === "False" && syncing["commit"] === commit
        ? status
        : undefined;
    },
    { what: `commit ${commit.slice(0, 7)} synced` },
  );
}

/**
 * The ConfigMap's data as the API server's JSON says it, read with a plain HTTPS GET: a typed client
 * copies maps by assignment, which would turn a `__proto__` key into a prototype.
 */
async function liveData(namespace: string, name: string): Promise<[string, unknown][]> {
  const kc = kubeConfig();
  const server = new URL(kc.getCurrentCluster()?.server ?? "");
  const options: RequestOptions = {
    method: "GET",
    hostname: server.hostname,
    port: server.port,
    path: `/api/v1/namespaces/${namespace}/configmaps/${name}`,
  };
  await kc.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(`GET ${options.path}: HTTP ${res.statusCode}: ${body}`));
      });
    });
    req.on("error", reject);
    req.end();
  });
  const data = (JSON.parse(text) as JsonObject)["data"] ?? {};
  return Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A ConfigMap in YAML, as a repository holds it; `data` entries in the given order. */
function configMapYaml(name: string, data: readonly [string, string][]): string {
  const lines = data.map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`);
  return ["apiVersion: v1", "kind: ConfigMap", "metadata:", `  name: ${name}`, "data:", ...lines, ""].join("\n");
}

const keys = ["toString", "constructor", "__proto__"] as const;
const withKeys = (value: string): [string, string][] => [
  ["plain", "1"],
  ...keys.map((k): [string, string] => [k, `${k}-${value}`]),
];
const sorted = (entries: [string, string][]): [string, string][] =>
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

test("data keys named like Object.prototype members (toString, constructor, __proto__) are created, changed and removed as Git says", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/changed.yaml", configMapYaml("changed", withKeys("1")));
  await repo.write("config/removed.yaml", configMapYaml("removed", withKeys("1")));
  const first = await repo.commit("declare the keys");
  await createRepoSync(namespace, repo, { git: { period: "15s" } });
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, first);
  assert.deepEqual(await liveData(namespace, "changed"), sorted(withKeys("1")));
  assert.deepEqual(await liveData(namespace, "removed"), sorted(withKeys("1")));

  await repo.write("config/changed.yaml", configMapYaml("changed", withKeys("2")));
  await repo.write("config/removed.yaml", configMapYaml("removed", [["plain", "1"]]));
  const second = await repo.commit("change the keys in one, remove them from the other");
  await synced(namespace, second);
  assert.deepEqual(
    { changed: await liveData(namespace, "changed"), removed: await liveData(namespace, "removed") },
    { changed: sorted(withKeys("2")), removed: [["plain", "1"]] },
    "changed values are written and keys dropped from Git are removed from the live object",
  );
});
