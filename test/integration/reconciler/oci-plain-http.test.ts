import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { lookup } from "node:dns/promises";
import { mkdtemp, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { tarGz } from "@driftless/oci/testing";
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
  quietly,
  removeQuietly,
} from "../../support/index.ts";
import { freePort } from "../../support/registry.ts";

const run = promisify(execFile);

/** Debian's docker-registry without TLS, with htpasswd auth and its access log on, listening on `address`. */
interface PlainRegistry {
  /** `<address or name>:<port>` as an image reference writes it. */
  readonly host: string;
  readonly username: string;
  readonly password: string;
  log(): string;
}

async function startPlainRegistry(t: TestContext, address: string, name = address): Promise<PlainRegistry> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-plain-registry-"));
  const username = "puller";
  const password = `pw-${suffix()}`;
  const { stdout: htpasswd } = await run("htpasswd", ["-Bbn", username, password]);
  await writeFile(join(dir, "htpasswd"), htpasswd);
  const port = await freePort();
  const config = {
    version: 0.1,
    log: { level: "info", accesslog: { disabled: false } },
    storage: { filesystem: { rootdirectory: join(dir, "data") } },
    http: { addr: `${address}:${port}` },
    auth: { htpasswd: { realm: "driftless-test", path: join(dir, "htpasswd") } },
  };
  await writeFile(join(dir, "config.yml"), JSON.stringify(config));
  const output: string[] = [];
  const child = spawn("docker-registry", ["serve", join(dir, "config.yml")], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr.on("data", (d: Buffer) => output.push(d.toString()));
  t.after(async () => {
    child.kill("SIGTERM");
    await removeQuietly(dir);
  });
  const registry = { host: `${name}:${port}`, username, password, log: () => output.join("") };
  await eventually(async () => (await call(registry, "GET", "/v2/")).status === 200, {
    timeoutMs: 20_000,
    what: `the plain-HTTP registry on ${registry.host} to answer`,
  });
  return registry;
}

/** One plain-HTTP request to the registry as its user. */
function call(
  registry: PlainRegistry,
  method: string,
  path: string,
  body?: Buffer,
  contentType = "application/octet-stream",
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(path, `http://${registry.host}`);
  const basic = Buffer.from(`${registry.username}:${registry.password}`).toString("base64");
  const headers = {
    authorization: `Basic ${basic}`,
    ...(body === undefined ? {} : { "content-type": contentType, "content-length": String(body.length) }),
  };
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const digestOf = (data: Buffer): string => `sha256:${createHash("sha256").update(data).digest("hex")}`;

async function pushBlob(registry: PlainRegistry, repository: string, data: Buffer): Promise<string> {
  const started = await call(registry, "POST", `/v2/${repository}/blobs/uploads/`);
  assert.equal(started.status, 202, started.body);
  const location = new URL(String(started.headers["location"]), `http://${registry.host}`);
  location.searchParams.set("digest", digestOf(data));
  const done = await call(registry, "PUT", location.pathname + location.search, data);
  assert.equal(done.status, 201, done.body);
  return digestOf(data);
}

/** Pushes a one-layer OCI image as `repository:tag` over plain HTTP; returns the manifest's digest. */
async function pushImage(registry: PlainRegistry, repository: string, tag: string, layer: Buffer): Promise<string> {
  const configBlob = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers" } }));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: await pushBlob(registry, repository, configBlob),
        size: configBlob.length,
      },
      layers: [
        {
          mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
          digest: await pushBlob(registry, repository, layer),
          size: layer.length,
        },
      ],
    }),
  );
  const put = await call(
    registry,
    "PUT",
    `/v2/${repository}/manifests/${tag}`,
    manifest,
    "application/vnd.oci.image.manifest.v1+json",
  );
  assert.equal(put.status, 201, put.body);
  return digestOf(manifest);
}

/** A RootSync pulling `image` with the registry's user from a Secret (auth token). */
async function createOciRootSync(t: TestContext, name: string, image: string, registry: PlainRegistry): Promise<void> {
  const creds = `oci-creds-${suffix()}`;
  await coreApi()
    .createNamespace({ body: { metadata: { name: rootSyncNamespace } } })
    .catch((error: unknown) => {
      if (statusCode(error) !== 409) throw error;
    });
  await coreApi().createNamespacedSecret({
    namespace: rootSyncNamespace,
    body: { metadata: { name: creds }, stringData: { username: registry.username, password: registry.password } },
  });
  t.after(() =>
    quietly(`deleting Secret ${creds}`, () =>
      coreApi().deleteNamespacedSecret({ name: creds, namespace: rootSyncNamespace }),
    ),
  );
  await customApi().createNamespacedCustomObject({
    ...rootSyncs,
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace },
      spec: {
        sourceFormat: "unstructured",
        sourceType: "oci",
        oci: { image, auth: "token", secretRef: { name: creds } },
      },
    },
  });
}

function namespaceLayer(ns: string): Buffer {
  const yaml = JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  return tarGz([{ name: "ns.yaml", content: yaml }]);
}

test("an image on a plain-HTTP registry at 127.0.0.1 syncs, credentials included, as go-containerregistry falls back to http for loopback", async (t) => {
  const registry = await startPlainRegistry(t, "127.0.0.1");
  const name = `oci-http-${suffix()}`;
  const ns = `oci-http-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: ns })
      .catch(() => undefined),
  );
  const digest = await pushImage(registry, "config/app", "v1", namespaceLayer(ns));
  await createOciRootSync(t, name, `${registry.host}/config/app:v1`, registry);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  await rootSynced(name, digest.slice("sha256:".length));
  await coreApi().readNamespace({ name: ns });
  assert.match(registry.log(), /"GET \/v2\/config\/app\/manifests\/v1 HTTP\/1.1" 200/);
});

test("a registry named by a host name the rule does not cover is never asked over http, though it answers there", async (t) => {
  const name = hostname();
  const address = await lookup(name).then(
    (found) => found.address,
    () => undefined,
  );
  if (address === undefined) return t.skip(`the host name ${name} does not resolve here`);
  if (/^localhost$|\.local(host)?$|127\.0\.0\.1|::1/.test(name))
    return t.skip(`the host name ${name} is one the rule covers`);
  // Served over plain HTTP at this name: pushing through it proves an http pull would have worked.
  const registry = await startPlainRegistry(t, address, name);
  const sync = `oci-https-only-${suffix()}`;
  await pushImage(registry, "config/app", "v1", namespaceLayer(`oci-never-${suffix()}`));
  const pushed = registry.log().length;
  await createOciRootSync(t, sync, `${registry.host}/config/app:v1`, registry);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: sync });

  const error = await eventually(
    async () => {
      const source = (await rootSyncStatus(sync))["source"] as JsonObject | undefined;
      return ((source?.["errors"] ?? []) as JsonObject[]).find((e) => /KNV2004/.test(String(e["errorMessage"])));
    },
    { timeoutMs: 60_000, what: `RootSync ${sync} to report its source error` },
  );
  assert.match(String(error["errorMessage"]), /KNV2004: failed to pull image .*(EPROTO|wrong version number)/);
  assert.doesNotMatch(error["errorMessage"] as string, /over http/);
  // The access log names every HTTP request the registry served; a TLS hello is none.
  assert.doesNotMatch(registry.log().slice(pushed), /"(GET|HEAD) \/v2\//);
});
