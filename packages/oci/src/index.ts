/**
 * @driftless/oci: a sync's source pulled from an OCI registry (Config Sync's `sourceType: oci`).
 *
 * ```ts
 * const fetcher = new OciFetcher({ cacheDir: "/var/cache/driftless/oci/root-sync" });
 * const { commit, sourceDir } = await fetcher.fetch({
 *   spec: { image: "registry.example:5000/config:v1", dir: "prod" },
 *   credentials: { username: "reader", password: "…" },
 *   caCert: pem,
 * });
 * ```
 *
 * Decisions: HTTPS, except plain HTTP for the loopback, private and .local names go-containerregistry allows
 * it for; an index resolves to linux/amd64, else its first manifest; layers are held in memory one at a time
 * (64 MiB compressed at most), decompressed as a stream and unpacked within limits (128 MiB of files, 32 MiB
 * per file, 100,000 entries), refusing any path, link or write that leaves the directory.
 */
export { OciFetcher } from "./fetcher.ts";
export type { OciFetchResult, OciFetcherOptions, OciPullOptions, OciSourceSpec } from "./fetcher.ts";
export { OciFailureReason, OciFetchError } from "./errors.ts";
export { parseImageReference, registryHost, repositoryOf } from "./reference.ts";
export type { ImageReference } from "./reference.ts";
export type { RegistryCredentials } from "./registry-client.ts";
export { DefaultUnpackLimits, safeSegments, unpackLayer, UnpackBudget } from "./unpack.ts";
export type { UnpackLimits } from "./unpack.ts";
export { readTar, TarEntryType } from "./tar.ts";
export type { TarEntry, TarStreamEntry } from "./tar.ts";
