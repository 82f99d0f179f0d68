/**
 * spec.oci and spec.helm read from unknown JSON, with Config Sync's rules and defaults. The auth
 * types that need Google Cloud's metadata server or Workload Identity are refused with the
 * alternative named: driftless runs anywhere, with nothing to exchange for a Google token.
 */
import { Defaults } from "./defaults.ts";
import { Kind, type SyncKind } from "./groups.ts";
import { helmChartNameProblem, helmReleaseNameProblem } from "./helm-names.ts";
import { isDns1123Label } from "./kube-names.ts";
import { durationField, secretReference } from "./parse-spec-fields.ts";
import type { FieldReader, JsonRecord } from "./read-fields.ts";
import { HelmAuthType, OciAuthType, type HelmRootSyncSpec, type OciSpec, type ValuesFileRef } from "./sync-types.ts";

const googleOnlyAuth: readonly string[] = [
  OciAuthType.GceNode,
  OciAuthType.GcpServiceAccount,
  OciAuthType.K8sServiceAccount,
];

/** Config Sync's order, for its message; driftless adds token (basic credentials from secretRef). */
const ociAuthTypes = [
  OciAuthType.GceNode,
  OciAuthType.GcpServiceAccount,
  OciAuthType.K8sServiceAccount,
  OciAuthType.None,
  OciAuthType.Token,
] as const;
const helmAuthTypes = [
  HelmAuthType.GceNode,
  HelmAuthType.GcpServiceAccount,
  HelmAuthType.K8sServiceAccount,
  HelmAuthType.None,
  HelmAuthType.Token,
] as const;

function refuseGoogleOnly(path: string, auth: string, reader: FieldReader): void {
  if (!googleOnlyAuth.includes(auth)) return;
  reader.problem(
    `${path}.auth "${auth}" needs Google Cloud credentials, which driftless does not use; use auth "token" with ${path}.secretRef (a Secret with keys username and password), or auth "none"`,
  );
}

/**
 * A source's required string, missing: Config Sync's words lead (`RootSyncs must specify spec.git.repo when
 * spec.sourceType is "git"`), as its users match on them.
 */
export function requiredSourceField(
  kind: SyncKind,
  raw: JsonRecord,
  key: string,
  source: string,
  reader: FieldReader,
): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null || value === "") {
    reader.problem(`${kind}s must specify spec.${source}.${key} when spec.sourceType is "${source}"`);
    return undefined;
  }
  return reader.string(raw, key, `spec.${source}`);
}

/**
 * `spec.<source>.auth`, one of `allowed`; any other value in Config Sync's words, listing `allowed` in
 * its order, with `hint`'s reason after them.
 */
export function authField<T extends string>(
  kind: SyncKind,
  raw: JsonRecord,
  source: string,
  allowed: readonly T[],
  reader: FieldReader,
  hint: (value: string) => string | undefined = () => undefined,
): T | undefined {
  const value = reader.string(raw, "auth", `spec.${source}`);
  if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
  const why = hint(value);
  reader.problem(
    `${kind}s must specify spec.${source}.auth to be one of ${allowed.join(",")} (got "${value}"${why === undefined ? "" : `: ${why}`})`,
  );
  return undefined;
}

/**
 * Config Sync's words for a secretRef an auth type needs (its list, for Git and Helm alike); OCI has no
 * secretRef in Config Sync, and driftless reads one with auth token only.
 */
export function missingSecretRef(kind: SyncKind, source: string): string {
  if (source === "oci") return `${kind}s which specify spec.oci.auth as "token" must also specify spec.oci.secretRef`;
  return `${kind}s which specify spec.${source}.auth as one of "ssh", "cookiefile", "githubapp", or "token" must also specify spec.${source}.secretRef`;
}

/** Config Sync's words for a secretRef an auth type does not read. */
export function illegalSecretRef(kind: SyncKind, source: string, auth: string): string {
  return `${kind}s which specify spec.${source}.auth as one of "none", "gcenode", or "gcpserviceaccount" must not specify spec.${source}.secretRef (auth is "${auth}")`;
}

/** `secretRef` is read with auth `token` only, and required by it. */
function checkSecretRef(
  kind: SyncKind,
  source: string,
  auth: string,
  name: string | undefined,
  reader: FieldReader,
): void {
  if (auth === "token" && name === undefined) reader.problem(missingSecretRef(kind, source));
  if (auth !== "token" && name !== undefined) reader.problem(illegalSecretRef(kind, source, auth));
}

