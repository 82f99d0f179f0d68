/**
 * `@driftless/sync/render`: rendering a kustomization with the real kustomize and helm, for callers
 * that need it without the reconciler (the CLI's hydrate, vet and diff use what a pass uses).
 */
export { needsRendering, removeRendered, renderKustomization, RenderingError } from "./render.ts";
export type { RenderOptions, RenderTools } from "./render.ts";
export { defaultRenderToolsDir } from "./render-tools.ts";
