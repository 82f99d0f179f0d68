/**
 * The JSON types of a CustomResourceDefinition's fields, as Config Sync reads a CRD: it converts every
 * CRD in the source to the typed apiextensions.k8s.io/v1 object (clusterconfig.ToCRD) and reports a
 * CRD that does not convert as KNV1065, "malformed CustomResourceDefinition", before its name or group
 * is looked at. That conversion ignores unknown fields and reads null as the zero value; a known field
 * holding the wrong JSON type (a string where a bool goes, a list where a mapping goes, a fraction
 * where an integer goes) fails it. `crdShapeProblem` finds the first such field.
 */
import { CrdGroup, CrdKind } from "./constants.ts";
import type { JsonObject } from "./json.ts";
import { shapeProblem, type Shape } from "./json-shape.ts";
import type { Manifest } from "./manifest.ts";

const strings: Shape = { list: "string" };
const fields = (shape: Readonly<Record<string, Shape>>): Shape => ({ fields: shape });

/** apiextensions.k8s.io/v1 JSONSchemaProps: recursion goes through `schema`, read when checked. */
const schema: Shape = { lazy: () => fields(schemaFields) };
/** A boolean, or a schema: Kubernetes' JSONSchemaPropsOrBool refuses anything else. */
const schemaOrBool: Shape = { boolOr: schema, expected: "a boolean or a schema" };
/** A schema or a list of schemas; Kubernetes' JSONSchemaPropsOrArray reads anything else as unset. */
const schemaOrArray: Shape = { oneOrList: schema };
const schemaFields: Readonly<Record<string, Shape>> = {
  id: "string",
  $schema: "string",
  $ref: "string",
  description: "string",
  type: "string",
  format: "string",
  title: "string",
  pattern: "string",
  default: "any",
  example: "any",
  enum: { list: "any" },
  maximum: "number",
  minimum: "number",
  multipleOf: "number",
  exclusiveMaximum: "bool",
  exclusiveMinimum: "bool",
  uniqueItems: "bool",
  nullable: "bool",
  maxLength: "int",
  minLength: "int",
  maxItems: "int",
  minItems: "int",
  maxProperties: "int",
  minProperties: "int",
  required: strings,
  items: schemaOrArray,
  allOf: { list: schema },
  oneOf: { list: schema },
  anyOf: { list: schema },
  not: schema,
  properties: { map: schema },
  patternProperties: { map: schema },
  definitions: { map: schema },
  additionalProperties: schemaOrBool,
  additionalItems: schemaOrBool,
  externalDocs: fields({ description: "string", url: "string" }),
  "x-kubernetes-preserve-unknown-fields": "bool",
  "x-kubernetes-embedded-resource": "bool",
  "x-kubernetes-int-or-string": "bool",
  "x-kubernetes-list-map-keys": strings,
  "x-kubernetes-list-type": "string",
  "x-kubernetes-map-type": "string",
  "x-kubernetes-validations": {
    list: fields({
      rule: "string",
      message: "string",
      messageExpression: "string",
      reason: "string",
      fieldPath: "string",
      optionalOldSelf: "bool",
    }),
  },
};

const validation = fields({ openAPIV3Schema: schema });
const subresources = fields({
  status: fields({}),
  scale: fields({ specReplicasPath: "string", statusReplicasPath: "string", labelSelectorPath: "string" }),
});
const printerColumn = (jsonPathField: string): Shape =>
  fields({
    name: "string",
    type: "string",
    format: "string",
    description: "string",
    priority: "int",
    [jsonPathField]: "string",
  });

/** The fields both versions of the CRD API share. */
const commonSpec: Readonly<Record<string, Shape>> = {
  group: "string",
  names: fields({
    plural: "string",
    singular: "string",
    shortNames: strings,
    kind: "string",
    listKind: "string",
    categories: strings,
  }),
  scope: "string",
  preserveUnknownFields: "bool",
  conversion: fields({
    strategy: "string",
    conversionReviewVersions: strings,
    webhookClientConfig: fields({
      url: "string",
      caBundle: "string",
      service: fields({ namespace: "string", name: "string", path: "string", port: "int" }),
    }),
    webhook: fields({
      conversionReviewVersions: strings,
      clientConfig: fields({
        url: "string",
        caBundle: "string",
        service: fields({ namespace: "string", name: "string", path: "string", port: "int" }),
      }),
    }),
  }),
};

/** A version's fields, the same in both APIs but for the printer columns' JSONPath (`jsonPath` in v1). */
const versionsOf = (jsonPathField: string): Shape => ({
  list: fields({
    name: "string",
    served: "bool",
    storage: "bool",
    deprecated: "bool",
    deprecationWarning: "string",
    schema: validation,
    subresources,
    additionalPrinterColumns: { list: printerColumn(jsonPathField) },
    selectableFields: { list: fields({ jsonPath: "string" }) },
  }),
});

const v1Spec = fields({ ...commonSpec, versions: versionsOf("jsonPath") });

const v1beta1Spec = fields({
  ...commonSpec,
  version: "string",
  validation,
  subresources,
  additionalPrinterColumns: { list: printerColumn("JSONPath") },
  selectableFields: { list: fields({ jsonPath: "string" }) },
  versions: versionsOf("JSONPath"),
});

/** Why this object, if a CRD, does not convert to the typed CRD Config Sync reads every CRD as. */
export function malformedCrdProblem(manifest: Manifest): string | undefined {
  if (manifest.group !== CrdGroup || manifest.kind !== CrdKind) return undefined;
  return crdShapeProblem(manifest.apiVersion, manifest.raw);
}

/**
 * The first field of this CRD (its `spec`) that the typed conversion would refuse, as
 * `spec.versions[0].served must be a boolean, found a string`; undefined when it converts.
 */
export function crdShapeProblem(apiVersion: string, raw: JsonObject): string | undefined {
  const spec = apiVersion.endsWith("/v1beta1") ? v1beta1Spec : v1Spec;
  return shapeProblem("spec", spec, raw["spec"]);
}
