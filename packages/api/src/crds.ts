/**
 * The CustomResourceDefinitions of RootSync, RepoSync and ResourceGroup, built from the schema
 * modules. manifests/crds/*.yaml are generated from these (see generate-crds.ts) and a test keeps
 * them identical, so code that installs CRDs directly and the YAML never disagree.
 */
import { obj, str, type JsonSchemaProps } from "./crd-schema.ts";
import { resourceGroupSchema } from "./crd-resource-group-schema.ts";
import { syncSpecSchema } from "./crd-sync-spec-schema.ts";
import { syncStatusSchema } from "./crd-sync-status-schema.ts";
import {
  ConfigSyncGroup,
  ConfigSyncVersion,
  CrdName,
  Kind,
  KptGroup,
  KptVersion,
  Plural,
  Singular,
  type SyncKind,
} from "./groups.ts";

export interface PrinterColumn {
  readonly name: string;
  readonly type: "string" | "integer" | "date";
  readonly jsonPath: string;
  readonly description?: string;
}

export interface CrdVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly schema: { readonly openAPIV3Schema: JsonSchemaProps };
  readonly subresources: { readonly status: Readonly<Record<string, never>> };
  readonly additionalPrinterColumns: readonly PrinterColumn[];
}

export interface CustomResourceDefinition {
  readonly apiVersion: "apiextensions.k8s.io/v1";
  readonly kind: "CustomResourceDefinition";
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> };
  readonly spec: {
    readonly group: string;
    readonly names: {
      readonly kind: string;
      readonly listKind: string;
      readonly plural: string;
      readonly singular: string;
    };
    readonly scope: "Namespaced";
    readonly versions: readonly CrdVersion[];
    readonly conversion: { readonly strategy: "None" };
  };
}

const labels = { "app.kubernetes.io/part-of": "driftless" } as const;

// Same columns as Config Sync, so `kubectl get rootsyncs` looks the same, plus Age.
const syncColumns: readonly PrinterColumn[] = [
  { name: "RenderingCommit", type: "string", jsonPath: ".status.rendering.commit" },
  { name: "RenderingErrorCount", type: "integer", jsonPath: ".status.rendering.errorSummary.totalCount" },
  { name: "SourceCommit", type: "string", jsonPath: ".status.source.commit" },
  { name: "SourceErrorCount", type: "integer", jsonPath: ".status.source.errorSummary.totalCount" },
  { name: "SyncCommit", type: "string", jsonPath: ".status.sync.commit" },
  { name: "SyncErrorCount", type: "integer", jsonPath: ".status.sync.errorSummary.totalCount" },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
];

function syncSchema(kind: SyncKind): JsonSchemaProps {
  const description =
    kind === Kind.RootSync
      ? "RootSync syncs a source of truth to the whole cluster. Lives in config-management-system."
      : "RepoSync syncs a source of truth to its own namespace.";
  return obj(description, {
    apiVersion: str("Versioned schema of this object."),
    kind: str(`${kind}.`),
    metadata: { type: "object" },
    spec: syncSpecSchema(kind),
    status: syncStatusSchema,
  });
}

function syncCrd(kind: SyncKind): CustomResourceDefinition {
  const schema = { openAPIV3Schema: syncSchema(kind) };
  // v1alpha1 is served with the identical schema because Config Sync still serves it and
  // manifests written against it exist; with identical schemas no conversion webhook is needed.
  const version = (name: string, storage: boolean): CrdVersion => ({
    name,
    served: true,
    storage,
    schema,
    subresources: { status: {} },
    additionalPrinterColumns: syncColumns,
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: CrdName[kind], labels },
    spec: {
      group: ConfigSyncGroup,
      names: { kind, listKind: `${kind}List`, plural: Plural[kind], singular: Singular[kind] },
      scope: "Namespaced",
      versions: [version(ConfigSyncVersion.V1Beta1, true), version(ConfigSyncVersion.V1Alpha1, false)],
      conversion: { strategy: "None" },
    },
  };
}

export const rootSyncCrd: CustomResourceDefinition = syncCrd(Kind.RootSync);
export const repoSyncCrd: CustomResourceDefinition = syncCrd(Kind.RepoSync);

export const resourceGroupCrd: CustomResourceDefinition = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: CrdName.ResourceGroup, labels },
  spec: {
    group: KptGroup,
    names: {
      kind: Kind.ResourceGroup,
      listKind: `${Kind.ResourceGroup}List`,
      plural: Plural.ResourceGroup,
      singular: Singular.ResourceGroup,
    },
    scope: "Namespaced",
    versions: [
      {
        name: KptVersion.V1Alpha1,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: resourceGroupSchema },
        subresources: { status: {} },
        // As upstream: the first two conditions are written in this order.
        additionalPrinterColumns: [
          { name: "Reconciling", type: "string", jsonPath: ".status.conditions[0].status" },
          { name: "Stalled", type: "string", jsonPath: ".status.conditions[1].status" },
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
        ],
      },
    ],
    conversion: { strategy: "None" },
  },
};

/** Every CRD with the file it is written to under manifests/crds/. */
export const crdFiles: readonly { readonly file: string; readonly crd: CustomResourceDefinition }[] = [
  { file: `${ConfigSyncGroup}_${Plural.RootSync}.yaml`, crd: rootSyncCrd },
  { file: `${ConfigSyncGroup}_${Plural.RepoSync}.yaml`, crd: repoSyncCrd },
  { file: `${KptGroup}_${Plural.ResourceGroup}.yaml`, crd: resourceGroupCrd },
];
