import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { zstdCompressSync } from "node:zlib";
import { tarArchive, tarGz } from "@driftless/oci/testing";
import {
  coreApi,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  type JsonObject,
  updateRootSyncSpec,
} from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import { silentPort } from "../../support/silent-port.ts";
import { call, pushImage, pushIndex, startRegistry, type Registry } from "../../support/registry.ts";
import {
  configMap as managedConfigMap,
  createNamespace,
  createSync,
  getObject,
  Mapping,
  startManager,
  synced,
} from "../manager/helpers.ts";

const yaml = (obj: unknown): string => JSON.stringify(obj, null, 2);
const hex = (digest: string): string => digest.replace(/^sha256:/, "");

function configMap(namespace: string, name: string): string {
  return yaml({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { from: "oci" } });
}

async function ensureNamespace(name: string): Promise<void> {
  try {
    await coreApi().createNamespace({ body: { metadata: { name } } });
  } catch (error) {
    if (statusCode(error) !== 409) throw error;
  }
}

function cleanUpNamespace(t: TestContext, name: string): void {
  t.after(() =>
    coreApi()
      .deleteNamespace({ name })
      .then(
        () => undefined,
        () => undefined,
      ),
  );
}

/** The Secrets an OCI source names: basic credentials and the registry's CA. */
async function registrySecrets(
  t: TestContext,
  registry: Registry,
  password = registry.password,
  namespace = rootSyncNamespace,
): Promise<{ creds: string; ca: string }> {
  const creds = `oci-creds-${suffix()}`;
  const ca = `oci-ca-${suffix()}`;
  await ensureNamespace(namespace);
  await coreApi().createNamespacedSecret({
    namespace,
    body: { metadata: { name: creds }, stringData: { username: registry.username, password } },
  });
  await coreApi().createNamespacedSecret({
    namespace,
    body: { metadata: { name: ca }, stringData: { cert: registry.caCert } },
  });
  t.after(async () => {
    for (const name of [creds, ca])
      await coreApi()
        .deleteNamespacedSecret({ name, namespace: rootSyncNamespace })
        .catch(() => undefined);
  });
  return { creds, ca };
}

async function createOciRootSync(name: string, oci: JsonObject): Promise<void> {
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace },
      spec: { sourceFormat: "unstructured", sourceType: "oci", oci },
    },
  });
}

/** Read-modify-write of spec.oci, again on a conflict (the reconciler writes the RootSync too). */
async function updateOci(name: string, change: JsonObject): Promise<void> {
  await updateRootSyncSpec(name, (spec) => ({ ...spec, oci: { ...(spec["oci"] as JsonObject), ...change } }));
}

