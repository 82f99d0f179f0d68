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
import { builtinKinds, objectKey, parseDependsOn, splitApiVersion, type ObjectId } from "@driftless/source";

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && /\.ya?ml$/.test(e.name)).map((e) => join(e.parentPath, e.name));
}

interface Rendered {
  readonly doc: Document;
  /** As before the move; a namespaced object's namespace is the chart's, else `default`; "" for cluster-scoped. */
  readonly id: ObjectId;
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
  const namespace = namespaced ? (typeof given === "string" && given !== "" ? given : "default") : "";
  const name = typeof object.metadata?.name === "string" ? object.metadata.name : "";
  return { doc, id: { group: splitApiVersion(apiVersion)?.group ?? "", kind, namespace, name } };
}

export async function setDeployNamespace(dir: string, namespace: string): Promise<void> {
  const files = await Promise.all(
    (await yamlFiles(dir)).map(async (file) => ({ file, docs: parseAllDocuments(await readFile(file, "utf8")) })),
  );
  const objects = files.flatMap(({ docs }) => docs.flatMap((doc) => read(doc) ?? []));
  // What the chart renders, named as before the move: a depends-on on one of them follows it.
  const moved = new Set(objects.flatMap(({ id }) => (id.namespace === "" ? [] : [objectKey(id)])));
  const changed = new Set<Document>();
  const set = (doc: Document, path: readonly (string | number)[], value: string): void => {
    if (doc.getIn(path) === value) return;
    doc.setIn(path, value);
    changed.add(doc);
  };
  for (const { doc, id } of objects) {
    if (id.namespace !== "") set(doc, ["metadata", "namespace"], namespace);
    else if (id.group === "" && id.kind === "Namespace") set(doc, ["metadata", "name"], namespace);
    else if (id.group === "rbac.authorization.k8s.io" && id.kind === "ClusterRoleBinding") {
      const subjects = doc.getIn(["subjects"]);
      const count = isSeq(subjects) ? subjects.items.length : 0;
      for (let i = 0; i < count; i++)
        if (doc.hasIn(["subjects", i, "namespace"])) set(doc, ["subjects", i, "namespace"], namespace);
    } else if (id.group === "apiextensions.k8s.io" && id.kind === "CustomResourceDefinition") {
      const path = ["spec", "conversion", "webhook", "clientConfig", "service", "namespace"];
      if (doc.hasIn(path)) set(doc, path, namespace);
    } else if (id.group === "apiregistration.k8s.io" && id.kind === "APIService") {
      if (doc.hasIn(["spec", "service", "namespace"])) set(doc, ["spec", "service", "namespace"], namespace);
    }
    // A malformed value is left as it is: reading the rendered objects reports it.
    const dependsOn = doc.getIn(["metadata", "annotations", UserAnnotation.DependsOn]);
    const parsed = typeof dependsOn === "string" ? parseDependsOn(dependsOn) : undefined;
    if (parsed?.ok === true) {
      const rewritten = parsed.refs
        .map((ref) => objectKey(moved.has(objectKey(ref)) ? { ...ref, namespace } : ref))
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
