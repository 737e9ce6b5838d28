// The server side against real SDK clients that declare nothing (stock
// clients): what the server can know of their snapshot (listed, inferred,
// unknown), the adapter path, the rejections, and that no handler ever
// runs on arguments its own revision rejects. The cases of mcpgo's
// snapshot_test.go, for the TypeScript SDK.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import {
  ChangeClass,
  DriftServer,
  ERROR_CODE,
  EVENT,
  InvalidToolError,
  META,
  parseRejection,
  Privilege,
  REQUIRED_ACTION,
  type Adapter,
  type ToolDefinition,
  type ToolHandler,
  digest,
  revisionAlgorithm,
  toolDigest,
  toolRevision,
} from "../src/index.js";
import { attr, connectHttp, connectInMemory, mismatches, newClient, Recorder, serveHttp, text, waitFor } from "./harness.js";

const seedV1: ToolDefinition = {
  name: "deploy_preview",
  inputSchema: { type: "object", properties: { branch: { type: "string", minLength: 1 } }, required: ["branch"], additionalProperties: false },
};
const seedV2: ToolDefinition = {
  name: "deploy_preview",
  inputSchema: {
    type: "object",
    properties: { branch: { type: "string", minLength: 1 }, region: { type: "string", enum: ["us-east-preview", "eu-preview"] } },
    required: ["branch", "region"],
    additionalProperties: false,
  },
};
// region optional: an additive change.
const seedV2Optional: ToolDefinition = { ...seedV2, inputSchema: { ...seedV2.inputSchema, required: ["branch"] } };

const oldCall = { branch: "fix-login" };

/**
 * guarded is a deploy_preview handler that records the arguments it ran
 * with and fails the test when its revision's required fields are absent:
 * the server must never let it run on arguments its revision rejects.
 */
class Guarded {
  runs: Record<string, unknown>[] = [];
  violations: string[] = [];
  handler(...required: string[]): ToolHandler {
    return (args) => {
      for (const f of required) if (!(f in args)) this.violations.push(`handler ran without ${f}: ${JSON.stringify(args)}`);
      this.runs.push(args);
      return { content: [{ type: "text", text: "deploying" }] };
    };
  }
}

const defaultRegion: Adapter["normalize"] = (a) => ({ region: "us-east-preview", ...a });

function withRevision(t: ToolDefinition, rev: string): ToolDefinition {
  return { ...t, _meta: { [META.revision]: rev } };
}

class Stock {
  rec = new Recorder();
  drift = new DriftServer({ loggerProvider: this.rec.provider });
  g = new Guarded();
  constructor() {
    this.rec.of(this.drift);
  }
  v1() {
    this.drift.addTool(seedV1, this.g.handler("branch"), { revision: "1", privilege: Privilege.write });
  }
  deploy(def: ToolDefinition, adapter: boolean, ...earlier: ToolDefinition[]) {
    if (adapter) {
      this.drift.addAdapter({ id: "deploy_preview-1-to-2", tool: "deploy_preview", from: "1", to: "2", class: ChangeClass.bounded_migration, normalize: defaultRegion });
    }
    const required = def === seedV2 ? ["branch", "region"] : ["branch"];
    this.drift.addTool(def, this.g.handler(...required), { revision: "2", change: ChangeClass.bounded_migration, privilege: Privilege.write, earlier });
  }
  calls() {
    return this.rec.events(EVENT.call);
  }
  check() {
    assert.deepEqual(this.g.violations, []);
  }
}

/** stock connects a client of the SDK with no instrumentation, in memory. */
async function stock(t: { after(f: () => Promise<void>): void }, s: Stock): Promise<Client> {
  const client = new Client({ name: "desktop-assistant", version: "4.2" });
  const c = await connectInMemory(s.drift, client);
  t.after(c.close);
  return client;
}

async function callDeploy(client: Client, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name: "deploy_preview", arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
}

const sc = (r: CallToolResult) => (r.structuredContent ?? {}) as Record<string, unknown>;

