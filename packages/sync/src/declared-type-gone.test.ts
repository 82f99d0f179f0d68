import { test } from "node:test";
import assert from "node:assert/strict";
import type { ResourceMapping } from "@driftless/kube";
import { DeclaredTypeGone } from "./declared-type-gone.ts";

const anvils: ResourceMapping = {
  group: "acme.com",
  version: "v1",
  resource: "anvils",
  kind: "Anvil",
  namespaced: true,
  verbs: [],
};

function judge(state: { declared: boolean; changing: boolean; watched?: ResourceMapping[] }): {
  gone: DeclaredTypeGone;
  conflicts: () => number;
  passes: () => number;
} {
  let conflicts = 0;
  let passes = 0;
  const gone = new DeclaredTypeGone({
    declares: () => state.declared,
    watchedTypes: () => state.watched ?? [],
    declarationsChanging: () => state.changing,
    resourceConflict: () => void conflicts++,
    requestPass: () => void passes++,
  });
  return { gone, conflicts: () => conflicts, passes: () => passes };
}

test("a declared type whose CRD goes while no pass runs counts one conflict", () => {
  const { gone, conflicts } = judge({ declared: true, changing: false });
  gone.told(anvils);
  assert.equal(conflicts(), 1);
});

test("a declared type told gone during a poll's fetch counts once the pass ends with it still declared", () => {
  const state = { declared: true, changing: true };
  const { gone, conflicts } = judge(state);
  gone.told(anvils);
  assert.equal(conflicts(), 0);
  state.changing = false;
  gone.recheck();
  assert.equal(conflicts(), 1);
  gone.recheck();
  assert.equal(conflicts(), 1, "judged once");
});

test("a type the pass stopped declaring (it pruned the CRD) counts nothing when the pass ends", () => {
  const state = { declared: true, changing: true };
  const { gone, conflicts } = judge(state);
  gone.told(anvils);
  state.declared = false;
  state.changing = false;
  gone.recheck();
  assert.equal(conflicts(), 0);
});

test("a type still watched at another version counts nothing", () => {
  const { gone, conflicts } = judge({ declared: true, changing: false, watched: [{ ...anvils, version: "v2" }] });
  gone.told(anvils);
  assert.equal(conflicts(), 0);
});

test("a declared version no longer served asks for a pass, also while another version is watched; an undeclared one does not", () => {
  const unserved = judge({ declared: true, changing: false, watched: [{ ...anvils, version: "v2" }] });
  unserved.gone.told(anvils);
  assert.equal(unserved.passes(), 1);
  const pruned = judge({ declared: false, changing: false });
  pruned.gone.told(anvils);
  assert.equal(pruned.passes(), 0);
});

test("a declared type told gone during a pass asks for a pass once that pass ends with it still declared", () => {
  const state = { declared: true, changing: true };
  const { gone, passes } = judge(state);
  gone.told(anvils);
  assert.equal(passes(), 0);
  state.changing = false;
  gone.recheck();
  assert.equal(passes(), 1);
});
