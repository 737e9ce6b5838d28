// Drift events, emitted through the OpenTelemetry Logs API: whatever
// LoggerProvider the application configured (the global one by default)
// carries them; this package bundles no SDK.
//
// Telemetry never breaks a call. Events are built on the call's path, then
// handed to the logger off it, from a bounded queue drained on the next
// turn of the event loop with a time budget per turn: a logger or exporter
// that throws, or is slow, costs the calls nothing but the events it
// loses, and those are counted (DriftServer.telemetry, DriftClient.telemetry).
import { logs, SeverityNumber } from "@opentelemetry/api-logs";
import type { LogAttributes, Logger, LoggerProvider, LogRecord } from "@opentelemetry/api-logs";

import { ATTR, EVENT } from "./gen/conventions.js";
import type { ApprovalValue, ChangeClassValue, EventName, OutcomeValue, PrivilegeValue, RefreshResultValue, RepairActionValue, RepairResultValue, RevisionSourceValue } from "./names.js";

/** The instrumentation scope of the emitted events. */
export const SCOPE_NAME = "@mcpdrift/mcpts";

/** The facts of one drift event; absent fields are left out. */
export interface DriftEvent {
  name: EventName;
  /** Milliseconds since the epoch, fractional. */
  time: number;

  tool?: string;
  method?: string;
  requestId?: string;
  sessionId?: string;
  protocol?: string;
  clientName?: string;
  clientVersion?: string;
  runId?: string;
  /** Milliseconds since the session started. */
  sessionAgeMs?: number;

  revClient?: string;
  revSource?: RevisionSourceValue;
  revServer?: string;
  revBefore?: string;
  revAfter?: string;

  outcome?: OutcomeValue;
  adapterId?: string;
  change?: ChangeClassValue;
  sideEffect?: boolean;
  externalRequests?: number;
  externalTarget?: string;
  errorCode?: string;
  requiredAction?: string;

  retryOf?: string;
  retryAttempt?: number;
  /** On a call that retries another: the outcome of the call it retries. */
  retryAfter?: OutcomeValue;
  idempotencyKey?: string;

  repairAction?: RepairActionValue;
  /** On a repair, whether it ran without a person; on a retry call, what the client said. */
  repairAutomatic?: boolean;
  repairResult?: RepairResultValue;
  repairDurationMs?: number;

  approval?: ApprovalValue;
  privilege?: PrivilegeValue;

  refreshResult?: RefreshResultValue;
  lagMs?: number;

  adapterFrom?: string;
  adapterTo?: string;
  windowEnd?: Date;

  argsRaw?: string;
  argsNormalized?: string;

  contractField?: string;

  /** On an advertised event: the tool definition, canonical JSON. */
  definition?: string;
  /** On an advertised event: the list's cache hint (ttlMs, cacheScope). */
  listTtlMs?: number;
  listCacheScope?: string;
}

/**
 * attributes returns the event's attributes, but not its arguments, in
 * the order and under the conditions of mcpgo's, so that a Go and a
 * TypeScript emitter describe the same fact with the same attributes.
 */
export function attributes(e: DriftEvent): LogAttributes {
  const a: LogAttributes = {};
  const str = (k: string, v: string | undefined) => {
    if (v !== undefined && v !== "") a[k] = v;
  };
  str(ATTR.tool_name, e.tool);
  str(ATTR.method_name, e.method);
  str(ATTR.request_id, e.requestId);
  str(ATTR.session_id, e.sessionId);
  str(ATTR.protocol_version, e.protocol);
  str(ATTR.client_name, e.clientName);
  str(ATTR.client_version, e.clientVersion);
  str(ATTR.run_id, e.runId);
  if (e.sessionAgeMs !== undefined && e.sessionAgeMs > 0) a[ATTR.session_age_s] = Math.floor(e.sessionAgeMs / 1000);
  str(ATTR.revision_client, e.revClient);
  str(ATTR.revision_client_source, e.revSource);
  str(ATTR.revision_server, e.revServer);
  str(ATTR.revision_before, e.revBefore);
  str(ATTR.revision_after, e.revAfter);
  str(ATTR.outcome, e.outcome);
  str(ATTR.adapter_id, e.adapterId);
  str(ATTR.change_class, e.change);
  if (e.name === EVENT.call) {
    a[ATTR.side_effect_started] = e.sideEffect ?? false;
    a[ATTR.external_requests] = e.externalRequests ?? 0;
  }
  str(ATTR.external_target, e.externalTarget);
  str(ATTR.error_code, e.errorCode);
  str(ATTR.required_action, e.requiredAction);
  str(ATTR.retry_of, e.retryOf);
  if (e.retryAttempt !== undefined && e.retryAttempt > 0) a[ATTR.retry_attempt] = e.retryAttempt;
  if (e.name === EVENT.call && e.retryOf) str(ATTR.retry_after, e.retryAfter);
  str(ATTR.idempotency_key, e.idempotencyKey);
  if (e.name === EVENT.call && e.repairAutomatic !== undefined) a[ATTR.repair_automatic] = e.repairAutomatic;
  if (e.name === EVENT.repair) {
    a[ATTR.repair_action] = e.repairAction ?? "";
    a[ATTR.repair_automatic] = e.repairAutomatic ?? false;
    a[ATTR.repair_duration_ms] = Math.max(0, Math.floor(e.repairDurationMs ?? 0));
    str(ATTR.repair_result, e.repairResult);
  }
  str(ATTR.approval, e.approval);
  str(ATTR.privilege, e.privilege);
  str(ATTR.refresh_result, e.refreshResult);
  if (e.lagMs !== undefined) a[ATTR.notification_lag_ms] = Math.max(0, Math.floor(e.lagMs));
  str(ATTR.adapter_revision_from, e.adapterFrom);
  str(ATTR.adapter_revision_to, e.adapterTo);
  if (e.windowEnd !== undefined) a[ATTR.adapter_window_end] = e.windowEnd.toISOString().replace(/\.\d{3}Z$/, "Z");
  str(ATTR.contract_field, e.contractField);
  if (e.listTtlMs !== undefined && e.listTtlMs > 0) a[ATTR.list_ttl_ms] = Math.floor(e.listTtlMs);
  str(ATTR.list_cache_scope, e.listCacheScope);
  return a;
}