test("a stock client's old call is served by the adapter, from what was listed to it", async (t) => {
  const s = new Stock();
  s.v1();
  const client = await stock(t, s);
  await client.listTools();
  s.deploy(seedV2, true);

  const res = await callDeploy(client, oldCall);
  assert.equal(res.isError, undefined, JSON.stringify(res));
  assert.deepEqual(s.g.runs, [{ branch: "fix-login", region: "us-east-preview" }]);
  assert.deepEqual(
    mismatches(s.calls()[0], {
      outcome: "normalized",
      revision_client: "1",
      revision_client_source: "listed",
      revision_server: "2",
      adapter_id: "deploy_preview-1-to-2",
      change_class: "bounded_migration",
      client_name: "desktop-assistant",
      client_version: "4.2",
      privilege: "write",
      args_raw: '{"branch":"fix-login"}',
      args_normalized: '{"region":"us-east-preview","branch":"fix-login"}',
    }),
    [],
  );

  // The result names the adapter and the revision that ran it, as the Go
  // middleware's does.
  assert.equal(res._meta?.["dev.mcpdrift/adapter_id"], "deploy_preview-1-to-2");
  assert.equal(res._meta?.["dev.mcpdrift/revision"], "2");

  // A call of revision 2's shape, after the client listed again.
  await client.listTools();
  const cur = await callDeploy(client, { branch: "main", region: "eu-preview" });
  assert.equal(cur._meta?.["dev.mcpdrift/adapter_id"], undefined, "a current call's result names no adapter");
  assert.deepEqual(mismatches(s.calls()[1], { outcome: "current", revision_client: "2", revision_client_source: "listed" }), []);

  // The client listed 2 but sends revision 1's shape again (a plan from a
  // cache): the arguments contradict the listing.
  await callDeploy(client, oldCall);
  assert.deepEqual(mismatches(s.calls()[2], { outcome: "normalized", revision_client: "1", revision_client_source: "inferred" }), []);
  s.check();
});

test("without an adapter the old call is rejected with the seed's repairable error", async (t) => {
  const s = new Stock();
  s.v1();
  const client = await stock(t, s);
  await client.listTools();
  s.deploy(seedV2, false);

  const res = await callDeploy(client, oldCall);
  const rej = parseRejection(res);
  assert.ok(rej, JSON.stringify(res));
  assert.equal(rej.errorCode, ERROR_CODE.stale_tool_schema);
  assert.equal(rej.currentRevision, "2");
  assert.equal(rej.clientRevision, "1");
  assert.equal(rej.sideEffectStarted, false);
  assert.equal(rej.requiredAction, REQUIRED_ACTION.refresh_tools);
  assert.equal(rej.changeClass, ChangeClass.bounded_migration);
  assert.deepEqual(rej.missingFields, ["region"]);
  assert.equal(sc(res)["client_revision_source"], "listed");
  assert.equal(
    text(res),
    "deploy_preview rejected this request because its input contract changed (planned with revision 1, current revision 2). Refresh tools before retrying. The current schema requires branch and region. Missing: region. No side effect was started.",
  );
  assert.deepEqual(s.g.runs, []);
  assert.deepEqual(
    mismatches(s.calls()[0], {
      outcome: "rejected_stale",
      revision_client: "1",
      revision_client_source: "listed",
      error_code: ERROR_CODE.stale_tool_schema,
      required_action: REQUIRED_ACTION.refresh_tools,
      side_effect_started: false,
      external_requests: 0,
    }),
    [],
  );
});

