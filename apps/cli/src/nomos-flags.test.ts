import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { nomosFlagForms, shorthandValueForms } from "./nomos-flags.ts";

const booleans = new Set(["flat", "keep-output"]);

void describe("nomosFlagForms", () => {
  void it("reads cobra's --flag=true as the flag and --flag=false as its absence, for boolean flags only", () => {
    assert.deepEqual(nomosFlagForms(["hydrate", "--flat=True", "--keep-output=false", "--path=x"], booleans), [
      "hydrate",
      "--flat",
      "--path=x",
    ]);
    // A string flag's value is its own: --format=true stays as written.
    assert.deepEqual(nomosFlagForms(["--format=true"], booleans), ["--format=true"]);
  });

  void it("gives a bare --threshold nomos's default of 1,000 and leaves --threshold=N alone", () => {
    assert.deepEqual(nomosFlagForms(["vet", "--threshold"], booleans), ["vet", "--threshold=1000"]);
    assert.deepEqual(nomosFlagForms(["vet", "--threshold=5"], booleans), ["vet", "--threshold=5"]);
  });

  void it("leaves everything after -- as it is", () => {
    assert.deepEqual(nomosFlagForms(["vet", "--", "--flat=true", "--threshold"], booleans), [
      "vet",
      "--",
      "--flat=true",
      "--threshold",
    ]);
  });
});

void describe("shorthandValueForms", () => {
  void it("splits pflag's -n=VALUE of a shorthand taking a value, and leaves everything else as written", () => {
    const shorthands = new Set(["n", "o"]);
    assert.deepEqual(shorthandValueForms(["status", "-n=team-a", "-o=json", "-w=true", "-nteam-b"], shorthands), [
      "status",
      "-n",
      "team-a",
      "-o",
      "json",
      "-w=true",
      "-nteam-b",
    ]);
    // An empty value stays empty, and after `--` nothing is a flag.
    assert.deepEqual(shorthandValueForms(["-n=", "--", "-n=x"], shorthands), ["-n", "", "--", "-n=x"]);
  });
});
