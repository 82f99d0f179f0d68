/**
 * A Git server over HTTPS with a private CA, as Config Sync's e2e TestCACertSecretRef and TestNoSSLVerify use one:
 * without the CA the fetch is a KNV2004 source error, spec.git.caCertSecretRef or spec.git.noSSLVerify lets it
 * through, and taking either back out brings the error back.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { selfSignedCert, startGitHttpServer } from "@driftless/git/testing";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  removeAfter,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
  updateRootSyncSpec,
  rootSyncSecret,
} from "../../support/index.ts";

function untrusted(name: string): Promise<JsonObject> {
  return eventually(
    async () => {
      const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
      return ((source?.["errors"] ?? []) as JsonObject[]).find((e) =>
        String(e["errorMessage"]).includes("spec.git.caCertSecretRef"),
      );
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report the untrusted certificate` },
  );
}

test("git over HTTPS: an untrusted certificate is KNV2004 on status.source; caCertSecretRef or noSSLVerify syncs, and removing either brings the error back", async (t) => {
  const repo = await TestRepo.create(t);
  const namespace = `git-tls-${suffix()}`;
  await coreApi().createNamespace({ body: { metadata: { name: namespace } } });
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  const configMap = (v: string): string =>
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "tls", namespace }, data: { v } });
  await repo.write("config/cm.yaml", configMap("1"));
  const first = await repo.commit("first");
  const certDir = await mkdtemp(join(tmpdir(), "driftless-git-tls-"));
  removeAfter(t, certDir);
  const tls = await selfSignedCert(certDir);
  const server = await startGitHttpServer({ projectRoot: dirname(repo.remote), tls });
  t.after(() => server.close());

  const name = `git-tls-${suffix()}`;
  const ca = `git-ca-${suffix()}`;
  await createRootSync(name, repo, {
    spec: { git: { repo: server.url("remote.git"), branch: repo.branch, dir: "config", auth: "none" } },
  });
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined),
  );
  await rootSyncSecret(t, ca, { cert: tls.cert });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  assert.equal((await untrusted(name))["code"], "2004");

  const git = (change: JsonObject): Promise<void> =>
    updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), ...change } }));
  await git({ caCertSecretRef: { name: ca } });
  await rootSynced(name, first);

  // Back out of the CA with Config Sync's e2e's patch (an empty name), and a commit the server now holds.
  await repo.write("config/cm.yaml", configMap("2"));
  const second = await repo.commit("second");
  await git({ caCertSecretRef: { name: "" } });
  assert.equal((await untrusted(name))["code"], "2004");
  assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], first);

  await git({ noSSLVerify: true });
  await rootSynced(name, second);

  await repo.write("config/cm.yaml", configMap("3"));
  await repo.commit("third");
  await git({ noSSLVerify: false });
  assert.equal((await untrusted(name))["code"], "2004");
  assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], second);
});
