import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { basename, dirname } from "node:path";
import { promisify } from "node:util";
import { startGitHttpServer } from "@driftless/git/testing";
import {
  coreApi,
  createRepoSync as createTestRepoSync,
  customApi,
  eventually,
  type JsonObject,
  repoSyncStatus,
  startReconciler,
  statusCode,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const execFileAsync = promisify(execFile);

const repoSyncs = (namespace: string) => ({
  group: "configsync.gke.io",
  version: "v1beta1",
  namespace,
  plural: "reposyncs",
});

function configMap(
  name: string,
  namespace: string | undefined,
  data: Record<string, string>,
  annotations: Record<string, string> = {},
): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, ...(namespace ? { namespace } : {}), annotations },
    data,
  });
}

/** The RepoSync of these tests, polling every 15 s (startReconciler polls faster in-process). */
function createRepoSync(namespace: string, repo: TestRepo, annotations: Record<string, string> = {}): Promise<void> {
  return createTestRepoSync(namespace, repo, { annotations, git: { period: "15s" } });
}

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

async function readConfigMap(namespace: string, name: string): Promise<JsonObject | undefined> {
  try {
    return (await coreApi().readNamespacedConfigMap({ namespace, name })) as unknown as JsonObject;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

/**
 * Resolves with `status.source.errors` once the RepoSync reports some (for `commit`, when given):
 * how a test waits for a failed pass to be reported.
 */
function sourceErrors(namespace: string, commit?: string): Promise<JsonObject[]> {
  return eventually(
    async () => {
      const source = ((await repoSyncStatus(namespace))["source"] ?? {}) as JsonObject;
      const errors = source["errors"];
      const forCommit = commit === undefined || source["commit"] === commit;
      return forCommit && Array.isArray(errors) && errors.length > 0 ? (errors as JsonObject[]) : undefined;
    },
    { what: `source errors on the RepoSync in ${namespace}` },
  );
}

/** Reasons of the Events recorded on the namespace's RepoSync. */
async function eventReasons(namespace: string): Promise<string[]> {
  const events = await coreApi().listNamespacedEvent({ namespace });
  return events.items
    .filter((e) => e.involvedObject.kind === "RepoSync" && e.involvedObject.name === "repo-sync")
    .map((e) => e.reason ?? "");
}

const dataOf = (cm: JsonObject | undefined): unknown => cm?.["data"];
const annotationsOf = (cm: JsonObject | undefined): Record<string, string> =>
  ((cm?.["metadata"] as JsonObject | undefined)?.["annotations"] ?? {}) as Record<string, string>;

test("creates objects from a commit, updates them on a new commit and prunes a removed file", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", undefined, { color: "blue" }));
  await repo.write("config/b.yaml", configMap("b", namespace, { size: "1" }));
  const first = await repo.commit("two config maps");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });

  const status = await synced(namespace, first);
  assert.equal(status["reconciler"], `ns-reconciler-${namespace}`);
  const a = await readConfigMap(namespace, "a");
  assert.deepEqual(
    dataOf(a),
    { color: "blue" },
    "a namespaced object without a namespace lands in the RepoSync's namespace",
  );
  assert.equal(annotationsOf(a)["configsync.gke.io/manager"], namespace);
  assert.equal(annotationsOf(a)["config.k8s.io/owning-inventory"], `${namespace}_repo-sync`);
  // From the repository root, spec.git.dir included, as Config Sync writes it.
  assert.equal(annotationsOf(a)["configmanagement.gke.io/source-path"], "config/a.yaml");
  assert.equal(annotationsOf(a)["configmanagement.gke.io/token"], first);
  assert.equal(
    ((a?.["metadata"] as JsonObject)["labels"] as Record<string, string>)["app.kubernetes.io/managed-by"],
    "configmanagement.gke.io",
  );

  await repo.write("config/a.yaml", configMap("a", undefined, { color: "green" }));
  await repo.remove("config/b.yaml");
  const second = await repo.commit("change a, remove b");
  await synced(namespace, second);
  assert.deepEqual(dataOf(await readConfigMap(namespace, "a")), { color: "green" });
  await eventually(async () => (await readConfigMap(namespace, "b")) === undefined, { what: "b pruned" });

  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace,
    plural: "resourcegroups",
    name: "repo-sync",
  })) as JsonObject;
  assert.deepEqual((group["spec"] as JsonObject)["resources"], [
    { group: "", kind: "ConfigMap", namespace, name: "a" },
  ]);
});