/** The first source error once it matches `pattern`. */
function sourceErrorMatching(name: string, pattern: RegExp): Promise<JsonObject> {
  return eventually(
    async () => {
      const source = (await rootSyncStatus(name))["source"] as JsonObject | undefined;
      const errors = (source?.["errors"] ?? []) as JsonObject[];
      return errors.find((e) => pattern.test(String(e["errorMessage"])));
    },
    { timeoutMs: 60_000, what: `RootSync ${name} to report a source error matching ${pattern}` },
  );
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

test("syncs an image from a TLS registry with basic auth like a commit (digest as commit, ociStatus), and a new push under the tag (a zstd layer over a gzip one) replaces and prunes", async (t) => {
  const registry = await startRegistry(t);
  const name = `oci-${suffix()}`;
  const ns = `oci-${suffix()}`;
  cleanUpNamespace(t, ns);
  const nsYaml = yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const first = await pushImage(registry, "config/app", "stable", [
    tarGz([
      { name: "config/ns.yaml", content: nsYaml },
      { name: "config/a.yaml", content: configMap(ns, "a") },
      { name: "other/ignored.yaml", content: configMap(ns, "ignored") },
    ]),
  ]);
  const { creds, ca } = await registrySecrets(t, registry);
  const image = `${registry.host}/config/app:stable`;
  await createOciRootSync(name, {
    image,
    dir: "config",
    auth: "token",
    secretRef: { name: creds },
    caCertSecretRef: { name: ca },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const status = await rootSynced(name, hex(first));
  assert.ok(await configMapExists(ns, "a"));
  assert.equal(await configMapExists(ns, "ignored"), false, "only spec.oci.dir is read");
  for (const phase of ["source", "rendering", "sync"]) {
    const block = status[phase] as JsonObject;
    assert.deepEqual(block["ociStatus"], { image, dir: "config" }, phase);
    assert.equal(block["gitStatus"], undefined, phase);
    assert.equal(block["commit"], hex(first), phase);
  }
  // nomos status shows the Syncing condition's commit, the whole digest.
  const syncing = (status["conditions"] as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.deepEqual([syncing?.["status"], syncing?.["commit"]], ["False", hex(first)]);

  // A second layer over the first: a whiteout removes a.yaml, b.yaml is new. Same tag, new digest.
  const second = await pushImage(registry, "config/app", "stable", [
    tarGz([
      { name: "config/ns.yaml", content: nsYaml },
      { name: "config/a.yaml", content: configMap(ns, "a") },
    ]),
    // zstd (docker buildx --compression=zstd): go-containerregistry decompresses it for Config Sync.
    zstdCompressSync(
      tarArchive([{ name: "config/.wh.a.yaml" }, { name: "config/b.yaml", content: configMap(ns, "b") }]),
    ),
  ]);
  await rootSynced(name, hex(second));
  assert.ok(await configMapExists(ns, "b"));
  assert.equal(await configMapExists(ns, "a"), false, "a.yaml was whited out and is pruned");
});

test("a registry whose CA the sync does not name is KNV2004 'x509: certificate signed by unknown authority', as Config Sync words it, a caCertSecretRef Secret without the key cert is Config Sync's KNV1061, and it syncs once spec.oci.caCertSecretRef names the CA", async (t) => {
  const registry = await startRegistry(t);
  const name = `oci-ca-${suffix()}`;
  const ns = `oci-ca-${suffix()}`;
  cleanUpNamespace(t, ns);
  const digest = await pushImage(registry, "config/app", "v1", [
    tarGz([{ name: "ns.yaml", content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) }]),
  ]);
  const { creds, ca } = await registrySecrets(t, registry);
  await createOciRootSync(name, { image: `${registry.host}/config/app:v1`, auth: "token", secretRef: { name: creds } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const error = await sourceErrorMatching(name, /KNV2004: failed to pull image /);
  assert.match(
    String(error["errorMessage"]),
    /tls: failed to verify certificate: x509: certificate signed by unknown authority/,
  );
  // Config Sync's reconciler-manager words (MissingKeyInCACertSecret), the Secret's name quoted.
  const keyless = `oci-keyless-${suffix()}`;
  await coreApi().createNamespacedSecret({
    namespace: rootSyncNamespace,
    body: { metadata: { name: keyless }, stringData: { "ca.crt": registry.caCert } },
  });
  t.after(() =>
    coreApi()
      .deleteNamespacedSecret({ name: keyless, namespace: rootSyncNamespace })
      .catch(() => undefined),
  );
  await updateOci(name, { caCertSecretRef: { name: keyless } });
  const missingKey = await sourceErrorMatching(name, /^KNV1061: /);
  assert.match(
    String(missingKey["errorMessage"]),
    new RegExp(`^KNV1061: caCertSecretRef was set, but "cert" key is not present in "${keyless}" Secret`),
  );
  await updateOci(name, { caCertSecretRef: { name: ca } });
  await rootSynced(name, hex(digest));
});

test("an image pinned by digest is pulled once: deleted from the registry afterwards, it raises no source error, as in Config Sync", async (t) => {
  const registry = await startRegistry(t);
  const name = `oci-pin-${suffix()}`;
  const ns = `oci-pin-${suffix()}`;
  cleanUpNamespace(t, ns);
  const digest = await pushImage(registry, "config/app", undefined, [
    tarGz([{ name: "ns.yaml", content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) }]),
  ]);
  const { creds, ca } = await registrySecrets(t, registry);
  await createOciRootSync(name, {
    image: `${registry.host}/config/app@${digest}`,
    auth: "token",
    secretRef: { name: creds },
    caCertSecretRef: { name: ca },
    period: "1s",
  });
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, hex(digest));

  const deleted = await call(registry, "DELETE", `/v2/config/app/manifests/${digest}`);
  assert.equal(deleted.status, 202, deleted.body.toString());
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 3, { timeoutMs: 30_000, what: "three more polls" });
  const source = (await rootSyncStatus(name))["source"] as JsonObject;
  assert.equal(source["errors"], undefined, JSON.stringify(source["errors"]));
  assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], hex(digest));
});

