// The server side: a tool registry that owns tools/list and tools/call on
// the SDK servers it is attached to, with each tool's execution contract
// (its revision), the earlier revisions it still recognises and the
// compatibility adapters that serve them. It is otelschema/mcpgo's Server
// (server.go, admit.go) for the TypeScript SDK: the same admission rules,
// the same rejections (structured content and text), the same events.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  ErrorCode as RpcErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ListToolsRequest,
  type ListToolsResult,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

import { Emitter, type DriftEvent, type TelemetryOptions, type TelemetryStats } from "./emit.js";
import {
  ChangeClass,
  ENUMS,
  ERROR_CODE,
  EVENT,
  META,
  Outcome,
  parseEnum,
  REQUIRED_ACTION,
  RevisionSource,
  type ChangeClassValue,
  type PrivilegeValue,
} from "./names.js";
import { advertised, definition, digest, isToolRevision, metaBool, metaInt, metaString, short, toolRevision, type ToolDefinition } from "./revision.js";
import { joinAnd } from "./util.js";
import { compileSchema, SchemaError, violationText, type ArgsValidator, type Violation } from "./validate.js";

const methodCallTool = "tools/call";
// MCP's own _meta keys (SEP-2575, protocol 2026-07-28), which carry on
// every request what the initialize handshake used to: protocol names, not
// mcpdrift's conventions.
const MCP_META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
const MCP_META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const methodToolListChanged = "notifications/tools/list_changed";
// Bounds of what the registry remembers.
const maxEarlier = 16;
const maxRememberedChanges = 256;
const maxViolations = 8;

/** Options of DriftServer. Every field is optional. */
export interface DriftServerOptions extends TelemetryOptions {
  /**
   * omitArguments leaves the call arguments as received and as normalised
   * out of the call events. They are recorded by default, for the audit;
   * the ingester redacts them per its configuration.
   */
  omitArguments?: boolean;
  /** pageSize is how many tools a tools/list page holds; all in one page by default. */
  pageSize?: number;
  /**
   * notificationDelayMs is how long notifications/tools/list_changed waits
   * for more changes, so that changes made together are announced once (as
   * the Go SDK does, 10 ms by default). It is always sent after the new
   * list is served.
   */
  notificationDelayMs?: number;
  /**
   * listTtlMs and listCacheScope are the cache hint of the tool list
   * (ttlMs and cacheScope, MCP 2026-07-28, SEP-2549): when listTtlMs is
   * positive, every tools/list result carries them (listCacheScope when
   * set), and every advertised event too (dev.mcpdrift.list.ttl_ms,
   * dev.mcpdrift.list.cache_scope), from which the release check and the
   * propagation report read how long a client may keep the old list after
   * a change. As mcpgo's ServerOptions.ListTTL and ListCacheScope.
   */
  listTtlMs?: number;
  listCacheScope?: string;
}

/** One revision of a tool's execution contract: what tools/call accepts and does. */
export interface Contract {
  /**
   * revision names the revision, such as "2"; by default the tool
   * definition's digest. It is advertised in the definition's _meta.
   */
  revision?: string;
  /**
   * toolDigest is a SEP-2636 tool digest the server declares for the tool
   * ("sha256:" and the hex, as its tools/manifest serves it, or
   * toolDigest(tool)); without a revision, the revision is its
   * toolRevision, whose form says the algorithm. A digest of another form
   * is an InvalidToolError.
   */
  toolDigest?: string;
  /**
   * change classifies the change from earlier revisions. Calls planned
   * with an earlier revision that no adapter serves are rejected:
   * rejected_incompatible for a semantic change, rejected_stale
   * (STALE_TOOL_SCHEMA) otherwise.
   */
  change?: ChangeClassValue;
  /** privilege is the highest privilege a call needs. */
  privilege?: PrivilegeValue;
  /**
   * earlier are definitions of the tool's earlier revisions that clients
   * may still plan with, oldest first (each one's revision is its _meta
   * revision, else its digest). A server knows the revisions it replaced
   * while running; earlier tells a freshly started one (a restart, another
   * replica) what it no longer advertises, so that it recognises a call
   * planned with one of them from its arguments.
   */
  earlier?: ToolDefinition[];
}

/**
 * Adapter serves calls planned with an older revision of a tool by
 * normalising their arguments to a newer one, during a compatibility
 * window. Only additive changes and bounded migrations can be adapted: a
 * semantic or authority change needs a new decision (or a new tool name).
 */
export interface Adapter {
  /** id identifies the adapter in reports, such as "deploy_preview-1-to-2". */
  id: string;
  tool: string;
  /** from is the revision whose calls the adapter accepts, to the one it normalises them to. */
  from: string;
  to: string;
  /** class is ChangeClass.additive or ChangeClass.bounded_migration. */
  class: ChangeClassValue;
  /** windowEnd is the declared end of the compatibility window. */
  windowEnd?: Date;
  /**
   * normalize rewrites arguments of revision from into arguments of
   * revision to, deterministically (it gets a copy). A throw rejects the
   * call as rejected_invalid before the handler runs. Absent (additive
   * changes only), the arguments pass unchanged. Its output is validated
   * against revision to's input schema before the handler runs.
   */
  normalize?: (args: Record<string, unknown>) => unknown;
}

