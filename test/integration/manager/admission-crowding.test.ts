/**
 * Any pod can reach the admission port (manifests/network-policies.yaml opens it to all: the API server's
 * address is not known in general), and the webhook fails open (failurePolicy Ignore). A tenant holding
 * connections open, announcing large bodies it never sends, must not turn a refused write into an allowed one.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { connect as connectTcp, isIP, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { KubeApiError, KubeClient } from "@driftless/kube";
import { usePrivateControlPlane } from "../../support/private-control-plane.ts";
import { grantUserEdit } from "../../support/rbac.ts";
import { eventually, suffix, testEnv, TestRepo } from "../../support/index.ts";
import {
  admin,
  admissionWebhookName,
  configMap,
  createNamespace,
  createSync,
  Mapping,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

await usePrivateControlPlane();

interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly ca: string;
}

type Kind = "silent" | "idle" | "large" | "small";

/** One attacking connection: TCP without a handshake, TLS without a request, or a request whose body stalls. */
function open(endpoint: Endpoint, kind: Kind): Socket {
  const { host, port, ca } = endpoint;
  if (kind === "silent") return connectTcp(port, host);
  const socket = connectTls({ host, port, ca, ...(isIP(host) === 0 ? { servername: host } : {}) });
  if (kind === "idle") return socket;
  const length = kind === "large" ? 3 * 1024 * 1024 : 1000;
  socket.once("secureConnect", () =>
    socket.write(
      `POST /admission-webhook HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${length}\r\n\r\n{`,
    ),
  );
  return socket;
}

/**
 * Keeps `counts` connections of each kind open until the test ends, opening a new one 100 ms after one
 * closes; the large bodies trickle a byte every 200 ms. Returns how many were opened so far.
 */
function crowd(t: TestContext, endpoint: Endpoint, counts: Record<Kind, number>): () => number {
  let stopped = false;
  let opened = 0;
  const sockets = new Set<Socket>();
  const keep = (kind: Kind): void => {
    if (stopped) return;
    const socket = open(endpoint, kind);
    opened++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("close", () => {
      sockets.delete(socket);
      setTimeout(() => keep(kind), 100);
    });
    if (kind === "large") {
      const trickle = setInterval(() => socket.write(" "), 200);
      socket.once("close", () => clearInterval(trickle));
    }
  };
  for (const [kind, count] of Object.entries(counts) as [Kind, number][]) for (let i = 0; i < count; i++) keep(kind);
  t.after(() => {
    stopped = true;
    for (const socket of sockets) socket.destroy();
  });
  return () => opened;
}

async function endpointOf(client: KubeClient): Promise<Endpoint> {
  const vwc = await client.get(Mapping.ValidatingWebhookConfiguration, undefined, admissionWebhookName);
  const hook = (vwc?.["webhooks"] as { clientConfig: { url: string; caBundle: string } }[] | undefined)?.[0];
  assert.ok(hook, "the webhook configuration is written");
  const url = new URL(hook.clientConfig.url);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return { host, port: Number(url.port), ca: Buffer.from(hook.clientConfig.caBundle, "base64").toString() };
}

test("connections held open by a tenant, up to every limit of the webhook, do not let a refused deletion through", async (t) => {
  const env = testEnv();
  const adminClient = await admin();
  const user = await KubeClient.fromKubeconfig(env.userKubeconfig);
  t.after(() => user.close());
  const namespace = await createNamespace(t);
  await grantUserEdit(namespace);
  const manager = await startManager(t, { extraArgs: ["--admission-webhook-port", "0"] });
  const repo = await TestRepo.create(t);
  await repo.write("root/cm.yaml", configMap("protected", namespace, { key: "declared" }));
  const commit = await repo.commit("a ConfigMap");
  const rootName = `root-${suffix()}`;
  await createSync(t, rootSyncObject(rootName, manager.scope, { repo: repo.url, branch: repo.branch, dir: "root" }));
  await synced("RootSync", systemNamespace, rootName, commit);

  const expected = `admission webhook "${admissionWebhookName}" denied the request: ${env.userName} is not authorized to delete managed resource "_configmap_${namespace}_protected"`;
  const deletion = async (): Promise<string> => {
    try {
      await user.delete(Mapping.ConfigMap, namespace, "protected", { dryRun: true });
      return "allowed";
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 403) return error.serverMessage ?? "";
      throw error;
    }
  };
  // The configuration reaches the API server's webhook informer a moment after it is written.
  await eventually(async () => ((await deletion()) === expected ? true : undefined), {
    what: "the API server calls the webhook",
    timeoutMs: 60_000,
  });

  // Every limit at once: the byte budget (8 × 3 MiB announced), the 32 requests, the 256 connections.
  const opened = crowd(t, await endpointOf(adminClient), { large: 8, small: 32, idle: 152, silent: 64 });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const outcomes: string[] = [];
  for (let i = 0; i < 8; i++) {
    outcomes.push(await deletion());
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  t.diagnostic(
    `${opened()} attacking connections opened; deletions: ${outcomes.map((o) => o.slice(0, 40)).join(" | ")}`,
  );
  assert.deepEqual(outcomes, Array<string>(outcomes.length).fill(expected));
});
