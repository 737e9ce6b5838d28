// The client side: the seed's duties of a client, as otelschema/mcpgo's
// Client (client.go, refresh.go, plan.go, contract.go) does them for the Go
// SDK. DriftClient instruments one SDK Client: it keeps the session's
// snapshot of tool definitions and, after notifications/tools/list_changed,
// lists every page again by itself and swaps the snapshot at once; it keeps
// the definitions a refresh retired; it stamps every tools/call with the
// revision it was planned with and validates a call planned before a swap
// again before sending it; it checks results against the fields a plan
// needs; it records refreshes, received notifications, held-back calls,
// repairs and contract errors. The server is authoritative for the calls it
// receives: the client emits a call event only for a call it held back.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode as RpcErrorCode, McpError, type CallToolResult, type ListToolsResult } from "@modelcontextprotocol/sdk/types.js";

import { ContractError, lookupPath } from "./contract.js";
import { Emitter, type DriftEvent, type TelemetryOptions, type TelemetryStats } from "./emit.js";
import { META } from "./gen/conventions.js";
import {
  ChangeClass,
  ENUMS,
  ERROR_CODE,
  EVENT,
  Outcome,
  parseEnum,
  RefreshResult,
  RepairAction,
  RepairResult,
  REQUIRED_ACTION,
  RevisionSource,
  type EventName,
} from "./names.js";
import { NoRetryError, parseRejection, RepairError, StalePlanError, type CallToolParams, type RepairPolicy } from "./repair.js";
import { advertised, metaBool, metaInt, metaString, type ToolDefinition } from "./revision.js";
import { newId } from "./util.js";
import { compileSchema, violationText, type ArgsValidator } from "./validate.js";

const methodCallTool = "tools/call";
const methodListTools = "tools/list";
const methodToolListChanged = "notifications/tools/list_changed";
// Bounds of the per-session bookkeeping.
const maxListChains = 8;
const maxListPages = 10000;
const maxPlans = 1024;

/** Options of DriftClient. Every field is optional. */
export interface DriftClientOptions extends TelemetryOptions {
  /**
   * runId identifies the agent run (the seed's Activity). It is sent in
   * _meta with every tools/list and tools/call and set on every event; a
   * random id by default.
   */
  runId?: string;
  /**
   * manualRefresh turns the automatic refresh off. By default, on
   * notifications/tools/list_changed the client lists every page of
   * tools/list by itself, and a planned call sent meanwhile waits for that
   * list before it is checked. With manualRefresh the snapshot changes
   * only when the caller lists (client.listTools, every page, or
   * refresh()); planned calls are still checked against it when sent.
   */
  manualRefresh?: boolean;
  /** refreshTimeoutMs bounds each page of an automatic refresh; 30 s by default. */
  refreshTimeoutMs?: number;
  /**
   * keepDefinitions is how many definitions that refreshes replaced or
   * removed the session keeps, so that a call planned with one is still
   * associated with it; 64 by default.
   */
  keepDefinitions?: number;
}

/** Options of DriftClient.plan. */
export interface PlanOptions {
  /**
   * needs declares the fields of the call's result that the plan depends
   * on — what a later step will read, such as "issue.id" (paths as
   * lookupPath reads them). The declaration stays in the client. A result
   * that is not an error and lacks one of them makes callTool throw a
   * ContractError carrying the result, with a contract_error event per
   * missing field.
   */
  needs?: string[];
}

/** One tool definition a session listed, at one revision. */
interface Definition {
  tool: ToolDefinition;
  revision: string;
  /** The compiled input schema, when a planned call first needed it. */
  validator?: ArgsValidator | null;
}

interface Listing {
  /** The notifications the session had received when the list started: a swap answers those. */
  gen: number;
  /** The cursor of the page expected next. */
  next: string;
  tools: ToolDefinition[];
}

interface Plan {
  def: Definition | undefined;
  needs: string[];
}

