/**
 * A real distribution registry (Debian's docker-registry) for a test, on loopback with TLS (an
 * openssl-made certificate) and htpasswd basic auth, optionally notifying a webhook of pushes; and a
 * pusher that uploads blobs and PUTs manifests through the registry's own API.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { promisify } from "node:util";
import { eventually } from "./eventually.ts";
import { startTokenService, type TokenService } from "./registry-token.ts";
import { removeQuietly } from "./cleanup.ts";

const run = promisify(execFile);

export interface RegistryOptions {
  /** `htpasswd` (default): Basic challenges. `token`: Bearer challenges answered by a token service. */
  readonly auth?: "htpasswd" | "token";
  /** Where the registry POSTs its notifications, and the Authorization header it sends along. */
  readonly notify?: { readonly url: string; readonly authorization: string };
}

export interface Registry {
  /** `127.0.0.1:<port>`, the host part of image references. */
  readonly host: string;
  readonly username: string;
  readonly password: string;
  /** PEM of the self-signed certificate the registry serves (its own CA). */
  readonly caCert: string;
  readonly caFile: string;
  /** The registry's log so far (for failure messages). */
  log(): string;
  /** With auth `token`: the token service's realm and how many tokens it issued. */
  readonly tokens?: TokenService;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** A self-signed certificate for 127.0.0.1 and localhost. */
export async function selfSignedCert(dir: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
    "-keyout",
    key,
    "-out",
    cert,
  ]);
  return { cert, key };
}

