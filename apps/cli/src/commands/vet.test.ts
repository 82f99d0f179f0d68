import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { vet, type VetOptions } from "./vet.ts";

const fixtures = join(import.meta.dirname, "..", "..", "..", "..", "test", "fixtures", "hierarchy");

async function vetLines(dir: string, options: Partial<VetOptions> = {}): Promise<{ exit: number; lines: string[] }> {
  const lines: string[] = [];
  const exit = await vet(
    dir,
    { format: "hierarchy", scope: { kind: "RootSync" }, ...options },
    (line) => void lines.push(line),
  );
  return { exit, lines };
}

const errorCodes = (lines: readonly string[]): string[] =>
  lines.flatMap((line) => /^(KNV\d{4}): /.exec(line)?.[1] ?? []).sort();

void describe("driftless vet checks what nomos vet checks", () => {
  void it("checks every cluster the source names: a collision on one named cluster fails, and names that cluster", async () => {
    const dir = join(fixtures, "errors", "knv1029-cluster-specific-collision");
    const { exit, lines } = await vetLines(dir);
    assert.equal(exit, 1, lines.join("\n"));
    assert.deepEqual(errorCodes(lines), ["KNV1029"]);
    assert.match(lines[0] ?? "", /^KNV1029: for cluster "staging": ClusterRole "viewer"/);
    // Checked for a cluster without a name only (`--clusters ""`, as nomos), the source is valid.
    assert.equal((await vetLines(dir, { clusters: [""] })).exit, 0);
  });

  void it("checks only the --clusters the source declares, as nomos: a name it does not know checks nothing", async () => {
    const dir = join(fixtures, "errors", "knv1029-cluster-specific-collision");
    const known = await vetLines(dir, { clusters: ["staging", "unknown-cluster"] });
    assert.equal(known.exit, 1, known.lines.join("\n"));
    assert.deepEqual(errorCodes(known.lines), ["KNV1029"]);
    // A broken source passes for a cluster it does not declare, as `nomos vet --clusters unknown-cluster` does.
    const unknown = await vetLines(join(fixtures, "many-errors"), { clusters: ["unknown-cluster"] });
    assert.equal(unknown.exit, 0, unknown.lines.join("\n"));
    assert.match(unknown.lines.join("\n"), /0 error\(s\), no cluster checked: the source declares none of --clusters/);
  });

  void it("takes --clusters defaultcluster for the cluster without a name, as nomos vet names it", async () => {
    // nomos v1.22 `vet --no-api-server-check --clusters defaultcluster` on this source: its errors, exit 1.
    const { exit, lines } = await vetLines(join(fixtures, "many-errors"), { clusters: ["defaultcluster"] });
    assert.equal(exit, 1, lines.join("\n"));
    assert.notEqual(errorCodes(lines).length, 0);
  });

  void it("lists an error found for every cluster once, without cluster names", async () => {
    const { exit, lines } = await vetLines(join(fixtures, "many-errors"));
    assert.equal(exit, 1);
    // many-errors names the cluster "prod" (a cluster-name selector), so it is read twice.
    assert.match(lines.at(-1) ?? "", /6 error\(s\), for cluster "prod" and a cluster without a name$/);
    assert.ok(
      lines.filter((l) => l.startsWith("KNV")).every((l) => !l.includes(" for cluster")),
      lines.join("\n"),
    );
  });

  void it("prints nomos's `✅ No validation issues found.` on stderr for a valid source, and driftless's summary on stdout", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await vet(
      join(fixtures, "repo"),
      { format: "hierarchy", scope: { kind: "RootSync" } },
      (line) => void out.push(line),
      (line) => void err.push(line),
    );
    assert.equal(code, 0, err.join("\n"));
    assert.deepEqual(err, ["✅ No validation issues found."]);
    assert.match(out.join("\n"), /^\d+ file\(s\), \d+ object\(s\), .* 0 error\(s\)/);
    const failed = await vetLines(join(fixtures, "many-errors"));
    assert.ok(!failed.lines.some((l) => l.includes("No validation issues")), failed.lines.join("\n"));
  });

  void it("ends each error with Config Sync's link to its code's page, a blank line between two, as nomos vet prints them", async () => {
    const { lines } = await vetLines(join(fixtures, "many-errors"));
    const errors = lines.filter((l) => l.startsWith("KNV"));
    assert.ok(errors.length > 1);
    for (const error of errors) {
      const number = /^KNV(\d{4}): /.exec(error)?.[1] ?? "";
      assert.match(
        error,
        /^KNV\d{4}: [^\n]+\n\nFor more information, see https:\/\/g\.co\/cloud\/acm-errors#knv\d{4}$/,
      );
      assert.ok(error.endsWith(`#knv${number}`), error);
    }
    // Error, blank, error, ..., then the summary.
    assert.deepEqual(
      lines.slice(0, -1).map((l) => (l === "" ? "" : "error")),
      errors.flatMap((_, i) => (i === 0 ? ["error"] : ["", "error"])),
    );
  });

  void it("reports a kind: Sync as KNV1043, not as a kind to retry once its CRD is installed", async () => {
    const { lines } = await vetLines(join(fixtures, "errors", "knv1043-sync-kind"));
    assert.deepEqual(errorCodes(lines), ["KNV1043"]);
  });

  void it("reports a Repo with an invalid name as KNV1036 alone, without a missing Repo (KNV1017)", async () => {
    const { lines } = await vetLines(join(fixtures, "errors", "knv1036-repo-name"));
    assert.deepEqual(errorCodes(lines), ["KNV1036"]);
  });

  void it("reports every error in one pass, several for one object, as nomos vet does", async () => {
    const { lines } = await vetLines(join(fixtures, "many-errors"));
    // What `nomos vet --no-api-server-check` reports for this fixture (Config Sync bd5fadf7).
    assert.deepEqual(errorCodes(lines), ["KNV1004", "KNV1009", "KNV1010", "KNV1011", "KNV1020", "KNV1043"]);
    const rolebinding = lines.filter((l) => l.includes("namespaces/apps/web/rolebinding.yaml"));
    assert.deepEqual(errorCodes(rolebinding), ["KNV1009", "KNV1010", "KNV1011"]);
  });
});
