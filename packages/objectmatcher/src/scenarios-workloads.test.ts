import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { declaredDeployment, liveDeployment } from "./testdata/deployment.ts";
import { at, edit, list, runScenario } from "./testdata/harness.ts";
import type { Scenario } from "./testdata/harness.ts";
import { declaredPod, livePod } from "./testdata/pod.ts";
import { declaredStatefulSet, liveStatefulSet } from "./testdata/statefulset.ts";

const container = (o: Parameters<typeof at>[0], i = 0) => at(o, `spec.template.spec.containers.${i}`);

const deployment: Scenario[] = [
  {
    name: "matches the defaulted server response (quantities, null timestamps, empty lists, status, managedFields)",
    live: liveDeployment,
    declared: declaredDeployment,
    expect: "match",
  },
  {
    name: "matches without a last-applied record (adopting an existing object)",
    live: liveDeployment,
    declared: declaredDeployment,
    applied: null,
    expect: "match",
  },
  {
    name: "ignores replicas left to an autoscaler",
    live: () => edit(liveDeployment(), (o) => (at(o, "spec")["replicas"] = 7)),
    declared: () => edit(declaredDeployment(), (o) => delete at(o, "spec")["replicas"]),
    expect: "match",
  },
  {
    name: "ignores a sidecar, its volume, env and mounts injected by a mesh, and the order they were put in",
    live: () =>
      edit(liveDeployment(), (o) => {
        list(o, "spec.template.spec.containers").unshift({ name: "istio-proxy", image: "istio/proxyv2:1.22" });
        list(o, "spec.template.spec.volumes").unshift({ name: "istio-envoy", emptyDir: { medium: "Memory" } });
        list(o, "spec.template.spec.containers.1.env").unshift({ name: "ISTIO_META", value: "1" });
        at(o, "spec.template.metadata")["annotations"] = { "sidecar.istio.io/status": "{}" };
      }),
    declared: declaredDeployment,
    expect: "match",
  },
  {
    name: "ignores labels, annotations and finalizers other actors add",
    live: () =>
      edit(liveDeployment(), (o) => {
        at(o, "metadata.labels")["team"] = "checkout";
        at(o, "metadata.annotations")["argocd.argoproj.io/sync-wave"] = "1";
        at(o, "metadata")["finalizers"] = ["example.com/protect"];
      }),
    declared: declaredDeployment,
    expect: "match",
  },
  {
    name: "updates when someone changed a declared image",
    live: () => edit(liveDeployment(), (o) => (container(o)["image"] = "nginx:1.25")),
    declared: declaredDeployment,
    expect: "update",
    paths: ['spec.template.spec.containers[name="web"].image'],
  },
  {
    name: "updates when the declared replicas change",
    live: liveDeployment,
    declared: () => edit(declaredDeployment(), (o) => (at(o, "spec")["replicas"] = 5)),
    expect: "update",
    paths: ["spec.replicas"],
  },
  {
    name: "updates when a declared env var was deleted live",
    live: () => edit(liveDeployment(), (o) => (container(o)["env"] = [])),
    declared: declaredDeployment,
    expect: "update",
    paths: ['spec.template.spec.containers[name="web"].env[name="MODE"]'],
  },
  {
    name: "updates to remove an env var dropped from the declaration",
    live: liveDeployment,
    declared: () => edit(declaredDeployment(), (o) => delete container(o)["env"]),
    applied: declaredDeployment,
    expect: "update",
    paths: ['spec.template.spec.containers[name="web"].env[name="MODE"]'],
  },
  {
    name: "updates to remove a container dropped from the declaration",
    live: () =>
      edit(liveDeployment(), (o) =>
        list(o, "spec.template.spec.containers").push({ name: "exporter", image: "exporter:1" }),
      ),
    declared: declaredDeployment,
    applied: () =>
      edit(declaredDeployment(), (o) =>
        list(o, "spec.template.spec.containers").push({ name: "exporter", image: "exporter:1" }),
      ),
    expect: "update",
    paths: ['spec.template.spec.containers[name="exporter"]'],
  },
  {
    name: "updates to remove a label dropped from the declaration, keeping others' labels",
    live: () => edit(liveDeployment(), (o) => Object.assign(at(o, "metadata.labels"), { tier: "frontend", team: "x" })),
    declared: declaredDeployment,
    applied: () => edit(declaredDeployment(), (o) => (at(o, "metadata.labels")["tier"] = "frontend")),
    expect: "update",
    paths: ["metadata.labels.tier"],
  },
  {
    name: "does not re-remove a field already gone from the live object",
    live: liveDeployment,
    declared: declaredDeployment,
    applied: () => edit(declaredDeployment(), (o) => (at(o, "metadata.labels")["tier"] = "frontend")),
    expect: "match",
  },
  {
    name: "updates when a declared list without merge key (args) is reordered live",
    live: () => edit(liveDeployment(), (o) => (container(o)["args"] = ["--b", "--a"])),
    declared: () => edit(declaredDeployment(), (o) => (container(o)["args"] = ["--a", "--b"])),
    expect: "update",
    paths: ['spec.template.spec.containers[name="web"].args'],
  },
  {
    name: "updates when a quantity really changed (500m → 1)",
    live: () => edit(liveDeployment(), (o) => (at(o, "spec.template.spec.containers.0.resources.limits")["cpu"] = "1")),
    declared: declaredDeployment,
    expect: "update",
    paths: ['spec.template.spec.containers[name="web"].resources.limits.cpu'],
  },
  {
    name: "switching the strategy to Recreate is an update",
    live: liveDeployment,
    declared: () => edit(declaredDeployment(), (o) => (at(o, "spec")["strategy"] = { type: "Recreate" })),
    expect: "update",
    paths: ["spec.strategy.type"],
  },
  {
    name: "ignores a field another controller owns when asked to",
    live: () =>
      edit(
        liveDeployment(),
        (o) => (at(o, "spec.template.metadata.annotations")["kubectl.kubernetes.io/restartedAt"] = "now"),
      ),
    declared: () =>
      edit(
        declaredDeployment(),
        (o) => (at(o, "spec.template.metadata.annotations")["kubectl.kubernetes.io/restartedAt"] = "then"),
      ),
    options: { ignoreFields: [["spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"]] },
    expect: "match",
  },
  {
    name: "ignores replicas by dotted path when asked to, even where declared",
    live: () => edit(liveDeployment(), (o) => (at(o, "spec")["replicas"] = 9)),
    declared: declaredDeployment,
    options: { ignoreFields: ["spec.replicas"] },
    expect: "match",
  },
  {
    name: "compares status when ignoreStatus is off",
    live: liveDeployment,
    declared: () => edit(declaredDeployment(), (o) => (o["status"] = { replicas: 2 })),
    options: { ignoreStatus: false },
    expect: "update",
    paths: ["status.replicas"],
  },
  {
    name: "a declared false is satisfied by its omission (Go omitempty)",
    live: liveDeployment,
    declared: () => edit(declaredDeployment(), (o) => (at(o, "spec.template.spec")["hostNetwork"] = false)),
    expect: "match",
  },
  {
    name: "writes allowPrivilegeEscalation: false added in a new commit to a container that has a securityContext",
    live: () => edit(liveDeployment(), (o) => (container(o)["securityContext"] = { runAsNonRoot: true })),
    declared: () =>
      edit(
        declaredDeployment(),
        (o) => (container(o)["securityContext"] = { runAsNonRoot: true, allowPrivilegeEscalation: false }),
      ),
    applied: () => edit(declaredDeployment(), (o) => (container(o)["securityContext"] = { runAsNonRoot: true })),
    expect: "update",
    paths: ['spec.template.spec.containers[name="web"].securityContext.allowPrivilegeEscalation'],
  },
  {
    name: "writes a declared false to pointer fields the server keeps (automountServiceAccountToken, hostUsers, shareProcessNamespace, privileged, readOnlyRootFilesystem)",
    live: liveDeployment,
    declared: () =>
      edit(declaredDeployment(), (o) => {
        Object.assign(at(o, "spec.template.spec"), {
          automountServiceAccountToken: false,
          hostUsers: false,
          shareProcessNamespace: false,
        });
        container(o)["securityContext"] = { privileged: false, readOnlyRootFilesystem: false };
      }),
    expect: "update",
    paths: [
      "spec.template.spec.automountServiceAccountToken",
      'spec.template.spec.containers[name="web"].securityContext',
      "spec.template.spec.hostUsers",
      "spec.template.spec.shareProcessNamespace",
    ],
  },
  {
    name: "a pointer field already false live matches its declared false",
    live: () => edit(liveDeployment(), (o) => (at(o, "spec.template.spec")["automountServiceAccountToken"] = false)),
    declared: () =>
      edit(declaredDeployment(), (o) => (at(o, "spec.template.spec")["automountServiceAccountToken"] = false)),
    expect: "match",
  },
];