/** What a tool handler is told about its call, and how it reports its side effects. */
export interface ToolCall {
  /** The tool called and the revision of the contract running the call. */
  tool: string;
  revision: string;
  /** The request's _meta as the client sent it. */
  meta: Record<string, unknown>;
  /** The SDK's request context (signal, session, sendNotification, …). */
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
  /**
   * sideEffectStarted records that the call's side effect has started: a
   * failure from now on is reported with side_effect.started = true.
   */
  sideEffectStarted(): void;
  /**
   * externalRequest records a request to the external system target
   * (external.requests, external.target) and marks the side effect
   * started. Call it before sending.
   */
  externalRequest(target: string): void;
}

/**
 * A tool handler: it gets the arguments its revision's input schema
 * accepts, never others. A throw is a tool error (an isError result with
 * its message) and the call's outcome is failed; an McpError is passed on
 * as a JSON-RPC error.
 */
export type ToolHandler = (args: Record<string, unknown>, call: ToolCall) => CallToolResult | Promise<CallToolResult>;

/** The error of a tool, contract or adapter the registry cannot serve. */
export class InvalidToolError extends Error {
  override name = "InvalidToolError";
}

/** One revision of a tool: the current one, with its handler, or an earlier one (no handler). */
interface Revision {
  name: string;
  revision: string;
  change: ChangeClassValue | undefined;
  privilege: PrivilegeValue | undefined;
  required: string[];
  validator: ArgsValidator;
  handler: ToolHandler | undefined;
  /** The definition advertised in tools/list (current revisions only). */
  def: ToolDefinition | undefined;
  /** def as an advertised event carries it (current revisions only). */
  definition?: string;
  /** The definition's v1 digest, whatever its revision (sameContract); "" when it has none. */
  digest: string;
}

/**
 * sameContract reports whether a call planned with revision rev was
 * planned with c's contract under another name, as mcpgo's does: c's
 * revision is a declared tool digest (contract.toolDigest), rev the v1
 * digest of the same definition, and c declares no change of meaning or
 * authority. Explicit names never match: a new one may mark a change the
 * definition does not show.
 */
function sameContract(c: Revision, rev: string): boolean {
  return c.digest !== "" && rev === c.digest && isToolRevision(c.revision) &&
    c.change !== ChangeClass.semantic && c.change !== ChangeClass.authority;
}

interface Change {
  gen: number;
  tool: string;
  before: string;
  after: string;
}

/** What the registry knows of one client session. */
interface Session {
  started: number;
  runId: string;
  clientName: string;
  clientVersion: string;
  protocol: string;
  notifiedGen: number;
  /** What this server last listed to the session: tool → revision. */
  listed: Map<string, string> | undefined;
}

/** What the registry knows of one attached SDK server. */
interface Attached {
  gen: number;
  protocol: string;
}

/** The client revision of one call and where it came from. */
interface Snapshot {
  revision: string;
  source: (typeof RevisionSource)[keyof typeof RevisionSource] | undefined;
  /** The current revision's verdict, when inference computed it. */
  currentViolations?: Violation[] | null;
}

interface CallState {
  started: boolean;
  requests: number;
  target: string | undefined;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A server of the TypeScript SDK, or an McpServer (its .server is used). */
export type AttachTarget = Server | { server: Server };

/**
 * DriftServer holds each tool's execution contract and compatibility
 * adapters, answers tools/list and tools/call on the SDK servers it is
 * attached to, records every tools/call as a call event, answers calls
 * planned with a revision it can no longer serve with a repairable error,
 * and sends notifications/tools/list_changed after the new list is served,
 * recording each as list_changed events.
 *
 * The client snapshot a call was planned with is, in this order: the
 * revision the client declares in the call's _meta (source declared); else
 * the revision this server last listed to the session (listed), while the
 * arguments fit it; else the one revision, among those the server knows
 * (the current one, the ones it replaced, and Contract.earlier), whose
 * input schema accepts the arguments (inferred; when several older ones do
 * and the current one does not, the oldest an adapter serves, else the
 * oldest); else unknown, never the current one. No handler runs on
 * arguments its own revision's input schema rejects.
 *
 * One DriftServer serves any number of SDK servers: the SDK serves one
 * session per Server, so attach each session's server (attach before
 * connect). A stateless transport's server, one per request, has listed
 * nothing to its session: its calls are declared or inferred.
 */
/**
 * DEFAULT_ADVERTISE_EVERY_MS is advertise's period: the registry counts a
 * revision as advertised now when its last advertisement is within two
 * periods of its service's latest one.
 */
export const DEFAULT_ADVERTISE_EVERY_MS = 5 * 60 * 1000;

export class DriftServer {
  private readonly em: Emitter;
  private readonly audit: boolean;
  private readonly pageSize: number;
  private readonly delay: number;

  private readonly tools = new Map<string, Revision>();
  private readonly earlier = new Map<string, Revision[]>();
  private readonly removed = new Map<string, string>();
  private readonly adapters = new Map<string, Adapter>();
  private readonly byId = new Map<string, Adapter>();

  private changes: Change[] = [];
  private gen = 0;
  // The list's cache hint (DriftServerOptions.listTtlMs, listCacheScope).
  private readonly listTtlMs: number;
  private readonly listCacheScope: string;
  private timer: ReturnType<typeof setTimeout> | undefined;

  private readonly servers = new Set<WeakRef<Server>>();
  private readonly attached = new WeakMap<Server, Attached>();
  private readonly sessions = new WeakMap<object, Session>();

