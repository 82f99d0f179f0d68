import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { applyPatch } from "./apply-patch.ts";
import type { JsonObject } from "./json.ts";
import {
  applyOthers,
  applyOthersToCustomResource,
  declaredCustomResource,
  declaredDeployment,
  declaredLeaves,
  editLive,
  othersOnCustomResource,
  othersOnDeployment,
  serverDeployment,
} from "./testdata/arbitraries.ts";
import { maker, withRecord } from "./testdata/harness.ts";

const RUNS = { numRuns: 300 };
const withOrWithoutRecord = fc.boolean();

describe("property: additions outside declared paths never cause an update", () => {
  it("Deployment: server defaults plus anything other actors add", () => {
    fc.assert(
      fc.property(declaredDeployment, othersOnDeployment, withOrWithoutRecord, (declared, others, recorded) => {
        const live = applyOthers(serverDeployment(declared), declared, others);
        const result = maker.calculate(withRecord(live, recorded ? declared : undefined), declared);
        assert.equal(result.isEmpty(), true, result.render());
      }),
      RUNS,
    );
  });

  it("custom resource: keys added to any map, status and metadata", () => {
    fc.assert(
      fc.property(declaredCustomResource, othersOnCustomResource, withOrWithoutRecord, (declared, others, recorded) => {
        const live = applyOthersToCustomResource(structuredClone(declared), others);
        const result = maker.calculate(withRecord(live, recorded ? declared : undefined), declared);
        assert.equal(result.isEmpty(), true, result.render());
      }),
      RUNS,
    );
  });
});

describe("property: any change inside a declared path causes an update", () => {
  const edit = fc.record({ pick: fc.nat(), mode: fc.constantFrom<"change" | "delete">("change", "delete") });

  it("Deployment", () => {
    fc.assert(
      fc.property(
        declaredDeployment,
        othersOnDeployment,
        edit,
        withOrWithoutRecord,
        (declared, others, { pick, mode }, recorded) => {
          const live = applyOthers(serverDeployment(declared), declared, others);
          const leaves = declaredLeaves(declared);
          const path = leaves[pick % leaves.length];
          fc.pre(path !== undefined && editLive(live, path, mode));
          const result = maker.calculate(withRecord(live, recorded ? declared : undefined), declared);
          assert.equal(result.isEmpty(), false, `${mode} ${JSON.stringify(path)} went unnoticed`);
        },
      ),
      RUNS,
    );
  });

  it("custom resource", () => {
    fc.assert(
      fc.property(
        declaredCustomResource,
        othersOnCustomResource,
        edit,
        withOrWithoutRecord,
        (declared, others, { pick, mode }, recorded) => {
          const live = applyOthersToCustomResource(structuredClone(declared), others);
          const leaves = declaredLeaves(declared);
          const path = leaves[pick % leaves.length];
          fc.pre(path !== undefined && editLive(live, path, mode));
          const result = maker.calculate(withRecord(live, recorded ? declared : undefined), declared);
          assert.equal(result.isEmpty(), false, `${mode} ${JSON.stringify(path)} went unnoticed`);
        },
      ),
      RUNS,
    );
  });
});

describe("property: any edit of the declaration at a declared path causes an update (changes and removals)", () => {
  const edit = fc.record({ pick: fc.nat(), mode: fc.constantFrom<"change" | "delete">("change", "delete") });

  it("Deployment", () => {
    fc.assert(
      fc.property(declaredDeployment, othersOnDeployment, edit, (original, others, { pick, mode }) => {
        const live = withRecord(applyOthers(serverDeployment(original), original, others), original);
        const modified = structuredClone(original);
        const leaves = declaredLeaves(original);
        const path = leaves[pick % leaves.length];
        fc.pre(path !== undefined && editLive(modified, path, mode));
        const result = maker.calculate(live, modified);
        assert.equal(result.isEmpty(), false, `${mode} ${JSON.stringify(path)} in the declaration went unnoticed`);
      }),
      RUNS,
    );
  });

  it("custom resource", () => {
    fc.assert(
      fc.property(declaredCustomResource, othersOnCustomResource, edit, (original, others, { pick, mode }) => {
        const live = withRecord(applyOthersToCustomResource(structuredClone(original), others), original);
        const modified = structuredClone(original);
        const leaves = declaredLeaves(original);
        const path = leaves[pick % leaves.length];
        fc.pre(path !== undefined && editLive(modified, path, mode));
        const result = maker.calculate(live, modified);
        assert.equal(result.isEmpty(), false, `${mode} ${JSON.stringify(path)} in the declaration went unnoticed`);
      }),
      RUNS,
    );
  });
});

describe("property: the patch brings the live object to the declared state", () => {
  /** Applies `result.patch` and matches again: nothing may be left to do. */
  function converges(live: JsonObject, modified: JsonObject): void {
    const result = maker.calculate(live, modified);
    const patched = applyPatch(live, result);
    const again = maker.calculate(patched, modified);
    assert.equal(again.isEmpty(), true, `patch ${JSON.stringify(result.patch)} left:\n${again.render()}`);
  }

  it("Deployment (strategic merge): from any previous declaration, with drift and others' additions", () => {
    const drift = fc.array(
      fc.record({ pick: fc.nat(), mode: fc.constantFrom<"change" | "delete">("change", "delete") }),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(
        declaredDeployment,
        declaredDeployment,
        othersOnDeployment,
        drift,
        (original, modified, others, edits) => {
          const live = applyOthers(serverDeployment(original), original, others);
          const leaves = declaredLeaves(original);
          for (const { pick, mode } of edits) {
            const path = leaves[pick % leaves.length];
            if (path) editLive(live, path, mode);
          }
          converges(withRecord(live, original), modified);
        },
      ),
      RUNS,
    );
  });

  it("custom resource (JSON merge): from any previous declaration, with drift and others' additions", () => {
    fc.assert(
      fc.property(
        declaredCustomResource,
        declaredCustomResource,
        othersOnCustomResource,
        fc.nat(),
        (original, modified, others, pick) => {
          const live = applyOthersToCustomResource(structuredClone(original), others);
          const leaves = declaredLeaves(original);
          const path = leaves[pick % leaves.length];
          if (path) editLive(live, path, "change");
          converges(withRecord(live, original), modified);
        },
      ),
      RUNS,
    );
  });
});