test("a missing tag, a wrong password, a layer escaping its directory, a layer that is no tar, a missing dir and an image that is no reference are KNV2004 source errors, and nothing synced before is deleted", async (t) => {
  const registry = await startRegistry(t);
  const name = `oci-bad-${suffix()}`;
  const ns = `oci-bad-${suffix()}`;
  cleanUpNamespace(t, ns);
  const good = await pushImage(registry, "config/app", "v1", [
    tarGz([
      { name: "ns.yaml", content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) },
      { name: "keep.yaml", content: configMap(ns, "keep") },
    ]),
  ]);
  await pushImage(registry, "config/app", "escape", [
    tarGz([
      { name: "keep.yaml", content: configMap(ns, "keep") },
      { name: `../../escaped-${suffix()}.yaml`, content: configMap(ns, "escaped") },
    ]),
  ]);
  // A YAML file pushed as the layer itself (`oras push img ns.yaml`: oras's media type says tar), not in a tar.
  await pushImage(registry, "config/app", "raw", [Buffer.from(configMap(ns, "raw"))]);
  const { creds, ca } = await registrySecrets(t, registry);
  const wrong = await registrySecrets(t, registry, "not-the-password");
  await createOciRootSync(name, {
    image: `${registry.host}/config/app:v1`,
    auth: "token",
    secretRef: { name: creds },
    caCertSecretRef: { name: ca },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, hex(good));
  assert.ok(await configMapExists(ns, "keep"));

  const cases: [JsonObject, RegExp][] = [
    [
      { image: `${registry.host}/config/app:v404` },
      new RegExp(`KNV2004: failed to pull image ${registry.host}/config/app:v404: .*tag "v404" not found`),
    ],
    [
      { image: `${registry.host}/config/app:v1`, secretRef: { name: wrong.creds } },
      // The registry's own words close it, as go-containerregistry's lead Config Sync's.
      /KNV2004: .*rejected the credentials.*\(UNAUTHORIZED: authentication required\)/,
    ],
    [
      { image: `${registry.host}/config/app:escape`, secretRef: { name: creds } },
      /KNV2004: .*leads out of the image's directory/,
    ],
    [{ image: `${registry.host}/config/app:raw`, secretRef: { name: creds } }, /KNV2004: .*not a tar archive/],
    [
      { image: `${registry.host}/config/app:v1`, dir: "not-there" },
      /KNV2004: spec.oci.dir "not-there" is not a directory of the image/,
    ],
    // go-containerregistry's words, as Config Sync's oci-sync reports an image that is no reference.
    [
      { image: `${registry.host}/Config/app:v1`, dir: "." },
      new RegExp(
        `KNV2004: failed to parse reference "${registry.host}/Config/app:v1": could not parse reference: ${registry.host}/Config/app:v1 `,
      ),
    ],
  ];
  for (const [change, pattern] of cases) {
    await updateOci(name, change);
    const error = await sourceErrorMatching(name, pattern);
    assert.equal(error["code"], "2004");
    t.diagnostic(String(error["errorMessage"]));
    const status = await rootSyncStatus(name);
    assert.equal(status["lastSyncedCommit"], hex(good), "the last synced digest stays");
    assert.ok(await configMapExists(ns, "keep"), `nothing is deleted after ${JSON.stringify(change)}`);
    assert.equal(await configMapExists(ns, "escaped"), false);
  }
});

