/**
 * A source that would exhaust the reconciler (YAML aliases that expand a megabyte a hundredfold, JSON
 * nested thousands deep) is refused file by file, with the path on status, before anything is applied
 * or pruned; the reconciler carries on and syncs the next good commit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

function configMap(namespace: string, name: string): unknown {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { k: name } };
}

/** A ConfigMap with one anchored value of `size` characters and `aliases` aliases of it. */
function aliasedConfigMap(namespace: string, name: string, size: number, aliases: number): string {
  let text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n`;
  text += `  v0: &value "${"x".repeat(size)}"\n`;
  for (let i = 1; i <= aliases; i++) text += `  v${i}: *value\n`;
  return text;
}

async function configMapExists(namespace: string, name: string): Promise<boolean> {
  try {
    await coreApi().readNamespacedConfigMap({ namespace, name });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

/** `status.source.errors` once the RootSync reports some for `commit`. */
function sourceErrorsAt(name: string, commit: string): Promise<JsonObject[]> {
  return eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      const errors = source["errors"];
      return source["commit"] === commit && Array.isArray(errors) && errors.length > 0
        ? (errors as JsonObject[])
        : undefined;
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report source errors at ${commit.slice(0, 7)}` },
  );
}

test("an alias bomb and a too-deep file are reported as KNV1006 with their paths, nothing is deleted, and the next good commit syncs", async (t) => {
  const namespace = await testNamespace(t, "bounded");
  const name = `bounded-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/kept.yaml", json(configMap(namespace, "kept")));
  await repo.write("config/removed.yaml", json(configMap(namespace, "removed")));
  const first = await repo.commit("two config maps");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // 1.1 MB aliased 99 times: ~104 MiB once written out, for one 1.1 MB file.
  await repo.remove("config/removed.yaml");
  await repo.write("config/bomb.yaml", aliasedConfigMap(namespace, "bomb", 1_100_000, 99));
  const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
  await repo.write("config/deep.json", json(configMap(namespace, "deep")).replace('{"k":"deep"}', deep));
  const bad = await repo.commit("an alias bomb, a deep file, and one config map fewer");
  const errors = await sourceErrorsAt(name, bad);
  assert.deepEqual(
    errors.map((e) => [e["code"], String(e["errorMessage"]).split(": ")[1]]),
    [
      ["1006", "bomb.yaml"],
      ["1006", "deep.json"],
    ],
  );
  assert.match(
    String(errors[0]?.["errorMessage"]),
    /^KNV1006: bomb\.yaml: YAML aliases expand this file by 103\.9 MiB, over the limit of 1 MiB/,
  );
  assert.match(
    String(errors[1]?.["errorMessage"]),
    /^KNV1006: deep\.json: nested deeper than the limit of 100 levels\n\nFor more information, see https:\/\/g\.co\/cloud\/acm-errors#knv1006$/,
  );
  // A source that failed to read stops the pass before apply and prune.
  assert.equal(await configMapExists(namespace, "removed"), true, "an object was pruned from a source that failed");
  assert.equal(await configMapExists(namespace, "kept"), true);
  assert.equal(await configMapExists(namespace, "bomb"), false);
  assert.notEqual((await rootSyncStatus(name))["lastSyncedCommit"], bad);

  await repo.remove("config/deep.json");
  await repo.write("config/bomb.yaml", aliasedConfigMap(namespace, "bomb", 100, 3));
  const fixed = await repo.commit("the aliases of a small value");
  await rootSynced(name, fixed);
  const bomb = await coreApi().readNamespacedConfigMap({ namespace, name: "bomb" });
  assert.equal(bomb.data?.["v3"], "x".repeat(100));
  await eventually(async () => !(await configMapExists(namespace, "removed")), {
    what: "the config map removed from Git to be pruned once the source reads",
  });
});
