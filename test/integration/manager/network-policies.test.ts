/**
 * The NetworkPolicies of manifests/network-policies.yaml against the pods they are for, by the labels
 * and ports those pods really carry: the manager's (manager.yaml) and the reconcilers' (the Deployment
 * the manager writes). The API server's strict dry-run of every manifest is in rbac.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { parseSync, type RSync } from "@driftless/api";
import { reconcilerDeployment, ReconcilerMetricsPort } from "@driftless/controller";
import type { KubeObject } from "@driftless/kube";
import { findRepoRoot } from "@driftless/local-cluster";
import { selects, type LabelSelector } from "../../support/label-selector.ts";

const manifests = join(findRepoRoot(), "manifests");
const monitoring = { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } };

async function manifest(file: string): Promise<KubeObject[]> {
  const text = await readFile(join(manifests, file), "utf8");
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: unknown;
}
interface PolicySpec {
  podSelector: LabelSelector;
  policyTypes: string[];
  ingress: { from?: Peer[]; ports: { protocol: string; port: number }[] }[];
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: { ports?: { name: string; containerPort: number }[] }[] };
}

async function policy(name: string): Promise<PolicySpec> {
  const found = (await manifest("network-policies.yaml")).find(
    (o) => o.kind === "NetworkPolicy" && o.metadata.name === name,
  );
  assert.ok(found, `no NetworkPolicy ${name}`);
  assert.equal(found.metadata.namespace, "config-management-system");
  return found["spec"] as PolicySpec;
}

/** Who may reach `port`: "anyone", or the peers of the rules naming it. */
function sourcesOf(spec: PolicySpec, port: number): "anyone" | Peer[] {
  const rules = spec.ingress.filter((r) => r.ports.some((p) => p.port === port && p.protocol === "TCP"));
  assert.ok(rules.length > 0, `no rule for port ${port}`);
  if (rules.some((r) => r.from === undefined)) return "anyone";
  return rules.flatMap((r) => r.from ?? []);
}

const templateOf = (deployment: KubeObject): PodTemplate => (deployment["spec"] as { template: PodTemplate }).template;
const portsOf = (template: PodTemplate): Record<string, number> =>
  Object.fromEntries(template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => [p.name, p.containerPort])));

function sync(kind: "RootSync" | "RepoSync"): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind,
    metadata: { name: "sales", namespace: kind === "RootSync" ? "config-management-system" : "team-a" },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" } },
  });
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("; "));
  return parsed.value;
}

const reconcilerPods = (["RootSync", "RepoSync"] as const).map((kind) =>
  templateOf(
    reconcilerDeployment(sync(kind), {
      image: "driftless:test",
      redisUrl: "redis://redis:6379",
      queuePrefix: undefined,
      logLevel: "info",
    }),
  ),
);

test("the manager's pods: webhook and admission ports open, metrics only from the monitoring namespace", async () => {
  const spec = await policy("reconciler-manager");
  const manager = templateOf(
    (await manifest("manager.yaml")).find((o) => o.kind === "Deployment" && o.metadata.name === "reconciler-manager")!,
  );
  assert.ok(selects(spec.podSelector, manager.metadata.labels), "the policy does not select the manager's pods");
  for (const pod of reconcilerPods) assert.equal(selects(spec.podSelector, pod.metadata.labels), false);
  assert.deepEqual(spec.policyTypes, ["Ingress"], "egress (Redis, API server, DNS, Git) must stay open");
  const ports = portsOf(manager);
  assert.equal(sourcesOf(spec, ports["webhook"] ?? 0), "anyone");
  assert.equal(sourcesOf(spec, ports["admission"] ?? 0), "anyone");
  assert.deepEqual(sourcesOf(spec, ports["metrics"] ?? 0), [{ namespaceSelector: monitoring }]);
  const covered = new Set(spec.ingress.flatMap((r) => r.ports.map((p) => p.port)));
  assert.deepEqual([...covered].sort(), Object.values(ports).sort(), "a rule for a port the pod does not serve");
});

test("reconciler pods: only the metrics port, only from the monitoring namespace", async () => {
  const spec = await policy("reconcilers");
  const manager = templateOf(
    (await manifest("manager.yaml")).find((o) => o.kind === "Deployment" && o.metadata.name === "reconciler-manager")!,
  );
  const redis = templateOf(
    (await manifest("redis.yaml")).find((o) => o.kind === "Deployment" && o.metadata.name === "redis")!,
  );
  for (const pod of reconcilerPods) {
    assert.ok(selects(spec.podSelector, pod.metadata.labels), JSON.stringify(pod.metadata.labels));
    assert.deepEqual(portsOf(pod), { metrics: ReconcilerMetricsPort });
  }
  assert.equal(selects(spec.podSelector, manager.metadata.labels), false);
  assert.equal(selects(spec.podSelector, redis.metadata.labels), false);
  assert.deepEqual(spec.policyTypes, ["Ingress"]);
  assert.equal(spec.ingress.length, 1);
  assert.deepEqual(sourcesOf(spec, ReconcilerMetricsPort), [{ namespaceSelector: monitoring }]);
});

test("resource-group-controller pods: only the metrics port its probes use, only from the monitoring namespace", async () => {
  const objects = await manifest("resource-group-controller.yaml");
  const found = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === "resource-group-controller");
  assert.ok(found, "no NetworkPolicy resource-group-controller");
  const spec = found["spec"] as PolicySpec;
  const deployment = objects.find((o) => o.kind === "Deployment")!;
  assert.equal(found.metadata.namespace, deployment.metadata.namespace);
  const pod = templateOf(deployment);
  assert.ok(selects(spec.podSelector, pod.metadata.labels), "the policy does not select its pods");
  assert.deepEqual(spec.policyTypes, ["Ingress"]);
  assert.deepEqual(portsOf(pod), { metrics: 8080 });
  assert.equal(spec.ingress.length, 1);
  assert.deepEqual(sourcesOf(spec, 8080), [{ namespaceSelector: monitoring }]);
});