  constructor(opts: DriftServerOptions = {}) {
    this.em = new Emitter(opts);
    this.audit = !opts.omitArguments;
    this.pageSize = opts.pageSize && opts.pageSize > 0 ? Math.floor(opts.pageSize) : 0;
    this.delay = opts.notificationDelayMs !== undefined && opts.notificationDelayMs >= 0 ? opts.notificationDelayMs : 10;
    this.listTtlMs = opts.listTtlMs && opts.listTtlMs > 0 ? Math.floor(opts.listTtlMs) : 0;
    this.listCacheScope = opts.listCacheScope ?? "";
  }

  /**
   * attach makes this registry answer tools/list and tools/call on server
   * (an SDK Server, or an McpServer whose tools are all added here), and
   * declares the tools.listChanged capability. Call it before
   * server.connect. It returns a function that detaches it.
   */
  attach(target: AttachTarget): () => void {
    const server: Server = "setRequestHandler" in target ? target : target.server;
    try {
      server.registerCapabilities({ tools: { listChanged: true } });
    } catch (err) {
      throw new InvalidToolError(`cannot attach to a server that is already connected (${(err as Error).message}): attach before server.connect`);
    }
    for (const m of ["tools/list", "tools/call"]) {
      try {
        server.assertCanSetRequestHandler(m);
      } catch {
        throw new InvalidToolError(
          `the server already answers ${m}: add its tools with DriftServer.addTool, not with McpServer.registerTool or setRequestHandler`,
        );
      }
    }
    const info: Attached = { gen: this.gen, protocol: "" };
    server.setRequestHandler(ListToolsRequestSchema, (req, extra) => this.list(server, req, extra));
    server.setRequestHandler(CallToolRequestSchema, (req, extra) => this.call(server, req, extra));
    // The negotiated protocol version is not kept by the SDK's Server: it
    // is read from the initialize result as it is returned.
    const s = server as unknown as { _oninitialize?: (r: unknown) => Promise<{ protocolVersion?: string }> };
    const init = s._oninitialize;
    if (typeof init === "function") {
      s._oninitialize = async (r: unknown) => {
        const res = await init.call(server, r);
        if (typeof res?.protocolVersion === "string") info.protocol = res.protocolVersion;
        return res;
      };
    }
    const ref = new WeakRef(server);
    this.servers.add(ref);
    this.attached.set(server, info);
    return () => {
      this.servers.delete(ref);
      this.attached.delete(server);
      server.removeRequestHandler("tools/list");
      server.removeRequestHandler("tools/call");
      if (s._oninitialize !== init) s._oninitialize = init;
    };
  }

  /**
   * addTool adds (or replaces) a tool with its handler under contract c.
   * The execution contract and the advertised definition change together:
   * a call admitted before the change runs the old handler, one admitted
   * after runs the new one; notifications/tools/list_changed is sent once
   * the new list is served. The revision replaced, and c.earlier, are
   * remembered, so that calls still planned with them are recognised.
   * Input schemas must compile (JSON Schema 2020-12 by default, no
   * reference from outside the schema): every call is validated against
   * its revision's before its handler runs.
   */
  addTool(tool: ToolDefinition, handler: ToolHandler, c: Contract = {}): void {
    if (!tool || typeof tool.name !== "string" || tool.name === "" || typeof handler !== "function") {
      throw new InvalidToolError("cannot add a tool without a name or a handler");
    }
    let rev = c.revision ?? "";
    if (rev === "" && c.toolDigest !== undefined && c.toolDigest !== "") {
      try {
        rev = toolRevision(c.toolDigest);
      } catch (err) {
        throw new InvalidToolError(`tool ${tool.name}: ${(err as Error).message}`);
      }
    }
    const ct = newRevision(tool, rev);
    ct.change = c.change;
    ct.privilege = c.privilege;
    ct.handler = handler;
    const earlier: Revision[] = [];
    (c.earlier ?? []).forEach((e, i) => {
      if (!e || e.name !== tool.name) {
        throw new InvalidToolError(`tool ${tool.name}: earlier definition ${i} is not of this tool (it is ${JSON.stringify(e?.name)})`);
      }
      earlier.push(newRevision(e, ""));
    });
    ct.def = { ...tool, _meta: { ...(tool._meta ?? {}), [META.revision]: ct.revision } };
    try {
      ct.definition = definition(ct.def);
    } catch (err) {
      throw new InvalidToolError(`cannot add tool ${tool.name}: ${(err as Error).message}`);
    }

    const old = this.tools.get(tool.name);
    const before = old?.revision ?? "";
    let hist = this.earlier.get(tool.name) ?? [];
    for (const e of earlier) hist = remember(hist, e);
    if (old && old.revision !== ct.revision) hist = remember(hist, { ...old, handler: undefined, def: undefined });
    hist = hist.filter((e) => e.revision !== ct.revision);
    this.earlier.set(tool.name, hist);
    this.tools.set(tool.name, ct);
    this.removed.delete(tool.name);
    if (before !== ct.revision) {
      this.recordChange(tool.name, before, ct.revision);
      this.emitAdvertised(ct);
    }
    this.scheduleNotification();
  }