/** One session's snapshot and bookkeeping. */
interface Session {
  started: number;
  /** The client snapshot, tool → definition, replaced as a whole by a complete list. */
  current: Map<string, Definition>;
  listed: boolean;
  /** The definitions refreshes replaced or removed, newest last. */
  retired: Definition[];
  /** The caller's own multi-page lists under way. */
  chains: Listing[];
  /** Planned calls by request id, oldest first. */
  plans: Map<string, Plan>;
  /** list_changed notifications received, and those a complete list has answered. */
  notified: number;
  synced: number;
  /** When the first unanswered notification arrived. */
  notifiedAt: number | undefined;
  /** The automatic refresh under way. */
  refreshing: Promise<void> | undefined;
  name: string;
  version: string;
  protocol: string;
}

interface Stamp {
  id: string;
  revision: string;
}

type RequestFn = (request: { method: string; params?: Record<string, unknown> }, schema: unknown, options?: RequestOptions) => Promise<unknown>;

/**
 * DriftClient instruments an SDK Client with the seed's client duties.
 * Create it before client.connect, so that it sees the initialize
 * exchange (the client's name and protocol).
 *
 *   const agent = new DriftClient(client, { runId });
 *   const planned = agent.plan({ name: "create_issue", arguments: args }, { needs: ["issue.id"] });
 *   try { res = await client.callTool(planned) } catch (e) { if (e instanceof StalePlanError) res = e.result() }
 *   res = await agent.repair(planned, res, safeRetry(askHuman));
 *
 * It works by wrapping the client's request method (the SDK's public
 * request path) and its notification dispatch, so every tools/list and
 * tools/call the application sends, through callTool, listTools or
 * request, goes through it.
 */
export class DriftClient {
  readonly runId: string;
  private readonly em: Emitter;
  private readonly manual: boolean;
  private readonly refreshTimeout: number;
  private readonly keep: number;
  private readonly send: RequestFn;
  private readonly sessions = new WeakMap<object, Session>();
  // The params of the tools/list requests refresh sends: the request
  // wrapper leaves their pages to refresh.
  private readonly ownLists = new WeakSet<object>();
  // The identity given to each params a caller sent without one, so that
  // repair can name the call it retries.
  private readonly stamps = new WeakMap<object, Stamp>();

  constructor(
    readonly client: Client,
    opts: DriftClientOptions = {},
  ) {
    this.em = new Emitter(opts);
    this.runId = opts.runId || newId();
    this.manual = opts.manualRefresh ?? false;
    this.refreshTimeout = opts.refreshTimeoutMs && opts.refreshTimeoutMs > 0 ? opts.refreshTimeoutMs : 30_000;
    this.keep = opts.keepDefinitions && opts.keepDefinitions > 0 ? opts.keepDefinitions : 64;

    const c = client as unknown as { request: RequestFn; _onnotification?: (n: { method: string }) => void };
    const request = c.request;
    const onnotification = c._onnotification;
    if (typeof request !== "function" || typeof onnotification !== "function") {
      throw new TypeError("DriftClient needs a Client of @modelcontextprotocol/sdk 1.x (request and its notification dispatch)");
    }
    this.send = request.bind(client);
    c.request = (req, schema, options) => this.request(req, schema, options);
    c._onnotification = (n) => {
      if (n?.method === methodToolListChanged) this.received();
      onnotification.call(client, n);
    };
  }

  /** revision returns the revision of tool in the session's snapshot. */
  revision(tool: string): string | undefined {
    return this.session().current.get(tool)?.revision;
  }

  /** tool returns the definition of tool in the session's snapshot. */
  tool(tool: string): ToolDefinition | undefined {
    return this.session().current.get(tool)?.tool;
  }

  /** flush hands every queued event to the logger now (before the provider's forceFlush). */
  flush(): void {
    this.em.flush();
  }

