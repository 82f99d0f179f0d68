/**
 * fast-check generators for the property tests: random declarations (a Deployment, a custom
 * resource), what the API server makes of them, what other actors add, and edits inside declared paths.
 */
import fc from "fast-check";
import { isObject } from "../json.ts";
import type { JsonArray, JsonObject, JsonValue } from "../json.ts";
import { resolveKind } from "../kinds.ts";
import { isAbsent } from "../normalize.ts";
import { canonicalQuantity } from "../quantity.ts";
import { childSchema } from "../schema.ts";
import type { FieldSchema } from "../schema.ts";

const text = fc.string({ minLength: 1, maxLength: 6 });

const container = fc
  .record({
    name: fc.constantFrom("web", "api", "worker", "cache", "proxy"),
    image: fc.constantFrom("nginx:1.27", "busybox:1.36", "envoy:1.30", "redis:7"),
    env: fc.uniqueArray(fc.record({ name: fc.constantFrom("A", "B", "C", "D"), value: text }), {
      selector: (e) => e.name,
      maxLength: 3,
    }),
    ports: fc.uniqueArray(
      fc.record({ containerPort: fc.integer({ min: 1, max: 65535 }), name: fc.constantFrom("http", "metrics") }),
      {
        selector: (p) => p.containerPort,
        maxLength: 2,
      },
    ),
    args: fc.array(text, { maxLength: 3 }),
    cpu: fc.option(fc.constantFrom<string | number>("100m", "0.5", 1, "2", "1500m"), { nil: undefined }),
    memory: fc.option(fc.constantFrom("64Mi", "1Gi", "1024Mi", "512M"), { nil: undefined }),
  })
  .map(({ cpu, memory, ...c }): JsonObject => {
    const limits: JsonObject = {};
    if (cpu !== undefined) limits["cpu"] = cpu;
    if (memory !== undefined) limits["memory"] = memory;
    return { ...c, resources: { limits } };
  });

/** A Deployment declaration (labels, optional replicas and strategy, 1–3 containers). */
export const declaredDeployment: fc.Arbitrary<JsonObject> = fc
  .record({
    labels: fc.dictionary(fc.constantFrom("app", "tier", "team", "canary"), fc.string({ maxLength: 5 }), {
      maxKeys: 3,
    }),
    replicas: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
    strategy: fc.option(
      fc.constantFrom<JsonObject>({ type: "Recreate" }, { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } }),
      {
        nil: undefined,
      },
    ),
    containers: fc.uniqueArray(container, { selector: (c) => c["name"], minLength: 1, maxLength: 3 }),
  })
  .map(({ labels, replicas, strategy, containers }) => {
    const spec: JsonObject = {
      selector: { matchLabels: { app: "x" } },
      template: { metadata: { labels: { app: "x" }, creationTimestamp: null }, spec: { containers } },
    };
    if (replicas !== undefined) spec["replicas"] = replicas;
    if (strategy !== undefined) spec["strategy"] = strategy;
    return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop", labels }, spec };
  });

/** The Deployment as kube-apiserver would return it: defaults filled, quantities canonical, empties omitted. */
export function serverDeployment(declared: JsonObject): JsonObject {
  const live = structuredClone(declared);
  const metadata = live["metadata"] as JsonObject;
  Object.assign(metadata, {
    uid: "u-1",
    resourceVersion: "42",
    generation: 3,
    creationTimestamp: "2025-01-14T09:12:44Z",
  });
  if (isObject(metadata["labels"]) && Object.keys(metadata["labels"]).length === 0) delete metadata["labels"];
  const spec = live["spec"] as JsonObject;
  spec["replicas"] ??= 1;
  spec["revisionHistoryLimit"] = 10;
  spec["progressDeadlineSeconds"] = 600;
  const strategy = (spec["strategy"] ??= { type: "RollingUpdate" }) as JsonObject;
  if (strategy["type"] === "RollingUpdate")
    strategy["rollingUpdate"] = {
      maxSurge: "25%",
      maxUnavailable: "25%",
      ...(strategy["rollingUpdate"] as JsonObject),
    };
  const pod = (spec["template"] as JsonObject)["spec"] as JsonObject;
  Object.assign(pod, {
    restartPolicy: "Always",
    dnsPolicy: "ClusterFirst",
    schedulerName: "default-scheduler",
    securityContext: {},
  });
  for (const c of pod["containers"] as JsonObject[]) {
    Object.assign(c, {
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
      imagePullPolicy: "IfNotPresent",
    });
    for (const p of c["ports"] as JsonObject[]) p["protocol"] = "TCP";
    for (const field of ["args", "env", "ports"]) if ((c[field] as JsonArray).length === 0) delete c[field];
    const limits = (c["resources"] as JsonObject)["limits"] as JsonObject;
    for (const [k, v] of Object.entries(limits)) limits[k] = canonicalQuantity(v) ?? v;
    if (Object.keys(limits).length === 0) c["resources"] = {};
  }
  live["status"] = { observedGeneration: 3, replicas: spec["replicas"] };
  return live;
}

