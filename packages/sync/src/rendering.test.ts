import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ErrorClass, KnvCode, type RSync } from "@driftless/api";
import { RenderServerUnavailableError } from "./render-client.ts";
import { RenderingMessage } from "./render.ts";
import { RenderCache } from "./rendering.ts";

test("a render container not listening yet is reported on status.rendering as a retry, as any failed render is, not thrown to status.sync", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-rendering-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "kustomization.yaml"), "resources: []\n");
  const unavailable = new RenderServerUnavailableError(join(dir, "render.sock"), new Error("connect ECONNREFUSED"));
  const cache = new RenderCache({ tools: {}, shellAllowed: false, renderer: () => Promise.reject(unavailable) });
  const sync = { apiVersion: "configsync.gke.io/v1beta1", kind: "RootSync", metadata: { name: "s" }, spec: {} };
  const rendered = await cache.render(
    { commit: "c".repeat(40), dir, sourceDir: dir, fetched: true },
    sync as unknown as RSync,
    AbortSignal.timeout(10_000),
  );
  assert.equal(rendered.source, undefined);
  assert.equal(rendered.rendering.message, RenderingMessage.Failed);
  assert.deepEqual(
    rendered.rendering.errors.map((e) => [e.code, e.errorClass]),
    [[KnvCode.Rendering, ErrorClass.Retry]],
  );
});
