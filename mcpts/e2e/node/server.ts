// A TypeScript MCP server for the end-to-end runs: DriftServer over the
// SDK's streamable HTTP transport on loopback, its events exported by the
// OpenTelemetry SDK over OTLP/gRPC.
//
//   node server.js story             the story's three tools; "deploy" moves them to revision 2
//   node server.js stock [stateless] [no-adapter]
//                                    deploy_preview at revision 1; "deploy" requires region,
//                                    with the seed's adapter unless no-adapter
//
// It says {"event":"ready","url":…}; on "deploy" it changes its tools
// (once the session's notification stream is open, so that the
// notification reaches it) and says {"event":"deployed"}; on "quit" it
// flushes its events and exits.
import { ChangeClass, DriftServer, Privilege } from "../../src/index.js";
import { serveHttp } from "../../test/harness.js";
import { fail, next, provider, say } from "./common.js";
import { deploy, deployHandler, deployV1, deployV2, v1, windowEnd } from "./story.js";

async function main(): Promise<void> {
  const [mode, ...flags] = process.argv.slice(2);
  const stateless = flags.includes("stateless");
  const lp = provider();
  const drift = new DriftServer({ loggerProvider: lp });
  if (mode === "story") {
    v1(drift);
  } else if (mode === "stock") {
    // The story's deploy_preview alone.
    drift.addTool(deployV1, deployHandler, { revision: "1", privilege: Privilege.write });
  } else {
    throw new Error(`unknown mode ${String(mode)}`);
  }
  const ep = await serveHttp(drift, { stateless, name: "story-server" });
  say({ event: "ready", url: ep.url });
  for (;;) {
    const cmd = await next();
    if (cmd === "deploy") {
      if (!stateless) await ep.streamReady();
      if (mode === "story") {
        deploy(drift);
      } else {
        if (!flags.includes("no-adapter")) {
          drift.addAdapter({
            id: "deploy_preview-1-to-2",
            tool: "deploy_preview",
            from: "1",
            to: "2",
            class: ChangeClass.bounded_migration,
            windowEnd,
            normalize: (a) => ("region" in a ? a : { ...a, region: "us-east-preview" }),
          });
        }
        drift.addTool(deployV2, deployHandler, { revision: "2", change: ChangeClass.bounded_migration, privilege: Privilege.write });
      }
      say({ event: "deployed" });
    } else if (cmd === "quit" || cmd === "") {
      drift.flush();
      await lp.shutdown();
      await ep.close();
      say({ event: "bye", telemetry: drift.telemetry() });
      process.exit(0);
    } else {
      throw new Error(`unknown command ${JSON.stringify(cmd)}`);
    }
  }
}

main().catch(fail);
