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

function refuseGoogleOnly(path: string, auth: string, reader: FieldReader): void {
  if (!googleOnlyAuth.includes(auth)) return;
  reader.problem(
    `${path}.auth "${auth}" needs Google Cloud credentials, which driftless does not use; use auth "token" with ${path}.secretRef (a Secret with keys username and password), or auth "none"`,
  );
}

/** `secretRef` is read with auth `token` only, and required by it. */
function checkSecretRef(path: string, auth: string, name: string | undefined, reader: FieldReader): void {
  if (auth === "token" && name === undefined) reader.problem(`${path}.auth "token" requires ${path}.secretRef.name`);
  if (auth !== "token" && name !== undefined)
    reader.problem(`${path}.secretRef must not be set with ${path}.auth "${auth}"`);
}

export function parseOci(raw: JsonRecord, reader: FieldReader): OciSpec {
  const path = "spec.oci";
  const image = reader.requiredString(raw, "image", path, `is required when spec.sourceType is "oci"`) ?? "";
  const auth = reader.oneOf(raw, "auth", path, Object.values(OciAuthType)) ?? OciAuthType.None;
  const secretRef = secretReference(raw, "secretRef", path, reader);
  const caCertSecretRef = secretReference(raw, "caCertSecretRef", path, reader);
  const period = durationField(raw, "period", path, reader);
  refuseGoogleOnly(path, auth, reader);
  checkSecretRef(path, auth, secretRef?.name, reader);
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
  const why = `is required when spec.sourceType is "helm"`;
  const repo = reader.requiredString(raw, "repo", path, why) ?? "";
  const chart = reader.requiredString(raw, "chart", path, why) ?? "";
  // Config Sync's rule, in its words: a chart is a name in its repository, never a path.
  if (chart.includes("/")) reader.problem(`field ${path}.chart must not contain a slash (/)`);
  // Nor a flag for helm: each part of a `<repo>/<chart>` too, so `--kubeconfig=/x` is named for what it is.
  const chartProblem = chart === "" ? undefined : chart.split("/").map(helmChartNameProblem).find(Boolean);
  if (chartProblem !== undefined) reader.problem(`${path}.chart ${chartProblem} (got ${JSON.stringify(chart)})`);
  if (repo !== "" && !/^(https?|oci):\/\//.test(repo))
    reader.problem(`${path}.repo must be an https://, http:// or oci:// URL (got "${repo}")`);
  const auth = reader.oneOf(raw, "auth", path, Object.values(HelmAuthType)) ?? HelmAuthType.None;
  const secretRef = secretReference(raw, "secretRef", path, reader);
  const caCertSecretRef = secretReference(raw, "caCertSecretRef", path, reader);
  const period = durationField(raw, "period", path, reader);
  refuseGoogleOnly(path, auth, reader);
  checkSecretRef(path, auth, secretRef?.name, reader);
  const valuesFileRefs = reader.records(raw, "valuesFileRefs", path)?.map((ref, i): ValuesFileRef => {
    const at = `${path}.valuesFileRefs[${i}]`;
    const name = reader.requiredString(ref, "name", at) ?? "";
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
    reader.problem(`${path} must set only one of namespace and deployNamespace`);
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
