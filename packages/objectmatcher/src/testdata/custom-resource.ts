/** A cert-manager Certificate (a custom resource) as declared and as the API server returns it. */
import type { JsonObject } from "../json.ts";

export function declaredCertificate(): JsonObject {
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: { name: "web-tls", namespace: "shop" },
    spec: {
      secretName: "web-tls",
      dnsNames: ["shop.example.com", "www.shop.example.com"],
      issuerRef: { name: "letsencrypt", kind: "ClusterIssuer", group: "cert-manager.io" },
      usages: ["digital signature", "key encipherment"],
    },
  };
}

export function liveCertificate(): JsonObject {
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: {
      name: "web-tls",
      namespace: "shop",
      uid: "51a3b0a4-1d61-4c09-93a5-0b1f64f0c2de",
      resourceVersion: "88120",
      generation: 1,
      creationTimestamp: "2025-01-14T09:12:44Z",
    },
    spec: {
      secretName: "web-tls",
      dnsNames: ["shop.example.com", "www.shop.example.com"],
      issuerRef: { name: "letsencrypt", kind: "ClusterIssuer", group: "cert-manager.io" },
      usages: ["digital signature", "key encipherment"],
      // Defaulted by the CRD schema.
      privateKey: { rotationPolicy: "Always" },
    },
    status: {
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "Ready",
          message: "Certificate is up to date and has not expired",
          lastTransitionTime: "2025-01-14T09:13:02Z",
          observedGeneration: 1,
        },
      ],
      notAfter: "2025-04-14T08:13:01Z",
      notBefore: "2025-01-14T08:13:02Z",
      renewalTime: "2025-03-15T08:13:01Z",
      revision: 1,
    },
  };
}
