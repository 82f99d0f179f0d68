import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "@driftless/kube";
import { podFailure } from "./pod-failure.ts";

function pod(containerStatuses: unknown[]): KubeObject {
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "root-reconciler-x-1" }, status: { containerStatuses } };
}

test("a crash-looping reconciler container is reported with its last exit and the last line of its log", () => {
  const failure = podFailure(
    pod([
      {
        name: "reconciler",
        restartCount: 4,
        state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" } },
        lastState: {
          terminated: {
            exitCode: 1,
            reason: "Error",
            message:
              '{"level":"info","msg":"starting"}\n{"level":"error","msg":"reconciler failed","error":"update RootSync x: forbidden"}\n',
          },
        },
      },
    ]),
  );
  assert.ok(failure !== undefined);
  assert.match(failure, /container reconciler: CrashLoopBackOff/);
  assert.match(failure, /4 restarts/);
  assert.match(failure, /last exit code 1 \(Error\)/);
  assert.match(failure, /forbidden/);
  assert.doesNotMatch(failure, /"msg":"starting"/);
});

test("a container that is starting, running or merely waiting for its first start is not a failure", () => {
  assert.equal(podFailure(pod([{ name: "reconciler", state: { running: {} } }])), undefined);
  assert.equal(
    podFailure(pod([{ name: "reconciler", state: { waiting: { reason: "ContainerCreating" } } }])),
    undefined,
  );
  assert.equal(podFailure(pod([])), undefined);
});

test("an image that cannot be pulled is a failure, and credentials in a message are masked", () => {
  const failure = podFailure(
    pod([
      {
        name: "reconciler",
        state: { waiting: { reason: "ImagePullBackOff", message: "pull https://user:s3cret@registry.local/x failed" } },
      },
    ]),
  );
  assert.ok(failure !== undefined);
  assert.match(failure, /ImagePullBackOff/);
  assert.doesNotMatch(failure, /s3cret/);
});
