import type { SourceFormat, SyncKind } from "@driftless/api";
import { comparisonCandidate, CustomResourceSchemaLoader, decorate, toDesired } from "@driftless/applier";
import { KubeClient, RestMapper } from "@driftless/kube";
import { Annotator, CustomResourceSchemaRegistry, PatchMaker, renderResult } from "@driftless/objectmatcher";
import { readSource } from "@driftless/source";

export interface DiffOptions {
  readonly dir: string;
  readonly format: SourceFormat;
  readonly kubeconfig: string | undefined;
  readonly sync: { readonly kind: SyncKind; readonly namespace: string; readonly name: string };
}

/**
 * `driftless diff DIR`: what a reconciler would write for this source, object by object, with the
 * same three-way match (so an object that would not be written shows no diff). Reads only.
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
      for (const error of source.errors) out(`${error.code}: ${error.message}`);
      return 2;
    }
    // The reconciler's matcher: custom resources merge by their CRD's OpenAPI v3 schema here too.
    const registry = new CustomResourceSchemaRegistry();
    const schemas = new CustomResourceSchemaLoader({ client, registry, mapper });
    const matcher = new PatchMaker(new Annotator(), { schemas: registry });
    let changes = 0;
    for (const object of source.objects) {
      const desired = toDesired(object);
      const mapping = await mapper.mappingFor(object.apiVersion, object.kind);
      const title = `${object.apiVersion} ${object.kind} ${object.id.namespace ? `${object.id.namespace}/` : ""}${object.id.name}`;
      if (mapping === undefined) {
        out(`? ${title}: kind not served by the cluster`);
        changes++;
        continue;
      }
      const live = await client.get(mapping, mapping.namespaced ? object.id.namespace : undefined, object.id.name);
      if (live === undefined) {
        out(`+ ${title}: would be created (${object.sourcePath})`);
        changes++;
        continue;
      }
      await schemas.ensure(object.apiVersion, object.kind);
      const candidate = comparisonCandidate(decorate(desired, options.sync), live.metadata.annotations ?? {});
      const result = matcher.calculate(live, candidate);
      if (result.isEmpty()) continue;
      changes++;
      out(`~ ${renderResult(result)}`);
    }
    out(`${source.objects.length} object(s), ${changes} would change`);
    return changes === 0 ? 0 : 1;
  } finally {
    client.close();
  }
}
