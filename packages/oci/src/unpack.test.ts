import assert from "node:assert/strict";
import { mkdir, readFile, readlink, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { zstdCompressSync } from "node:zlib";
import { refused, scratch } from "./testing/unpack-fixtures.ts";
import { tarArchive, tarGz, tarGzBomb } from "./testing/tar-writer.ts";
import { OciFailureReason, OciFetchError } from "./errors.ts";
import { UnpackBudget, unpackLayer } from "./unpack.ts";

void describe("unpackLayer", () => {
  void it("unpacks gzip and plain layers in order: later layers win, whiteouts delete from the layers below", async (t) => {
    const root = await scratch(t);
    const budget = new UnpackBudget();
    await unpackLayer(
      tarGz([
        { name: "config/", type: "directory" },
        { name: "config/a.yaml", content: "a: 1\n" },
        { name: "config/b.yaml", content: "b: 1\n" },
        { name: "old/x.yaml", content: "x: 1\n" },
        { name: `deep/${"d".repeat(120)}.yaml`, content: "long: true\n" },
      ]),
      root,
      budget,
    );
    await unpackLayer(
      tarArchive([
        { name: "config/a.yaml", content: "a: 2\n" },
        { name: "config/.wh.b.yaml" },
        { name: "old/.wh..wh..opq" },
        { name: "old/y.yaml", content: "y: 1\n" },
        { name: "config/link.yaml", type: "symlink", linkname: "a.yaml" },
      ]),
      root,
      budget,
    );
    assert.equal(await readFile(join(root, "config/a.yaml"), "utf8"), "a: 2\n");
    assert.deepEqual((await readdir(join(root, "config"))).sort(), ["a.yaml", "link.yaml"]);
    assert.deepEqual(await readdir(join(root, "old")), ["y.yaml"], "the opaque whiteout hid x.yaml, not y.yaml");
    assert.equal(await readlink(join(root, "config/link.yaml")), "a.yaml");
    assert.equal(await readFile(join(root, "deep", `${"d".repeat(120)}.yaml`), "utf8"), "long: true\n");
  });

  void it("refuses a layer that is no tar, shorter than a tar header (a YAML file pushed as the layer), as Go's tar reader does, rather than reading it as empty", async (t) => {
    const root = await scratch(t);
    const yamlFile = Buffer.from("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n");
    await assert.rejects(unpackLayer(yamlFile, root, new UnpackBudget()), (error: unknown) => {
      assert.ok(error instanceof OciFetchError, String(error));
      assert.equal(error.reason, OciFailureReason.InvalidImage);
      assert.match(error.message, /not a tar archive \(54 bytes where a 512-byte header was due\)/);
      return true;
    });
    const cut = tarArchive([{ name: "a.yaml", content: "a: 1\n" }]);
    await assert.rejects(unpackLayer(cut.subarray(0, 1024 + 100), root, new UnpackBudget()), /not a tar archive/);
  });

  void it("refuses paths with .. and absolute paths", async (t) => {
    const root = await scratch(t);
    await refused(
      unpackLayer(tarGz([{ name: "../escape.yaml", content: "x" }]), root, new UnpackBudget()),
      "leads out",
    );
    await refused(
      unpackLayer(tarGz([{ name: "a/../../escape.yaml", content: "x" }]), root, new UnpackBudget()),
      "leads out",
    );
    await refused(
      unpackLayer(tarGz([{ name: "/etc/escape", content: "x" }]), root, new UnpackBudget()),
      "absolute path",
    );
  });

  void it("reads a path whose .. stays inside as Go's filepath.Clean does for Config Sync (a/../b.yaml is b.yaml)", async (t) => {
    const root = await scratch(t);
    await unpackLayer(
      tarGz([
        { name: "a/", type: "directory" },
        { name: "a/../b.yaml", content: "b: 1\n" },
        { name: "./a/./c/../d.yaml", content: "d: 1\n" },
      ]),
      root,
      new UnpackBudget(),
    );
    assert.equal(await readFile(join(root, "b.yaml"), "utf8"), "b: 1\n");
    assert.equal(await readFile(join(root, "a/d.yaml"), "utf8"), "d: 1\n");
  });

  void it("refuses symlinks leading out, and writes through a symlink", async (t) => {
    const root = await scratch(t);
    await refused(
      unpackLayer(tarGz([{ name: "up", type: "symlink", linkname: "../../etc" }]), root, new UnpackBudget()),
      "points out",
    );
    await refused(
      unpackLayer(tarGz([{ name: "abs", type: "symlink", linkname: "/etc/passwd" }]), root, new UnpackBudget()),
      "points out",
    );
    // A link to the root is inside, but writing through it would make lexical checks lie.
    await refused(
      unpackLayer(
        tarGz([
          { name: "here", type: "symlink", linkname: "." },
          { name: "here/file.yaml", content: "x" },
        ]),
        root,
        new UnpackBudget(),
      ),
      "through the symlink",
    );
  });

  void it("links a hard link to a file of the image, and refuses one naming a path outside", async (t) => {
    const root = await scratch(t);
    await unpackLayer(
      tarGz([
        { name: "a.yaml", content: "a: 1\n" },
        { name: "copy.yaml", type: "hardlink", linkname: "a.yaml" },
      ]),
      root,
      new UnpackBudget(),
    );
    assert.equal(await readFile(join(root, "copy.yaml"), "utf8"), "a: 1\n");
    await refused(
      unpackLayer(
        tarGz([{ name: "passwd", type: "hardlink", linkname: "../../etc/passwd" }]),
        root,
        new UnpackBudget(),
      ),
      "leads out",
    );
  });

  void it("a whiteout whose path runs through a file, a symlink or nothing hides nothing and makes nothing, as go-containerregistry's Extract reads it for Config Sync", async (t) => {
    const root = await scratch(t);
    const budget = new UnpackBudget();
    await unpackLayer(
      tarGz([
        { name: "keep.yaml", content: "keep: 1\n" },
        { name: "sub/a.yaml", content: "a: 1\n" },
        { name: "link", type: "symlink", linkname: "sub" },
      ]),
      root,
      budget,
    );
    await unpackLayer(tarGz([{ name: "keep.yaml/.wh.x" }, { name: "none/deeper/.wh.y" }]), root, budget);
    assert.equal(await readFile(join(root, "keep.yaml"), "utf8"), "keep: 1\n", "the file in the whiteout's way stays");
    await unpackLayer(tarGz([{ name: "link/.wh.a.yaml" }]), root, budget);
    assert.equal(await readFile(join(root, "sub/a.yaml"), "utf8"), "a: 1\n", "nothing is hidden through a symlink");
    assert.deepEqual((await readdir(root)).sort(), ["keep.yaml", "link", "sub"], "no directory is made for a whiteout");
  });

  void it("refuses whiteouts that name no entry (.wh. alone, .wh.. and .wh...), which would delete the directory or its parent", async (t) => {
    const outer = await scratch(t);
    const root = join(outer, "root");
    await mkdir(root);
    await writeFile(join(outer, "keep.yaml"), "keep: true\n");
    for (const name of [".wh.", ".wh..", ".wh...", "sub/.wh..."])
      await refused(unpackLayer(tarGz([{ name }]), root, new UnpackBudget()), "whiteout");
    assert.equal(await readFile(join(outer, "keep.yaml"), "utf8"), "keep: true\n");
  });

  void it("refuses a hard link whose path reaches outside through a chain of symlinks", async (t) => {
    const outer = await scratch(t);
    const root = join(outer, "root");
    await mkdir(root);
    await writeFile(join(outer, "secret"), "token\n");
    // Each link is inside lexically; together `up` resolves to the root's parent.
    await refused(
      unpackLayer(
        tarGz([
          { name: "here", type: "symlink", linkname: "." },
          { name: "up", type: "symlink", linkname: "here/.." },
          { name: "copy.yaml", type: "hardlink", linkname: "up/secret" },
        ]),
        root,
        new UnpackBudget(),
      ),
      "hard link",
    );
    await assert.rejects(readFile(join(root, "copy.yaml")), { code: "ENOENT" });
  });

  void it("holds total size, file size and entry count to the limits", async (t) => {
    const root = await scratch(t);
    const limits = { maxTotalBytes: 100, maxFileBytes: 60, maxEntries: 3, maxDepth: 64 };
    await refused(
      unpackLayer(tarGz([{ name: "big", content: "x".repeat(61) }]), root, new UnpackBudget(limits)),
      "larger than 60",
    );
    await refused(
      unpackLayer(
        tarGz([
          { name: "a", content: "x".repeat(60) },
          { name: "b", content: "x".repeat(60) },
        ]),
        root,
        new UnpackBudget(limits),
      ),
      "more than 100 bytes",
    );
    await refused(
      unpackLayer(tarGz(["a", "b", "c", "d"].map((name) => ({ name, content: "" }))), root, new UnpackBudget(limits)),
      "more than 3 entries",
    );
    await refused(
      unpackLayer(tarGz([{ name: "zeros", content: Buffer.alloc(1024 * 1024) }]), root, new UnpackBudget(limits)),
      "unpacks to more than",
    );
  });

  void it("unpacks a zstd layer, whatever its media type, as go-containerregistry does for Config Sync, and holds it to the byte budget as it decompresses", async (t) => {
    const root = await scratch(t);
    await unpackLayer(
      zstdCompressSync(tarArchive([{ name: "config/a.yaml", content: "a: 1\n" }])),
      root,
      new UnpackBudget(),
    );
    assert.equal(await readFile(join(root, "config/a.yaml"), "utf8"), "a: 1\n");
    const limits = { maxTotalBytes: 100, maxFileBytes: 60, maxEntries: 3, maxDepth: 64 };
    const zeros = zstdCompressSync(tarArchive([{ name: "zeros", content: Buffer.alloc(1024 * 1024) }]));
    await refused(unpackLayer(zeros, await scratch(t), new UnpackBudget(limits)), "unpacks to more than");
    await assert.rejects(
      unpackLayer(zeros.subarray(0, 40), await scratch(t), new UnpackBudget()),
      /a layer is not valid zstd/,
    );
  });

  void it("refuses a gzip bomb while it decompresses, without holding the decompressed layer in memory", async (t) => {
    const root = await scratch(t);
    // 32 files of 30 MiB zeros: under a megabyte compressed, 960 MiB of tar.
    const bomb = await tarGzBomb(32, 30 * 1024 * 1024);
    assert.ok(bomb.length < 2 * 1024 * 1024, `the bomb is ${bomb.length} bytes compressed`);
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 1);
    try {
      await refused(unpackLayer(bomb, root, new UnpackBudget()), "more than");
    } finally {
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage.rss());
    }
    const grewMiB = (peak - baseline) / (1024 * 1024);
    t.diagnostic(`grew ${grewMiB.toFixed(1)} MiB`);
    assert.ok(grewMiB < 64, `unpacking the bomb grew the process by ${grewMiB.toFixed(0)} MiB`);
    assert.deepEqual(await readdir(root), [], "nothing of a refused layer is written");
  });
});