  /**
   * emitAdvertisedTools emits every tool of the advertised list as an
   * advertised event. addTool emits a tool when its revision changes;
   * advertise calls this periodically, as a server should: a revision's last
   * advertised time in the registry, and so the overlap of two revisions
   * during a rolling deploy, is only as fresh as the last advertisement.
   */
  emitAdvertisedTools(): void {
    for (const name of [...this.tools.keys()].sort()) this.emitAdvertised(this.tools.get(name)!);
  }

  private emitAdvertised(r: Revision): void {
    const e: DriftEvent = { name: EVENT.advertised, time: this.em.now(), tool: r.name, revServer: r.revision, definition: r.definition };
    if (this.listTtlMs > 0) {
      e.listTtlMs = this.listTtlMs;
      if (this.listCacheScope) e.listCacheScope = this.listCacheScope;
    }
    this.em.emit(e);
  }

  /**
   * removeTool removes a tool: later calls to it fail clearly, as removed,
   * naming replacement when it is not empty.
   */
  removeTool(name: string, replacement = ""): void {
    const old = this.tools.get(name);
    if (old) this.earlier.set(name, remember(this.earlier.get(name) ?? [], { ...old, handler: undefined, def: undefined }));
    this.tools.delete(name);
    this.removed.set(name, replacement);
    this.recordChange(name, old?.revision ?? "", "");
    if (old) this.scheduleNotification();
  }

  /** revision returns the revision of a tool's execution contract, undefined when it has none. */
  revision(tool: string): string | undefined {
    return this.tools.get(tool)?.revision;
  }

  /** listed returns the definitions tools/list advertises, sorted by name. */
  listed(): ToolDefinition[] {
    return [...this.tools.keys()].sort().map((n) => this.tools.get(n)!.def!);
  }

  /**
   * addAdapter registers (or replaces, by id) a compatibility adapter and
   * emits it as an adapter event.
   */
  addAdapter(a: Adapter): void {
    if (!a.id || !a.tool || !a.from || !a.to) {
      throw new InvalidToolError(`adapter ${JSON.stringify(a.id)}: id, tool, from and to are required`);
    }
    if (a.from === a.to) throw new InvalidToolError(`adapter ${a.id}: from and to are both revision ${a.from}`);
    if (a.class !== ChangeClass.additive && a.class !== ChangeClass.bounded_migration) {
      throw new InvalidToolError(`adapter ${a.id}: a ${a.class} change cannot be adapted, only ${ChangeClass.additive} or ${ChangeClass.bounded_migration}`);
    }
    if (a.class === ChangeClass.bounded_migration && typeof a.normalize !== "function") {
      throw new InvalidToolError(`adapter ${a.id}: a bounded migration needs normalize`);
    }
    const ad = { ...a };
    const old = this.byId.get(a.id);
    if (old) this.adapters.delete(adapterKey(old.tool, old.from, old.to));
    this.byId.set(a.id, ad);
    this.adapters.set(adapterKey(a.tool, a.from, a.to), ad);
    this.emitAdapter(ad, undefined);
  }

  /**
   * removeAdapter retires an adapter: calls it served are rejected from now
   * on. It emits the adapter once more, its window ending now.
   */
  removeAdapter(id: string): void {
    const a = this.byId.get(id);
    if (!a) return;
    this.byId.delete(id);
    this.adapters.delete(adapterKey(a.tool, a.from, a.to));
    this.emitAdapter(a, new Date(this.em.now()));
  }

  /**
   * advertise emits the advertised list and the adapter registry
   * (emitAdvertisedTools, emitAdapters) now and then every everyMs
   * (DEFAULT_ADVERTISE_EVERY_MS, five minutes, by default), so that the
   * registry knows what this instance serves however long ago it started:
   * mcpgo's Server.Advertise. The timer does not keep the process alive;
   * the function returned stops it.
   */
  advertise(everyMs: number = DEFAULT_ADVERTISE_EVERY_MS): () => void {
    const round = () => {
      this.emitAdvertisedTools();
      this.emitAdapters();
    };
    round();
    const timer = setInterval(round, everyMs > 0 ? everyMs : DEFAULT_ADVERTISE_EVERY_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * emitAdapters emits the whole adapter registry as adapter events, for
   * example periodically, so that reports over any window know every
   * adapter still declared.
   */
  emitAdapters(): void {
    for (const id of [...this.byId.keys()].sort()) this.emitAdapter(this.byId.get(id)!, undefined);
  }

  /** flush hands every queued event to the logger now (before the provider's forceFlush). */
  flush(): void {
    this.em.flush();
  }

  /** telemetry returns the counts of events emitted, dropped and failed. */
  telemetry(): TelemetryStats {
    return this.em.telemetry();
  }

  private emitAdapter(a: Adapter, end: Date | undefined): void {
    const e: DriftEvent = {
      name: EVENT.adapter,
      time: this.em.now(),
      tool: a.tool,
      adapterId: a.id,
      change: a.class,
      adapterFrom: a.from,
      adapterTo: a.to,
    };
    const w = end ?? a.windowEnd;
    if (w) e.windowEnd = w;
    const p = this.tools.get(a.tool)?.privilege;
    if (p) e.privilege = p;
    this.em.emit(e);
  }

  private recordChange(tool: string, before: string, after: string): void {
    this.gen++;
    if (this.changes.length === maxRememberedChanges) this.changes.shift();
    this.changes.push({ gen: this.gen, tool, before, after });
  }

  // scheduleNotification sends notifications/tools/list_changed once no
  // change has come for the delay: the list is already the new one.
  private scheduleNotification(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.notifyAll();
    }, this.delay);
    this.timer.unref?.();
  }

