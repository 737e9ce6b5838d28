// Package mcpgo instruments the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk) with mcpdrift's schema-drift
// events, emitted through the OpenTelemetry Logs API so that any exporter
// (OTLP to mcpdrift's ingester, a Collector, …) carries them.
//
// On the server, Server holds each tool's execution contract (its revision:
// explicit, a declared SEP-2636 ToolDigest, or the RFC 8785 Digest of its
// definition; otelschema.AlgorithmOf reads which from its form), the earlier
// revisions it still recognises, and the compatibility adapters that serve
// them. Every tools/call becomes a dev.mcpdrift.call event with the client's
// planned revision and where it came from — declared in _meta under
// MetaRevision, listed (what this server last listed to the session, for
// clients that declare nothing), or inferred from the arguments — the
// executing revision and the outcome: current, normalized by an adapter,
// rejected_stale with a repairable STALE_TOOL_SCHEMA error before any side
// effect, rejected_incompatible, rejected_invalid (no handler ever runs on
// arguments its revision's input schema rejects), removed or failed. Sent notifications/tools/list_changed become
// dev.mcpdrift.list_changed events, and the adapter registry dev.mcpdrift.adapter
// events. A recording span in the context gets the same attributes.
//
// On the client, Client does what the seed asks of a client after
// notifications/tools/list_changed: it lists every page of tools/list
// again by itself, off the SDK's notification dispatch, and swaps the
// session's snapshot at once when the last page is in
// (ClientOptions.ManualRefresh leaves the refreshing to the caller); it
// keeps the definitions a refresh retired; it stamps every tools/call with
// the revision it was planned with (Client.Plan) and validates a call
// planned before a swap again, with the server's validator, before sending
// it — still valid, it goes as planned; refused, or its tool gone, it is
// held back with a repairable StalePlanError and recorded as the client's
// own dev.mcpdrift.call event, the server never seeing it. A plan may declare
// the result fields a later step depends on (Needs): a result lacking one
// stops the plan with a ContractError and a dev.mcpdrift.contract_error event.
// It records refreshes (failed ones too), received notifications and
// repairs (Client.Repair, with retry identity kept apart from request
// identity). A retry carries its identity to the server in _meta
// (MetaRetryOf, MetaRetryAttempt, MetaRetryAutomatic, MetaRetryRevision),
// so that the server's call event of the retry says which call it
// retries, whether it was automatic and, when it was planned after a
// change, that change's class: an automatic retry across a semantic or
// authority change is seen with server-side instrumentation only.
//
//	srv := mcp.NewServer(&mcp.Implementation{Name: "deploy"}, nil)
//	drift := mcpgo.NewServer(srv, nil) // the global LoggerProvider
//	drift.AddTool(deployV2, handleDeploy, mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration,
//		Earlier: []*mcp.Tool{deployV1}}) // what a fresh replica no longer advertises
//	drift.AddAdapter(ctx, mcpgo.Adapter{ID: "deploy-1-to-2", Tool: "deploy_preview", From: "1", To: "2",
//		Class: otelschema.ChangeClassBoundedMigration, WindowEnd: end, Normalize: defaultRegion})
//	go drift.Advertise(ctx, 0) // the list and the adapters again every five minutes
//
// A server that lets clients cache its list (SEP-2549) says so once, in
// ServerOptions: mcpgo.ServerOptions{ListTTL: 24 * time.Hour} puts ttlMs
// on every tools/list result and on every advertised event, and the release
// check and the propagation report then say how long a client may keep
// the old list.
//
//	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, &mcp.ClientOptions{ToolListChangedHandler: onChange})
//	agent := mcpgo.NewClient(client, &mcpgo.ClientOptions{RunID: runID})
//	session, err := client.Connect(ctx, transport, nil)
//	err = agent.Subscribed(ctx, session) // changes from now on are announced to the session
//	planned := agent.Plan(session, &mcp.CallToolParams{Name: "create_issue", Arguments: args}, mcpgo.Needs("issue.id"))
//	res, err := session.CallTool(ctx, planned)
//	var stale *mcpgo.StalePlanError
//	if errors.As(err, &stale) { // held back: nothing was sent
//		res, err = stale.Result(), nil
//	}
//	res, err = agent.Repair(ctx, session, planned, res, mcpgo.SafeRetry(askHuman))
//
// Cost: the middleware's own work is about half a microsecond per call; the
// OpenTelemetry SDK's record processing dominates (BenchmarkMiddleware). The
// events never repeat an attribute key, so a provider built with
// sdklog.WithAllowKeyDuplication skips the SDK's de-duplication pass, which
// is about half of it.
//
// Tool handlers report what they did with SideEffectStarted and
// ExternalRequest, so that a rejection or failure says whether anything
// had already left the process.
package mcpgo
