/**
 * Reads the spec of a RootSync/RepoSync from unknown JSON into typed values with defaults applied,
 * checking the rules Config Sync's reconciler-manager checks (so a spec it would reject is
 * rejected here with the same meaning) plus what driftless itself does not implement.
 */
import { Defaults, SourceFormat, SourceType } from "./defaults.ts";
import { Kind, type SyncKind } from "./groups.ts";
import { FieldReader, type JsonRecord } from "./read-fields.ts";
import { gitAuthAlternative } from "./git-auth-alternative.ts";
import {
  authField,
  illegalSecretRef,
  missingSecretRef,
  parseHelm,
  parseOci,
  requiredSourceField,
} from "./parse-source-spec.ts";
import { durationField, secretReference } from "./parse-spec-fields.ts";
import {
  GitAuthType,
  GitAuthTypesWithProxy,
  GitAuthTypesWithSecret,
  NamespaceStrategy,
  RoleRefKind,
  SupportedGitAuthTypes,
  type ContainerLogLevelOverride,
  type ContainerResourcesSpec,
  type GitSpec,
  type HelmRootSyncSpec,
  type OciSpec,
  type OverrideSpec,
  type Quantity,
  type RepoSyncOverrideSpec,
  type RepoSyncSpec,
  type RoleRef,
  type RootSyncOverrideSpec,
  type RootSyncRoleRef,
  type RootSyncSpec,
} from "./sync-types.ts";

const gcpServiceAccountSuffix = ".iam.gserviceaccount.com";
/** Config Sync's Git auth types, in the order its message lists them. */
const gitAuthTypes = [
  GitAuthType.Ssh,
  GitAuthType.CookieFile,
  GitAuthType.GceNode,
  GitAuthType.Token,
  GitAuthType.None,
  GitAuthType.GcpServiceAccount,
  GitAuthType.GithubApp,
] as const;

/** Parses `spec`; problems go to `reader`. The result is only meaningful when there are none. */
export function parseSyncSpec(kind: SyncKind, raw: JsonRecord, reader: FieldReader): RootSyncSpec | RepoSyncSpec {
  const path = "spec";
  const problemsBefore = reader.problems.length;
  const sourceType = parseSourceType(kind, raw, reader) ?? Defaults.sourceType;
  const sourceTypeInvalid = reader.problems.length > problemsBefore;
  const sourceFormat = parseSourceFormat(kind, raw, reader);

  let git: GitSpec | undefined;
  let oci: OciSpec | undefined;
  let helm: HelmRootSyncSpec | undefined;
  if (sourceTypeInvalid) {
    // Already reported; complaining about a missing spec.git as well would only add noise.
  } else {
    const block = reader.record(raw, sourceType, path);
    // Config Sync's words.
    if (block === undefined)
      reader.problem(`${kind}s must specify spec.${sourceType} when spec.sourceType is "${sourceType}"`);
    else if (sourceType === SourceType.Git) git = parseGit(kind, block, reader);
    else if (sourceType === SourceType.Oci) oci = parseOci(kind, block, reader);
    else helm = parseHelm(kind, block, reader);
  }

  const overrideRaw = reader.record(raw, "override", path);
  const override = overrideRaw === undefined ? undefined : parseOverride(kind, overrideRaw, reader);

  return {
    sourceType,
    sourceFormat,
    ...(git === undefined ? {} : { git }),
    ...(oci === undefined ? {} : { oci }),
    ...(helm === undefined ? {} : { helm }),
    ...(override === undefined ? {} : { override }),
  };
}

function parseSourceType(kind: SyncKind, raw: JsonRecord, reader: FieldReader): SourceType | undefined {
  const value = reader.string(raw, "sourceType", "spec");
  if (value === undefined || Object.values<string>(SourceType).includes(value)) return value as SourceType | undefined;
  reader.problem(`${kind}s must specify spec.sourceType to be one of "git", "oci", "helm" (got "${value}")`);
  return undefined;
}

function parseSourceFormat(kind: SyncKind, raw: JsonRecord, reader: FieldReader): SourceFormat {
  const value = reader.oneOf(raw, "sourceFormat", "spec", Object.values(SourceFormat));
  // Config Sync's RepoSync CRD allows only unstructured (pattern `^(unstructured|)$`): a CRD installed
  // without that rule lets `hierarchy` through, and it is refused here rather than read otherwise.
  if (kind === Kind.RepoSync) {
    if (value === SourceFormat.Hierarchy)
      reader.problem(
        `spec.sourceFormat "hierarchy" is not supported on a RepoSync: a namespace's source is always unstructured; remove the field or set it to "unstructured"`,
      );
    return SourceFormat.Unstructured;
  }
  return value ?? Defaults.rootSyncSourceFormat;
}

