import { randomBytes } from "node:crypto";
import type { TestContext } from "node:test";
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { testEnv } from "./env.ts";
import { quietly } from "./cleanup.ts";

export type Who = "admin" | "user";

/** A KubeConfig for the local control plane as the admin (system:masters) or the ordinary user. */
export function kubeConfig(who: Who = "admin"): KubeConfig {
  const env = testEnv();
  const kc = new KubeConfig();
  kc.loadFromFile(who === "admin" ? env.kubeconfig : env.userKubeconfig);
  return kc;
}

export function coreApi(who: Who = "admin"): CoreV1Api {
  return kubeConfig(who).makeApiClient(CoreV1Api);
}

export function customApi(who: Who = "admin"): CustomObjectsApi {
  return kubeConfig(who).makeApiClient(CustomObjectsApi);
}

/** A short random suffix for names that must not collide between tests or runs. */
export function suffix(): string {
  return randomBytes(3).toString("hex");
}

/**
 * Creates a namespace of the test's own and deletes it when the test ends (without waiting:
 * the namespace controller finishes in the background).
 */
export async function testNamespace(t: TestContext, prefix = "t"): Promise<string> {
  const name = `${prefix}-${suffix()}`;
  const core = coreApi();
  await core.createNamespace({ body: { metadata: { name, labels: { "driftless.test/run": "true" } } } });
  // Never throws: an API error here (409 while it is already terminating) would skip the test's later
  // clean-up, which stops its reconcilers.
  t.after(() =>
    quietly(`deleting namespace ${name}`, () =>
      core.deleteNamespace({ name }).catch((error: unknown) => {
        if (statusCode(error) !== 404) throw error;
      }),
    ),
  );
  return name;
}

/**
 * A namespace by name, created unless it exists, and deleted when the test ends (quietly), unless it is the
 * RootSyncs' namespace the tests share.
 */
export async function ensureNamespace(t: TestContext, name: string): Promise<void> {
  const core = coreApi();
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (error) {
    if (statusCode(error) !== 409) throw error;
  }
  if (name !== "config-management-system")
    t.after(() => quietly(`deleting namespace ${name}`, () => core.deleteNamespace({ name })));
}

/** The HTTP status of a client-node error, or undefined for anything else. */
export function statusCode(error: unknown): number | undefined {
  return error instanceof ApiException ? (error.code as number) : undefined;
}

/** Runs `fn` expecting the API server to refuse with `code`; fails the test otherwise. */
export async function expectStatus(code: number, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    const got = statusCode(error);
    if (got === code) return;
    throw new Error(`expected HTTP ${code}, got ${got ?? "a non-HTTP error"}`, { cause: error });
  }
  throw new Error(`expected HTTP ${code}, but the request succeeded`);
}
