import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import { testEnv } from "./env.ts";
import type { JsonObject } from "./fixtures.ts";
import { coreApi, suffix, testNamespace } from "./kube.ts";
import { removeAfter } from "./cleanup.ts";

/**
 * A kubeconfig for a ServiceAccount bound to `rules` cluster-wide, for the test's API server or, with
 * `server`, a plain-HTTP proxy in front of it.
 */
export async function limitedKubeconfig(
  t: TestContext,
  client: KubeClient,
  rules: JsonObject[],
  options: { readonly server?: string } = {},
): Promise<string> {
  const name = `limited-${suffix()}`;
  const namespace = await testNamespace(t, "limited");
  await coreApi().createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const rbac = (kind: string, resource: string): ResourceMapping => ({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind,
    resource,
    namespaced: false,
    verbs: [],
  });
  await client.create(rbac("ClusterRole", "clusterroles"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    rules,
  } as KubeObject);
  await client.create(rbac("ClusterRoleBinding", "clusterrolebindings"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects: [{ kind: "ServiceAccount", name, namespace }],
  } as KubeObject);
  t.after(async () => {
    await client.delete(rbac("ClusterRoleBinding", "clusterrolebindings"), undefined, name).catch(() => undefined);
    await client.delete(rbac("ClusterRole", "clusterroles"), undefined, name).catch(() => undefined);
  });
  const token = await client.request<{ status: { token: string } }>({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  });
  const env = testEnv();
  const dir = await mkdtemp(join(tmpdir(), "driftless-limited-"));
  removeAfter(t, dir);
  const path = join(dir, "kubeconfig");
  const ca = (await readFile(env.caFile)).toString("base64");
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "local",
          cluster:
            options.server === undefined
              ? { server: env.server, "certificate-authority-data": ca }
              : { server: options.server },
        },
      ],
      users: [{ name, user: { token: token.status.token } }],
      contexts: [{ name, context: { cluster: "local", user: name } }],
      "current-context": name,
    }),
    { mode: 0o600 },
  );
  return path;
}
