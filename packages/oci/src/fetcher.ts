/**
 * Pulls a sync's image into a directory named by its digest and hands it over like a Git checkout:
 * the digest (without `sha256:`) is the commit, as in Config Sync. A digest already unpacked is not
 * pulled again; only the manifest is asked for, so a poll costs one small request, and an image pinned
 * by digest costs none once pulled.
 */
import { mkdir, readdir, realpath, rename, rm, stat } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { relativeSourceDir } from "@driftless/api";
import { OciFailureReason, OciFetchError } from "./errors.ts";
import { resolveImage, type ImageManifest } from "./manifest.ts";
import { parseImageReference, type ImageReference } from "./reference.ts";
import { RegistryClient, sha256, type RegistryCredentials } from "./registry-client.ts";
import { DefaultUnpackLimits, UnpackBudget, unpackLayer, type UnpackLimits } from "./unpack.ts";

export interface OciSourceSpec {
  readonly image: string;
  /** Directory of the image to read; default its root. */
  readonly dir?: string | undefined;
}

export interface OciPullOptions {
  readonly spec: OciSourceSpec;
  /** Basic credentials (auth token), already read from the Secret. */
  readonly credentials?: RegistryCredentials | undefined;
  /** PEM bundle (caCertSecretRef, key `cert`). */
  readonly caCert?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The same shape as a Git fetch: a tree that never changes once returned, and its commit. */
export interface OciFetchResult {
  /** The image manifest's digest without `sha256:`. */
  readonly commit: string;
  readonly dir: string;
  /** spec.oci.dir inside `dir`, verified to be a directory inside it. */
  readonly sourceDir: string;
  /** False when the digest was already unpacked. */
  readonly fetched: boolean;
}

export interface OciFetcherOptions {
  /** This sync's own folder: unpacked images live in it, one folder per digest. */
  readonly cacheDir: string;
  readonly limits?: UnpackLimits;
  /** Largest compressed layer accepted. */
  readonly maxLayerBytes?: number;
  /** Longest a resolve and pull may take together; default Config Sync's oci-sync `--timeout` (120 s). */
  readonly timeoutMs?: number;
}

const DefaultPullTimeoutMs = 120_000;

/**
 * A failed resolve or pull, led as Config Sync's is ("failed to pull image <image>: …"); unpacking errors
 * know the path, not the image, so the image is named here once. An image that is no reference was never
 * pulled: its error leads with "failed to parse reference", as Config Sync's.
 */
function pullFailure(image: string, error: unknown): unknown {
  if (!(error instanceof OciFetchError) || error.reason === OciFailureReason.InvalidReference) return error;
  const why = error.message.startsWith(`${image}: `) ? error.message.slice(image.length + 2) : error.message;
  return new OciFetchError(error.reason, `failed to pull image ${image}: ${why}`, error);
}

export class OciFetcher {
  readonly #options: OciFetcherOptions;
  /** The image reference pinned by digest last pulled, and the commit it gave (an index narrows to a manifest). */
  #pinned: { readonly image: string; readonly commit: string } | undefined;

  constructor(options: OciFetcherOptions) {
    this.#options = options;
  }

