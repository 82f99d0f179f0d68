/**
 * `npm run docs:screenshots`: the README's pictures of the console, taken from a real cluster with real
 * reconcilers (a few teams' syncs: synced, failing, suspended), in the same Chromium the e2e tests use.
 * Writes docs/images/console-overview.png and console-sync.png; run by hand when the console changes.
 */
import { test, type TestContext } from "node:test";
import { join } from "node:path";
import { findRepoRoot } from "@driftless/local-cluster";
import { coreApi, customApi, eventually, startReconciler, testEnv, TestRepo } from "../support/index.ts";
import { launchChromium } from "../support/browser.ts";
import { startConsole } from "../support/console.ts";

const images = join(findRepoRoot(), "docs", "images");

const object = (apiVersion: string, kind: string, namespace: string, name: string, extra: object = {}): string =>
  JSON.stringify({ apiVersion, kind, metadata: { name, namespace }, ...extra });

async function team(
  t: TestContext,
  namespace: string,
  files: Record<string, string>,
  annotations = {},
  broken?: Record<string, string>,
) {
  await coreApi().createNamespace({ body: { metadata: { name: namespace } } });
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  for (const [path, text] of Object.entries(files)) await repo.write(`config/${path}`, text);
  const commit = await repo.commit("team config");
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace, annotations },
      spec: { sourceFormat: "unstructured", git: { repo: repo.url, branch: "main", dir: "config", auth: "none" } },
    },
  });
  // Polling once a minute: the pictures show settled states, not a test's rapid retries.
  const reconciler = await startReconciler(
    t,
    { kind: "RepoSync", namespace, name: "repo-sync" },
    { pollPeriodMs: 60_000 },
  );
  await eventually(async () => reconciler.lastPass?.commit === commit, { what: `${namespace} passed` });
  if (broken === undefined) return;
  // Synced once, then a commit that fails: objects on the page, and an error.
  for (const [path, text] of Object.entries(broken)) await repo.write(`config/${path}`, text);
  const next = await repo.commit("a quota");
  await reconciler.trigger("webhook");
  await eventually(async () => reconciler.lastPass?.commit === next, { what: `${namespace} failed` });
}

test("console screenshots for the README", async (t) => {
  const app = (ns: string): Record<string, string> => ({
    "config.yaml": object("v1", "ConfigMap", ns, "app-config", { data: { LOG_LEVEL: "info" } }),
    "flags.yaml": object("v1", "ConfigMap", ns, "feature-flags", { data: { checkout: "on" } }),
    "sa.yaml": object("v1", "ServiceAccount", ns, "app"),
    "role.yaml": object("rbac.authorization.k8s.io/v1", "Role", ns, "app-reader", {
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
    }),
    "binding.yaml": object("rbac.authorization.k8s.io/v1", "RoleBinding", ns, "app-reader", {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "app-reader" },
      subjects: [{ kind: "ServiceAccount", name: "app", namespace: ns }],
    }),
  });
  await team(t, "payments", app("payments"));
  await team(t, "search", app("search"));
  await team(t, "storefront", app("storefront"), { "driftless.dev/suspend": "true" });
  await team(t, "checkout", app("checkout"), {}, { "quota.yaml": "kind: ResourceQuota\nmetadata: [broken\n" });

  const console = await startConsole(t, "--kubeconfig", testEnv().kubeconfig);
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 560 } });
  await page.goto(console.url);
  await page.locator('tr[data-state="SUSPENDED"]').waitFor({ timeout: 60_000 });
  await page.locator('tr[data-state="ERROR"]').waitFor({ timeout: 60_000 });
  await page.locator("#live-status[data-state=live]").waitFor();
  await page.screenshot({ path: join(images, "console-overview.png") });

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${console.url}syncs/reposync/checkout/repo-sync`);
  await page.locator("li.error").first().waitFor();
  await page.locator(".state-error").waitFor();
  await page.locator("#live-status[data-state=live]").waitFor();
  await page.screenshot({ path: join(images, "console-sync.png"), fullPage: true });
});