export async function startRegistry(t: TestContext, options: RegistryOptions = {}): Promise<Registry> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-registry-"));
  const { cert, key } = await selfSignedCert(dir);
  const username = "puller";
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const { stdout: htpasswd } = await run("htpasswd", ["-Bbn", username, password]);
  await writeFile(join(dir, "htpasswd"), htpasswd);
  const port = await freePort();
  const notify = options.notify;
  const tokens =
    options.auth === "token" ? await startTokenService(t, { cert, key }, { username, password }) : undefined;
  const config = {
    version: 0.1,
    log: { level: "info", accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: join(dir, "data") }, delete: { enabled: true } },
    http: { addr: `127.0.0.1:${port}`, tls: { certificate: cert, key } },
    auth:
      tokens === undefined
        ? { htpasswd: { realm: "driftless-test", path: join(dir, "htpasswd") } }
        : {
            token: { realm: tokens.realm, service: tokens.service, issuer: tokens.issuer, rootcertbundle: cert },
          },
    ...(notify === undefined
      ? {}
      : {
          notifications: {
            endpoints: [
              {
                name: "driftless",
                url: notify.url,
                headers: { Authorization: [notify.authorization] },
                timeout: "2s",
                threshold: 5,
                backoff: "1s",
              },
            ],
          },
        }),
  };
  // JSON is YAML: the registry reads this as its config file.
  await writeFile(join(dir, "config.yml"), JSON.stringify(config));
  const output: string[] = [];
  const child: ChildProcess = spawn("docker-registry", ["serve", join(dir, "config.yml")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  t.after(async () => {
    child.kill("SIGTERM");
    await removeQuietly(dir);
  });
  const registry: Registry = {
    host: `127.0.0.1:${port}`,
    username,
    password,
    caCert: await readFile(cert, "utf8"),
    caFile: cert,
    log: () => output.join(""),
    ...(tokens === undefined ? {} : { tokens }),
  };
  await eventually(async () => (await call(registry, "GET", "/v2/")).status === 200, {
    timeoutMs: 20_000,
    what: `the registry on ${registry.host} to answer`,
  }).catch((error: unknown) => {
    throw new Error(`${String(error)}; the registry's log: ${registry.log()}`);
  });
  return registry;
}

interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** One request to the registry as its user: basic auth, or the bearer token a Bearer challenge asks for. */
export async function call(
  registry: Registry,
  method: string,
  path: string,
  body?: Buffer,
  headers: Readonly<Record<string, string>> = {},
): Promise<Reply> {
  const basic = `Basic ${Buffer.from(`${registry.username}:${registry.password}`).toString("base64")}`;
  const first = await send(registry, method, path, body, { ...headers, authorization: basic });
  const challenge = String(first.headers["www-authenticate"] ?? "");
  if (first.status !== 401 || !challenge.startsWith("Bearer ")) return first;
  const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const tokenUrl = new URL(String(params["realm"]));
  for (const key of ["service", "scope"])
    if (params[key] !== undefined) tokenUrl.searchParams.set(key, String(params[key]));
  const answer = await send(registry, "GET", tokenUrl.toString(), undefined, { authorization: basic });
  const { token } = JSON.parse(answer.body.toString()) as { token: string };
  return send(registry, method, path, body, { ...headers, authorization: `Bearer ${token}` });
}

function send(
  registry: Registry,
  method: string,
  path: string,
  body: Buffer | undefined,
  headers: Readonly<Record<string, string>>,
): Promise<Reply> {
  const url = path.startsWith("https://") ? new URL(path) : new URL(`https://${registry.host}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca: registry.caCert,
        headers: { ...(body === undefined ? {} : { "content-length": body.length }), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const digestOf = (data: Buffer): string => `sha256:${createHash("sha256").update(data).digest("hex")}`;

async function pushBlob(registry: Registry, repository: string, data: Buffer): Promise<string> {
  const digest = digestOf(data);
  const started = await call(registry, "POST", `/v2/${repository}/blobs/uploads/`);
  if (started.status !== 202) throw new Error(`blob upload start: ${started.status} ${started.body.toString()}`);
  const location = new URL(String(started.headers["location"]), `https://${registry.host}`);
  location.searchParams.set("digest", digest);
  const done = await call(registry, "PUT", location.toString(), data, { "content-type": "application/octet-stream" });
  if (done.status !== 201) throw new Error(`blob upload: ${done.status} ${done.body.toString()}`);
  return digest;
}

/**
 * Pushes an image of the given layers (tar, tar+gzip or tar+zstd) as `repository:tag` (`tag` undefined: by its
 * digest only); returns the manifest digest.
 */
export async function pushImage(
  registry: Registry,
  repository: string,
  tag: string | undefined,
  layers: readonly Buffer[],
  architecture = "amd64",
): Promise<string> {
  const configBlob = Buffer.from(
    JSON.stringify({ architecture, os: "linux", rootfs: { type: "layers", diff_ids: [] } }),
  );
  const config = {
    mediaType: "application/vnd.oci.image.config.v1+json",
    digest: await pushBlob(registry, repository, configBlob),
    size: configBlob.length,
  };
  const layerDescriptors = [];
  for (const layer of layers) {
    const gzipped = layer[0] === 0x1f && layer[1] === 0x8b;
    const zstd = layer.length >= 4 && layer.readUInt32LE(0) === 0xfd2fb528;
    const compression = gzipped ? "+gzip" : zstd ? "+zstd" : "";
    layerDescriptors.push({
      mediaType: `application/vnd.oci.image.layer.v1.tar${compression}`,
      digest: await pushBlob(registry, repository, layer),
      size: layer.length,
    });
  }
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config,
      layers: layerDescriptors,
    }),
  );
  return putManifest(registry, repository, tag, "application/vnd.oci.image.manifest.v1+json", manifest);
}

async function putManifest(
  registry: Registry,
  repository: string,
  tag: string | undefined,
  mediaType: string,
  manifest: Buffer,
): Promise<string> {
  const digest = digestOf(manifest);
  const put = await call(registry, "PUT", `/v2/${repository}/manifests/${tag ?? digest}`, manifest, {
    "content-type": mediaType,
  });
  if (put.status !== 201) throw new Error(`manifest upload: ${put.status} ${put.body.toString()}`);
  return digest;
}

/** Pushes an image index naming already pushed manifests, one per platform (none: undefined); returns the index's digest. */
export async function pushIndex(
  registry: Registry,
  repository: string,
  tag: string,
  manifests: readonly { readonly digest: string; readonly architecture: string | undefined }[],
): Promise<string> {
  const entries = [];
  for (const { digest, architecture } of manifests) {
    const got = await call(registry, "GET", `/v2/${repository}/manifests/${digest}`, undefined, {
      accept: "application/vnd.oci.image.manifest.v1+json",
    });
    entries.push({
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      digest,
      size: got.body.length,
      ...(architecture === undefined ? {} : { platform: { os: "linux", architecture } }),
    });
  }
  const index = Buffer.from(
    JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: entries }),
  );
  return putManifest(registry, repository, tag, "application/vnd.oci.image.index.v1+json", index);
}
