/**
 * The ResourceGroup status controller's watches by kind (kind-watches.ts) under a CRD deleted and created again.
 */
import { test } from "node:test";
import { KubeClient, RestMapper, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { createLogger } from "@driftless/sync";
import { KindWatches } from "../../../packages/controller/src/resource-group-status/kind-watches.ts";
import { eventually, suffix, testNamespace } from "../../support/index.ts";
import { startApiProxy } from "../fault/api-proxy.ts";
import { adminClient, crdEstablished, crds } from "../kube/support.ts";

function boltCrd(group: string, version: string): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `bolts.${group}` },
    spec: {
      group,
      names: { kind: "Bolt", plural: "bolts", singular: "bolt" },
      scope: "Namespaced",
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

const bolts = (group: string, version: string): ResourceMapping => ({
  group,
  version,
  kind: "Bolt",
  resource: "bolts",
  namespaced: true,
  verbs: [],
});

test("a listed kind whose CRD is created again at another version is read at that version, where a 404 of the old watch after the CRD's event left it NotFound for a minute and then until something else changed", async (t) => {
  const group = `kindw${suffix()}.acme.com`;
  const crdName = `bolts.${group}`;
  const namespace = await testNamespace(t, "kindw");
  const admin = await adminClient(t);
  t.after(() => admin.delete(crds, undefined, crdName).catch(() => undefined));
  const created = async (version: string, name: string): Promise<void> => {
    const object = { apiVersion: `${group}/${version}`, kind: "Bolt", metadata: { name, namespace } } as KubeObject;
    await eventually(() => admin.create(bolts(group, version), object).then(() => true), {
      what: `Bolt ${name} created at ${version}`,
    });
  };
  await admin.create(crds, boltCrd(group, "v1"));
  await crdEstablished(admin, crdName);
  await created("v1", "a");

  const proxy = await startApiProxy(t);
  const client = await KubeClient.fromKubeconfig(proxy.kubeconfig);
  t.after(() => client.close());
  const watches = new KindWatches({
    client,
    mapper: new RestMapper(client),
    log: createLogger({ test: t.name }, { level: "error" }),
    onObject: () => undefined,
    onKind: () => undefined,
    firstListWaitMs: 2_000,
  });
  watches.start();
  t.after(() => watches.stop());
  const listed = (name: string) => ({ group, kind: "Bolt", namespace, name });
  watches.use("rg", [listed("a"), listed("b")]);
  await eventually(async () => (await watches.read(listed("a"))).state === "found" || undefined, {
    what: "Bolt a found at v1",
  });

  // The old watch's next request waits while the CRD is replaced: its 404 comes after the CRD's events.
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  t.after(() => release());
  proxy.hold = (r) => (r.method === "GET" && r.path.startsWith(`/apis/${group}/v1/`) ? released : undefined);
  await admin.delete(crds, undefined, crdName);
  await eventually(async () => (await admin.get(crds, undefined, crdName)) === undefined || undefined, {
    what: `${crdName} gone`,
  });
  await admin.create(crds, boltCrd(group, "v2"));
  await crdEstablished(admin, crdName);
  await created("v2", "b");
  proxy.hold = undefined;
  release();
  await eventually(async () => (await watches.read(listed("b"))).state === "found" || undefined, {
    timeoutMs: 30_000,
    what: "Bolt b, made at v2, found",
  });
});
