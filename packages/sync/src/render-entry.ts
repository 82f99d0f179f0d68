/**
 * `@driftless/sync/render`: rendering a kustomization with the real kustomize and helm, for callers
 * that need it without the reconciler (the CLI's hydrate, vet and diff use what a pass uses), and the
 * render server a reconciler pod's render container runs (`driftless-reconciler --render-server`).
 */
export {
  kustomizationBelow,
  kustomizationMissingError,
  needsRendering,
  removeRendered,
  renderKustomization,
  RenderingError,
} from "./render.ts";
export type { RenderOptions, RenderTools } from "./render.ts";
export { defaultRenderToolsDir } from "./render-tools.ts";
export type { Renderer } from "./rendering.ts";
export { serveRenders } from "./render-server.ts";
export type { RenderServer, RenderServerOptions } from "./render-server.ts";
export { renderThroughServer, RenderServerUnavailableError } from "./render-client.ts";
export type { RenderClientOptions } from "./render-client.ts";
