import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { syncsForPush } from "./push-match.ts";
import { parseWebhook, providerOf, RegistryEventsMediaType, verify, WebhookProvider } from "./webhook-push.ts";

const headers = { "content-type": RegistryEventsMediaType, authorization: "Bearer s3cret" };

function envelope(...events: unknown[]): Buffer {
  return Buffer.from(JSON.stringify({ events }));
}

const manifestPush = {
  action: "push",
  target: {
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    repository: "config/app",
    tag: "stable",
    digest: "sha256:" + "a".repeat(64),
  },
  request: { host: "127.0.0.1:5000" },
};

test("a registry notification is told by its media type and verified by its bearer secret", () => {
  assert.equal(providerOf(headers), WebhookProvider.Registry);
  const body = envelope(manifestPush);
  assert.ok(verify(WebhookProvider.Registry, headers, body, "s3cret"));
  assert.equal(verify(WebhookProvider.Registry, { ...headers, authorization: "Bearer nope" }, body, "s3cret"), false);
  assert.equal(verify(WebhookProvider.Registry, { "content-type": RegistryEventsMediaType }, body, "s3cret"), false);
});

test("the first manifest pushed by tag is the push; pulls and blob pushes are ignored", () => {
  const pull = { ...manifestPush, action: "pull" };
  const blob = { action: "push", target: { repository: "config/app", digest: "sha256:b" }, request: { host: "h" } };
  assert.deepEqual(parseWebhook(WebhookProvider.Registry, headers, envelope(pull, blob, manifestPush)), {
    kind: "push",
    push: {
      repoUrls: ["127.0.0.1:5000/config/app"],
      branch: "stable",
      commit: manifestPush.target.digest,
      image: true,
    },
  });
  assert.equal(parseWebhook(WebhookProvider.Registry, headers, envelope(pull, blob)).kind, "ignored");
  assert.equal(parseWebhook(WebhookProvider.Registry, headers, Buffer.from("{}")).kind, "invalid");
});

function ociSync(name: string, image: string): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name, namespace: "team-a" },
    spec: { sourceType: "oci", oci: { image, auth: "none" } },
  };
}

test("a registry push triggers the OCI syncs following that repository and tag, never one pinned by digest or a git sync", () => {
  const syncs = [
    ociSync("by-tag", "127.0.0.1:5000/config/app:stable"),
    ociSync("other-tag", "127.0.0.1:5000/config/app:canary"),
    ociSync("other-repo", "127.0.0.1:5000/config/other:stable"),
    ociSync("by-digest", `127.0.0.1:5000/config/app@sha256:${"b".repeat(64)}`),
    {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "git", namespace: "team-a" },
      spec: { git: { repo: "https://127.0.0.1:5000/config/app", branch: "stable", auth: "none" } },
    },
  ];
  const push = { repoUrls: ["127.0.0.1:5000/config/app"], branch: "stable", commit: undefined, image: true as const };
  assert.deepEqual(
    syncsForPush(syncs, push).syncs.map((s) => s.name),
    ["by-tag"],
  );
});
