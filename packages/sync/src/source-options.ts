/** How a sync's spec says its source is read, with Config Sync's defaults filled in. */
import { Defaults, NamespaceStrategy, SourceFormat, type RSync } from "@driftless/api";

/** A RootSync without spec.sourceFormat is hierarchical (Config Sync's default); a RepoSync is always unstructured. */
export function sourceFormatOf(sync: RSync): SourceFormat {
  if (sync.kind === "RepoSync") return SourceFormat.Unstructured;
  return sync.spec.sourceFormat || Defaults.rootSyncSourceFormat;
}

/** `implicit` unless a RootSync says `explicit`; a RepoSync never creates Namespaces. */
export function createsImplicitNamespaces(sync: RSync): boolean {
  if (sync.kind === "RepoSync") return false;
  return (sync.spec.override?.namespaceStrategy ?? NamespaceStrategy.Implicit) === NamespaceStrategy.Implicit;
}
