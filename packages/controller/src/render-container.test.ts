import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSync, SyncAnnotation, type RSync } from "@driftless/api";
import { PrivateTmpdirEnv } from "@driftless/sync";
import { reconcilerDeployment, SpecHashAnnotation } from "./deployment-spec.ts";
import { RenderContainer } from "./render-container.ts";

/** A RepoSync whose reconciler found a kustomization (the render container's tests), unless `rendering` says otherwise. */
function repoSync(override: Record<string, unknown> = {}, rendering: string | null = "true"): RSync {
  const annotations = rendering === null ? {} : { [SyncAnnotation.RequiresRendering]: rendering };
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: "team-a", annotations },
    spec: { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "none" }, override },
  });
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.value;
}

interface Container {
  name: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  command?: string[];
}
interface PodSpec {
  automountServiceAccountToken?: boolean;
  containers: Container[];
  volumes: { name: string; projected?: { sources: Record<string, unknown>[] } }[];
}

const settings = {
  image: "driftless:test",
  redisUrl: "redis://redis:6379",
  redisPasswordSecret: { name: "redis", key: "password" },
  queuePrefix: undefined,
  logLevel: "info",
};

interface Template {
  metadata: { annotations: Record<string, string> };
  spec: PodSpec;
}

function templateOf(sync: RSync, extra: Record<string, unknown> = {}): Template {
  const deployment = reconcilerDeployment(sync, { ...settings, ...extra }) as unknown as {
    spec: { template: Template };
  };
  return deployment.spec.template;
}

function podOf(sync: RSync, extra: Record<string, unknown> = {}): PodSpec {
  return templateOf(sync, extra).spec;
}

function container(pod: PodSpec, name: string): Container {
  const found = pod.containers.find((c) => c.name === name);
  assert.ok(found, `no container ${name}`);
  return found;
}

const tokenDir = "/var/run/secrets/kubernetes.io/serviceaccount";

