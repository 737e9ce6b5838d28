package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// writeInstrumenting writes the last section of CONVENTIONS.md: what an
// instrumentation of an MCP SDK must do to speak to mcpgo on the other
// side of a call and be counted the same, in any language. It is written
// here, not by otelschema.WriteConventions, because its names are mcpgo's.
func writeInstrumenting(w io.Writer) error {
	ann, err := sdkAnnotations()
	if err != nil {
		return err
	}
	defaults, err := json.Marshal(ann.Defaults)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	code := func(s string) string { return "`" + s + "`" }
	ev := func(e otelschema.EventName) string { return code(e.String()) }

	p("\n## Instrumenting an MCP SDK, in any language\n\n")
	p("Go has `otelschema/mcpgo`, TypeScript `mcpts` (the npm package `@mcpdrift/mcpts`). Python has none:\n")
	p("its MCP SDK cannot be installed where this project is built (no Python package registry is\n")
	p("reachable). An instrumentation in another language follows this section, reads every name from\n")
	p("`otelschema/conventions.json` (written with this document; each event and attribute has a `key`\n")
	p("that stays when its name changes), and checks itself against the vectors every instrumentation\n")
	p("shares: `otelschema/testdata/digests.json` (revisions) and `otelschema/testdata/validation.json`\n")
	p("(the verdicts of the argument validator: JSON Schema 2020-12, formats asserted, no remote or file\n")
	p("reference). Events are OpenTelemetry log records emitted through the language's Logs API, so that\n")
	p("the application's provider carries them; an exporter that fails or is slow must cost the calls\n")
	p("nothing but the events it loses.\n\n")

	p("### Revisions\n\n")
	p("A tool's revision is the explicit one its definition advertises in `_meta` under %s (a\n", code(mcpgo.MetaRevision))
	p("number there is written in base 10), else its digest: %s and the lowercase hex SHA-256 of the\n", code(mcpgo.DigestPrefix))
	p("RFC 8785 canonical JSON of an object holding those of `name`, `inputSchema`, `outputSchema` and\n")
	p("`annotations` that are present and not null. The annotations enter it as the MCP Go SDK encodes\n")
	p("them: only the members %s; %s always, defaulting to %s when absent or null; the others when\n",
		codeList(ann.Members), codeList(defaulted(ann)), code(string(defaults)))
	p("present, not null and not the empty string. Title, description, icons and `_meta` do not change\n")
	p("it. A server computes its revisions when a tool is added, never per call.\n\n")

	p("A server may instead declare the tool digest of SEP-2636 (`tools/manifest`, an open proposal in\n")
	p("`modelcontextprotocol/modelcontextprotocol`): %s and the lowercase hex SHA-256 of the RFC 8785\n", code(mcpgo.DigestPrefix))
	p("form of the **whole** Tool object as served, title, description, icons and `_meta` included.\n")
	p("The one member left out is %s in `_meta` (and `_meta`, when that was its only key): it\n", code(mcpgo.MetaRevision))
	p("carries the revision, which may be this digest; a Tool without it gets exactly the proposal's\n")
	p("digest. Its revision is %s and the same hex (mcpgo: `Contract.ToolDigest`, `ToolDigest`,\n", code(mcpgo.ToolDigestPrefix))
	p("`ToolRevision`; mcpts: `toolDigest`, `toolRevision`), so that it is never read as a digest of\n")
	p("the other kind. A revision's form says its algorithm; no stored field does:\n\n")
	p("| Form | Algorithm | Label in the registry |\n| --- | --- | --- |\n")
	for _, a := range otelschema.RevisionAlgorithms() {
		form := "any other string (`2`, FastMCP's `v2`)"
		switch a {
		case otelschema.AlgorithmV1:
			form = code(otelschema.DigestPrefixV1) + " and 64 lowercase hex digits"
		case otelschema.AlgorithmTool:
			form = code(otelschema.DigestPrefixTool) + " and 64 lowercase hex digits"
		}
		p("| %s | %s | %s |\n", form, code(string(a)), a.Label())
	}
	p("\nmcpdrift's own digest stays v1; it does not follow the whole-Tool form. A revision names the\n")
	p("contract a call is checked against: a call planned with an older revision is rejected as stale\n")
	p("unless an adapter serves it, and every new revision is a release to the reports. A digest over\n")
	p("the whole Tool would make an edit of a description, a title, an icon or a vendor `_meta` key such\n")
	p("a release, and reject the calls in flight, for no change of what a call may send or receive.\n")
	p("It would also give every stored revision a new name at the upgrade. A server that wants the\n")
	p("proposal's identity declares it, and accepts that consequence. Revisions of different forms\n")
	p("compare by their stored definitions, never by their names: the registry's change between a v1\n")
	p("revision and a tool-digest revision of the same definition is no change, and the stale-usage\n")
	p("report does not count a call planned with the one and run under the other as stale\n")
	p("(`internal/registry`, `TestRevisionForms`).\n\n")

	p("### `_meta` keys\n\n")
	p("| Key | On | Meaning |\n| --- | --- | --- |\n")
	for _, m := range []struct{ key, on, doc string }{
		{mcpgo.MetaRevision, "tool definition; `tools/call`", "The revision the server advertises; the revision the client planned the call with."},
		{mcpgo.MetaAdapterID, "`tools/call` result", "The adapter that normalised the call, beside " + code(mcpgo.MetaRevision) + ", the revision that executed it (mcpgo and mcpts write them; `mcpdrift drifttest` reads them, and without them needs the audit to tell an adapted call from a current one)."},
		{mcpgo.MetaRequestID, "`tools/call`", "The call's identity, chosen by the client: what both sides record as `" + otelschema.AttrRequestID + "`."},
		{mcpgo.MetaRunID, "`tools/list`, `tools/call`", "The agent run (`" + otelschema.AttrRunID + "`)."},
		{mcpgo.MetaRetryOf, "retry", "The request id of the call it retries."},
		{mcpgo.MetaRetryAttempt, "retry", "The attempt, 1 for the first retry (a number)."},
		{mcpgo.MetaRetryAutomatic, "retry", "Whether the retry was decided without a person (a boolean)."},
		{mcpgo.MetaRetryRevision, "retry", "The revision the retried call was planned with."},
		{mcpgo.MetaRetryAfter, "retry", "The outcome of the retried call as the client saw it (`" + otelschema.AttrRetryAfter + "`)."},
		{mcpgo.MetaApproval, "`tools/call`", "The approval decision the call runs under (`" + otelschema.AttrApproval + "`)."},
		{mcpgo.MetaIdempotencyKey, "`tools/call`", "The idempotency key of the call's action."},
	} {
		p("| %s | %s | %s |\n", code(m.key), m.on, m.doc)
	}

	p("\n### Server\n\n")
	p("- Answer every `tools/list` with each definition's revision in its `_meta`, and remember, per\n")
	p("  session, the revision of each tool listed to it (the first page of a listing starts afresh).\n")
	p("- Admit each `tools/call` as \"The client snapshot\" above says, and record it as one %s event\n", ev(otelschema.EventCall))
	p("  with its outcome, the client revision and its source, the server revision, the adapter, the\n")
	p("  change class, what the handler reported (side effect started, external requests and target),\n")
	p("  the retry's identity from `_meta`, the approval and the privilege. A retry planned after a change\n")
	p("  (its %s differs from the current revision) carries that change's class.\n", code(mcpgo.MetaRetryRevision))
	p("- A call of an older revision goes to the adapter from it to the current one: only %s or %s\n",
		code(otelschema.ChangeClassAdditive.String()), code(otelschema.ChangeClassBoundedMigration.String()))
	p("  changes are adapted; the adapter's output is validated against the current input schema before\n")
	p("  the handler runs (%s). Without an adapter the call is rejected.\n", code(otelschema.OutcomeNormalized.String()))
	p("- No handler ever runs on arguments its own revision's input schema rejects.\n")
	p("- Send `notifications/tools/list_changed` after the new list is served, once per batch of changes,\n")
	p("  to each initialized session, and record one %s event per tool changed since the session's\n", ev(otelschema.EventListChanged))
	p("  previous notification (%s, %s, %s = the new revision).\n",
		code(otelschema.AttrRevisionBefore), code(otelschema.AttrRevisionAfter), code(otelschema.AttrRevisionServer))
	p("- Emit each adapter as an %s event when it is added, and once more, its window ending, when it is\n", ev(otelschema.EventAdapter))
	p("  removed.\n")
	p("- Emit each tool of the advertised list as an %s event at start, when its revision changes, and\n", ev(otelschema.EventAdvertised))
	p("  periodically (the registry's last advertised time, and the overlap of two revisions during a\n")
	p("  rolling deploy, are only as fresh as the last emission): %s, %s and %s, the\n",
		code(otelschema.AttrToolName), code(otelschema.AttrRevisionServer), code(otelschema.AttrToolDefinition))
	p("  definition as the list serves it without `_meta` and `icons`.\n\n")
	p("A rejection is a tool result with `isError` true, a text for the model, and structured content:\n\n")
	p("| Error code | Outcome | `required_action` | When | Structured content besides `error_code`, `tool`, `side_effect_started` (false) |\n")
	p("| --- | --- | --- | --- | --- |\n")
	p("| %s | %s | %s | planned with an older revision no adapter serves | `current_revision`, `client_revision`, `client_revision_source`, `change_class`, `missing_fields` |\n",
		code(mcpgo.CodeStaleToolSchema), code(otelschema.OutcomeRejectedStale.String()), code(mcpgo.ActionRefreshTools))
	p("| %s | %s | %s | the same, across a %s change | the same |\n",
		code(mcpgo.CodeIncompatibleToolSchema), code(otelschema.OutcomeRejectedIncompatible.String()), code(mcpgo.ActionRefreshTools),
		code(otelschema.ChangeClassSemantic.String()))
	p("| %s | %s | %s when planned with the current revision, %s when the snapshot is unknown or an adapter's output is refused | arguments its revision's input schema rejects | `current_revision`, `client_revision`, `field` (the first at fault), `violations` (`field` as a JSON pointer, `kind` the keyword, `message`; at most 8), `missing_fields`, `invalid_fields` |\n",
		code(mcpgo.CodeInvalidArguments), code(otelschema.OutcomeRejectedInvalid.String()), code(mcpgo.ActionFixArguments), code(mcpgo.ActionRefreshTools))
	p("| %s | %s | %s when there is a `replacement` | the tool was removed | `replacement` |\n",
		code(mcpgo.CodeToolRemoved), code(otelschema.OutcomeRemoved.String()), code(mcpgo.ActionRefreshTools))

	p("\n### Client\n\n")
	p("- Keep the session's snapshot, tool → definition and revision. On\n")
	p("  `notifications/tools/list_changed` (recorded as a %s event), list every page again and swap\n", ev(otelschema.EventListChanged))
	p("  the whole snapshot when the last page is in; record a %s event per tool whose revision changed\n", ev(otelschema.EventRefresh))
	p("  (one without a tool when none did), %s = `%s`, with the lag since the notification; a page that\n",
		code(otelschema.AttrRefreshResult), otelschema.RefreshResultOK)
	p("  fails is one event with `%s` and leaves the snapshot whole. Keep the definitions a swap retired.\n", otelschema.RefreshResultFailed)
	p("- Stamp every `tools/call` with its run id, the revision it was planned with and a request id. A\n")
	p("  call planned before a swap is validated again against the current definition before it is sent:\n")
	p("  still valid, it goes as planned; refused, or its tool gone, it is not sent, the caller gets a\n")
	p("  repairable error shaped as a server's rejection (%s or %s, no change class), and the client\n",
		code(mcpgo.CodeStaleToolSchema), code(mcpgo.CodeToolRemoved))
	p("  records the %s event the server never will (%s or %s, source `%s`).\n",
		ev(otelschema.EventCall), code(otelschema.OutcomeRejectedStale.String()), code(otelschema.OutcomeRemoved.String()), otelschema.RevisionSourceDeclared)
	p("- Repair a rejection: refresh, ask a policy, and retry as a new request whose `_meta` carries the\n")
	p("  retry keys above; record a %s event (the action, automatic or not, the result, the duration, the\n", ev(otelschema.EventRepair))
	p("  retry's request id, %s = the rejected call's). The seed's policy retries alone only after %s, across\n",
		code(otelschema.AttrRetryOf), code(mcpgo.CodeStaleToolSchema))
	p("  a change known to be %s or %s, when no side effect started and every missing required field has a\n",
		code(otelschema.ChangeClassAdditive.String()), code(otelschema.ChangeClassBoundedMigration.String()))
	p("  default that is not sensitive (environment, account, repository, host, user, confirmation, target,\n")
	p("  scope); a change of unknown class is never retried alone.\n")
	p("- A plan may name the result fields a later step needs (paths such as `issue.id`); a result that\n")
	p("  is not an error and lacks one stops the plan with an error carrying the result, and one %s\n", ev(otelschema.EventContractError))
	p("  event per missing field (%s).\n", code(otelschema.AttrContractField))
	return bw.Flush()
}

func codeList(xs []string) string {
	return "`" + strings.Join(xs, "`, `") + "`"
}

// defaulted returns the members with a default, in the SDK's order.
func defaulted(a annotationsJSON) []string {
	var out []string
	for _, k := range a.Members {
		if _, ok := a.Defaults[k]; ok {
			out = append(out, k)
		}
	}
	return out
}
