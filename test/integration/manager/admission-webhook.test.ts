/**
 * Admission protection with the real API server calling the manager's webhook: a user may not change
 * a declared field of a managed object or delete it, may change what is not declared, the owning
 * reconciler still applies new commits, a stopped manager blocks nothing (failurePolicy Ignore), a
 * manager without the setting removes the configuration, a certificate near its end is renewed, and
 * a namespace holding a managed object is still deleted.
 * On a control plane of its own: the webhook configuration is cluster-wide and would refuse other
 * test files' drift edits.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { issueWebhookCertificates } from "../../../packages/controller/src/admission-cert.ts";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { usePrivateControlPlane } from "../../support/private-control-plane.ts";
import { grantUserEdit } from "../../support/rbac.ts";
import { eventually, suffix, testEnv, TestRepo } from "../../support/index.ts";
import {
  admin,
  admissionWebhookName,
  cleanUpScope,
  configMap,
  createNamespace,
  createSync,
  getObject,
  managerKubeconfig,
  Mapping,
  mintToken,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

await usePrivateControlPlane();

const certSecret = "driftless-admission-webhook-cert";
const Secret: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Secret",
  resource: "secrets",
  namespaced: true,
  verbs: [],
};

/** The API server's refusal of `write`, or undefined when it went through. */
async function refusal(write: () => Promise<unknown>): Promise<KubeApiError | undefined> {
  try {
    await write();
    return undefined;
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 403) return error;
    throw error;
  }
}

/** A client authenticated as a ServiceAccount of config-management-system (a token from the TokenRequest API). */
async function clientOfServiceAccount(t: TestContext, name: string): Promise<KubeClient> {
  const env = testEnv();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "local", server: env.server, caFile: env.caFile, skipTLSVerify: false }],
    users: [{ name, token: await mintToken(systemNamespace, name) }],
    contexts: [{ name: "sa", cluster: "local", user: name }],
    currentContext: "sa",
  });
  const client = await KubeClient.fromConfig(kc);
  t.after(() => client.close());
  return client;
}

/** A DELETE sent as `user` (the admin impersonating it), e.g. as kube-controller-manager's garbage collector. */
function deleteAs(user: string, groups: string[], path: string): Promise<{ status: number; body: string }> {
  const env = testEnv();
  const headers = { authorization: `Bearer ${env.adminToken}`, "impersonate-user": user, "impersonate-group": groups };
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, env.server),
      { method: "DELETE", ca: readFileSync(env.caFile), headers },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function withData(obj: KubeObject, data: Record<string, string>): KubeObject {
  return { ...obj, data: { ...(obj["data"] as Record<string, string>), ...data } };
}

