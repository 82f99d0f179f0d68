import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { goStruct, type GoField } from "./facts.ts";
import { KINDS, KUBERNETES_VERSION, STRUCTS } from "./kube-facts.generated.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import { SERVER_METADATA_FIELDS } from "./normalize.ts";
import { PatchMaker } from "./patch-maker.ts";

const packageDir = join(import.meta.dirname, "..");
const repoRoot = join(packageDir, "..", "..");

describe("generated facts of the built-in kinds", () => {
  it("are what the generator writes today (else run npm run generate:matcher)", async () => {
    const { stdout } = await promisify(execFile)("bash", [join(packageDir, "scripts", "generate-facts.sh")], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const committed = await readFile(join(import.meta.dirname, "kube-facts.generated.ts"), "utf8");
    assert.ok(stdout === committed, "src/kube-facts.generated.ts is stale: run npm run generate:matcher");
  });

  it("come from the Kubernetes version of the local control plane", async () => {
    const controlPlane = (await readFile(join(repoRoot, "packages/local-cluster/versions/kubernetes"), "utf8")).trim();
    const goMod = await readFile(join(packageDir, "generator", "go.mod"), "utf8");
    assert.equal(KUBERNETES_VERSION, controlPlane);
    assert.match(goMod, new RegExp(`\\bk8s\\.io/kubernetes ${controlPlane.replace(/\./g, "\\.")}\\b`));
    const api = `v0.${controlPlane.slice("v1.".length)}`;
    assert.match(goMod, new RegExp(`k8s\\.io/api => k8s\\.io/api ${api.replace(/\./g, "\\.")}\\b`));
  });
});

/** One scalar field of one built-in kind, with the path to it and the objects that lead there. */
interface ScalarField {
  readonly apiVersion: string;
  readonly kind: string;
  readonly path: string;
  readonly field: GoField;
  /** Builds the object with `value` at the field, or without the field when `value` is undefined. */
  readonly build: (value: JsonValue | undefined) => JsonObject;
}

const SKIPPED_ROOT_FIELDS = new Set(["status", "apiVersion", "kind"]);
const SERVER_METADATA = new Set<string>(SERVER_METADATA_FIELDS);

/** Every bool and number field reachable from each kind through structs and lists, each struct once per kind. */
function scalarFields(): ScalarField[] {
  const out: ScalarField[] = [];
  for (const [key, root] of Object.entries(KINDS)) {
    const [apiVersion = "", kind = ""] = key.split(" ");
    const seen = new Set<string>();
    const queue: { struct: string; path: string; wrap: (inner: JsonObject) => JsonObject }[] = [
      {
        struct: root,
        path: "",
        wrap: (inner) => ({
          apiVersion,
          kind,
          ...inner,
          metadata: { name: "x", ...(inner["metadata"] as JsonObject | undefined) },
        }),
      },
    ];
    while (queue.length > 0) {
      const { struct, path, wrap } = queue.shift() ?? assert.fail();
      if (seen.has(struct)) continue;
      seen.add(struct);
      for (const [name, field] of Object.entries(goStruct(struct)?.fields ?? {})) {
        if (path === "" && SKIPPED_ROOT_FIELDS.has(name)) continue;
        if (path === "metadata" && SERVER_METADATA.has(name)) continue;
        const here = path === "" ? name : `${path}.${name}`;
        if (field.type === "bool" || field.type === "int") {
          const keys = keyFieldsOf(struct);
          if (keys.has(name)) continue;
          out.push({
            apiVersion,
            kind,
            path: here,
            field,
            build: (value) => wrap(value === undefined ? {} : { [name]: value }),
          });
          continue;
        }
        const list = field.type.startsWith("[]");
        const inner = list ? field.type.slice(2) : field.type;
        if (STRUCTS[inner] === undefined) continue;
        const item = list ? keyedItem(field, inner) : undefined;
        queue.push({
          struct: inner,
          path: here,
          wrap: (child) => wrap({ [name]: list ? [{ ...item, ...child }] : child }),
        });
      }
    }
  }
  return out;
}

const everyStruct = Object.keys(STRUCTS).map((name) => goStruct(name));

/** A keyed list's item needs its key to be an item at all; these fields are that key. */
function keyFieldsOf(struct: string): Set<string> {
  const keys = new Set<string>();
  for (const other of everyStruct) {
    for (const field of Object.values(other?.fields ?? {})) {
      if (field.type !== `[]${struct}` || !field.patchStrategy?.includes("merge")) continue;
      if (field.patchMergeKey) keys.add(field.patchMergeKey);
      for (const key of field.listMapKeys ?? []) keys.add(key);
    }
  }
  return keys;
}

function keyedItem(field: GoField, struct: string): JsonObject {
  const item: JsonObject = {};
  if (!field.patchStrategy?.includes("merge")) return item;
  for (const key of [field.patchMergeKey ?? "", ...(field.listMapKeys ?? [])]) {
    const type = goStruct(struct)?.fields[key]?.type;
    if (type === undefined) continue;
    item[key] = type === "int" ? 1 : type === "bool" ? true : key === "protocol" ? "TCP" : "k";
  }
  return item;
}

describe("what absence means, for every bool and number field of every built-in kind", () => {
  const maker = new PatchMaker();
  const fields = scalarFields();

  it("finds the fields the issue names among them", () => {
    const paths = new Set(fields.map((f) => `${f.apiVersion} ${f.kind} ${f.path}`));
    for (const expected of [
      "apps/v1 Deployment spec.template.spec.containers.securityContext.allowPrivilegeEscalation",
      "v1 Pod spec.automountServiceAccountToken",
      "v1 Pod spec.hostUsers",
      "v1 ConfigMap immutable",
      "v1 Secret immutable",
    ])
      assert.ok(paths.has(expected), expected);
    assert.ok(fields.length > 1000, `${fields.length} fields`);
  });

  it("a declared false or 0 in a pointer field against a live object without it is an update", () => {
    const failures: string[] = [];
    for (const f of fields) {
      if (!f.field.pointer) continue;
      const zero = f.field.type === "bool" ? false : 0;
      const result = maker.calculate(f.build(undefined), f.build(zero));
      if (result.isEmpty()) failures.push(`${f.apiVersion} ${f.kind} ${f.path}`);
    }
    assert.deepEqual(failures, []);
  });

  it("a declared false or 0 in a value field with omitempty is satisfied by its absence", () => {
    const failures: string[] = [];
    for (const f of fields) {
      if (f.field.pointer || !f.field.omitempty) continue;
      const zero = f.field.type === "bool" ? false : 0;
      const result = maker.calculate(f.build(undefined), f.build(zero));
      if (!result.isEmpty()) failures.push(`${f.apiVersion} ${f.kind} ${f.path}: ${result.render()}`);
    }
    assert.deepEqual(failures, []);
  });
});
