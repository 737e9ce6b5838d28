// What the tests (and the end-to-end programs) run the SDK with: real
// servers and clients of @modelcontextprotocol/sdk, in memory or over
// streamable HTTP on loopback, and a LoggerProvider of the OpenTelemetry
// SDK that keeps the records it is given.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";

import { ATTR, DriftServer, type DriftClient } from "../src/index.js";

/** One recorded drift event: its name and attributes. */
export interface Rec {
  name: string;
  attrs: Record<string, unknown>;
}

/** A LoggerProvider that keeps every record, and reads them back. */
export class Recorder {
  readonly exporter = new InMemoryLogRecordExporter();
  readonly provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: this.exporter })] });
  private readonly flushers: { flush(): void }[] = [];

  /** of makes events() flush these emitters first. */
  of(...f: { flush(): void }[]): this {
    this.flushers.push(...f);
    return this;
  }

  /** events returns the records so far, those named name when given. */
  events(name?: string): Rec[] {
    for (const f of this.flushers) f.flush();
    return this.exporter
      .getFinishedLogRecords()
      .filter((r) => name === undefined || r.eventName === name)
      .map((r) => ({ name: r.eventName ?? "", attrs: { ...r.attributes } }));
  }
}

/** attr reads an attribute of a record by its key in ATTR. */
export function attr(r: Rec | undefined, key: keyof typeof ATTR): unknown {
  return r?.attrs[ATTR[key]];
}

/**
 * expectAttrs returns the mismatches between a record and want, keyed by
 * ATTR keys; a want of "" means absent.
 */
export function mismatches(r: Rec | undefined, want: Partial<Record<keyof typeof ATTR, string | number | boolean>>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(want)) {
    const got = attr(r, k as keyof typeof ATTR);
    if (v === "" ? got !== undefined : got !== v) out.push(`${ATTR[k as keyof typeof ATTR]}: got ${JSON.stringify(got)}, want ${v === "" ? "none" : JSON.stringify(v)}`);
  }
  return out;
}

