import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  declaredConfigMap,
  declaredNamespace,
  declaredSecret,
  liveConfigMap,
  liveNamespace,
  liveSecret,
} from "./testdata/configmap.ts";
import { at, edit, list, obj, runScenario } from "./testdata/harness.ts";
import type { Scenario } from "./testdata/harness.ts";
import { declaredClusterRole, liveClusterRole } from "./testdata/rbac.ts";
import { declaredService, liveService } from "./testdata/service.ts";

const service: Scenario[] = [
  {
    name: "matches the allocated clusterIPs, ipFamilies, defaulted targetPort and protocol",
    live: liveService,
    declared: declaredService,
    expect: "match",
  },
  {
    name: "matches a targetPort declared as a numeric string (int-or-string)",
    live: liveService,
    declared: () => edit(declaredService(), (o) => (at(o, "spec.ports.0")["targetPort"] = "8080")),
    expect: "match",
  },
  {
    name: "matches a port declared with the default protocol spelled out",
    live: liveService,
    declared: () => edit(declaredService(), (o) => (at(o, "spec.ports.0")["protocol"] = "TCP")),
    expect: "match",
  },
  {
    name: "ignores the nodePort allocated for a NodePort Service",
    live: () =>
      edit(liveService(), (o) => {
        at(o, "spec")["type"] = "NodePort";
        at(o, "spec.ports.0")["nodePort"] = 31380;
        at(o, "spec")["externalTrafficPolicy"] = "Cluster";
      }),
    declared: () => edit(declaredService(), (o) => (at(o, "spec")["type"] = "NodePort")),
    expect: "match",
  },
  {
    name: "updates when the declared port changed",
    live: liveService,
    declared: () => edit(declaredService(), (o) => (at(o, "spec.ports.0")["port"] = 8080)),
    expect: "update",
    paths: ['spec.ports[port=8080,protocol="TCP"]'],
  },
  {
    name: "updates to remove a port dropped from the declaration",
    live: liveService,
    declared: () => edit(declaredService(), (o) => list(o, "spec.ports").pop()),
    applied: declaredService,
    expect: "update",
    paths: ['spec.ports[port=9090,protocol="TCP"]'],
  },
  {
    name: "updates when the selector drifted",
    live: () => edit(liveService(), (o) => (at(o, "spec.selector")["app"] = "other")),
    declared: declaredService,
    expect: "update",
    paths: ["spec.selector.app"],
  },
  {
    name: "a UDP port with the same number is a different port",
    live: liveService,
    declared: () =>
      edit(declaredService(), (o) => list(o, "spec.ports").push({ name: "dns", port: 80, protocol: "UDP" })),
    expect: "update",
    paths: ['spec.ports[port=80,protocol="UDP"]'],
  },
];

const configMap: Scenario[] = [
  {
    name: "matches the stored ConfigMap (an empty value is a value)",
    live: liveConfigMap,
    declared: declaredConfigMap,
    expect: "match",
  },
  {
    name: "ignores keys others added",
    live: () => edit(liveConfigMap(), (o) => (obj(o, "data")["extra"] = "x")),
    declared: declaredConfigMap,
    expect: "match",
  },
  {
    name: "updates when a value drifted",
    live: () => edit(liveConfigMap(), (o) => (obj(o, "data")["LOG_LEVEL"] = "debug")),
    declared: declaredConfigMap,
    expect: "update",
    paths: ["data.LOG_LEVEL"],
  },
  {
    name: "writes immutable: false (a pointer field the server keeps) to a ConfigMap that lacks it",
    live: liveConfigMap,
    declared: () => edit(declaredConfigMap(), (o) => (o["immutable"] = false)),
    applied: declaredConfigMap,
    expect: "update",
    paths: ["immutable"],
  },
  {
    name: "updates when a declared empty value was deleted live",
    live: () => edit(liveConfigMap(), (o) => delete obj(o, "data")["EMPTY"]),
    declared: declaredConfigMap,
    expect: "update",
    paths: ["data.EMPTY"],
  },
  {
    name: "updates to remove a key dropped from the declaration",
    live: liveConfigMap,
    declared: () => edit(declaredConfigMap(), (o) => delete obj(o, "data")["LOG_LEVEL"]),
    applied: declaredConfigMap,
    expect: "update",
    paths: ["data.LOG_LEVEL"],
  },
];

