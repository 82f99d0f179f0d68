/**
 * spec.helm.deployNamespace: the chart's objects are moved into that namespace, as Config Sync's
 * helm-sync moves them with kpt's set-namespace function: every namespaced object; a Namespace the
 * chart declares is renamed to it; ClusterRoleBinding subjects, the service of a CRD's conversion
 * webhook and of an APIService follow (so an operator's cluster-wide grant still names its
 * ServiceAccount); and a depends-on naming a moved object names it where it went. Built-in kinds are
 * placed by their known scope; a custom kind is moved only when the chart gave it a namespace.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isSeq, parseAllDocuments, type Document } from "yaml";
import { UserAnnotation } from "@driftless/api";
import { builtinKinds } from "@driftless/source";

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && /\.ya?ml$/.test(e.name)).map((e) => join(e.parentPath, e.name));
}

interface Rendered {
  readonly doc: Document;
  readonly apiVersion: string;
  readonly kind: string;
  readonly group: string;
  readonly name: string;
  /** The namespace before the move, for a namespaced object (the chart's, else `default`). */
  readonly namespace: string | undefined;
}

function read(doc: Document): Rendered | undefined {
  const object = doc.toJS() as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
  } | null;
  if (object === null || typeof object.apiVersion !== "string" || typeof object.kind !== "string") return undefined;
  const { apiVersion, kind } = object;
  const given = object.metadata?.namespace;
  const info = builtinKinds.resolveKind(apiVersion, kind) as { namespaced: boolean } | undefined;
  const namespaced = info === undefined ? given !== undefined : info.namespaced;
  return {
    doc,
    apiVersion,
    kind,
    group: apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "",
    name: typeof object.metadata?.name === "string" ? object.metadata.name : "",
    namespace: namespaced ? (typeof given === "string" && given !== "" ? given : "default") : undefined,
  };
}

/** A depends-on reference to a namespaced object: `group/namespaces/namespace/kind/name`. */
const namespacedReference = /^([^/]*)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/;

export async function setDeployNamespace(dir: string, namespace: string): Promise<void> {
  const files = await Promise.all(
    (await yamlFiles(dir)).map(async (file) => ({ file, docs: parseAllDocuments(await readFile(file, "utf8")) })),
  );
  const objects = files.flatMap(({ docs }) => docs.flatMap((doc) => read(doc) ?? []));
  // What the chart renders, named as before the move: a depends-on on one of them follows it.
  const moved = new Set(
    objects.flatMap((o) =>
      o.namespace === undefined ? [] : [`${o.group}/namespaces/${o.namespace}/${o.kind}/${o.name}`],
    ),
  );
  const changed = new Set<Document>();
  const set = (doc: Document, path: readonly (string | number)[], value: string): void => {
    if (doc.getIn(path) === value) return;
    doc.setIn(path, value);
    changed.add(doc);
  };
  for (const object of objects) {
    const { doc } = object;
    if (object.namespace !== undefined) set(doc, ["metadata", "namespace"], namespace);
    else if (object.group === "" && object.kind === "Namespace") set(doc, ["metadata", "name"], namespace);
    else if (object.group === "rbac.authorization.k8s.io" && object.kind === "ClusterRoleBinding") {
      const subjects = doc.getIn(["subjects"]);
      const count = isSeq(subjects) ? subjects.items.length : 0;
      for (let i = 0; i < count; i++)
        if (doc.hasIn(["subjects", i, "namespace"])) set(doc, ["subjects", i, "namespace"], namespace);
    } else if (object.group === "apiextensions.k8s.io" && object.kind === "CustomResourceDefinition") {
      const path = ["spec", "conversion", "webhook", "clientConfig", "service", "namespace"];
      if (doc.hasIn(path)) set(doc, path, namespace);
    } else if (object.group === "apiregistration.k8s.io" && object.kind === "APIService") {
      if (doc.hasIn(["spec", "service", "namespace"])) set(doc, ["spec", "service", "namespace"], namespace);
    }
    const dependsOn = doc.getIn(["metadata", "annotations", UserAnnotation.DependsOn]);
    if (typeof dependsOn === "string") {
      const rewritten = dependsOn
        .split(",")
        .map((reference) => {
          const trimmed = reference.trim();
          const match = namespacedReference.exec(trimmed);
          return match !== null && moved.has(trimmed)
            ? `${match[1]}/namespaces/${namespace}/${match[3]}/${match[4]}`
            : trimmed;
        })
        .join(",");
      if (rewritten !== dependsOn) set(doc, ["metadata", "annotations", UserAnnotation.DependsOn], rewritten);
    }
  }
  for (const { file, docs } of files)
    if (docs.some((doc) => changed.has(doc))) await writeFile(file, docs.map(asDocument).join(""));
}

/** A document of a stream, led by its own `---` (a parsed one keeps the marker it had). */
function asDocument(doc: Document): string {
  const text = doc.toString();
  return text.startsWith("---") ? text : `---\n${text}`;
}
