/**
 * From a reference to the image manifest to unpack: an index (multi-platform) is narrowed to its first
 * linux/amd64 entry (one without a platform counts as such), and is refused without one, as
 * go-containerregistry's default platform does for Config Sync.
 * Every manifest's bytes are checked against the digest that names them.
 */
import { OciFailureReason, OciFetchError } from "./errors.ts";
import type { ImageReference } from "./reference.ts";
import { sha256, type RegistryClient } from "./registry-client.ts";

export const MediaType = {
  OciManifest: "application/vnd.oci.image.manifest.v1+json",
  OciIndex: "application/vnd.oci.image.index.v1+json",
  DockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  DockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
} as const;

const accepted = Object.values(MediaType);
const indexTypes: readonly string[] = [MediaType.OciIndex, MediaType.DockerManifestList];
const maxManifestBytes = 4 * 1024 * 1024;

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

export interface ImageManifest {
  /** The image manifest's digest (`sha256:<hex>`): the commit, without its `sha256:`. */
  readonly digest: string;
  readonly layers: readonly Descriptor[];
}

function descriptor(value: unknown, image: string): Descriptor {
  const d = value as Partial<Descriptor> | null;
  if (typeof d?.digest !== "string" || !/^sha256:[a-f0-9]{64}$/.test(d.digest) || typeof d.size !== "number")
    throw new OciFetchError(
      OciFailureReason.InvalidImage,
      `${image}: a manifest lists a descriptor without a sha256 digest and size`,
    );
  return { mediaType: typeof d.mediaType === "string" ? d.mediaType : "", digest: d.digest, size: d.size };
}

async function getManifest(
  client: RegistryClient,
  image: string,
  reference: string,
  what: string,
): Promise<{ digest: string; mediaType: string; body: Record<string, unknown> }> {
  const response = await client.get(`manifests/${reference}`, what, accepted, maxManifestBytes);
  const digest = sha256(response.body);
  if (reference.startsWith("sha256:") && digest !== reference)
    throw new OciFetchError(
      OciFailureReason.InvalidImage,
      `${image}: the manifest's content does not match its digest ${reference}`,
    );
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.body.toString("utf8")) as Record<string, unknown>;
  } catch (error) {
    throw new OciFetchError(OciFailureReason.InvalidImage, `${image}: the manifest is not JSON`, error);
  }
  const header = String(response.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim();
  const mediaType = typeof body["mediaType"] === "string" ? body["mediaType"] : header;
  return { digest, mediaType, body };
}

/** go-containerregistry's default platform; an index entry without a platform is taken to be it. */
const defaultPlatform = { os: "linux", architecture: "amd64" } as const;
/** Indexes nested in indexes followed at most: go-containerregistry recurses without bound. */
const maxIndexDepth = 8;

interface IndexEntry {
  readonly platform?: { readonly os?: string; readonly architecture?: string };
}

/** The index's first linux/amd64 entry, as go-containerregistry's childByPlatform picks it for Config Sync. */
export function childByPlatform(body: Record<string, unknown>, image: string, reference: string): Descriptor {
  const entries = (Array.isArray(body["manifests"]) ? body["manifests"] : []) as IndexEntry[];
  // A missing platform is taken for linux/amd64; a platform given is compared whole (no architecture is no match).
  const chosen = entries.find((m) => {
    const platform = m.platform ?? defaultPlatform;
    return platform.os === defaultPlatform.os && platform.architecture === defaultPlatform.architecture;
  });
  if (chosen === undefined)
    throw new OciFetchError(
      OciFailureReason.InvalidImage,
      `no child with platform ${defaultPlatform.os}/${defaultPlatform.architecture} in index ${reference}`,
    );
  return descriptor(chosen, image);
}

export async function resolveImage(client: RegistryClient, ref: ImageReference): Promise<ImageManifest> {
  const image = `${ref.registry}/${ref.repository}`;
  const pinned = ref.digest ?? ref.tag ?? "latest";
  const named = (r: string): string => `${image}${r.startsWith("sha256:") ? "@" : ":"}${r}`;
  let reference = named(pinned);
  let top = await getManifest(client, image, pinned, ref.digest === undefined ? `tag "${pinned}"` : `digest ${pinned}`);
  for (let depth = 0; indexTypes.includes(top.mediaType) || Array.isArray(top.body["manifests"]); depth++) {
    if (depth === maxIndexDepth)
      throw new OciFetchError(OciFailureReason.InvalidImage, `${image}: indexes nest more than ${maxIndexDepth} deep`);
    const { digest } = childByPlatform(top.body, image, reference);
    reference = named(digest);
    top = await getManifest(client, image, digest, `manifest ${digest}`);
  }
  if (!Array.isArray(top.body["layers"]))
    throw new OciFetchError(
      OciFailureReason.InvalidImage,
      `${image}: the manifest (${top.mediaType || "no media type"}) lists no layers`,
    );
  return { digest: top.digest, layers: top.body["layers"].map((l) => descriptor(l, image)) };
}