export function parseOci(kind: SyncKind, raw: JsonRecord, reader: FieldReader): OciSpec {
  const path = "spec.oci";
  const image = requiredSourceField(kind, raw, "image", "oci", reader) ?? "";
  const auth = authField(kind, raw, "oci", ociAuthTypes, reader) ?? OciAuthType.None;
  const secretRef = secretReference(raw, "secretRef", path, reader);
  const caCertSecretRef = secretReference(raw, "caCertSecretRef", path, reader);
  const period = durationField(raw, "period", path, reader);
  refuseGoogleOnly(path, auth, reader);
  checkSecretRef(kind, "oci", auth, secretRef?.name, reader);
  return {
    image,
    dir: reader.string(raw, "dir", path) ?? Defaults.gitDir,
    period: period ?? Defaults.period,
    auth,
    ...(secretRef === undefined ? {} : { secretRef }),
    ...(caCertSecretRef === undefined ? {} : { caCertSecretRef }),
  };
}

export function parseHelm(kind: SyncKind, raw: JsonRecord, reader: FieldReader): HelmRootSyncSpec {
  const path = "spec.helm";
  const repo = requiredSourceField(kind, raw, "repo", "helm", reader) ?? "";
  const chart = requiredSourceField(kind, raw, "chart", "helm", reader) ?? "";
  // Config Sync's rule, in its words: a chart is a name in its repository, never a path.
  if (chart.includes("/")) reader.problem(`${kind} field ${path}.chart must not contain a slash (/)`);
  // Nor a flag for helm: each part of a `<repo>/<chart>` too, so `--kubeconfig=/x` is named for what it is.
  const chartProblem = chart === "" ? undefined : chart.split("/").map(helmChartNameProblem).find(Boolean);
  if (chartProblem !== undefined) reader.problem(`${path}.chart ${chartProblem} (got ${JSON.stringify(chart)})`);
  if (repo !== "" && !/^(https?|oci):\/\//.test(repo))
    reader.problem(`${path}.repo must be an https://, http:// or oci:// URL (got "${repo}")`);
  const auth = authField(kind, raw, "helm", helmAuthTypes, reader) ?? HelmAuthType.None;
  const secretRef = secretReference(raw, "secretRef", path, reader);
  const caCertSecretRef = secretReference(raw, "caCertSecretRef", path, reader);
  const period = durationField(raw, "period", path, reader);
  refuseGoogleOnly(path, auth, reader);
  checkSecretRef(kind, "helm", auth, secretRef?.name, reader);
  const valuesFileRefs = reader.records(raw, "valuesFileRefs", path)?.map((ref, i): ValuesFileRef => {
    const at = `${path}.valuesFileRefs[${i}]`;
    const unnamed = ref["name"] === undefined || ref["name"] === null || ref["name"] === "";
    if (unnamed) reader.problem(`${kind}s must specify spec.helm.valuesFileRefs.name (${at})`);
    const name = unnamed ? "" : (reader.string(ref, "name", at) ?? "");
    return { name, dataKey: reader.string(ref, "dataKey", at) ?? Defaults.helmValuesFileDataKey };
  });
  // A RepoSync's chart is always released into the RepoSync's namespace, as in Config Sync.
  const namespace = kind === Kind.RootSync ? reader.string(raw, "namespace", path) : undefined;
  const deployNamespace = kind === Kind.RootSync ? reader.string(raw, "deployNamespace", path) : undefined;
  for (const [field, value] of [
    ["namespace", namespace],
    ["deployNamespace", deployNamespace],
  ] as const)
    if (value !== undefined && !isDns1123Label(value))
      reader.problem(`${path}.${field} must be a namespace name (got ${JSON.stringify(value)})`);
  if (namespace !== undefined && deployNamespace !== undefined)
    reader.problem(`${kind}s must specify only one of 'spec.helm.namespace' or 'spec.helm.deployNamespace'`);
  const version = reader.string(raw, "version", path);
  const releaseName = reader.string(raw, "releaseName", path);
  const releaseProblem = releaseName === undefined ? undefined : helmReleaseNameProblem(releaseName);
  if (releaseProblem !== undefined)
    reader.problem(`${path}.releaseName ${releaseProblem} (got ${JSON.stringify(releaseName)})`);
  const includeCRDs = reader.boolean(raw, "includeCRDs", path);
  const values = raw["values"];
  return {
    repo,
    chart,
    ...(version === undefined ? {} : { version }),
    ...(releaseName === undefined ? {} : { releaseName }),
    ...(values === undefined || values === null ? {} : { values }),
    ...(valuesFileRefs === undefined ? {} : { valuesFileRefs }),
    ...(includeCRDs === undefined ? {} : { includeCRDs }),
    period: period ?? Defaults.helmPeriod,
    auth,
    ...(secretRef === undefined ? {} : { secretRef }),
    ...(caCertSecretRef === undefined ? {} : { caCertSecretRef }),
    ...(namespace === undefined ? {} : { namespace }),
    ...(deployNamespace === undefined ? {} : { deployNamespace }),
  };
}