test("arguments no revision accepts never reach the handler; the error names the field and what to do", async (t) => {
  const s = new Stock();
  s.v1();
  s.deploy(seedV2, true);
  const client = await stock(t, s);
  await client.listTools();
  const cases: { name: string; args: Record<string, unknown>; meta?: Record<string, unknown>; action: string; field: string; source: string }[] = [
    { name: "listed current, bad enum", args: { branch: "b", region: "prod-us" }, action: REQUIRED_ACTION.fix_arguments, field: "region", source: "listed" },
    { name: "declared current, unknown field", args: { branch: "b", region: "eu-preview", force: true }, meta: { [META.revision]: "2" }, action: REQUIRED_ACTION.fix_arguments, field: "force", source: "declared" },
    { name: "no revision fits", args: { branch: "" }, action: REQUIRED_ACTION.fix_arguments, field: "branch", source: "listed" },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const n = s.calls().length;
      const res = await callDeploy(client, c.args, c.meta);
      const m = sc(res);
      assert.equal(res.isError, true);
      assert.equal(m["error_code"], ERROR_CODE.invalid_arguments);
      assert.equal(m["required_action"], c.action);
      assert.equal(m["field"], c.field);
      assert.equal(m["current_revision"], "2");
      assert.equal(m["side_effect_started"], false);
      assert.ok(Array.isArray(m["violations"]) && (m["violations"] as unknown[]).length > 0);
      assert.match(text(res), /No side effect was started/);
      assert.match(text(res), /requires branch and region/);
      const calls = s.calls();
      assert.equal(calls.length, n + 1);
      assert.deepEqual(
        mismatches(calls[n], {
          outcome: "rejected_invalid",
          error_code: ERROR_CODE.invalid_arguments,
          required_action: c.action,
          revision_client_source: c.source,
          side_effect_started: false,
        }),
        [],
      );
    });
  }
  assert.deepEqual(s.g.runs, []);
});

test("where nothing was listed to the session, the arguments tell the revision", async (t) => {
  await t.test("stateless", async (t) => {
    const s = new Stock();
    s.v1();
    const ep = await serveHttp(s.drift, { stateless: true });
    t.after(ep.close);
    const client = new Client({ name: "ide-agent", version: "1.0" });
    t.after(await connectHttp(client, ep.url));
    await client.listTools();
    s.deploy(seedV2, true);
    const res = await callDeploy(client, oldCall);
    assert.equal(res.isError, undefined, JSON.stringify(res));
    assert.deepEqual(mismatches(s.calls()[0], { outcome: "normalized", revision_client: "1", revision_client_source: "inferred", adapter_id: "deploy_preview-1-to-2" }), []);
    await callDeploy(client, { branch: "main", region: "eu-preview" });
    assert.deepEqual(mismatches(s.calls()[1], { outcome: "current", revision_client: "2", revision_client_source: "inferred" }), []);
    s.check();
  });

  // Two replicas behind a round-robin balancer: A lists, B is called. B
  // started at revision 2 and knows revision 1 from contract.earlier.
  await t.test("two replicas", async (t) => {
    const a = new Stock();
    const b = new Stock();
    a.v1();
    b.deploy(seedV2, true, withRevision(seedV1, "1"));
    const ep = await serveHttp(a.drift, { stateless: true, replicas: [b.drift] });
    t.after(ep.close);
    const client = new Client({ name: "ide-agent", version: "1.0" });
    t.after(await connectHttp(client, ep.url)); // initialize: A, initialized: B
    await client.listTools(); // A: revision 1
    a.deploy(seedV2, true);
    const res = await callDeploy(client, oldCall); // B
    assert.equal(res.isError, undefined, JSON.stringify(res));
    assert.equal(a.calls().length, 0, "the call reached A");
    assert.deepEqual(mismatches(b.calls()[0], { outcome: "normalized", revision_client: "1", revision_client_source: "inferred" }), []);
    assert.deepEqual(b.g.runs, [{ region: "us-east-preview", branch: "fix-login" }]);
  });

  // A replica that knows nothing of revision 1 cannot recognise the call:
  // invalid, unknown, and the handler never runs.
  await t.test("replica without the earlier revision", async (t) => {
    const s = new Stock();
    s.deploy(seedV2, true);
    const client = await stock(t, s);
    const res = await callDeploy(client, oldCall);
    const m = sc(res);
    assert.equal(m["error_code"], ERROR_CODE.invalid_arguments);
    assert.equal(m["required_action"], REQUIRED_ACTION.refresh_tools);
    assert.equal(m["field"], "region");
    assert.deepEqual(m["missing_fields"], ["region"]);
    assert.deepEqual(mismatches(s.calls()[0], { outcome: "rejected_invalid", revision_client: "", revision_client_source: "" }), []);
    assert.deepEqual(s.g.runs, []);
  });

  // Arguments both revisions accept tell nothing: the call runs, its
  // client revision unknown, never counted as current.
  await t.test("ambiguous", async (t) => {
    const s = new Stock();
    s.v1();
    s.deploy(seedV2Optional, false);
    const client = await stock(t, s); // never listed
    const res = await callDeploy(client, oldCall);
    assert.equal(res.isError, undefined);
    assert.deepEqual(mismatches(s.calls()[0], { outcome: "current", revision_client: "", revision_client_source: "", revision_server: "2" }), []);
  });
});

