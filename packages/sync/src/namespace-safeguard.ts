/**
 * Config Sync's failsafe against a misread source: a commit that would leave no Namespace declared where two
 * or more were managed is refused (KNV2006), whatever else it declares. Deleting them all takes two commits:
 * all but one, then the last. Unlike Config Sync's in-memory check, the previous Namespaces come from the
 * inventory, so a restarted reconciler refuses too.
 */
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import type { DesiredObject, ObjectId } from "@driftless/applier";

export class DeleteAllNamespacesError extends DriftlessError {
  constructor(namespaces: readonly string[]) {
    super({
      code: KnvCode.EmptySource,
      errorClass: ErrorClass.Terminal,
      message: `New commit would delete all Namespaces [${namespaces.join(" ")}]. If this is not a mistake, remove all but one of them in one commit, then the last one in another`,
    });
  }
}

const isNamespace = (id: ObjectId): boolean => id.group === "" && id.kind === "Namespace";

/** The refusal, when `declared` keeps no Namespace of the two or more `managed` holds. */
export function deletesAllNamespaces(
  managed: readonly ObjectId[],
  declared: readonly DesiredObject[],
): DeleteAllNamespacesError | undefined {
  const previous = managed.filter(isNamespace).map((id) => id.name);
  if (previous.length < 2 || declared.some((d) => isNamespace(d.id))) return undefined;
  return new DeleteAllNamespacesError(previous.sort());
}
