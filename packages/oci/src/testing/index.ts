/** Test helpers of @driftless/oci: building layers, honest or hostile. */
export { tarArchive, tarGz, tarGzBomb } from "./tar-writer.ts";
export type { TarInput } from "./tar-writer.ts";