test("a pass over unchanged Git and an unchanged cluster makes no write request", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  for (let i = 0; i < 20; i++)
    await repo.write(`config/cm-${i}.yaml`, configMap(`cm-${i}`, namespace, { i: String(i) }));
  const commit = await repo.commit("twenty config maps");
  await createRepoSync(namespace, repo);
  // resyncPeriodMs 0: every poll is a full pass (read, plan, three-way match of every object).
  const reconciler = await startReconciler(
    t,
    { kind: "RepoSync", namespace, name: "repo-sync" },
    { resyncPeriodMs: 0 },
  );
  await synced(namespace, commit);

  // Let the first passes' trailing writes (status, inventory status) settle, then count from here.
  const passesBefore = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passesBefore + 1, { what: "one more pass" });
  const writesBefore = reconciler.client.requests.writes();
  const readsBefore = reconciler.client.requests.total() - writesBefore;
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { what: "three more passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "an unchanged pass wrote to the API server");
  const readsPerPass =
    (reconciler.client.requests.total() - writesBefore - readsBefore) / (reconciler.passCount - base);
  assert.ok(
    readsPerPass < 20,
    `a pass read each object from the API server (${readsPerPass} requests per pass for 20 objects); it should read the watch cache`,
  );
});

test("corrects drift: a changed or deleted managed object is restored", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  const commit = await repo.commit("a");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, commit);

  const live = (await readConfigMap(namespace, "a")) as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: { ...live, data: { color: "red", extra: "x" } } as never,
  });
  // Three-way: the declared key is restored, the key someone else added (never ours) is left alone.
  await eventually(
    async () =>
      JSON.stringify(dataOf(await readConfigMap(namespace, "a"))) === JSON.stringify({ color: "blue", extra: "x" }),
    {
      timeoutMs: 10_000,
      what: "the declared value restored",
    },
  );
  await coreApi().deleteNamespacedConfigMap({ namespace, name: "a" });
  await eventually(async () => (await readConfigMap(namespace, "a")) !== undefined, {
    timeoutMs: 10_000,
    what: "the deleted object re-created",
  });
});

test("a bulk commit still corrects what others change while it applies (its own watch pauses while it writes)", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  const count = 400;
  for (let i = 0; i < count; i++)
    await repo.write(`config/cm-${i}.yaml`, configMap(`cm-${i}`, namespace, { n: String(i) }));
  const commit = await repo.commit(`${count} config maps`);
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  // While the pass writes ConfigMaps unwatched (it still runs, on most runs): someone edits one object
  // and deletes another that the pass has already written.
  await eventually(async () => (await readConfigMap(namespace, "cm-300")) !== undefined, {
    intervalMs: 20,
    what: "cm-300 created",
  });
  const early = (await readConfigMap(namespace, "cm-0")) as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "cm-0",
    body: { ...early, data: { n: "tampered" } } as never,
  });
  await coreApi().deleteNamespacedConfigMap({ namespace, name: "cm-1" });
  await synced(namespace, commit);
  await eventually(
    async () => (dataOf(await readConfigMap(namespace, "cm-0")) as JsonObject | undefined)?.["n"] === "0",
    {
      timeoutMs: 15_000,
      what: "the edited object restored",
    },
  );
  await eventually(async () => (await readConfigMap(namespace, "cm-1")) !== undefined, {
    timeoutMs: 15_000,
    what: "the deleted object re-created",
  });
});

test("reports invalid YAML on status with its file and deletes nothing", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  const good = await repo.commit("a");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, good);

  await repo.remove("config/a.yaml");
  await repo.write("config/broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n");
  const bad = await repo.commit("broken yaml, a removed");
  const status = await eventually(
    async () => {
      const s = await repoSyncStatus(namespace);
      const source = (s["source"] ?? {}) as JsonObject;
      return source["commit"] === bad && Array.isArray(source["errors"]) && source["errors"].length > 0 ? s : undefined;
    },
    { what: "source errors on status" },
  );
  const errors = (status["source"] as JsonObject)["errors"] as JsonObject[];
  assert.equal(errors[0]?.["code"], "1006");
  assert.match(String(errors[0]?.["errorMessage"]), /broken\.yaml/);
  assert.equal(status["lastSyncedCommit"], good, "lastSyncedCommit moved to a commit that failed");
  await eventually(async () => (await eventReasons(namespace)).includes("SyncFailed"), { what: "a SyncFailed event" });
  assert.ok(
    (await readConfigMap(namespace, "a")) !== undefined,
    "an object was pruned although the source failed to read",
  );
});