  private notifyAll(): void {
    for (const ref of this.servers) {
      const server = ref.deref();
      if (!server) {
        this.servers.delete(ref);
        continue;
      }
      // A closed server (a stateless request's, once answered), or one
      // whose client never initialized (a request that was no session's),
      // has no session to notify; a session that began after the changes
      // was never told another list.
      if (!server.transport || server.getClientVersion() === undefined) continue;
      if (this.session(server, undefined, undefined).notifiedGen >= this.gen) continue;
      const now = this.em.now();
      this.notified(server, now);
      server.sendToolListChanged().catch(() => {
        // The transport went away under the notification: nothing to do.
      });
    }
  }

  // notified emits the list_changed events of one notification sent to a
  // session: one per tool changed since its previous notification, or one
  // without a tool when none is known. They are emitted as the
  // notification is handed to the transport: the client may act on it
  // before the send returns.
  private notified(server: Server, now: number): void {
    const st = this.session(server, undefined, undefined);
    const changed = this.changes.filter((c) => c.gen > st.notifiedGen);
    st.notifiedGen = this.gen;
    const base: DriftEvent = { name: EVENT.list_changed, time: now, method: methodToolListChanged };
    this.identity(st, base, server, undefined, now);
    delete base.sessionAgeMs;
    if (changed.length === 0) {
      this.em.emit(base);
      return;
    }
    for (const c of changed) {
      this.em.emit({ ...base, tool: c.tool, revBefore: c.before, revAfter: c.after, revServer: c.after });
    }
  }

  // session returns the state of the session a request came on, updated
  // from its _meta. The SDK serves one session per transport.
  private session(server: Server, meta: Record<string, unknown> | undefined, extra: Extra | undefined): Session {
    const key: object = server.transport ?? server;
    let st = this.sessions.get(key);
    if (!st) {
      st = {
        started: this.em.now(),
        runId: "",
        clientName: "",
        clientVersion: "",
        protocol: "",
        notifiedGen: this.attached.get(server)?.gen ?? this.gen,
        listed: undefined,
      };
      this.sessions.set(key, st);
    }
    const run = metaString(meta, META.run_id);
    if (run) st.runId = run;
    if (!st.clientName) {
      const ci = server.getClientVersion();
      const sent = meta?.[MCP_META_CLIENT_INFO] as { name?: unknown; version?: unknown } | undefined;
      if (ci) {
        st.clientName = ci.name;
        st.clientVersion = ci.version;
      } else if (typeof sent?.name === "string") {
        // A request of a session this server never initialized (stateless)
        // may carry the client's identity itself (MCP 2026-07-28).
        st.clientName = sent.name;
        st.clientVersion = typeof sent.version === "string" ? sent.version : "";
      }
    }
    const pv = metaString(meta, MCP_META_PROTOCOL_VERSION);
    if (pv) {
      st.protocol = pv;
    } else if (!st.protocol) {
      const h = extra?.requestInfo?.headers?.["mcp-protocol-version"];
      st.protocol = this.attached.get(server)?.protocol || (typeof h === "string" ? h : "");
    }
    return st;
  }

  private identity(st: Session, e: DriftEvent, server: Server, extra: Extra | undefined, now: number): void {
    if (st.runId) e.runId = st.runId;
    if (st.clientName) e.clientName = st.clientName;
    if (st.clientVersion) e.clientVersion = st.clientVersion;
    if (st.protocol) e.protocol = st.protocol;
    const sid = extra?.sessionId ?? server.transport?.sessionId;
    if (sid) e.sessionId = sid;
    e.sessionAgeMs = now - st.started;
  }

  private list(server: Server, req: ListToolsRequest, extra: Extra): ListToolsResult {
    const st = this.session(server, req.params?._meta, extra);
    const names = [...this.tools.keys()].sort();
    const cursor = req.params?.cursor;
    let start = 0;
    if (cursor) {
      const after = decodeCursor(cursor);
      if (after === undefined) throw new McpError(RpcErrorCode.InvalidParams, `invalid tools/list cursor ${JSON.stringify(cursor)}`);
      start = names.findIndex((n) => n > after);
      if (start < 0) start = names.length;
    }
    const end = this.pageSize ? Math.min(start + this.pageSize, names.length) : names.length;
    const tools = names.slice(start, end).map((n) => this.tools.get(n)!.def!);
    // The first page of a listing starts the session's listed snapshot
    // afresh, the next ones add to it.
    if (!cursor || !st.listed) st.listed = new Map();
    for (const t of tools) st.listed.set(t.name, metaString(t._meta, META.revision));
    const res: ListToolsResult & { ttlMs?: number; cacheScope?: string } = { tools: tools as ListToolsResult["tools"] };
    if (end < names.length) res.nextCursor = encodeCursor(names[end - 1]!);
    if (this.listTtlMs > 0) {
      res.ttlMs = this.listTtlMs;
      if (this.listCacheScope) res.cacheScope = this.listCacheScope;
    }
    return res;
  }

