/**
 * Labels and annotations a source may not declare, with Config Sync's rules: its own prefixes are
 * reserved for what the reconciler writes (a copy of `kubectl get -o yaml` output would otherwise claim
 * another sync's ownership), and `configmanagement.gke.io/managed` may only say "disabled".
 */
import { ManagedAnnotation, ManagedValue, SyncAnnotation } from "@driftless/api";
import { IllegalAnnotationError, IllegalLabelError, IllegalManagementAnnotationError } from "./errors.ts";
import type { SourceError, SourceErrorDetails } from "./errors.ts";

const reservedPrefixes = ["configmanagement.gke.io/", "configsync.gke.io/"];

const ManagedKey = ManagedAnnotation.Managed;

/** Reserved-prefix annotations users may declare: the management switch, deletion propagation, and the selectors. */
const allowedAnnotations = new Set<string>([
  ManagedKey,
  SyncAnnotation.DeletionPropagationPolicy,
  "configmanagement.gke.io/namespace-selector",
  "configmanagement.gke.io/cluster-selector",
  "configsync.gke.io/cluster-name-selector",
]);

export function checkReservedMetadata(
  labels: Readonly<Record<string, string>> | undefined,
  annotations: Readonly<Record<string, string>> | undefined,
  where: (message: string) => string,
  details: SourceErrorDetails,
): SourceError[] {
  const errors: SourceError[] = [];
  const managed = annotations?.[ManagedKey];
  if (managed !== undefined && managed !== ManagedValue.Disabled) {
    const message = `${ManagedKey} is "${managed}"; in a source it may only be "${ManagedValue.Disabled}" (to stop managing the object) or absent`;
    errors.push(new IllegalManagementAnnotationError(where(message), details));
  }

  const annotationKeys = Object.keys(annotations ?? {});
  const reserved = annotationKeys.filter((key) => isReserved(key) && !allowedAnnotations.has(key));
  if (reserved.length > 0) {
    const message = `annotations ${reserved.join(", ")} are reserved for the reconciler and must not be declared`;
    errors.push(new IllegalAnnotationError(where(message), details));
  }

  const reservedLabels = Object.keys(labels ?? {}).filter(isReserved);
  if (reservedLabels.length > 0) {
    const message = `labels ${reservedLabels.join(", ")} are reserved for the reconciler and must not be declared`;
    errors.push(new IllegalLabelError(where(message), details));
  }
  return errors;
}

function isReserved(key: string): boolean {
  return reservedPrefixes.some((prefix) => key.startsWith(prefix));
}