test("the registry's push notification reaches the manager's webhook and gets the new digest synced long before the polling period", async (t) => {
  const secret = `hook-${suffix()}`;
  const manager = await startManager(t, { webhookSecret: secret });
  assert.ok(manager.webhookPort !== undefined);
  const registry = await startRegistry(t, {
    notify: { url: `http://127.0.0.1:${manager.webhookPort}/webhook`, authorization: `Bearer ${secret}` },
  });
  const namespace = await createNamespace(t, "ocihook");
  await grantRepoSyncReconciler(namespace);
  const { creds, ca } = await registrySecrets(t, registry, registry.password, namespace);
  const layer = (v: string): Buffer => tarGz([{ name: "cm.yaml", content: managedConfigMap("a", undefined, { v }) }]);
  const first = await pushImage(registry, "team/config", "live", [layer("1")]);
  await createSync(t, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace, labels: { ...manager.scope.labels } },
    spec: {
      sourceType: "oci",
      // Polling every 10 minutes: only the notification can explain a fast sync.
      oci: {
        image: `${registry.host}/team/config:live`,
        period: "10m",
        auth: "token",
        secretRef: { name: creds },
        caCertSecretRef: { name: ca },
      },
    },
  });
  await synced("RepoSync", namespace, "repo-sync", hex(first));

  const started = Date.now();
  const second = await pushImage(registry, "team/config", "live", [layer("2")]);
  await synced("RepoSync", namespace, "repo-sync", hex(second), 30_000);
  t.diagnostic(
    `push to Synced through the registry's notification: ${Date.now() - started} ms (polling period 10 min)`,
  );
  assert.deepEqual((await getObject(Mapping.ConfigMap, namespace, "a"))?.["data"], { v: "2" });
  assert.ok(
    manager.logs.some((line) => line.includes('"webhook push"') && line.includes('"registry"')),
    "the manager logged the registry's push",
  );
});

test("answers a registry's Bearer challenge by exchanging the Secret's basic credentials at its token service", async (t) => {
  const registry = await startRegistry(t, { auth: "token" });
  const tokens = registry.tokens!;
  const name = `oci-token-${suffix()}`;
  const ns = `oci-token-${suffix()}`;
  cleanUpNamespace(t, ns);
  const digest = await pushImage(registry, "config/app", "v1", [
    tarGz([
      { name: "ns.yaml", content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) },
      { name: "cm.yaml", content: configMap(ns, "through-token") },
    ]),
  ]);
  const { creds, ca } = await registrySecrets(t, registry);
  const pushed = tokens.issued();
  await createOciRootSync(name, {
    image: `${registry.host}/config/app:v1`,
    auth: "token",
    secretRef: { name: creds },
    caCertSecretRef: { name: ca },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, hex(digest));
  assert.ok(await configMapExists(ns, "through-token"));
  assert.ok(tokens.issued() > pushed, "the reconciler got its token from the token service");

  const wrong = await registrySecrets(t, registry, "not-the-password");
  await updateOci(name, { secretRef: { name: wrong.creds } });
  const error = await sourceErrorMatching(name, /KNV2004: .*rejected the credentials/);
  t.diagnostic(String(error["errorMessage"]));
  assert.ok(await configMapExists(ns, "through-token"), "nothing is deleted");
});

