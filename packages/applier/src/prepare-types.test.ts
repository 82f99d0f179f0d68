import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeClient, KubeObject, ResourceMapping, RestMapper } from "@driftless/kube";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import { applyPlan, Operation, type ApplyOptions } from "./apply.ts";
import { toDesired } from "./desired.ts";
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

void describe("applyPlan and the live state's first reads", () => {
  void it("hands the live state every type of a wave before it reads the first object", async () => {
    const kinds = ["Alpha", "Beta", "Gamma"];
    const objects = kinds.flatMap((kind) =>
      ["one", "two"].map((name) =>
        toDesired({
          id: { group: "example.com", kind, namespace: "team", name },
          apiVersion: "example.com/v1",
          raw: { apiVersion: "example.com/v1", kind, metadata: { name, namespace: "team" }, spec: {} },
          sourcePath: `${kind}-${name}.yaml`,
          sourceHash: `${kind}-${name}`,
          dependsOn: [],
        }),
      ),
    );
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
    const annotator = new Annotator();
    const options: ApplyOptions = {
      client: {
        create: (_m: ResourceMapping, obj: KubeObject) =>
          Promise.resolve({ ...obj, metadata: { ...obj.metadata, resourceVersion: "1" } }),
      } as unknown as KubeClient,
      mapper: { mappingFor: (_v: string, kind: string) => Promise.resolve(mappingOf(kind)) } as unknown as RestMapper,
      live,
      sync: { kind: "RepoSync", namespace: "team", name: "repo-sync" },
      commit: "0123456789abcdef0123456789abcdef01234567",
      annotator,
      matcher: new PatchMaker(annotator),
      concurrency: 1,
    };
    const outcomes = await applyPlan(plan(objects), options);
    assert.deepEqual(
      outcomes.map((o) => o.operation),
      objects.map(() => Operation.Created),
    );
    assert.equal(calls[0], "prepare Alpha,Beta,Gamma", `calls: ${calls.join("; ")}`);
    assert.equal(calls.filter((c) => c.startsWith("prepare")).length, 1);
  });
});