  /** telemetry returns the counts of events emitted, dropped and failed. */
  telemetry(): TelemetryStats {
    return this.em.telemetry();
  }

  /**
   * plan returns a copy of params stamped at planning time: the revision of
   * the tool in the session's snapshot and a new request id, in _meta
   * (values already there are kept). Send the copy with client.callTool,
   * even after a refresh: the server then knows which revision the call was
   * planned with, and the client checks it again if the snapshot changed in
   * between (StalePlanError). Calls sent without plan are stamped when
   * sent, and not checked. The session remembers the plan (the definition
   * it was planned with, what opts declare) until its result arrives.
   */
  plan<P extends CallToolParams>(params: P, opts: PlanOptions = {}): P & { _meta: Record<string, unknown> } {
    const s = this.session();
    const meta: Record<string, unknown> = { ...(params._meta ?? {}) };
    if (!Object.hasOwn(meta, META.revision)) {
      const def = s.current.get(params.name);
      if (def) meta[META.revision] = def.revision;
    }
    if (!Object.hasOwn(meta, META.request_id)) meta[META.request_id] = newId();
    meta[META.run_id] = this.runId;
    const id = metaString(meta, META.request_id);
    putPlan(s.plans, id, { def: definition(s, params.name, metaString(meta, META.revision)), needs: [...(opts.needs ?? [])] });
    return { ...params, _meta: meta };
  }

  /**
   * refresh lists the session's tools, every page, and swaps the snapshot
   * once the last page is in: a planned call never sees half of a
   * multi-page list. It emits the refresh events (one per tool whose
   * revision changed, or one without a tool when none did; one with result
   * failed when a page cannot be listed, the snapshot then unchanged).
   */
  refresh(): Promise<void> {
    return this.list(false);
  }

  // session returns the state of the client's current session: the SDK
  // serves one session per transport.
  private session(): Session {
    const key: object = this.client.transport ?? this.client;
    let s = this.sessions.get(key);
    if (!s) {
      s = {
        started: this.em.now(),
        current: new Map(),
        listed: false,
        retired: [],
        chains: [],
        plans: new Map(),
        notified: 0,
        synced: 0,
        notifiedAt: undefined,
        refreshing: undefined,
        name: "",
        version: "",
        protocol: "",
      };
      // An instrumented client connected already: its identity is the
      // SDK's.
      const info = (this.client as unknown as { _clientInfo?: { name?: string; version?: string } })._clientInfo;
      if (info?.name) s.name = info.name;
      if (info?.version) s.version = info.version;
      this.sessions.set(key, s);
    }
    return s;
  }

  private base(name: EventName, now: number): { e: DriftEvent; s: Session } {
    const s = this.session();
    const e: DriftEvent = { name, time: now, runId: this.runId, sessionAgeMs: now - s.started };
    const sid = this.client.transport?.sessionId;
    if (sid) e.sessionId = sid;
    if (s.name) e.clientName = s.name;
    if (s.version) e.clientVersion = s.version;
    if (s.protocol) e.protocol = s.protocol;
    return { e, s };
  }

  private async request(req: { method: string; params?: Record<string, unknown> }, schema: unknown, options?: RequestOptions): Promise<unknown> {
    switch (req.method) {
      case methodCallTool:
        if (req.params && typeof req.params["name"] === "string") return this.call(req.params as CallToolParams, schema, options);
        break;
      case methodListTools: {
        const own = req.params !== undefined && this.ownLists.has(req.params);
        const q = { ...(req.params ?? {}), _meta: { ...((req.params?.["_meta"] as object) ?? {}), [META.run_id]: this.runId } };
        if (own) return this.send({ method: methodListTools, params: q }, schema, options);
        return this.listPage(q, schema, options);
      }
      case "initialize": {
        const p = req.params as { clientInfo?: { name?: string; version?: string }; protocolVersion?: string } | undefined;
        const s = this.session();
        if (p?.clientInfo?.name) s.name = p.clientInfo.name;
        if (p?.clientInfo?.version) s.version = p.clientInfo.version;
        if (p?.protocolVersion) s.protocol = p.protocolVersion;
        const res = (await this.send(req, schema, options)) as { protocolVersion?: string } | undefined;
        if (typeof res?.protocolVersion === "string") s.protocol = res.protocolVersion;
        return res;
      }
    }
    return this.send(req, schema, options);
  }

