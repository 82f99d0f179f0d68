/**
 * OpenAPI schema of RootSync/RepoSync `spec`. It must accept every field Config Sync's CRD
 * accepts, with the same types and enums: `kubectl apply` validates strictly by default, so a
 * field missing here would turn a valid Config Sync manifest into an error. No other field is kept:
 * a misspelt or RootSync-only field is refused at apply, as Config Sync's CRD refuses it, not
 * stored and then ignored (only helm `values` holds arbitrary content).
 */
import {
  helmChartNameMaxLength,
  helmChartSchemaPattern,
  helmReleaseNameMaxLength,
  helmReleaseNamePattern,
} from "./helm-names.ts";
import { anyJson, arr, bool, int, int64, obj, quantity, str, type JsonSchemaProps } from "./crd-schema.ts";
import { Kind, type SyncKind } from "./groups.ts";

const secretRef = (description: string): JsonSchemaProps =>
  obj(description, { name: str("Name of the Secret, in the namespace of the sync.") }, { nullable: true });

const caCertSecretRef = secretRef(
  "Secret holding a CA certificate under the key `cert`, trusted when connecting to the source.",
);

const period = (what: string, defaultValue: string): JsonSchemaProps =>
  str(`Go duration between ${what}, e.g. \`30s\` or \`1m30s\`. Defaults to ${defaultValue}.`);

/**
 * Stricter than Config Sync's CRD, which has none: every webhook push keys every sync's URL, so a tenant's
 * megabyte-long URL would cost the manager on each push.
 */
const sourceUrlMaxLength = 2048;

const gcpServiceAccountEmail = str("Google service account used with auth `gcpserviceaccount`.");

const git = obj(
  "Where and how to read a Git repository.",
  {
    repo: str("URL of the repository to clone.", { maxLength: sourceUrlMaxLength }),
    branch: str("Branch to sync. Defaults to `master`. Ignored when `revision` names something other than `HEAD`."),
    revision: str("Tag, ref or commit to sync. Defaults to `HEAD`, the tip of `branch`."),
    dir: str("Directory of the repository holding the manifests. Defaults to the repository root."),
    period: period("polls of the repository", "15s"),
    // Config Sync's Git enum: k8sserviceaccount is for OCI and Helm only, so the API server refuses it here (422).
    auth: str("How to authenticate to the repository.", {
      enum: ["ssh", "cookiefile", "gcenode", "gcpserviceaccount", "token", "githubapp", "none"],
    }),
    gcpServiceAccountEmail,
    proxy: str("HTTPS proxy URL; has an effect with auth none, cookiefile and token."),
    secretRef: secretRef("Secret with the credentials for `auth` (ssh, token, cookiefile, githubapp)."),
    noSSLVerify: bool("Skip TLS certificate verification of the Git server."),
    caCertSecretRef,
  },
  { required: ["auth", "repo"] },
);

const oci = obj(
  "Where and how to read an OCI image.",
  {
    image: str("Image reference, by tag or digest.", { maxLength: sourceUrlMaxLength }),
    dir: str("Directory of the image holding the manifests."),
    period: period("polls of the image", "15s"),
    auth: str("How to authenticate to the registry. `token` (basic credentials from secretRef) is driftless's own.", {
      enum: ["gcenode", "gcpserviceaccount", "k8sserviceaccount", "none", "token"],
    }),
    gcpServiceAccountEmail,
    secretRef: secretRef("driftless only: Secret with keys `username` and `password` for auth `token`."),
    caCertSecretRef,
  },
  { required: ["auth", "image"] },
);

const namespacePattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/** An anchored pattern that also accepts "", which the parser reads as absent. */
const optional = (pattern: string): string => `^$|${pattern}`;

