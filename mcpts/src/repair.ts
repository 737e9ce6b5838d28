// Rejections and what a client does about them: the repairable errors a
// server (or the client itself, for a call it held back) answers with, the
// repair policies, and the seed's rules for an automatic retry, as mcpgo's
// client.go and plan.go.
import type { CallToolRequest, CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import {
  ChangeClass,
  ENUMS,
  ERROR_CODE,
  OUTCOME_OF_CODE,
  parseEnum,
  RepairAction,
  type ApprovalValue,
  type ChangeClassValue,
  type OutcomeValue,
  type RepairActionValue,
} from "./names.js";
import { META } from "./gen/conventions.js";
import { metaString, short, type ToolDefinition } from "./revision.js";
import { joinAnd } from "./util.js";

/** The params of a tools/call request. */
export type CallToolParams = CallToolRequest["params"];

/**
 * A server's repairable rejection of a tool call, as carried in the
 * result's structured content (parseRejection).
 */
export interface Rejection {
  errorCode: string;
  tool: string;
  requiredAction: string;
  sideEffectStarted: boolean;
  currentRevision: string;
  clientRevision: string;
  /** The class of the change, when the rejection states it. */
  changeClass: ChangeClassValue | undefined;
  missingFields: string[];
  replacement: string;
  /** The outcome of the rejected call, from its error code; undefined for a code mcpdrift does not send. */
  outcome: OutcomeValue | undefined;
}

/**
 * parseRejection returns the rejection a tool result carries: an error
 * result whose structured content has an error_code; undefined otherwise.
 */
export function parseRejection(res: CallToolResult | undefined | null): Rejection | undefined {
  if (!res || res.isError !== true) return undefined;
  const m = res.structuredContent;
  if (typeof m !== "object" || m === null) return undefined;
  const sc = m as Record<string, unknown>;
  const errorCode = metaString(sc, "error_code");
  if (!errorCode) return undefined;
  const missing = Array.isArray(sc["missing_fields"]) ? (sc["missing_fields"] as unknown[]).filter((f): f is string => typeof f === "string") : [];
  return {
    errorCode,
    tool: metaString(sc, "tool"),
    requiredAction: metaString(sc, "required_action"),
    sideEffectStarted: sc["side_effect_started"] === true,
    currentRevision: metaString(sc, "current_revision"),
    clientRevision: metaString(sc, "client_revision"),
    changeClass: parseEnum(ENUMS.change_class, metaString(sc, "change_class")),
    missingFields: missing,
    replacement: metaString(sc, "replacement"),
    outcome: OUTCOME_OF_CODE[errorCode],
  };
}

/** What a RepairPolicy decides on. */
export interface RepairRequest {
  /** The rejected call, as it was planned. */
  call: CallToolParams;
  rejection: Rejection;
  /** The tool's definition after the refresh; undefined when it is no longer listed. */
  tool: ToolDefinition | undefined;
}

/** A RepairPolicy's answer. */
export interface Decision {
  /**
   * refresh_retry or model_repair retry automatically with args;
   * human_approval retries with args under approval unless it is denied;
   * abandon gives up.
   */
  action: RepairActionValue;
  arguments?: Record<string, unknown>;
  /** The approval decision the retry runs under, sent in _meta. */
  approval?: ApprovalValue;
}

/** RepairPolicy decides what to do about a rejection. */
export type RepairPolicy = (r: RepairRequest) => Decision | Promise<Decision>;

/**
 * Approver asks a person about a repair no policy may make alone: it
 * returns the retry's arguments and the decision, per_call or session to
 * retry, denied not to.
 */
export type Approver = (r: RepairRequest) =>
  | { arguments: Record<string, unknown>; approval: ApprovalValue }
  | Promise<{ arguments: Record<string, unknown>; approval: ApprovalValue }>;

// The fields a retry never fills in by itself: they can widen or redirect
// the action (the seed's list). Policy, not convention: the same as
// mcpgo's sensitiveFields.
const sensitiveFields = new Set(["environment", "account_id", "account", "repository", "repo", "host", "user", "confirmation", "confirm", "target", "scope"]);

/**
 * safeRetry returns the seed's repair policy. It refreshes and retries
 * automatically only when all of these hold: the server identified a stale
 * schema (STALE_TOOL_SCHEMA); the change is known to be additive or a
 * bounded migration (a semantic, authority or removal change, or one whose
 * class the rejection does not state, is not); the first attempt started
 * no side effect; and every required field the call lacks has a default in
 * the refreshed schema and is not sensitive (environment, account,
 * repository, host, user, confirmation, target, scope). Otherwise it asks
 * ask, or abandons when there is no one to ask or the tool is gone.
 */
export function safeRetry(ask?: Approver): RepairPolicy {
  return async (r) => {
    const args = autoRetryArgs(r);
    if (args) {
      const d: Decision = { action: RepairAction.refresh_retry, arguments: args };
      const approval = parseEnum(ENUMS.approval, metaString(r.call._meta, META.approval));
      if (approval) d.approval = approval;
      return d;
    }
    if (!ask || !r.tool) return { action: RepairAction.abandon };
    let answer;
    try {
      answer = await ask(r);
    } catch (err) {
      throw new Error(`cannot ask for approval: ${(err as Error).message}`, { cause: err });
    }
    return { action: RepairAction.human_approval, arguments: answer.arguments, approval: answer.approval };
  };
}

// autoRetryArgs returns the arguments of an automatic retry, when the seed
// allows one.
function autoRetryArgs(r: RepairRequest): Record<string, unknown> | undefined {
  const rej = r.rejection;
  if (!r.tool || rej.errorCode !== ERROR_CODE.stale_tool_schema || rej.sideEffectStarted) return undefined;
  // Semantic, authority, removal, or a class nobody stated: a change whose
  // class is unknown may widen or redirect the action, so it needs a fresh
  // decision, never an automatic retry.
  if (rej.changeClass !== ChangeClass.additive && rej.changeClass !== ChangeClass.bounded_migration) return undefined;
  const raw = r.call.arguments;
  if (raw !== undefined && (typeof raw !== "object" || raw === null || Array.isArray(raw))) return undefined;
  const args: Record<string, unknown> = structuredClone(raw ?? {});
  const schema = r.tool.inputSchema as { properties?: Record<string, Record<string, unknown>>; required?: unknown; additionalProperties?: unknown };
  const props = schema.properties ?? {};
  if (schema.additionalProperties === false) {
    for (const k of Object.keys(args)) if (!Object.hasOwn(props, k)) return undefined; // a field of the old shape the new one refuses
  }
  const required = Array.isArray(schema.required) ? schema.required.filter((x): x is string => typeof x === "string") : [];
  for (const f of required) {
    if (Object.hasOwn(args, f)) continue;
    const p = props[f];
    if (!p || !Object.hasOwn(p, "default") || sensitiveFields.has(f)) return undefined;
    args[f] = structuredClone(p["default"]);
  }
  return args;
}

/**
 * StalePlanError is thrown by callTool for a call planned with a revision
 * that a refresh has since replaced, when the current definition refuses
 * the call's arguments, or no longer lists the tool. No request was sent,
 * so no side effect started. The snapshot is already refreshed: give the
 * model the current definition and this error (result() renders it as the
 * repairable tool error the seed describes) and plan the call again, or
 * hand result() to DriftClient.repair.
 */
export class StalePlanError extends Error {
  override name = "StalePlanError";
  /** What the caller must do: refresh_tools (the refresh is done; what remains is planning again). */
  readonly requiredAction: string;
  constructor(
    readonly tool: string,
    readonly requestId: string,
    /** The revision the call was planned with. */
    readonly plannedRevision: string,
    /** The revision the snapshot holds now, "" when the tool is no longer listed. */
    readonly currentRevision: string,
    readonly removed: boolean,
    /** The required fields the arguments lack, as property paths ("region"). */
    readonly missing: string[],
    /** The fields whose values the current schema refuses. */
    readonly invalid: string[],
    /** One line per violation other than a missing field. */
    readonly reasons: string[],
    /** The definition the call was planned with, when still remembered. */
    readonly planned: ToolDefinition | undefined,
    /** The definition listed now, undefined when removed. */
    readonly current: ToolDefinition | undefined,
    requiredAction: string,
  ) {
    let m: string;
    if (removed) {
      m = `${tool} was not called: it was planned with revision ${short(plannedRevision)} and is no longer listed`;
    } else {
      m = `${tool} was not called: it was planned with revision ${short(plannedRevision)}, and revision ${short(currentRevision)}, listed since, refuses its arguments`;
      const why: string[] = [];
      if (missing.length > 0) why.push("missing " + joinAnd(missing));
      if (invalid.length > 0) why.push("invalid " + joinAnd(invalid));
      if (why.length > 0) m += ` (${why.join("; ")})`;
    }
    m += `; no request was sent (request ${requestId}); plan the call again with the current tools`;
    super(m);
    this.requiredAction = requiredAction;
  }

  /**
   * result renders the error as the repairable tool error the seed asks
   * for, in the shape of a server's rejection (parseRejection reads it):
   * STALE_TOOL_SCHEMA (TOOL_REMOVED when the tool is gone), the tool, the
   * required action, side_effect_started false, the revisions and the
   * missing fields, with a text for the model.
   */
  result(): CallToolResult {
    const sc: Record<string, unknown> = {
      error_code: ERROR_CODE.stale_tool_schema,
      tool: this.tool,
      required_action: this.requiredAction,
      side_effect_started: false,
      client_revision: this.plannedRevision,
    };
    let text: string;
    if (this.removed) {
      sc["error_code"] = ERROR_CODE.tool_removed;
      text = `${this.tool} is no longer listed by the server; the call planned with revision ${short(this.plannedRevision)} was not sent.`;
    } else {
      sc["current_revision"] = this.currentRevision;
      text = `${this.tool} changed since this call was planned (revision ${short(this.plannedRevision)}, now ${short(this.currentRevision)}); the call was not sent. Refresh tools before retrying.`;
      const req = (this.current?.inputSchema as { required?: unknown } | undefined)?.required;
      if (Array.isArray(req) && req.length > 0) text += ` The current schema requires ${joinAnd(req.map(String))}.`;
      if (this.missing.length > 0) text += ` Missing: ${joinAnd(this.missing)}.`;
      for (const r of this.reasons) text += ` At ${r}.`;
    }
    text += " No side effect was started.";
    if (this.missing.length > 0) sc["missing_fields"] = [...this.missing];
    if (this.invalid.length > 0) sc["invalid_fields"] = [...this.invalid];
    return { isError: true, content: [{ type: "text", text }], structuredContent: sc };
  }
}

/**
 * NoRetryError is thrown by DriftClient.repair when its policy did not
 * retry the call (abandon, or a denied approval). result is the rejection
 * it was given.
 */
export class NoRetryError extends Error {
  override name = "NoRetryError";
  constructor(
    message: string,
    readonly result: CallToolResult,
    readonly action: RepairActionValue | undefined,
  ) {
    super(message);
  }
}

/**
 * RepairError is thrown by DriftClient.repair when it could not repair:
 * the refresh failed, the policy threw, or the retry could not be sent.
 * result is the rejection it was given.
 */
export class RepairError extends Error {
  override name = "RepairError";
  constructor(
    message: string,
    readonly result: CallToolResult,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