test("the admission webhook refuses changes to declared fields and deletion of managed objects, by anyone but the owning reconciler", async (t) => {
  const env = testEnv();
  const adminClient = await admin();
  const user = await KubeClient.fromKubeconfig(env.userKubeconfig);
  t.after(() => user.close());
  const namespace = await createNamespace(t);
  await grantUserEdit(namespace);

  const manager = await startManager(t, { extraArgs: ["--admission-webhook-port", "0"] });
  const repo = await TestRepo.create(t);
  await repo.write("root/cm.yaml", configMap("protected", namespace, { key: "declared" }, { labels: { tier: "web" } }));
  // Config Sync's webhook has no namespace selector: the system namespaces' managed objects are protected too.
  const systemObject = `protected-${suffix()}`;
  await repo.write("root/system.yaml", configMap(systemObject, systemNamespace, { key: "declared" }));
  const first = await repo.commit("a ConfigMap, and one in config-management-system");
  const rootName = `root-${suffix()}`;
  await createSync(t, rootSyncObject(rootName, manager.scope, { repo: repo.url, branch: repo.branch, dir: "root" }));
  await synced("RootSync", systemNamespace, rootName, first);
  const live = async (): Promise<KubeObject> => {
    const obj = await getObject(Mapping.ConfigMap, namespace, "protected");
    assert.ok(obj, "the ConfigMap is there");
    return obj;
  };

  const id = `_configmap_${namespace}_protected`;
  // The configuration reaches the API server's webhook informer a moment after it is written.
  const declaredEdit = await eventually(
    async () =>
      refusal(async () => user.replace(Mapping.ConfigMap, withData(await live(), { key: "edited" }), { dryRun: true })),
    { what: "the API server calls the webhook", timeoutMs: 60_000 },
  );
  assert.equal(
    declaredEdit.serverMessage,
    `admission webhook "${admissionWebhookName}" denied the request: ${env.userName} cannot modify fields of object "${id}" managed by Config Sync: .data.key`,
  );

  const vwc = await adminClient.get(Mapping.ValidatingWebhookConfiguration, undefined, admissionWebhookName);
  const hook = (vwc?.["webhooks"] as Record<string, unknown>[] | undefined)?.[0];
  assert.equal(hook?.["failurePolicy"], "Ignore");
  assert.equal(hook?.["sideEffects"], "None");
  assert.equal(hook?.["timeoutSeconds"], 3);
  assert.deepEqual(hook?.["objectSelector"], {
    matchLabels: { "app.kubernetes.io/managed-by": "configmanagement.gke.io" },
  });
  assert.ok(await adminClient.get(Secret, systemNamespace, certSecret), "the certificate is kept in a Secret");

  // Even the cluster admin: the webhook is the API server's, not RBAC.
  const adminEdit = await refusal(async () =>
    adminClient.replace(Mapping.ConfigMap, withData(await live(), { key: "by-admin" })),
  );
  assert.match(
    adminEdit?.serverMessage ?? "",
    /cannot modify fields of object .* managed by Config Sync: \.data\.key$/,
  );
  const systemEdit = await refusal(async () => {
    const obj = await getObject(Mapping.ConfigMap, systemNamespace, systemObject);
    assert.ok(obj, "the ConfigMap in config-management-system is there");
    return adminClient.replace(Mapping.ConfigMap, withData(obj, { key: "by-admin" }));
  });
  assert.match(systemEdit?.serverMessage ?? "", /managed by Config Sync: \.data\.key$/);
  const labelEdit = await refusal(async () => {
    const obj = await live();
    return user.replace(Mapping.ConfigMap, {
      ...obj,
      metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, tier: "db" } },
    });
  });
  assert.match(labelEdit?.serverMessage ?? "", /managed by Config Sync: \.metadata\.labels\.tier$/);
  const metadataEdit = await refusal(async () => {
    const obj = await live();
    const annotations = { ...obj.metadata.annotations };
    delete annotations["configsync.gke.io/manager"];
    return user.replace(Mapping.ConfigMap, { ...obj, metadata: { ...obj.metadata, annotations } });
  });
  assert.match(
    metadataEdit?.serverMessage ?? "",
    /cannot modify Config Sync metadata of object ".*": \.metadata\.annotations\.configsync\.gke\.io\/manager$/,
  );
  const deletion = await refusal(() => user.delete(Mapping.ConfigMap, namespace, "protected"));
  assert.equal(
    deletion?.serverMessage,
    `admission webhook "${admissionWebhookName}" denied the request: ${env.userName} is not authorized to delete managed resource "${id}"`,
  );
  // Forbidden, as Config Sync's webhook answers: kubectl reads Unauthorized as "You must be logged in".
  assert.equal(deletion?.reason, "Forbidden");

  // Reconcilers are told apart by their ServiceAccount: the owner may write, another reconciler may not.
  const owner = await clientOfServiceAccount(t, `root-reconciler-${rootName}`);
  const ownerEdit = await refusal(async () =>
    owner.replace(Mapping.ConfigMap, withData(await live(), { key: "by-owner" }), { dryRun: true }),
  );
  assert.equal(ownerEdit, undefined, "the owning reconciler's identity may change declared fields");
  const intruderName = `root-reconciler-intruder-${suffix()}`;
  await adminClient.create(Mapping.ServiceAccount, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: intruderName, namespace: systemNamespace },
  });
  await adminClient.create(Mapping.RoleBinding, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "intruder-edit", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
    subjects: [{ kind: "ServiceAccount", name: intruderName, namespace: systemNamespace }],
  });
  const intruder = await clientOfServiceAccount(t, intruderName);
  const intruderEdit = await refusal(async () =>
    intruder.replace(Mapping.ConfigMap, withData(await live(), { key: "by-intruder" }), { dryRun: true }),
  );
  assert.equal(
    intruderEdit?.serverMessage,
    `admission webhook "${admissionWebhookName}" denied the request: config sync "${intruderName}" can not UPDATE object "ConfigMap, ${namespace}/protected" managed by config sync "root-reconciler-${rootName}"`,
  );

  // What is not declared stays the user's.
  const undeclared = await refusal(async () => {
    const obj = await live();
    return user.replace(Mapping.ConfigMap, {
      ...withData(obj, { extra: "mine" }),
      metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, owner: "me" } },
    });
  });
  assert.equal(undeclared, undefined, "an undeclared label and data key are allowed");
  assert.equal((await live()).metadata.labels?.["owner"], "me");

  // An owner the tenant adds by hand touches no declared field, but the garbage collector's delete that would
  // follow once the tenant deletes that owner is refused (real clusters run it under its own ServiceAccount).
  const tenantOwner = await user.create(Mapping.ConfigMap, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "tenant-owner", namespace },
  });
  const ownerAdded = await refusal(async () => {
    const obj = await live();
    const ownerReferences = [
      { apiVersion: "v1", kind: "ConfigMap", name: "tenant-owner", uid: tenantOwner.metadata.uid ?? "" },
    ];
    return user.replace(Mapping.ConfigMap, { ...obj, metadata: { ...obj.metadata, ownerReferences } });
  });
  assert.equal(ownerAdded, undefined, "an undeclared ownerReference may be added");
  const collected = await deleteAs(
    "system:serviceaccount:kube-system:generic-garbage-collector",
    ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
    `/api/v1/namespaces/${namespace}/configmaps/protected?dryRun=All`,
  );
  assert.equal(collected.status, 403, collected.body);
  assert.match(collected.body, /generic-garbage-collector is not authorized to delete managed resource/);

  // The owning reconciler applies a new commit through the webhook.
  await repo.write("root/cm.yaml", configMap("protected", namespace, { key: "second" }, { labels: { tier: "web" } }));
  const second = await repo.commit("a new value");
  await synced("RootSync", systemNamespace, rootName, second);
  assert.equal(((await live())["data"] as Record<string, string>)["key"], "second");

  // Manager gone: the webhook is unreachable and failurePolicy Ignore lets writes through.
  await manager.stop();
  const whileDown = await refusal(async () =>
    user.replace(Mapping.ConfigMap, withData(await live(), { key: "while-down" })),
  );
  assert.equal(whileDown, undefined, "writes succeed while the webhook is unreachable");
  assert.ok(
    await adminClient.get(Mapping.ValidatingWebhookConfiguration, undefined, admissionWebhookName),
    "stopping is not turning off: the configuration stays",
  );

  // Turned off: a manager without the setting deletes the configuration.
  const withoutWebhook = await startManager(t, { scope: manager.scope });
  await eventually(
    async () =>
      (await adminClient.get(Mapping.ValidatingWebhookConfiguration, undefined, admissionWebhookName)) === undefined,
    {
      what: "the webhook configuration deleted",
    },
  );
  // Its reconciler writes into the scope's state folder: done before the folder is removed.
  await cleanUpScope(manager.scope);
  await withoutWebhook.stop();
});

