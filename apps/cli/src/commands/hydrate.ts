import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SourceFormat } from "@driftless/api";
import { builtinKinds, hydratedObject, hydratedPaths, readSource, toYamlStream } from "@driftless/source";
import { formatError } from "./vet.ts";

export interface HydrateOptions {
  readonly dir: string;
  readonly format: SourceFormat;
  /** One file per object, as `nomos hydrate --output DIR` lays them out. */
  readonly output?: string;
  /** Every object in one file. */
  readonly flat?: string;
}

/**
 * `driftless hydrate DIR`: the objects a RootSync would apply from this source, after hierarchy
 * inheritance, without a cluster (built-in kinds are known, other kinds are placed by where they are,
 * as `nomos hydrate --no-api-server-check` does). Implicit Namespaces are decided against the cluster
 * by the reconciler and are not printed. Exit 1 with the errors when the source is invalid.
 */
export async function hydrate(options: HydrateOptions, out: (line: string) => void): Promise<number> {
  const source = await readSource(options.dir, {
    scope: { kind: "RootSync" },
    kinds: builtinKinds,
    format: options.format,
    allowUnknownKinds: true,
  });
  if (!source.complete) {
    for (const error of source.errors) out(formatError(error));
    return 1;
  }
  const objects = source.objects.map(hydratedObject);
  if (options.output !== undefined) {
    const paths = hydratedPaths(source.objects);
    const files = new Map<string, typeof objects>();
    paths.forEach((path, i) => {
      const object = objects[i];
      if (object !== undefined) files.set(path, [...(files.get(path) ?? []), object]);
    });
    for (const [path, content] of files) {
      const file = join(options.output, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, toYamlStream(content));
    }
    out(`${objects.length} object(s) written to ${options.output}`);
  } else if (options.flat !== undefined) {
    await mkdir(dirname(options.flat), { recursive: true });
    await writeFile(options.flat, toYamlStream(objects));
    out(`${objects.length} object(s) written to ${options.flat}`);
  } else {
    process.stdout.write(toYamlStream(objects));
  }
  return 0;
}
