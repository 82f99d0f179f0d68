import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SourceError } from "./errors.ts";
import type { Manifest } from "./manifest.ts";
import { toManifest } from "./manifest.ts";
import { parseManifestText } from "./parse.ts";

function check(text: string, path = "app/object.yaml") {
  const [document] = parseManifestText(text, path).documents;
  assert.ok(document, "test input must parse");
  return toManifest(document.value, path, document.location);
}

function valid(text: string): Manifest {
  const result = check(text);
  assert.ok(result.ok, result.ok ? "" : result.errors.map((e) => e.message).join("\n"));
  return result.manifest;
}

function problems(text: string, path?: string): readonly SourceError[] {
  const result = check(text, path);
  assert.ok(!result.ok, "expected errors");
  return result.errors;
}

const codes = (errors: readonly SourceError[]) => errors.map((e) => e.code);

void describe("toManifest", () => {
  void it("types a valid object: group and version split, metadata read, raw kept as parsed", () => {
    const m = valid(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
  annotations: {owner: team-a}
spec: {replicas: 2}
`);
    assert.equal(m.apiVersion, "apps/v1");
    assert.equal(m.group, "apps");
    assert.equal(m.version, "v1");
    assert.equal(m.kind, "Deployment");
    assert.deepEqual(m.metadata, {
      name: "web",
      namespace: "shop",
      labels: { app: "web" },
      annotations: { owner: "team-a" },
    });
    assert.deepEqual(m.raw["spec"], { replicas: 2 });
    assert.equal(m.sourcePath, "app/object.yaml");
    assert.deepEqual(m.dependsOn, []);
  });

  void it("treats the core group as the empty string and an empty namespace as none", () => {
    const m = valid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ''}\n");
    assert.equal(m.group, "");
    assert.equal(m.version, "v1");
    assert.equal(m.metadata.namespace, undefined);
  });

  void it("reports a missing or malformed apiVersion and kind as not a Kubernetes object (KNV1006)", () => {
    const errors = problems("metadata: {name: x}\n");
    assert.deepEqual(codes(errors), ["KNV1006", "KNV1006"]);
    assert.match(errors[0]?.message ?? "", /^app\/object\.yaml: object "x": apiVersion is required$/);
    assert.match(errors[1]?.message ?? "", /kind is required/);
    assert.match(
      problems("apiVersion: a/b/c\nkind: X\nmetadata: {name: x}\n")[0]?.message ?? "",
      /"version" or "group\/version", found "a\/b\/c"/,
    );
    assert.match(
      problems("apiVersion: v1\nkind: 3\nmetadata: {name: x}\n")[0]?.message ?? "",
      /kind must be a string, found a number/,
    );
  });

  void it("hints that kustomization files are not rendered", () => {
    const errors = problems(
      "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
      "overlays/kustomization.yaml",
    );
    assert.deepEqual(codes(errors), ["KNV1031"]);
    assert.match(errors[0]?.message ?? "", /a kustomization is rendered only in the sync directory itself/);
  });

  void it("requires metadata.name (KNV1031) and explains that generateName cannot be used", () => {
    assert.deepEqual(codes(problems("apiVersion: v1\nkind: ConfigMap\n")), ["KNV1031"]);
    const [error] = problems("apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-}\n");
    assert.equal(error?.code, "KNV1031");
    assert.match(
      error?.message ?? "",
      /Job \(no name\): metadata\.generateName is not supported; declare a fixed metadata\.name/,
    );
  });

  void it("rejects names that are not DNS-1123 subdomains (KNV1036)", () => {
    for (const name of ["Web", "web_1", "-web", "web.", "a".repeat(254)]) {
      const [error] = problems(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "${name}"}\n`);
      assert.equal(error?.code, "KNV1036", name);
    }
    valid(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "a.b-c.${"d".repeat(200)}"}\n`);
  });

  void it("allows RBAC names that are only valid path segments, such as system:aggregate-to-edit", () => {
    valid(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: 'system:aggregate-to-edit'}\n",
    );
    assert.deepEqual(
      codes(problems("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: 'a/b'}\n")),
      ["KNV1036"],
    );
  });

  void it("requires Namespace names and metadata.namespace to be DNS-1123 labels (KNV1055, as nomos)", () => {
    assert.deepEqual(codes(problems("apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n")), ["KNV1055"]);
    // Not even a subdomain: both errors, as nomos reports them.
    assert.deepEqual(codes(problems("apiVersion: v1\nkind: Namespace\nmetadata: {name: Foo_bar}\n")), [
      "KNV1036",
      "KNV1055",
    ]);
    const [error] = problems("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: Team_A}\n");
    assert.equal(error?.code, "KNV1055");
    assert.match(error?.message ?? "", /metadata\.namespace "Team_A" is not a valid Namespace name/);
  });

  void it("asks for quotes around non-string label and annotation values (KNV1054)", () => {
    const errors = problems(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {tier: 1}\n  annotations: {enabled: true, ok: 'yes'}\n",
    );
    assert.deepEqual(codes(errors), ["KNV1054", "KNV1054"]);
    assert.match(errors[0]?.message ?? "", /add quotes around: metadata\.labels\.tier$/);
    assert.match(errors[1]?.message ?? "", /add quotes around: metadata\.annotations\.enabled$/);
  });

  void it("reports fields of the wrong type as parse errors (KNV1006)", () => {
    assert.deepEqual(codes(problems("apiVersion: v1\nkind: ConfigMap\nmetadata: [name]\n")), ["KNV1006", "KNV1031"]);
    assert.deepEqual(codes(problems("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 7}\n")), ["KNV1006"]);
    assert.deepEqual(codes(problems("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: [a]}\n")), [
      "KNV1006",
    ]);
  });

  void it("rejects status and server-set metadata copied from a live object, one KNV1045 per field as nomos", () => {
    const errors = problems(`apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  selfLink: /x
  uid: 1234
  resourceVersion: "99"
  generation: 3
  creationTimestamp: "2024-01-01T00:00:00Z"
  deletionTimestamp: "2024-01-02T00:00:00Z"
  deletionGracePeriodSeconds: 30
  ownerReferences: [{kind: X}]
status: {phase: Active}
`);
    const fields = [
      "metadata.ownerReference",
      "metadata.selfLink",
      "metadata.uid",
      "metadata.resourceVersion",
      "metadata.generation",
      "metadata.creationTimestamp",
      "metadata.deletionTimestamp",
      "metadata.deletionGracePeriodSeconds",
      "status",
    ];
    assert.deepEqual(
      codes(errors),
      fields.map(() => "KNV1045"),
    );
    errors.forEach((error, i) => {
      const field = fields[i] ?? "";
      assert.equal(
        error.message,
        `app/object.yaml: ConfigMap "c": Configs with "${field}" specified are not allowed. To fix, either remove the config or remove the "${field}" field in the config`,
      );
    });
  });

  void it("accepts what kubectl --dry-run writes: creationTimestamp null and an empty status", () => {
    valid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, creationTimestamp: null}\nstatus: {}\n");
    valid('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, creationTimestamp: ""}\n');
    valid("apiVersion: configmanagement.gke.io/v1\nkind: Repo\nmetadata: {name: repo}\nstatus: {import: {token: x}}\n");
  });

  void it("parses depends-on into object references", () => {
    const m = valid(`apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    config.kubernetes.io/depends-on: /namespaces/db/Secret/creds, apiextensions.k8s.io/CustomResourceDefinition/foos.example.com
`);
    assert.deepEqual(m.dependsOn, [
      { group: "", kind: "Secret", namespace: "db", name: "creds" },
      { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", namespace: "", name: "foos.example.com" },
    ]);
  });

  void it("reports a malformed depends-on value (KNV1054)", () => {
    const [error] = problems(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {config.kubernetes.io/depends-on: apps/Deployment}\n",
    );
    assert.equal(error?.code, "KNV1054");
    assert.match(
      error?.message ?? "",
      /invalid config\.kubernetes\.io\/depends-on annotation: reference "apps\/Deployment" must be/,
    );
  });

  void it('allows configmanagement.gke.io/managed only as "disabled" (KNV1005)', () => {
    valid(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {configmanagement.gke.io/managed: disabled}}\n",
    );
    assert.deepEqual(
      codes(
        problems(
          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {configmanagement.gke.io/managed: enabled}}\n",
        ),
      ),
      ["KNV1005"],
    );
  });

  void it("rejects reconciler-owned annotations (KNV1010) and labels (KNV1011), but not Config Sync's selector annotations", () => {
    const errors = problems(`apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  labels: {configsync.gke.io/declared-version: v1}
  annotations:
    configsync.gke.io/resource-id: _configmap_default_c
    configmanagement.gke.io/namespace-selector: prod
    configsync.gke.io/deletion-propagation-policy: Foreground
`);
    assert.deepEqual(codes(errors), ["KNV1010", "KNV1011"]);
    assert.match(errors[0]?.message ?? "", /annotations configsync\.gke\.io\/resource-id are reserved/);
  });

  void it("reports every problem of an object at once, each naming the object and file", () => {
    const errors = problems(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name, namespace: x, labels: {n: 1}}\nstatus: {a: 1}\n",
    );
    assert.deepEqual(codes(errors), ["KNV1036", "KNV1054", "KNV1045"]);
    for (const error of errors) {
      assert.match(error.message, /^app\/object\.yaml: ConfigMap "x\/Bad_Name": /);
      assert.deepEqual(error.resources, [
        {
          group: "",
          version: "v1",
          kind: "ConfigMap",
          namespace: "x",
          name: "Bad_Name",
          sourcePath: "app/object.yaml",
        },
      ]);
      assert.deepEqual(error.sourcePaths, ["app/object.yaml"]);
      assert.equal(error.errorClass, "terminal");
    }
  });
});
