import { access, constants, mkdir, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";

export interface StallingGit {
  /** The `git` to run (or put first on PATH through binDir): the real git, but for its fetches while stallFile exists. */
  readonly binary: string;
  readonly binDir: string;
  /** While this file exists, a fetch hangs mid-transfer. */
  readonly stallFile: string;
}

/**
 * Test-only: a `git` whose fetches, while `stallFile` exists, get a server that sends the first MiB of its
 * answer (the pack is larger) and then nothing more: the fetch hangs mid-transfer, holding its locks. Named
 * `git`, so a reconciler finds it on PATH; it runs the real git by its full path.
 */
export async function stallingGit(dir: string): Promise<StallingGit> {
  const git = await realGit();
  const binDir = join(dir, "stalling-bin");
  await mkdir(binDir, { recursive: true });
  const stallFile = join(dir, "stall");
  const uploadPack = join(dir, "stalling-upload-pack");
  // Node, not a shell pipe through head or dd: their buffering can hold back even the capability
  // advertisement (coreutils head writes through stdio), and the fetch then waits before taking any lock.
  await writeFile(
    uploadPack,
    [
      `#!${process.execPath}`,
      `const upload = require("node:child_process").spawn(${JSON.stringify(git)}, ["upload-pack", process.argv[2]], { stdio: ["inherit", "pipe", "inherit"] });`,
      `let left = 1048576;`,
      `upload.stdout.on("data", (chunk) => { if (left > 0) process.stdout.write(chunk.subarray(0, left)); left -= chunk.length; });`,
      `setInterval(() => {}, 600_000);`,
    ].join("\n"),
    { mode: 0o755 },
  );
  const binary = join(binDir, "git");
  await writeFile(
    binary,
    `#!/bin/sh\nif [ "$1" = fetch ] && [ -e '${stallFile}' ]; then shift; exec '${git}' fetch --upload-pack='${uploadPack}' "$@"; fi\nexec '${git}' "$@"\n`,
    { mode: 0o755 },
  );
  return { binary, binDir, stallFile };
}

async function realGit(): Promise<string> {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter).filter(Boolean)) {
    const candidate = join(dir, "git");
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  throw new Error("no git on PATH");
}
