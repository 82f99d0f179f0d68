import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, chown, link, lstat, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readClusterAccess, writeToken } from "./credentials.ts";

test("reads the current context's server and CA (inline, or a file relative to the kubeconfig)", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "cluster-access-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "ca.crt"), "PEM");
  const kubeconfig = join(dir, "config");
  await writeFile(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "current-context: b",
      "contexts:",
      "  - {name: a, context: {cluster: one, user: u}}",
      "  - {name: b, context: {cluster: two, user: u}}",
      "clusters:",
      "  - {name: one, cluster: {server: 'https://one:6443', certificate-authority-data: QQ==}}",
      "  - {name: two, cluster: {server: 'https://two:6443', certificate-authority: ca.crt, insecure-skip-tls-verify: true}}",
      "users: [{name: u, user: {token: t}}]",
    ].join("\n"),
  );
  assert.deepEqual(readClusterAccess(kubeconfig), {
    server: "https://two:6443",
    caData: Buffer.from("PEM").toString("base64"),
    insecureSkipTlsVerify: true,
  });
  await writeFile(kubeconfig, "current-context: x\ncontexts: []\nclusters: []\n");
  assert.throws(() => readClusterAccess(kubeconfig), /has no current context/);
});

test(
  "writes a token into a file of its own, never into a temporary file another local user made first",
  { skip: process.getuid?.() !== 0 },
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "token-file-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const nobody = 65534; // another local user
    const token = join(dir, "token");
    // Their file where the manager used to write (token.<pid>.tmp), and a hard link they keep to read it later.
    const planted = `${token}.${process.pid}.tmp`;
    await writeFile(planted, "");
    await chown(planted, nobody, nobody);
    await chmod(planted, 0o666);
    const stolen = join(dir, "stolen");
    await link(planted, stolen);

    await writeToken(token, "secret-token");

    assert.equal(await readFile(token, "utf8"), "secret-token");
    const stats = await lstat(token);
    assert.equal(stats.uid, process.getuid?.());
    assert.equal(stats.mode & 0o777, 0o600);
    assert.equal(await readFile(stolen, "utf8"), "", "the token went into the other user's file");
  },
);