test("when several older revisions fit and the current one does not, the oldest an adapter serves", async (t) => {
  const s = new Stock();
  const v0 = withRevision({ name: "deploy_preview", inputSchema: { type: "object", properties: { branch: { type: "string" } }, required: ["branch"] } }, "0");
  s.v1();
  s.deploy(seedV2, true, v0); // adapter 1→2 only
  const client = await stock(t, s);
  await callDeploy(client, oldCall);
  assert.deepEqual(mismatches(s.calls()[0], { outcome: "normalized", revision_client: "1", revision_client_source: "inferred" }), []);
  s.drift.addAdapter({ id: "deploy_preview-0-to-2", tool: "deploy_preview", from: "0", to: "2", class: ChangeClass.bounded_migration, normalize: defaultRegion });
  await callDeploy(client, oldCall);
  assert.deepEqual(mismatches(s.calls()[1], { outcome: "normalized", revision_client: "0", adapter_id: "deploy_preview-0-to-2" }), []);
});

test("an adapter's output that the current revision rejects never reaches the handler", async (t) => {
  const s = new Stock();
  s.v1();
  s.drift.addAdapter({
    id: "sloppy",
    tool: "deploy_preview",
    from: "1",
    to: "2",
    class: ChangeClass.bounded_migration,
    normalize: () => ({ branch: "fix-login", region: "ap-south" }),
  });
  s.deploy(seedV2, false);
  const client = await stock(t, s);
  const res = await callDeploy(client, oldCall, { [META.revision]: "1" });
  assert.equal(res.isError, true);
  assert.equal(sc(res)["error_code"], ERROR_CODE.invalid_arguments);
  assert.equal(sc(res)["field"], "region");
  assert.deepEqual(mismatches(s.calls()[0], { outcome: "rejected_invalid", adapter_id: "sloppy", revision_client_source: "declared" }), []);
  assert.deepEqual(s.g.runs, []);

  // An adapter that throws rejects the call the same way.
  s.drift.addAdapter({
    id: "sloppy",
    tool: "deploy_preview",
    from: "1",
    to: "2",
    class: ChangeClass.bounded_migration,
    normalize: () => {
      throw new Error("the branch field must be a non-empty string");
    },
  });
  const res2 = await callDeploy(client, { branch: "x" }, { [META.revision]: "1" });
  assert.equal(sc(res2)["error_code"], ERROR_CODE.invalid_arguments);
  assert.equal(sc(res2)["current_revision"], "2");
  assert.match(text(res2), /rejected arguments of revision 1: the branch field must be a non-empty string/);
  assert.deepEqual(s.g.runs, []);
});

test("a removed tool fails clearly, naming its replacement", async (t) => {
  const s = new Stock();
  s.v1();
  const client = await stock(t, s);
  await client.listTools();
  s.drift.removeTool("deploy_preview", "deploy_environment");
  const res = await callDeploy(client, oldCall);
  const rej = parseRejection(res);
  assert.equal(rej?.errorCode, ERROR_CODE.tool_removed);
  assert.equal(rej?.replacement, "deploy_environment");
  assert.equal(rej?.requiredAction, REQUIRED_ACTION.refresh_tools);
  assert.equal(text(res), "deploy_preview was removed and no longer exists; nothing was done. Use deploy_environment instead.");
  assert.deepEqual(
    mismatches(s.calls()[0], { outcome: "removed", change_class: "removal", error_code: ERROR_CODE.tool_removed, revision_client: "1", revision_client_source: "listed" }),
    [],
  );
  // A tool the server never had is a protocol error, recorded as failed.
  await assert.rejects(client.callTool({ name: "nope", arguments: {} }), (e: unknown) => e instanceof McpError && /nope not found/.test(e.message));
  assert.deepEqual(mismatches(s.calls()[1], { tool_name: "nope", outcome: "failed" }), []);
});

