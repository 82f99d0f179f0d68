/**
 * Text from a repository or a cluster (file and object names, status messages, tool output) made safe to
 * print: C0 and C1 control characters and DEL become `\xHH`, so a name holding `ESC ] 0 ; … BEL` cannot
 * retitle, clear or rewrite the reader's terminal. Newlines stay, as the line-based output needs them.
 */
import { stringify } from "yaml";

const control = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/g;

const hex = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;

export function printable(text: string): string {
  return text.replace(control, hex);
}

const anyControl = /[\x00-\x1f\x7f-\x9f]/g;

/**
 * A name or path from a repository or a cluster (or a message driftless builds as one line around them), set
 * into a line of output: line breaks are escaped too, so the name cannot start a line that reads as the CLI's own.
 */
export function printableLine(text: string): string {
  return text.replace(anyControl, hex);
}

/** JSON.stringify escapes C0 but leaves C1 (U+0080–U+009F) raw; this escapes those too, still valid JSON. */
export function printableJson(json: string): string {
  return json.replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** How `yaml` lays a document out (hydrate writes YAML 1.1 with sequences unindented, as nomos does). */
export interface YamlLayout {
  readonly version?: "1.1" | "1.2";
  readonly indentSeq?: boolean;
}

/**
 * YAML as `yaml` writes it, unless a string holds DEL or a C1 character, which it leaves raw: then every string
 * is written double-quoted, where `\xHH` escapes them (the document still reads back to the same values).
 */
export function printableYaml(value: unknown, layout: YamlLayout = {}): string {
  const plain = stringify(value, { ...layout, lineWidth: 0 });
  const raw = /[\x7f-\x9f]/g;
  if (plain.search(raw) < 0) return plain;
  return stringify(value, {
    ...layout,
    lineWidth: 0,
    defaultStringType: "QUOTE_DOUBLE",
    defaultKeyType: "PLAIN",
  }).replace(raw, hex);
}