/** What other actors do to a Deployment: none of it touches a declared path. */
export const othersOnDeployment = fc.record({
  labels: fc.dictionary(fc.constantFrom("other.io/a", "other.io/b"), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
  annotations: fc.dictionary(fc.constantFrom("other.io/c", "deployment.kubernetes.io/revision"), text, { maxKeys: 2 }),
  finalizers: fc.subarray(["other.io/f1", "other.io/f2"]),
  sidecar: fc.constantFrom("none", "first", "last"),
  injectedEnv: fc.boolean(),
  injectedVolume: fc.boolean(),
  extraContainerField: fc.boolean(),
  autoscaledReplicas: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
  reverseContainers: fc.boolean(),
});
export type OthersOnDeployment = typeof othersOnDeployment extends fc.Arbitrary<infer T> ? T : never;

export function applyOthers(live: JsonObject, declared: JsonObject, others: OthersOnDeployment): JsonObject {
  const metadata = live["metadata"] as JsonObject;
  metadata["labels"] = { ...(metadata["labels"] as JsonObject | undefined), ...others.labels };
  metadata["annotations"] = { ...(metadata["annotations"] as JsonObject | undefined), ...others.annotations };
  if (others.finalizers.length) metadata["finalizers"] = others.finalizers;
  const spec = live["spec"] as JsonObject;
  if (others.autoscaledReplicas !== undefined && (declared["spec"] as JsonObject)["replicas"] === undefined) {
    spec["replicas"] = others.autoscaledReplicas;
  }
  const pod = (spec["template"] as JsonObject)["spec"] as JsonObject;
  const containers = pod["containers"] as JsonObject[];
  for (const c of containers) {
    if (others.injectedEnv)
      c["env"] = [...((c["env"] as JsonArray | undefined) ?? []), { name: "INJECTED", value: "1" }];
    if (others.extraContainerField) c["stdin"] = true;
  }
  if (others.injectedVolume) {
    pod["volumes"] = [
      { name: "kube-api-access-x", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } },
    ];
    for (const c of containers)
      c["volumeMounts"] = [{ name: "kube-api-access-x", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }];
  }
  if (others.reverseContainers) containers.reverse();
  const sidecar = {
    name: "istio-proxy",
    image: "istio/proxyv2:1.22",
    ports: [{ containerPort: 15090, protocol: "TCP" }],
  };
  if (others.sidecar === "first") containers.unshift(sidecar);
  if (others.sidecar === "last") containers.push(sidecar);
  return live;
}

const crKey = fc.constantFrom("a", "b", "c", "d", "e");
const crLeaf = fc.oneof(text, fc.integer({ min: -3, max: 3 }), fc.boolean());
const { crValue } = fc.letrec<{ crValue: JsonValue }>((tie) => ({
  crValue: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    crLeaf,
    fc.array(crLeaf, { maxLength: 3 }),
    fc.dictionary(crKey, tie("crValue"), { maxKeys: 3 }),
  ),
}));

/** A custom resource declaration with a random spec. */
export const declaredCustomResource: fc.Arbitrary<JsonObject> = fc
  .dictionary(crKey, crValue, { minKeys: 1, maxKeys: 4 })
  .map((spec) => ({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "shop" }, spec }));

/** Keys other actors (or schema defaults) add to maps of a custom resource: never one we declare. */
export const othersOnCustomResource = fc.array(fc.tuple(fc.nat(), crLeaf), { maxLength: 4 });

export function applyOthersToCustomResource(
  live: JsonObject,
  additions: readonly (readonly [number, JsonValue])[],
): JsonObject {
  const maps: JsonObject[] = [];
  const collect = (value: JsonValue | undefined): void => {
    if (!isObject(value)) return;
    maps.push(value);
    for (const key of Object.keys(value).sort()) collect(value[key]);
  };
  collect(live["spec"]);
  additions.forEach(([pick, value], i) => {
    const target = maps[pick % maps.length];
    if (target) target[`x${i}`] = value;
  });
  Object.assign(live["metadata"] as JsonObject, { uid: "u-2", resourceVersion: "7", finalizers: ["other.io/cleanup"] });
  live["status"] = { ready: true };
  return live;
}

/** A path to a declared value: field names and keyed-list items (by their first merge key). */
export type DeclaredPath = readonly (string | { readonly field: string; readonly value: JsonValue })[];

/** Every declared leaf: scalars and atomic lists, reached through maps and keyed lists. */
export function declaredLeaves(declared: JsonObject): DeclaredPath[] {
  const kind = resolveKind(String(declared["apiVersion"]), String(declared["kind"]));
  const out: DeclaredPath[] = [];
  const walk = (value: JsonValue, schema: FieldSchema | undefined, path: DeclaredPath): void => {
    if (isAbsent(value, schema)) return;
    if (isObject(value)) {
      for (const key of Object.keys(value)) {
        if (path.length === 0 && (key === "apiVersion" || key === "kind")) continue;
        walk(value[key] ?? null, childSchema(schema, key), [...path, key]);
      }
    } else if (Array.isArray(value) && schema?.list === "map" && schema.keys?.[0]) {
      const field = schema.keys[0];
      for (const item of value)
        if (isObject(item)) walk(item, schema.items, [...path, { field, value: item[field] ?? null }]);
    } else out.push(path);
  };
  walk(declared, kind.schema, []);
  return out;
}

/** Changes the live value at a declared path to something different, or deletes it. */
export function editLive(live: JsonObject, path: DeclaredPath, mode: "change" | "delete"): boolean {
  let node: JsonValue = live;
  for (const segment of path.slice(0, -1)) {
    if (typeof segment === "string") node = isObject(node) ? (node[segment] ?? null) : null;
    else
      node = Array.isArray(node)
        ? (node.find((item) => isObject(item) && item[segment.field] === segment.value) ?? null)
        : null;
  }
  const last = path[path.length - 1];
  if (!isObject(node) || typeof last !== "string" || !(last in node)) return false;
  if (mode === "delete") delete node[last];
  else node[last] = different(node[last] ?? null);
  return true;
}

function different(value: JsonValue): JsonValue {
  if (typeof value === "string") return `${value}x`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (Array.isArray(value)) return [...value, "extra"];
  return "changed";
}