function helm(kind: SyncKind): JsonSchemaProps {
  const rootOnly: Record<string, JsonSchemaProps> =
    kind === Kind.RootSync
      ? {
          namespace: str("Release namespace of the chart; exclusive with deployNamespace.", {
            pattern: optional(namespacePattern),
            maxLength: 63,
          }),
          deployNamespace: str("Namespace to deploy the chart's objects into; exclusive with namespace.", {
            pattern: optional(namespacePattern),
            maxLength: 63,
          }),
        }
      : {};
  return obj(
    "Where and how to read a Helm chart.",
    {
      repo: str("Helm repository URL.", { maxLength: sourceUrlMaxLength }),
      // Both reach helm as positional arguments: a value starting with `-` would be a flag.
      chart: str("Chart name.", { pattern: helmChartSchemaPattern, maxLength: helmChartNameMaxLength }),
      version: str("Chart version or version range; latest when empty."),
      releaseName: str("Helm release name.", {
        pattern: optional(helmReleaseNamePattern),
        maxLength: helmReleaseNameMaxLength,
      }),
      values: anyJson("Chart values, as in values.yaml."),
      valuesFileRefs: arr(
        "ConfigMaps in the sync's namespace holding values files, later ones winning.",
        obj("A values file in a ConfigMap.", {
          name: str("ConfigMap name."),
          dataKey: str("Key of the values file in the ConfigMap. Defaults to values.yaml."),
        }),
      ),
      includeCRDs: bool("Render the chart's CustomResourceDefinitions too."),
      period: period("re-fetches of the chart", "1h"),
      auth: str("How to authenticate to the Helm repository.", {
        enum: ["none", "gcpserviceaccount", "k8sserviceaccount", "token", "gcenode"],
      }),
      gcpServiceAccountEmail,
      secretRef: secretRef("Secret with the credentials for auth `token`."),
      caCertSecretRef,
      ...rootOnly,
    },
    { required: ["auth", "chart", "repo"] },
  );
}

const roleRef = obj(
  "A Role or ClusterRole to bind the reconciler to.",
  {
    kind: str("Role or ClusterRole.", { enum: ["Role", "ClusterRole"] }),
    name: str("Name of the role."),
    namespace: str("Namespace of the RoleBinding; required for kind Role. Empty binds cluster-wide."),
  },
  { required: ["kind", "name"] },
);

function override(kind: SyncKind): JsonSchemaProps {
  const rootOnly: Record<string, JsonSchemaProps> =
    kind === Kind.RootSync
      ? {
          roleRefs: arr("Roles the root reconciler is bound to instead of cluster-admin.", roleRef),
          namespaceStrategy: str("Whether Namespaces used but not declared are created (implicit) or not (explicit).", {
            enum: ["implicit", "explicit"],
          }),
        }
      : // RootSync-only, as in Config Sync's RepoSync CRD: strict field validation refuses roleRefs on a
        // RepoSync (its namespace's admin grants the reconciler its permissions with a RoleBinding).
        {};
  return obj(
    "Settings of the reconciler serving this sync.",
    {
      resources: arr(
        "Resource requests and limits per reconciler container.",
        obj("Requests and limits of one container.", {
          containerName: str("Container to override (reconciler, git-sync, ...)."),
          cpuRequest: quantity("CPU request."),
          memoryRequest: quantity("Memory request."),
          cpuLimit: quantity("CPU limit."),
          memoryLimit: quantity("Memory limit."),
        }),
      ),
      gitSyncDepth: int64("Commits to fetch: 0 for a full clone, more for a shallow one; automatic when unset.", {
        minimum: 0,
      }),
      statusMode: str("`enabled` records per-object status in the ResourceGroup.", {
        pattern: "^(enabled|disabled|)$",
      }),
      reconcileTimeout: str("Go duration to wait for applied objects to become ready. Defaults to 5m."),
      apiServerTimeout: str("Go duration allowed for one API server request. Defaults to 15s."),
      enableShellInRendering: bool("Allow shell access while rendering (kustomize remote bases)."),
      logLevels: arr(
        "Log verbosity per reconciler container.",
        obj(
          "Log verbosity of one container.",
          {
            containerName: str("Container whose verbosity is set."),
            logLevel: int("Verbosity from 0 to 10.", { minimum: 0, maximum: 10 }),
          },
          { required: ["containerName", "logLevel"] },
        ),
        { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["containerName"] },
      ),
      ...rootOnly,
    },
    { nullable: true },
  );
}

/** The `spec` schema of RootSync or RepoSync. */
export function syncSpecSchema(kind: SyncKind): JsonSchemaProps {
  return obj(`Desired state of the ${kind}: which source to sync and how.`, {
    sourceFormat:
      kind === Kind.RootSync
        ? str("Layout of the source: `unstructured`, or `hierarchy` (the default for RootSync).", {
            pattern: "^(hierarchy|unstructured|)$",
          })
        : // Config Sync's RepoSync CRD admits only unstructured.
          str("Layout of the source; a RepoSync's is always `unstructured`.", { pattern: "^(unstructured|)$" }),
    sourceType: str("Kind of source: git, oci or helm. Defaults to git.", {
      pattern: "^(git|oci|helm)$",
      default: "git",
    }),
    git,
    oci,
    helm: helm(kind),
    override: override(kind),
  });
}