const pod: Scenario[] = [
  {
    name: "ignores the service-account token volume and mount, default tolerations and admission defaults",
    live: livePod,
    declared: declaredPod,
    expect: "match",
  },
  {
    name: "ignores default tolerations when none were declared",
    live: livePod,
    declared: () => edit(declaredPod(), (o) => delete at(o, "spec")["tolerations"]),
    expect: "match",
  },
  {
    name: "updates when a declared toleration changed",
    live: livePod,
    declared: () => edit(declaredPod(), (o) => (at(o, "spec.tolerations.0")["value"] = "ops")),
    expect: "update",
    paths: ["spec.tolerations"],
  },
  {
    name: "updates when someone added a toleration of their own to the declared list",
    live: () => edit(livePod(), (o) => list(o, "spec.tolerations").push({ key: "gpu", operator: "Exists" })),
    declared: declaredPod,
    expect: "update",
    paths: ["spec.tolerations"],
  },
  {
    name: "updates when the declared command changed",
    live: livePod,
    declared: () => edit(declaredPod(), (o) => (at(o, "spec.containers.0")["command"] = ["sleep", "3600"])),
    expect: "update",
    paths: ['spec.containers[name="shell"].command'],
  },
];

const statefulSet: Scenario[] = [
  {
    name: "ignores the type meta, volumeMode and status filled into volumeClaimTemplates",
    live: liveStatefulSet,
    declared: declaredStatefulSet,
    expect: "match",
  },
  {
    name: "updates when a volume claim template's request changed",
    live: liveStatefulSet,
    declared: () =>
      edit(
        declaredStatefulSet(),
        (o) => (at(o, "spec.volumeClaimTemplates.0.spec.resources.requests")["storage"] = "20Gi"),
      ),
    expect: "update",
    paths: ["spec.volumeClaimTemplates"],
  },
  {
    name: "updates when a declared volumeMode differs from the filled one",
    live: liveStatefulSet,
    declared: () =>
      edit(declaredStatefulSet(), (o) => (at(o, "spec.volumeClaimTemplates.0.spec")["volumeMode"] = "Block")),
    expect: "update",
    paths: ["spec.volumeClaimTemplates"],
  },
  {
    name: "updates when the container port changed",
    live: liveStatefulSet,
    declared: () =>
      edit(declaredStatefulSet(), (o) => (at(o, "spec.template.spec.containers.0.ports.0")["containerPort"] = 5433)),
    expect: "update",
    paths: ['spec.template.spec.containers[name="postgres"].ports[containerPort=5433,protocol="TCP"]'],
  },
];

for (const [kind, scenarios] of [
  ["Deployment", deployment],
  ["Pod", pod],
  ["StatefulSet", statefulSet],
] as const) {
  describe(`${kind} scenarios`, () => {
    for (const s of scenarios) it(`${s.expect === "match" ? "match" : "update"}: ${s.name}`, () => void runScenario(s));
  });
}

describe("Deployment patches", () => {
  it("a strategy switch clears rollingUpdate through $retainKeys", () => {
    const result = runScenario(deployment.find((s) => s.name.startsWith("switching the strategy")) ?? assert.fail());
    assert.deepEqual(result.patch, { spec: { strategy: { type: "Recreate", $retainKeys: ["type"] } } });
  });
});
