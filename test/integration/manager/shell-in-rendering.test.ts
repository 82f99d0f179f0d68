/**
 * spec.override.enableShellInRendering lets a repository run code while it is rendered (exec KRM
 * functions). A RepoSync is a tenant's: the manager refuses it there unless its administrator
 * allows it with --allow-reposync-shell-in-rendering. RootSyncs are admin-owned and keep it.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod } from "node:fs/promises";
import { join } from "node:path";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  conditionOf,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerPids,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
  type ManagerScope,
} from "./helpers.ts";

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);

/** A kustomization whose ConfigMap comes from an exec function: the repository's own shell script. */
async function execRepo(t: TestContext, namespace: string): Promise<{ repo: TestRepo; commit: string }> {
  const repo = await TestRepo.create(t);
  await repo.write("config/kustomization.yaml", yaml({ namespace, generators: ["gen.yaml"] }));
  await repo.write(
    "config/gen.yaml",
    yaml({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "gen", annotations: { "config.kubernetes.io/function": "exec:\n  path: ./gen.sh\n" } },
    }),
  );
  await repo.write(
    "config/gen.sh",
    "#!/bin/sh\nprintf 'apiVersion: config.kubernetes.io/v1\\nkind: ResourceList\\nitems:\\n- apiVersion: v1\\n  kind: ConfigMap\\n  metadata:\\n    name: from-exec\\n  data:\\n    ran: \"yes\"\\n'\n",
  );
  await chmod(join(repo.work, "config", "gen.sh"), 0o755);
  return { repo, commit: await repo.commit("exec function") };
}

function repoSyncWithShell(namespace: string, scope: ManagerScope, repo: TestRepo) {
  const obj = repoSyncObject(namespace, "repo-sync", scope, { repo: repo.url, branch: repo.branch, dir: "config" });
  return { ...obj, spec: { ...(obj["spec"] as object), override: { enableShellInRendering: true } } };
}

test("a RepoSync asking for a shell in rendering is refused on its status (KNV1061) and gets no reconciler; a RootSync keeps it", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "shell");
  await grantRepoSyncReconciler(namespace);
  const { repo } = await execRepo(t, namespace);
  await createSync(t, repoSyncWithShell(namespace, manager.scope, repo));

  const stalled = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RepoSync", namespace, "repo-sync"), "Stalled");
      return condition?.status === "True" ? condition : undefined;
    },
    { what: "the RepoSync Stalled" },
  );
  assert.equal(stalled.reason, "Validation");
  assert.match(
    stalled.message ?? "",
    /^KNV1061: [\s\S]*enableShellInRendering[\s\S]*--allow-reposync-shell-in-rendering/,
  );
  assert.deepEqual(await reconcilerPids(manager.scope, "repo-sync"), []);
  assert.equal(await getObject(Mapping.ConfigMap, namespace, "from-exec"), undefined);

  // An administrator's RootSync asking for the same is honoured: its exec function runs.
  const rootTarget = await createNamespace(t, "shell-root");
  const root = await execRepo(t, rootTarget);
  const rootName = `root-shell-${suffix()}`;
  const rootSync = rootSyncObject(
    rootName,
    manager.scope,
    { repo: root.repo.url, branch: root.repo.branch, dir: "config" },
    {},
    { enableShellInRendering: true },
  );
  await createSync(t, rootSync);
  await synced("RootSync", systemNamespace, rootName, root.commit, 90_000);
  assert.deepEqual((await getObject(Mapping.ConfigMap, rootTarget, "from-exec"))?.["data"], { ran: "yes" });
});

test("with --allow-reposync-shell-in-rendering the same RepoSync renders with its exec function", async (t) => {
  const manager = await startManager(t, { extraArgs: ["--allow-reposync-shell-in-rendering"] });
  const namespace = await createNamespace(t, "shell-ok");
  await grantRepoSyncReconciler(namespace);
  const { repo, commit } = await execRepo(t, namespace);
  await createSync(t, repoSyncWithShell(namespace, manager.scope, repo));
  await synced("RepoSync", namespace, "repo-sync", commit, 90_000);
  const made = await getObject(Mapping.ConfigMap, namespace, "from-exec");
  assert.deepEqual(made?.["data"], { ran: "yes" });
});

test("a running RepoSync switched to enableShellInRendering is refused, and its reconciler runs none of the repository's code", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "shell-late");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  // The exec function leaves a mark on the host, had it run (process mode: the reconciler's own machine).
  const mark = join(repo.work, "..", "exec-ran");
  await repo.write("config/kustomization.yaml", yaml({ namespace, generators: ["gen.yaml"] }));
  await repo.write(
    "config/gen.yaml",
    yaml({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "gen", annotations: { "config.kubernetes.io/function": "exec:\n  path: ./gen.sh\n" } },
    }),
  );
  await repo.write(
    "config/gen.sh",
    `#!/bin/sh\ntouch ${mark}\nprintf 'kind: ResourceList\\napiVersion: config.kubernetes.io/v1\\nitems: []\\n'\n`,
  );
  await chmod(join(repo.work, "config", "gen.sh"), 0o755);
  await repo.commit("exec function");
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch, dir: "config" }),
  );
  // Without the setting the render fails (no exec functions), but the reconciler runs.
  await eventually(async () => (await reconcilerPids(manager.scope, "repo-sync")).length === 1, {
    what: "the RepoSync's reconciler running",
  });
  const client = await admin();
  await client.patch(
    Mapping.RepoSync,
    namespace,
    "repo-sync",
    { spec: { override: { enableShellInRendering: true } } },
    "merge",
  );
  // The reconciler, which reads its RepoSync on every pass, refuses too: the manager's word is not trusted alone.
  const rendering = await eventually(
    async () => {
      const sync = await getSync("RepoSync", namespace, "repo-sync");
      const r = (sync?.["status"] as { rendering?: { errors?: { errorMessage: string }[] } } | undefined)?.rendering;
      const message = r?.errors?.[0]?.errorMessage ?? "";
      return /KNV1061/.test(message) ? message : undefined;
    },
    { what: "the reconciler refusing the shell in status.rendering", timeoutMs: 60_000 },
  );
  assert.match(rendering, /enableShellInRendering/);
  const stalled = conditionOf(await getSync("RepoSync", namespace, "repo-sync"), "Stalled");
  assert.equal(stalled?.status, "True");
  assert.equal(existsSync(mark), false, "the repository's exec function ran");
});
