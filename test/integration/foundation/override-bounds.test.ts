/**
 * The bounds Config Sync's CRDs put on spec.override numbers, which its e2e TestOverrideRootSyncLogLevel reads back
 * from the API server's refusal: a logLevel from 0 to 10, and no negative gitSyncDepth.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KubeApiError, KubeClient, type KubeObject } from "@driftless/kube";
import { testEnv } from "../../support/env.ts";
import { suffix, testNamespace } from "../../support/kube.ts";

const kinds = [
  { kind: "RootSync", resource: "rootsyncs" },
  { kind: "RepoSync", resource: "reposyncs" },
] as const;

async function refusal(client: KubeClient, obj: KubeObject, resource: string): Promise<string | undefined> {
  const version = obj.apiVersion.split("/")[1] ?? "";
  const mapping = { group: "configsync.gke.io", version, kind: obj.kind, resource, namespaced: true, verbs: [] };
  try {
    await client.create(mapping, obj);
    return undefined;
  } catch (error) {
    if (error instanceof KubeApiError) return error.serverMessage;
    throw error;
  }
}

test("override.logLevels above 10 or below 0 and a negative override.gitSyncDepth are refused by both CRDs in both versions, in the API server's words Config Sync's e2e expects", async (t) => {
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  const namespace = await testNamespace(t, "bounds");
  const cases = [
    [
      { logLevels: [{ containerName: "reconciler", logLevel: 13 }] },
      "logLevel in body should be less than or equal to 10",
    ],
    [
      { logLevels: [{ containerName: "reconciler", logLevel: -3 }] },
      "logLevel in body should be greater than or equal to 0",
    ],
    [{ gitSyncDepth: -1 }, "gitSyncDepth in body should be greater than or equal to 0"],
  ] as const;
  for (const version of ["v1beta1", "v1alpha1"]) {
    for (const { kind, resource } of kinds) {
      // A RootSync outside config-management-system is stored (and reported Stalled): the schema is what refuses.
      const obj = (override: object): KubeObject => ({
        apiVersion: `configsync.gke.io/${version}`,
        kind,
        metadata: { name: `bounds-${suffix()}`, namespace },
        spec: { git: { repo: "https://git.example.com/config.git", auth: "none" }, override },
      });
      for (const [override, words] of cases) {
        const message = await refusal(client, obj(override), resource);
        assert.ok(message?.includes(words), `${kind} ${version} ${JSON.stringify(override)}: ${String(message)}`);
      }
      assert.equal(
        await refusal(
          client,
          obj({ logLevels: [{ containerName: "reconciler", logLevel: 10 }], gitSyncDepth: 0 }),
          resource,
        ),
        undefined,
        `${kind} ${version}: the bounds themselves are accepted`,
      );
    }
  }
});
