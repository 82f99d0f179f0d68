import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { kubeconfigNamespace, loadNativeConnection, StaticCredentials, TokenFileCredentials } from "./kubeconfig.ts";

async function kubeconfig(
  user: Record<string, unknown>,
  cluster: Record<string, unknown> = {},
): Promise<{ file: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), "kubeconfig-test-"));
  const file = join(dir, "config");
  await writeFile(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "c",
      contexts: [
        { name: "other", context: { cluster: "x", user: "x" } },
        { name: "c", context: { cluster: "k", user: "u" } },
      ],
      clusters: [{ name: "k", cluster: { server: "https://127.0.0.1:6443", ...cluster } }],
      users: [{ name: "u", user }],
    }),
  );
  return { file, dir };
}

void describe("loadNativeConnection", () => {
  void it("reads the current context's server, CA data and static token", async () => {
    const { file, dir } = await kubeconfig(
      { token: "t0k3n" },
      { "certificate-authority-data": Buffer.from("PEM-CA").toString("base64") },
    );
    try {
      const conn = loadNativeConnection(file);
      assert.ok(conn !== undefined);
      assert.equal(conn.endpoint.port, 6443);
      assert.equal(conn.tls.ca, "PEM-CA");
      assert.ok(conn.credentials instanceof StaticCredentials);
      assert.deepEqual(conn.credentials.headers(), { Authorization: "Bearer t0k3n" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it("resolves relative file references against the kubeconfig's folder and re-reads token files", async () => {
    const { file, dir } = await kubeconfig(
      { tokenFile: "token", "client-certificate": "cert.pem", "client-key": "key.pem" },
      { "certificate-authority": "ca.pem", "insecure-skip-tls-verify": true },
    );
    try {
      await writeFile(join(dir, "token"), "first\n");
      await writeFile(join(dir, "ca.pem"), "CA");
      await writeFile(join(dir, "cert.pem"), "CERT");
      await writeFile(join(dir, "key.pem"), "KEY");
      const conn = loadNativeConnection(file);
      assert.ok(conn !== undefined && conn.credentials instanceof TokenFileCredentials);
      assert.deepEqual(
        [conn.tls.ca, conn.tls.cert, conn.tls.key, conn.tls.rejectUnauthorized],
        ["CA", "CERT", "KEY", false],
      );
      assert.deepEqual(conn.credentials.headers(), { Authorization: "Bearer first" });
      await writeFile(join(dir, "token"), "rotated\n");
      assert.deepEqual(await conn.credentials.refresh(), { Authorization: "Bearer rotated" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it("leaves exec plugins and auth providers to client-node", async () => {
    const { file, dir } = await kubeconfig({
      exec: { apiVersion: "client.authentication.k8s.io/v1", command: "gke-gcloud-auth-plugin" },
    });
    try {
      assert.equal(loadNativeConnection(file), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it("refuses proxy-url rather than ignoring it", async () => {
    const { file, dir } = await kubeconfig({ token: "t" }, { "proxy-url": "http://proxy:3128" });
    try {
      assert.throws(() => loadNativeConnection(file), /proxy-url/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

void describe("kubeconfigNamespace", () => {
  void it("reads the current context's namespace, and nothing when it names none or the file is missing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kubeconfig-test-"));
    try {
      const write = async (name: string, namespace?: string): Promise<string> => {
        const file = join(dir, name);
        const context = { cluster: "k", user: "u", ...(namespace === undefined ? {} : { namespace }) };
        await writeFile(
          file,
          stringify({
            "current-context": "c",
            contexts: [
              { name: "other", context: { cluster: "k", user: "u", namespace: "not-this" } },
              { name: "c", context },
            ],
          }),
        );
        return file;
      };
      assert.equal(kubeconfigNamespace(await write("with", "team-a")), "team-a");
      assert.equal(kubeconfigNamespace(await write("without")), undefined);
      assert.equal(kubeconfigNamespace(join(dir, "missing")), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
