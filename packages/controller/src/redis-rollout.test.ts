import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import type { RedisConnection } from "@driftless/queue";
import { RedisNonceAnnotation, redisRollout } from "./redis-rollout.ts";
import { ReconcilerRedisUsers } from "./redis-users.ts";

const sync = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
const users = new ReconcilerRedisUsers({} as RedisConnection, "driftless", "admin-password");
const deployment = (nonce: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "root-reconciler", annotations: { [RedisNonceAnnotation]: nonce } },
});
const passwordOf = (live: KubeObject | undefined, liveHash: string | undefined, hash: string): string =>
  users.derivedPassword(sync, redisRollout(live, liveHash, hash).generation);

test("two rollouts of an unchanged spec give different Redis passwords", () => {
  // A first pod, then the Deployment deleted by hand and rolled out again: same spec, new password.
  assert.notEqual(passwordOf(undefined, undefined, "h1"), passwordOf(undefined, undefined, "h1"));
});

test("a spec that returns to an earlier value does not bring its earlier password back", () => {
  const first = redisRollout(undefined, undefined, "h1");
  const second = redisRollout(deployment(first.nonce), "h1", "h2");
  const third = redisRollout(deployment(second.nonce), "h2", "h1");
  assert.notEqual(users.derivedPassword(sync, third.generation), users.derivedPassword(sync, first.generation));
  assert.notEqual(third.nonce, first.nonce);
});

test("the same rollout keeps its password: another replica or a restarted manager derives it again from the Deployment", () => {
  const rollout = redisRollout(undefined, undefined, "h1");
  const again = redisRollout(deployment(rollout.nonce), "h1", "h1");
  assert.equal(again.nonce, rollout.nonce);
  assert.equal(users.derivedPassword(sync, again.generation), users.derivedPassword(sync, rollout.generation));
  // Without a nonce (a Deployment of an older manager, or the annotation removed by hand) it rotates once.
  const unannotated: KubeObject = { ...deployment(""), metadata: { name: "root-reconciler" } };
  assert.notEqual(redisRollout(unannotated, "h1", "h1").nonce, "");
});