test("a certificate close to its end is renewed, the previous CA stays trusted, and a namespace holding managed objects can still be deleted", async (t) => {
  const adminClient = await admin();
  await managerKubeconfig(); // applies manifests/: the namespace, the manager's RBAC
  const old = issueWebhookCertificates({ hosts: ["127.0.0.1"], lifetimeMs: 24 * 60 * 60 * 1000 });
  const data = {
    "ca.crt": Buffer.from(old.caCert).toString("base64"),
    "tls.crt": Buffer.from(old.tlsCert).toString("base64"),
    "tls.key": Buffer.from(old.tlsKey).toString("base64"),
  };
  const existing = await adminClient.get(Secret, systemNamespace, certSecret);
  if (existing === undefined)
    await adminClient.create(Secret, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: certSecret, namespace: systemNamespace },
      type: "kubernetes.io/tls",
      data,
    });
  else await adminClient.replace(Secret, { ...existing, data });

  // A managed object, made before the webhook is on (creating one is refused then).
  const namespace = await createNamespace(t);
  const name = `cm-${suffix()}`;
  await adminClient.create(Mapping.ConfigMap, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace,
      labels: { "app.kubernetes.io/managed-by": "configmanagement.gke.io" },
      annotations: {
        "configmanagement.gke.io/managed": "enabled",
        "configsync.gke.io/resource-id": `_configmap_${namespace}_${name}`,
      },
    },
    data: { key: "value" },
  });
  const manager = await startManager(t, { extraArgs: ["--admission-webhook-port", "0"] });
  const renewed = await eventually(
    async () => {
      const secret = await adminClient.get(Secret, systemNamespace, certSecret);
      const tls = Buffer.from((secret?.["data"] as Record<string, string>)["tls.crt"] ?? "", "base64").toString();
      return tls !== old.tlsCert ? secret : undefined;
    },
    { what: "the certificate renewed" },
  );
  const decoded = (key: string): string =>
    Buffer.from((renewed["data"] as Record<string, string>)[key] ?? "", "base64").toString();
  const expires = Date.parse(new X509Certificate(decoded("tls.crt")).validTo);
  assert.ok(expires - Date.now() > 300 * 24 * 60 * 60 * 1000, "the new certificate runs for a year");
  const bundle = decoded("ca.crt");
  assert.equal(bundle.match(/BEGIN CERTIFICATE/g)?.length, 2, "the bundle holds the new CA and the previous one");
  assert.ok(bundle.endsWith(old.caCert), "the previous CA is kept until it expires");

  // The API server trusts the new certificate: a refusal needs a TLS connection it accepted.
  const refused = await eventually(
    () => refusal(() => adminClient.delete(Mapping.ConfigMap, namespace, name, { dryRun: true })),
    { what: "the renewed webhook answers" },
  );
  assert.match(refused.serverMessage, /is not authorized to delete managed resource/);

  // Protection never wedges a namespace deletion: the namespace controller may delete managed objects.
  await adminClient.delete(Mapping.Namespace, undefined, namespace);
  await eventually(async () => (await adminClient.get(Mapping.Namespace, undefined, namespace)) === undefined, {
    what: "the namespace holding a managed object deleted",
    timeoutMs: 60_000,
  });
  await manager.stop();
});
