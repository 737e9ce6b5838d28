// RFC 8785, the JSON Canonicalization Scheme, over decoded JSON values:
// object members sorted by the UTF-16 code units of their names, no
// insignificant white space, strings escaped and numbers written as
// ECMAScript's JSON.stringify writes them (which RFC 8785 is defined by).
// It agrees with otelschema/jcs (Go) on every value both accept; like it,
// it refuses what I-JSON refuses: numbers outside binary64 (NaN, the
// infinities) and strings holding an unpaired UTF-16 surrogate.

/** The error of a value that has no canonical form. */
export class CanonicalizationError extends Error {
  override name = "CanonicalizationError";
}

// An unpaired surrogate: with the u flag, a pair is one code point and does
// not match.
const loneSurrogate = /[\uD800-\uDFFF]/u;

/**
 * canonicalize returns the RFC 8785 canonical JSON text of a decoded JSON
 * value (null, booleans, finite numbers, strings, arrays and plain
 * objects; undefined members are left out, as JSON.stringify does).
 */
export function canonicalize(value: unknown, path = "$"): string {
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw new CanonicalizationError(`${path}: the number ${value} is outside IEEE 754 binary64`);
      }
      return JSON.stringify(value); // -0 is written 0, as RFC 8785 asks
    case "string":
      if (loneSurrogate.test(value)) {
        throw new CanonicalizationError(`${path}: a string of ${value.length} code units holds an unpaired UTF-16 surrogate`);
      }
      return JSON.stringify(value);
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        return "[" + value.map((v, i) => (v === undefined ? "null" : canonicalize(v, `${path}[${i}]`))).join(",") + "]";
      }
      const rec = value as Record<string, unknown>;
      // Array.prototype.sort compares strings by UTF-16 code units: the
      // order RFC 8785 prescribes.
      const names = Object.keys(rec).filter((k) => rec[k] !== undefined).sort();
      const parts: string[] = [];
      for (const k of names) {
        if (loneSurrogate.test(k)) {
          throw new CanonicalizationError(`${path}: a member name holds an unpaired UTF-16 surrogate`);
        }
        parts.push(JSON.stringify(k) + ":" + canonicalize(rec[k], `${path}.${k}`));
      }
      return "{" + parts.join(",") + "}";
    }
    default:
      throw new CanonicalizationError(`${path}: a ${typeof value} is not JSON`);
  }
}
