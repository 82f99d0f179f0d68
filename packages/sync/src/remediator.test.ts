import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate } from "node:timers/promises";
import { decorate, digestRecord, type DesiredObject } from "@driftless/applier";
import { configMapMapping, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import type { InformerListener, InformerLiveState } from "./live-cache.ts";
import { createLogger } from "./log.ts";
import { Correction, Remediator } from "./remediator.ts";

const sync = { kind: "RepoSync", namespace: "ns", name: "repo-sync" } as const;
function declared(image: string, annotations?: Record<string, string>): DesiredObject {
  const metadata = { name: "tag", namespace: "ns", ...(annotations === undefined ? {} : { annotations }) };
  return {
    id: { group: "", kind: "ConfigMap", namespace: "ns", name: "tag" },
    apiVersion: "v1",
    object: { apiVersion: "v1", kind: "ConfigMap", metadata, data: { image } },
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

function harness(
  declarationsChanging: () => boolean,
  correction: Correction = Correction.Deferred,
  fight: { readonly fightThreshold?: number; readonly fightWindowMs?: number } = {},
) {
  let listener: InformerListener | undefined;
  const cache: { current: KubeObject | undefined } = { current: undefined };
  const live = {
    onEvent: (l: InformerListener) => {
      listener = l;
      return () => undefined;
    },
    onUndeclared: () => () => undefined,
    get: () => Promise.resolve(cache.current),
  } as unknown as InformerLiveState;
  const passes: string[] = [];
  const fights: string[] = [];
  const corrected: string[] = [];
  const remediator = new Remediator({
    live,
    sync,
    matcher: new PatchMaker(),
    annotator: new Annotator(),
    log: createLogger({}, { write: () => undefined }),
    requestPass: (reason) => passes.push(reason),
    correct: (desired) => {
      corrected.push(desired.sourceHash);
      return Promise.resolve(correction);
    },
    onFight: (error) => fights.push(error.code),
    declarationsChanging,
    ...fight,
  });
  const emit = (object: KubeObject, mapping = configMapMapping, event: "update" | "delete" = "update"): void => {
    cache.current = event === "delete" ? undefined : object;
    listener?.(event, mapping, object);
  };
  return { remediator, emit, passes, fights, corrected, cache };
}

void describe("Remediator", () => {
  void it("while a pass changes the declarations, changes are checked against the new declaration when it ends", async () => {
    let changing = true;
    const { remediator, emit, passes, fights, corrected, cache } = harness(() => changing);
    remediator.setDeclared([declared("v0")]);
    // The pass writes v1..v8 (its own writes): nothing is decided against the previous declaration v0.
    for (let round = 1; round <= 8; round++) emit(written(declared(`v${round}`), String(round)));
    assert.deepEqual([passes, corrected, fights], [[], [], []]);
    // It ends having declared v8, which is what is live: nothing to correct, and never a fight.
    remediator.setDeclared([declared("v8")]);
    changing = false;
    remediator.recheckChangesDuringPass();
    await setImmediate();
    assert.deepEqual([passes, corrected, fights], [[], [], []]);
    assert.deepEqual(remediator.activeFights(), new Map());

    // Someone else changed the object during the next pass: corrected against that pass's declaration.
    changing = true;
    emit(written(declared("someone else"), "20"));
    remediator.setDeclared([declared("v9")]);
    changing = false;
    remediator.recheckChangesDuringPass();
    await setImmediate();
    assert.deepEqual(corrected, ["v9"]);

    // Deleted during a pass: re-created after it.
    changing = true;
    emit(written(declared("v9"), "21"));
    cache.current = undefined;
    changing = false;
    remediator.recheckChangesDuringPass();
    await setImmediate();
    assert.deepEqual(corrected, ["v9", "v9"]);
  });

  void it("between passes, the same changes are corrections and, past the threshold of writes, a fight", async () => {
    const { remediator, emit, fights, corrected } = harness(() => false, Correction.Written);
    remediator.setDeclared([declared("v0")]);
    for (let round = 1; round <= 8; round++) {
      emit(written(declared(`v${round}`), String(round)));
      await setImmediate(); // each correction written before the next change
    }
    // Detected at the sixth write; the two drifts after it are not corrected, but counted as the fight going on.
    assert.deepEqual(fights, ["KNV2005", "KNV2005", "KNV2005"]);
    assert.equal(corrected.length, 6, "no correction while paused by the fight");
    // Config Sync's two sentences as they are (its e2e TestSurfaceFightError waits for the second), then the pause.
    const message = remediator.activeFights().values().next().value?.message ?? "";
    assert.match(message, /^detected excessive object updates, approximately 6 times per minute\. /);
    assert.ok(
      message.includes("This may indicate Config Sync is fighting with another controller over the object."),
      message,
    );
    assert.match(message, /paused correcting ConfigMap, .* for 60 s/);
  });

  void it("counts each change another writer makes to an object paused by a fight during a pass, as between passes", async () => {
    let changing = false;
    const { remediator, emit, fights, corrected } = harness(() => changing, Correction.Written);
    remediator.setDeclared([declared("v0")]);
    for (let round = 1; round <= 6; round++) {
      emit(written(declared(`v${round}`), String(round)));
      await setImmediate();
    }
    assert.deepEqual(fights, ["KNV2005"]);
    // Passes leave a paused object alone, so its changes during one are the other writer's: each counted.
    changing = true;
    for (let round = 7; round <= 10; round++) emit(written(declared(`v${round}`), String(round)));
    await setImmediate();
    assert.equal(fights.length, 5);
    assert.equal(corrected.length, 6, "no correction while paused by the fight");
  });

  void it("asks for a pass when a fight's pause ends: the changes dropped during it are corrected and KNV2005 cleared then, not at the next poll", async (t) => {
    // The window runs on mocked time: on real time a loaded machine ended it between two emits.
    t.mock.timers.enable({ apis: ["Date", "setTimeout"] });
    const fightWindowMs = 50;
    const { remediator, emit, passes, fights, corrected } = harness(() => false, Correction.Written, {
      fightThreshold: 1,
      fightWindowMs,
    });
    remediator.setDeclared([declared("v0")]);
    for (let round = 1; round <= 2; round++) {
      emit(written(declared(`other ${round}`), String(round)));
      await setImmediate();
    }
    assert.deepEqual(fights, ["KNV2005"]);
    emit(written(declared("other 3"), "3")); // during the pause: left as it is
    await setImmediate();
    assert.deepEqual([corrected.length, passes], [2, ["fight: /ConfigMap/ns/tag"]]);
    t.mock.timers.tick(fightWindowMs - 1);
    assert.deepEqual(passes, ["fight: /ConfigMap/ns/tag"], "asked for a pass before the pause ended");
    t.mock.timers.tick(1);
    assert.deepEqual(passes, ["fight: /ConfigMap/ns/tag", "fight pause over: /ConfigMap/ns/tag"]);
    assert.deepEqual(remediator.activeFights(), new Map());
    remediator.stop();
  });

  void it("counts each drift another writer makes while a fight pauses correction, as Config Sync's remediator counts each correction during a fight (resource_fights_total); a change that is no drift is not counted", async () => {
    const { remediator, emit, fights, corrected } = harness(() => false, Correction.Written, { fightThreshold: 1 });
    remediator.setDeclared([declared("v0")]);
    for (let round = 1; round <= 2; round++) {
      emit(written(declared(`other ${round}`), String(round)));
      await setImmediate();
    }
    assert.deepEqual([fights.length, corrected.length], [1, 2]);
    for (let round = 3; round <= 5; round++) {
      emit(written(declared(`other ${round}`), String(round)));
      await setImmediate();
    }
    assert.deepEqual([fights.length, corrected.length], [4, 2]);
    emit(written(declared("v0"), "6")); // as declared: no drift, nothing fought over
    await setImmediate();
    assert.deepEqual([fights.length, corrected.length], [4, 2]);
    remediator.stop();
  });

  void it("a correction the API server refuses, or one that writes nothing, is no fight", async () => {
    for (const correction of [Correction.Refused, Correction.Unchanged]) {
      const { remediator, emit, fights, corrected, passes } = harness(() => false, correction);
      remediator.setDeclared([declared("v0")]);
      for (let round = 1; round <= 8; round++) {
        emit(written(declared(`other ${round}`), String(round)));
        await setImmediate();
      }
      assert.deepEqual(fights, [], correction);
      assert.deepEqual(remediator.activeFights(), new Map(), correction);
      if (correction === Correction.Refused) {
        // Refused once: the pass it asks for reports it; the same declaration is not tried at every change.
        assert.deepEqual([corrected.length, passes.length], [1, 1]);
        // A new declaration is tried again.
        remediator.setDeclared([declared("v1")]);
        emit(written(declared("other 9"), "9"));
        await setImmediate();
        assert.deepEqual(corrected, ["v0", "v1"]);
      } else assert.deepEqual([corrected.length, passes.length], [8, 0]);
    }
  });

  void it("a declaration refused at a correction is tried again once a pass applied it, the declarations unchanged (a create refused while its CRD was deleted and created again)", async () => {
    const { remediator, emit, corrected } = harness(() => false, Correction.Refused);
    const declaration = declared("v0");
    remediator.setDeclared([declaration]);
    emit(written(declaration, "1"), configMapMapping, "delete");
    await setImmediate();
    emit(written(declared("other 1"), "2"));
    await setImmediate();
    assert.deepEqual(corrected, ["v0"], "held as refused");
    // A resync applies the same declaration: the server takes it now.
    remediator.setDeclared([declaration]);
    remediator.passApplied([{ desired: declaration, operation: "created" }]);
    emit(written(declared("other 2"), "3"));
    await setImmediate();
    assert.deepEqual(corrected, ["v0", "v0"]);
  });

  void it("ignores events of another version of the declared kind (a watch of the apiVersion the object left)", async () => {
    const { remediator, emit, corrected, passes } = harness(() => false, Correction.Written);
    remediator.setDeclared([declared("v0")]);
    emit(written(declared("old shape"), "1"), { ...configMapMapping, version: "v1beta1" });
    await setImmediate();
    assert.deepEqual([corrected, passes], [[], []]);
    emit(written(declared("changed"), "2"));
    await setImmediate();
    assert.deepEqual(corrected, ["v0"]);
  });

  void it("a deletion during a pass is corrected after it, whichever version's watch told it last", async () => {
    // Another object of the kind moved to another version: both versions are watched, and both watches
    // see this one's deletion, in either order; only the declared version's tells it is gone.
    let changing = true;
    const { remediator, emit, corrected, cache } = harness(() => changing, Correction.Written);
    remediator.setDeclared([declared("v0")]);
    const gone = written(declared("v0"), "5");
    emit(gone, configMapMapping, "delete");
    emit(gone, { ...configMapMapping, version: "v1beta1" }, "delete");
    cache.current = undefined;
    changing = false;
    remediator.recheckChangesDuringPass();
    await setImmediate();
    assert.deepEqual(corrected, ["v0"]);
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

  void it("settles claims of undeclared objects once a first declaration is known, an empty one too", async () => {
    let undeclared: ((mapping: ResourceMapping, object: KubeObject) => void) | undefined;
    let reads = 0;
    const live = {
      onEvent: () => () => undefined,
      onUndeclared: (l: (mapping: ResourceMapping, object: KubeObject) => void) => {
        undeclared = l;
        return () => undefined;
      },
      // The claim reads the object afresh before anything else: gone, so nothing more happens.
      client: { get: () => (reads++, Promise.resolve(undefined)) },
    } as unknown as InformerLiveState;
    const remediator = new Remediator({
      live,
      sync,
      matcher: new PatchMaker(),
      annotator: new Annotator(),
      log: createLogger({}, { write: () => undefined }),
      requestPass: () => undefined,
      correct: () => Promise.resolve(Correction.Deferred),
      onFight: () => undefined,
    });
    remediator.setDeclared([]);
    const claiming = written(declared("by hand"), "1");
    undeclared?.(configMapMapping, claiming);
    await setImmediate();
    assert.equal(reads, 1, "the claim was never settled");
    remediator.stop();
  });

  void it("corrects an object Git declares enabled that someone marked managed: disabled by hand", async () => {
    const { remediator, emit, corrected } = harness(() => false, Correction.Written);
    remediator.setDeclared([declared("v0")]);
    const live = written(declared("v0"), "1");
    const annotations = { ...live.metadata.annotations, "configmanagement.gke.io/managed": "disabled" };
    emit({ ...live, metadata: { ...live.metadata, annotations, resourceVersion: "2" }, data: { image: "drifted" } });
    await setImmediate();
    assert.deepEqual(corrected, ["v0"]);
  });

  void it("never writes an object Git declares managed: disabled, changed or deleted", async () => {
    const { remediator, emit, corrected, passes } = harness(() => false, Correction.Written);
    const off = declared("v0", { "configmanagement.gke.io/managed": "disabled" });
    remediator.setDeclared([off]);
    emit({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "tag", namespace: "ns", resourceVersion: "1" },
      data: { image: "mine" },
    });
    emit(written(off, "2"), configMapMapping, "delete");
    await setImmediate();
    assert.deepEqual([corrected, passes], [[], []]);
  });
});
