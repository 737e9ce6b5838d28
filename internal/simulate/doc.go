// Package simulate is mcpdrift's drift simulator: a deterministic fleet of
// MCP servers and long-running agent clients whose tool contracts drift,
// emitting the drift events of otelschema as a real deployment would.
//
// The fleet has Config.Servers server services sharing Config.Tools tools,
// Config.Clients client name@version combinations (some on protocol
// 2026-07-28, without sessions: their events carry an empty mcp.session.id
// and are keyed by dev.mcpdrift.run.id), and sessions lasting minutes to days,
// with read, write, destructive or credentialed privileges, each planning
// on the tools/list snapshot it last took.
//
// During the simulated span the servers deploy one change of each row of
// the seed's drift table, each on its own tool:
//
//	optional input field added      additive: old calls run as they are, or are normalized by an adapter
//	required field, safe default    bounded_migration: normalized by an adapter until its window ends,
//	                                then rejected_stale (STALE_TOOL_SCHEMA, refresh_tools)
//	approval scope added            authority: rejected_stale before any effect
//	field meaning changed           semantic: rejected_incompatible
//	output field added              additive: nothing to do
//	output identifier removed       the old client's dependent call stops: dev.mcpdrift.contract_error
//	tool removed                    removed
//
// A few legacy additive adapters predate the span, so long sessions that
// started before it still need them. Each deploy bumps the server's build
// (service.version), re-declares its adapter registry (dev.mcpdrift.adapter)
// and sends notifications/tools/list_changed to every connected session;
// some clients ignore it, some refresh at once, some only when idle.
//
// After a rejection a client refreshes and retries automatically only when
// the seed's four conditions hold — the server identified a stale schema,
// the new revision has a deterministic default, the authority boundary is
// unchanged, no external effect started — which here means a bounded
// migration past its window. Otherwise the client has the model repair a
// syntactic change, asks a person (approval per_call, or denied), or gives
// up. Retries carry dev.mcpdrift.retry.of and a new request id.
//
// At Config.ViolationRate the simulator injects the safety violations the
// reports must find: a rejected call whose side effect started, a
// mixed-revision call, a removed tool returning success, an automatic retry
// across a semantic or authority change. The Ledger counts them with
// everything else, exactly.
//
// Generator (and Generate) is the pure simulation, without I/O: benchmarks
// load its events straight into a store. Run maps the same events onto
// OpenTelemetry log records and exports them over OTLP with the real SDK,
// one LoggerProvider per service resource.
//
// Suggested flags for `mcpdrift simulate`, one per Config field:
//
//	-otlp.endpoint 127.0.0.1:4317   Endpoint
//	-otlp.protocol grpc             Protocol (grpc|http)
//	-otlp.insecure true             Insecure
//	-otlp.header k=v                Headers (repeatable), e.g. Authorization=Bearer …
//	-sim.seed 1                     Seed
//	-sim.start ""                   Start (RFC 3339; empty: now minus the span)
//	-sim.span 72h                   Span
//	-sim.events 0                   Events
//	-sim.duration 0                 Duration
//	-sim.rate 0                     Rate
//	-sim.servers 4                  Servers
//	-sim.tools 12                   Tools
//	-sim.clients 36                 Clients
//	-sim.sessions 0                 Sessions
//	-sim.changes 0                  Changes
//	-sim.environment production     Environment
//	-sim.violation-rate 0.001       ViolationRate
//	-sim.audit-args true            AuditArgs
//	-sim.queue-size 32768           QueueSize
//	-sim.batch-size 8192            BatchSize
//	-sim.export-interval 200ms      ExportInterval
//	-ledger.out -                   where to write the Ledger as JSON ("-": stdout)
package simulate