/** What the emitter did with the events handed to it. */
export interface TelemetryStats {
  /** Events handed to the logger. */
  emitted: number;
  /** Events dropped because the queue was full (the logger fell behind). */
  dropped: number;
  /** Events the logger threw on. */
  failed: number;
  /** Events waiting to be handed to the logger. */
  queued: number;
}

/** Options of the emitter, shared by DriftServer and DriftClient. */
export interface TelemetryOptions {
  /** The provider of the logger; the global one (logs.getLoggerProvider()) by default. */
  loggerProvider?: LoggerProvider;
  /** How many events may wait for the logger; beyond it they are dropped. 4096 by default. */
  maxQueuedEvents?: number;
  /** The clock, milliseconds since the epoch; Date.now by default (with sub-millisecond precision). */
  now?: () => number;
}

// The drain hands at most this many events, or spends at most this long,
// per turn of the event loop, and yields to the I/O of calls after it.
const drainBatch = 512;
const drainBudgetMs = 4;

const origin = performance.timeOrigin;
/** preciseNow is Date.now with the sub-millisecond precision of performance.now. */
export const preciseNow = (): number => origin + performance.now();

/** Emitter writes drift events to a logger, off the calls' path. */
export class Emitter {
  readonly now: () => number;
  private readonly provider: LoggerProvider | undefined;
  private logger: Logger | undefined;
  private readonly max: number;
  private queue: LogRecord[] = [];
  private head = 0;
  private scheduled = false;
  private readonly stats = { emitted: 0, dropped: 0, failed: 0 };

  constructor(opts: TelemetryOptions = {}) {
    this.provider = opts.loggerProvider;
    this.max = opts.maxQueuedEvents && opts.maxQueuedEvents > 0 ? opts.maxQueuedEvents : 4096;
    this.now = opts.now ?? preciseNow;
  }

  private get log(): Logger {
    // The global provider is a proxy that follows a later registration.
    this.logger ??= (this.provider ?? logs.getLoggerProvider()).getLogger(SCOPE_NAME);
    return this.logger;
  }

  /**
   * emit queues the event as a log record; arguments (audit) are added
   * when asked. It never throws.
   */
  emit(e: DriftEvent, audit = false): void {
    try {
      const log = this.log;
      if (typeof log.enabled === "function" && !log.enabled({ eventName: e.name, severityNumber: SeverityNumber.INFO })) {
        return;
      }
      const attrs = attributes(e);
      // On the log record after the others, as mcpgo adds it.
      if (e.definition) attrs[ATTR.tool_definition] = e.definition;
      if (audit) {
        if (e.argsRaw) attrs[ATTR.args_raw] = e.argsRaw;
        if (e.argsNormalized) attrs[ATTR.args_normalized] = e.argsNormalized;
      }
      if (this.queue.length - this.head >= this.max) {
        this.stats.dropped++;
        return;
      }
      this.queue.push({ eventName: e.name, timestamp: e.time, severityNumber: SeverityNumber.INFO, severityText: "INFO", attributes: attrs });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.drain(false));
      }
    } catch {
      this.stats.failed++;
    }
  }

  /**
   * flush hands every queued event to the logger now. Call it before the
   * provider's own forceFlush or shutdown, so that those export them.
   */
  flush(): void {
    this.drain(true);
  }

  /** telemetry returns the counts of events emitted, dropped and failed. */
  telemetry(): TelemetryStats {
    return { ...this.stats, queued: this.queue.length - this.head };
  }

  private drain(all: boolean): void {
    this.scheduled = false;
    const start = performance.now();
    let n = 0;
    const log = this.logger ?? this.log;
    while (this.head < this.queue.length) {
      if (!all && (n >= drainBatch || (n % 32 === 31 && performance.now() - start > drainBudgetMs))) break;
      const r = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as LogRecord;
      n++;
      try {
        log.emit(r);
        this.stats.emitted++;
      } catch {
        this.stats.failed++;
      }
    }
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else {
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.drain(false));
      }
    }
  }
}
