/**
 * The shipped Redis (manifests/redis.yaml, manager.yaml): its password only in a Secret, memory
 * bounded with the policy BullMQ needs, and a NetworkPolicy that lets in the manager and the
 * reconciler pods the manager creates, by the labels they really carry. The manifests are checked
 * by the API server (strict dry-run), and the Redis container's start script runs against a real
 * redis-server.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createConnection } from "node:net";
import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { parseSync, type RSync } from "@driftless/api";
import { reconcilerDeployment } from "@driftless/controller";
import type { KubeObject } from "@driftless/kube";
import { findRepoRoot, freeLoopbackPort } from "@driftless/local-cluster";
import { closeRedisConnection, createRedisConnection, withRedisPassword } from "@driftless/queue";
import { eventually, removeAfter } from "../../support/index.ts";
import { admin, applyManifest, mappingOf } from "../manager/helpers.ts";

const repoRoot = findRepoRoot();
const secretName = "driftless-redis";

async function manifest(file: string): Promise<KubeObject[]> {
  const text = await readFile(join(repoRoot, "manifests", file), "utf8");
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

function byKind(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found === undefined) throw new Error(`no ${kind} ${name ?? ""}`);
  return found;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  resources?: { limits?: Record<string, string> };
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[] };
}
const templateOf = (deployment: KubeObject): PodTemplate => (deployment["spec"] as { template: PodTemplate }).template;

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case "Exists":
        return value !== undefined;
      case "DoesNotExist":
        return value === undefined;
      case "In":
        return value !== undefined && (e.values ?? []).includes(value);
      case "NotIn":
        return value === undefined || !(e.values ?? []).includes(value);
      default:
        throw new Error(`unknown operator ${e.operator}`);
    }
  });
  return byLabel && byExpression;
}

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

test("Redis admits only the manager and the reconciler pods the manager creates", async () => {
  const redis = await manifest("redis.yaml");
  const policy = byKind(redis, "NetworkPolicy");
  const spec = policy["spec"] as {
    podSelector: LabelSelector;
    policyTypes: string[];
    ingress: { from: { podSelector?: LabelSelector; namespaceSelector?: unknown }[]; ports: unknown[] }[];
  };
  assert.ok(selects(spec.podSelector, templateOf(byKind(redis, "Deployment", "redis")).metadata.labels));
  assert.deepEqual(spec.policyTypes, ["Ingress"]);
  const admitted = (labels: Record<string, string>): boolean =>
    spec.ingress.some((rule) =>
      rule.from.some((peer) => peer.namespaceSelector === undefined && selects(peer.podSelector ?? {}, labels)),
    );

  const manager = templateOf(byKind(await manifest("manager.yaml"), "Deployment", "reconciler-manager"));
  assert.ok(admitted(manager.metadata.labels), "the manager is not admitted");
  for (const kind of ["RootSync", "RepoSync"] as const) {
    const deployment = reconcilerDeployment(sync(kind), {
      image: "driftless:test",
      redisUrl: "redis://redis:6379",
      queuePrefix: undefined,
      logLevel: "info",
    });
    assert.ok(admitted(templateOf(deployment).metadata.labels), `a ${kind} reconciler pod is not admitted`);
  }
  const strangers: Record<string, string>[] = [
    {},
    { "app.kubernetes.io/name": "reconciler-manager" }, // not ours: part-of is missing
    { "app.kubernetes.io/managed-by": "reconciler-manager" }, // a ServiceAccount's labels, on a pod
    { "app.kubernetes.io/name": "redis", "app.kubernetes.io/part-of": "driftless" },
  ];
  for (const labels of strangers) assert.equal(admitted(labels), false, `admitted ${JSON.stringify(labels)}`);
});

test("the Redis admin password lives in one Secret, read by Redis and the manager only: reconcilers get users of their own", async () => {
  const redisContainer = templateOf(byKind(await manifest("redis.yaml"), "Deployment", "redis")).spec.containers[0];
  const managerContainer = templateOf(byKind(await manifest("manager.yaml"), "Deployment", "reconciler-manager")).spec
    .containers[0];
  assert.ok(redisContainer !== undefined && managerContainer !== undefined);
  const fromSecret = (env: EnvVar[] | undefined, name: string): unknown =>
    env?.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
  assert.deepEqual(fromSecret(redisContainer.env, "REDISCLI_AUTH"), { name: secretName, key: "password" });
  assert.deepEqual(fromSecret(managerContainer.env, "REDIS_PASSWORD"), { name: secretName, key: "password" });
  const plain = Object.fromEntries((managerContainer.env ?? []).map((e) => [e.name, e.value]));
  assert.ok(
    !Object.keys(plain).some((name) => name.startsWith("RECONCILER_REDIS_SECRET")),
    "reconciler pods would be given the admin password's Secret",
  );
  assert.equal(new URL(plain["REDIS_URL"] ?? "").password, "", "REDIS_URL holds a password");
  assert.ok(
    !JSON.stringify([managerContainer.command, managerContainer.args]).includes("redis"),
    "the manager's command line names Redis",
  );
  const script = (redisContainer.args ?? []).join("\n");
  assert.match(script, /--maxmemory \d+mb/);
  assert.match(script, /--maxmemory-policy noeviction/);
  assert.match(script, /requirepass/);
  assert.ok(!script.includes("--requirepass"), "the password would be on Redis's command line");
  const limit = redisContainer.resources?.limits?.["memory"] ?? "";
  // Redis's `mb` is MiB.
  const maxmemoryMiB = Number(/--maxmemory (\d+)mb/.exec(script)?.[1]);
  assert.ok(Number(/^(\d+)Mi$/.exec(limit)?.[1]) >= 1.4 * maxmemoryMiB, `memory limit ${limit} leaves no headroom`);
});

test("the API server accepts the shipped Redis and manager manifests as they are (strict dry-run)", async () => {
  await applyManifest("namespace.yaml");
  const client = await admin();
  for (const file of ["redis.yaml", "manager.yaml"]) {
    for (const obj of await manifest(file)) {
      const m = await mappingOf(obj.apiVersion, obj.kind);
      await client.patch(m, obj.metadata.namespace, obj.metadata.name, obj, "apply", {
        fieldManager: "driftless-tests",
        force: true,
        dryRun: true,
        fieldValidation: "Strict",
      });
    }
  }
});

test("the Redis container's start script requires the Secret's password, whatever its characters, and keeps it off the command line", async (t) => {
  const redisContainer = templateOf(byKind(await manifest("redis.yaml"), "Deployment", "redis")).spec.containers[0];
  assert.deepEqual(redisContainer?.command, ["sh", "-c"]);
  const dir = await mkdtemp(join(tmpdir(), "driftless-redis-script-"));
  removeAfter(t, dir);
  const port = await freeLoopbackPort();
  // The pod's /data is this test's folder; its port and loopback address keep it to this test.
  const script = (redisContainer?.args?.[0] ?? "")
    .replaceAll("/data/", `${dir}/`)
    .replace("--maxmemory-policy noeviction", `--maxmemory-policy noeviction --port ${port} --bind 127.0.0.1`);
  const password = `a "quoted" back\\slash $dollar 'single' ${"x".repeat(8)}`;
  const child = spawn("sh", ["-c", script], {
    stdio: "ignore",
    env: { PATH: process.env["PATH"], REDISCLI_AUTH: password },
  });
  t.after(() => {
    child.kill("SIGKILL");
  });

  const url = withRedisPassword(`redis://127.0.0.1:${port}`, password);
  const authed = createRedisConnection(url, { role: "worker", log: () => undefined });
  t.after(() => closeRedisConnection(authed));
  await eventually(async () => (await authed.ping().catch(() => "")) === "PONG", {
    what: "redis-server from the script",
  });
  assert.deepEqual(await authed.config("GET", "maxmemory-policy"), ["maxmemory-policy", "noeviction"]);
  assert.deepEqual(await authed.config("GET", "maxmemory"), ["maxmemory", String(256 * 2 ** 20)]);
  assert.equal(((await stat(join(dir, "redis.conf"))).mode & 0o777).toString(8), "600");

  assert.match(await rawReply(port, "SET k v"), /^-NOAUTH/);
  const cmdline = await readFile(`/proc/${child.pid}/cmdline`, "utf8");
  assert.ok(
    !cmdline.includes(password) && !cmdline.includes("dollar"),
    `the password is on the command line: ${cmdline}`,
  );
});

/** One inline command on a fresh connection, and the first line of the reply. */
function rawReply(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => socket.write(`${command}\r\n`));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().split("\r\n")[0] ?? "");
    });
    socket.once("error", reject);
  });
}
