// Telemetry never breaks a call: a logger that throws, or an exporter that
// is slow, costs the calls nothing but the events it loses, which are
// counted; the exporter's work never runs on a call's path.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger, LoggerProvider } from "@opentelemetry/api-logs";
import { LoggerProvider as SdkLoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter, type ReadableLogRecord } from "@opentelemetry/sdk-logs";

import { DriftClient, DriftServer, EVENT } from "../src/index.js";
import { connectInMemory } from "./harness.js";

const tool = { name: "echo", inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } };

/** A provider whose loggers throw on every record. */
const throwing: LoggerProvider = {
  getLogger(): Logger {
    return {
      emit() {
        throw new Error("exporter exploded");
      },
      enabled() {
        return true;
      },
    };
  },
};

test("a logger that throws never reaches the handler or the caller; its events are counted as failed", async (t) => {
  const drift = new DriftServer({ loggerProvider: throwing });
  drift.addTool(tool, (a) => ({ content: [{ type: "text", text: String(a["n"]) }] }), { revision: "1" });
  const client = new Client({ name: "c", version: "1" });
  const agent = new DriftClient(client, { loggerProvider: throwing });
  const c = await connectInMemory(drift, client);
  t.after(c.close);
  await agent.refresh();
  for (let i = 0; i < 5; i++) {
    const res = (await client.callTool(agent.plan({ name: "echo", arguments: { n: i } }))) as CallToolResult;
    assert.notEqual(res.isError, true);
  }
  drift.flush();
  agent.flush();
  assert.deepEqual(drift.telemetry(), { emitted: 0, dropped: 0, failed: 6, queued: 0 }, "the tool's advertisement and 5 calls");
  assert.deepEqual(agent.telemetry(), { emitted: 0, dropped: 0, failed: 1, queued: 0 }, "the client's refresh event");
});

/** An exporter that takes ms of CPU per record, synchronously, and counts them. */
class SlowExporter implements LogRecordExporter {
  names: string[] = [];
  constructor(private readonly ms: number) {}
  export(records: ReadableLogRecord[], done: (r: { code: number }) => void): void {
    for (const r of records) {
      const until = performance.now() + this.ms;
      while (performance.now() < until) {
        // busy: an exporter that blocks its caller
      }
      this.names.push(r.eventName ?? "");
    }
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

test("a slow exporter runs off the call's path; what the queue cannot hold is dropped and counted", async (t) => {
  const exporter = new SlowExporter(2);
  const provider = new SdkLoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
  const drift = new DriftServer({ loggerProvider: provider, maxQueuedEvents: 8 });
  drift.addTool(tool, (a) => ({ content: [{ type: "text", text: String(a["n"]) }] }), { revision: "1" });
  drift.flush();
  assert.deepEqual(exporter.names, [EVENT.advertised], "addTool advertises the tool");
  exporter.names.length = 0;
  const client = new Client({ name: "c", version: "1" });
  const c = await connectInMemory(drift, client);
  t.after(c.close);

  // The call returns before its event reaches the exporter: the export
  // runs on a later turn of the event loop.
  const res = (await client.callTool({ name: "echo", arguments: { n: 1 } })) as CallToolResult;
  assert.notEqual(res.isError, true);
  assert.equal(exporter.names.length, 0, "the exporter ran on the call's path");
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(exporter.names, [EVENT.call]);

  // 64 calls at once: more events than the queue holds before the drain
  // runs. None of the calls fails; every event is emitted or dropped.
  const results = await Promise.all(Array.from({ length: 64 }, (_, n) => client.callTool({ name: "echo", arguments: { n } }) as Promise<CallToolResult>));
  assert.equal(results.filter((r) => r.isError).length, 0);
  drift.flush();
  const st = drift.telemetry();
  assert.equal(st.failed, 0);
  assert.equal(st.queued, 0);
  assert.equal(st.emitted + st.dropped, 66, JSON.stringify(st));
  assert.ok(st.dropped > 0, `nothing dropped: ${JSON.stringify(st)}`);
  assert.equal(exporter.names.length + 1, st.emitted, "every event but the advertisement, counted above");
});
