import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate } from "node:timers/promises";
import { decorate, digestRecord, type DesiredObject } from "@driftless/applier";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import type { InformerListener, InformerLiveState } from "./live-cache.ts";
import { createLogger } from "./log.ts";
import { Remediator } from "./remediator.ts";

const sync = { kind: "RepoSync", namespace: "ns", name: "repo-sync" } as const;
const configMaps: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: ["get", "list", "watch"],
};

function declared(image: string): DesiredObject {
  return {
    id: { group: "", kind: "ConfigMap", namespace: "ns", name: "tag" },
    apiVersion: "v1",
    object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "tag", namespace: "ns" }, data: { image } },
    sourcePath: "tag.yaml",
    sourceHash: image,
    dependsOn: [],
  };
}

/** The live object as driftless writes it for a declaration (record included). */
function written(desired: DesiredObject, resourceVersion: string): KubeObject {
  const object = decorate(desired, sync) as KubeObject;
  new Annotator().setLastAppliedAnnotation(object);
  return { ...object, metadata: { ...object.metadata, resourceVersion } };
}

function harness(declarationsChanging: () => boolean) {
  let listener: InformerListener | undefined;
  const live = {
    onEvent: (l: InformerListener) => {
      listener = l;
      return () => undefined;
    },
  } as unknown as InformerLiveState;
  const passes: string[] = [];
  const fights: string[] = [];
  const remediator = new Remediator({
    live,
    sync,
    matcher: new PatchMaker(),
    annotator: new Annotator(),
    log: createLogger({}, { write: () => undefined }),
    requestPass: (reason) => passes.push(reason),
    correct: () => Promise.resolve(false),
    onFight: (error) => fights.push(error.code),
    declarationsChanging,
  });
  const emit = (object: KubeObject): void => listener?.("update", configMaps, object);
  return { remediator, emit, passes, fights };
}

void describe("Remediator", () => {
  void it("while a pass changes the declarations, a changed object only asks for a pass and never counts as a fight", () => {
    const { remediator, emit, passes, fights } = harness(() => true);
    remediator.setDeclared([declared("v0")]);
    // The pass writes v1..v8 (its own writes), seen against the previous declaration v0.
    for (let round = 1; round <= 8; round++) emit(written(declared(`v${round}`), String(round)));
    assert.equal(passes.length, 8);
    assert.deepEqual(fights, []);
    assert.deepEqual(remediator.activeFights(), new Map());
  });

  void it("between passes, the same changes are corrections and, past the threshold, a fight", () => {
    const { remediator, emit, fights } = harness(() => false);
    remediator.setDeclared([declared("v0")]);
    for (let round = 1; round <= 8; round++) emit(written(declared(`v${round}`), String(round)));
    assert.deepEqual(fights, ["KNV2005"]);
  });

  void it("an object equal to its declaration is left alone", () => {
    const { remediator, emit, passes } = harness(() => false);
    const v0 = declared("v0");
    remediator.setDeclared([v0]);
    emit(written(v0, "1"));
    assert.deepEqual(passes, []);
  });

  void it("reads objects whose record the watch cache keeps as a digest", async () => {
    const { remediator, emit, fights, passes } = harness(() => false);
    const digest = digestRecord(new Annotator().annotationKey);
    const v0 = declared("v0");
    remediator.setDeclared([v0]);
    const cached = digest(written(v0, "1"));
    assert.notEqual(cached.metadata.annotations?.["driftless.dev/last-applied-configuration"]?.[0], "{");
    emit(cached);
    assert.deepEqual(passes, [], "its own declaration's record: no drift");
    // Written by someone else with another record: drift, corrected (here: correct() fails, so a pass).
    emit(digest(written(declared("other"), "2")));
    await setImmediate(); // the failed correction asks for the pass once it settles
    assert.equal(passes.length, 1);
    assert.deepEqual(fights, []);
  });
});
