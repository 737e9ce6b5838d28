// Tool-call arguments against a tool's input schema: a JSON Schema
// validator that asserts formats and loads no remote or file reference,
// with the verdicts of the Go side's internal/argschema (both suites check
// otelschema/testdata/validation.json): the same calls admitted, the same
// fields and keywords named when they are not.
import { createRequire } from "node:module";

import type { ErrorObject, Options, ValidateFunction } from "ajv";

// Ajv and ajv-formats are CommonJS: loaded with require, so that their
// classes are what the ESM build gets whatever the interop.
const require = createRequire(import.meta.url);
interface AjvInstance {
  compile(schema: object): ValidateFunction;
  addMetaSchema(schema: object): unknown;
  removeSchema(schema: object): unknown;
}
type AjvClass = new (opts: Options) => AjvInstance;
const Ajv2020 = require("ajv/dist/2020.js").default as AjvClass;
const Ajv2019 = require("ajv/dist/2019.js").default as AjvClass;
const Ajv07 = require("ajv/dist/ajv.js").default as AjvClass;
const draft06 = require("ajv/dist/refs/json-schema-draft-06.json") as object;
const addFormats = require("ajv-formats").default as (ajv: unknown) => unknown;

/** One reason arguments fail a schema. */
export interface Violation {
  /**
   * The JSON pointer of the value at fault, such as "/region"; for a
   * missing or an unexpected property, of that property. "" is the
   * arguments themselves.
   */
  field: string;
  /** The JSON Schema keyword that failed: "required", "enum", "type", … */
  kind: string;
  /** What is wrong, in English. */
  message: string;
}

/** The error of a schema that cannot validate calls. */
export class SchemaError extends Error {
  override name = "SchemaError";
}

/** A compiled input schema. */
export interface ArgsValidator {
  /**
   * validate returns the violations of args, sorted by field, or null
   * when they are valid. Absent or null arguments are the empty object, as
   * MCP clients send a call without arguments.
   */
  validate(args: unknown): Violation[] | null;
}

const options: Options = {
  strict: false, // unknown keywords and formats are ignored, as in Go
  allErrors: true, // every violation, so that each field is named
  validateFormats: true,
  logger: false,
  // No loadSchema: a reference that is not in the schema itself fails to
  // compile, remote or file.
};

const draft2019 = "https://json-schema.org/draft/2019-09/schema";

// One Ajv per draft, made on first use: making one (formats included)
// costs tens of milliseconds, compiling a tool's schema well under one.
const instances = new Map<string, AjvInstance>();
function instance(draft: "2020" | "2019" | "07"): AjvInstance {
  let ajv = instances.get(draft);
  if (!ajv) {
    if (draft === "07") {
      ajv = new Ajv07(options);
      ajv.addMetaSchema(draft06);
    } else {
      ajv = new (draft === "2019" ? Ajv2019 : Ajv2020)(options);
    }
    addFormats(ajv);
    instances.set(draft, ajv);
  }
  return ajv;
}
const drafts07 = new Set(["http://json-schema.org/draft-07/schema", "http://json-schema.org/draft-06/schema"]);

/**
 * compileSchema compiles a tool's input schema, as JSON Schema 2020-12 by
 * default (draft 2019-09, 07 and 06 when its $schema says so). A schema
 * that does not compile, or needs a reference from outside itself, throws
 * a SchemaError: no call to the tool could be validated.
 */
export function compileSchema(schema: unknown): ArgsValidator {
  if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema))) {
    throw new SchemaError(`the input schema is a ${schema === null ? "null" : Array.isArray(schema) ? "array" : typeof schema}, not a JSON Schema`);
  }
  const declared = typeof schema === "object" && schema !== null ? (schema as Record<string, unknown>)["$schema"] : undefined;
  const draft = typeof declared === "string" ? declared.replace(/#$/, "") : "";
  const ajv = instance(drafts07.has(draft) ? "07" : draft === draft2019 ? "2019" : "2020");
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(schema as object);
  } catch (err) {
    throw new SchemaError(`cannot compile the input schema: ${(err as Error).message}`);
  } finally {
    // Ajv keeps every schema it compiled, by object and by $id: forgotten
    // at once, so that a client compiling the definitions of every list it
    // sees holds only the validators it keeps, and two definitions with the
    // same $id do not collide.
    try {
      ajv.removeSchema(schema as object);
    } catch {
      // Nothing was added.
    }
  }
  return {
    validate(args: unknown): Violation[] | null {
      if (fn(args === undefined || args === null ? {} : args)) return null;
      return violations(fn.errors ?? []);
    },
  };
}

// violations turns Ajv's errors into the Go validator's: only the keywords
// that failed innermost (an anyOf whose branches all failed is reported by
// the branches' failures, as the Go validator's leaves are), one violation
// per missing or unexpected property, sorted by field.
function violations(errors: ErrorObject[]): Violation[] {
  const out: Violation[] = [];
  for (const e of errors) {
    const prefix = e.schemaPath + "/";
    if (errors.some((f) => f !== e && f.schemaPath.startsWith(prefix))) continue;
    const at = e.instancePath;
    const params = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case "required":
        out.push({ field: `${at}/${escape(String(params["missingProperty"]))}`, kind: "required", message: "is required and missing" });
        break;
      case "additionalProperties":
        out.push({ field: `${at}/${escape(String(params["additionalProperty"]))}`, kind: "additionalProperties", message: "is not allowed" });
        break;
      default:
        out.push({ field: at, kind: e.keyword, message: e.message ?? e.keyword });
    }
  }
  if (out.length === 0) out.push({ field: "", kind: "", message: "the arguments do not match the schema" });
  // A stable sort by field, as the Go validator's.
  return out.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
}

function escape(s: string): string {
  return s.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * violationText renders a violation as the Go side does: "/region: must be
 * equal to one of the allowed values" ("the arguments: …" for the root).
 */
export function violationText(v: Violation): string {
  return v.field === "" ? `the arguments: ${v.message}` : `${v.field}: ${v.message}`;
}
