/** Test helpers of @driftless/oci: building layers, honest or hostile. */
export { paxHeaderBlocks, rawTarBlocks, rawTarGz, tarArchive, tarGz, tarGzBomb } from "./tar-writer.ts";
export type { RawTarEntry, TarInput } from "./tar-writer.ts";