test("refuses to prune everything when the source suddenly becomes empty (KNV2006)", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  await repo.commit("a");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => (await readConfigMap(namespace, "a")) !== undefined, { what: "a created" });

  await repo.remove("config/a.yaml");
  await repo.write("config/README.md", "nothing here\n");
  const empty = await repo.commit("empty");
  assert.equal((await sourceErrors(namespace, empty))[0]?.["code"], "2006");
  assert.ok((await readConfigMap(namespace, "a")) !== undefined, "the guard let everything be pruned");
});

test("a RepoSync is confined to its namespace: an object for another namespace is an error and nothing is applied", async (t) => {
  const namespace = await testNamespace(t);
  const other = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/mine.yaml", configMap("mine", namespace, { a: "1" }));
  await repo.write("config/theirs.yaml", configMap("theirs", other, { a: "1" }));
  const commit = await repo.commit("cross-namespace");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  const [error] = await sourceErrors(namespace, commit);
  assert.equal(error?.["code"], "1058");
  // Config Sync's words, then the object as it prints it.
  assert.ok(
    String(error?.["errorMessage"]).startsWith(
      `KNV1058: Resources in the "${namespace}" repo must either omit metadata.namespace or declare metadata.namespace="${namespace}"` +
        `\n\nsource: config/theirs.yaml\nnamespace: ${other}\nmetadata.name: theirs\n`,
    ),
    String(error?.["errorMessage"]),
  );
  assert.equal(await readConfigMap(other, "theirs"), undefined);
  assert.equal(await readConfigMap(namespace, "mine"), undefined, "part of a failed source was applied");
});

test("an unreachable repository is reported on status as KNV2004", async (t) => {
  const namespace = await testNamespace(t);
  await customApi().createNamespacedCustomObject({
    ...repoSyncs(namespace),
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: `file:///nonexistent/${namespace}.git`, branch: "main", auth: "none" },
      },
    },
  });
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  const [error] = await sourceErrors(namespace);
  assert.equal(error?.["code"], "2004");
  const status = await repoSyncStatus(namespace);
  const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.equal(syncing?.["status"], "False");
  assert.equal(syncing?.["reason"], "Source");
});

/** The Secret `git-creds` a token-auth RepoSync names: user `deploy` and `token`. */
function tokenSecret(
  namespace: string,
  token: string,
): { metadata: { name: string; namespace: string }; data: Record<string, string> } {
  return {
    metadata: { name: "git-creds", namespace },
    data: { username: Buffer.from("deploy").toString("base64"), token: Buffer.from(token).toString("base64") },
  };
}

/** A RepoSync `repo-sync` following `url`'s main branch, config/, with token auth from the Secret `git-creds`. */
async function createTokenRepoSync(namespace: string, url: string): Promise<void> {
  await customApi().createNamespacedCustomObject({
    ...repoSyncs(namespace),
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: url, branch: "main", dir: "config", auth: "token", secretRef: { name: "git-creds" } },
      },
    },
  });
}

test("wrong credentials are reported on status (KNV2004) and nothing is deleted", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  const commit = await repo.commit("a");
  const server = await startGitHttpServer({
    projectRoot: dirname(repo.remote),
    username: "deploy",
    token: "right-token",
  });
  t.after(() => server.close());
  const secret = (token: string) => tokenSecret(namespace, token);
  await coreApi().createNamespacedSecret({ namespace, body: secret("right-token") });
  await createTokenRepoSync(namespace, server.url(basename(repo.remote)));
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, commit);

  await coreApi().replaceNamespacedSecret({ namespace, name: "git-creds", body: secret("wrong-token") });
  // A pass that read the right token before the change may still be running: wait until one fails.
  await sourceErrors(namespace);
  await repo.remove("config/a.yaml");
  await repo.write("config/b.yaml", configMap("b", namespace, { color: "red" }));
  await repo.commit("would prune a");
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 2, { what: "two passes after the commit" });
  const status = await sourceErrors(namespace);
  assert.equal(status[0]?.["code"], "2004");
  assert.match(String(status[0]?.["errorMessage"]), /credential|authenticat|401/i);
  assert.doesNotMatch(JSON.stringify(status), /wrong-token|right-token/, "a token leaked into status");
  assert.ok((await readConfigMap(namespace, "a")) !== undefined, "an object was pruned although the fetch failed");
  assert.equal(await readConfigMap(namespace, "b"), undefined);
});

