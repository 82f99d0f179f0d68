import assert from "node:assert/strict";
import { lstat, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { refused, scratch } from "./testing/unpack-fixtures.ts";
import { tarGz, type TarInput } from "./testing/tar-writer.ts";
import { DefaultUnpackLimits, UnpackBudget, unpackLayer } from "./unpack.ts";

/** What the unpacked tree holds: entries (directories included) and the bytes of its distinct files. */
async function onDisk(root: string): Promise<{ entries: number; bytes: number }> {
  const inodes = new Map<number, number>();
  let entries = 0;
  for (const name of await readdir(root, { recursive: true })) {
    const s = await lstat(join(root, name));
    entries++;
    if (s.isFile()) inodes.set(s.ino, s.size);
  }
  return { entries, bytes: [...inodes.values()].reduce((a, b) => a + b, 0) };
}

const mib = 1024 * 1024;
const deep = (depth: number, leaf: string): string =>
  [...Array.from({ length: depth - 1 }, (_, i) => `d${i}`), leaf].join("/");

void describe("unpackLayer budget", () => {
  void it("writes a file and many hard links to it as the file's bytes once, under a byte budget", async (t) => {
    const root = await scratch(t);
    const limits = { maxTotalBytes: 4 * mib, maxFileBytes: 4 * mib, maxEntries: 1000, maxDepth: 64 };
    const links: TarInput[] = Array.from({ length: 200 }, (_, i) => ({
      name: `link-${i}`,
      type: "hardlink",
      linkname: "big",
    }));
    await unpackLayer(
      tarGz([{ name: "big", content: Buffer.alloc(mib, 1) }, ...links]),
      root,
      new UnpackBudget(limits),
    );
    const used = await onDisk(root);
    assert.ok(used.bytes <= 4 * mib, `a 4 MiB budget wrote ${(used.bytes / mib).toFixed(0)} MiB`);
    assert.equal(used.entries, 201);
    assert.deepEqual(await readFile(join(root, "link-199")), Buffer.alloc(mib, 1));
  });

  void it("keeps a hard link's content when a later layer replaces the file it links to, and the other way", async (t) => {
    const root = await scratch(t);
    const budget = new UnpackBudget();
    await unpackLayer(
      tarGz([
        { name: "a.yaml", content: "a: 1\n" },
        { name: "b.yaml", type: "hardlink", linkname: "a.yaml" },
      ]),
      root,
      budget,
    );
    await unpackLayer(tarGz([{ name: "a.yaml", content: "a: 2\n" }]), root, budget);
    assert.equal(await readFile(join(root, "b.yaml"), "utf8"), "a: 1\n");
    await unpackLayer(tarGz([{ name: "b.yaml", content: "b: 3\n" }]), root, budget);
    assert.equal(await readFile(join(root, "a.yaml"), "utf8"), "a: 2\n");
  });

  void it("counts whiteouts against the entry limit; they make no directories", async (t) => {
    const root = await scratch(t);
    const limits = { ...DefaultUnpackLimits, maxEntries: 100 };
    const whiteouts = Array.from({ length: 101 }, (_, i) => ({ name: `w${i}/${deep(20, ".wh.gone")}` }));
    await refused(unpackLayer(tarGz(whiteouts), root, new UnpackBudget(limits)), "more than 100 entries");
    assert.equal((await onDisk(root)).entries, 0);
  });

  void it("counts the parent directories a file implies against the entry limit", async (t) => {
    const root = await scratch(t);
    const limits = { ...DefaultUnpackLimits, maxEntries: 100 };
    const files = Array.from({ length: 20 }, (_, i) => ({ name: `f${i}/${deep(30, "x.yaml")}`, content: "x" }));
    await refused(unpackLayer(tarGz(files), root, new UnpackBudget(limits)), "more than 100 entries");
    const used = await onDisk(root);
    assert.ok(used.entries <= 100, `a 100-entry budget made ${used.entries} entries`);
  });

  void it("refuses paths deeper than maxDepth (64 by default), whiteouts included", async (t) => {
    const root = await scratch(t);
    await unpackLayer(tarGz([{ name: deep(64, "ok.yaml"), content: "x" }]), root, new UnpackBudget());
    await refused(
      unpackLayer(tarGz([{ name: deep(65, "deep.yaml"), content: "x" }]), root, new UnpackBudget()),
      "more than 64 levels deep",
    );
    await refused(
      unpackLayer(tarGz([{ name: deep(65, ".wh.deep.yaml") }]), root, new UnpackBudget()),
      "more than 64 levels deep",
    );
    await refused(
      unpackLayer(
        tarGz([{ name: "a/b/c/d.yaml", content: "x" }]),
        root,
        new UnpackBudget({ ...DefaultUnpackLimits, maxDepth: 3 }),
      ),
      "more than 3 levels deep",
    );
  });
});
