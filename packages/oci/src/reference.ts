/**
 * An image reference (`host[:port]/repository[:tag][@sha256:hex]`) read into its parts, with the
 * Docker defaults a bare name implies (docker.io, library/, latest).
 */
import { OciFailureReason, OciFetchError } from "./errors.ts";

export interface ImageReference {
  /** `host[:port]` as written, or `docker.io` for a bare name. */
  readonly registry: string;
  readonly repository: string;
  readonly tag: string | undefined;
  /** `sha256:<64 hex>` when the reference pins one. */
  readonly digest: string | undefined;
}

const repositoryPattern = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const tagPattern = /^[\w][\w.-]{0,127}$/;
const digestPattern = /^sha256:[a-f0-9]{64}$/;

export function parseImageReference(image: string): ImageReference {
  // go-containerregistry's words, as Config Sync's oci-sync reports them; why it is none follows.
  const invalid = (why: string): OciFetchError =>
    new OciFetchError(
      OciFailureReason.InvalidReference,
      `failed to parse reference ${JSON.stringify(image)}: could not parse reference: ${image} (${why})`,
    );
  let rest = image.trim();
  if (rest === "") throw invalid("it is empty");
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!digestPattern.test(digest)) throw invalid("the digest must be sha256: and 64 hex digits");
  }
  const slash = rest.indexOf("/");
  const first = slash < 0 ? "" : rest.slice(0, slash);
  // Docker's rule: the first part is a registry when it looks like a host (a dot, a port, or localhost).
  const hasRegistry = slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost");
  const registry = hasRegistry ? first : "docker.io";
  let path = hasRegistry ? rest.slice(slash + 1) : rest;
  let tag: string | undefined;
  const colon = path.lastIndexOf(":");
  if (colon >= 0) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!tagPattern.test(tag)) throw invalid(`the tag "${tag}" has characters a tag cannot have`);
  }
  if (registry === "docker.io" && !path.includes("/")) path = `library/${path}`;
  if (!repositoryPattern.test(path)) throw invalid(`the repository "${path}" must be lowercase path components`);
  return { registry, repository: path, tag: tag ?? (digest === undefined ? "latest" : undefined), digest };
}

/** The registry's API host: Docker Hub's API does not live at docker.io. */
export function registryHost(ref: ImageReference): string {
  return ref.registry === "docker.io" ? "registry-1.docker.io" : ref.registry;
}

/** The repository path the webhook and logs compare: `host/repository`. */
export function repositoryOf(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}`;
}