  /** Reads the manifest only: which digest the reference names now. */
  async resolve(options: OciPullOptions): Promise<{ readonly ref: ImageReference; readonly manifest: ImageManifest }> {
    const ref = parseImageReference(options.spec.image);
    const manifest = await resolveImage(this.#client(ref, options), ref);
    return { ref, manifest };
  }

  /**
   * Resolves and, for a digest not yet here, pulls the image, within the pull deadline: a registry that
   * answers a byte at a time would otherwise hold the pass, since each request only has an idle timeout.
   */
  async fetch(options: OciPullOptions): Promise<OciFetchResult> {
    const timeoutMs = this.#options.timeoutMs ?? DefaultPullTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = options.signal === undefined ? deadline : AbortSignal.any([options.signal, deadline]);
    try {
      return await this.#fetch({ ...options, signal });
    } catch (error) {
      // The caller's own abort (shutdown) stays what it was; only the deadline is this fetch's failure.
      if (!deadline.aborted || options.signal?.aborted === true) throw error;
      throw new OciFetchError(
        OciFailureReason.Unavailable,
        `failed to pull image ${options.spec.image}: did not finish within ${Math.round(timeoutMs / 1000)} s`,
        error,
      );
    }
  }

  async #fetch(options: OciPullOptions): Promise<OciFetchResult> {
    const image = options.spec.image;
    // A digest names content that cannot change: once pulled, the registry is not asked again (Config
    // Sync's oci-sync stops polling such an image), so deleting it there breaks nothing.
    const pinned = this.#pinned;
    if (pinned?.image === image) {
      const dir = join(this.#options.cacheDir, pinned.commit);
      if (await isDirectory(dir))
        return { commit: pinned.commit, dir, sourceDir: await sourceDirOf(dir, options.spec), fetched: false };
    }
    const { ref, manifest } = await this.resolve(options).catch((error: unknown) => {
      throw pullFailure(image, error);
    });
    const commit = manifest.digest.slice("sha256:".length);
    this.#pinned = ref.digest === undefined ? undefined : { image, commit };
    const dir = join(this.#options.cacheDir, commit);
    let fetched = false;
    if (!(await isDirectory(dir))) {
      await this.#pull(this.#client(ref, options), manifest, dir).catch((error: unknown) => {
        throw pullFailure(image, error);
      });
      fetched = true;
    }
    await this.#removeOthers(commit);
    return { commit, dir, sourceDir: await sourceDirOf(dir, options.spec), fetched };
  }

  #client(ref: ImageReference, options: OciPullOptions): RegistryClient {
    return new RegistryClient(ref, { credentials: options.credentials, ca: options.caCert, signal: options.signal });
  }

  /** Unpacks into a scratch folder renamed into place once complete: a crash never leaves half an image. */
  async #pull(client: RegistryClient, manifest: ImageManifest, dir: string): Promise<void> {
    const scratch = `${dir}.partial`;
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    try {
      const budget = new UnpackBudget(this.#options.limits ?? DefaultUnpackLimits);
      const maxLayerBytes = this.#options.maxLayerBytes ?? 64 * 1024 * 1024;
      for (const layer of manifest.layers) {
        // The media type is not read: the content decides (tar, gzip, zstd), as go-containerregistry's Extract.
        if (layer.size > maxLayerBytes)
          throw new OciFetchError(OciFailureReason.UnsafeLayer, `a layer is larger than ${maxLayerBytes} bytes`);
        const blob = (await client.get(`blobs/${layer.digest}`, `layer ${layer.digest}`, ["*/*"], maxLayerBytes)).body;
        if (sha256(blob) !== layer.digest)
          throw new OciFetchError(OciFailureReason.InvalidImage, `the layer ${layer.digest} does not match its digest`);
        await unpackLayer(blob, scratch, budget);
      }
      await rename(scratch, dir);
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      throw error;
    }
  }

  /** Keeps the cache to the current digest: a sync reads one image at a time. */
  async #removeOthers(commit: string): Promise<void> {
    const names = await readdir(this.#options.cacheDir).catch(() => []);
    for (const name of names)
      if (name !== commit) await rm(join(this.#options.cacheDir, name), { recursive: true, force: true });
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** spec.oci.dir inside the unpacked image; exported for its unit test. */
export async function sourceDirOf(dir: string, spec: OciSourceSpec): Promise<string> {
  const wanted = spec.dir ?? ".";
  // Config Sync reads "/config" and "config" alike: both from the image's root.
  const sourceDir = resolve(dir, relativeSourceDir(wanted));
  if (!isInside(dir, sourceDir) || !(await realPathInside(dir, sourceDir)))
    throw new OciFetchError(OciFailureReason.DirNotFound, `spec.oci.dir "${wanted}" leads out of the image`);
  if (!(await isDirectory(sourceDir)))
    throw new OciFetchError(
      OciFailureReason.DirNotFound,
      `spec.oci.dir "${wanted}" is not a directory of the image ${spec.image}`,
    );
  return sourceDir;
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== ".." && !rel.startsWith(`..${sep}`);
}

/** Symlinks each inside lexically can still chain out (`a -> .`, `b -> a/..`): the real path decides. */
async function realPathInside(root: string, path: string): Promise<boolean> {
  const real = await realpath(path).catch(() => undefined);
  return real === undefined || isInside(await realpath(root), real); // missing: reported as not a directory
}
