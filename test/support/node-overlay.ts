/**
 * The one change a local node needs to `manifests/`: it has no cluster DNS, so the manager names the Redis
 * Service by the environment the kubelet injects (REDIS_SERVICE_HOST/PORT) instead of
 * `redis.config-management-system.svc`. For the install-path e2e and the node-pods bench.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";

/** Writes `overlay/kustomization.yaml` over the manifests at `manifests`; returns the overlay's folder. */
export async function writeNodeOverlay(overlay: string, manifests: string): Promise<string> {
  await mkdir(overlay, { recursive: true });
  await writeFile(
    join(overlay, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      "resources:",
      // kustomize refuses an absolute path to a kustomization; a relative one may leave the overlay's folder.
      `  - ${relative(overlay, manifests)}`,
      "patches:",
      "  - patch: |",
      "      apiVersion: apps/v1",
      "      kind: Deployment",
      "      metadata: {name: reconciler-manager, namespace: config-management-system}",
      "      spec:",
      "        template:",
      "          spec:",
      "            containers:",
      "              - name: reconciler-manager",
      "                env:",
      "                  - name: REDIS_URL",
      "                    value: redis://$(REDIS_SERVICE_HOST):$(REDIS_SERVICE_PORT)",
      "",
    ].join("\n"),
  );
  return overlay;
}