test("the handler reports its side effects; a throw is a tool error, failed", async (t) => {
  const s = new Stock();
  let fail = false;
  s.drift.addTool(
    seedV1,
    (args, call) => {
      call.externalRequest("preview-deployer");
      if (fail) throw new Error("deployer unreachable");
      assert.equal(call.revision, "1");
      return { content: [{ type: "text", text: `deploying ${String(args["branch"])}` }] };
    },
    { revision: "1" },
  );
  const client = await stock(t, s);
  await callDeploy(client, oldCall);
  fail = true;
  const res = await callDeploy(client, oldCall);
  assert.equal(res.isError, true);
  assert.equal(text(res), "deployer unreachable");
  const [ok, failed] = s.calls();
  assert.deepEqual(mismatches(ok, { outcome: "current", external_requests: 1, external_target: "preview-deployer", side_effect_started: true }), []);
  assert.deepEqual(mismatches(failed, { outcome: "failed", external_requests: 1, side_effect_started: true }), []);
});

test("tools and adapters the registry cannot serve are refused", () => {
  const d = new DriftServer({ loggerProvider: new Recorder().provider });
  const ok: ToolHandler = () => ({ content: [] });
  assert.throws(
    () => d.addTool({ name: "x", inputSchema: { type: "object", properties: { a: { $ref: "https://example.com/a.json" } } } }, ok),
    (e: unknown) => e instanceof InvalidToolError && /tool x revision .*the input schema cannot validate calls/.test(e.message),
  );
  assert.throws(() => d.addTool({ name: "x", inputSchema: { type: "object" } }, ok, { earlier: [{ name: "y", inputSchema: { type: "object" } }] }), /earlier definition 0 is not of this tool/);
  assert.throws(() => d.addAdapter({ id: "a", tool: "x", from: "1", to: "1", class: ChangeClass.additive }), /from and to are both revision 1/);
  assert.throws(() => d.addAdapter({ id: "a", tool: "x", from: "1", to: "2", class: ChangeClass.semantic }), /a semantic change cannot be adapted/);
  assert.throws(() => d.addAdapter({ id: "a", tool: "x", from: "1", to: "2", class: ChangeClass.bounded_migration }), /needs normalize/);
  // Without an explicit revision, the definition's digest.
  d.addTool({ name: "x", inputSchema: { type: "object" } }, ok);
  assert.match(d.revision("x") ?? "", /^sha256:[0-9a-f]{64}$/);
});

test("list_changed is sent after the new list is served, once per batch of changes, with an event per tool", async (t) => {
  const s = new Stock();
  s.v1();
  s.drift.addTool({ name: "delete_branch", inputSchema: { type: "object" } }, () => ({ content: [] }), { revision: "1" });
  const { client, changed } = newClient();
  // The client lists in its own notification handler: it must see the new list.
  const seen: string[] = [];
  client.setNotificationHandler((await import("@modelcontextprotocol/sdk/types.js")).ToolListChangedNotificationSchema, async () => {
    const l = await client.listTools();
    seen.push(l.tools.map((x) => `${x.name}@${String(x._meta?.[META.revision])}`).join(" "));
  });
  const c = await connectInMemory(s.drift, client);
  t.after(c.close);
  void changed;
  await client.listTools();
  s.deploy(seedV2, true);
  s.drift.removeTool("delete_branch");
  await waitFor(() => seen.length > 0, "the client's handler listed");
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(seen, ["deploy_preview@2"], "one notification, after the new list was served");
  const lc = s.rec.events(EVENT.list_changed).map((e) => `${String(attr(e, "tool_name"))} ${String(attr(e, "revision_before"))}→${String(attr(e, "revision_after") ?? "")}`);
  assert.deepEqual(lc, ["deploy_preview 1→2", "delete_branch 1→"]);
  const adapters = s.rec.events(EVENT.adapter);
  assert.equal(adapters.length, 1);
  assert.deepEqual(mismatches(adapters[0], { adapter_id: "deploy_preview-1-to-2", adapter_revision_from: "1", adapter_revision_to: "2", change_class: "bounded_migration", tool_name: "deploy_preview" }), []);
});

