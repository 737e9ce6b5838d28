// The client's duties, run with the real SDK on both sides (in memory and
// over streamable HTTP on loopback): the automatic refresh and whole-list
// swap, planned calls checked again before they are sent, repairs with the
// retry's identity in _meta, safeRetry's rules, contract errors, failed
// refreshes. The cases of mcpgo's client tests, for the TypeScript SDK.
import assert from "node:assert/strict";
import { test } from "node:test";

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import {
  Approval,
  ChangeClass,
  ContractError,
  DriftClient,
  DriftServer,
  ERROR_CODE,
  EVENT,
  lookupPath,
  META,
  NoRetryError,
  parseRejection,
  Privilege,
  RepairAction,
  REQUIRED_ACTION,
  safeRetry,
  StalePlanError,
  type Rejection,
  type ToolDefinition,
  type ToolHandler,
} from "../src/index.js";
import { attr, connectHttp, connectInMemory, mismatches, newClient, Recorder, serveHttp, snapshot, waitFor, type Endpoint } from "./harness.js";

/** objectSchema: string properties ("name" or "name=default"), the required ones, no others allowed. */
function objectSchema(props: string, ...required: string[]): ToolDefinition["inputSchema"] {
  const properties: Record<string, unknown> = {};
  for (const p of props.split(",")) {
    const [name, def] = p.split("=");
    properties[name!] = def !== undefined ? { type: "string", default: def } : { type: "string" };
  }
  return { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

function counted(n: { v: number }): ToolHandler {
  return (_a, call) => {
    n.v++;
    return { content: [{ type: "text", text: `${call.tool} done` }] };
  };
}

type Transport = "memory" | "http";
const transports: Transport[] = ["memory", "http"];

/** A DriftServer and a DriftClient connected over one transport, each recording its events. */
class Rig {
  srv = new Recorder();
  cli = new Recorder();
  drift: DriftServer;
  agent!: DriftClient;
  client!: Client;
  changed!: () => Promise<void>;
  ep: Endpoint | undefined;
  private closers: (() => Promise<void>)[] = [];

  constructor(opts: { pageSize?: number }) {
    this.drift = new DriftServer({ loggerProvider: this.srv.provider, ...(opts.pageSize ? { pageSize: opts.pageSize } : {}) });
    this.srv.of(this.drift);
  }

  static async start(tr: Transport, opts: { pageSize?: number; manual?: boolean }, setup: (d: DriftServer) => void): Promise<Rig> {
    const r = new Rig(opts);
    setup(r.drift);
    const c = newClient("agent", "0.9.0");
    r.client = c.client;
    r.changed = c.changed;
    r.agent = new DriftClient(c.client, { loggerProvider: r.cli.provider, runId: "run-client-test", manualRefresh: opts.manual ?? false });
    r.cli.of(r.agent);
    if (tr === "memory") {
      const conn = await connectInMemory(r.drift, c.client, "issues");
      r.closers.push(conn.close);
    } else {
      r.ep = await serveHttp(r.drift, { name: "issues" });
      r.closers.push(r.ep.close);
      r.closers.push(await connectHttp(c.client, r.ep.url));
    }
    return r;
  }

  /** ready waits until notifications can reach the client. */
  async ready(): Promise<void> {
    if (this.ep) await this.ep.streamReady();
  }

  async close(): Promise<void> {
    for (const c of this.closers.reverse()) await c();
  }

  refreshes(): string[] {
    return this.cli.events(EVENT.refresh).map((e) => `${String(attr(e, "tool_name") ?? "")} ${String(attr(e, "revision_before") ?? "")}→${String(attr(e, "revision_after") ?? "")} ${String(attr(e, "refresh_result"))}`);
  }
}

const v1: ToolDefinition = { name: "deploy_preview", inputSchema: objectSchema("branch", "branch") };

for (const tr of transports) {
  test(`${tr}: after list_changed the client lists again by itself and swaps the snapshot`, async (t) => {
    const ran = { v: 0 };
    const r = await Rig.start(tr, {}, (d) => {
      d.addTool(v1, counted(ran), { revision: "1" });
      d.addTool({ name: "create_issue", inputSchema: objectSchema("title", "title") }, counted(ran), { revision: "1" });
    });
    t.after(() => r.close());
    await r.client.listTools();
    assert.equal(snapshot(r.agent, "deploy_preview", "create_issue"), "deploy_preview@1 create_issue@1");
    await r.ready();
    r.drift.addTool({ name: "deploy_preview", inputSchema: objectSchema("branch,region", "branch", "region") }, counted(ran), { revision: "2", change: ChangeClass.bounded_migration });
    await waitFor(() => snapshot(r.agent, "deploy_preview", "create_issue") === "deploy_preview@2 create_issue@1", "the snapshot swapped");
    if (r.ep) assert.equal(r.ep.requests.get("tools/list"), 2, "the caller's list and the automatic one");
    assert.deepEqual(r.refreshes(), ["create_issue →1 ok", "deploy_preview →1 ok", "deploy_preview 1→2 ok"]);
    const lc = r.cli.events(EVENT.list_changed);
    assert.equal(lc.length, 1);
    for (const e of [...r.cli.events()]) {
      assert.equal(attr(e, "run_id"), "run-client-test");
      assert.equal(attr(e, "client_name"), "agent");
      assert.equal(attr(e, "client_version"), "0.9.0");
    }
    const auto = r.cli.events(EVENT.refresh).at(-1);
    assert.equal(typeof attr(auto, "notification_lag_ms"), "number", "the automatic refresh says how long after the notification");
    if (tr === "http") assert.equal(attr(auto, "session_id"), r.client.transport?.sessionId);
  });

  test(`${tr}: a call planned before a change is checked again before it is sent`, async (t) => {
    // setup lists revision 1, plans {"branch":"fix-login"} with it, applies
    // change and waits for the client's own list_changed handler: the
    // planned call is sent while the automatic refresh may be under way.
    const setup = async (change: (d: DriftServer, ran: { v: number }) => void) => {
      const ran = { v: 0 };
      const r = await Rig.start(tr, {}, (d) => d.addTool(v1, counted(ran), { revision: "1", privilege: Privilege.write }));
      await r.client.listTools();
      const planned = r.agent.plan({ name: "deploy_preview", arguments: { branch: "fix-login" } });
      assert.equal(planned._meta?.[META.revision], "1");
      assert.equal(planned._meta?.[META.run_id], "run-client-test");
      await r.ready();
      change(r.drift, ran);
      await r.changed();
      return { r, planned, ran };
    };

    await t.test("still valid: sent as planned", async (t) => {
      const { r, planned, ran } = await setup((d, ran) => {
        d.addAdapter({ id: "deploy_preview-1-to-2", tool: "deploy_preview", from: "1", to: "2", class: ChangeClass.additive });
        d.addTool({ name: "deploy_preview", inputSchema: objectSchema("branch,label", "branch") }, counted(ran), { revision: "2", change: ChangeClass.additive });
      });
      t.after(() => r.close());
      const res = (await r.client.callTool(planned)) as CallToolResult;
      assert.notEqual(res.isError, true);
      assert.equal(snapshot(r.agent, "deploy_preview"), "deploy_preview@2", "the call waited for the refresh");
      assert.equal(ran.v, 1);
      assert.equal(r.cli.events(EVENT.call).length, 0, "the server records the calls it receives");
      const calls = r.srv.events(EVENT.call);
      assert.equal(calls.length, 1);
      assert.deepEqual(
        mismatches(calls[0], { request_id: String(planned._meta?.[META.request_id]), revision_client: "1", revision_client_source: "declared", revision_server: "2", outcome: "normalized", adapter_id: "deploy_preview-1-to-2", run_id: "run-client-test" }),
        [],
      );
      assert.deepEqual(r.refreshes(), ["deploy_preview →1 ok", "deploy_preview 1→2 ok"]);
    });

    await t.test("refused: held back, repairable, repaired with a person's approval", async (t) => {
      const { r, planned, ran } = await setup((d, ran) =>
        d.addTool({ name: "deploy_preview", inputSchema: objectSchema("branch,region=us-east-preview", "branch", "region") }, counted(ran), {
          revision: "2",
          change: ChangeClass.bounded_migration,
          privilege: Privilege.write,
        }),
      );
      t.after(() => r.close());
      let se: StalePlanError | undefined;
      await assert.rejects(r.client.callTool(planned), (e: unknown) => {
        se = e as StalePlanError;
        return e instanceof StalePlanError;
      });
      assert.ok(se);
      assert.equal(se.tool, "deploy_preview");
      assert.equal(se.plannedRevision, "1");
      assert.equal(se.currentRevision, "2");
      assert.equal(se.removed, false);
      assert.deepEqual(se.missing, ["region"]);
      assert.deepEqual(se.invalid, []);
      assert.equal(se.requestId, planned._meta?.[META.request_id]);
      assert.equal(se.requiredAction, REQUIRED_ACTION.refresh_tools);
      assert.deepEqual(se.planned?.inputSchema["required"], ["branch"]);
      assert.ok(se.current);
      for (const want of ["deploy_preview", "revision 1", "revision 2", "missing region", "no request was sent"]) assert.ok(se.message.includes(want), `${se.message} lacks ${want}`);
      assert.equal(ran.v, 0);
      assert.equal(r.srv.events(EVENT.call).length, 0, "the server received the held-back call");

      // Only the server knows the change's class: the client's own
      // rejection states none, and safeRetry does not retry it by itself.
      const rej = parseRejection(se.result());
      assert.ok(rej);
      assert.equal(rej.errorCode, ERROR_CODE.stale_tool_schema);
      assert.equal(rej.sideEffectStarted, false);
      assert.equal(rej.currentRevision, "2");
      assert.deepEqual(rej.missingFields, ["region"]);
      assert.equal(rej.changeClass, undefined);
      await assert.rejects(r.agent.repair(planned, se.result(), safeRetry()), NoRetryError);
      assert.equal(ran.v, 0);
      let asked = 0;
      const final = await r.agent.repair(
        planned,
        se.result(),
        safeRetry(() => {
          asked++;
          return { arguments: { branch: "fix-login", region: "us-east-preview" }, approval: Approval.per_call };
        }),
      );
      assert.notEqual(final.isError, true);
      assert.equal(asked, 1);
      assert.equal(ran.v, 1);

      const held = r.cli.events(EVENT.call);
      assert.equal(held.length, 1);
      assert.deepEqual(
        mismatches(held[0], {
          outcome: "rejected_stale",
          error_code: ERROR_CODE.stale_tool_schema,
          side_effect_started: false,
          external_requests: 0,
          revision_client: "1",
          revision_client_source: "declared",
          revision_server: "2",
          request_id: String(planned._meta?.[META.request_id]),
          required_action: REQUIRED_ACTION.refresh_tools,
          tool_name: "deploy_preview",
        }),
        [],
      );
      const calls = r.srv.events(EVENT.call);
      assert.equal(calls.length, 1);
      assert.deepEqual(
        mismatches(calls[0], {
          retry_of: String(planned._meta?.[META.request_id]),
          retry_attempt: 1,
          retry_after: "rejected_stale",
          repair_automatic: false,
          outcome: "current",
          approval: "per_call",
          change_class: "bounded_migration",
          revision_client: "2",
        }),
        [],
      );
      assert.notEqual(attr(calls[0], "request_id"), planned._meta?.[META.request_id]);
      const repairs = r.cli.events(EVENT.repair);
      assert.deepEqual(
        repairs.map((e) => `${String(attr(e, "repair_action"))} ${String(attr(e, "repair_result"))} ${String(attr(e, "repair_automatic"))}`),
        ["abandon failure false", "human_approval success false"],
      );
      assert.equal(attr(repairs[1], "retry_of"), planned._meta?.[META.request_id]);
      assert.equal(attr(repairs[1], "request_id"), attr(calls[0], "request_id"));
      assert.deepEqual(r.refreshes(), ["deploy_preview →1 ok", "deploy_preview 1→2 ok", " → ok", " → ok"]);
    });

    await t.test("removed: held back, no request", async (t) => {
      const { r, planned, ran } = await setup((d) => d.removeTool("deploy_preview"));
      t.after(() => r.close());
      let se: StalePlanError | undefined;
      await assert.rejects(r.client.callTool(planned), (e: unknown) => (se = e as StalePlanError) instanceof StalePlanError);
      assert.ok(se?.removed);
      assert.equal(se.currentRevision, "");
      assert.equal(se.current, undefined);
      assert.ok(se.planned);
      assert.equal(parseRejection(se.result())?.errorCode, ERROR_CODE.tool_removed);
      assert.equal(ran.v, 0);
      assert.equal(r.srv.events(EVENT.call).length, 0);
      const held = r.cli.events(EVENT.call);
      assert.deepEqual(
        mismatches(held[0], { outcome: "removed", error_code: ERROR_CODE.tool_removed, change_class: "removal", revision_client: "1", revision_server: "" }),
        [],
      );
      assert.deepEqual(r.refreshes(), ["deploy_preview →1 ok", "deploy_preview 1→ ok"]);
    });
  });

  test(`${tr}: a result lacking a field the plan needs stops the plan`, async (t) => {
    const issueResult =
      (rev: string): ToolHandler =>
      () => {
        const idKey = rev === "2" ? "issueId" : "id";
        return {
          content: [{ type: "text", text: "Created issue I-482." }],
          structuredContent: { issue: { [idKey]: "I-482", url: "https://tracker.example/issues/I-482", state: "open" } },
          _meta: { [META.revision]: rev },
        };
      };
    const comments = { v: 0 };
    const issueV1: ToolDefinition = { name: "create_issue", inputSchema: objectSchema("title", "title"), outputSchema: { type: "object", properties: { issue: { type: "object" } } } };
    const r = await Rig.start(tr, {}, (d) => {
      d.addTool(issueV1, issueResult("1"), { revision: "1", privilege: Privilege.write });
      d.addTool({ name: "add_comment", inputSchema: objectSchema("issue_id,body", "issue_id", "body") }, counted(comments), { revision: "1" });
    });
    t.after(() => r.close());
    await r.agent.refresh();
    await r.ready();
    const step = async () => {
      const planned = r.agent.plan({ name: "create_issue", arguments: { title: "Login fails" } }, { needs: ["issue.id", "issue.state"] });
      const res = (await r.client.callTool(planned)) as CallToolResult;
      const id = lookupPath(res.structuredContent, "issue.id");
      await r.client.callTool(r.agent.plan({ name: "add_comment", arguments: { issue_id: String(id), body: "Reproduced on build 42." } }));
      return planned;
    };
    await step();
    assert.equal(comments.v, 1);
    r.drift.addTool({ ...issueV1 }, issueResult("2"), { revision: "2", change: ChangeClass.semantic, privilege: Privilege.write });
    await waitFor(() => r.agent.revision("create_issue") === "2", "the snapshot swapped");
    let planned: Record<string, unknown> | undefined;
    let ce: ContractError | undefined;
    await assert.rejects(
      (async () => {
        const p = r.agent.plan({ name: "create_issue", arguments: { title: "Login fails" } }, { needs: ["issue.id", "issue.state"] });
        planned = p._meta;
        await r.client.callTool(p);
      })(),
      (e: unknown) => (ce = e as ContractError) instanceof ContractError,
    );
    assert.ok(ce);
    assert.deepEqual(ce.missing, ["issue.id"]);
    assert.equal(ce.tool, "create_issue");
    assert.equal(ce.plannedRevision, "2");
    assert.equal(ce.serverRevision, "2");
    assert.equal(ce.requestId, planned?.[META.request_id]);
    assert.equal(lookupPath(ce.result.structuredContent, "issue.issueId"), "I-482");
    assert.match(ce.message, /lacks "issue.id", which the plan needs/);
    assert.equal(comments.v, 1, "the dependent call ran after the contract error");
    const ces = r.cli.events(EVENT.contract_error);
    assert.equal(ces.length, 1);
    assert.deepEqual(
      mismatches(ces[0], {
        tool_name: "create_issue",
        contract_field: "issue.id",
        request_id: String(planned?.[META.request_id]),
        revision_client: "2",
        revision_server: "2",
        revision_client_source: "declared",
        run_id: "run-client-test",
        session_age_s: "",
        protocol_version: "",
      }),
      [],
    );
    assert.deepEqual(
      r.srv.events(EVENT.call).map((e) => `${String(attr(e, "tool_name"))}:${String(attr(e, "outcome"))}`),
      ["create_issue:current", "add_comment:current", "create_issue:current"],
    );
  });
}

test("http: a multi-page list replaces the snapshot once, when its last page is in", async (t) => {
  const ran = { v: 0 };
  const names = ["a", "b", "c", "d"];
  const r = await Rig.start("http", { pageSize: 1 }, (d) => {
    for (const n of names.slice(0, 3)) d.addTool({ name: n, inputSchema: objectSchema("x") }, counted(ran), { revision: "1" });
  });
  t.after(() => r.close());
  let atStart = "";
  let checked = 0;
  const torn: string[] = [];
  r.ep!.fail = (method, params) => {
    if (method !== "tools/list") return undefined;
    const snap = snapshot(r.agent, ...names);
    if (!params?.["cursor"]) atStart = snap;
    else {
      checked++;
      if (snap !== atStart) torn.push(`${snap} at a later page of a list begun at ${atStart}`);
    }
    return undefined;
  };
  // The caller's own pages.
  let cursor: string | undefined;
  const listed: string[] = [];
  do {
    const res = await r.client.listTools(cursor ? { cursor } : undefined);
    listed.push(...res.tools.map((x) => x.name));
    if (res.nextCursor) assert.equal(snapshot(r.agent, ...names), "a@- b@- c@- d@-", "the snapshot changed before the last page");
    cursor = res.nextCursor;
  } while (cursor);
  assert.deepEqual(listed, ["a", "b", "c"]);
  assert.equal(snapshot(r.agent, ...names), "a@1 b@1 c@1 d@-");
  await r.ready();
  r.drift.addTool({ name: "a", inputSchema: objectSchema("x,y") }, counted(ran), { revision: "2" });
  r.drift.removeTool("c");
  r.drift.addTool({ name: "d", inputSchema: objectSchema("x") }, counted(ran), { revision: "1" });
  await waitFor(() => snapshot(r.agent, ...names) === "a@2 b@1 c@- d@1", "the snapshot swapped");
  assert.deepEqual(torn, []);
  assert.ok(checked >= 4, `${checked} later pages checked, want at least 4`);
  assert.deepEqual(r.refreshes().sort(), ["a 1→2 ok", "a →1 ok", "b →1 ok", "c 1→ ok", "c →1 ok", "d →1 ok"].sort());
});

test("http: a failed refresh is counted, leaves the snapshot whole, and the next planned call retries it", async (t) => {
  const ran = { v: 0 };
  const r = await Rig.start("http", { pageSize: 1 }, (d) => {
    d.addTool({ name: "a", inputSchema: objectSchema("x") }, counted(ran), { revision: "1" });
    d.addTool({ name: "b", inputSchema: objectSchema("x") }, counted(ran), { revision: "1" });
  });
  t.after(() => r.close());
  await r.agent.refresh();
  assert.equal(snapshot(r.agent, "a", "b"), "a@1 b@1");
  let failing = true;
  let failures = 0;
  r.ep!.fail = (method, params) => {
    if (method === "tools/list" && params?.["cursor"] && failing) {
      failures++;
      return "tools backend unavailable";
    }
    return undefined;
  };
  await r.ready();
  r.drift.addAdapter({ id: "a-1-to-2", tool: "a", from: "1", to: "2", class: ChangeClass.additive });
  r.drift.addTool({ name: "a", inputSchema: objectSchema("x,y") }, counted(ran), { revision: "2", change: ChangeClass.additive });
  await waitFor(() => failures > 0 && r.refreshes().some((x) => x.endsWith("failed")), "the automatic refresh failed on its second page");
  assert.equal(snapshot(r.agent, "a", "b"), "a@1 b@1", "a failed refresh whose first page listed a@2 left the snapshot whole");

  failing = false;
  const res = (await r.client.callTool(r.agent.plan({ name: "a", arguments: { x: "1" } }))) as CallToolResult;
  assert.notEqual(res.isError, true);
  assert.equal(snapshot(r.agent, "a", "b"), "a@2 b@1", "the call waited for the retried refresh");
  assert.equal(failures, 1);
  assert.equal(r.ep!.requests.get("tools/list"), 6, "2 first, 2 failed refresh, 2 retry");
  assert.deepEqual(r.refreshes(), ["a →1 ok", "b →1 ok", " → failed", "a 1→2 ok"]);
  const failed = r.cli.events(EVENT.refresh)[2];
  assert.equal(typeof attr(failed, "notification_lag_ms"), "number");
  assert.deepEqual(
    r.srv.events(EVENT.call).map((e) => String(attr(e, "outcome"))),
    ["normalized"],
  );
});

test("memory: an automatic retry across a change whose class is known safe, with its identity in _meta", async (t) => {
  const ran = { v: 0 };
  const r = await Rig.start("memory", { manual: true }, (d) => d.addTool(v1, counted(ran), { revision: "1" }));
  t.after(() => r.close());
  await r.agent.refresh();
  // Sent without plan: stamped when sent, and repair still names it.
  const call = { name: "deploy_preview", arguments: { branch: "fix-login" }, _meta: { [META.idempotency_key]: "deploy-42" } };
  r.drift.addTool({ name: "deploy_preview", inputSchema: objectSchema("branch,region=us-east-preview", "branch", "region") }, counted(ran), {
    revision: "2",
    change: ChangeClass.bounded_migration,
  });
  await r.changed();
  const res = (await r.client.callTool(call)) as CallToolResult;
  const rej = parseRejection(res) as Rejection;
  assert.equal(rej.errorCode, ERROR_CODE.stale_tool_schema);
  assert.equal(rej.changeClass, ChangeClass.bounded_migration);
  const final = await r.agent.repair(call, res, safeRetry());
  assert.notEqual(final.isError, true);
  assert.equal(ran.v, 1);
  const [stale, retry] = r.srv.events(EVENT.call);
  const id = String(attr(stale, "request_id"));
  assert.match(id, /^[0-9a-f]{16}$/);
  assert.deepEqual(mismatches(stale, { outcome: "rejected_stale", revision_client: "1", idempotency_key: "deploy-42" }), []);
  assert.deepEqual(
    mismatches(retry, { outcome: "current", retry_of: id, retry_attempt: 1, retry_after: "rejected_stale", repair_automatic: true, change_class: "bounded_migration", revision_client: "2", idempotency_key: "deploy-42" }),
    [],
  );
  const [repair] = r.cli.events(EVENT.repair);
  assert.deepEqual(
    mismatches(repair, { repair_action: "refresh_retry", repair_automatic: true, repair_result: "success", retry_of: id, retry_attempt: 1, revision_client: "1", change_class: "bounded_migration", error_code: ERROR_CODE.stale_tool_schema }),
    [],
  );
  assert.equal(typeof attr(repair, "repair_duration_ms"), "number");
});

test("http: a model-repair hook is an automatic repair, and a refresh that fails stops a repair", async (t) => {
  const ran = { v: 0 };
  const r = await Rig.start("http", { manual: true }, (d) => d.addTool(v1, counted(ran), { revision: "1" }));
  t.after(() => r.close());
  await r.agent.refresh();
  const planned = r.agent.plan({ name: "deploy_preview", arguments: { branch: "fix-login" } });
  r.drift.addTool({ name: "deploy_preview", inputSchema: objectSchema("branch,region", "branch", "region") }, counted(ran), {
    revision: "2",
    change: ChangeClass.semantic,
  });
  const res = (await r.client.callTool(planned)) as CallToolResult;
  assert.equal(parseRejection(res)?.errorCode, ERROR_CODE.incompatible_tool_schema);

  // The model plans the call again from the refreshed definition.
  let seenTool: ToolDefinition | undefined;
  const fixed = await r.agent.repair(planned, res, (req) => {
    seenTool = req.tool;
    return { action: RepairAction.model_repair, arguments: { branch: "fix-login", region: "eu-preview" } };
  });
  assert.notEqual(fixed.isError, true);
  assert.deepEqual(seenTool?.inputSchema["required"], ["branch", "region"], "the hook sees the refreshed definition");
  const retry = r.srv.events(EVENT.call).at(-1);
  assert.deepEqual(mismatches(retry, { outcome: "current", repair_automatic: true, retry_after: "rejected_incompatible", change_class: "semantic" }), []);
  assert.deepEqual(mismatches(r.cli.events(EVENT.repair)[0], { repair_action: "model_repair", repair_automatic: true, repair_result: "success" }), []);

  // tools/list fails: the repair cannot refresh, and says so.
  r.ep!.fail = (method) => (method === "tools/list" ? "tools backend unavailable" : undefined);
  await assert.rejects(r.agent.repair(planned, res, safeRetry()), (e: unknown) => e instanceof Error && e.name === "RepairError" && /cannot refresh tools to repair deploy_preview/.test(e.message));
  assert.deepEqual(mismatches(r.cli.events(EVENT.repair).at(-1), { repair_action: "refresh_retry", repair_automatic: true, repair_result: "failure" }), []);
  assert.equal(attr(r.cli.events(EVENT.refresh).at(-1), "refresh_result"), "failed");
});

test("safeRetry: automatic only across a stale schema of a known safe class, without side effects, with non-sensitive defaults", async () => {
  const tool = (props: Record<string, unknown>, ...required: string[]): ToolDefinition => ({
    name: "deploy",
    inputSchema: { type: "object", properties: props, required, additionalProperties: false },
  });
  const stale: Rejection = {
    errorCode: ERROR_CODE.stale_tool_schema,
    tool: "deploy",
    requiredAction: REQUIRED_ACTION.refresh_tools,
    sideEffectStarted: false,
    currentRevision: "2",
    clientRevision: "1",
    changeClass: ChangeClass.bounded_migration,
    missingFields: [],
    replacement: "",
    outcome: "rejected_stale",
  };
  const call = { name: "deploy", arguments: { branch: "x" } };
  const f = async (name: string, rejection: Rejection, t: ToolDefinition | undefined, want: string, wantArgs?: unknown) => {
    const d = await safeRetry()({ call, rejection, tool: t });
    assert.equal(d.action, want, name);
    if (wantArgs !== undefined) assert.deepEqual(d.arguments, wantArgs, name);
  };
  await f("default filled", stale, tool({ branch: {}, region: { default: "us-east-preview" } }, "branch", "region"), RepairAction.refresh_retry, { branch: "x", region: "us-east-preview" });
  await f("no default", stale, tool({ branch: {}, region: {} }, "branch", "region"), RepairAction.abandon);
  await f("sensitive default", stale, tool({ branch: {}, environment: { default: "production" } }, "branch", "environment"), RepairAction.abandon);
  await f("side effect", { ...stale, sideEffectStarted: true }, tool({ branch: {} }, "branch"), RepairAction.abandon);
  await f("authority", { ...stale, changeClass: ChangeClass.authority }, tool({ branch: {} }, "branch"), RepairAction.abandon);
  await f("semantic", { ...stale, changeClass: ChangeClass.semantic }, tool({ branch: {} }, "branch"), RepairAction.abandon);
  await f("class unknown", { ...stale, changeClass: undefined }, tool({ branch: {}, region: { default: "us-east-preview" } }, "branch", "region"), RepairAction.abandon);
  await f("additive", { ...stale, changeClass: ChangeClass.additive }, tool({ branch: {} }, "branch"), RepairAction.refresh_retry, { branch: "x" });
  await f("field dropped", stale, tool({ ref: {} }, "ref"), RepairAction.abandon);
  await f("tool gone", stale, undefined, RepairAction.abandon);
  await f("not stale", { ...stale, errorCode: ERROR_CODE.incompatible_tool_schema }, tool({ branch: {} }, "branch"), RepairAction.abandon);
  const d = await safeRetry(() => ({ arguments: {}, approval: Approval.denied }))({ call, rejection: { ...stale, changeClass: ChangeClass.authority }, tool: tool({ branch: {} }, "branch") });
  assert.equal(d.action, RepairAction.human_approval);
  assert.equal(d.approval, Approval.denied);
});

test("lookupPath reads a result's structured content as the Go client does", () => {
  const doc = JSON.parse(`{
    "issue": {"id": "I-482", "state": {"name": "open"}, "labels": ["bug", "login"], "closed": null, "count": 0, "draft": false},
    "items": [{"id": 1}, {"id": 2}],
    "a.b": {"c": "dotted"},
    "back\\\\slash": "bs",
    "0": "zero key",
    "": {"": "empty keys"}
  }`) as unknown;
  const f = (v: unknown, path: string, want: unknown) => assert.deepEqual(lookupPath(v, path), want, path);
  f(doc, "issue.id", "I-482");
  f(doc, "issue.state.name", "open");
  f(doc, "issue.state", { name: "open" });
  f(doc, "issue.issueId", undefined);
  f(doc, "issue.id.value", undefined);
  f(doc, "issue.closed", undefined);
  f(doc, "issue.count", 0);
  f(doc, "issue.draft", false);
  f(doc, "issue.labels.1", "login");
  f(doc, "issue.labels.2", undefined);
  f(doc, "issue.labels.01", undefined);
  f(doc, "issue.labels.-1", undefined);
  f(doc, "issue.labels.x", undefined);
  f(doc, "items.1.id", 2);
  f(doc, "0", "zero key");
  f(doc, "a\\.b.c", "dotted");
  f(doc, "a.b.c", undefined);
  f(doc, "back\\\\slash", "bs");
  f(doc, ".", "empty keys");
  f(doc, "", doc);
  f(undefined, "", undefined);
  f(undefined, "issue.id", undefined);
  f(["x"], "0", "x");
  f({ issue: Object.create({ id: "inherited" }) }, "issue.id", undefined);
});

