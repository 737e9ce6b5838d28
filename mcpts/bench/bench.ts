// npm run bench: the CPU the instrumentation adds per tools/call, measured
// side by side with the bare SDK in the same run, on loopback (streamable
// HTTP, one process: client, server and transport all count). It prints
// CPU-µs per call and ratios; it asserts nothing about time. The target is
// that the instrumentation costs at most 10 % of the bare call.
//
// Variants, each a server and a client of @modelcontextprotocol/sdk over
// their own loopback HTTP listener, measured in interleaved rounds so that
// the machine's drift hits them alike:
//   bare        low-level Server, a tools/call handler, a plain Client;
//   mcpserver   McpServer.registerTool with a zod input schema (the SDK's
//               own validation), a plain Client;
//   drift-noop  DriftServer + DriftClient (plan, validation, stamps,
//               events built) on the no-op global LoggerProvider;
//   drift-sdk   the same, events through the OpenTelemetry SDK's
//               LoggerProvider and BatchLogRecordProcessor to an exporter
//               that drops them (no network).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { LoggerProvider } from "@opentelemetry/api-logs";
import { BatchLogRecordProcessor, LoggerProvider as SdkLoggerProvider, type LogRecordExporter, type ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { z } from "zod";

import { DriftClient, DriftServer, Privilege } from "../src/index.js";

const schema = {
  type: "object",
  properties: { branch: { type: "string", minLength: 1 }, region: { type: "string", enum: ["us-east-preview", "eu-preview"] } },
  required: ["branch", "region"],
  additionalProperties: false,
} as const;
const args = { branch: "fix-login", region: "eu-preview" };
const result = (): CallToolResult => ({ content: [{ type: "text", text: "deploying fix-login to eu-preview" }] });

/** An exporter that counts and drops what it is given. */
class Discard implements LogRecordExporter {
  n = 0;
  export(records: ReadableLogRecord[], done: (r: { code: number }) => void): void {
    this.n += records.length;
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

interface Variant {
  name: string;
  call(): Promise<unknown>;
  close(): Promise<void>;
}

// serve serves one session's server per MCP session over streamable HTTP.
async function serve(newServer: () => Server | McpServer): Promise<{ url: URL; close(): Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
      const sid = req.headers["mcp-session-id"];
      let t = typeof sid === "string" ? sessions.get(sid) : undefined;
      if (!t) {
        const nt = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, nt) });
        await newServer().connect(nt);
        t = nt;
      }
      await t.handleRequest(req, res, body);
    })();
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    close: async () => {
      for (const t of sessions.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

async function plainClient(url: URL): Promise<Client> {
  const c = new Client({ name: "bench", version: "1" });
  await c.connect(new StreamableHTTPClientTransport(url));
  return c;
}

async function bare(): Promise<Variant> {
  const s = await serve(() => {
    const server = new Server({ name: "bare", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "deploy_preview", inputSchema: schema }] }));
    server.setRequestHandler(CallToolRequestSchema, () => result());
    return server;
  });
  const c = await plainClient(s.url);
  await c.listTools();
  return { name: "bare", call: () => c.callTool({ name: "deploy_preview", arguments: args }), close: async () => (await c.close(), await s.close()) };
}

async function mcpserver(): Promise<Variant> {
  const s = await serve(() => {
    const m = new McpServer({ name: "mcpserver", version: "1" });
    m.registerTool("deploy_preview", { inputSchema: { branch: z.string().min(1), region: z.enum(["us-east-preview", "eu-preview"]) } }, () => result());
    return m;
  });
  const c = await plainClient(s.url);
  await c.listTools();
  return { name: "mcpserver", call: () => c.callTool({ name: "deploy_preview", arguments: args }), close: async () => (await c.close(), await s.close()) };
}

async function drift(name: string, lp: LoggerProvider | undefined): Promise<Variant> {
  const d = new DriftServer(lp ? { loggerProvider: lp } : {});
  d.addTool({ name: "deploy_preview", inputSchema: schema }, (_a, call) => (call.externalRequest("deployer"), result()), { revision: "2", privilege: Privilege.write });
  const s = await serve(() => {
    const server = new Server({ name: "drift", version: "1" }, { capabilities: {} });
    d.attach(server);
    return server;
  });
  const c = new Client({ name: "bench", version: "1" });
  const agent = new DriftClient(c, lp ? { loggerProvider: lp } : {});
  await c.connect(new StreamableHTTPClientTransport(s.url));
  await agent.refresh();
  return {
    name,
    call: () => c.callTool(agent.plan({ name: "deploy_preview", arguments: args })),
    close: async () => (await c.close(), await s.close()),
  };
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function main(): Promise<void> {
  const calls = Number(process.env["BENCH_CALLS"] ?? 4800);
  const rounds = Number(process.env["BENCH_ROUNDS"] ?? 24);
  const exporter = new Discard();
  const sdk = new SdkLoggerProvider({ processors: [new BatchLogRecordProcessor({ exporter, maxQueueSize: 65536, scheduledDelayMillis: 200 })] });
  const variants = [await bare(), await mcpserver(), await drift("drift-noop", undefined), await drift("drift-sdk", sdk)];
  const per = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  // Warm up every path (JIT, sockets) before measuring.
  for (const v of variants) for (let i = 0; i < 500; i++) await v.call();
  const batch = Math.max(1, Math.floor(calls / rounds));
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      const c0 = cpuMicros();
      for (let i = 0; i < batch; i++) await v.call();
      per.get(v.name)!.push((cpuMicros() - c0) / batch);
    }
  }
  await sdk.forceFlush();
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
  const quartiles = (xs: number[]) => [sorted(xs)[Math.floor(xs.length / 4)]!, sorted(xs)[Math.floor((3 * xs.length) / 4)]!] as const;
  const bareCpu = per.get("bare")!;
  const mcpCpu = per.get("mcpserver")!;
  // Ratios are paired by round: each variant against the bare call measured
  // moments before it, so that the machine's drift between rounds cancels.
  const paired = (xs: number[], base: number[]) => xs.map((x, i) => x / base[i]!);
  console.log(`tools/call over streamable HTTP on loopback, client and server in one process (node ${process.version})`);
  console.log(`${rounds} rounds × ${batch} calls per variant, interleaved; CPU-µs per call (user+system); ratios paired by round`);
  console.log("");
  console.log("variant       CPU-µs/call   vs bare (median, quartiles)   added vs bare   vs mcpserver");
  for (const v of variants) {
    const xs = per.get(v.name)!;
    const r = paired(xs, bareCpu);
    const [q1, q3] = quartiles(r);
    console.log(
      `${v.name.padEnd(12)}  ${median(xs).toFixed(1).padStart(11)}   ${median(r).toFixed(3).padStart(7)} (${q1.toFixed(3)}–${q3.toFixed(3)})   ${((median(r) - 1) * 100).toFixed(1).padStart(12)} %   ${median(paired(xs, mcpCpu)).toFixed(3).padStart(12)}`,
    );
  }
  console.log("");
  console.log(`events exported by drift-sdk: ${exporter.n}`);
  console.log("target: drift-sdk adds at most 10 % to the bare call (the median of the paired ratios)");
  for (const v of variants) await v.close();
  await sdk.shutdown();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
