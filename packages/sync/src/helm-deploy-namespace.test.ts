import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { parseAllDocuments } from "yaml";
import { setDeployNamespace } from "./helm-deploy-namespace.ts";

interface Rendered {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly annotations?: Record<string, string>;
  };
  readonly subjects?: readonly { readonly namespace?: string }[];
  readonly spec?: unknown;
}

const rendered = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: operator
  namespace: default
---
apiVersion: v1
kind: Namespace
metadata:
  name: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: operator
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator }
subjects:
  - { kind: ServiceAccount, name: operator, namespace: default }
  - { kind: Group, name: auditors, apiGroup: rbac.authorization.k8s.io }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: operator
  annotations:
    config.kubernetes.io/depends-on: /namespaces/default/ServiceAccount/operator,/namespaces/elsewhere/ConfigMap/x
spec: {}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec: {}
`;

test("deployNamespace moves what kpt's set-namespace moves: namespaced objects, the Namespace, ClusterRoleBinding subjects, depends-on", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-deploy-ns-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, "templates"));
  await writeFile(join(dir, "templates", "all.yaml"), rendered);
  await setDeployNamespace(dir, "team");
  const documents = parseAllDocuments(await readFile(join(dir, "templates", "all.yaml"), "utf8"));
  assert.equal(documents.length, 5, "the file keeps its five documents, no empty ones");
  const [account, namespace, binding, deployment, crd] = documents.map((d) => d.toJS() as Rendered);
  assert.equal(account?.metadata.namespace, "team");
  assert.equal(namespace?.metadata.name, "team");
  assert.deepEqual(
    binding?.subjects?.map((s) => s.namespace),
    ["team", undefined],
  );
  // A Deployment without a namespace is moved too; a depends-on follows only what the chart moved.
  assert.equal(deployment?.metadata.namespace, "team");
  assert.equal(
    deployment?.metadata.annotations?.["config.kubernetes.io/depends-on"],
    "/namespaces/team/ServiceAccount/operator,/namespaces/elsewhere/ConfigMap/x",
  );
  // No conversion webhook: nothing is added to the CRD.
  assert.deepEqual(crd?.spec, {});
});
