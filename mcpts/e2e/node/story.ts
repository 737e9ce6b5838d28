// The seed's story, the same in every language (the Go harness has its
// twin in mcpts/e2e): three tools at revision 1; mid-session the server
// deploys a required field with an adapter (deploy_preview), a change of
// meaning it rejects (sync_project), and a removal (delete_branch). Each
// handler calls the fake external service, so that the harness can check
// that no rejected call had any external effect.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { Approval, ChangeClass, META, Privilege, type DriftServer, type ToolCall, type ToolDefinition, type ToolHandler } from "../../src/index.js";

const str = { type: "string" };

export const deployV1: ToolDefinition = {
  name: "deploy_preview",
  description: "Deploy the current branch to a preview environment.",
  inputSchema: { type: "object", properties: { branch: { type: "string", minLength: 1 } }, required: ["branch"], additionalProperties: false },
};
export const deployV2: ToolDefinition = {
  name: "deploy_preview",
  description: "Deploy the current branch to a preview environment in a region.",
  inputSchema: {
    type: "object",
    properties: { branch: { type: "string", minLength: 1 }, region: { type: "string", enum: ["us-east-preview", "eu-preview"] } },
    required: ["branch", "region"],
    additionalProperties: false,
  },
};
export const syncV1: ToolDefinition = {
  name: "sync_project",
  description: "Sync a project by its human-readable name.",
  inputSchema: { type: "object", properties: { project: str }, required: ["project"], additionalProperties: false },
};
// Same shape, another meaning: project is now an opaque organisation id.
export const syncV2: ToolDefinition = {
  name: "sync_project",
  description: "Sync a project by its opaque organisation id.",
  inputSchema: { type: "object", properties: { project: str }, required: ["project"], additionalProperties: false },
};
export const deleteV1: ToolDefinition = {
  name: "delete_branch",
  description: "Delete a branch.",
  inputSchema: { type: "object", properties: { branch: str }, required: ["branch"], additionalProperties: false },
};

/** The adapter's declared window end. */
export const windowEnd = new Date("2099-01-01T00:00:00Z");

// external sends the handler's action to the fake external service,
// correlated with the call's request id.
function external(path: string, target: string): ToolHandler {
  return async (args: Record<string, unknown>, call: ToolCall): Promise<CallToolResult> => {
    call.externalRequest(target);
    const res = await fetch(`${process.env["EXTERNAL_URL"]}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer preview-token", "x-correlation-id": String(call.meta[META.request_id] ?? "") },
      body: JSON.stringify(args),
    });
    if (!res.ok) throw new Error(`${target} answered ${res.status}`);
    return { content: [{ type: "text", text: `${call.tool} ${JSON.stringify(args)} done` }] };
  };
}

export const deployHandler = external("/deployments", "preview-deployer");
export const syncHandler = external("/sync", "project-sync");
export const deleteHandler = external("/delete", "git");

/** v1 adds the three tools at revision 1. */
export function v1(d: DriftServer): void {
  d.addTool(deployV1, deployHandler, { revision: "1", privilege: Privilege.write });
  d.addTool(syncV1, syncHandler, { revision: "1", privilege: Privilege.write });
  d.addTool(deleteV1, deleteHandler, { revision: "1", privilege: Privilege.destructive });
}

/** deploy moves the server to revision 2: all in one batch, one notification. */
export function deploy(d: DriftServer): void {
  d.addAdapter({
    id: "deploy_preview-1-to-2",
    tool: "deploy_preview",
    from: "1",
    to: "2",
    class: ChangeClass.bounded_migration,
    windowEnd,
    // Revision 1's calls deployed to us-east-preview: the same target.
    normalize: (a) => ("region" in a ? a : { ...a, region: "us-east-preview" }),
  });
  d.addTool(deployV2, deployHandler, { revision: "2", change: ChangeClass.bounded_migration, privilege: Privilege.write });
  d.addTool(syncV2, syncHandler, { revision: "2", change: ChangeClass.semantic, privilege: Privilege.write });
  d.removeTool("delete_branch");
}

/** approve is the person the repair policy asks: the arguments a fresh decision gives. */
export function approve(tool: string): { arguments: Record<string, unknown>; approval: typeof Approval.per_call } {
  if (tool === "sync_project") return { arguments: { project: "org-4821" }, approval: Approval.per_call };
  return { arguments: { branch: "hotfix", region: "eu-preview" }, approval: Approval.per_call };
}