/** connectInMemory connects a new server, attached to drift, and client in memory. */
export async function connectInMemory(drift: DriftServer, client: Client, name = "deploy"): Promise<{ server: Server; close(): Promise<void> }> {
  const server = new Server({ name, version: "1.0.0" }, { capabilities: {} });
  drift.attach(server);
  const [st, ct] = InMemoryTransport.createLinkedPair();
  await server.connect(st);
  await client.connect(ct);
  return {
    server,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** What an HTTP MCP endpoint saw, and how it may be made to fail. */
export interface Endpoint {
  url: string;
  /** The JSON-RPC requests that reached the endpoint, by method. */
  requests: Map<string, number>;
  /**
   * fail, when set, answers the requests it returns an error for with a
   * JSON-RPC error, before any server sees them.
   */
  fail: ((method: string, params: Record<string, unknown> | undefined) => string | undefined) | undefined;
  /** streamReady resolves once the session's standalone SSE stream (its GET) is open. */
  streamReady(sessionId?: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * serveHttp serves drift's tools over the SDK's streamable HTTP transport on
 * loopback: a Server per session (stateful, as the SDK serves sessions), or
 * a Server per request (stateless), each attached to drift.
 */
export async function serveHttp(drift: DriftServer, opts: { stateless?: boolean; name?: string; replicas?: DriftServer[] } = {}): Promise<Endpoint> {
  // Stateless requests go to the replicas round-robin, as a load balancer
  // without session affinity sends them.
  const replicas = [drift, ...(opts.replicas ?? [])];
  let next = 0;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const streams = new Map<string, Promise<void>>();
  const streamWaiters = new Map<string, () => void>();
  const markStream = (id: string) => {
    if (!streams.has(id)) streams.set(id, Promise.resolve());
    streamWaiters.get(id)?.();
  };
  const ep: Endpoint = {
    url: "",
    requests: new Map(),
    fail: undefined,
    streamReady(sessionId?: string) {
      const id = sessionId ?? [...sessions.keys()].at(-1) ?? "";
      const have = streams.get(id);
      if (have) return have;
      const p = new Promise<void>((resolve) => streamWaiters.set(id, resolve));
      streams.set(id, p);
      return p;
    },
    close: async () => {
      for (const t of sessions.values()) await t.close().catch(() => {});
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  const newServer = (d: DriftServer = drift) => {
    const server = new Server({ name: opts.name ?? "deploy", version: "1.0.0" }, { capabilities: {} });
    d.attach(server);
    return server;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers["mcp-session-id"];
    const id = typeof sid === "string" ? sid : undefined;
    let body: unknown;
    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      for (const m of Array.isArray(body) ? body : [body]) {
        const msg = m as { method?: string; id?: unknown; params?: Record<string, unknown> };
        if (!msg.method) continue;
        ep.requests.set(msg.method, (ep.requests.get(msg.method) ?? 0) + 1);
        const err = msg.id !== undefined ? ep.fail?.(msg.method, msg.params) : undefined;
        if (err !== undefined) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32603, message: err } }));
          return;
        }
      }
    }
    if (opts.stateless) {
      if (req.method !== "POST") {
        // No standalone stream without sessions.
        res.writeHead(405, { allow: "POST" }).end();
        return;
      }
      const server = newServer(replicas[next++ % replicas.length]);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id || req.method !== "POST" || (body as { method?: string } | undefined)?.method !== "initialize") {
        // No session, and no request that starts one: the SDK's answer to
        // a request without a session (what a newer client may try first).
        res.writeHead(id ? 404 : 400, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: id ? "Session not found" : "Bad Request: no session" } }));
        return;
      }
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, t);
        },
      });
      t.onclose = () => {
        if (t.sessionId) sessions.delete(t.sessionId);
      };
      await newServer().connect(t);
      transport = t;
    }
    if (req.method === "GET" && id) {
      // The standalone stream is registered as handleRequest writes its
      // headers: a notification sent after that reaches the client.
      const writeHead = res.writeHead.bind(res);
      res.writeHead = ((...a: Parameters<typeof res.writeHead>) => {
        const r = writeHead(...a);
        setImmediate(() => markStream(id));
        return r;
      }) as typeof res.writeHead;
    }
    await transport.handleRequest(req, res, body);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  ep.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return ep;
}

/** A client of the SDK and, when wanted, the notifications it received. */
export interface Connected {
  client: Client;
  /** changed resolves at the next notifications/tools/list_changed the client's own handler sees. */
  changed(): Promise<void>;
  close(): Promise<void>;
}

/**
 * newClient makes an SDK client whose own handler counts list_changed
 * notifications (so that a test can wait for one); instrument(client), when
 * given, runs before connect.
 */
export function newClient(name = "agent", version = "0.9.0"): { client: Client; changed(): Promise<void> } {
  const client = new Client({ name, version }, { capabilities: {} });
  let waiters: (() => void)[] = [];
  let pending = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    if (waiters.length > 0) {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    } else {
      pending++;
    }
  });
  return {
    client,
    changed: () => {
      if (pending > 0) {
        pending--;
        return Promise.resolve();
      }
      return withTimeout(new Promise<void>((resolve) => waiters.push(resolve)), 10_000, "no notifications/tools/list_changed");
    },
  };
}

/** connectHttp connects client to url over the streamable HTTP transport. */
export async function connectHttp(client: Client, url: string): Promise<() => Promise<void>> {
  const t = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(t);
  return async () => {
    await t.terminateSession().catch(() => {});
    await client.close();
  };
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    }),
  ]);
}

/** waitFor polls cond until it holds. */
export async function waitFor(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** text returns the first text content of a result. */
export function text(res: CallToolResult | undefined): string {
  const c = res?.content?.[0];
  return c && c.type === "text" ? c.text : "";
}

/** snapshot renders a DriftClient's snapshot of the named tools: "a@1 b@-". */
export function snapshot(agent: DriftClient, ...names: string[]): string {
  return names.map((n) => `${n}@${agent.revision(n) ?? "-"}`).join(" ");
}
