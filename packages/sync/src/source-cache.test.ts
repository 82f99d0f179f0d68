import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SourceFormat } from "@driftless/api";
import type { KindInfo } from "@driftless/source";
import { SourceCache } from "./source-cache.ts";

const configMapKind: KindInfo = { group: "", version: "v1", resource: "configmaps", namespaced: true };

const configMap = (name: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: team\n`;

test("a file the sync's dir links to elsewhere in the checkout is declared, as Config Sync follows the link", async () => {
  const checkout = await mkdtemp(join(tmpdir(), "driftless-checkout-"));
  try {
    await mkdir(join(checkout, "common"));
    await mkdir(join(checkout, "envs", "prod"), { recursive: true });
    await writeFile(join(checkout, "common", "cm.yaml"), configMap("common"));
    await writeFile(join(checkout, "envs", "prod", "own.yaml"), configMap("own"));
    await symlink("../../common/cm.yaml", join(checkout, "envs", "prod", "common.yaml"));
    const cache = new SourceCache({ kind: "RootSync" }, { resolveKind: () => configMapKind });
    const fetched = { commit: "a".repeat(40), dir: checkout, sourceDir: join(checkout, "envs", "prod"), fetched: true };
    const result = await cache.read(fetched, SourceFormat.Unstructured, new AbortController().signal);
    assert.ok(result.complete, result.errors.map((e) => `${e.code} ${e.message}`).join("\n"));
    assert.deepEqual(
      result.objects.map((o) => [o.id.name, o.sourcePath]),
      [
        ["common", "../../common/cm.yaml"],
        ["own", "own.yaml"],
      ],
    );
  } finally {
    await rm(checkout, { recursive: true, force: true });
  }
});