test("a Secret the spec names that does not exist is KNV1061 'Secret … not found', as Config Sync says, and the sync goes on once it exists", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  const commit = await repo.commit("a");
  const server = await startGitHttpServer({ projectRoot: dirname(repo.remote), username: "deploy", token: "t0ken" });
  t.after(() => server.close());
  await createTokenRepoSync(namespace, server.url(basename(repo.remote)));
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  const [missing] = await sourceErrors(namespace);
  assert.equal(missing?.["code"], "1061");
  // Config Sync's e2e waits for "KNV1061: Secret git-creds not found: create one to allow client authentication".
  assert.ok(
    String(missing?.["errorMessage"]).startsWith(
      `KNV1061: Secret git-creds not found: create one to allow client authentication (named by spec.git.secretRef, in namespace ${namespace})`,
    ),
    String(missing?.["errorMessage"]),
  );

  await coreApi().createNamespacedSecret({ namespace, body: tokenSecret(namespace, "t0ken") });
  await synced(namespace, commit);
});

test("an object another writer keeps changing raises a fight (KNV2005) instead of a correction loop", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  await repo.write("config/barrier.yaml", configMap("barrier", namespace, { b: "1" }));
  const commit = await repo.commit("a");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, commit);

  // Another controller sets its own value again every time we restore ours.
  let fought = false;
  for (let round = 0; round < 10 && !fought; round++) {
    const live = (await readConfigMap(namespace, "a")) as JsonObject;
    await coreApi().replaceNamespacedConfigMap({
      namespace,
      name: "a",
      body: { ...live, data: { color: `other-${round}` } } as never,
    });
    fought = await eventually(
      async () => {
        const status = await repoSyncStatus(namespace);
        const errors = ((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
        if (errors.some((e) => e["code"] === "2005")) return "fight";
        return (dataOf(await readConfigMap(namespace, "a")) as { color?: string } | undefined)?.color === "blue"
          ? "restored"
          : undefined;
      },
      // Generous: on a loaded machine one round's correction has taken more than 10 s.
      { timeoutMs: 30_000, what: `round ${round}: restored or reported as a fight` },
    ).then((outcome) => outcome === "fight");
  }
  assert.ok(fought, "ten rounds of another writer never raised a fight");
  // The correction that raised the fight wrote ours back (the status may say so before a probe sees it): the
  // other writer writes once more, and once the remediator has handled a later change (the barrier's
  // deletion, on the same watch), that write must still stand.
  const live = (await readConfigMap(namespace, "a")) as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: { ...live, data: { color: "other-after" } } as never,
  });
  const barrierUid = async (): Promise<string | undefined> =>
    ((await readConfigMap(namespace, "barrier"))?.["metadata"] as JsonObject | undefined)?.["uid"] as
      string | undefined;
  const before = await barrierUid();
  await coreApi().deleteNamespacedConfigMap({ namespace, name: "barrier" });
  await eventually(async () => ((await barrierUid()) ?? before) !== before, {
    timeoutMs: 60_000,
    what: "the barrier re-created by drift correction",
  });
  const color = (dataOf(await readConfigMap(namespace, "a")) as { color?: string }).color;
  assert.equal(color, "other-after", "after the fight was raised driftless kept overwriting the other writer");
});

test("its own writes are never counted as another writer: many commits to one object in a minute are no fight", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/tag.yaml", configMap("tag", undefined, { image: "v0" }));
  const first = await repo.commit("v0");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, first);
  // More commits than the fight threshold (5 corrections in 60 s), each synced: CI bumping a tag.
  for (let round = 1; round <= 8; round++) {
    await repo.write("config/tag.yaml", configMap("tag", undefined, { image: `v${round}` }));
    const commit = await repo.commit(`v${round}`);
    const status = await synced(namespace, commit);
    const errors = ((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
    assert.deepEqual(errors, [], `round ${round}`);
    assert.deepEqual(dataOf(await readConfigMap(namespace, "tag")), { image: `v${round}` });
  }
});