test("a listing in pages records the session's listed snapshot across its pages", async (t) => {
  const rec = new Recorder();
  const drift = new DriftServer({ loggerProvider: rec.provider, pageSize: 1 });
  rec.of(drift);
  const g = new Guarded();
  for (const n of ["a", "b", "c"]) drift.addTool({ ...seedV1, name: n }, g.handler("branch"), { revision: "1" });
  const client = new Client({ name: "pager", version: "1" });
  const c = await connectInMemory(drift, client);
  t.after(c.close);
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await client.listTools(cursor ? { cursor } : {});
    names.push(...r.tools.map((x) => x.name));
    cursor = r.nextCursor;
    pages++;
  } while (cursor);
  assert.deepEqual(names, ["a", "b", "c"]);
  assert.equal(pages, 3);
  for (const n of ["a", "c"]) drift.addTool({ ...seedV2, name: n }, g.handler("branch", "region"), { revision: "2" });
  await client.callTool({ name: "a", arguments: { branch: "x", region: "eu-preview" } });
  await client.callTool({ name: "c", arguments: { branch: "x", region: "eu-preview" } });
  const calls = rec.events(EVENT.call);
  assert.deepEqual(calls.map((e) => `${String(attr(e, "tool_name"))}:${String(attr(e, "revision_client"))}/${String(attr(e, "revision_client_source"))}`), ["a:2/inferred", "c:2/inferred"]);
  await assert.rejects(client.listTools({ cursor: "garbage" }), /invalid tools\/list cursor/);
});

test("a server whose client never initialized is no session: it is not notified", async (t) => {
  const s = new Stock();
  s.v1();
  // A transport that connected, as a request that is no session's does
  // (a newer client's first probe, say), but never initialized.
  const { Server } = await import("@modelcontextprotocol/sdk/server/index.js");
  const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
  const lonely = new Server({ name: "deploy", version: "1.0.0" }, { capabilities: {} });
  s.drift.attach(lonely);
  const [st, ct] = InMemoryTransport.createLinkedPair();
  const seen: unknown[] = [];
  ct.onmessage = (m) => void seen.push(m);
  await ct.start();
  await lonely.connect(st);
  t.after(() => lonely.close());
  const client = await stock(t, s);
  await client.listTools();
  s.deploy(seedV2, true);
  await waitFor(() => s.rec.events(EVENT.list_changed).length > 0, "the initialized session was notified");
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(s.rec.events(EVENT.list_changed).length, 1, "one session, one changed tool");
  assert.deepEqual(seen, [], "the uninitialized transport got a notification");
});

test("the server advertises each tool's definition once per revision, and on demand", () => {
  const rec = new Recorder();
  const drift = new DriftServer({ loggerProvider: rec.provider, now: () => Date.UTC(2026, 11, 4, 12) });
  rec.of(drift);
  const handler: ToolHandler = () => ({ content: [{ type: "text", text: "ok" }] });
  const v1: ToolDefinition = {
    name: "deploy_preview",
    description: "Deploy a branch.",
    inputSchema: { type: "object", properties: { branch: { type: "string" } }, required: ["branch"] },
    _meta: { "acme/private": "x" },
    icons: [{ src: "data:image/png;base64,AAAA" }],
  };
  drift.addTool(v1, handler, { revision: "1" });
  drift.addTool(v1, handler, { revision: "1" }); // the same revision again: nothing new
  drift.addTool({ ...v1, inputSchema: { type: "object", properties: { branch: { type: "string" }, region: { type: "string" } }, required: ["branch"] } }, handler, { revision: "2" });
  const got = rec.events(EVENT.advertised);
  assert.deepEqual(got.map((r) => [attr(r, "tool_name"), attr(r, "revision_server")]), [["deploy_preview", "1"], ["deploy_preview", "2"]]);
  // Canonical JSON of the definition as listed, without _meta and icons:
  // the Go decoder's rules (a JSON object named after the tool).
  assert.equal(
    attr(got[0], "tool_definition"),
    '{"description":"Deploy a branch.","inputSchema":{"properties":{"branch":{"type":"string"}},"required":["branch"],"type":"object"},"name":"deploy_preview"}',
  );
  drift.emitAdvertisedTools();
  assert.equal(rec.events(EVENT.advertised).length, 3);
});

