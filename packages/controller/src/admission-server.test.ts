import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:https";
import { X509Certificate } from "node:crypto";
import { createLogger } from "@driftless/sync";
import { issueWebhookCertificates } from "./admission-cert.ts";
import { AdmissionWebhookPath, serveAdmission } from "./admission-server.ts";
import { managedConfigMapDeletion } from "./testing/admission-server.ts";

const day = 24 * 60 * 60 * 1000;

/** One request over TLS trusting `ca`; the status, the body and the certificate the server presented. */
function call(port: number, ca: string, method: string, path: string, body?: string) {
  return new Promise<{ status: number; body: string; cert: string }>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, ca, agent: false, headers: { "content-type": "application/json" } },
      (res) => {
        const raw = (res.socket as unknown as { getPeerCertificate(): { raw: Buffer } }).getPeerCertificate().raw;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body: text, cert: new X509Certificate(raw).serialNumber });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

test("the endpoint answers AdmissionReviews over TLS, refuses anything else, and swaps its certificate live", async (t) => {
  const first = issueWebhookCertificates({ hosts: ["127.0.0.1"], lifetimeMs: day });
  const server = await serveAdmission({
    port: 0,
    host: "127.0.0.1",
    tls: { cert: first.tlsCert, key: first.tlsKey },
    lookups: { namespaceTerminating: (namespace) => Promise.resolve(namespace === "leaving") },
    log: createLogger({ component: "test" }, { level: "error" }),
  });
  t.after(() => server.close());

  const review = managedConfigMapDeletion("u-1");
  const refused = await call(server.port, first.caCert, "POST", AdmissionWebhookPath, review);
  assert.equal(refused.status, 200);
  assert.deepEqual(JSON.parse(refused.body), {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: {
      uid: "u-1",
      allowed: false,
      status: {
        code: 403,
        reason: "Forbidden",
        message: 'alice is not authorized to delete managed resource "_configmap_ns_cm"',
      },
    },
  });
  // The same deletion in a namespace being deleted: the namespace controller must be able to empty it.
  const leaving = JSON.parse(review) as {
    request: { namespace?: string; oldObject: { metadata: Record<string, unknown> } };
  };
  leaving.request.namespace = "leaving";
  leaving.request.oldObject.metadata["namespace"] = "leaving";
  leaving.request.oldObject.metadata["annotations"] = {
    "configmanagement.gke.io/managed": "enabled",
    "configsync.gke.io/resource-id": "_configmap_leaving_cm",
  };
  const letThrough = await call(server.port, first.caCert, "POST", AdmissionWebhookPath, JSON.stringify(leaving));
  assert.deepEqual(JSON.parse(letThrough.body).response, { uid: "u-1", allowed: true });
  assert.equal((await call(server.port, first.caCert, "GET", AdmissionWebhookPath)).status, 405);
  assert.equal((await call(server.port, first.caCert, "POST", "/other", review)).status, 404);
  assert.equal((await call(server.port, first.caCert, "POST", AdmissionWebhookPath, "{not json")).status, 400);
  assert.equal((await call(server.port, first.caCert, "POST", AdmissionWebhookPath, "{}")).status, 400);

  const second = issueWebhookCertificates({ hosts: ["127.0.0.1"], lifetimeMs: day });
  server.setCertificate({ cert: second.tlsCert, key: second.tlsKey });
  const after = await call(server.port, second.caCert + first.caCert, "POST", AdmissionWebhookPath, review);
  assert.equal(after.cert, new X509Certificate(second.tlsCert).serialNumber);
  await assert.rejects(call(server.port, first.caCert, "POST", AdmissionWebhookPath, review), /certificate/);
});
