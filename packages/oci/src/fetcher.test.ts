import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { OciFailureReason, OciFetchError } from "./errors.ts";
import { OciFetcher, sourceDirOf } from "./fetcher.ts";

test("spec.oci.dir must stay inside the image, also through a chain of symlinks each inside lexically", async (t) => {
  const base = await mkdtemp(join(tmpdir(), "driftless-oci-dir-"));
  t.after(() => rm(base, { recursive: true, force: true }));
  const image = join(base, "image");
  await mkdir(join(image, "config"), { recursive: true });
  await symlink(".", join(image, "here"));
  await symlink("here/..", join(image, "up")); // resolves to the image's parent folder
  const spec = (dir: string) => ({ image: "registry.example/app:v1", dir });
  assert.equal(await sourceDirOf(image, spec("config")), join(image, "config"));
  // From the image's root, as Config Sync reads it, with or without a leading slash.
  assert.equal(await sourceDirOf(image, spec("/config/")), join(image, "config"));
  assert.equal(await sourceDirOf(image, spec("/")), image);
  for (const dir of ["..", "up", "up/image/up"])
    await assert.rejects(sourceDirOf(image, spec(dir)), (error: unknown) => {
      assert.ok(error instanceof OciFetchError, String(error));
      assert.equal(error.reason, OciFailureReason.DirNotFound);
      assert.match(error.message, /leads out of the image/);
      return true;
    });
});

test("a registry that sends its manifest a byte at a time fails the pull at the deadline, retryable", async (t) => {
  // Each byte comes well inside the per-request idle timeout: only the pull's own deadline ends it.
  const server = createServer((req, res) => {
    if (req.url === "/v2/") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    res.writeHead(200, { "content-type": "application/vnd.oci.image.manifest.v1+json", "content-length": "100000" });
    const drip = setInterval(() => res.write(" "), 100);
    res.on("close", () => clearInterval(drip));
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const base = await mkdtemp(join(tmpdir(), "driftless-oci-deadline-"));
  t.after(() => rm(base, { recursive: true, force: true }));
  const { port } = server.address() as { port: number };
  const fetcher = new OciFetcher({ cacheDir: base, timeoutMs: 1_000 });
  await assert.rejects(fetcher.fetch({ spec: { image: `127.0.0.1:${port}/tenant/config:v1` } }), (error: unknown) => {
    assert.ok(error instanceof OciFetchError, String(error));
    assert.equal(error.reason, OciFailureReason.Unavailable);
    assert.equal(error.errorClass, "retry");
    assert.match(
      error.message,
      /^failed to pull image 127\.0\.0\.1:\d+\/tenant\/config:v1: did not finish within 1 s$/,
    );
    return true;
  });
});

test("a registry answering 408 or 499 to the manifest fails the pull as unavailable, retryable, as go-containerregistry retries them", async (t) => {
  let status = 408;
  const server = createServer((req, res) => {
    if (req.url === "/v2/") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    res.writeHead(status, { "content-type": "text/plain" }).end("try again");
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const base = await mkdtemp(join(tmpdir(), "driftless-oci-408-"));
  t.after(() => rm(base, { recursive: true, force: true }));
  const { port } = server.address() as { port: number };
  for (const answered of [408, 499]) {
    status = answered;
    const fetcher = new OciFetcher({ cacheDir: join(base, String(answered)), timeoutMs: 10_000 });
    await assert.rejects(fetcher.fetch({ spec: { image: `127.0.0.1:${port}/tenant/config:v1` } }), (error: unknown) => {
      assert.ok(error instanceof OciFetchError, String(error));
      assert.equal(error.reason, OciFailureReason.Unavailable, `${answered}: ${error.message}`);
      assert.equal(error.errorClass, "retry", String(answered));
      return true;
    });
  }
});
