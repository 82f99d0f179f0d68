import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  KubeApiError,
  type KubeClient,
  type KubeObject,
  type ListOptions,
  type ResourceMapping,
  type RestMapper,
} from "@driftless/kube";
import { Annotator, CustomResourceSchemaRegistry, PatchMaker } from "@driftless/objectmatcher";
import { applyObject } from "./apply-object.ts";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation } from "./apply-outcome.ts";
import { CustomResourceSchemaLoader } from "./cr-schemas.ts";
import type { DesiredObject } from "./desired.ts";
import type { LiveState } from "./live-state.ts";

const gadgets: ResourceMapping = {
  group: "example.com",
  version: "v1",
  kind: "Gadget",
  resource: "gadgets",
  namespaced: true,
  verbs: ["get", "list", "watch", "create", "update"],
};

function crd(listType: "map" | "atomic", resourceVersion: string, generation = 1): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gadgets.example.com", uid: "u1", resourceVersion, generation },
    spec: {
      group: "example.com",
      names: { kind: "Gadget", plural: "gadgets" },
      versions: [
        {
          name: "v1",
          served: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: {
                    items: {
                      type: "array",
                      "x-kubernetes-list-type": listType,
                      ...(listType === "map" ? { "x-kubernetes-list-map-keys": ["name"] } : {}),
                      items: { type: "object", properties: { name: { type: "string" } } },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  } as KubeObject;
}

/** A stand-in for the CRD LIST by name: the current CRD at the store's revision. */
function crdServer(initial: KubeObject | undefined): {
  client: Pick<KubeClient, "request" | "list">;
  lists: string[];
  current: { crd: KubeObject | undefined; revision: string; forbidden?: boolean };
} {
  const lists: string[] = [];
  const current: { crd: KubeObject | undefined; revision: string; forbidden?: boolean } = {
    crd: initial,
    revision: "100",
  };
  return {
    lists,
    current,
    client: {
      list: (_m: ResourceMapping, opts: ListOptions = {}) => {
        lists.push(opts.fieldSelector ?? "");
        if (current.forbidden === true)
          return Promise.reject(
            new KubeApiError({ status: 403, reason: "Forbidden", operation: "list", serverMessage: "forbidden" }),
          );
        return Promise.resolve({
          items: current.crd === undefined ? [] : [current.crd],
          resourceVersion: current.revision,
        });
      },
      request: <T>(): Promise<T> => Promise.resolve({ paths: {} } as T),
    },
  };
}

const listTypeOf = (registry: CustomResourceSchemaRegistry): unknown =>
  registry.schemaFor("example.com/v1", "Gadget")?.fields?.["spec"]?.fields?.["items"]?.list;

describe("CustomResourceSchemaLoader", () => {
  it("reads a CRD once by name, and not at all for one this reconciler applied (observe)", async () => {
    const server = crdServer(crd("map", "50"));
    const registry = new CustomResourceSchemaRegistry();
    const loader = new CustomResourceSchemaLoader({ client: server.client, registry });
    assert.equal(loader.ready(gadgets), false);
    await loader.ensure(gadgets);
    await loader.ensure(gadgets);
    assert.deepEqual(server.lists, ["metadata.name=gadgets.example.com"]);
    assert.equal(listTypeOf(registry), "map");
    assert.equal(loader.ready(gadgets), true);

    const applied = new CustomResourceSchemaLoader({
      client: server.client,
      registry: new CustomResourceSchemaRegistry(),
    });
    applied.observe(crd("map", "50"));
    await applied.ensure(gadgets);
    assert.equal(server.lists.length, 1, "an observed CRD costs no read");
  });

  it("reads a CRD again after the watch says its spec changed, not after a status change", async () => {
    const server = crdServer(crd("atomic", "50"));
    const registry = new CustomResourceSchemaRegistry();
    const loader = new CustomResourceSchemaLoader({ client: server.client, registry });
    await loader.ensure(gadgets);
    assert.equal(listTypeOf(registry), undefined);
    loader.changed("gadgets.example.com", { uid: "u1", generation: 1 });
    assert.equal(loader.ready(gadgets), true, "same generation: a status update");
    server.current.crd = crd("map", "60", 2);
    loader.changed("gadgets.example.com", { uid: "u1", generation: 2 });
    assert.equal(loader.ready(gadgets), false);
    await loader.ensure(gadgets);
    assert.equal(listTypeOf(registry), "map");
    loader.changed("gadgets.example.com", undefined);
    assert.equal(listTypeOf(registry), undefined, "a deleted CRD's schema is forgotten");
  });

  it("without the CRD watch (unwatched), reads the CRD's metadata before each match and the CRD again once its generation changed", async () => {
    const server = crdServer(crd("map", "50"));
    const registry = new CustomResourceSchemaRegistry();
    const loader = new CustomResourceSchemaLoader({ client: server.client, registry });
    loader.unwatched();
    await loader.ensure(gadgets);
    assert.equal(loader.ready(gadgets), false, "nothing would tell a change: each match checks");
    await loader.ensure(gadgets);
    assert.equal(server.lists.length, 2, "the CRD, then its metadata unchanged");
    assert.equal(listTypeOf(registry), "map");
    server.current.crd = crd("atomic", "60", 2);
    await loader.ensure(gadgets);
    assert.equal(server.lists.length, 4, "its metadata, then the changed CRD");
    assert.equal(listTypeOf(registry), undefined, "atomic now: compared whole");
  });

  it("before a write, reads the CRD again only when the live object is newer than what was read", async () => {
    const server = crdServer(crd("atomic", "50"));
    const registry = new CustomResourceSchemaRegistry();
    const loader = new CustomResourceSchemaLoader({ client: server.client, registry });
    await loader.ensure(gadgets); // current at revision 100
    assert.equal(await loader.confirm(gadgets, "90"), false);
    assert.equal(server.lists.length, 1);
    // Another party changed the CRD, then the object, before the CRD's watch event arrived.
    server.current.crd = crd("map", "110", 2);
    server.current.revision = "120";
    assert.equal(await loader.confirm(gadgets, "115"), true);
    assert.equal(listTypeOf(registry), "map");
    assert.equal(await loader.confirm(gadgets, "118"), false, "covered by the last read");
    assert.equal(server.lists.length, 2);
  });

  it("refuses to match on no schema when the CRD cannot be read, and to write on an unconfirmed one", async () => {
    const server = crdServer(crd("map", "50"));
    const registry = new CustomResourceSchemaRegistry();
    let down = true;
    const loader = new CustomResourceSchemaLoader({
      client: {
        list: (m, opts) => (down ? Promise.reject(new Error("connection refused")) : server.client.list(m, opts)),
        request: server.client.request,
      },
      registry,
    });
    await assert.rejects(loader.ensure(gadgets), /cannot read CustomResourceDefinition gadgets.example.com/);
    down = false;
    await loader.ensure(gadgets);
    assert.equal(listTypeOf(registry), "map");
    down = true;
    await assert.rejects(loader.confirm(gadgets, "500"), /cannot read CustomResourceDefinition/);
    loader.changed("gadgets.example.com", { uid: "u1", generation: 2 });
    await loader.ensure(gadgets); // stale, unreadable: the schema read before stays for matches
    assert.equal(listTypeOf(registry), "map");
  });

  it("falls back to /openapi/v3 when CRDs may not be read", async () => {
    const server = crdServer(crd("map", "50"));
    server.current.forbidden = true;
    const requests: string[] = [];
    const loader = new CustomResourceSchemaLoader({
      client: {
        list: server.client.list,
        request: <T>(req: { path: string }): Promise<T> => {
          requests.push(req.path);
          return Promise.resolve({ paths: {} } as T);
        },
      },
      registry: new CustomResourceSchemaRegistry(),
    });
    await loader.ensure(gadgets);
    await loader.ensure(gadgets);
    assert.deepEqual(server.lists.length, 1, "refused once, not asked again");
    assert.deepEqual(requests, ["/openapi/v3"]);
    assert.equal(await loader.confirm(gadgets, "500"), false);
  });
});

describe("applyObject and custom resource schemas", () => {
  const desired = (value: string): DesiredObject => ({
    id: { group: "example.com", kind: "Gadget", namespace: "ns", name: "g" },
    apiVersion: "example.com/v1",
    object: {
      apiVersion: "example.com/v1",
      kind: "Gadget",
      metadata: { name: "g", namespace: "ns" },
      spec: { items: [{ name: "a", value }] },
    },
    sourcePath: "g.yaml",
    sourceHash: value,
    dependsOn: [],
  });

  it("creates a custom resource without loading a schema; matching the live one loads it", async () => {
    const stored = new Map<string, KubeObject>();
    let version = 0;
    const store = (obj: KubeObject): KubeObject => {
      const kept = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } };
      stored.set(obj.metadata.name, kept);
      return kept;
    };
    const live: LiveState = {
      get: (_m, _ns, name) => Promise.resolve(stored.get(name)),
      remember: () => undefined,
      forget: () => undefined,
      refresh: (_m, _ns, name) => Promise.resolve(stored.get(name)),
    };
    const loads: string[] = [];
    const annotator = new Annotator();
    const options: ApplyOptions = {
      client: {
        create: (_m: ResourceMapping, obj: KubeObject) => Promise.resolve(store(obj)),
        update: (_m: ResourceMapping, _current: KubeObject, obj: KubeObject) => Promise.resolve(store(obj)),
      } as unknown as KubeClient,
      mapper: { mappingFor: () => Promise.resolve(gadgets) } as unknown as RestMapper,
      live,
      sync: { kind: "RootSync", namespace: "config-management-system", name: "root-sync" },
      commit: "0123456789abcdef0123456789abcdef01234567",
      annotator,
      matcher: new PatchMaker(annotator),
      schemas: {
        ensure: () => {
          loads.push("ensure");
          return Promise.resolve();
        },
        confirm: () => {
          loads.push("confirm");
          return Promise.resolve(false);
        },
        observe: () => undefined,
      },
    };
    assert.equal((await applyObject(desired("1"), options)).operation, Operation.Created);
    assert.deepEqual(loads, [], "a create waited for a schema");
    assert.equal((await applyObject(desired("2"), options)).operation, Operation.Updated);
    assert.deepEqual(loads, ["ensure", "confirm"]);
  });
});
