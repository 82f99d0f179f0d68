import { ApiVersion, type RSync, type SourceFormat, type SyncKind } from "@driftless/api";
import {
  comparisonCandidate,
  CustomResourceSchemaLoader,
  declaringSourceOf,
  decorate,
  idKey,
  Inventory,
  ownedBy,
  toDesired,
  type ObjectId,
} from "@driftless/applier";
import { KubeClient, RestMapper } from "@driftless/kube";
import { Annotator, CustomResourceSchemaRegistry, PatchMaker, renderResult } from "@driftless/objectmatcher";
import { implicitNamespaces, readSource } from "@driftless/source";
import { printableLine } from "../terminal-text.ts";

export interface DiffOptions {
  readonly dir: string;
  readonly format: SourceFormat;
  readonly kubeconfig: string | undefined;
  readonly sync: { readonly kind: SyncKind; readonly namespace: string; readonly name: string };
}

/**
 * `driftless diff DIR`: what a reconciler would write for this source, object by object, with the
 * same three-way match (so an object that would not be written shows no diff), and the objects it
 * would prune: those its ResourceGroup records, the source no longer declares, and whose live copy
 * still carries this sync's owning-inventory annotation (what prune() deletes). Reads only.
 * Exit 0 when nothing would change, 1 when something would, 2 when the source is invalid.
 */
export async function diff(options: DiffOptions, out: (line: string) => void): Promise<number> {
  const client = await KubeClient.fromKubeconfig(options.kubeconfig);
  try {
    const mapper = new RestMapper(client);
    const scope =
      options.sync.kind === "RootSync"
        ? ({ kind: "RootSync" } as const)
        : ({ kind: "RepoSync", namespace: options.sync.namespace } as const);
    const source = await readSource(options.dir, {
      scope,
      format: options.format,
      kinds: {
        resolveKind: async (apiVersion, kind) => {
          const m = await mapper.mappingFor(apiVersion, kind);
          return m === undefined
            ? undefined
            : { group: m.group, version: m.version, resource: m.resource, namespaced: m.namespaced };
        },
      },
    });
    if (!source.complete) {
      // One line each, as driftless builds it: a line break in it came from a file or object name.
      for (const error of source.errors) out(`${error.code}: ${printableLine(error.message)}`);
      return 2;
    }
    // The reconciler's matcher: custom resources merge by their CRD's schema here too.
    const registry = new CustomResourceSchemaRegistry();
    const schemas = new CustomResourceSchemaLoader({ client, registry, mapper });
    const matcher = new PatchMaker(new Annotator(), { schemas: registry });
    // The sync's spec gives the metadata its reconciler writes (source-path from the repository root, git-context).
    const rsyncMapping = await mapper.mappingFor(ApiVersion.ConfigSyncV1Beta1, options.sync.kind);
    const rsync =
      rsyncMapping === undefined
        ? undefined
        : await client.get(rsyncMapping, options.sync.namespace, options.sync.name);
    const declaringSource = rsync === undefined ? undefined : declaringSourceOf(rsync as unknown as RSync);
    let changes = 0;
    for (const object of source.objects) {
      const desired = toDesired(object, declaringSource);
      const mapping = await mapper.mappingFor(object.apiVersion, object.kind);
      const title = printableLine(
        `${object.apiVersion} ${object.kind} ${object.id.namespace ? `${object.id.namespace}/` : ""}${object.id.name}`,
      );
      if (mapping === undefined) {
        out(`? ${title}: kind not served by the cluster`);
        changes++;
        continue;
      }
      const live = await client.get(mapping, mapping.namespaced ? object.id.namespace : undefined, object.id.name);
      if (live === undefined) {
        out(`+ ${title}: would be created (${printableLine(object.sourcePath)})`);
        changes++;
        continue;
      }
      await schemas.ensure(mapping);
      const candidate = comparisonCandidate(decorate(desired, options.sync), live.metadata.annotations ?? {});
      const result = matcher.calculate(live, candidate);
      if (result.isEmpty()) continue;
      changes++;
      out(`~ ${renderResult(result)}`);
    }
    const declared = new Set(source.objects.map((o) => idKey(o.id)));
    // A RootSync declares the Namespaces its objects use without declaring them (namespaceStrategy: implicit, the default).
    if (options.sync.kind === "RootSync")
      for (const name of implicitNamespaces(source.objects))
        declared.add(idKey({ group: "", kind: "Namespace", namespace: "", name }));
    for (const id of await new Inventory(client, options.sync).read()) {
      if (declared.has(idKey(id))) continue;
      const mapping = await mapper.mappingForGroupKind(id.group, id.kind);
      const live =
        mapping === undefined
          ? undefined
          : await client.get(mapping, mapping.namespaced ? id.namespace : undefined, id.name);
      if (live === undefined || !ownedBy(live, options.sync)) continue;
      out(`- ${pruneTitle(id)}: would be pruned`);
      changes++;
    }
    out(`${source.objects.length} object(s), ${changes} would change`);
    return changes === 0 ? 0 : 1;
  } finally {
    client.close();
  }
}

/** An inventory entry, as the ResourceGroup records it (its fields are not validated as names): kept on one line. */
function pruneTitle(id: ObjectId): string {
  return printableLine(
    `${id.group ? `${id.group}/` : ""}${id.kind} ${id.namespace ? `${id.namespace}/` : ""}${id.name}`,
  );
}
