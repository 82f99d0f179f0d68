/** Shared setup for the kube package's integration tests: clients, ConfigMaps, throwaway CRDs. */
import type { TestContext } from "node:test";
import {
  configMapMapping,
  KubeClient,
  namespaceMapping,
  type KubeClientOptions,
  type KubeObject,
  type ResourceMapping,
} from "@driftless/kube";
import { eventually, quietly, suffix, testEnv } from "../../support/index.ts";

export const configMaps = configMapMapping;
export const namespaces = namespaceMapping;
export const crds: ResourceMapping = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  resource: "customresourcedefinitions",
  namespaced: false,
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
};

/** An admin client closed when the test ends. */
export async function adminClient(t: TestContext, options: KubeClientOptions = {}): Promise<KubeClient> {
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig, options);
  t.after(() => client.close());
  return client;
}

/** A client for the identity without RBAC bindings. */
export async function userClient(t: TestContext): Promise<KubeClient> {
  const client = await KubeClient.fromKubeconfig(testEnv().userKubeconfig);
  t.after(() => client.close());
  return client;
}

export function configMap(namespace: string, name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

/**
 * A namespaced CRD in a group of its own (so that nothing else in the run touches its
 * resource), with a status subresource, established before this returns and deleted after
 * the test.
 */
export async function throwawayCrd(t: TestContext, client: KubeClient): Promise<ResourceMapping> {
  const group = `kube-${suffix()}.driftless.test`;
  const mapping: ResourceMapping = {
    group,
    version: "v1",
    kind: "Widget",
    resource: "widgets",
    namespaced: true,
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  };
  const name = `widgets.${group}`;
  await client.create(crds, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { size: { type: "integer" } } },
                status: { type: "object", properties: { phase: { type: "string" } } },
              },
            },
          },
        },
      ],
    },
  });
  t.after(() => quietly(`deleting CRD ${name}`, () => client.delete(crds, undefined, name)));
  await crdEstablished(client, name);
  return mapping;
}

/** Waits until the CRD `name` is Established: its custom resources are served. */
export async function crdEstablished(client: KubeClient, name: string): Promise<void> {
  await eventually(
    async () => {
      const crd = await client.get(crds, undefined, name);
      const conditions =
        (crd?.["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      return conditions.some((c) => c.type === "Established" && c.status === "True");
    },
    { what: `CRD ${name} to be established` },
  );
}

export function widget(mapping: ResourceMapping, namespace: string, name: string, size: number): KubeObject {
  return {
    apiVersion: `${mapping.group}/${mapping.version}`,
    kind: mapping.kind,
    metadata: { name, namespace },
    spec: { size },
  };
}
