/**
 * auth ssh against a real OpenSSH server on loopback, as Config Sync's e2e TestRootSyncSSHKnownHost: a Secret without
 * known_hosts checks no host key, one with the server's key syncs, and an invalid one is KNV2004 in ssh's words, read
 * as soon as the Secret changes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKey, hasSshd, startSshd } from "../../../packages/git/src/testing/sshd.ts";
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
  rootSyncSecret,
} from "../../support/index.ts";

const skip = !(await hasSshd()) && process.env["CI"] === undefined ? "sshd is not installed" : false;

test(
  "auth ssh: no known_hosts checks no host key, the server's key syncs, and an invalid known_hosts is KNV2004 'No ED25519 host key is known' as soon as the Secret changes, with spec.git.period at 1h",
  { skip },
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "driftless-sshd-"));
    removeAfter(t, dir);
    const key = await generateKey(dir, "deploy");
    const sshd = await startSshd(dir, [key.publicKey]);
    t.after(() => sshd.close());
    const repo = await TestRepo.create(t);
    const namespace = `ssh-hosts-${suffix()}`;
    await coreApi().createNamespace({ body: { metadata: { name: namespace } } });
    t.after(() =>
      coreApi()
        .deleteNamespace({ name: namespace })
        .catch(() => undefined),
    );
    const configMap = (v: string): string =>
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ssh", namespace }, data: { v } });
    await repo.write("config/cm.yaml", configMap("1"));
    const first = await repo.commit("first");

    const name = `ssh-hosts-${suffix()}`;
    const secret = `git-ssh-${suffix()}`;
    await createRootSync(name, repo, {
      spec: {
        git: {
          repo: sshd.url(repo.remote),
          branch: repo.branch,
          dir: "config",
          auth: "ssh",
          secretRef: { name: secret },
          period: "1h",
        },
      },
    });
    t.after(() =>
      customApi()
        .deleteNamespacedCustomObject({ ...rootSyncs, name })
        .catch(() => undefined),
    );
    await rootSyncSecret(t, secret, { ssh: key.privateKey });
    await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
    await rootSynced(name, first);

    const knownHosts = (value: string): Promise<unknown> =>
      coreApi().replaceNamespacedSecret({
        namespace: rootSyncNamespace,
        name: secret,
        body: { metadata: { name: secret }, stringData: { ssh: key.privateKey, known_hosts: value } },
      });
    await repo.write("config/cm.yaml", configMap("2"));
    const second = await repo.commit("second");
    await knownHosts(sshd.knownHostsLine);
    await rootSynced(name, second);

    await knownHosts("invalid value");
    const error = await eventually(
      async () => {
        const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
        return ((source?.["errors"] ?? []) as JsonObject[]).find((e) =>
          String(e["errorMessage"]).includes("No ED25519 host key is known"),
        );
      },
      { timeoutMs: 60_000, what: `RootSync ${name} to report the unknown host key` },
    );
    assert.equal(error["code"], "2004");
    assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], second);
  },
);
