import { test } from "node:test";
import assert from "node:assert/strict";
import type { DesiredObject } from "./desired.ts";
import type { ObjectId } from "./object-id.ts";
import { CyclicDependencyError, DuplicateDependencyError, MissingDependencyError, plan } from "./plan.ts";

function desired(
  group: string,
  kind: string,
  name: string,
  namespace?: string,
  dependsOn: ObjectId[] = [],
): DesiredObject {
  const id = namespace === undefined ? { group, kind, name } : { group, kind, namespace, name };
  return {
    id,
    apiVersion: group === "" ? "v1" : `${group}/v1`,
    object: {},
    sourcePath: `${name}.yaml`,
    sourceHash: "abc1234",
    dependsOn,
  };
}

const names = (waves: readonly (readonly DesiredObject[])[]): string[][] => waves.map((w) => w.map((o) => o.id.name));

test("orders CRDs, then Namespaces, then everything else", () => {
  const result = plan([
    desired("", "ConfigMap", "cm", "team"),
    desired("", "Namespace", "team"),
    desired("apiextensions.k8s.io", "CustomResourceDefinition", "widgets.example.com"),
    desired("example.com", "Widget", "w", "team"),
  ]);
  assert.deepEqual(names(result.waves), [["widgets.example.com"], ["team"], ["cm", "w"]]);
  assert.equal(result.errors.length, 0);
});

test("puts an object after everything it depends on, transitively", () => {
  const a = desired("", "ConfigMap", "a", "ns");
  const b = desired("", "ConfigMap", "b", "ns", [a.id]);
  const c = desired("apps", "Deployment", "c", "ns", [b.id]);
  const result = plan([c, b, a]);
  assert.deepEqual(names(result.waves), [["a"], ["b"], ["c"]]);
});

test("refuses a depends-on cycle, naming the objects in it", () => {
  const aId = { group: "", kind: "ConfigMap", namespace: "ns", name: "a" };
  const bId = { group: "", kind: "ConfigMap", namespace: "ns", name: "b" };
  const a = desired("", "ConfigMap", "a", "ns", [bId]);
  const b = desired("", "ConfigMap", "b", "ns", [aId]);
  assert.throws(
    () => plan([a, b]),
    (error: unknown) => {
      assert.ok(error instanceof CyclicDependencyError);
      assert.equal(error.code, "KNV2009");
      assert.equal(
        error.message,
        "cyclic dependency: ConfigMap, ns/a -> ConfigMap, ns/b; ConfigMap, ns/b -> ConfigMap, ns/a (config.kubernetes.io/depends-on)",
      );
      return true;
    },
  );
});

test("an object whose dependency is not declared applies nothing of the commit, as cli-utils' ExitEarly validation", () => {
  const ghost = { group: "", kind: "Secret", namespace: "ns", name: "ghost" };
  const a = desired("", "ConfigMap", "a", "ns", [ghost]);
  const b = desired("", "ConfigMap", "b", "ns", [a.id]);
  const c = desired("", "ConfigMap", "c", "ns");
  const result = plan([a, b, c]);
  assert.deepEqual(names(result.waves), []);
  assert.equal(result.invalid, true);
  assert.equal(result.errors.length, 1);
  assert.match(result.errors[0]?.message ?? "", /ghost/);
});

test("an object depending on one the source does not apply is KNV2009 external dependency, and the commit is not applied", () => {
  const absent = { group: "", kind: "ConfigMap", namespace: "bookstore", name: "cm0" };
  const dependent = desired("", "ConfigMap", "cm1", "bookstore", [absent]);
  const other = desired("", "ConfigMap", "cm2", "bookstore");
  const result = plan([dependent, other]);
  assert.deepEqual(names(result.waves), []);
  assert.equal(result.invalid, true);
  assert.equal(result.errors.length, 1);
  const [error] = result.errors;
  assert.ok(error instanceof MissingDependencyError);
  assert.equal(error.code, "KNV2009");
  assert.match(error.message, /^external dependency: ConfigMap, bookstore\/cm1 -> ConfigMap, bookstore\/cm0: /);
});

test("depending on an object this pass prunes skips both, in cli-utils' words, and applies the rest (Config Sync's TestExternalDependencyError)", () => {
  const cm0 = { group: "", kind: "ConfigMap", namespace: "bookstore", name: "cm0" };
  const cm1 = desired("", "ConfigMap", "cm1", "bookstore", [cm0]);
  const cm2 = desired("", "ConfigMap", "cm2", "bookstore", [cm1.id]);
  const other = desired("", "ConfigMap", "other", "bookstore");
  const result = plan([cm1, cm2, other], [cm0]);
  assert.equal(result.invalid, false);
  assert.deepEqual(names(result.waves), [["other"]]);
  assert.deepEqual(
    result.errors.map((e) => e.message),
    [
      "skipped apply of ConfigMap, bookstore/cm1: dependency scheduled for delete: bookstore_cm0__ConfigMap",
      "skipped apply of ConfigMap, bookstore/cm2: dependency apply actuation skipped: bookstore_cm1__ConfigMap",
    ],
  );
  assert.deepEqual(
    [...result.pruneHolds.values()].map((e) => e.message),
    ["skipped delete of ConfigMap, bookstore/cm0: dependent scheduled for apply: bookstore_cm1__ConfigMap"],
  );
});

test("depending on a declaration whose management is disabled is an external dependency too", () => {
  const released = {
    ...desired("", "ConfigMap", "cm0", "bookstore"),
    object: { metadata: { annotations: { "configmanagement.gke.io/managed": "disabled" } } },
  };
  const dependent = desired("", "ConfigMap", "cm1", "bookstore", [released.id]);
  const other = desired("", "ConfigMap", "cm2", "bookstore");
  const result = plan([released, dependent, other]);
  assert.deepEqual(
    names(result.waves),
    [["cm0"]],
    "the released declaration still goes through the apply, to be released, and nothing else",
  );
  assert.match(
    result.errors[0]?.message ?? "",
    /^external dependency: ConfigMap, bookstore\/cm1 -> ConfigMap, bookstore\/cm0: /,
  );
});

test("a declaration whose management is disabled is released whatever it depends on, as in Config Sync's TestMultiDependencies", () => {
  const disabled = { metadata: { annotations: { "configmanagement.gke.io/managed": "disabled" } } };
  const cm0 = { ...desired("", "ConfigMap", "cm0", "bookstore"), object: disabled };
  const cm1 = { ...desired("", "ConfigMap", "cm1", "bookstore", [cm0.id]), object: disabled };
  const cm2 = { ...desired("", "ConfigMap", "cm2", "bookstore", [{ ...cm0.id, name: "absent" }]), object: disabled };
  const result = plan([cm0, cm1, cm2]);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(names(result.waves).flat().sort(), ["cm0", "cm1", "cm2"]);
});

test("a depends-on naming one object twice is a validation error too: nothing of the commit is applied, as cli-utils' duplicate dependency", () => {
  const other = desired("", "ConfigMap", "other", "bookstore");
  const cm2 = desired("", "ConfigMap", "cm2", "bookstore", [other.id, other.id]);
  const result = plan([other, cm2]);
  assert.equal(result.invalid, true);
  assert.deepEqual(names(result.waves), []);
  assert.equal(result.errors.length, 1);
  assert.ok(result.errors[0] instanceof DuplicateDependencyError);
  assert.match(
    result.errors[0].message,
    /^duplicate dependency: ConfigMap, bookstore\/cm2 -> ConfigMap, bookstore\/other: /,
  );
});
