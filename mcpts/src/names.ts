// The names of the conventions, as the generated module gives them, with
// the types the rest of the package and its users write against. Nothing
// here spells a name: renaming one in the Go registry renames it here at
// the next build, and removing one breaks the build where it is used.
import { ENUMS, ERROR_CODE, EVENT, META, REQUIRED_ACTION } from "./gen/conventions.js";

type Values<T> = T[keyof T];

/** Drift event names (LogRecord EventName), by key: EVENT.call, … */
export { ATTR, CONVENTIONS_SHA256, DIGEST, ENUMS, ERROR_CODE, EVENT, META, REQUIRED_ACTION } from "./gen/conventions.js";

export type EventName = Values<typeof EVENT>;
export type MetaKey = Values<typeof META>;
export type ErrorCode = Values<typeof ERROR_CODE>;
export type RequiredAction = Values<typeof REQUIRED_ACTION>;

/** The outcomes of a call: Outcome.current, Outcome.normalized, … */
export const Outcome = ENUMS.outcome;
export type OutcomeValue = Values<typeof ENUMS.outcome>;
/** The classes of a contract change: ChangeClass.additive, … */
export const ChangeClass = ENUMS.change_class;
export type ChangeClassValue = Values<typeof ENUMS.change_class>;
/** The privileges a call may need: Privilege.read, … */
export const Privilege = ENUMS.privilege;
export type PrivilegeValue = Values<typeof ENUMS.privilege>;
/** Approval decisions: Approval.none, Approval.per_call, … */
export const Approval = ENUMS.approval;
export type ApprovalValue = Values<typeof ENUMS.approval>;
/** What a client did after a rejection: RepairAction.refresh_retry, … */
export const RepairAction = ENUMS.repair_action;
export type RepairActionValue = Values<typeof ENUMS.repair_action>;
export const RepairResult = ENUMS.repair_result;
export type RepairResultValue = Values<typeof ENUMS.repair_result>;
export const RefreshResult = ENUMS.refresh_result;
export type RefreshResultValue = Values<typeof ENUMS.refresh_result>;
/** Where a call's client revision came from: declared, listed, inferred. */
export const RevisionSource = ENUMS.revision_client_source;
export type RevisionSourceValue = Values<typeof ENUMS.revision_client_source>;

/**
 * OUTCOME_OF_CODE maps a rejection's error code to the outcome of the call
 * it rejected (mcpgo's codeOutcomes).
 */
export const OUTCOME_OF_CODE: Readonly<Record<string, OutcomeValue>> = {
  [ERROR_CODE.stale_tool_schema]: Outcome.rejected_stale,
  [ERROR_CODE.incompatible_tool_schema]: Outcome.rejected_incompatible,
  [ERROR_CODE.invalid_arguments]: Outcome.rejected_invalid,
  [ERROR_CODE.tool_removed]: Outcome.removed,
};

/** parseEnum returns s when it is one of values' values. */
export function parseEnum<T extends Record<string, string>>(values: T, s: unknown): Values<T> | undefined {
  return typeof s === "string" && Object.hasOwn(values, s) && values[s] === s ? (s as Values<T>) : undefined;
}
