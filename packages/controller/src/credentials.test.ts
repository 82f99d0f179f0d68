import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readClusterAccess } from "./credentials.ts";

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
