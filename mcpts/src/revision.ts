// Tool revisions: an explicit one, advertised in a definition's _meta, or
// the digest of the definition, computed exactly as otelschema/mcpgo
// computes it (otelschema/testdata/digests.json holds the vectors both
// suites check).
import { createHash } from "node:crypto";

import { DIGEST, META } from "./gen/conventions.js";
import { canonicalize } from "./jcs.js";

/** A tool definition as tools/list carries it. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** The prefix of revisions computed by digest. */
export const DIGEST_PREFIX: string = DIGEST.prefix;

/**
 * sdkAnnotations returns the annotations as the MCP Go SDK re-encodes them,
 * which is what the Go instrumentation digests: the members the SDK knows,
 * its always-written hints defaulted (false) when absent or null, the
 * others when present, not null and not the empty string.
 */
function sdkAnnotations(a: unknown): Record<string, unknown> {
  const src = typeof a === "object" && a !== null ? (a as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const m of DIGEST.annotations.members) {
    const v = src[m];
    if (Object.hasOwn(DIGEST.annotations.defaults, m)) {
      out[m] = v === undefined || v === null ? DIGEST.annotations.defaults[m] : v;
    } else if (v !== undefined && v !== null && v !== "") {
      out[m] = v;
    }
  }
  return out;
}

/**
 * digest returns the revision of a tool definition: "sha256:" and the hex
 * SHA-256 of the RFC 8785 canonical JSON of its name, inputSchema,
 * outputSchema and annotations (those present and not null). Title,
 * description, icons and _meta do not change it. It throws a
 * CanonicalizationError for a definition that is not I-JSON.
 */
export function digest(tool: ToolDefinition): string {
  const def: Record<string, unknown> = {};
  for (const f of DIGEST.fields) {
    const v = tool[f];
    if (v === undefined || v === null) continue;
    def[f] = f === "annotations" ? sdkAnnotations(v) : v;
  }
  const canon = canonicalize(def, tool.name ?? "$");
  return DIGEST_PREFIX + createHash("sha256").update(canon, "utf8").digest("hex");
}

/**
 * definition returns a tool definition as an advertised event carries it
 * (ATTR.tool_definition), as mcpgo's Definition does: the definition as
 * tools/list serves it, RFC 8785 canonical JSON, without _meta (which may
 * hold keys private to the server) and icons (large, and no part of the
 * contract). It throws a CanonicalizationError for a definition that is
 * not I-JSON.
 */
export function definition(tool: ToolDefinition): string {
  const def: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(tool)) {
    if (k === "_meta" || k === "icons" || v === undefined) continue;
    def[k] = v;
  }
  return canonicalize(def, tool.name ?? "$");
}

/**
 * advertised returns the revision a tool definition advertises: its
 * explicit revision (_meta under META.revision), else its digest. Clients
 * record it as the revision they plan with.
 */
export function advertised(tool: ToolDefinition): string {
  const r = metaString(tool._meta, META.revision);
  return r !== "" ? r : digest(tool);
}

/**
 * short returns a revision for display: a digest of either form cut to
 * its first 12 hex digits, any other revision unchanged.
 */
export function short(rev: string): string {
  for (const p of [DIGEST_PREFIX, TOOL_DIGEST_PREFIX]) {
    if (rev.length > p.length + 12 && rev.startsWith(p)) return rev.slice(p.length, p.length + 12);
  }
  return rev;
}

/** The prefix of a revision that records a SEP-2636 tool digest. */
export const TOOL_DIGEST_PREFIX: string = DIGEST.tool.revisionPrefix;

/**
 * toolDigest returns the SEP-2636 digest of a Tool object as the server
 * serves it, as mcpgo's ToolDigestJSON does: "sha256:" and the hex SHA-256
 * of the RFC 8785 form of the whole object, title, description, icons and
 * _meta included, as a tools/manifest entry carries it. The one member
 * left out is the revision key in _meta (META.revision; and _meta when
 * that was its only key): it carries the revision, which may be this
 * digest. It throws a CanonicalizationError for an object that is not
 * I-JSON.
 */