  // stamp returns a copy of p carrying the run id, and the revision and
  // request id when p has none.
  private stamp(p: CallToolParams): CallToolParams {
    const meta: Record<string, unknown> = { ...(p._meta ?? {}) };
    meta[META.run_id] = this.runId;
    const hasRev = Object.hasOwn(meta, META.revision);
    const hasId = Object.hasOwn(meta, META.request_id);
    if (!hasRev || !hasId) {
      if (!hasRev) {
        const rev = this.revision(p.name);
        if (rev !== undefined) meta[META.revision] = rev;
      }
      if (!hasId) meta[META.request_id] = newId();
      this.stamps.set(p, { id: metaString(meta, META.request_id), revision: metaString(meta, META.revision) });
    }
    return { ...p, _meta: meta };
  }

  // call sends one tools/call: a planned call is checked against the
  // snapshot first (checkPlan), and its result against the fields its plan
  // needs (checkContract).
  private async call(p: CallToolParams, schema: unknown, options?: RequestOptions): Promise<unknown> {
    const pl = await this.checkPlan(p);
    const q = this.stamp(p);
    const res = (await this.send({ method: methodCallTool, params: q }, schema, options)) as CallToolResult;
    if (!pl || !res || typeof res !== "object" || res.isError) return res; // kept: a retry needs what the call needed
    const s = this.session();
    s.plans.delete(metaString(q._meta, META.request_id));
    s.plans.delete(metaString(q._meta, META.retry_of));
    this.checkContract(q, pl, res);
    return res;
  }

