import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultRenderToolsDir } from "./render-tools.ts";

test("the helm built for rendering tells charts a current Kubernetes version, not helm's unstamped v1.20.0", async (t) => {
  const helm = join(defaultRenderToolsDir() ?? assert.fail("no render tools: run npm test's setup"), "helm");
  const chart = await mkdtemp(join(tmpdir(), "driftless-kube-caps-"));
  t.after(() => rm(chart, { recursive: true, force: true }));
  // As many public charts gate themselves and their API versions on the cluster's version.
  await writeFile(join(chart, "Chart.yaml"), 'apiVersion: v2\nname: caps\nversion: 0.1.0\nkubeVersion: ">=1.25.0-0"\n');
  await mkdir(join(chart, "templates"));
  await writeFile(
    join(chart, "templates", "cm.yaml"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caps\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n",
  );
  const rendered = execFileSync(helm, ["template", "caps", chart], { encoding: "utf8" });
  const version = /kube: "v1\.(\d+)\.\d+"/.exec(rendered);
  assert.ok(version !== null, rendered);
  assert.ok(Number(version[1]) >= 34, `helm reports Kubernetes v1.${version[1]}`);
});

test("DRIFTLESS_BIN_CACHE, where the build script puts the render tools when it is set, is looked in first", async (t) => {
  const cache = await mkdtemp(join(tmpdir(), "driftless-bin-cache-"));
  t.after(() => rm(cache, { recursive: true, force: true }));
  const built = join(cache, "render-kustomize-v1-helm-v1-caps-go1-linux-amd64");
  await mkdir(built);
  await mkdir(join(cache, "render-kustomize-v2-helm-v2-caps-go1-linux-amd64.partial"));
  const checkout = await mkdtemp(join(tmpdir(), "driftless-no-checkout-"));
  t.after(() => rm(checkout, { recursive: true, force: true }));
  assert.equal(defaultRenderToolsDir(checkout, cache), built);
  assert.equal(defaultRenderToolsDir(checkout, undefined), undefined);
});
