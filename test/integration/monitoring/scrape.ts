/** Reading a /metrics answer in the monitoring tests: each metric's samples, and which metrics have none. */
import assert from "node:assert/strict";
import { eventually } from "../../support/index.ts";

/** One /metrics answer: each metric's HELP and TYPE, and the sample lines. */
export interface Scrape {
  readonly helped: readonly string[];
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly string[];
}

function parse(text: string): Scrape {
  return {
    helped: [...text.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1] ?? ""),
    types: new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""])),
    samples: text.split("\n").filter((line) => line !== "" && !line.startsWith("#")),
  };
}

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  return parse(await response.text());
}

/** The sample lines of one metric (a histogram's or summary's through its suffixed series). */
export function samplesOf(s: Scrape, name: string): string[] {
  const type = s.types.get(name);
  const names =
    type === "histogram"
      ? [`${name}_bucket`, `${name}_sum`, `${name}_count`]
      : type === "summary"
        ? [name, `${name}_sum`, `${name}_count`]
        : [name];
  return s.samples.filter((line) => names.some((n) => line.startsWith(`${n}{`) || line.startsWith(`${n} `)));
}

/** Metrics with a HELP line and no sample. */
export function unrecorded(s: Scrape): string[] {
  return s.helped.filter((name) => samplesOf(s, name).length === 0);
}

/** The value of the first sample of `name` whose labels include every pair of `labels`. */
export function valueOf(s: Scrape, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const line = s.samples.find(
    (l) =>
      (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) &&
      Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
  );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/**
 * A scrape in which every metric has a sample, or the assertion naming those without one.
 * nodejs_gc_duration_seconds observes only once a collection has run: garbage made here brings
 * one about in the test process (where the reconciler runs), rather than waiting for luck.
 */
export async function fullScrape(url: string, who: string): Promise<Scrape> {
  let last: Scrape | undefined;
  try {
    return await eventually(
      async () => {
        for (let i = 0; i < 64; i++) void new Array<number>(100_000).fill(i);
        last = await scrape(url);
        return unrecorded(last).length === 0 ? last : undefined;
      },
      { timeoutMs: 15_000, what: `every metric of ${who} with a sample` },
    );
  } catch {
    assert.ok(last !== undefined);
    assert.deepEqual(unrecorded(last), [], `${who} registers metrics it never records`);
    throw new Error("unreachable");
  }
}
