import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { declaredCertificate, liveCertificate } from "./testdata/custom-resource.ts";
import { at, edit, list, maker, runScenario, withRecord } from "./testdata/harness.ts";
import type { Scenario } from "./testdata/harness.ts";

const certificate: Scenario[] = [
  {
    name: "matches with status, server metadata and a schema-defaulted field",
    live: liveCertificate,
    declared: declaredCertificate,
    expect: "match",
  },
  {
    name: "ignores finalizers and labels added by another controller",
    live: () =>
      edit(liveCertificate(), (o) => {
        at(o, "metadata")["finalizers"] = ["cert-manager.io/cleanup"];
        at(o, "metadata")["labels"] = { "controller.cert-manager.io/fao": "true" };
      }),
    declared: declaredCertificate,
    expect: "match",
  },
  {
    name: "updates when a list item was added live (lists are atomic)",
    live: () => edit(liveCertificate(), (o) => list(o, "spec.dnsNames").push("evil.example.com")),
    declared: declaredCertificate,
    expect: "update",
    paths: ["spec.dnsNames"],
  },
  {
    name: "updates when a list was reordered live",
    live: () => edit(liveCertificate(), (o) => list(o, "spec.dnsNames").reverse()),
    declared: declaredCertificate,
    expect: "update",
    paths: ["spec.dnsNames"],
  },
  {
    name: "updates when a declared field drifted",
    live: () => edit(liveCertificate(), (o) => (at(o, "spec.issuerRef")["name"] = "self-signed")),
    declared: declaredCertificate,
    expect: "update",
    paths: ["spec.issuerRef.name"],
  },
  {
    name: "updates to remove a field dropped from the declaration",
    live: liveCertificate,
    declared: () => edit(declaredCertificate(), (o) => delete at(o, "spec")["usages"]),
    applied: declaredCertificate,
    expect: "update",
    paths: ["spec.usages"],
  },
  {
    name: "updates to remove a finalizer dropped from the declaration, keeping the controller's",
    live: () =>
      edit(
        liveCertificate(),
        (o) => (at(o, "metadata")["finalizers"] = ["cert-manager.io/cleanup", "shop.example.com/keep"]),
      ),
    declared: declaredCertificate,
    applied: () => edit(declaredCertificate(), (o) => (at(o, "metadata")["finalizers"] = ["shop.example.com/keep"])),
    expect: "update",
    paths: ['metadata.finalizers[="shop.example.com/keep"]'],
  },
  {
    name: "a string that looks like a number is not a number in a custom resource",
    live: () => edit(liveCertificate(), (o) => (at(o, "spec")["revisionHistoryLimit"] = "3")),
    declared: () => edit(declaredCertificate(), (o) => (at(o, "spec")["revisionHistoryLimit"] = 3)),
    expect: "update",
    paths: ["spec.revisionHistoryLimit"],
  },
  {
    name: "a declared empty string drifted live is restored (a custom resource stores it as sent)",
    live: () => edit(liveCertificate(), (o) => (at(o, "spec")["commonName"] = "x")),
    declared: () => edit(declaredCertificate(), (o) => (at(o, "spec")["commonName"] = "")),
    expect: "update",
    paths: ["spec.commonName"],
  },
  {
    name: "a declared empty list drifted live is restored",
    live: liveCertificate,
    declared: () => edit(declaredCertificate(), (o) => (at(o, "spec")["dnsNames"] = [])),
    expect: "update",
    paths: ["spec.dnsNames"],
  },
  {
    name: "a declared empty string and empty list that are live as declared need no write",
    live: () =>
      edit(liveCertificate(), (o) => {
        at(o, "spec")["commonName"] = "";
        at(o, "spec")["dnsNames"] = [];
      }),
    declared: () =>
      edit(declaredCertificate(), (o) => {
        at(o, "spec")["commonName"] = "";
        at(o, "spec")["dnsNames"] = [];
      }),
    expect: "match",
  },
  {
    name: "a declared false is not satisfied by its absence in a custom resource",
    live: liveCertificate,
    declared: () => edit(declaredCertificate(), (o) => (at(o, "spec")["encodeUsagesInRequest"] = false)),
    expect: "update",
    paths: ["spec.encodeUsagesInRequest"],
  },
];

describe("custom resource scenarios", () => {
  for (const s of certificate) it(`${s.expect}: ${s.name}`, () => void runScenario(s));
});

describe("custom resource patches", () => {
  it("is an RFC 7386 merge patch that sends lists whole", () => {
    const result = runScenario(certificate[2] ?? assert.fail());
    assert.equal(result.patchType, "merge");
    assert.deepEqual(result.patch, { spec: { dnsNames: ["shop.example.com", "www.shop.example.com"] } });
  });

  it("deletes a dropped field with null", () => {
    const result = runScenario(certificate[5] ?? assert.fail());
    assert.deepEqual(result.patch, { spec: { usages: null } });
  });

  it("removes a dropped map whole when it holds only what we declared, and keeps one holding another's key", () => {
    const applied = edit(declaredCertificate(), (o) => (at(o, "spec")["extra"] = { x: 1, nested: { y: 2 } }));
    const ours = withRecord(
      edit(liveCertificate(), (o) => (at(o, "spec")["extra"] = { x: 1, nested: { y: 2 } })),
      applied,
    );
    // As a server-side apply (Config Sync) or kubectl's three-way patch removes it: no `extra: {}` left behind.
    assert.deepEqual(maker.calculate(ours, declaredCertificate()).patch, { spec: { extra: null } });
    const shared = withRecord(
      edit(liveCertificate(), (o) => (at(o, "spec")["extra"] = { x: 1, nested: { y: 2, theirs: 3 } })),
      applied,
    );
    assert.deepEqual(maker.calculate(shared, declaredCertificate()).patch, {
      spec: { extra: { x: null, nested: { y: null } } },
    });
  });

  it("sends a declared empty string and empty list as they are", () => {
    const live = withRecord(
      edit(liveCertificate(), (o) => {
        at(o, "spec")["commonName"] = "x";
        list(o, "spec.dnsNames").push("evil.example.com");
      }),
      undefined,
    );
    const declared = edit(declaredCertificate(), (o) => {
      at(o, "spec")["commonName"] = "";
      at(o, "spec")["dnsNames"] = [];
    });
    assert.deepEqual(maker.calculate(live, declared).patch, { spec: { commonName: "", dnsNames: [] } });
  });

  it("sends the whole merged finalizer list, keeping other controllers' finalizers", () => {
    const result = runScenario(certificate[6] ?? assert.fail());
    assert.deepEqual(result.patch, { metadata: { finalizers: ["cert-manager.io/cleanup"] } });
  });

  it("treats a kind from an unknown group as a custom resource even if its name is built-in", () => {
    const declared = {
      apiVersion: "example.com/v1",
      kind: "Deployment",
      metadata: { name: "x" },
      spec: { ports: [{ port: 80 }] },
    };
    const live = withRecord(
      {
        apiVersion: "example.com/v1",
        kind: "Deployment",
        metadata: { name: "x" },
        spec: { ports: [{ port: 80, protocol: "TCP" }] },
      },
      declared,
    );
    const result = maker.calculate(live, declared);
    assert.equal(result.patchType, "merge");
    assert.equal(result.isEmpty(), false, "no protocol defaulting for custom resources");
  });
});
