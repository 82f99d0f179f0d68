/**
 * From a reference to the image manifest to unpack: an index (multi-platform) is narrowed to
 * linux/amd64, else its first entry, as go-containerregistry's default platform does for Config Sync.
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

export async function resolveImage(client: RegistryClient, ref: ImageReference): Promise<ImageManifest> {
  const image = `${ref.registry}/${ref.repository}`;
  const pinned = ref.digest ?? ref.tag ?? "latest";
  let top = await getManifest(client, image, pinned, ref.digest === undefined ? `tag "${pinned}"` : `digest ${pinned}`);
  if (indexTypes.includes(top.mediaType) || Array.isArray(top.body["manifests"])) {
    const entries = (Array.isArray(top.body["manifests"]) ? top.body["manifests"] : []) as {
      platform?: { os?: string; architecture?: string };
    }[];
    const chosen = entries.find((m) => m.platform?.os === "linux" && m.platform.architecture === "amd64") ?? entries[0];
    if (chosen === undefined)
      throw new OciFetchError(OciFailureReason.InvalidImage, `${image}: the image index lists no manifests`);
    const { digest } = descriptor(chosen, image);
    top = await getManifest(client, image, digest, `manifest ${digest}`);
  }
  if (!Array.isArray(top.body["layers"]))
    throw new OciFetchError(
      OciFailureReason.InvalidImage,
      `${image}: the manifest (${top.mediaType || "no media type"}) lists no layers`,
    );
  return { digest: top.digest, layers: top.body["layers"].map((l) => descriptor(l, image)) };
}
