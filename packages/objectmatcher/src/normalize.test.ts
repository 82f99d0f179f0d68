import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonObject } from "./json.ts";
import { resolveKind } from "./kinds.ts";
import { canonicalBase64, isAbsent, normalizeObject } from "./normalize.ts";
import type { NormalizeContext } from "./normalize.ts";

const ctx = (apiVersion: string, kind: string, extra: Partial<NormalizeContext> = {}): NormalizeContext => ({
  kind: resolveKind(apiVersion, kind),
  annotationKey: "driftless.dev/last-applied-configuration",
  ignoreStatus: true,
  ignoreFields: [],
  ...extra,
});

describe("normalisation", () => {
  it("drops nulls, empty strings and empty lists, which the API server omits", () => {
    const out = normalizeObject(
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p", creationTimestamp: null },
        spec: { containers: [{ name: "c", args: [], image: "" }] },
      },
      ctx("v1", "Pod"),
    );
    assert.deepEqual(out, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { containers: [{ name: "c" }] },
    });
  });

  it("keeps empty maps (podSelector: {} selects every pod) but treats them as declaring nothing", () => {
    const out = normalizeObject(
      { spec: { podSelector: {}, ingress: [{}] } },
      ctx("networking.k8s.io/v1", "NetworkPolicy"),
    );
    assert.deepEqual(out, { spec: { podSelector: {}, ingress: [{}] } });
    assert.ok(isAbsent({ a: { b: null } }, undefined));
    assert.ok(!isAbsent([{}], undefined), "a list with an element is set");
  });

  it("keeps empty strings that are values: labels, ConfigMap data, list elements", () => {
    const out = normalizeObject(
      { metadata: { labels: { canary: "" } }, data: { EMPTY: "" }, rules: [{ apiGroups: [""] }] },
      ctx("v1", "ConfigMap"),
    );
    assert.deepEqual(out, { metadata: { labels: { canary: "" } }, data: { EMPTY: "" }, rules: [{ apiGroups: [""] }] });
  });

  it("removes server-owned metadata, status and our own annotation", () => {
    const out = normalizeObject(
      {
        metadata: {
          name: "x",
          uid: "u",
          resourceVersion: "1",
          generation: 2,
          creationTimestamp: "t",
          managedFields: [{}],
          selfLink: "/x",
          annotations: { "driftless.dev/last-applied-configuration": "br64:…", keep: "me" },
        },
        status: { phase: "Active" },
      },
      ctx("v1", "Namespace"),
    );
    assert.deepEqual(out, { metadata: { name: "x", annotations: { keep: "me" } } });
  });

  it("keeps status when asked to compare it", () => {
    assert.deepEqual(
      normalizeObject({ status: { phase: "Active" } }, ctx("v1", "Namespace", { ignoreStatus: false })),
      {
        status: { phase: "Active" },
      },
    );
  });

  it("turns Secret stringData into base64 data, as the API server does (stringData wins)", () => {
    const out = normalizeObject(
      { apiVersion: "v1", kind: "Secret", stringData: { a: "héllo", b: "new" }, data: { b: "b2xk", c: "Y3\nY=" } },
      ctx("v1", "Secret"),
    );
    assert.deepEqual(out, { apiVersion: "v1", kind: "Secret", data: { a: "aMOpbGxv", b: "bmV3", c: "Y3Y=" } });
  });

  it("fills the default protocol of ports, which is part of their merge key", () => {
    const out = normalizeObject(
      { spec: { ports: [{ port: 53, protocol: "UDP" }, { port: 80 }] } },
      ctx("v1", "Service"),
    );
    assert.deepEqual(out, {
      spec: {
        ports: [
          { port: 53, protocol: "UDP" },
          { port: 80, protocol: "TCP" },
        ],
      },
    });
  });

  it("does not fill built-in defaults into custom resources", () => {
    const out = normalizeObject({ spec: { ports: [{ port: 80 }] } }, ctx("example.com/v1", "Service"));
    assert.deepEqual(out, { spec: { ports: [{ port: 80 }] } });
  });

  it("removes ignored fields by path, with * for any key or item", () => {
    const out = normalizeObject(
      {
        spec: {
          replicas: 3,
          template: {
            spec: {
              containers: [
                { name: "a", image: "x" },
                { name: "b", image: "y" },
              ],
            },
          },
        },
      },
      ctx("apps/v1", "Deployment", {
        ignoreFields: [
          ["spec", "replicas"],
          ["spec", "template", "spec", "containers", "*", "image"],
        ],
      }),
    );
    assert.deepEqual(out, { spec: { template: { spec: { containers: [{ name: "a" }, { name: "b" }] } } } });
  });

  it("never modifies its input", () => {
    const input: JsonObject = { apiVersion: "v1", kind: "Secret", metadata: { uid: "u" }, stringData: { a: "b" } };
    const copy = structuredClone(input);
    normalizeObject(input, ctx("v1", "Secret"));
    assert.deepEqual(input, copy);
  });

  it("re-encodes base64 canonically and leaves what is not base64 alone", () => {
    assert.equal(canonicalBase64("aGVs\nbG8="), "aGVsbG8=");
    assert.equal(canonicalBase64("sha256:abc"), "sha256:abc");
  });
});
