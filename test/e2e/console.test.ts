/**
 * `driftless console` in a real browser (Debian's Chromium through playwright-core) against the real
 * control plane, with syncs kept by real reconcilers: states on the overview, a sync's objects and
 * errors, a commit appearing without reload, the levers, and hostile text rendered as text.
 */
import { after, before, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { KubeClient, type KubeObject } from "@driftless/kube";
import {
  createRepoSync,
  customApi,
  eventually,
  startReconciler,
  testEnv,
  testNamespace,
  TestRepo,
} from "../support/index.ts";
import { launchChromium } from "../support/browser.ts";
import { startConsole } from "../support/console.ts";

let chromium: Browser | undefined;
before(async () => (chromium = await launchChromium()));
after(() => chromium?.close());

const configMap = (namespace: string, name: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { k: name } });

/** A second RepoSync in the namespace, from `config/` of its own repository. */
async function createNamedRepoSync(namespace: string, name: string, repo: TestRepo): Promise<void> {
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name, namespace },
      spec: { sourceFormat: "unstructured", git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none" } },
    },
  });
}

/** `repo-sync` synced (one ConfigMap) and `broken` failing on a file whose name is markup. */
async function twoSyncs(t: TestContext) {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap(namespace, "a"));
  const commit = await repo.commit("one config map");
  await createRepoSync(namespace, repo);
  const good = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });

  const brokenRepo = await TestRepo.create(t);
  await brokenRepo.write("config/<img src=x onerror=alert(1)>.yaml", "kind: [unclosed\n");
  const badCommit = await brokenRepo.commit("a file that does not parse");
  await createNamedRepoSync(namespace, "broken", brokenRepo);
  const bad = await startReconciler(t, { kind: "RepoSync", namespace, name: "broken" });
  await eventually(async () => good.lastPass?.commit === commit && good.lastPass.synced, { what: "repo-sync synced" });
  await eventually(async () => bad.lastPass?.commit === badCommit && !bad.lastPass.synced, { what: "broken failed" });
  return { namespace, repo, commit, good };
}

async function openConsole(t: TestContext, url: string): Promise<Page> {
  assert.ok(chromium !== undefined, "Chromium did not start");
  const context = await chromium.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

const row = (page: Page, namespace: string, name: string) =>
  page.locator(`tr[data-sync="RepoSync/${namespace}/${name}"]`);

async function getSync(namespace: string, name: string): Promise<KubeObject> {
  return (await customApi().getNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    name,
  })) as KubeObject;
}

test("the console shows each sync's state, a sync's objects and errors, and a pushed commit without a reload", async (t) => {
  const { namespace, repo, commit } = await twoSyncs(t);
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const page = await openConsole(t, console.url);
  // The printed address is the overview itself.
  assert.equal(page.url(), console.url);
  await row(page, namespace, "repo-sync").waitFor();
  await eventually(async () => (await row(page, namespace, "repo-sync").getAttribute("data-state")) === "SYNCED");
  await eventually(async () => (await row(page, namespace, "broken").getAttribute("data-state")) === "ERROR");
  assert.match(await row(page, namespace, "repo-sync").innerText(), new RegExp(commit.slice(0, 12)));

  // Filtered by state: only the failing sync is left.
  await page.goto(`${console.url}?namespace=${namespace}&state=ERROR`);
  await row(page, namespace, "broken").waitFor();
  assert.equal(await row(page, namespace, "repo-sync").count(), 0);

  // The failing sync's page: the parse error with its code, what to do, and the file name as text.
  await row(page, namespace, "broken").getByRole("link").click();
  const error = page.locator("li.error").first();
  await error.waitFor();
  assert.match(await error.innerText(), /KNV1006/);
  assert.match(await error.innerText(), /What to do:/);
  assert.match(await error.innerText(), /<img src=x onerror=alert\(1\)>\.yaml/);
  assert.equal(await page.locator("main img").count(), 0, "markup from a file name must stay text");

  // The synced one: its object and kstatus; then a commit lands while the page is open.
  await page.goto(`${console.url}syncs/reposync/${namespace}/repo-sync`);
  await page.locator(`tr[data-object="ConfigMap/${namespace}/a"]`).waitFor();
  assert.match(await page.locator(`tr[data-object="ConfigMap/${namespace}/a"]`).innerText(), /Current/);
  await eventually(async () => (await page.locator("#live-status").innerText()) === "Live", { what: "live" });
  let loads = 0;
  page.on("load", () => loads++);
  await repo.write("config/b.yaml", configMap(namespace, "b"));
  const next = await repo.commit("a second config map");
  await page.locator(`tr[data-object="ConfigMap/${namespace}/b"]`).waitFor({ timeout: 60_000 });
  await eventually(async () => (await page.locator("#commits").locator("..").innerText()).includes(next.slice(0, 12)), {
    what: "the new commit on the page",
  });
  assert.equal(loads, 0, "the page was updated in place, not reloaded");
});

test("sync now, suspend and resume on a sync's page change the sync object as the user", async (t) => {
  const { namespace } = await twoSyncs(t);
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig, "-n", namespace);
  const page = await openConsole(t, console.url);
  await page.goto(`${console.url}syncs/reposync/${namespace}/repo-sync`);

  await page.getByRole("button", { name: "Suspend" }).click();
  await eventually(
    async () => (await getSync(namespace, "repo-sync")).metadata.annotations?.["driftless.dev/suspend"] === "true",
    {
      what: "the suspend annotation",
    },
  );
  await page.locator(".state-suspended").first().waitFor({ timeout: 60_000 });

  await page.getByRole("button", { name: "Resume" }).click();
  await eventually(
    async () => (await getSync(namespace, "repo-sync")).metadata.annotations?.["driftless.dev/suspend"] === undefined,
    { what: "the suspend annotation removed" },
  );
  await page.getByRole("button", { name: "Suspend" }).waitFor();

  await page.getByRole("button", { name: "Sync now" }).click();
  await page.locator("#notice .done").waitFor();
  let requested: string | undefined;
  await eventually(async () => {
    requested = (await getSync(namespace, "repo-sync")).metadata.annotations?.["driftless.dev/sync-requested-at"];
    return requested !== undefined;
  });
  // The reconciler answers the request with a pass, and says so.
  await eventually(
    async () =>
      (await getSync(namespace, "repo-sync")).metadata.annotations?.["driftless.dev/sync-request-handled"] ===
      requested,
    { what: "the request answered", timeoutMs: 60_000 },
  );
});

