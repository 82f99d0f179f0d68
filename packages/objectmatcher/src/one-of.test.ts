/**
 * One-of structs (a probe's or lifecycle hook's handler, an env var's source, a webhook's client config):
 * the API server accepts one member, and defaulting fills members in (`httpGet.scheme`,
 * `fieldRef.apiVersion`, `service.port`), so a member no longer declared must go whole.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPatch } from "./apply-patch.ts";
import { ONE_OF_STRUCTS } from "./facts.ts";
import type { JsonObject } from "./json.ts";
import { STRUCTS } from "./kube-facts.generated.ts";
import { packageAndType } from "./server-filled.ts";
import { maker, runScenario, withRecord } from "./testdata/harness.ts";
import type { Scenario } from "./testdata/harness.ts";

function deployment(container: JsonObject): JsonObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx", ...container }] },
      },
    },
  };
}

const PROBE_DEFAULTS = { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
const httpGet = { path: "/healthz", port: 8080 };
/** An httpGet probe as the API server stores it: `scheme` and the probe's timings filled in. */
const liveHttpGet = { httpGet: { ...httpGet, scheme: "HTTP" }, ...PROBE_DEFAULTS };

function liveContainer(o: JsonObject): JsonObject {
  const spec = (o["spec"] as JsonObject)["template"] as JsonObject;
  return ((spec["spec"] as JsonObject)["containers"] as JsonObject[])[0] ?? assert.fail();
}

const scenarios: Scenario[] = [
  {
    name: "a liveness probe switched from httpGet to tcpSocket removes httpGet whole",
    live: () => deployment({ livenessProbe: liveHttpGet }),
    declared: () => deployment({ livenessProbe: { tcpSocket: { port: 8080 } } }),
    applied: () => deployment({ livenessProbe: { httpGet } }),
    expect: "update",
    paths: [
      'spec.template.spec.containers[name="web"].livenessProbe.httpGet',
      'spec.template.spec.containers[name="web"].livenessProbe.tcpSocket',
    ],
  },
  {
    name: "a readiness probe switched from httpGet to exec removes httpGet whole",
    live: () => deployment({ readinessProbe: liveHttpGet }),
    declared: () => deployment({ readinessProbe: { exec: { command: ["true"] } } }),
    applied: () => deployment({ readinessProbe: { httpGet } }),
    expect: "update",
    paths: [
      'spec.template.spec.containers[name="web"].readinessProbe.exec',
      'spec.template.spec.containers[name="web"].readinessProbe.httpGet',
    ],
  },
  {
    name: "a preStop hook switched from httpGet to sleep removes httpGet whole",
    live: () => deployment({ lifecycle: { preStop: { httpGet: { ...httpGet, scheme: "HTTP" } } } }),
    declared: () => deployment({ lifecycle: { preStop: { sleep: { seconds: 5 } } } }),
    applied: () => deployment({ lifecycle: { preStop: { httpGet } } }),
    expect: "update",
    paths: [
      'spec.template.spec.containers[name="web"].lifecycle.preStop.httpGet',
      'spec.template.spec.containers[name="web"].lifecycle.preStop.sleep',
    ],
  },
  {
    name: "an env var switched from fieldRef to secretKeyRef removes fieldRef whole (apiVersion was defaulted)",
    live: () =>
      deployment({ env: [{ name: "X", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } }] }),
    declared: () => deployment({ env: [{ name: "X", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }),
    applied: () => deployment({ env: [{ name: "X", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }] }),
    expect: "update",
    paths: [
      'spec.template.spec.containers[name="web"].env[name="X"].valueFrom.fieldRef',
      'spec.template.spec.containers[name="web"].env[name="X"].valueFrom.secretKeyRef',
    ],
  },
  {
    name: "an adopted object's httpGet probe goes when Git declares tcpSocket, though no record names it",
    live: () => deployment({ livenessProbe: liveHttpGet }),
    declared: () => deployment({ livenessProbe: { tcpSocket: { port: 8080 } } }),
    applied: null,
    expect: "update",
    paths: [
      'spec.template.spec.containers[name="web"].livenessProbe.httpGet',
      'spec.template.spec.containers[name="web"].livenessProbe.tcpSocket',
    ],
  },
  {
    name: "an unchanged httpGet probe with its defaults filled in is a match",
    live: () => deployment({ livenessProbe: liveHttpGet }),
    declared: () => deployment({ livenessProbe: { httpGet } }),
    expect: "match",
  },
  {
    name: "a field removed from a still-declared handler is removed key by key",
    live: () => deployment({ livenessProbe: { httpGet: { ...httpGet, host: "h", scheme: "HTTP" } } }),
    declared: () => deployment({ livenessProbe: { httpGet } }),
    applied: () => deployment({ livenessProbe: { httpGet: { ...httpGet, host: "h" } } }),
    expect: "update",
    paths: ['spec.template.spec.containers[name="web"].livenessProbe.httpGet.host'],
  },
];

describe("one-of members", () => {
  for (const s of scenarios) it(`${s.expect}: ${s.name}`, () => void runScenario(s));

  it("the patch sends the switched-away handler as null, and the patched probe has one handler", () => {
    const declared = deployment({ livenessProbe: { tcpSocket: { port: 8080 } } });
    const live = withRecord(deployment({ livenessProbe: liveHttpGet }), deployment({ livenessProbe: { httpGet } }));
    const result = maker.calculate(live, declared);
    const patchedProbe = liveContainer(applyPatch(live, result))["livenessProbe"];
    assert.deepEqual(patchedProbe, { tcpSocket: { port: 8080 }, ...PROBE_DEFAULTS });
    const sent = liveContainer(result.patch)["livenessProbe"] as JsonObject;
    assert.equal(sent["httpGet"], null);
  });

  it("a webhook switched from service to url removes the service whole (port 443 was defaulted)", () => {
    const webhook = (clientConfig: JsonObject): JsonObject => ({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "v" },
      webhooks: [{ name: "a.example.com", clientConfig, sideEffects: "None", admissionReviewVersions: ["v1"] }],
    });
    const live = withRecord(
      webhook({ service: { name: "s", namespace: "n", port: 443 } }),
      webhook({ service: { name: "s", namespace: "n" } }),
    );
    const result = maker.calculate(live, webhook({ url: "https://example.com/v" }));
    const patched = applyPatch(live, result);
    const hooks = patched["webhooks"] as JsonObject[];
    assert.deepEqual(hooks[0]?.["clientConfig"], { url: "https://example.com/v" });
  });
});

describe("the one-of list", () => {
  it("names only structs the generated facts have, in some version", () => {
    const generated = new Set(Object.keys(STRUCTS).map(packageAndType));
    for (const name of ONE_OF_STRUCTS) assert.ok(generated.has(name), `${name} is not a generated struct`);
  });
});
