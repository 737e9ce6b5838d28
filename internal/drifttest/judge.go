package drifttest

import (
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// Answer is what the server answered to one call.
type Answer struct {
	// Error is the error the call ended with instead of a tool result: a
	// transport failure or a JSON-RPC error; "" when a result came.
	Error string `json:"error,omitempty"`
	// IsError is the result's isError.
	IsError bool `json:"is_error,omitempty"`
	// Text is the result's first text content, cut to 500 bytes.
	Text string `json:"text,omitempty"`
	// Structured is the result's structured content, when it is an object.
	Structured map[string]any `json:"structured,omitempty"`
	// Meta is the result's _meta.
	Meta map[string]any `json:"meta,omitempty"`
}

// Verdict is the judgement of one answer.
type Verdict string

// The verdicts: the first four pass, the others are failures.
const (
	// VerdictNormalized: an adapter normalised the call, as the result's
	// _meta (mcpgo.MetaAdapterID) or the server's call event says.
	VerdictNormalized Verdict = "normalized"
	// VerdictRejected: a clean rejection with the seed's facts: an
	// error_code, side_effect_started false, the current revision and a
	// required_action.
	VerdictRejected Verdict = "rejected"
	// VerdictRemoved: a removed tool failed clearly, TOOL_REMOVED with
	// side_effect_started false.
	VerdictRemoved Verdict = "removed"
	// VerdictCurrent: a success on arguments the new revision accepts as
	// they are, for a change that keeps their meaning (additive or a
	// bounded migration): nothing needed adapting.
	VerdictCurrent Verdict = "current"

	// VerdictUnadapted: a success with no adapter on arguments the new
	// input schema rejects, or whose meaning the change altered.
	VerdictUnadapted Verdict = "success_without_adapter"
	// VerdictVague: no tool result (a transport failure or JSON-RPC
	// error), or an error result without an error_code.
	VerdictVague Verdict = "vague_error"
	// VerdictIncomplete: a structured rejection that leaves out one of
	// the seed's facts.
	VerdictIncomplete Verdict = "rejection_without_facts"
	// VerdictAfterSideEffect: a rejection after a side effect started.
	VerdictAfterSideEffect Verdict = "rejection_after_side_effect"
	// VerdictRemovedAnswers: a removed tool that answers success.
	VerdictRemovedAnswers Verdict = "removed_tool_answers"
	// VerdictDroppedField: an adapter normalised the call and dropped a
	// field the call sent, as the server's audit of the call shows.
	VerdictDroppedField Verdict = "adapter_dropped_field"
)

// Pass reports whether the verdict passes the seed's rules.
func (v Verdict) Pass() bool {
	switch v {
	case VerdictNormalized, VerdictRejected, VerdictRemoved, VerdictCurrent:
		return true
	}
	return false
}

// Judge judges the answer to call by the seed's rules and says why.
func Judge(call Call, a Answer) (Verdict, string) {
	if a.Error != "" {
		return VerdictVague, "no tool result, only an error the model cannot repair from: " + a.Error
	}
	if a.IsError {
		return judgeError(call, a)
	}
	if call.Status == toolchange.StatusRemoved {
		return VerdictRemovedAnswers, fmt.Sprintf("`%s` is not in the server's list, yet the call succeeded: it must fail with TOOL_REMOVED before any side effect", call.Tool)
	}
	if id, _ := a.Meta[mcpgo.MetaAdapterID].(string); id != "" {
		rev, _ := a.Meta[mcpgo.MetaRevision].(string)
		return VerdictNormalized, fmt.Sprintf("normalised by adapter `%s` to revision `%s`", id, mcpgo.Short(rev))
	}
	switch {
	case !call.ValidNew:
		return VerdictUnadapted, "succeeded with no adapter on arguments the new input schema rejects: the server ran an old call with a meaning it did not declare"
	case meaningChanged(call.Class):
		return VerdictUnadapted, fmt.Sprintf("succeeded with no adapter after a %s change: the old call ran with the new meaning", call.Class)
	}
	return VerdictCurrent, "the new revision accepts these arguments as they are, and the change keeps their meaning"
}

// judgeError judges an error result.
func judgeError(call Call, a Answer) (Verdict, string) {
	code, _ := a.Structured["error_code"].(string)
	if code == "" {
		return VerdictVague, fmt.Sprintf("an error without error_code, side_effect_started or the current revision: %q", a.Text)
	}
	started, said := a.Structured["side_effect_started"].(bool)
	switch {
	case started:
		return VerdictAfterSideEffect, fmt.Sprintf("%s after a side effect had started: the old call was executed in part", code)
	case !said:
		return VerdictIncomplete, code + " does not say whether a side effect started (side_effect_started)"
	}
	if code == mcpgo.CodeToolRemoved {
		if r, _ := a.Structured["replacement"].(string); r != "" {
			return VerdictRemoved, fmt.Sprintf("TOOL_REMOVED naming `%s`, no side effect started", r)
		}
		return VerdictRemoved, "TOOL_REMOVED, no side effect started"
	}
	var missing []string
	rev, _ := a.Structured["current_revision"].(string)
	if rev == "" {
		missing = append(missing, "current_revision")
	}
	action, _ := a.Structured["required_action"].(string)
	if action == "" {
		missing = append(missing, "required_action")
	}
	if len(missing) > 0 {
		return VerdictIncomplete, fmt.Sprintf("%s without %s", code, strings.Join(missing, " or "))
	}
	return VerdictRejected, fmt.Sprintf("%s before any side effect, current revision `%s`, %s", code, mcpgo.Short(rev), action)
}
