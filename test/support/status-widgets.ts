/**
 * A namespaced Widget kind of a test's own, with a status subresource the test writes as the Widget's controller
 * would: what drives kstatus (and so the ResourceGroup's live status and its metrics) without a controller.
 */
import type { TestContext } from "node:test";
import { eventually } from "./eventually.ts";
import type { JsonObject } from "./fixtures.ts";
import { customApi, statusCode, suffix } from "./kube.ts";
import { rootSyncs } from "./root-sync.ts";

const crds = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" } as const;

/** Creates `widgets.<prefix><id>.driftless.test`, waits until it is Established, removes it after the test; returns its group. */
export async function createStatusWidgetCrd(t: Pick<TestContext, "after">, prefix: string): Promise<string> {
  const group = `${prefix}${suffix()}.driftless.test`;
  const name = `widgets.${group}`;
  const open = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  await customApi().createClusterCustomObject({
    ...crds,
    body: {
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
            schema: { openAPIV3Schema: { type: "object", properties: { spec: open, status: open } } },
          },
        ],
      },
    },
  });
  t.after(() =>
    customApi()
      .deleteClusterCustomObject({ ...crds, name })
      .catch(() => undefined),
  );
  await eventually(
    async () => {
      const crd = (await customApi().getClusterCustomObject({ ...crds, name })) as JsonObject;
      const conditions = ((crd["status"] as JsonObject | undefined)?.["conditions"] ?? []) as JsonObject[];
      return conditions.some((c) => c["type"] === "Established" && c["status"] === "True");
    },
    { what: "the Widget CRD to be Established" },
  );
  return group;
}

/** Writes the status of Widget `w1` in `namespace`: what its controller would report (a 409 is read and written again). */
export async function setWidgetConditions(group: string, namespace: string, conditions: JsonObject[]): Promise<void> {
  const widget = { group, version: "v1", namespace, plural: "widgets", name: "w1" } as const;
  await eventually(
    async () => {
      const current = (await customApi().getNamespacedCustomObject(widget)) as JsonObject;
      try {
        await customApi().replaceNamespacedCustomObjectStatus({
          ...widget,
          body: { ...current, status: { conditions } },
        });
        return true;
      } catch (error) {
        if (statusCode(error) === 409) return false;
        throw error;
      }
    },
    { what: "the Widget's status written" },
  );
}

/** Deletes the RootSync `name` when the test ends (its finalizers run then). */
export function deleteRootSyncAfter(t: Pick<TestContext, "after">, name: string): void {
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined),
  );
}
