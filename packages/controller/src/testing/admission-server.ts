/** What the admission server's tests share: a server on loopback with a test CA, and a review it refuses. */
import type { TestContext } from "node:test";
import type { ConnectionLimits } from "@driftless/metrics";
import { createLogger } from "@driftless/sync";
import type { AdmissionLimits } from "../admission-capacity.ts";
import { issueWebhookCertificates } from "../admission-cert.ts";
import type { AdmissionLookups } from "../admission-review.ts";
import { serveAdmission, type AdmissionServer } from "../admission-server.ts";

const certs = issueWebhookCertificates({ hosts: ["127.0.0.1"], lifetimeMs: 24 * 60 * 60 * 1000 });
/** What a client trusts to reach the server. */
export const testTls = { ca: certs.caCert };

/** The admission server on a free loopback port, closed when the test ends. */
export async function serveTestAdmission(
  t: TestContext,
  limits: Partial<AdmissionLimits> = {},
  connectionLimits: Partial<ConnectionLimits> = {},
  lookups: AdmissionLookups = { namespaceTerminating: () => Promise.resolve(false) },
): Promise<AdmissionServer> {
  const server = await serveAdmission({
    port: 0,
    host: "127.0.0.1",
    tls: { cert: certs.tlsCert, key: certs.tlsKey },
    lookups,
    log: createLogger({ component: "test" }, { level: "error" }),
    limits,
    connectionLimits,
  });
  t.after(() => server.close());
  return server;
}

/** A user's deletion of a managed ConfigMap in namespace ns: the real decision is a refusal. */
export function managedConfigMapDeletion(uid: string): string {
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "", version: "v1", kind: "ConfigMap" },
      operation: "DELETE",
      namespace: "ns",
      userInfo: { username: "alice" },
      oldObject: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "cm",
          namespace: "ns",
          annotations: {
            "configmanagement.gke.io/managed": "enabled",
            "configsync.gke.io/resource-id": "_configmap_ns_cm",
          },
        },
      },
    },
  });
}
