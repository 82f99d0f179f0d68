import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, it } from "node:test";
import { listManifestFiles, readFiles } from "./read-files.ts";
import { withTree } from "./testing.ts";

void describe("listManifestFiles", () => {
  void it("finds .yaml, .yml and .json files recursively, sorted, with posix paths relative to the root", async () => {
    await withTree(
      { "b.yaml": "", "a/z.yml": "", "a/b/c.json": "", "README.md": "", "a/notes.txt": "", "x.YAML": "" },
      async (dir) => {
        const { files, errors } = await listManifestFiles(dir);
        assert.deepEqual(errors, []);
        assert.deepEqual(
          files.map((f) => f.sourcePath),
          ["a/b/c.json", "a/z.yml", "b.yaml"],
        );
      },
    );
  });

  void it("reads hidden files and directories, skipping only .git directories and .github, .gitlab and .gitlab-ci.yml paths, as Config Sync does", async () => {
    await withTree(
      {
        ".git/config.yaml": "",
        "sub/.git/x.yaml": "",
        ".github/workflows/ci.yml": "",
        "a/.gitlab/b.yaml": "",
        ".gitlab-ci.yml": "",
        "b/.gitlab-ci.yml/c.yaml": "",
        ".git.yaml": "",
        ".githubx/d.yaml": "",
        ".hidden.yaml": "",
        ".hdir/b.yaml": "",
        ".pre-commit-config.yaml": "",
        "ok.yaml": "",
      },
      async (dir) => {
        const { files, errors } = await listManifestFiles(dir);
        assert.deepEqual(errors, []);
        assert.deepEqual(
          files.map((f) => f.sourcePath),
          [".git.yaml", ".githubx/d.yaml", ".hdir/b.yaml", ".hidden.yaml", ".pre-commit-config.yaml", "ok.yaml"],
        );
      },
    );
  });

  void it("judges .github, .gitlab and .gitlab-ci.yml on the resolved absolute path, as Config Sync does", async () => {
    await withTree({ ".github/target.yaml": "", ".github/configs/a.yaml": "", "plain.yaml": "" }, async (dir) => {
      await symlink(".github/target.yaml", join(dir, "link.yaml"));
      await symlink("../plain.yaml", join(dir, ".github", "out.yaml"));
      const { files, errors } = await listManifestFiles(dir);
      assert.deepEqual(errors, []);
      // .github/out.yaml leads to plain.yaml, read a second time under its own path.
      assert.deepEqual(
        files.map((f) => f.sourcePath),
        ["plain.yaml", "plain.yaml"],
      );
      // A sync directory inside .github reads nothing.
      assert.deepEqual((await listManifestFiles(join(dir, ".github", "configs"))).files, []);
    });
  });

  void it("does not follow a symlink to a .git directory", async () => {
    await withTree({ "repo/.git/x.yaml": "", "ok.yaml": "" }, async (dir) => {
      await symlink("repo/.git", join(dir, "gitdir"));
      const { files, errors } = await listManifestFiles(dir);
      assert.deepEqual(errors, []);
      assert.deepEqual(
        files.map((f) => f.sourcePath),
        ["ok.yaml"],
      );
    });
  });

  void it("follows file symlinks that stay inside the root, under the target's path, as Config Sync reads the resolved path", async () => {
    await withTree({ "base/cm.yaml": "" }, async (dir) => {
      await symlink("base/cm.yaml", join(dir, "alias.yaml"));
      const { files, errors } = await listManifestFiles(dir);
      assert.deepEqual(errors, []);
      assert.deepEqual(
        files.map((f) => f.sourcePath),
        ["base/cm.yaml", "base/cm.yaml"],
      );
    });
  });

  void it("judges a file symlink by its target's name, as Config Sync reads the resolved path's extension", async () => {
    await withTree({ "data.txt": "", "base/cm.yaml": "", "base/cm.json": "" }, async (dir) => {
      await symlink("data.txt", join(dir, "link.yaml"));
      await symlink("base/cm.yaml", join(dir, "link.txt"));
      await symlink("base/cm.json", join(dir, "as-yaml.yaml"));
      const { files, errors } = await listManifestFiles(dir);
      assert.deepEqual(errors, []);
      // link.yaml leads to a .txt file and declares nothing; link.txt leads to a manifest, read again.
      assert.deepEqual(
        files.map((f) => [f.sourcePath, basename(f.absolutePath)]),
        [
          ["base/cm.json", "cm.json"],
          ["base/cm.json", "cm.json"],
          ["base/cm.yaml", "cm.yaml"],
          ["base/cm.yaml", "cm.yaml"],
        ],
      );
    });
  });

  void it("does not walk a symlinked directory, inside the root or out of it, as Config Sync's file walk", async () => {
    const outside = await mkdtemp(join(tmpdir(), "driftless-outside-"));
    try {
      await writeFile(join(outside, "cm.yaml"), "");
      await withTree({ "common/cm.yaml": "", "envs/prod/own.yaml": "" }, async (dir) => {
        await symlink("../../common", join(dir, "envs", "prod", "common"));
        await symlink(outside, join(dir, "envs", "prod", "shared"));
        const whole = await listManifestFiles(dir);
        assert.deepEqual(whole.errors, []);
        assert.deepEqual(
          whole.files.map((f) => f.sourcePath),
          ["common/cm.yaml", "envs/prod/own.yaml"],
        );
        // The same folder as a sync's dir: the link out of it is not an error, it is not followed.
        const prod = await listManifestFiles(join(dir, "envs", "prod"));
        assert.deepEqual(prod.errors, []);
        assert.deepEqual(
          prod.files.map((f) => f.sourcePath),
          ["own.yaml"],
        );
      });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  void it("does not loop on a symlink to an ancestor directory", async () => {
    await withTree({ "a/cm.yaml": "" }, async (dir) => {
      await symlink("..", join(dir, "a", "up"));
      const { files, errors } = await listManifestFiles(dir);
      assert.deepEqual(errors, []);
      assert.deepEqual(
        files.map((f) => f.sourcePath),
        ["a/cm.yaml"],
      );
    });
  });

  void it("refuses file symlinks leading out of the root or nowhere, but ignores outside links that cannot hold manifests", async () => {
    const outside = await mkdtemp(join(tmpdir(), "driftless-outside-"));
    try {
      await mkdir(join(outside, "dir"));
      await writeFile(join(outside, "token.yaml"), "secret: x\n");
      await writeFile(join(outside, "README.md"), "hi\n");
      await withTree({ "ok.yaml": "" }, async (dir) => {
        await symlink(join(outside, "token.yaml"), join(dir, "steal.yaml"));
        await symlink(join(outside, "dir"), join(dir, "shared"));
        await symlink(join(outside, "README.md"), join(dir, "README.md"));
        await symlink(join(dir, "missing"), join(dir, "gone"));
        const { files, errors } = await listManifestFiles(dir);
        assert.deepEqual(
          files.map((f) => f.sourcePath),
          ["ok.yaml"],
        );
        assert.deepEqual(
          errors.map((e) => [e.name, e.code, e.errorClass, e.sourcePaths[0]]),
          [
            ["UnsafeSymlinkError", "KNV2003", "terminal", "gone"],
            ["UnsafeSymlinkError", "KNV2003", "terminal", "steal.yaml"],
          ],
        );
        assert.match(errors[1]?.message ?? "", /points outside the source directory/);
      });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  void it("follows a file symlink out of the sync directory into the rest of its checkout, as Config Sync does", async () => {
    const outside = await mkdtemp(join(tmpdir(), "driftless-outside-"));
    try {
      await writeFile(join(outside, "token.yaml"), "secret: x\n");
      await withTree({ "common/cm.yaml": "", "envs/prod/own.yaml": "" }, async (dir) => {
        const prod = join(dir, "envs", "prod");
        await symlink("../../common/cm.yaml", join(prod, "common.yaml"));
        await symlink(join(outside, "token.yaml"), join(prod, "steal.yaml"));
        const { files, errors } = await listManifestFiles(prod, { checkoutDir: dir });
        assert.deepEqual(
          files.map((f) => f.sourcePath),
          ["../../common/cm.yaml", "own.yaml"],
        );
        // Out of the checkout is still refused.
        assert.deepEqual(
          errors.map((e) => [e.code, e.sourcePaths[0], e.message]),
          [["KNV2003", "steal.yaml", "symlink steal.yaml points outside the repository and is not followed"]],
        );
      });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  void it("accepts a root that is itself a symlink (git-sync style checkouts)", async () => {
    await withTree({ "rev1/cm.yaml": "" }, async (dir) => {
      await symlink(join(dir, "rev1"), join(dir, "current"));
      const { files, errors } = await listManifestFiles(join(dir, "current"));
      assert.deepEqual(errors, []);
      assert.deepEqual(
        files.map((f) => f.sourcePath),
        ["cm.yaml"],
      );
    });
  });

  void it("reports a missing or non-directory root as a terminal source error (KNV2004)", async () => {
    await withTree({ "file.yaml": "" }, async (dir) => {
      for (const root of [join(dir, "nope"), join(dir, "file.yaml")]) {
        const { files, errors } = await listManifestFiles(root);
        assert.equal(files.length, 0);
        assert.equal(errors.length, 1);
        assert.equal(errors[0]?.name, "SourceDirectoryError");
        assert.equal(errors[0]?.code, "KNV2004");
        assert.equal(errors[0]?.errorClass, "terminal");
      }
    });
  });
});

void describe("readFiles", () => {
  void it("hands over each file's text by index, and read failures as retryable errors", async () => {
    await withTree({ "a.yaml": "A", "b.yaml": "B" }, async (dir) => {
      const texts = new Map<number, string>();
      const failures = new Map<number, string>();
      const files = [
        { absolutePath: join(dir, "a.yaml"), sourcePath: "a.yaml" },
        { absolutePath: join(dir, "vanished.yaml"), sourcePath: "vanished.yaml" },
        { absolutePath: join(dir, "b.yaml"), sourcePath: "b.yaml" },
      ];
      await readFiles(
        files,
        (i, text) => texts.set(i, text),
        (i, error) => failures.set(i, `${error.code} ${error.errorClass} ${error.message}`),
        { sliceMs: 0 },
      );
      assert.deepEqual([...texts].sort(), [
        [0, "A"],
        [2, "B"],
      ]);
      assert.deepEqual([...failures.keys()], [1]);
      assert.match(failures.get(1) ?? "", /^KNV2003 retry cannot read vanished\.yaml: ENOENT$/);
    });
  });
});

void describe("readFiles and UTF-8", () => {
  void it("refuses a YAML file that is not valid UTF-8 (KNV1006) instead of applying U+FFFD; JSON decodes as Go's does", async () => {
    const invalid = Buffer.concat([
      Buffer.from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: "),
      Buffer.from([0xff, 0xfe, 0x41]),
      Buffer.from("}\n"),
    ]);
    await withTree({}, async (dir) => {
      await writeFile(join(dir, "bad.yaml"), invalid);
      await writeFile(join(dir, "bad.json"), Buffer.from([0x7b, 0x22, 0x6b, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]));
      const texts = new Map<number, string>();
      const failures = new Map<number, string>();
      await readFiles(
        [
          { absolutePath: join(dir, "bad.yaml"), sourcePath: "bad.yaml" },
          { absolutePath: join(dir, "bad.json"), sourcePath: "bad.json" },
        ],
        (i, text) => texts.set(i, text),
        (i, error) => failures.set(i, `${error.code} ${error.errorClass} ${error.message}`),
        { sliceMs: 0 },
      );
      assert.deepEqual([...failures], [[0, "KNV1006 terminal bad.yaml: the file is not valid UTF-8"]]);
      assert.deepEqual([...texts], [[1, '{"k":"\ufffd"}']]);
    });
  });
});

void describe("readFiles aborting", () => {
  void it("stops between slices when the signal aborts", async () => {
    await withTree({ "a.yaml": "A", "b.yaml": "B" }, async (dir) => {
      const files = ["a.yaml", "b.yaml"].map((name) => ({ absolutePath: join(dir, name), sourcePath: name }));
      const controller = new AbortController();
      const seen: number[] = [];
      const reading = readFiles(
        files,
        (i) => {
          seen.push(i);
          controller.abort(new Error("shutting down"));
        },
        () => {},
        { sliceMs: 0, signal: controller.signal },
      );
      await assert.rejects(reading, /shutting down/);
      assert.deepEqual(seen, [0]);
    });
  });
});
