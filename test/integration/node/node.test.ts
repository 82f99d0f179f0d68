/**
 * The local cluster's node (`cluster:up --with-node`): a kubelet on containerd + runc, a CNI bridge,
 * kube-proxy and kube-scheduler on a control plane of this file's own. A pod made from an image built
 * here is scheduled, runs, reaches the apiserver through the `kubernetes` Service with its own
 * ServiceAccount token, and reports Ready; `down` leaves nothing of the node on the host.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  busyboxImageName,
  defaultCrdDir,
  down,
  findRepoRoot,
  importImage,
  isAlive,
  listNodeChains,
  mountsUnder,
  podCgroups,
  nodeContainerdSocket,
  nodeNetwork,
  nodeRuntimeDir,
  releaseNodeSlot,
  up,
  writeBusyboxImage,
} from "@driftless/local-cluster";
import type { V1Pod } from "@kubernetes/client-node";
import { eventually } from "../../support/eventually.ts";
import { coreApi, statusCode, testNamespace } from "../../support/kube.ts";
import { usePrivateControlPlane } from "../../support/private-control-plane.ts";
import { removeAfter } from "../../support/index.ts";

const { stateDir, cluster } = await usePrivateControlPlane({ withNode: true });

test("the node registers and is Ready", async () => {
  const node = await coreApi().readNode({ name: nodeNetwork.nodeName });
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  assert.equal(ready?.status, "True", `node conditions: ${JSON.stringify(node.status?.conditions)}`);
  assert.ok(node.status?.addresses?.some((a) => a.type === "InternalIP" && a.address === nodeNetwork.bridgeAddress));
});

test("cluster:up again leaves the running node alone", async () => {
  const again = await up({ stateDir, crdDir: defaultCrdDir(findRepoRoot()), detached: false, withNode: true });
  assert.deepEqual(
    again.processes.map((p) => p.pid),
    cluster.processes.map((p) => p.pid),
  );
});

test("a pod from a locally built image runs, reaches the apiserver through the kubernetes Service, and is Ready", async (t) => {
  const work = await mkdtemp(join(tmpdir(), "driftless-node-test-"));
  removeAfter(t, work);
  const archive = join(work, "busybox.tar");
  await writeBusyboxImage(archive);
  assert.deepEqual(await importImage(archive), [busyboxImageName]);

  const namespace = await testNamespace(t, "node");
  const core = coreApi();
  // Asks the apiserver who the pod is, at the Service address the kubelet hands it, with the
  // ServiceAccount token it mounts; Ready only once the answer names the pod's ServiceAccount.
  const script = [
    'echo "service=$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"',
    "token=$(cat /var/run/secrets/kubernetes.io/serviceaccount/token)",
    'until wget -q -O /tmp/whoami --no-check-certificate --header "Authorization: Bearer $token" ' +
      "--header 'Content-Type: application/json' " +
      '--post-data \'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}\' ' +
      '"https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/apis/authentication.k8s.io/v1/selfsubjectreviews"; do sleep 1; done',
    "cat /tmp/whoami; echo",
    "exec sleep 3600",
  ].join("\n");
  const pod: V1Pod = {
    metadata: { name: "whoami", namespace },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: "whoami",
          image: busyboxImageName,
          imagePullPolicy: "Never",
          command: ["sh", "-c", script],
          readinessProbe: {
            exec: { command: ["grep", "-q", "system:serviceaccount", "/tmp/whoami"] },
            periodSeconds: 1,
          },
        },
      ],
    },
  };
  // The ServiceAccount admission plugin refuses pods until the namespace's "default" account exists.
  await eventually(
    async () => {
      try {
        return await core.createNamespacedPod({ namespace, body: pod });
      } catch (error) {
        if (statusCode(error) === 403) return undefined;
        throw error;
      }
    },
    { what: "the pod to be admitted" },
  );

  const running = await eventually(
    async () => {
      const p = await core.readNamespacedPod({ name: "whoami", namespace });
      const ready = p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
      return ready === true ? p : undefined;
    },
    { timeoutMs: 90_000, what: "the pod to be Ready" },
  );
  assert.equal(running.spec?.nodeName, nodeNetwork.nodeName);
  assert.match(running.status?.podIP ?? "", /^10\.88\./);

  // Logs come from the kubelet through the apiserver, which authenticates to it with its client certificate.
  const log = await core.readNamespacedPodLog({ name: "whoami", namespace, container: "whoami" });
  assert.match(log, new RegExp(`service=${nodeNetwork.kubernetesServiceIp.replaceAll(".", "\\.")}:443`));
  assert.match(log, new RegExp(`"username":\\s*"system:serviceaccount:${namespace}:default"`));
});

test("cluster down leaves no containers, network namespaces, bridge, iptables chains, mounts or pod cgroups", async (t) => {
  const node = cluster.node;
  assert.ok(node !== undefined);
  const netnsBefore = podNetns();
  assert.ok(netnsBefore.length > 0, "the pod's sandbox holds a network namespace before down");
  const shimsBefore = processesUsing(nodeContainerdSocket);
  assert.ok(shimsBefore.length > 0, "container shims run before down");

  // The slot stays ours until the checks are done: a test file waiting for the node would otherwise
  // start its own bridge, chains and cgroups in between.
  t.after(() => releaseNodeSlot(stateDir));
  await down(stateDir, { releaseNodeSlot: false });

  for (const p of node.processes) assert.equal(isAlive(p.pid), false, `${p.name} (${p.pid}) still runs`);
  assert.deepEqual(processesUsing(nodeContainerdSocket), [], "containerd shims left");
  assert.deepEqual(
    netnsBefore.filter((ns) => existsSync(ns)),
    [],
    "pod network namespaces left",
  );
  assert.equal(existsSync(`/sys/class/net/${nodeNetwork.bridge}`), false, "the bridge is left");
  assert.deepEqual(await listNodeChains(), [], "iptables chains left");
  assert.deepEqual(await mountsUnder([stateDir, nodeRuntimeDir]), [], "mounts left");
  assert.deepEqual(await podCgroups(), [], "pod cgroups left");
  assert.equal(readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim(), node.hostSettings.ipForward);
});

/** Network namespaces containerd's CRI plugin made for pod sandboxes. */
function podNetns(): string[] {
  const dir = "/var/run/netns";
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.startsWith("cni-"))
    .map((name) => join(dir, name));
}

/** Pids whose command line names the path (the shims of the node's containerd carry its socket). */
function processesUsing(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(path)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
