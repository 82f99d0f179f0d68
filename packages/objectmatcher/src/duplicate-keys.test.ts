import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPatch } from "./apply-patch.ts";
import { declaredDeployment, liveDeployment } from "./testdata/deployment.ts";
import { at, edit, list, runScenario } from "./testdata/harness.ts";

const duplicated = [
  { name: "A", value: "1" },
  { name: "B", value: "2" },
  { name: "A", value: "3" },
];
const withEnv = (o: ReturnType<typeof liveDeployment>, env: readonly object[]) =>
  edit(o, (d) => (at(d, "spec.template.spec.containers.0")["env"] = structuredClone(env) as never));

void describe("a keyed list whose declaration repeats a merge key (env A, B, A: the API server only warns)", () => {
  void it("matches the live list stored as declared: no write on every pass", () => {
    runScenario({
      name: "duplicate env names, stored as sent",
      live: () => withEnv(liveDeployment(), duplicated),
      declared: () => withEnv(declaredDeployment(), duplicated),
      expect: "match",
    });
  });

  void it("writes the declared list whole when it drifted, and the result matches (no value flipping between writes)", () => {
    const result = runScenario({
      name: "duplicate env names, one changed live",
      live: () => withEnv(liveDeployment(), [duplicated[0], { name: "B", value: "9" }, duplicated[2]] as object[]),
      declared: () => withEnv(declaredDeployment(), duplicated),
      expect: "update",
    });
    const patched = applyPatch(
      withEnv(liveDeployment(), [duplicated[0], { name: "B", value: "9" }, duplicated[2]] as object[]),
      result,
    );
    assert.deepEqual(list(patched, "spec.template.spec.containers.0.env"), duplicated);
  });
});
