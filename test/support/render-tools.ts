/** The folder of kustomize and helm, built (or found in the cache) by the script `npm test`'s set-up runs. */
import { execFileSync } from "node:child_process";

let built: string | undefined;

/** The script prints the folder on its last line; it is run once per test process. */
export function buildRenderTools(): string {
  built ??= execFileSync("bash", ["packages/sync/scripts/build-render-tools.sh"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1)!;
  return built;
}