export function toolDigest(tool: ToolDefinition): string {
  let obj: Record<string, unknown> = tool;
  const meta = tool._meta;
  if (meta !== undefined && meta !== null && typeof meta === "object" && Object.hasOwn(meta, DIGEST.tool.omittedMeta)) {
    const { [DIGEST.tool.omittedMeta]: _omitted, ...rest } = meta;
    const { _meta: _old, ...others } = tool;
    obj = Object.keys(rest).length === 0 ? others : { ...others, _meta: rest };
  }
  const canon = canonicalize(obj, tool.name ?? "$");
  return DIGEST.tool.prefix + createHash("sha256").update(canon, "utf8").digest("hex");
}

/**
 * toolRevision returns the revision that records a SEP-2636 tool digest
 * ("sha256:" and 64 lowercase hex digits): TOOL_DIGEST_PREFIX and the same
 * hex, so that its form says its algorithm and it is never read as a
 * digest of the other kind. It throws a TypeError for any other string.
 */
export function toolRevision(d: string): string {
  if (revisionAlgorithm(d) !== DIGEST.forms.find((f) => f.prefix === DIGEST.tool.prefix)?.algorithm) {
    throw new TypeError(`tool digest ${JSON.stringify(d)} is not "${DIGEST.tool.prefix}" and 64 lowercase hex digits`);
  }
  return TOOL_DIGEST_PREFIX + d.slice(DIGEST.tool.prefix.length);
}

/** isToolRevision reports whether rev records a SEP-2636 tool digest. */
export function isToolRevision(rev: string): boolean {
  return rev.startsWith(TOOL_DIGEST_PREFIX) && /^[0-9a-f]{64}$/.test(rev.slice(TOOL_DIGEST_PREFIX.length));
}

/**
 * revisionAlgorithm returns the algorithm of a revision as its form says
 * (otelschema.AlgorithmOf): one of DIGEST.forms' algorithms; "" for the
 * empty revision.
 */
export function revisionAlgorithm(rev: string): string {
  if (rev === "") return "";
  let other = "";
  for (const f of DIGEST.forms) {
    if (f.prefix === "") other = f.algorithm;
    else if (rev.startsWith(f.prefix) && /^[0-9a-f]{64}$/.test(rev.slice(f.prefix.length))) return f.algorithm;
  }
  return other;
}

/**
 * metaString returns the string value of key in m, "" when absent; a
 * number is written as Go's mcpgo writes it (an integral one in base 10),
 * so that both sides read the same revision from the same _meta.
 */
export function metaString(m: Record<string, unknown> | undefined | null, key: string): string {
  const v = m?.[key];
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return formatNumber(v);
  if (typeof v === "bigint") return v.toString();
  return "";
}

/** metaInt returns the integer value of key in m, 0 when absent. */
export function metaInt(m: Record<string, unknown> | undefined | null, key: string): number {
  const v = m?.[key];
  return typeof v === "number" && Number.isFinite(v) ? Math.trunc(v) : 0;
}

/** metaBool returns the boolean value of key in m, undefined when absent. */
export function metaBool(m: Record<string, unknown> | undefined | null, key: string): boolean | undefined {
  const v = m?.[key];
  return typeof v === "boolean" ? v : undefined;
}

// formatNumber writes f as Go's strconv does for mcpgo's formatNumber: an
// integral value in base 10; any other in the shortest form, exponent
// notation below 1e-4 or from 1e21 (Go's 'g' switches at 1e6 too, for
// values that are not integral: there the exponent is written e+06).
function formatNumber(f: number): string {
  if (Number.isInteger(f)) return BigInt(f).toString();
  const exp = Math.floor(Math.log10(Math.abs(f)));
  if (exp < -4 || exp >= 6) {
    const [mant, e] = f.toExponential().split("e");
    const n = Number(e);
    return `${mant}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  return String(f);
}