test("a user whose RBAC forbids patching a sync sees the API server's refusal, and nothing changes", async (t) => {
  const { namespace } = await twoSyncs(t);
  const admin = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => admin.close());
  const rbac = (kind: string, resource: string) => ({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind,
    resource,
    namespaced: true,
    verbs: ["create"] as const,
  });
  await admin.create(rbac("Role", "roles"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "sync-viewer", namespace },
    rules: [
      { apiGroups: ["configsync.gke.io"], resources: ["reposyncs", "rootsyncs"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["kpt.dev"], resources: ["resourcegroups"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["events"], verbs: ["get", "list", "watch"] },
    ],
  } as KubeObject);
  await admin.create(rbac("RoleBinding", "rolebindings"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "sync-viewer", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "sync-viewer" },
    subjects: [{ kind: "User", name: testEnv().userName, apiGroup: "rbac.authorization.k8s.io" }],
  } as KubeObject);

  const console = await startConsole(t, "--kubeconfig", testEnv().userKubeconfig, "-n", namespace);
  const page = await openConsole(t, console.url);
  await row(page, namespace, "repo-sync").waitFor();
  await page.goto(`${console.url}syncs/reposync/${namespace}/repo-sync`);
  const before = await getSync(namespace, "repo-sync");
  await page.getByRole("button", { name: "Suspend" }).click();
  const refusal = page.locator("#notice .refused");
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /refused \(403\)/);
  assert.match(await refusal.innerText(), /forbidden|cannot patch/i);
  const now = await getSync(namespace, "repo-sync");
  assert.equal(now.metadata.annotations?.["driftless.dev/suspend"], undefined);
  assert.deepEqual(now.metadata.annotations ?? {}, before.metadata.annotations ?? {});
  // The reconciler pods are not the user's to see: the page says so instead of failing.
  assert.match(await page.locator("#reconciler").locator("..").innerText(), /not visible to you/);
});

test("without script, each action answers with the sync's page as the action left it", async (t) => {
  const namespace = await testNamespace(t);
  // No reconciler: the levers are annotations, and the page must show them without one.
  await createRepoSync(namespace, await TestRepo.create(t));
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig, "-n", namespace);
  assert.ok(chromium !== undefined, "Chromium did not start");
  const context = await chromium.newContext({ javaScriptEnabled: false });
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${console.url}syncs/reposync/${namespace}/repo-sync`);

  // No live view follows without script: the page answering the form is all the user sees.
  await page.getByRole("button", { name: "Suspend" }).click();
  await page.locator("#notice .done").waitFor();
  assert.equal(await page.getByRole("button", { name: "Resume" }).count(), 1, "the suspended sync offers Resume");
  assert.match(await page.locator("#live").innerText(), /SUSPENDED/);
  // Sync now on a suspended sync warns as `driftless sync` does: its pass applies nothing.
  await page.getByRole("button", { name: "Sync now" }).click();
  await page.locator("#notice .done").waitFor();
  assert.match(await page.locator("#notice").innerText(), /suspended: its pass applies, prunes and corrects nothing/);
  await page.getByRole("button", { name: "Resume" }).click();
  await page.locator("#notice .done").waitFor();
  assert.equal(await page.getByRole("button", { name: "Suspend" }).count(), 1, "the resumed sync offers Suspend");
  assert.equal((await getSync(namespace, "repo-sync")).metadata.annotations?.["driftless.dev/suspend"], undefined);
  await page.getByRole("button", { name: "Sync now" }).click();
  await page.locator("#notice .done").waitFor();
  assert.doesNotMatch(await page.locator("#notice").innerText(), /suspended/);
  assert.match(await page.locator("#live").innerText(), /Pass requested at .*waiting for the reconciler/);
});

test("the overview and a sync's page load without an error in the browser's console (its default /favicon.ico included)", async (t) => {
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t));
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig, "-n", namespace);
  const page = await openConsole(t, console.url);
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  for (const path of ["", `syncs/reposync/${namespace}/repo-sync`]) {
    await page.goto(`${console.url}${path}`);
    await eventually(async () => (await page.locator("#live-status").innerText()) === "Live", { what: "live" });
  }
  assert.deepEqual(errors, []);
});

test("a namespace whose first sync comes while the overview is open can be chosen in its filter without a reload", async (t) => {
  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const page = await openConsole(t, console.url);
  await eventually(async () => (await page.locator("#live-status").innerText()) === "Live", { what: "live" });
  let loads = 0;
  page.on("load", () => loads++);
  const namespace = await testNamespace(t);
  await createRepoSync(namespace, await TestRepo.create(t));
  await row(page, namespace, "repo-sync").waitFor();
  assert.equal(loads, 0, "the row came without a reload");

  await page.getByLabel("Namespace").selectOption(namespace, { timeout: 5_000 });
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/[?&]namespace=/);
  await row(page, namespace, "repo-sync").waitFor();
  assert.equal(await page.locator("tr[data-sync]").count(), 1, "only the chosen namespace's sync");
});
