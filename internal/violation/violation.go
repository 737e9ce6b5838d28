// Package violation writes a safety violation's detail, the sentence the
// violations report shows for each row, from the facts of its event. The
// materialised views store those facts (violation_candidates,
// adapter_call_candidates, since schema version 17) and the raw query
// selects them from the events; both readers call Detail, so a violation
// reads the same whichever answered, and its wording changes in Go
// without a migration.
package violation

import (
	"strconv"
	"strings"
)

// Kinds of violation (see queries/violations.sql for their definitions).
const (
	KindSideEffectRejected = "side_effect_rejected"
	KindMixedRevision      = "mixed_revision"
	KindRemovedToolSuccess = "removed_tool_success"
	KindRetryAcrossChange  = "retry_across_change"
)

// EventRepair is the event name of a repair; a retry across a change is a
// call or a refresh_retry repair.
const EventRepair = "mcp.drift.repair"

// Facts are the fields of a violation's event its detail is written from.
// The zero value of a field is the event's "not said" ("" or 0), as the
// events table stores it.
type Facts struct {
	Kind string
	// EventName tells a retry's call from its repair.
	EventName         string
	Outcome           string
	ChangeClass       string
	RevisionValidated string
	RevisionServer    string
	// AdapterID names the adapter of a call through a removal adapter:
	// a removed_tool_success whose own change class is not removal.
	AdapterID        string
	ErrorCode        string
	ExternalTarget   string
	ExternalRequests int64
	RetryOf          string
	RetryAttempt     int64
	RepairResult     string
}

// Detail writes the detail of a violation, as the views wrote it before
// version 17: "rejected_stale with E_STALE after its side effect had
// started on payments (external requests: 2)". An unknown kind has none.
func Detail(f Facts) string {
	var b strings.Builder
	switch f.Kind {
	case KindSideEffectRejected:
		b.WriteString(f.Outcome)
		if f.ErrorCode != "" {
			b.WriteString(" with " + f.ErrorCode)
		}
		b.WriteString(" after its side effect had started")
		if f.ExternalTarget != "" {
			b.WriteString(" on " + f.ExternalTarget)
		}
		if f.ExternalRequests > 0 {
			b.WriteString(" (external requests: " + strconv.FormatInt(f.ExternalRequests, 10) + ")")
		}
	case KindMixedRevision:
		b.WriteString("validated under revision " + f.RevisionValidated + ", executed under revision " + f.RevisionServer)
	case KindRemovedToolSuccess:
		if f.ChangeClass == "removal" {
			b.WriteString(f.Outcome + " call to a removed revision (change class removal)")
		} else {
			b.WriteString(f.Outcome + " call to a removed tool through removal adapter " + f.AdapterID)
		}
	case KindRetryAcrossChange:
		if f.EventName == EventRepair {
			b.WriteString("automatic refresh_retry (" + f.RepairResult + ") across a change of class " + f.ChangeClass)
		} else {
			b.WriteString("automatic retry of " + f.RetryOf + " (attempt " + strconv.FormatInt(f.RetryAttempt, 10) + ") across a change of class " + f.ChangeClass)
		}
	}
	return b.String()
}