  // call admits, runs and records one tools/call.
  private async call(server: Server, req: CallToolRequest, extra: Extra): Promise<CallToolResult> {
    const now = this.em.now();
    const p = req.params;
    const meta = (p._meta ?? {}) as Record<string, unknown>;
    const st = this.session(server, meta, extra);
    const e: DriftEvent = { name: EVENT.call, time: now, method: methodCallTool, tool: p.name };
    const rid = metaString(meta, META.request_id);
    if (rid) e.requestId = rid;
    const retryOf = metaString(meta, META.retry_of);
    const attempt = metaInt(meta, META.retry_attempt);
    if (attempt) e.retryAttempt = attempt;
    const idem = metaString(meta, META.idempotency_key);
    if (idem) e.idempotencyKey = idem;
    const approval = parseEnum(ENUMS.approval, metaString(meta, META.approval));
    if (approval) e.approval = approval;
    let retriedRev = "";
    if (retryOf) {
      e.retryOf = retryOf;
      const auto = metaBool(meta, META.retry_automatic);
      if (auto !== undefined) e.repairAutomatic = auto;
      retriedRev = metaString(meta, META.retry_revision);
      const after = parseEnum(Outcome, metaString(meta, META.retry_after));
      if (after) e.retryAfter = after;
    }
    this.identity(st, e, server, extra, now);
    const raw = p.arguments;
    if (this.audit && raw !== undefined) e.argsRaw = JSON.stringify(raw);
    const args: Record<string, unknown> = raw ?? {};
    const declared = metaString(meta, META.revision);
    const listed = st.listed?.get(p.name) ?? "";

    const c = this.tools.get(p.name);
    if (!c) {
      if (this.removed.has(p.name)) {
        if (declared) {
          e.revClient = declared;
          e.revSource = RevisionSource.declared;
        } else if (listed) {
          e.revClient = listed;
          e.revSource = RevisionSource.listed;
        }
        e.outcome = Outcome.removed;
        e.change = ChangeClass.removal;
        e.errorCode = ERROR_CODE.tool_removed;
        this.em.emit(e, this.audit);
        return removedResult(p.name, this.removed.get(p.name)!);
      }
      // A tool this registry does not know: recorded as the failure it is.
      if (declared) {
        e.revClient = declared;
        e.revSource = RevisionSource.declared;
      }
      e.outcome = Outcome.failed;
      this.em.emit(e, this.audit);
      throw new McpError(RpcErrorCode.InvalidParams, `Tool ${p.name} not found`);
    }

    // What the registry knows of the tool now: one consistent view, as the
    // handler below is the one admitted here even if the tool changes.
    const earlier = this.earlier.get(p.name) ?? [];
    const adapters = new Map<string, Adapter>();
    for (const ad of this.adapters.values()) {
      if (ad.tool === p.name && ad.to === c.revision) adapters.set(ad.from, ad);
    }
    const snap = resolve(c, earlier, adapters, declared, listed, args);
    if (snap.revision) e.revClient = snap.revision;
    if (snap.source) e.revSource = snap.source;
    e.revServer = c.revision;
    if (c.privilege) e.privilege = c.privilege;

    if (snap.revision && snap.revision !== c.revision && !sameContract(c, snap.revision)) {
      const ad = adapters.get(snap.revision);
      if (!ad) {
        if (c.change) e.change = c.change;
        const res = reject(e, c, args);
        this.em.emit(e, this.audit);
        return res;
      }
      e.adapterId = ad.id;
      e.change = ad.class;
      let out: unknown = args;
      if (ad.normalize) {
        try {
          out = await ad.normalize(structuredClone(args));
        } catch (err) {
          e.outcome = Outcome.rejected_invalid;
          e.errorCode = ERROR_CODE.invalid_arguments;
          this.em.emit(e, this.audit);
          return invalidAdapterResult(p.name, ad, err);
        }
      }
      if (this.audit) e.argsNormalized = JSON.stringify(out ?? null);
      const v = c.validator.validate(out);
      if (v !== null || typeof out !== "object" || out === null || Array.isArray(out)) {
        // The adapter's output is no valid call of the revision it serves:
        // the handler would run on arguments it rejects.
        const res = invalid(
          e,
          c,
          v ?? [{ field: "", kind: "type", message: "must be object" }],
          `the adapter ${ad.id} from revision ${short(ad.from)} produced arguments that revision ${short(c.revision)} rejects`,
          REQUIRED_ACTION.refresh_tools,
        );
        this.em.emit(e, this.audit);
        return res;
      }
      e.outcome = Outcome.normalized;
      const res = await this.run(c, out as Record<string, unknown>, meta, e, extra);
      // The result says it was normalised, as the Go middleware's does, so
      // that the client (and mcpdrift drifttest) can tell an adapted call
      // from one the current revision accepted as it came.
      return { ...res, _meta: { ...(res._meta ?? {}), [META.adapter_id]: ad.id, [META.revision]: c.revision } };
    }

    // Planned with the current revision, or with an unknown snapshot: the
    // arguments must be valid under the current revision.
    const verr = snap.currentViolations !== undefined ? snap.currentViolations : c.validator.validate(args);
    if (verr !== null) {
      let action: string = REQUIRED_ACTION.fix_arguments;
      let why = `its arguments do not match revision ${short(c.revision)}`;
      if (!snap.revision) {
        // An unknown snapshot: perhaps of a revision this server does not
        // know; a refresh gives the client the current one.
        action = REQUIRED_ACTION.refresh_tools;
        why = "its arguments match no revision this server knows";
      }
      const res = invalid(e, c, verr, why, action);
      this.em.emit(e, this.audit);
      return res;
    }
    e.outcome = Outcome.current;
    if (retriedRev && retriedRev !== c.revision && c.change) {
      // A retry planned after a change, of a call planned before it: it
      // crosses the change the current revision declares.
      e.change = c.change;
    }
    return this.run(c, args, meta, e, extra);
  }