test("honours client.lifecycle.config.k8s.io/mutation: ignore and configmanagement.gke.io/managed: disabled", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/keep.yaml",
    configMap("keep", namespace, { v: "declared" }, { "client.lifecycle.config.k8s.io/mutation": "ignore" }),
  );
  await repo.write(
    "config/off.yaml",
    configMap("off", namespace, { v: "declared" }, { "configmanagement.gke.io/managed": "disabled" }),
  );
  await repo.write("config/marker.yaml", configMap("marker", namespace, { v: "1" }));
  const commit = await repo.commit("lifecycle annotations");
  await createRepoSync(namespace, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RepoSync", namespace, name: "repo-sync" },
    { resyncPeriodMs: 0 },
  );
  await synced(namespace, commit);
  assert.equal(await readConfigMap(namespace, "off"), undefined, "an object with managed: disabled was created");

  const keep = (await readConfigMap(namespace, "keep")) as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "keep",
    body: { ...keep, data: { v: "edited by hand" } } as never,
  });
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 2, { what: "two more passes" });
  assert.deepEqual(
    dataOf(await readConfigMap(namespace, "keep")),
    { v: "edited by hand" },
    "mutation: ignore was overwritten",
  );
});

test("follows a force-push, and reports a deleted branch without deleting anything", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { v: "1" }));
  const base = await repo.commit("a");
  await repo.write("config/b.yaml", configMap("b", namespace, { v: "1" }));
  const ahead = await repo.commit("b");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, ahead);

  // Rewrite history: drop "b", add "c" on top of the base commit, and force-push.
  await repo.git("reset", "-q", "--hard", base);
  await repo.write("config/c.yaml", configMap("c", namespace, { v: "1" }));
  const rewritten = await repo.commit("c instead of b");
  await synced(namespace, rewritten);
  assert.ok((await readConfigMap(namespace, "c")) !== undefined);
  await eventually(async () => (await readConfigMap(namespace, "b")) === undefined, {
    what: "b pruned after the force-push",
  });

  await execFileAsync("git", ["--git-dir", repo.remote, "branch", "-D", repo.branch]).catch(async () => {
    // A bare repository's HEAD branch cannot be deleted by name; point HEAD elsewhere first.
    await execFileAsync("git", ["--git-dir", repo.remote, "symbolic-ref", "HEAD", "refs/heads/elsewhere"]);
    await execFileAsync("git", ["--git-dir", repo.remote, "branch", "-D", repo.branch]);
  });
  const errors = await sourceErrors(namespace);
  assert.equal(errors[0]?.["code"], "2004");
  assert.match(String(errors[0]?.["errorMessage"]), new RegExp(repo.branch));
  assert.ok(
    (await readConfigMap(namespace, "a")) !== undefined && (await readConfigMap(namespace, "c")) !== undefined,
    "objects were deleted when the branch disappeared",
  );
});

test("a poll that finds the synced commit skips the apply and reads no managed object", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  for (let i = 0; i < 10; i++)
    await repo.write(`config/cm-${i}.yaml`, configMap(`cm-${i}`, namespace, { i: String(i) }));
  const commit = await repo.commit("ten config maps");
  await createRepoSync(namespace, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RepoSync", namespace, name: "repo-sync" },
    { resyncPeriodMs: 60_000 },
  );
  await synced(namespace, commit);
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 1, { what: "one more poll" });
  const before = reconciler.client.requests.snapshot();
  const polls = reconciler.passCount;
  await eventually(() => reconciler.passCount >= polls + 3, { what: "three more polls" });
  const after = reconciler.client.requests.snapshot();
  assert.equal(
    reconciler.client.requests.writes() -
      (before.create + before.update + before.patch + before.delete + before.deletecollection),
    0,
  );
  // Each skipped poll reads the RSync once (to see a spec change); nothing per object.
  assert.ok(
    after.get - before.get <= (reconciler.passCount - polls) * 2,
    `polls read ${after.get - before.get} objects`,
  );
  assert.equal(after.list - before.list, 0, "a skipped poll listed objects");

  // A spec change is not an unchanged poll: it is applied at once, not at the next resync.
  await repo.write("config/cm-0.yaml", configMap("cm-0", namespace, { i: "changed" }));
  const next = await repo.commit("change cm-0");
  await synced(namespace, next);
  assert.deepEqual(dataOf(await readConfigMap(namespace, "cm-0")), { i: "changed" });
});

test("stop() is idempotent: a second call waits for the first and closes nothing twice", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { v: "1" }));
  const commit = await repo.commit("a");
  await createRepoSync(namespace, repo);
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await synced(namespace, commit);
  const first = reconciler.stop(5_000);
  const second = reconciler.stop(5_000);
  assert.equal(first, second, "a second stop started another shutdown");
  await first;
});
