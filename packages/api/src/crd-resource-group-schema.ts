/**
 * OpenAPI schema of ResourceGroup, matching the kpt/Config Sync CRD so inventories written by
 * either tool read the same. Status values are plain strings (no enums), as upstream: a newer
 * writer adding a value must not make the whole status write fail.
 */
import { arr, int64, obj, str, type JsonSchemaProps } from "./crd-schema.ts";

const condition = obj(
  "An observation about the group or one of its objects.",
  {
    type: str("Reconciling, Stalled or OwnershipOverlap."),
    status: str("True, False or Unknown."),
    reason: str("One-word reason for the last transition."),
    message: str("Human-readable details."),
    lastTransitionTime: str("When status last changed.", { format: "date-time" }),
  },
  { required: ["status", "type"] },
);

const conditions = arr("Observations.", condition);

const objMetadata = {
  group: str("API group; empty for the core group."),
  kind: str("Kind."),
  namespace: str("Namespace; empty for cluster-scoped objects."),
  name: str("Name."),
};

const groupMetadata = { namespace: str("Namespace of the ResourceGroup."), name: str("Name of the ResourceGroup.") };

const spec = obj("The objects in the group.", {
  resources: arr(
    "Every object in the group (the inventory).",
    obj("One object.", objMetadata, { required: ["group", "kind", "name", "namespace"] }),
  ),
  subgroups: arr(
    "Other ResourceGroups included in this one.",
    obj("One ResourceGroup.", groupMetadata, { required: ["name", "namespace"] }),
  ),
  descriptor: obj("Metadata about the group.", {
    type: str("Type of the group, e.g. Application/WordPress."),
    revision: str("Revision of the group."),
    description: str("Short description."),
    links: arr(
      "Related URLs.",
      obj(
        "A link.",
        { description: str("What the link is."), url: str("The URL.") },
        { required: ["description", "url"] },
      ),
    ),
  }),
});

const resourceStatus: JsonSchemaProps = obj(
  "Status of one object.",
  {
    ...objMetadata,
    status: str("InProgress, Failed, Current, Terminating, NotFound or Unknown."),
    sourceHash: str("First characters of the commit the object was applied from."),
    conditions,
    strategy: str("Apply or Delete."),
    actuation: str("Pending, Succeeded, Skipped or Failed."),
    reconcile: str("Pending, Succeeded, Skipped, Timeout or Failed."),
  },
  { required: ["group", "kind", "name", "namespace", "status"] },
);

const status = obj(
  "Observed state of the group.",
  {
    observedGeneration: int64("The metadata.generation this status reflects."),
    resourceStatuses: arr("Status of each object in spec.resources.", resourceStatus),
    subgroupStatuses: arr(
      "Status of each subgroup.",
      obj(
        "Status of one subgroup.",
        { ...groupMetadata, status: str("Aggregated status of the subgroup."), conditions },
        { required: ["name", "namespace", "status"] },
      ),
    ),
    conditions,
  },
  { required: ["observedGeneration"] },
);

export const resourceGroupSchema: JsonSchemaProps = obj("The inventory of a sync: the objects it manages.", {
  apiVersion: str("Versioned schema of this object."),
  kind: str("ResourceGroup."),
  metadata: { type: "object" },
  spec,
  status,
});
