import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorClass } from "@driftless/api";
import { helmFailureClass } from "./helm-failure-class.ts";
import { asRepoUrlWords, isExactVersion } from "./helm-source.ts";

test("helm's network failures are retried, as git's are; a missing chart or version is terminal", () => {
  for (const output of [
    'Error: looks like "https://charts.example/" is not a valid chart repository: Get "https://charts.example/index.yaml": dial tcp: lookup charts.example on 10.96.0.10:53: no such host',
    'Error: Get "https://charts.example/index.yaml": read tcp 10.0.0.2:41234->10.0.0.9:443: read: connection reset by peer',
    'Error: Get "https://charts.example/index.yaml": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
    "Error: dial tcp 10.0.0.9:443: connect: no route to host",
    "Error: failed to do request: dial tcp 10.0.0.9:443: connect: network is unreachable",
    "Error: dial tcp 127.0.0.1:1: connect: connection refused",
    "Error: failed to fetch https://charts.example/app-1.0.0.tgz : 503 Service Unavailable",
    "Error: failed to fetch https://charts.example/index.yaml : 408 Request Timeout",
  ])
    assert.equal(helmFailureClass(output), ErrorClass.Retry, output);
  for (const output of [
    'Error: chart "app" version "9.9.9" not found in https://charts.example repository',
    "Error: failed to fetch https://charts.example/app-1.0.0.tgz : 401 Unauthorized",
    "Error: INSTALLATION FAILED: template: app/templates/cm.yaml:3:10: executing ... nil pointer evaluating",
  ])
    assert.equal(helmFailureClass(output), ErrorClass.Terminal, output);
});

test("a chart or version the sync's repository lacks is worded as helm words it for --repo <url>, as Config Sync runs helm", () => {
  const url = "https://charts.example/charts";
  assert.equal(
    asRepoUrlWords(
      `Error: chart "web" matching 9.9.9 not found in driftless index. (try 'helm repo update'): no chart version found for web-9.9.9`,
      url,
    ),
    `Error: chart "web" version "9.9.9" not found in ${url} repository`,
  );
  assert.equal(
    asRepoUrlWords(
      `Error: chart "nope" matching  not found in driftless index. (try 'helm repo update'): no chart name found`,
      url,
    ),
    `Error: chart "nope" not found in ${url} repository`,
  );
  const other = "Error: failed to fetch https://charts.example/charts/index.yaml : 401 Unauthorized";
  assert.equal(asRepoUrlWords(other, url), other);
});

test("an index helm repo update cannot get is worded as helm words it for --repo <url>, as Config Sync runs helm", () => {
  const url = "https://charts.example/charts";
  // helm repo update's stdout and stderr, their lines joined by spaces as the helm source reports them.
  const update = (why: string): string =>
    `Hang tight while we grab the latest from your chart repositories... ...Unable to get an update from the "driftless" chart repository (${url}): ${why}: Error: Failed to update the following repositories: [${url}]`;
  for (const why of [
    `failed to fetch ${url}/index.yaml : 401 Unauthorized`,
    `Get "${url}/index.yaml": dial tcp 127.0.0.1:1: connect: connection refused`,
  ])
    assert.equal(
      asRepoUrlWords(update(why), url),
      `Error: looks like "${url}" is not a valid chart repository or cannot be reached: ${why}`,
    );
});

test("a version is exact where Go's semver.IsValid(\"v\" + version) holds, as Config Sync's isRange asks: short forms too, ranges and a leading v not", () => {
  for (const exact of ["1.2.3", "1.2", "1", "0.0.0", "1.2.3-rc.1", "1.2.3+build.7", "1.2.3-alpha-1+b"])
    assert.equal(isExactVersion(exact), true, exact);
  for (const resolved of [
    undefined,
    "",
    "latest",
    "v1.2.3",
    "~1.2.0",
    "^1",
    "1.x",
    "01.2.3",
    "1.02",
    "1.2-rc.1",
    "1.2.3-01",
    "1.2.3+",
    ">=1.0.0 <2.0.0",
  ])
    assert.equal(isExactVersion(resolved), false, String(resolved));
});
