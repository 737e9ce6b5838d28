/**
 * @mcpdrift/mcpts: mcpdrift's schema-drift events for MCP servers and
 * clients on the official TypeScript SDK (@modelcontextprotocol/sdk),
 * emitted through the OpenTelemetry Logs API.
 *
 * Server: DriftServer, with contracts (revisions), earlier revisions and
 * adapters. Client: DriftClient, with plan, refresh and repair; safeRetry.
 * The names of the conventions (EVENT, ATTR, ENUMS, META, ERROR_CODE,
 * REQUIRED_ACTION, DIGEST) are generated from otelschema/conventions.json.
 */
export { DEFAULT_ADVERTISE_EVERY_MS, DriftServer, InvalidToolError } from "./server.js";
export type { Adapter, AttachTarget, Contract, DriftServerOptions, ToolCall, ToolHandler } from "./server.js";
export { DriftClient } from "./client.js";
export type { DriftClientOptions, PlanOptions } from "./client.js";
export { NoRetryError, parseRejection, RepairError, safeRetry, StalePlanError } from "./repair.js";
export type { Approver, CallToolParams, Decision, Rejection, RepairPolicy, RepairRequest } from "./repair.js";
export { ContractError, lookupPath } from "./contract.js";
export { advertised, definition, digest, DIGEST_PREFIX, revisionAlgorithm, short, TOOL_DIGEST_PREFIX, toolDigest, toolRevision } from "./revision.js";
export type { ToolDefinition } from "./revision.js";
export { canonicalize, CanonicalizationError } from "./jcs.js";
export { compileSchema, SchemaError } from "./validate.js";
export type { ArgsValidator, Violation } from "./validate.js";
export { attributes, SCOPE_NAME } from "./emit.js";
export type { DriftEvent, TelemetryOptions, TelemetryStats } from "./emit.js";
export {
  Approval,
  ATTR,
  ChangeClass,
  CONVENTIONS_SHA256,
  DIGEST,
  ENUMS,
  ERROR_CODE,
  EVENT,
  META,
  Outcome,
  OUTCOME_OF_CODE,
  Privilege,
  RefreshResult,
  RepairAction,
  RepairResult,
  REQUIRED_ACTION,
  RevisionSource,
} from "./names.js";
export type {
  ApprovalValue,
  ChangeClassValue,
  ErrorCode,
  EventName,
  MetaKey,
  OutcomeValue,
  PrivilegeValue,
  RefreshResultValue,
  RepairActionValue,
  RepairResultValue,
  RequiredAction,
  RevisionSourceValue,
} from "./names.js";
