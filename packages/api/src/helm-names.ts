/**
 * What helm accepts as a release name and what driftless accepts as a chart name. Both reach `helm`
 * as positional arguments (a RootSync's spec.helm, a kustomization's helmCharts), so a value that
 * starts with `-` would be read as a flag (`--set-file=k=/path`, `--post-renderer=…`): refused here,
 * in the parser and in the CRD schema, before any helm runs.
 */

/** helm's own release-name rule (DNS-1123 subdomain, at most 53 characters: the name goes into labels). */
export const helmReleaseNamePattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
export const helmReleaseNameMaxLength = 53;

/** A chart's name in its repository: no path, no leading `-` or `.`. */
export const helmChartNamePattern = "^[A-Za-z0-9][A-Za-z0-9._-]*$";
/**
 * The CRD's rule for spec.helm.chart: the name's, with `/` let through. Config Sync's API takes
 * `<repo>/<chart>` and its validation refuses it on status (KNV1061), so the parser does that.
 */
export const helmChartSchemaPattern = "^[A-Za-z0-9][A-Za-z0-9._/-]*$";
export const helmChartNameMaxLength = 250;

const releaseName = new RegExp(helmReleaseNamePattern);
const chartName = new RegExp(helmChartNamePattern);

/** Why `value` is not a helm release name, or undefined when it is one. */
export function helmReleaseNameProblem(value: string): string | undefined {
  if (value.length > helmReleaseNameMaxLength)
    return `must be a helm release name of at most ${helmReleaseNameMaxLength} characters`;
  if (!releaseName.test(value))
    return "must be a helm release name: lower case letters, digits, '-' and '.', starting and ending with a letter or digit";
  return undefined;
}

/** Why `value` is not a chart name, or undefined when it is one. */
export function helmChartNameProblem(value: string): string | undefined {
  if (value.length > helmChartNameMaxLength)
    return `must be a chart name of at most ${helmChartNameMaxLength} characters`;
  if (!chartName.test(value))
    return "must be a chart name in its repository: letters, digits, '.', '_' and '-', starting with a letter or digit, not a path or a flag";
  return undefined;
}
