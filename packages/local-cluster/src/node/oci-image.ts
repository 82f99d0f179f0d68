import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { mustRun } from "./command.ts";

/** An image made from a folder: one layer, no base, and the runtime settings of its config. */
export interface ImageSpec {
  /** Full reference, e.g. "driftless.local/pause:3.10"; the node's pods name it with imagePullPolicy Never. */
  readonly name: string;
  /** The folder that becomes the image's root filesystem. */
  readonly rootfs: string;
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
  readonly env?: readonly string[];
  readonly user?: string;
}

const mediaTypes = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar",
} as const;

/**
 * Packs a folder as an OCI image archive (oci-layout, index.json, blobs/) that `ctr images import`
 * reads. The layer is an uncompressed, reproducible tar (sorted, owned by root, mtime 0).
 */
export async function writeOciArchive(spec: ImageSpec, archive: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "driftless-oci-"));
  try {
    const blobs = join(work, "layout", "blobs", "sha256");
    await mkdir(blobs, { recursive: true });
    const layerTar = join(work, "layer.tar");
    await mustRun("tar", [
      "--sort=name",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "--mtime=@0",
      "-C",
      spec.rootfs,
      "-cf",
      layerTar,
      ".",
    ]);
    const layer = { digest: `sha256:${await sha256File(layerTar)}`, size: (await stat(layerTar)).size };
    await copyFile(layerTar, join(blobs, layer.digest.slice(7)));

    const config = await writeBlob(blobs, {
      architecture: "amd64",
      os: "linux",
      config: {
        ...(spec.entrypoint !== undefined && { Entrypoint: spec.entrypoint }),
        ...(spec.cmd !== undefined && { Cmd: spec.cmd }),
        Env: spec.env ?? ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
        ...(spec.user !== undefined && { User: spec.user }),
      },
      rootfs: { type: "layers", diff_ids: [layer.digest] },
    });
    const manifest = await writeBlob(blobs, {
      schemaVersion: 2,
      mediaType: mediaTypes.manifest,
      config: { mediaType: mediaTypes.config, ...config },
      layers: [{ mediaType: mediaTypes.layer, ...layer }],
    });
    const tag = spec.name.slice(spec.name.lastIndexOf(":") + 1);
    const index = {
      schemaVersion: 2,
      mediaType: mediaTypes.index,
      manifests: [
        {
          mediaType: mediaTypes.manifest,
          ...manifest,
          platform: { architecture: "amd64", os: "linux" },
          annotations: { "io.containerd.image.name": spec.name, "org.opencontainers.image.ref.name": tag },
        },
      ],
    };
    await writeFile(join(work, "layout", "index.json"), JSON.stringify(index));
    await writeFile(join(work, "layout", "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
    await mkdir(dirname(archive), { recursive: true });
    await mustRun("tar", [
      "--owner=0",
      "--group=0",
      "-C",
      join(work, "layout"),
      "-cf",
      archive,
      "oci-layout",
      "index.json",
      "blobs",
    ]);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function writeBlob(dir: string, content: unknown): Promise<{ digest: string; size: number }> {
  const bytes = Buffer.from(JSON.stringify(content));
  const hex = createHash("sha256").update(bytes).digest("hex");
  await writeFile(join(dir, hex), bytes);
  return { digest: `sha256:${hex}`, size: bytes.length };
}

function sha256File(file: string): Promise<string> {
  return new Promise((resolveHash, reject) => {
    const hash = createHash("sha256");
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolveHash(hash.digest("hex")));
  });
}

/** The pod sandbox image: our pause binary alone. */
export const pauseImageName = "driftless.local/pause:3.10";

export async function writePauseImage(pauseBinary: string, archive: string): Promise<void> {
  await withRootfs(async (rootfs) => {
    await copyFile(pauseBinary, join(rootfs, "pause"));
    await writeOciArchive({ name: pauseImageName, rootfs, entrypoint: ["/pause"], user: "65535:65535" }, archive);
  });
}

/** A small shell image for tests: Debian's static busybox with a link per applet. */
export const busyboxImageName = "driftless.local/busybox:1.35";
export const busyboxBinary = "/bin/busybox";

export async function writeBusyboxImage(archive: string, busybox: string = busyboxBinary): Promise<void> {
  await withRootfs(async (rootfs) => {
    const bin = join(rootfs, "bin");
    await mkdir(bin, { recursive: true });
    await copyFile(busybox, join(bin, "busybox"));
    const applets = (await mustRun(busybox, ["--list"])).split("\n").filter((a) => a !== "" && a !== "busybox");
    for (const applet of applets) await symlink("busybox", join(bin, applet));
    for (const dir of ["tmp", "etc", "proc", "sys", "dev"]) await mkdir(join(rootfs, dir), { recursive: true });
    await writeFile(
      join(rootfs, "etc", "passwd"),
      "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n",
    );
    await writeFile(join(rootfs, "etc", "group"), "root:x:0:\nnogroup:x:65534:\n");
    await writeOciArchive({ name: busyboxImageName, rootfs, cmd: ["sh"] }, archive);
  });
}

async function withRootfs(fill: (rootfs: string) => Promise<void>): Promise<void> {
  const rootfs = await mkdtemp(join(tmpdir(), "driftless-rootfs-"));
  try {
    await fill(rootfs);
  } finally {
    await rm(rootfs, { recursive: true, force: true });
  }
}
