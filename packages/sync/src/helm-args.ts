/**
 * The command lines driftless gives helm for a spec.helm source. Every value from the spec goes after
 * `--` or in a `--flag=value` pair, so none can be read as a flag; the repository password is never on
 * a command line (`ps` shows those): it goes to a 0600 repositories.yaml in the sync's private HOME, or
 * through stdin to `helm registry login`.
 */
import { withoutTrailingSlashes } from "@driftless/api";
import { stringify } from "yaml";

/** The name of the one repository in a sync's private repositories.yaml. */
export const helmRepositoryName = "driftless";

export interface HelmChartSource {
  readonly repo: string;
  readonly chart: string;
}

export function isOciRepository(repo: string): boolean {
  return repo.startsWith("oci://");
}

/** What helm is told to render: `oci://host/path/chart`, or the chart in the sync's own repository entry. */
export function chartReference(source: HelmChartSource): string {
  return isOciRepository(source.repo)
    ? `${withoutTrailingSlashes(source.repo)}/${source.chart}`
    : `${helmRepositoryName}/${source.chart}`;
}

/**
 * repositories.yaml (helm's repository config) with the sync's one repository and its credentials,
 * written with mode 0600 in the private HOME; credentials are sent to that repository's host only.
 */
export function repositoriesYaml(
  repo: string,
  basic: { readonly username: string; readonly password: string } | undefined,
  caFile: string | undefined,
): string {
  return stringify({
    apiVersion: "",
    generated: "0001-01-01T00:00:00Z",
    repositories: [
      {
        name: helmRepositoryName,
        url: repo,
        ...(basic === undefined ? {} : { username: basic.username, password: basic.password }),
        ...(caFile === undefined ? {} : { caFile }),
        pass_credentials_all: false,
      },
    ],
  });
}

export function repoUpdateArgs(): string[] {
  return ["repo", "update", "--fail-on-repo-update-fail", "--", helmRepositoryName];
}

export function registryLoginArgs(host: string, username: string): string[] {
  return ["registry", "login", `--username=${username}`, "--password-stdin", "--", host];
}

export function showChartArgs(reference: string, version: string | undefined): string[] {
  return ["show", "chart", ...(version === undefined ? [] : [`--version=${version}`]), "--", reference];
}

/** The chart archive, downloaded into `destination` (not unpacked): its schemas are checked before helm loads them. */
export function pullArgs(reference: string, version: string, destination: string): string[] {
  return ["pull", `--version=${version}`, `--destination=${destination}`, "--", reference];
}

export interface TemplateArgs {
  readonly reference: string;
  readonly releaseName: string | undefined;
  readonly version: string;
  readonly namespace: string;
  readonly includeCRDs: boolean;
  readonly valuesFiles: readonly string[];
  readonly outputDir: string;
}

export function templateArgs(t: TemplateArgs): string[] {
  return [
    "template",
    `--version=${t.version}`,
    `--namespace=${t.namespace}`,
    ...(t.includeCRDs ? ["--include-crds"] : []),
    ...t.valuesFiles.map((file) => `--values=${file}`),
    `--output-dir=${t.outputDir}`,
    "--",
    ...(t.releaseName === undefined ? [] : [t.releaseName]),
    t.reference,
  ];
}