  // checkPlan runs before a call is sent. A call planned with a revision
  // the snapshot has since replaced is validated again against the current
  // definition, after waiting for an automatic refresh under way. Still
  // valid, it goes as planned: the server, which knows the change's class
  // and its adapters, decides. Refused, or its tool no longer listed, it is
  // held back: a client call event, and a StalePlanError. A definition that
  // cannot be compiled is left to the server: the client cannot say more.
  private async checkPlan(p: CallToolParams): Promise<Plan | undefined> {
    const id = metaString(p._meta, META.request_id);
    const planned = metaString(p._meta, META.revision);
    const s = this.session();
    // Only a stale session has a refresh to wait for: the common call does
    // not yield to the event loop here.
    if (planned && !this.manual && s.synced < s.notified) await this.awaitRefresh();
    let pl = id ? s.plans.get(id) : undefined;
    const retryOf = metaString(p._meta, META.retry_of);
    if (!pl && retryOf) pl = s.plans.get(retryOf); // a retry needs what the call it retries needed
    const cur = s.current.get(p.name);
    let was: Definition | undefined;
    if (pl?.def && pl.def.revision === planned) was = pl.def;
    else if (planned) was = definition(s, p.name, planned);

    if (!planned || (cur && cur.revision === planned)) return pl;
    let se: StalePlanError;
    if (!cur) {
      if (!s.listed || !was) return pl; // a tool the client never listed: the server answers
      se = new StalePlanError(p.name, id, planned, "", true, [], [], [], was.tool, undefined, REQUIRED_ACTION.refresh_tools);
    } else {
      const v = compiled(cur);
      if (!v) return pl;
      const violations = v.validate(p.arguments);
      if (violations === null) return pl; // valid: sent as planned
      const missing: string[] = [];
      const invalid: string[] = [];
      const reasons: string[] = [];
      for (const x of violations) {
        const f = x.field.replace(/^\//, "");
        if (x.kind === "required") {
          if (f && !missing.includes(f)) missing.push(f);
          continue;
        }
        reasons.push(violationText(x));
        if (f && !invalid.includes(f)) invalid.push(f);
      }
      se = new StalePlanError(p.name, id, planned, cur.revision, false, missing, invalid, reasons, was?.tool, cur.tool, REQUIRED_ACTION.refresh_tools);
    }
    this.heldBack(p, se);
    throw se;
  }

  // heldBack emits the client's call event of a call it did not send: the
  // server never sees the call, so this is its only call event.
  private heldBack(p: CallToolParams, se: StalePlanError): void {
    const { e } = this.base(EVENT.call, this.em.now());
    e.method = methodCallTool;
    e.tool = se.tool;
    if (se.requestId) e.requestId = se.requestId;
    e.revClient = se.plannedRevision;
    e.revSource = RevisionSource.declared;
    if (se.currentRevision) e.revServer = se.currentRevision;
    e.outcome = Outcome.rejected_stale;
    e.errorCode = ERROR_CODE.stale_tool_schema;
    e.requiredAction = se.requiredAction;
    if (se.removed) {
      e.outcome = Outcome.removed;
      e.errorCode = ERROR_CODE.tool_removed;
      e.change = ChangeClass.removal;
    }
    const retryOf = metaString(p._meta, META.retry_of);
    if (retryOf) {
      e.retryOf = retryOf;
      const auto = metaBool(p._meta, META.retry_automatic);
      if (auto !== undefined) e.repairAutomatic = auto;
      const after = parseEnum(Outcome, metaString(p._meta, META.retry_after));
      if (after) e.retryAfter = after;
    }
    const attempt = metaInt(p._meta, META.retry_attempt);
    if (attempt) e.retryAttempt = attempt;
    const idem = metaString(p._meta, META.idempotency_key);
    if (idem) e.idempotencyKey = idem;
    const approval = parseEnum(ENUMS.approval, metaString(p._meta, META.approval));
    if (approval) e.approval = approval;
    this.em.emit(e);
  }

  // checkContract checks a call's result against the fields its plan
  // needs: one contract_error event per missing field, and a ContractError.
  private checkContract(p: CallToolParams, pl: Plan, res: CallToolResult): void {
    if (pl.needs.length === 0 || res.isError) return;
    const missing = pl.needs.filter((path) => lookupPath(res.structuredContent, path) === undefined);
    if (missing.length === 0) return;
    const ce = new ContractError(
      p.name,
      metaString(p._meta, META.request_id),
      missing,
      metaString(p._meta, META.revision),
      metaString(res._meta as Record<string, unknown> | undefined, META.revision),
      res,
    );
    const { e } = this.base(EVENT.contract_error, this.em.now());
    delete e.sessionAgeMs; // not attributes of contract errors
    delete e.protocol;
    e.tool = ce.tool;
    if (ce.requestId) e.requestId = ce.requestId;
    if (ce.plannedRevision) {
      e.revClient = ce.plannedRevision;
      e.revSource = RevisionSource.declared;
    }
    if (ce.serverRevision) e.revServer = ce.serverRevision;
    for (const f of missing) this.em.emit({ ...e, contractField: f });
    throw ce;
  }

  // list lists every page and swaps the snapshot at the end. auto marks the
  // automatic refresh, whose failure on a closed session is no failed
  // refresh: nothing can be planned on it any more.
  private async list(auto: boolean): Promise<void> {
    const s = this.session();
    const l: Listing = { gen: s.notified, next: "", tools: [] };
    const seen = new Set<string>();
    for (let page = 1; ; page++) {
      const params: Record<string, unknown> = l.next ? { cursor: l.next } : {};
      this.ownLists.add(params);
      let res: ListToolsResult;
      try {
        res = await this.client.listTools(params, { timeout: this.refreshTimeout });
        if (page > maxListPages) throw new Error(`the server returned more than ${maxListPages} pages`);
        if (res.nextCursor && seen.has(res.nextCursor)) throw new Error(`the server returned cursor ${JSON.stringify(res.nextCursor)} twice`);
      } catch (err) {
        if (!auto || !closed(err)) this.refreshFailed();
        const sid = this.client.transport?.sessionId ?? "";
        throw new Error(`cannot list the tools of session ${JSON.stringify(sid)} (page ${page}, ${l.tools.length} tools so far): ${(err as Error).message}`, { cause: err });
      }
      l.tools.push(...(res.tools as ToolDefinition[]));
      if (!res.nextCursor) break;
      seen.add(res.nextCursor);
      l.next = res.nextCursor;
    }
    this.swap(l);
  }

  // listPage follows the caller's own tools/list pages: a list is swapped in
  // when its last page arrives, provided every page since its first was
  // seen; a failed page is a failed refresh.
  private async listPage(q: Record<string, unknown>, schema: unknown, options?: RequestOptions): Promise<unknown> {
    const s = this.session();
    // The notifications a list answers are those received before its first
    // page was asked for.
    const gen = s.notified;
    let res: ListToolsResult;
    try {
      res = (await this.send({ method: methodListTools, params: q }, schema, options)) as ListToolsResult;
    } catch (err) {
      this.refreshFailed();
      throw err;
    }
    const cursor = typeof q["cursor"] === "string" ? q["cursor"] : "";
    let l: Listing | undefined;
    if (!cursor) {
      l = { gen, next: "", tools: [] };
    } else {
      const i = s.chains.findIndex((c) => c.next === cursor);
      if (i >= 0) l = s.chains.splice(i, 1)[0];
    }
    if (!l) return res; // a page of a list not followed from its first page: the snapshot waits for a whole list
    l.tools.push(...(res.tools as ToolDefinition[]));
    if (res.nextCursor) {
      l.next = res.nextCursor;
      if (s.chains.length >= maxListChains) s.chains.shift();
      s.chains.push(l);
      return res;
    }
    this.swap(l);
    return res;
  }

  // refreshFailed emits the event of a tools/list that failed. The snapshot
  // is unchanged, and a stale session stays stale, so that the next refresh
  // (the next planned call or notification) tries again.
  private refreshFailed(): void {
    const now = this.em.now();
    const { e, s } = this.base(EVENT.refresh, now);
    e.method = methodListTools;
    e.refreshResult = RefreshResult.failed;
    if (s.notifiedAt !== undefined) e.lagMs = now - s.notifiedAt;
    this.em.emit(e);
  }

  // swap replaces the snapshot with a complete list, in one step, and emits
  // the refresh events: one per tool whose revision changed (before empty
  // for a new tool, after empty for a removed one), or one without a tool
  // when none did. Definitions that leave the snapshot are retired.
  private swap(l: Listing): void {
    const now = this.em.now();
    const { e, s } = this.base(EVENT.refresh, now);
    e.method = methodListTools;
    e.refreshResult = RefreshResult.ok;
    if (s.notifiedAt !== undefined) e.lagMs = now - s.notifiedAt;
    const next = new Map<string, Definition>();
    for (const t of l.tools) {
      if (!t || typeof t.name !== "string") continue;
      let rev = "";
      try {
        rev = advertised(t);
      } catch {
        // A definition that is not I-JSON has no digest: "" as mcpgo.
      }
      next.set(t.name, definition(s, t.name, rev) ?? { tool: t, revision: rev });
    }
    for (const [name, old] of s.current) {
      if (next.get(name) !== old) retire(s, old, this.keep);
    }
    const diffs: { tool: string; before: string; after: string }[] = [];
    for (const [name, def] of next) {
      const before = s.current.get(name)?.revision ?? "";
      if (before !== def.revision) diffs.push({ tool: name, before, after: def.revision });
    }
    for (const [name, old] of s.current) {
      if (!next.has(name)) diffs.push({ tool: name, before: old.revision, after: "" });
    }
    s.current = next;
    s.listed = true;
    s.synced = Math.max(s.synced, l.gen);
    if (s.synced >= s.notified) s.notifiedAt = undefined;
    if (diffs.length === 0) {
      this.em.emit(e);
      return;
    }
    diffs.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
    for (const d of diffs) this.em.emit({ ...e, tool: d.tool, revBefore: d.before, revAfter: d.after });
  }

  // received records a list_changed, before the SDK dispatches it, so that
  // a planned call sent from then on waits for the refresh that answers it,
  // and starts the automatic refresh unless one is under way (that one
  // lists again when it ends, as the session is still stale).
  private received(): void {
    try {
      const now = this.em.now();
      const { e, s } = this.base(EVENT.list_changed, now);
      e.method = methodToolListChanged;
      this.em.emit(e);
      s.notified++;
      s.notifiedAt ??= now;
      if (!this.manual && !s.refreshing) void this.startRefresh(s);
    } catch {
      // Never into the SDK's dispatch.
    }
  }

  // startRefresh starts the automatic refresh of a stale session unless one
  // is under way, and returns its end. It lists until the session is no
  // longer stale or a list fails; a failed refresh is retried by the next
  // trigger (a planned call, a notification), not in a loop.
  private startRefresh(s: Session): Promise<void> {
    if (s.refreshing) return s.refreshing;
    if (s.synced >= s.notified) return Promise.resolve();
    s.refreshing = (async () => {
      try {
        for (;;) {
          try {
            await this.list(true);
          } catch {
            return;
          }
          if (s.synced >= s.notified) return;
        }
      } finally {
        s.refreshing = undefined;
      }
    })();
    return s.refreshing;
  }

  // awaitRefresh waits, before a planned call is checked, for the automatic
  // refresh of a stale session (starting one when the last one failed), so
  // that the call is validated against the list the notification
  // announced. When the refresh fails, the call is checked against the
  // snapshot held.
  private async awaitRefresh(): Promise<void> {
    if (this.manual) return;
    const s = this.session();
    if (s.synced >= s.notified) return;
    await this.startRefresh(s);
  }

  /**
   * repair handles a rejected call: when res is a repairable rejection — a
   * server's, or a StalePlanError's result() — it refreshes the tool list,
   * asks policy what to do, retries if the decision allows it — a new
   * request whose _meta names the rejected one (retry_of), with its
   * attempt, whether it is automatic, the rejected call's revision and
   * outcome, so that the server's call event carries the retry's identity
   * — and emits a repair event, whose request id is the retry's. It
   * returns the retry's result. It throws NoRetryError when the policy did
   * not retry, RepairError when it could not repair. A result that is not a
   * rejection is returned as is.
   */
  async repair(call: CallToolParams, res: CallToolResult, policy: RepairPolicy): Promise<CallToolResult> {
    const rej = parseRejection(res);
    if (!rej) return res;
    const start = this.em.now();
    let origId = metaString(call._meta, META.request_id);
    let origRev = metaString(call._meta, META.revision);
    if (!origId) {
      const st = this.stamps.get(call);
      if (st) {
        origId = st.id;
        origRev = st.revision;
      }
    }
    const { e } = this.base(EVENT.repair, start);
    e.tool = call.name;
    if (origId) e.retryOf = origId;
    if (origRev) e.revClient = origRev;
    if (rej.changeClass) e.change = rej.changeClass;
    e.errorCode = rej.errorCode;
    if (rej.requiredAction) e.requiredAction = rej.requiredAction;
    const finish = () => {
      e.repairDurationMs = this.em.now() - start;
      this.em.emit(e);
    };

    try {
      await this.list(false);
    } catch (err) {
      e.repairAction = RepairAction.refresh_retry;
      e.repairAutomatic = true;
      e.repairResult = RepairResult.failure;
      finish();
      throw new RepairError(`cannot refresh tools to repair ${call.name}: ${(err as Error).message}`, res, { cause: err });
    }
    const tool = this.session().current.get(call.name)?.tool;
    let dec;
    try {
      dec = await policy({ call, rejection: rej, tool });
    } catch (err) {
      throw new RepairError(`cannot decide how to repair ${call.name}: ${(err as Error).message}`, res, { cause: err });
    }
    e.repairAction = dec.action;
    if (dec.approval) e.approval = dec.approval;
    e.repairAutomatic = dec.action === RepairAction.refresh_retry || dec.action === RepairAction.model_repair;
    if (dec.action === RepairAction.abandon || !dec.action || dec.approval === ENUMS.approval.denied) {
      e.repairResult = RepairResult.failure;
      finish();
      throw new NoRetryError(`${call.name} rejected with ${rej.errorCode}, repair ${dec.action}: call not retried`, res, dec.action);
    }

    const attempt = metaInt(call._meta, META.retry_attempt) + 1;
    const drop = new Set<string>([META.revision, META.request_id, META.retry_of, META.retry_attempt, META.retry_automatic, META.retry_revision, META.retry_after, META.approval]);
    const meta: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(call._meta ?? {})) if (!drop.has(k)) meta[k] = v;
    meta[META.request_id] = newId();
    if (origId) meta[META.retry_of] = origId;
    meta[META.retry_attempt] = attempt;
    meta[META.retry_automatic] = e.repairAutomatic;
    if (origRev) meta[META.retry_revision] = origRev;
    if (rej.outcome) meta[META.retry_after] = rej.outcome;
    const rev = this.revision(call.name);
    if (rev !== undefined) meta[META.revision] = rev;
    if (dec.approval) meta[META.approval] = dec.approval;
    const retry: CallToolParams = { name: call.name, arguments: dec.arguments ?? {}, _meta: meta };
    e.requestId = metaString(meta, META.request_id);
    e.retryAttempt = attempt;

    let rres: CallToolResult;
    try {
      rres = (await this.client.callTool(retry)) as CallToolResult;
    } catch (err) {
      e.repairResult = RepairResult.failure;
      finish();
      throw new RepairError(`cannot retry ${call.name}: ${(err as Error).message}`, res, { cause: err });
    }
    e.repairResult = rres.isError ? RepairResult.failure : RepairResult.success;
    finish();
    return rres;
  }
}

