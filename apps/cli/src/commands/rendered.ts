import { stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { knvErrorText } from "@driftless/api";
import {
  defaultRenderToolsDir,
  kustomizationBelow,
  kustomizationMissingError,
  needsRendering,
  removeRendered,
  renderKustomization,
  RenderingError,
} from "@driftless/sync/render";

export interface RenderedOptions {
  /** spec.override.enableShellInRendering: remote bases and exec plugins. */
  readonly enableShell: boolean;
  /** The exit code of a render that fails (the command's "invalid source" code). */
  readonly failureCode: number;
  /**
   * Refuse (KNV1068) a DIR without a kustomization but with one below it, as a reconciler does (diff);
   * vet and hydrate read such a DIR as manifests, as `nomos vet` and `nomos hydrate` do.
   */
  readonly refuseKustomizationBelow?: boolean;
  /** The source is read as a hierarchy, which a kustomization's output cannot be: refused, as nomos does. */
  readonly hierarchy?: boolean;
}

/**
 * Runs `command` on what a reconciler would read from DIR: kustomize's output when DIR holds a
 * kustomization (the same tools, flags and shell rule as a pass), else DIR itself. A render that
 * fails prints its KNV1068 error with kustomize's output.
 */
export async function onRendered(
  dir: string,
  options: RenderedOptions,
  out: (line: string) => void,
  command: (dir: string) => Promise<number>,
): Promise<number> {
  if (!(await needsRendering(dir))) {
    const below = options.refuseKustomizationBelow === true ? await kustomizationBelow(dir) : undefined;
    if (below === undefined) return command(dir);
    const error = kustomizationMissingError(dir, below);
    out(knvErrorText(error.code, error.message));
    return options.failureCode;
  }
  if (options.hierarchy === true) {
    // nomos returns it to cobra, which prints it after `Error: ` (a flag's bad value gets the same).
    out("Error: source-format must be unstructured when Kustomization is needed");
    return options.failureCode;
  }
  let rendered: string;
  try {
    // Absolute: kustomize runs in a folder of its own, where a relative DIR means nothing.
    rendered = await renderKustomization(resolve(dir), {
      tools: { dir: defaultRenderToolsDir() },
      repositoryRoot: await repositoryRootOf(resolve(dir)),
      enableShell: options.enableShell,
      signal: AbortSignal.timeout(10 * 60_000),
    });
  } catch (error) {
    if (!(error instanceof RenderingError)) throw error;
    out(knvErrorText(error.code, error.message));
    return options.failureCode;
  }
  try {
    return await command(rendered);
  } finally {
    await removeRendered(rendered);
  }
}

/** The git work tree DIR is in (what a reconciler's checkout would hold), else DIR itself. */
async function repositoryRootOf(dir: string): Promise<string> {
  for (let at = dir; ; at = dirname(at)) {
    if (
      await stat(join(at, ".git")).then(
        () => true,
        () => false,
      )
    )
      return at;
    if (dirname(at) === at) return dir;
  }
}