test("an image index is narrowed to its linux/amd64 image, whose manifest digest is the commit; one without linux/amd64 is a KNV2004 source error, as go-containerregistry refuses it", async (t) => {
  const registry = await startRegistry(t);
  const name = `oci-index-${suffix()}`;
  const ns = `oci-index-${suffix()}`;
  cleanUpNamespace(t, ns);
  const image = (arch: string): Buffer =>
    tarGz([
      { name: "ns.yaml", content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) },
      { name: "cm.yaml", content: configMap(ns, `for-${arch}`) },
    ]);
  const arm = await pushImage(registry, "config/multi", undefined, [image("arm64")], "arm64");
  const amd = await pushImage(registry, "config/multi", undefined, [image("amd64")], "amd64");
  const index = await pushIndex(registry, "config/multi", "v1", [
    { digest: arm, architecture: "arm64" },
    { digest: amd, architecture: "amd64" },
  ]);
  const { creds, ca } = await registrySecrets(t, registry);
  await createOciRootSync(name, {
    image: `${registry.host}/config/multi:v1`,
    auth: "token",
    secretRef: { name: creds },
    caCertSecretRef: { name: ca },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, hex(amd));
  assert.notEqual(hex(amd), hex(index));
  assert.ok(await configMapExists(ns, "for-amd64"));
  assert.equal(await configMapExists(ns, "for-arm64"), false);

  // Without a linux/amd64 entry go-containerregistry takes none (not the first): a source error, nothing deleted.
  await pushIndex(registry, "config/multi", "arm-only", [{ digest: arm, architecture: "arm64" }]);
  await updateOci(name, { image: `${registry.host}/config/multi:arm-only` });
  const error = await sourceErrorMatching(
    name,
    new RegExp(
      `KNV2004: failed to pull image .*: no child with platform linux/amd64 in index ${registry.host}/config/multi:arm-only`,
    ),
  );
  assert.equal(error["code"], "2004");
  assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], hex(amd));
  assert.ok(await configMapExists(ns, "for-amd64"));

  // An entry without a platform is taken to be linux/amd64, ahead of a later one saying so.
  const plain = await pushImage(registry, "config/multi", undefined, [image("plain")], "amd64");
  await pushIndex(registry, "config/multi", "unlabelled", [
    { digest: arm, architecture: "arm64" },
    { digest: plain, architecture: undefined },
    { digest: amd, architecture: "amd64" },
  ]);
  await updateOci(name, { image: `${registry.host}/config/multi:unlabelled` });
  await rootSynced(name, hex(plain));
  assert.ok(await configMapExists(ns, "for-plain"));
});

test("writes configsync.gke.io/image-to-sync (<image>@sha256:<digest>) on the RootSync after each fetch, as Config Sync does for signature-verification webhooks", async (t) => {
  const registry = await startRegistry(t);
  const name = `oci-its-${suffix()}`;
  const ns = `oci-its-${suffix()}`;
  cleanUpNamespace(t, ns);
  const layer = (data: string): Buffer =>
    tarGz([
      { name: "ns.yaml", content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) },
      { name: "cm.yaml", content: configMap(ns, data) },
    ]);
  const first = await pushImage(registry, "config/signed", "v1", [layer("first")]);
  const { creds, ca } = await registrySecrets(t, registry);
  const image = `${registry.host}/config/signed:v1`;
  await createOciRootSync(name, { image, auth: "token", secretRef: { name: creds }, caCertSecretRef: { name: ca } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, hex(first));
  const annotation = async (): Promise<string | undefined> => {
    const rs = (await customApi().getNamespacedCustomObject({
      ...rootSyncs,
      namespace: rootSyncNamespace,
      name,
    })) as { metadata: { annotations?: Record<string, string> } };
    return rs.metadata.annotations?.["configsync.gke.io/image-to-sync"];
  };
  assert.equal(await annotation(), `${image}@sha256:${hex(first)}`);

  const second = await pushImage(registry, "config/signed", "v1", [layer("second")]);
  await rootSynced(name, hex(second));
  assert.equal(await annotation(), `${image}@sha256:${hex(second)}`);
});

test("an image fixed in the spec while the pull hangs on the old registry is synced at once, as a git repository fixed is", async (t) => {
  const silent = await silentPort(t);
  const registry = await startRegistry(t);
  const name = `oci-${suffix()}`;
  const ns = `oci-${suffix()}`;
  cleanUpNamespace(t, ns);
  const digest = await pushImage(registry, "config/app", "v1", [
    tarGz([
      { name: "ns.yaml", content: yaml({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }) },
      { name: "a.yaml", content: configMap(ns, "a") },
    ]),
  ]);
  const { creds, ca } = await registrySecrets(t, registry);
  await createOciRootSync(name, { image: `127.0.0.1:${String(silent.port)}/config/app:v1`, auth: "none" });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await eventually(() => silent.connections() > 0, { what: "the pull from the silent registry begun" });

  await updateOci(name, {
    image: `${registry.host}/config/app:v1`,
    auth: "token",
    secretRef: { name: creds },
    caCertSecretRef: { name: ca },
  });
  await eventually(async () => (await rootSyncStatus(name))["lastSyncedCommit"] === hex(digest), {
    timeoutMs: 60_000,
    what: "the fixed image synced, not after the hanging pull's timeout",
  });
  assert.ok(await configMapExists(ns, "a"));
});
