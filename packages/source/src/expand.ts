/**
 * From parsed documents to candidate objects: `List` documents are flattened (as `kubectl get -o yaml`
 * writes them), and local-config documents are dropped before any validation, since they are never
 * applied and need not be valid Kubernetes objects (kpt function configs often have no name).
 * As in Config Sync (parse_file.go filters the documents of a file, before Lists are flattened),
 * only a file's own documents are checked: a local-config item of a List is kept and applied.
 */
import { LocalConfigFalse, UserAnnotation } from "@driftless/api";
import { ManifestParseError } from "./errors.ts";
import { describeJsonType, isJsonArray, isJsonObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import { at } from "./parse.ts";
import type { ParsedDocument } from "./parse.ts";

export interface ExpandedDocuments {
  readonly objects: readonly ParsedDocument[];
  readonly errors: readonly ManifestParseError[];
  readonly localConfigSkipped: number;
}

export function expandDocuments(documents: readonly ParsedDocument[], sourcePath: string): ExpandedDocuments {
  const objects: ParsedDocument[] = [];
  const errors: ManifestParseError[] = [];
  let localConfigSkipped = 0;

  const visit = (value: JsonObject, location: string): void => {
    if (!isList(value)) {
      objects.push({ value, location });
      return;
    }
    const items = value["items"];
    if (!isJsonArray(items)) return;
    items.forEach((item, i) => {
      const itemLocation = `${location ? `${location}, ` : ""}items[${i}]`;
      if (isJsonObject(item)) {
        visit(item, itemLocation);
      } else {
        const message = at(
          sourcePath,
          itemLocation,
          `expected a Kubernetes object in the List, found ${describeJsonType(item)}`,
        );
        errors.push(new ManifestParseError(message, { sourcePaths: [sourcePath] }));
      }
    });
  };

  for (const document of documents) {
    if (isLocalConfig(document.value)) localConfigSkipped++;
    else visit(document.value, document.location);
  }
  return { objects, errors, localConfigSkipped };
}

/**
 * `v1 List`, and typed lists such as `ConfigMapList`: by Kubernetes convention only list kinds end in
 * "List" and carry `items`. (Config Sync looks at `items` alone, which would also flatten a custom
 * resource that happens to have a top-level `items` field.)
 */
function isList(value: JsonObject): boolean {
  const kind = value["kind"];
  return typeof kind === "string" && kind.endsWith("List") && isJsonArray(value["items"]);
}

/**
 * Config Sync's rule (api's isLocalConfig), applied to metadata not yet validated: the annotation is
 * present and its value is anything but "false".
 */
function isLocalConfig(value: JsonObject): boolean {
  const metadata = value["metadata"];
  if (!isJsonObject(metadata)) return false;
  const annotations = metadata["annotations"];
  if (!isJsonObject(annotations)) return false;
  const flag = annotations[UserAnnotation.LocalConfig];
  // A non-string value is left to metadata validation, which asks for quotes.
  return typeof flag === "string" && flag !== LocalConfigFalse;
}