  // run runs an admitted call's handler and records its outcome.
  private async run(c: Revision, args: Record<string, unknown>, meta: Record<string, unknown>, e: DriftEvent, extra: Extra): Promise<CallToolResult> {
    const state: CallState = { started: false, requests: 0, target: undefined };
    const call: ToolCall = {
      tool: c.name,
      revision: c.revision,
      meta,
      extra,
      sideEffectStarted: () => {
        state.started = true;
      },
      externalRequest: (target: string) => {
        state.started = true;
        state.requests++;
        state.target = target;
      },
    };
    let res: CallToolResult | undefined;
    let thrown: unknown;
    let failed = false;
    try {
      res = await c.handler!(args, call);
    } catch (err) {
      thrown = err;
      failed = true;
    }
    e.sideEffect = state.started;
    e.externalRequests = state.requests;
    if (state.target !== undefined) e.externalTarget = state.target;
    if (failed) {
      e.outcome = Outcome.failed;
      this.em.emit(e, this.audit);
      if (thrown instanceof McpError) throw thrown;
      return { isError: true, content: [{ type: "text", text: thrown instanceof Error ? thrown.message : String(thrown) }] };
    }
    if (res?.isError) {
      e.outcome = Outcome.failed;
      const code = resultCode(res);
      if (code) e.errorCode = code;
    }
    this.em.emit(e, this.audit);
    return res as CallToolResult;
  }
}

// newRevision compiles a definition's input schema; rev empty means the
// definition's advertised revision.
function newRevision(t: ToolDefinition, rev: string): Revision {
  let revision = rev;
  if (!revision) {
    try {
      revision = advertised(t);
    } catch (err) {
      throw new InvalidToolError(`cannot add tool ${t.name}: ${(err as Error).message}`);
    }
  }
  let validator: ArgsValidator;
  try {
    validator = compileSchema(t.inputSchema);
  } catch (err) {
    const why = err instanceof SchemaError ? err.message : String(err);
    throw new InvalidToolError(`tool ${t.name} revision ${short(revision)}: the input schema cannot validate calls: ${why}`);
  }
  return {
    name: t.name,
    revision,
    change: undefined,
    privilege: undefined,
    required: requiredFields(t.inputSchema),
    validator,
    handler: undefined,
    def: undefined,
    digest: v1Digest(t),
  };
}

// v1Digest is t's digest, "" for a definition that has none (not I-JSON).
function v1Digest(t: ToolDefinition): string {
  try {
    return digest(t);
  } catch {
    return "";
  }
}

// remember appends c to the earlier revisions hist, oldest first, once per
// revision and at most maxEarlier.
function remember(hist: Revision[], c: Revision): Revision[] {
  const out = hist.filter((e) => e.revision !== c.revision);
  out.push(c);
  return out.length > maxEarlier ? out.slice(out.length - maxEarlier) : out;
}

function adapterKey(tool: string, from: string, to: string): string {
  return `${tool}\u0000${from}\u0000${to}`;
}

// resolve finds the client snapshot of a call: declared, else listed while
// the arguments fit it, else inferred from the arguments, else unknown.
function resolve(
  current: Revision,
  earlier: Revision[],
  adapters: Map<string, Adapter>,
  declared: string,
  listed: string,
  args: Record<string, unknown>,
): Snapshot {
  if (declared) return { revision: declared, source: RevisionSource.declared };
  if (listed) {
    const c = listed === current.revision ? current : earlier.find((e) => e.revision === listed);
    if (!c || c.validator.validate(args) === null) return { revision: listed, source: RevisionSource.listed };
    // The arguments contradict what was listed: the client plans with
    // another snapshot (a cache from an earlier session, say).
    const s = infer(current, earlier, adapters, args);
    if (s.source === RevisionSource.inferred) return s;
    return { revision: listed, source: RevisionSource.listed };
  }
  return infer(current, earlier, adapters, args);
}

// infer returns the one known revision whose input schema accepts args.
// When several older revisions do and the current one does not, it is the
// oldest that an adapter serves, else the oldest: counting the call against
// the oldest keeps the oldest adapter from looking unused. When the current
// revision and an older one both accept them, or none does, the snapshot is
// unknown.
function infer(current: Revision, earlier: Revision[], adapters: Map<string, Adapter>, args: Record<string, unknown>): Snapshot {
  const cur = current.validator.validate(args);
  const older = earlier.filter((e) => e.validator.validate(args) === null);
  if (cur === null && older.length === 0) return { revision: current.revision, source: RevisionSource.inferred, currentViolations: cur };
  if (cur === null || older.length === 0) return { revision: "", source: undefined, currentViolations: cur };
  const pick = older.find((e) => adapters.has(e.revision)) ?? older[0]!;
  return { revision: pick.revision, source: RevisionSource.inferred, currentViolations: cur };
}

// requiredFields returns the "required" list of an object input schema.
function requiredFields(schema: unknown): string[] {
  const r = (schema as { required?: unknown } | undefined)?.required;
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === "string") : [];
}

