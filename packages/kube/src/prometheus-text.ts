/** Just enough of the Prometheus text format to read counters from kube-apiserver's /metrics. */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of metric `name` (no suffixes: `apiserver_request_total`, not its _created twin). */
export function parseSamples(text: string, name: string): Sample[] {
  const samples: Sample[] = [];
  let from = 0;
  // Scan for lines that start with the name instead of splitting a multi-megabyte body.
  for (;;) {
    const at = text.indexOf(name, from);
    if (at === -1) return samples;
    from = at + name.length;
    if (at > 0 && text[at - 1] !== "\n") continue;
    const end = text.indexOf("\n", at);
    const line = text.slice(at, end === -1 ? undefined : end);
    const sample = parseLine(line, name);
    if (sample !== undefined) samples.push(sample);
  }
}

/** One sample line: `name{a="x",b="y\"z"} 12` (an optional timestamp after the value is ignored). */
export function parseLine(line: string, name: string): Sample | undefined {
  if (!line.startsWith(name)) return undefined;
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === "{") {
    i += 1;
    for (;;) {
      while (line[i] === " " || line[i] === ",") i += 1;
      if (line[i] === "}") {
        i += 1;
        break;
      }
      const eq = line.indexOf("=", i);
      if (eq === -1 || line[eq + 1] !== '"') return undefined;
      const key = line.slice(i, eq).trim();
      let value = "";
      let j = eq + 2;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\") {
          j += 1;
          const c = line[j];
          value += c === "n" ? "\n" : (c ?? "");
        } else {
          value += line[j];
        }
      }
      if (j >= line.length) return undefined;
      labels[key] = value;
      i = j + 1;
    }
  } else if (line[i] !== " ") {
    return undefined; // a longer metric name that merely starts with `name`
  }
  const rest = line.slice(i).trim().split(/\s+/)[0];
  if (rest === undefined || rest === "") return undefined;
  const value = Number(rest);
  return Number.isNaN(value) && rest !== "NaN" ? undefined : { name, labels, value };
}