function parseGit(kind: SyncKind, raw: JsonRecord, reader: FieldReader): GitSpec {
  const path = "spec.git";
  const repo = requiredSourceField(kind, raw, "repo", "git", reader) ?? "";
  const problemsBefore = reader.problems.length;
  // The CRD refuses k8sserviceaccount for Git, as Config Sync's does; one stored under an older CRD is refused here.
  const auth =
    authField(kind, raw, "git", gitAuthTypes, reader, (value) =>
      value === GitAuthType.K8sServiceAccount ? "it applies to OCI and Helm sources only" : undefined,
    ) ?? GitAuthType.None;
  const authInvalid = reader.problems.length > problemsBefore;
  const period = durationField(raw, "period", path, reader);
  const email = reader.string(raw, "gcpServiceAccountEmail", path);
  const proxy = reader.string(raw, "proxy", path);
  const secretRef = secretReference(raw, "secretRef", path, reader);
  const caCertSecretRef = secretReference(raw, "caCertSecretRef", path, reader);
  const noSSLVerify = reader.boolean(raw, "noSSLVerify", path);

  if (auth === GitAuthType.GcpServiceAccount) {
    const which = `${kind}s which specify spec.git.auth as "gcpserviceaccount"`;
    if (email === undefined) reader.problem(`${which} must also specify spec.git.gcpServiceAccountEmail`);
    else if (!isGcpServiceAccountEmail(email)) {
      reader.problem(
        `${which} must use suffix <gcp_serviceaccount_name>.[${gcpServiceAccountSuffix}] (6 to 30 characters before the @)`,
      );
    }
  }
  // An auth type that is not one says nothing about the proxy or the Secret.
  if (!authInvalid) checkGitAuthFields(kind, auth, proxy, secretRef?.name, reader);
  if (!SupportedGitAuthTypes.includes(auth)) {
    const alternative = gitAuthAlternative(auth);
    reader.problem(
      `spec.git.auth "${auth}" is not supported by driftless (supported: ${SupportedGitAuthTypes.join(", ")})${alternative === undefined ? "" : `: ${alternative}`}`,
    );
  }

  return {
    repo,
    branch: reader.string(raw, "branch", path) ?? Defaults.gitBranch,
    revision: reader.string(raw, "revision", path) ?? Defaults.gitRevision,
    dir: reader.string(raw, "dir", path) ?? Defaults.gitDir,
    period: period ?? Defaults.period,
    auth,
    ...(email === undefined ? {} : { gcpServiceAccountEmail: email }),
    ...(proxy === undefined ? {} : { proxy }),
    ...(secretRef === undefined ? {} : { secretRef }),
    ...(noSSLVerify === undefined ? {} : { noSSLVerify }),
    ...(caCertSecretRef === undefined ? {} : { caCertSecretRef }),
  };
}

/** Config Sync's rules, in its words: a proxy only with the auth types that use it, a secretRef iff auth reads one. */
function checkGitAuthFields(
  kind: SyncKind,
  auth: GitAuthType,
  proxy: string | undefined,
  secretName: string | undefined,
  reader: FieldReader,
): void {
  if (proxy !== undefined && !GitAuthTypesWithProxy.includes(auth)) {
    // Config Sync lists the types it honours a proxy for; driftless refuses githubapp.
    reader.problem(
      `${kind}s which specify spec.git.proxy must also specify spec.git.auth as one of "none", "cookiefile", "token" or "githubapp" (driftless supports "none", "cookiefile" and "token"), not "${auth}"`,
    );
  }
  const needsSecret = GitAuthTypesWithSecret.includes(auth);
  if (needsSecret && secretName === undefined) reader.problem(`${missingSecretRef(kind, "git")} (auth is "${auth}")`);
  if (!needsSecret && secretName !== undefined) reader.problem(illegalSecretRef(kind, "git", auth));
}