function missingFields(c: Revision, args: Record<string, unknown>): string[] {
  return c.required.filter((f) => !Object.hasOwn(args, f));
}

// reject answers a call planned with a revision no adapter serves, with the
// facts the seed asks of a repairable error: what changed, whether a side
// effect started (never: the handler did not run), whether refreshing
// helps, and the current revision.
function reject(e: DriftEvent, c: Revision, args: Record<string, unknown>): CallToolResult {
  e.outcome = Outcome.rejected_stale;
  e.errorCode = ERROR_CODE.stale_tool_schema;
  e.requiredAction = REQUIRED_ACTION.refresh_tools;
  let why = "its input contract changed";
  if (c.change === ChangeClass.semantic) {
    e.outcome = Outcome.rejected_incompatible;
    e.errorCode = ERROR_CODE.incompatible_tool_schema;
    why = "the meaning of its input changed";
  } else if (c.change === ChangeClass.authority) {
    why = "what it is authorised to do changed";
  }
  const missing = missingFields(c, args);
  let text = `${c.name} rejected this request because ${why} (planned with revision ${short(e.revClient ?? "")}, current revision ${short(c.revision)}). Refresh tools before retrying.`;
  if (c.required.length > 0) text += ` The current schema requires ${joinAnd(c.required)}.`;
  if (missing.length > 0) text += ` Missing: ${joinAnd(missing)}.`;
  text += " No side effect was started.";
  const sc: Record<string, unknown> = {
    error_code: e.errorCode,
    tool: c.name,
    required_action: REQUIRED_ACTION.refresh_tools,
    side_effect_started: false,
    current_revision: c.revision,
    client_revision: e.revClient ?? "",
  };
  if (e.revSource) sc["client_revision_source"] = e.revSource;
  if (c.change) sc["change_class"] = c.change;
  if (missing.length > 0) sc["missing_fields"] = missing;
  return { isError: true, content: [{ type: "text", text }], structuredContent: sc };
}

function removedResult(tool: string, replacement: string): CallToolResult {
  let text = `${tool} was removed and no longer exists; nothing was done.`;
  const sc: Record<string, unknown> = { error_code: ERROR_CODE.tool_removed, tool, side_effect_started: false };
  if (replacement) {
    text += ` Use ${replacement} instead.`;
    sc["replacement"] = replacement;
    sc["required_action"] = REQUIRED_ACTION.refresh_tools;
  }
  return { isError: true, content: [{ type: "text", text }], structuredContent: sc };
}

function invalidAdapterResult(tool: string, a: Adapter, err: unknown): CallToolResult {
  const msg = err instanceof Error ? err.message : String(err);
  const text = `${tool} rejected arguments of revision ${short(a.from)}: ${msg}. No side effect was started.`;
  const sc = { error_code: ERROR_CODE.invalid_arguments, tool, side_effect_started: false, current_revision: a.to };
  return { isError: true, content: [{ type: "text", text }], structuredContent: sc };
}

// invalid answers a call whose arguments its revision's input schema
// rejects, before its handler runs, with the facts a model can repair
// from: the revision expected, the fields at fault, what to do, and that
// nothing was started.
function invalid(e: DriftEvent, c: Revision, all: Violation[], why: string, action: string): CallToolResult {
  e.outcome = Outcome.rejected_invalid;
  e.errorCode = ERROR_CODE.invalid_arguments;
  e.requiredAction = action;
  const violations = all.slice(0, maxViolations);
  const missing: string[] = [];
  const bad: string[] = [];
  for (const v of violations) {
    const f = v.field.replace(/^\//, "");
    if (v.kind === "required") missing.push(f);
    else if (f !== "") bad.push(f);
  }
  let text = `${c.name} rejected this request because ${why}.`;
  if (c.required.length > 0) text += ` Revision ${short(c.revision)} requires ${joinAnd(c.required)}.`;
  if (missing.length > 0) text += ` Missing: ${joinAnd(missing)}.`;
  for (const v of violations) if (v.kind !== "required") text += ` ${violationText(v)}.`;
  text += action === REQUIRED_ACTION.refresh_tools ? " Refresh tools before retrying." : " Fix the arguments before retrying.";
  text += " No side effect was started.";
  const sc: Record<string, unknown> = {
    error_code: ERROR_CODE.invalid_arguments,
    tool: c.name,
    required_action: action,
    side_effect_started: false,
    current_revision: c.revision,
    field: violations.length > 0 ? violations[0]!.field.replace(/^\//, "") : "",
    violations,
  };
  if (e.revClient) sc["client_revision"] = e.revClient;
  if (missing.length > 0) sc["missing_fields"] = missing;
  if (bad.length > 0) sc["invalid_fields"] = bad;
  return { isError: true, content: [{ type: "text", text }], structuredContent: sc };
}

// resultCode returns the error_code of a result's structured content.
function resultCode(r: CallToolResult): string {
  const sc = r.structuredContent as Record<string, unknown> | undefined;
  return typeof sc?.["error_code"] === "string" ? sc["error_code"] : "";
}

// Cursors of tools/list: the last name of the previous page, opaque to
// clients.
function encodeCursor(after: string): string {
  return Buffer.from(JSON.stringify({ after }), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): string | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown };
    return typeof v.after === "string" ? v.after : undefined;
  } catch {
    return undefined;
  }
}