test("with listTtlMs, tools/list and the advertised events carry the list's cache hint", async (t) => {
  for (const c of [
    { opts: { listTtlMs: 172800000, listCacheScope: "private" }, ttl: 172800000, scope: "private" },
    { opts: {}, ttl: undefined, scope: undefined },
  ]) {
    const rec = new Recorder();
    const drift = new DriftServer({ loggerProvider: rec.provider, ...c.opts });
    rec.of(drift);
    drift.addTool(seedV1, () => ({ content: [{ type: "text", text: "ok" }] }), { revision: "1" });
    const client = new Client({ name: "desktop-assistant", version: "4.2" });
    const conn = await connectInMemory(drift, client);
    t.after(conn.close);
    const res = (await client.listTools()) as { ttlMs?: number; cacheScope?: string };
    assert.equal(res.ttlMs, c.ttl, "ttlMs of tools/list");
    assert.equal(res.cacheScope, c.scope, "cacheScope of tools/list");
    const ads = rec.events(EVENT.advertised);
    assert.equal(ads.length, 1);
    assert.equal(attr(ads[0]!, "list_ttl_ms"), c.ttl);
    assert.equal(attr(ads[0]!, "list_cache_scope"), c.scope);
  }
});

test("advertise emits the list and the adapters now and every period, until stopped", async () => {
  const rec = new Recorder();
  const drift = new DriftServer({ loggerProvider: rec.provider });
  rec.of(drift);
  const handler: ToolHandler = () => ({ content: [{ type: "text", text: "ok" }] });
  drift.addTool(seedV1, handler, { revision: "1" });
  drift.addTool({ name: "a_tool", inputSchema: { type: "object" } }, handler, { revision: "3" });
  drift.addAdapter({ id: "a-2-to-3", tool: "a_tool", from: "2", to: "3", class: ChangeClass.additive });
  const added = rec.events(EVENT.advertised).length;
  const adapters = rec.events(EVENT.adapter).length;
  const stop = drift.advertise(20);
  await waitFor(() => rec.events(EVENT.advertised).length >= added + 6, "three rounds of advertisements");
  stop();
  const rounds = rec.events(EVENT.advertised).slice(added);
  assert.deepEqual(rounds.slice(0, 4).map((r) => attr(r, "tool_name")), ["a_tool", "deploy_preview", "a_tool", "deploy_preview"]);
  assert.ok(rec.events(EVENT.adapter).length - adapters >= 3, "one adapter event per round");
  const after = rec.events(EVENT.advertised).length;
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(rec.events(EVENT.advertised).length, after, "nothing once stopped");
});

test("a tool added with its SEP-2636 tool digest is listed and served under it; its v1 digest is the same contract", async (t) => {
  const s = new Stock();
  const def: ToolDefinition = { ...seedV1, description: "Deploy a branch to a preview environment." };
  const td = toolDigest(def);
  s.drift.addTool(def, s.g.handler("branch"), { toolDigest: td, privilege: Privilege.write });
  const want = toolRevision(td);
  assert.equal(revisionAlgorithm(want), "sha256-jcs-tool");
  const client = await stock(t, s);
  const listed = (await client.listTools()).tools[0]!;
  assert.equal(listed._meta?.[META.revision], want);
  // The listed tool, its revision key left out, has the digest declared.
  assert.equal(toolDigest(listed as ToolDefinition), td);

  await callDeploy(client, oldCall, { [META.revision]: want });
  assert.deepEqual(mismatches(s.calls().at(-1)!, { outcome: "current", revision_client: want, revision_server: want }), []);
  // Planned with the v1 digest of the same definition: current.
  const v1 = digest(def);
  await callDeploy(client, oldCall, { [META.revision]: v1 });
  assert.deepEqual(mismatches(s.calls().at(-1)!, { outcome: "current", revision_client: v1, revision_server: want }), []);
  // The v1 digest of another definition is another contract: stale.
  const other = digest(seedV2);
  await callDeploy(client, oldCall, { [META.revision]: other });
  assert.deepEqual(mismatches(s.calls().at(-1)!, { outcome: "rejected_stale", revision_client: other }), []);
  assert.equal(s.g.runs.length, 2);
  s.check();
  assert.throws(() => s.drift.addTool(def, s.g.handler("branch"), { toolDigest: "sha256:abc" }), InvalidToolError);
});
