// Package drifttest is the seed's core test run against a live MCP server
// before a deploy: it takes the tools/list an agent planned with (the old
// list), lists the server under test, and for each tool whose definition
// changed or was removed sends calls the old input schema accepts — the
// counterexample the release check found, then instances built from the
// old schema — once as a client that declares the old snapshot and once as
// a stock client that declares nothing. Each answer is judged by the
// seed's rules: normalised by an adapter, rejected cleanly (a structured
// error that says whether a side effect started, the current revision and
// what to do), or a failure (a success with no adapter on arguments the
// new revision rejects or whose meaning changed, a vague error, a
// rejection after a side effect started, a removed tool that answers
// success). With mcpdrift's API (Audit) it also checks each answer
// against the server's call event, sends arguments agents recorded with
// the old revision, and runs in reverse: the calls an adapter serves,
// sent to the build without it, weighed by who its retirement would hit.
// It sends real calls: the server must be a test deployment.
package drifttest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/argschema"
	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Pass says how the client of one pass declares the snapshot it planned
// with.
type Pass string

// The passes, in the order they run.
const (
	// PassDeclared: the client declares the old revision in the call's
	// _meta (mcpgo.MetaRevision), as a client built from the old snapshot
	// with mcpdrift's instrumentation does, and a request id
	// (mcpgo.MetaRequestID) the server's call event records.
	PassDeclared Pass = "declared"
	// PassStock: a stock MCP client that sends no _meta at all; the server
	// knows the snapshot only from the arguments.
	PassStock Pass = "stock"
)

// Passes are both passes, in order.
var Passes = []Pass{PassDeclared, PassStock}

// Call is one argument object to send to one tool.
type Call struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Status is the tool's status in the release check: changed or
	// removed.
	Status toolchange.Status `json:"status"`
	// Class is the check's change class of the tool.
	Class string `json:"class"`
	// OldRevision is the revision the old list advertises, the one the
	// declared pass names; NewRevision the one the server advertises now
	// ("" for a removed tool).
	OldRevision string `json:"old_revision"`
	NewRevision string `json:"new_revision,omitempty"`
	// Kind says where the arguments come from: witness (the check's
	// counterexample: valid under the old input schema, invalid under the
	// new one), recorded (an agent's call planned with the old revision,
	// from mcpdrift's audit) or old_call (an instance of the old input
	// schema).
	Kind string `json:"kind"`
	// Arguments are the arguments sent; the old input schema accepts them.
	Arguments json.RawMessage `json:"arguments"`
	// ValidNew says whether the new input schema accepts them as they are.
	ValidNew bool `json:"valid_new"`
	// Redacted says that recorded arguments hold a redaction marker where
	// the agent sent a secret: the marker is sent, never the secret, which
	// mcpdrift does not keep.
	Redacted bool `json:"redacted,omitempty"`
}

// The kinds of calls.
const (
	KindWitness  = "witness"
	KindRecorded = "recorded"
	KindOldCall  = "old_call"
)

// Plan builds the calls for each changed or removed tool of report (the
// release check of old against new), at most perTool argument objects per
// tool: the check's witness first, then the arguments recorded from real
// calls planned with the old revision (recorded, by tool; Audit.Sample),
// then instances of the old input schema. A tool whose old schema yields
// no instance gets none.
func Plan(old, new toolchange.List, report toolchange.Report, perTool int, recorded map[string][]json.RawMessage) ([]Call, error) {
	var out []Call
	for _, c := range report.Tools {
		if c.Status != toolchange.StatusChanged && c.Status != toolchange.StatusRemoved {
			continue
		}
		o, _ := old.Tool(c.Tool)
		var newSchema *argschema.Schema
		if n, ok := new.Tool(c.Tool); ok && c.Status == toolchange.StatusChanged {
			s, err := argschema.Compile(n.Input)
			if err != nil {
				return nil, fmt.Errorf("tool %q: the new input schema does not compile: %w", c.Tool, err)
			}
			newSchema = s
		}
		seen := map[string]bool{}
		add := func(kind string, args json.RawMessage) {
			if len(seen) >= perTool || seen[string(args)] {
				return
			}
			seen[string(args)] = true
			call := Call{Tool: c.Tool, Status: c.Status, Class: c.Class, OldRevision: c.OldRevision, NewRevision: c.NewRevision,
				Kind: kind, Arguments: args}
			call.ValidNew = newSchema != nil && newSchema.Validate(args) == nil
			call.Redacted = strings.Contains(string(args), redact.MarkerPrefix)
			out = append(out, call)
		}
		if c.OldArguments != nil && c.OldArguments.Answer == toolchange.AnswerNo && len(c.OldArguments.Witness) > 0 {
			add(KindWitness, c.OldArguments.Witness)
		}
		for _, args := range recorded[c.Tool] {
			add(KindRecorded, args)
		}
		inst, err := toolchange.Instances(o.Input, perTool+1)
		if err != nil {
			return nil, fmt.Errorf("tool %q: the old input schema: %w", c.Tool, err)
		}
		for _, args := range inst {
			add(KindOldCall, args)
		}
	}
	return out, nil
}

// meaningChanged reports whether a change class says the same arguments
// no longer mean the same thing: then a call the new revision accepts as
// it came still runs with a meaning its planner did not intend.
func meaningChanged(class string) bool {
	return class == otelschema.ChangeClassSemantic.String() || class == otelschema.ChangeClassAuthority.String()
}
