// Output contracts: the result fields a plan depends on (PlanOptions.needs)
// and the error that stops the plan when a result lacks one, as mcpgo's
// contract.go.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { short } from "./revision.js";
import { joinAnd } from "./util.js";

/**
 * lookupPath returns the value at path in v, a tool result's structured
 * content, or undefined when it is not there. It is how needs are checked.
 *
 * A path is a sequence of segments separated by dots: "issue.id" is the
 * key "id" of the object under the key "issue". A segment is an object key,
 * taken literally; within it, "\." is a dot and "\\" a backslash (any other
 * backslash is kept). A segment of decimal digits without a leading zero
 * indexes an array when the value it is applied to is an array
 * ("items.0.id"), and is a key like any other on an object. There are no
 * wildcards. The empty path is the structured content itself. A field that
 * is present with the value null counts as absent: a dependent call cannot
 * use it.
 */
export function lookupPath(v: unknown, path: string): unknown {
  if (v === undefined || v === null) return undefined;
  if (path === "") return v;
  let cur: unknown = v;
  for (const seg of splitPath(path)) {
    if (Array.isArray(cur)) {
      const i = arrayIndex(seg);
      if (i === undefined || i >= cur.length) return undefined;
      cur = cur[i];
    } else if (typeof cur === "object" && cur !== null) {
      cur = Object.hasOwn(cur, seg) ? (cur as Record<string, unknown>)[seg] : undefined;
    } else {
      return undefined;
    }
    if (cur === undefined || cur === null) return undefined;
  }
  return cur;
}

function splitPath(path: string): string[] {
  const segs: string[] = [];
  let b = "";
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === "\\" && i + 1 < path.length && (path[i + 1] === "." || path[i + 1] === "\\")) {
      b += path[++i];
    } else if (c === ".") {
      segs.push(b);
      b = "";
    } else {
      b += c;
    }
  }
  segs.push(b);
  return segs;
}

function arrayIndex(seg: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,8})$/.test(seg)) return undefined;
  return Number(seg);
}

/**
 * ContractError is thrown by callTool when a result lacks fields the
 * call's plan needs (PlanOptions.needs). The server's result is kept: the
 * call ran, and its side effects may have happened; only the plan's next
 * step is stopped.
 */
export class ContractError extends Error {
  override name = "ContractError";
  constructor(
    /** The tool called, and the call's request id. */
    readonly tool: string,
    readonly requestId: string,
    /** The needed paths the result lacks, in the order they were declared. */
    readonly missing: string[],
    /** The revision the call was planned with. */
    readonly plannedRevision: string,
    /** The revision the result declares in its _meta, "" when none. */
    readonly serverRevision: string,
    /** The server's result, as received. */
    readonly result: CallToolResult,
  ) {
    let m = `${tool} result (request ${requestId}`;
    if (plannedRevision) m += `, planned with revision ${short(plannedRevision)}`;
    if (serverRevision) m += `, server revision ${short(serverRevision)}`;
    const what = result.structuredContent === undefined ? "has no structured content, so it lacks" : "lacks";
    m += `) ${what} ${joinAnd(missing.map((p) => JSON.stringify(p)))}, which the plan needs: the call ran, but its result no longer has the shape the plan was made for; refresh the tools and plan the next step again`;
    super(m);
  }
}
