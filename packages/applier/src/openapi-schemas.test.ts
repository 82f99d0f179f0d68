import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeRequest } from "@driftless/kube";
import { CustomResourceSchemaRegistry } from "@driftless/objectmatcher";
import { OpenApiSchemaLoader } from "./openapi-schemas.ts";

const widgetDocument = (listType: string): unknown => ({
  components: {
    schemas: {
      "com.example.v1.Widget": {
        type: "object",
        "x-kubernetes-group-version-kind": [{ group: "example.com", version: "v1", kind: "Widget" }],
        properties: {
          spec: {
            type: "object",
            properties: {
              items: {
                type: "array",
                "x-kubernetes-list-type": listType,
                "x-kubernetes-list-map-keys": ["name"],
                items: { type: "object", properties: { name: { type: "string" } } },
              },
            },
          },
        },
      },
    },
  },
});

function fakeServer(): {
  client: { request: <T>(req: KubeRequest) => Promise<T> };
  requests: string[];
  hash: string[];
} {
  const requests: string[] = [];
  const hash = ["h1"];
  return {
    requests,
    hash,
    client: {
      request: <T>(req: KubeRequest): Promise<T> => {
        const query = new URLSearchParams(req.query as Record<string, string>).toString();
        requests.push(query === "" ? req.path : `${req.path}?${query}`);
        if (req.path === "/openapi/v3")
          return Promise.resolve({
            paths: {
              "api/v1": { serverRelativeURL: "/openapi/v3/api/v1?hash=core" },
              "apis/example.com/v1": { serverRelativeURL: `/openapi/v3/apis/example.com/v1?hash=${hash[0]}` },
            },
          } as T);
        if (req.path === "/openapi/v3/apis/example.com/v1")
          return Promise.resolve(widgetDocument(req.query?.["hash"] === "h1" ? "map" : "atomic") as T);
        return Promise.reject(new Error(`unexpected ${req.path}`));
      },
    },
  };
}

describe("OpenApiSchemaLoader", () => {
  it("reads a group-version's document once, and again only when discovery says something changed", async () => {
    const server = fakeServer();
    const registry = new CustomResourceSchemaRegistry();
    let mappings: unknown[] = [];
    const loader = new OpenApiSchemaLoader({
      client: server.client,
      registry,
      mapper: { mappings: () => mappings as never },
    });
    await loader.ensure("example.com/v1", "Widget");
    await loader.ensure("example.com/v1", "Widget");
    assert.deepEqual(server.requests, ["/openapi/v3", "/openapi/v3/apis/example.com/v1?hash=h1"]);
    assert.equal(registry.schemaFor("example.com/v1", "Widget")?.fields?.["spec"]?.fields?.["items"]?.list, "map");

    // The CRD changed: discovery was refreshed, the index now names a new hash.
    server.hash[0] = "h2";
    mappings = [];
    await loader.ensure("example.com/v1", "Widget");
    assert.deepEqual(server.requests.slice(2), ["/openapi/v3", "/openapi/v3/apis/example.com/v1?hash=h2"]);
    assert.equal(registry.schemaFor("example.com/v1", "Widget")?.fields?.["spec"]?.fields?.["items"]?.list, undefined);
  });

  it("asks nothing for built-in kinds, and logs once a kind without a schema", async () => {
    const server = fakeServer();
    const logged: string[] = [];
    const loader = new OpenApiSchemaLoader({
      client: server.client,
      registry: new CustomResourceSchemaRegistry(),
      log: { debug: (message) => void logged.push(message) },
    });
    await loader.ensure("apps/v1", "Deployment");
    await loader.ensure("v1", "ConfigMap");
    assert.deepEqual(server.requests, []);
    await loader.ensure("other.example.com/v1", "Gadget");
    await loader.ensure("other.example.com/v1", "Gadget");
    assert.deepEqual(logged, ["custom resource schema unknown: every list compares whole"]);
  });

  it("keeps a schema that loaded when a later read fails", async () => {
    const server = fakeServer();
    const registry = new CustomResourceSchemaRegistry();
    let fail = false;
    const loader = new OpenApiSchemaLoader({
      client: { request: (req) => (fail ? Promise.reject(new Error("down")) : server.client.request(req)) },
      registry,
      indexTtlMs: 0,
    });
    await loader.ensure("example.com/v1", "Widget");
    fail = true;
    await loader.ensure("example.com/v1", "Widget");
    assert.equal(registry.schemaFor("example.com/v1", "Widget")?.fields?.["spec"]?.fields?.["items"]?.list, "map");
  });
});