// definition returns the session's definition of tool at revision: the
// current one, else a retired one.
function definition(s: Session, tool: string, revision: string): Definition | undefined {
  const d = s.current.get(tool);
  if (d && d.revision === revision) return d;
  for (let i = s.retired.length - 1; i >= 0; i--) {
    const r = s.retired[i]!;
    if (r.tool.name === tool && r.revision === revision) return r;
  }
  return undefined;
}

function retire(s: Session, d: Definition, max: number): void {
  s.retired = s.retired.filter((x) => !(x.tool.name === d.tool.name && x.revision === d.revision));
  if (s.retired.length >= max) s.retired.splice(0, s.retired.length - max + 1);
  s.retired.push(d);
}

function putPlan(plans: Map<string, Plan>, id: string, p: Plan): void {
  plans.delete(id);
  plans.set(id, p);
  while (plans.size > maxPlans) plans.delete(plans.keys().next().value!);
}

// compiled returns a definition's validator, compiled once; null when the
// schema cannot be compiled.
function compiled(d: Definition): ArgsValidator | null {
  if (d.validator === undefined) {
    try {
      d.validator = compileSchema(d.tool.inputSchema);
    } catch {
      d.validator = null;
    }
  }
  return d.validator;
}

// closed reports whether err says the session closed under a request.
function closed(err: unknown): boolean {
  const e = (err as { cause?: unknown })?.cause ?? err;
  return (e instanceof McpError && e.code === RpcErrorCode.ConnectionClosed) || (e instanceof Error && e.message === "Not connected");
}