function parseOverride(
  kind: SyncKind,
  raw: JsonRecord,
  reader: FieldReader,
): RootSyncOverrideSpec | RepoSyncOverrideSpec {
  const path = "spec.override";
  const common: OverrideSpec = compact({
    resources: reader
      .records(raw, "resources", path)
      ?.map((r, i) => parseResources(kind, r, `${path}.resources[${i}]`, reader)),
    gitSyncDepth: reader.integer(raw, "gitSyncDepth", path, 0),
    statusMode: reader.oneOf(raw, "statusMode", path, ["enabled", "disabled"]),
    reconcileTimeout: durationField(raw, "reconcileTimeout", path, reader),
    apiServerTimeout: durationField(raw, "apiServerTimeout", path, reader),
    enableShellInRendering: reader.boolean(raw, "enableShellInRendering", path),
    logLevels: reader
      .records(raw, "logLevels", path)
      ?.map((r, i) => parseLogLevel(r, `${path}.logLevels[${i}]`, reader)),
  });
  const roleRefsRaw = reader.records(raw, "roleRefs", path);
  if (kind === Kind.RepoSync) {
    // Config Sync's RepoSync has no roleRefs. Honouring them would let whoever can write a RepoSync
    // grant any role in its namespace through the manager, which holds `bind` on every role.
    if (roleRefsRaw !== undefined && roleRefsRaw.length > 0)
      reader.problem(
        `${path}.roleRefs is not supported on a RepoSync: its reconciler gets more than its base role only from a RoleBinding the namespace's admin creates`,
      );
    return common;
  }
  const roleRefs = roleRefsRaw?.map((r, i): RootSyncRoleRef => {
    const at = `${path}.roleRefs[${i}]`;
    const ref = parseRoleRef(r, at, reader);
    const namespace = reader.string(r, "namespace", at);
    // A Role only exists inside a namespace, so binding one needs to say which.
    if (ref.kind === RoleRefKind.Role && namespace === undefined)
      reader.problem(
        `${kind}s must specify 'spec.override.roleRefs.namespace' for role references with kind Role (${at})`,
      );
    return namespace === undefined ? ref : { ...ref, namespace };
  });
  const namespaceStrategy = reader.oneOf(raw, "namespaceStrategy", path, Object.values(NamespaceStrategy));
  return compact({ ...common, roleRefs, namespaceStrategy });
}

function parseResources(kind: SyncKind, raw: JsonRecord, path: string, reader: FieldReader): ContainerResourcesSpec {
  const read = (key: string): Quantity | undefined => quantity(kind, raw, key, path, reader);
  return compact({
    containerName: reader.string(raw, "containerName", path),
    cpuRequest: read("cpuRequest"),
    memoryRequest: read("memoryRequest"),
    cpuLimit: read("cpuLimit"),
    memoryLimit: read("memoryLimit"),
  });
}

function parseLogLevel(raw: JsonRecord, path: string, reader: FieldReader): ContainerLogLevelOverride {
  return {
    containerName: reader.requiredString(raw, "containerName", path) ?? "",
    logLevel: reader.integer(raw, "logLevel", path, 0, 10) ?? 0,
  };
}

function parseRoleRef(raw: JsonRecord, path: string, reader: FieldReader): RoleRef {
  const kind = reader.oneOf(raw, "kind", path, Object.values(RoleRefKind));
  if (kind === undefined && (raw["kind"] === undefined || raw["kind"] === ""))
    reader.problem(`${path}.kind is required`);
  return { kind: kind ?? RoleRefKind.ClusterRole, name: reader.requiredString(raw, "name", path) ?? "" };
}

const quantityPattern = /^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(\d+(\.\d*)?|\.\d+)))?$/;

function quantity(
  kind: SyncKind,
  raw: JsonRecord,
  key: string,
  path: string,
  reader: FieldReader,
): Quantity | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === "") return undefined;
  // Config Sync's words; the entry's index follows.
  const negative = () =>
    reader.problem(`${kind} field 'spec.override.resources.${key}' must not be negative (${path}.${key})`);
  if (typeof value === "number" && Number.isFinite(value)) {
    if (value < 0) negative();
    return value;
  }
  if (typeof value === "string" && quantityPattern.test(value)) {
    if (value.startsWith("-")) negative();
    return value;
  }
  reader.problem(`${path}.${key} must be a resource quantity such as "500m" or "1Gi"`);
  return undefined;
}

function isGcpServiceAccountEmail(email: string): boolean {
  const [account, domain, ...rest] = email.split("@");
  return (
    rest.length === 0 &&
    account !== undefined &&
    account.length >= 6 &&
    account.length <= 30 &&
    domain !== undefined &&
    domain.endsWith(gcpServiceAccountSuffix)
  );
}

/** Drops undefined fields so parsed objects carry only what was set (plus defaults). */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