void describe("the reconciler pod's render container", () => {
  void it("mounts the ServiceAccount token into the reconciler container only, as kubelet's automount would", () => {
    const pod = podOf(repoSync());
    assert.equal(pod.automountServiceAccountToken, false);
    const mountsOfToken = pod.containers.filter((c) => (c.volumeMounts ?? []).some((m) => m.mountPath === tokenDir));
    assert.deepEqual(
      mountsOfToken.map((c) => c.name),
      ["reconciler"],
    );
    const mount = container(pod, "reconciler").volumeMounts!.find((m) => m.mountPath === tokenDir)!;
    assert.equal(mount.readOnly, true);
    const volume = pod.volumes.find((v) => v.name === mount.name);
    const sources = volume?.projected?.sources ?? [];
    assert.deepEqual(sources[0], { serviceAccountToken: { path: "token", expirationSeconds: 3607 } });
    assert.deepEqual(sources[1], {
      configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] },
    });
    assert.deepEqual(sources[2], {
      downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] },
    });
  });

  void it("gives the render container no Redis setting, no token, the checkouts read-only, and the socket", () => {
    const pod = podOf(repoSync());
    const render = container(pod, RenderContainer);
    assert.deepEqual(render.command?.slice(-2), ["--render-server", "/render/render.sock"]);
    const names = (render.env ?? []).map((e) => e.name);
    assert.deepEqual(
      names.filter((n) => /REDIS|KUBECONFIG|TOKEN|PASSWORD/.test(n)),
      [],
    );
    assert.ok(
      (render.env ?? []).every((e) => e.valueFrom === undefined),
      "the render container reads no Secret",
    );
    const mounts = render.volumeMounts ?? [];
    assert.ok(!mounts.some((m) => m.mountPath.startsWith("/var/run/secrets")));
    assert.deepEqual(
      mounts.find((m) => m.mountPath === "/cache"),
      { name: "cache", mountPath: "/cache", readOnly: true },
    );
    assert.ok(mounts.some((m) => m.mountPath === "/render"));
    // The reconciler reaches it through the socket in the shared folder.
    const reconciler = container(pod, "reconciler");
    assert.ok(reconciler.env?.some((e) => e.name === "DRIFTLESS_RENDER_SOCKET" && e.value === "/render/render.sock"));
    assert.ok(reconciler.volumeMounts?.some((m) => m.mountPath === "/render"));
    for (const own of [render, reconciler])
      assert.ok(
        own.env?.some((e) => e.name === PrivateTmpdirEnv && e.value === "true"),
        "a container's /tmp is its own emptyDir: a start sweeps what a killed predecessor left",
      );
    assert.ok(
      reconciler.env?.some((e) => e.name === "REDIS_PASSWORD"),
      "the reconciler keeps its Redis password",
    );
  });

  void it("hardens the render container like the reconciler's", () => {
    const pod = podOf(repoSync());
    assert.deepEqual(container(pod, RenderContainer).securityContext, container(pod, "reconciler").securityContext);
    assert.deepEqual(container(pod, RenderContainer).securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
  });

  void it("has a memory limit, overridable through override.resources for hydration-controller", () => {
    assert.deepEqual(container(podOf(repoSync()), RenderContainer).resources, {
      requests: { cpu: "10m", memory: "64Mi" },
      limits: { memory: "256Mi" },
    });
    const sync = repoSync({
      resources: [{ containerName: "hydration-controller", memoryLimit: "1Gi", cpuLimit: "1" }],
    });
    const pod = podOf(sync);
    assert.deepEqual(container(pod, RenderContainer).resources?.limits, { memory: "1Gi", cpu: "1" });
    // The reconciler's own resources are not touched by the render container's override.
    assert.deepEqual(container(pod, "reconciler").resources?.limits, { memory: "512Mi" });
  });

  void it("passes the manager's allowance of a RepoSync's shell in rendering to its reconciler, and only then", () => {
    const allowed = (pod: PodSpec): boolean =>
      container(pod, "reconciler").env?.some(
        (e) => e.name === "DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING" && e.value === "true",
      ) === true;
    assert.equal(allowed(podOf(repoSync())), false);
    assert.equal(allowed(podOf(repoSync(), { allowRepoSyncShellInRendering: true })), true);
  });

  void it('is left out, with its socket folder and its /tmp, until the sync is annotated requires-rendering: "true"', () => {
    for (const rendering of [null, "false", "True", ""]) {
      const pod = podOf(repoSync({}, rendering));
      assert.deepEqual(
        pod.containers.map((c) => c.name),
        ["reconciler"],
        `requires-rendering ${String(rendering)}`,
      );
      assert.deepEqual(
        pod.volumes.map((v) => v.name),
        ["cache", "tmp", "kube-api-access"],
      );
      const reconciler = container(pod, "reconciler");
      assert.ok(!(reconciler.volumeMounts ?? []).some((m) => m.mountPath === "/render"));
      // Still pointed at the socket: without it, the reconciler would run kustomize itself, beside its token.
      assert.ok(reconciler.env?.some((e) => e.name === "DRIFTLESS_RENDER_SOCKET" && e.value === "/render/render.sock"));
      assert.ok((reconciler.volumeMounts ?? []).some((m) => m.mountPath === tokenDir && m.readOnly === true));
      assert.equal(pod.automountServiceAccountToken, false);
    }
  });

  void it("changes only the render container's presence and the pod template's hash: no shell, no other setting", () => {
    const without = templateOf(repoSync({ enableShellInRendering: true }, "false"));
    const withRender = templateOf(repoSync({ enableShellInRendering: true }, "true"));
    // A new hash replaces the pod (and draws a new Redis rollout).
    assert.notEqual(
      without.metadata.annotations[SpecHashAnnotation],
      withRender.metadata.annotations[SpecHashAnnotation],
    );
    const reconcilerWithout = container(without.spec, "reconciler");
    const reconcilerWith = container(withRender.spec, "reconciler");
    assert.deepEqual(reconcilerWith.env, reconcilerWithout.env);
    assert.ok(
      !(reconcilerWith.env ?? []).some((e) => e.name === "DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING"),
      "the annotation allowed a RepoSync's shell in rendering",
    );
    assert.deepEqual(
      (reconcilerWith.volumeMounts ?? []).filter((m) => m.mountPath !== "/render"),
      reconcilerWithout.volumeMounts,
    );
    assert.deepEqual(
      withRender.spec.volumes.filter((v) => v.name !== "render" && v.name !== "render-tmp"),
      without.spec.volumes,
    );
  });
});
