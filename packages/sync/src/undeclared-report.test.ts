import assert from "node:assert/strict";
import { it } from "node:test";
import { UndeclaredReport, undeclaredLogIntervalMs, undeclaredWarnAbove } from "./undeclared-report.ts";

const counts = (entries: Record<string, number>): Map<string, number> => new Map(Object.entries(entries));

void it("logs once per change of the undeclared counts, at warn above the threshold, with the count and the types", () => {
  let now = 0;
  const report = new UndeclaredReport(() => now);
  assert.equal(report.next(counts({ ConfigMap: 0 })), undefined, "nothing undeclared: no line");

  const many = report.next(counts({ ConfigMap: undeclaredWarnAbove + 200, "Deployment.apps": 0 }));
  assert.equal(many?.level, "warn");
  assert.deepEqual(many?.fields, {
    undeclared: undeclaredWarnAbove + 200,
    types: { ConfigMap: undeclaredWarnAbove + 200 },
  });
  now += undeclaredLogIntervalMs * 10;
  assert.equal(report.next(counts({ ConfigMap: undeclaredWarnAbove + 200 })), undefined, "unchanged: no second line");

  const few = report.next(counts({ ConfigMap: 3 }));
  assert.deepEqual([few?.level, few?.fields.undeclared], ["info", 3]);
});

void it("writes at most one line a minute, however often the count changes, and reports the latest after", () => {
  let now = 0;
  const report = new UndeclaredReport(() => now);
  assert.equal(report.next(counts({ ConfigMap: 500 }))?.level, "warn");
  for (let n = 1; n < 50; n++) {
    now += 1000;
    assert.equal(report.next(counts({ ConfigMap: n % 2 === 0 ? 500 + n : 0 })), undefined);
  }
  now += undeclaredLogIntervalMs;
  const back = report.next(counts({ ConfigMap: 0 }));
  assert.deepEqual([back?.level, back?.fields.undeclared], ["info", 0]);
});
