/**
 * How YAML is read, shared by the full parser and the fast path so both resolve scalars identically:
 * as kubectl and Config Sync do (sigs.k8s.io/yaml on go-yaml v2), i.e. YAML 1.1 booleans such as
 * `on`/`yes`, merge keys, and duplicate keys accepted with the last value winning (Config Sync's
 * decoder is not strict: `name: a` then `name: b` declares b).
 */
import type { DocumentOptions, ParseOptions, SchemaOptions, Tags } from "yaml";

/**
 * YAML 1.1 also resolves `12:30` to 750 and `2024-01-02` to a Date; go-yaml v2 keeps both as strings
 * when decoding into untyped maps, so those tags are dropped to read ConfigMap data the same way.
 */
export function kubernetesTags(tags: Tags): Tags {
  return tags.filter((tag) =>
    typeof tag === "string"
      ? !["timestamp", "intTime", "floatTime"].includes(tag)
      : tag.tag !== "tag:yaml.org,2002:timestamp" && !("format" in tag && tag.format === "TIME"),
  );
}

export const yamlOptions: ParseOptions & DocumentOptions & SchemaOptions = {
  version: "1.1",
  customTags: kubernetesTags,
  // A repeated key replaces the earlier value whole, as go-yaml v2 decoding into a map does.
  uniqueKeys: false,
  // Messages must not quote the source: a broken Secret manifest would leak into status and logs.
  prettyErrors: false,
};
