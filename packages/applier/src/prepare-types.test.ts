import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeClient, KubeObject, ResourceMapping, RestMapper } from "@driftless/kube";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import { applyPlan } from "./apply-plan.ts";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation } from "./apply-outcome.ts";
import { toDesired, type DesiredObject } from "./desired.ts";
import type { LiveState } from "./live-state.ts";
import { plan } from "./plan.ts";

const mappingOf = (kind: string): ResourceMapping => ({
  group: "example.com",
  version: "v1",
  kind,
  resource: `${kind.toLowerCase()}s`,
  namespaced: true,
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
});

function objectsOf(kind: string, annotations: Record<string, string> = {}): DesiredObject[] {
  return ["one", "two"].map((name) =>
    toDesired({
      id: { group: "example.com", kind, namespace: "team", name },
      apiVersion: "example.com/v1",
      raw: { apiVersion: "example.com/v1", kind, metadata: { name, namespace: "team", annotations }, spec: {} },
      sourcePath: `${kind}-${name}.yaml`,
      sourceHash: `${kind}-${name}`,
      dependsOn: [],
    }),
  );
}

/** Apply options whose live state and mapper record, in `calls`, what the applier asked of them. */
function recordingOptions(served: (kind: string) => boolean): { options: ApplyOptions; calls: string[] } {
  const calls: string[] = [];
  const live: LiveState = {
    prepare: (mappings) => calls.push(`prepare ${mappings.map((m) => m.kind).join(",")}`),
    get: (mapping) => {
      calls.push(`get ${mapping.kind}`);
      return Promise.resolve(undefined);
    },
    remember: () => undefined,
    forget: () => undefined,
    refresh: () => Promise.resolve(undefined),
  };
  const mapper = {
    mappingFor: (_v: string, kind: string) => {
      // A miss here is a discovery refresh in the real mapper.
      calls.push(`mappingFor ${kind}`);
      return Promise.resolve(served(kind) ? mappingOf(kind) : undefined);
    },
    knownMappingFor: (_v: string, kind: string) => Promise.resolve(served(kind) ? mappingOf(kind) : undefined),
  };
  const annotator = new Annotator();
  const options: ApplyOptions = {
    client: {
      create: (_m: ResourceMapping, obj: KubeObject) =>
        Promise.resolve({ ...obj, metadata: { ...obj.metadata, resourceVersion: "1" } }),
    } as unknown as KubeClient,
    mapper: mapper as unknown as RestMapper,
    live,
    sync: { kind: "RepoSync", namespace: "team", name: "repo-sync" },
    commit: "0123456789abcdef0123456789abcdef01234567",
    annotator,
    matcher: new PatchMaker(annotator),
    concurrency: 1,
  };
  return { options, calls };
}

void describe("applyPlan and the live state's first reads", () => {
  void it("hands the live state every type of a wave before it reads the first object", async () => {
    const objects = ["Alpha", "Beta", "Gamma"].flatMap((kind) => objectsOf(kind));
    const { options, calls } = recordingOptions(() => true);
    const outcomes = await applyPlan(plan(objects), options);
    assert.deepEqual(
      outcomes.map((o) => o.operation),
      objects.map(() => Operation.Created),
    );
    const reads = calls.filter((c) => !c.startsWith("mappingFor"));
    assert.equal(reads[0], "prepare Alpha,Beta,Gamma", `calls: ${calls.join("; ")}`);
    assert.equal(calls.filter((c) => c.startsWith("prepare")).length, 1);
  });

  void it("prepares no type that only management-disabled objects declare, and looks up an unserved kind once", async () => {
    const objects = [
      ...objectsOf("Alpha"),
      ...objectsOf("Released", { "configmanagement.gke.io/managed": "disabled" }),
      ...objectsOf("Unserved").slice(0, 1),
    ];
    const { options, calls } = recordingOptions((kind) => kind !== "Unserved");
    const outcomes = await applyPlan(plan(objects), options);
    assert.deepEqual(
      outcomes.map((o) => `${o.desired.id.kind} ${o.operation}`),
      ["Alpha created", "Alpha created", "Released skipped", "Released skipped", "Unserved failed"],
    );
    assert.deepEqual(
      calls.filter((c) => c.startsWith("prepare")),
      ["prepare Alpha"],
      "a type the sync only releases is not watched",
    );
    assert.deepEqual(
      calls.filter((c) => c === "mappingFor Unserved"),
      ["mappingFor Unserved"],
      "an unserved kind costs one lookup (one discovery refresh), its apply's",
    );
  });
});
