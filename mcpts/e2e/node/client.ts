// A TypeScript MCP client for the end-to-end runs: the SDK's Client over
// streamable HTTP, instrumented by DriftClient (manual refresh: the seed's
// transcript sends the prepared call before it refreshes), its events
// exported by the OpenTelemetry SDK over OTLP/gRPC; or, with "stock", a
// plain SDK client that declares nothing.
//
//   node client.js story    the seed's story (see story.ts and the Go harness)
//   node client.js stock    lists, then sends revision 1's call twice, lists, and revision 2's
//
// It says {"event":"planned"} (story) or {"event":"listed"} (stock) and
// waits for "deployed"; at the end it says {"event":"done", …} with the
// request ids and outcomes the harness checks the stored events against.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { DriftClient, META, NoRetryError, parseRejection, safeRetry, StalePlanError } from "../../src/index.js";
import { connectHttp, newClient } from "../../test/harness.js";
import { closeInput, env, expect, fail, provider, say } from "./common.js";
import { approve } from "./story.js";

const outcome = (r: CallToolResult) => parseRejection(r)?.errorCode ?? (r.isError ? "error" : "ok");

async function story(): Promise<void> {
  const lp = provider();
  const { client, changed } = newClient("agent", "0.9.0");
  const agent = new DriftClient(client, { loggerProvider: lp, runId: env("RUN_ID"), manualRefresh: true });
  const close = await connectHttp(client, env("MCP_URL"));
  const policy = safeRetry((r) => approve(r.call.name));

  // 1-3. The client lists, and plans four calls with revision 1.
  await agent.refresh();
  const a = agent.plan({ name: "deploy_preview", arguments: { branch: "fix-login" } });
  const b = agent.plan({ name: "sync_project", arguments: { project: "payments" } });
  const c = agent.plan({ name: "delete_branch", arguments: { branch: "old-feature" } });
  const d = agent.plan({ name: "deploy_preview", arguments: { branch: "hotfix" } });
  say({ event: "planned" });
  // 4-5. The server deploys and announces it.
  await expect("deployed");
  await changed();
  // 6. The prepared call goes before any refresh: the adapter serves it.
  const ra = (await client.callTool(a)) as CallToolResult;
  // 7. The client refreshes.
  await agent.refresh();
  // 8-9. The calls still queued: sent when still valid, repaired after.
  const rb = (await client.callTool(b)) as CallToolResult;
  const rb2 = await agent.repair(b, rb, policy);
  const held: Record<string, string> = {};
  let rc: string;
  try {
    await client.callTool(c);
    rc = "sent";
  } catch (e) {
    if (!(e instanceof StalePlanError)) throw e;
    held["c"] = e.removed ? "removed" : "stale";
    try {
      await agent.repair(c, e.result(), policy);
      rc = "retried";
    } catch (e2) {
      if (!(e2 instanceof NoRetryError)) throw e2;
      rc = `abandoned:${String(e2.action)}`;
    }
  }
  let rd2: CallToolResult | undefined;
  try {
    await client.callTool(d);
  } catch (e) {
    if (!(e instanceof StalePlanError)) throw e;
    held["d"] = e.removed ? "removed" : `stale:${e.missing.join(",")}`;
    rd2 = await agent.repair(d, e.result(), policy);
  }
  say({
    event: "done",
    ids: { a: a._meta[META.request_id], b: b._meta[META.request_id], c: c._meta[META.request_id], d: d._meta[META.request_id] },
    results: { a: outcome(ra), b: outcome(rb), b_retry: outcome(rb2), c: rc, d_retry: rd2 ? outcome(rd2) : "none" },
    held,
    session: client.transport?.sessionId ?? "",
  });
  await close();
  agent.flush();
  await lp.shutdown();
  say({ event: "bye", telemetry: agent.telemetry() });
}

async function stock(): Promise<void> {
  const client = new Client({ name: "ide-agent", version: "1.0" });
  const close = await connectHttp(client, env("MCP_URL"));
  await client.listTools();
  say({ event: "listed" });
  await expect("deployed");
  const results: string[] = [];
  for (let i = 0; i < 2; i++) results.push(outcome((await client.callTool({ name: "deploy_preview", arguments: { branch: "fix-login" } })) as CallToolResult));
  await client.listTools();
  results.push(outcome((await client.callTool({ name: "deploy_preview", arguments: { branch: "main", region: "eu-preview" } })) as CallToolResult));
  say({ event: "done", results });
  await close();
  say({ event: "bye" });
}

const mode = process.argv[2];
(mode === "story" ? story() : mode === "stock" ? stock() : Promise.reject(new Error(`unknown mode ${String(mode)}`)))
  .then(() => {
    closeInput();
    process.exit(0);
  })
  .catch(fail);
