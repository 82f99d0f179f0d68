/**
 * @driftless/api: the Config Sync API as TypeScript types and constants.
 */
export * from "./errors.ts";