const secret: Scenario[] = [
  {
    name: "matches stringData against the stored base64 data, and wrapped base64",
    live: liveSecret,
    declared: declaredSecret,
    expect: "match",
  },
  {
    name: "matches without a record (no stringData ever comes back)",
    live: liveSecret,
    declared: declaredSecret,
    applied: null,
    expect: "match",
  },
  {
    name: "updates when a stringData value changed",
    live: liveSecret,
    declared: () => edit(declaredSecret(), (o) => (obj(o, "stringData")["password"] = "rotated")),
    expect: "update",
    paths: ["data.password"],
  },
  {
    name: "updates when the stored data was tampered with",
    live: () => edit(liveSecret(), (o) => (obj(o, "data")["username"] = "YWRtaW4=")),
    declared: declaredSecret,
    expect: "update",
    paths: ["data.username"],
  },
  {
    name: "updates to remove a key dropped from the declaration",
    live: liveSecret,
    declared: () => edit(declaredSecret(), (o) => delete obj(o, "stringData")["username"]),
    applied: declaredSecret,
    expect: "update",
    paths: ["data.username"],
  },
];

const namespace: Scenario[] = [
  {
    name: "ignores the kubernetes.io/metadata.name label, spec.finalizers and status.phase",
    live: liveNamespace,
    declared: declaredNamespace,
    expect: "match",
  },
  {
    name: "updates when a declared label drifted",
    live: () => edit(liveNamespace(), (o) => (at(o, "metadata.labels")["team"] = "payments")),
    declared: declaredNamespace,
    expect: "update",
    paths: ["metadata.labels.team"],
  },
];

const clusterRole: Scenario[] = [
  {
    name: 'matches the stored rules (apiGroups [""] is the core group)',
    live: liveClusterRole,
    declared: declaredClusterRole,
    expect: "match",
  },
  {
    name: "updates when someone added a verb (rules compare whole)",
    live: () => edit(liveClusterRole(), (o) => list(o, "rules.0.verbs").push("delete")),
    declared: declaredClusterRole,
    expect: "update",
    paths: ["rules"],
  },
  {
    name: "updates when a rule was dropped from the declaration",
    live: liveClusterRole,
    declared: () => edit(declaredClusterRole(), (o) => list(o, "rules").pop()),
    applied: declaredClusterRole,
    expect: "update",
    paths: ["rules"],
  },
  {
    name: "updates when the rules were reordered",
    live: () => edit(liveClusterRole(), (o) => list(o, "rules").reverse()),
    declared: declaredClusterRole,
    expect: "update",
    paths: ["rules"],
  },
  {
    name: "ignores rules an aggregation controller fills in when only aggregationRule is declared",
    live: () =>
      edit(liveClusterRole(), (o) => {
        o["aggregationRule"] = { clusterRoleSelectors: [{ matchLabels: { "shop.example.com/aggregate": "true" } }] };
      }),
    declared: () =>
      edit(declaredClusterRole(), (o) => {
        o["rules"] = [];
        o["aggregationRule"] = { clusterRoleSelectors: [{ matchLabels: { "shop.example.com/aggregate": "true" } }] };
      }),
    applied: null,
    expect: "match",
  },
];

for (const [kind, scenarios] of [
  ["Service", service],
  ["ConfigMap", configMap],
  ["Secret", secret],
  ["Namespace", namespace],
  ["ClusterRole", clusterRole],
] as const) {
  describe(`${kind} scenarios`, () => {
    for (const s of scenarios) it(`${s.expect}: ${s.name}`, () => void runScenario(s));
  });
}

describe("core patches", () => {
  it("removes a dropped Service port with $patch: delete by merge key", () => {
    const result = runScenario(service.find((s) => s.name.startsWith("updates to remove a port")) ?? assert.fail());
    assert.equal(result.patchType, "strategic-merge");
    assert.deepEqual(result.patch, { spec: { ports: [{ port: 9090, protocol: "TCP", $patch: "delete" }] } });
  });

  it("sends a changed Secret value as base64 data", () => {
    const result = runScenario(secret.find((s) => s.name.startsWith("updates when a stringData")) ?? assert.fail());
    assert.deepEqual(result.patch, { data: { password: Buffer.from("rotated").toString("base64") } });
  });
});
