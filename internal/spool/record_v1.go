package spool

import (
	"math"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Version 1 of the payload, written by releases before store.EventColumns
// declared the columns: the event's fields in a fixed order. It is read so
// that a spool such a release left is replayed after an upgrade; nothing
// writes it any more (record_v1_test.go keeps its encoder, to check that
// it is read).
const (
	payloadVersionV1 = 1
	// minEventSizeV1 is the fewest bytes one version 1 event takes, used
	// to bound allocations when decoding an untrusted count.
	minEventSizeV1 = 8 + 1 + 8 + 16 + 8 + 1
)

// The bits of a version 1 event's flags byte.
const (
	flagSideEffect = 1 << iota
	flagRepairAutomatic
)

func decodeEventV1(r *reader, e *otelschema.Event) {
	e.ID = r.u64("id")
	e.Name = otelschema.EventName(r.byte1("name"))
	e.Time = int64(r.u64("time"))
	copy(e.TraceID[:], r.bytes(16, "trace id"))
	copy(e.SpanID[:], r.bytes(8, "span id"))
	for _, p := range []*string{
		&e.Service, &e.ServiceVersion, &e.ServiceInstance, &e.ServiceNamespace, &e.Environment,
		&e.Tool, &e.Method, &e.RequestID, &e.SessionID, &e.ProtocolVersion, &e.ClientName, &e.ClientVersion,
		&e.RevisionClient, &e.RevisionServer, &e.RevisionValidated, &e.RevisionBefore, &e.RevisionAfter,
		&e.AdapterID, &e.ExternalTarget, &e.ErrorCode, &e.RequiredAction,
		&e.RetryOf, &e.IdempotencyKey, &e.RunID,
		&e.AdapterRevisionFrom, &e.AdapterRevisionTo, &e.ContractField, &e.ArgsRaw, &e.ArgsNormalized,
	} {
		*p = r.str("string field")
	}
	enums := r.bytes(8, "enums")
	if enums != nil {
		e.Outcome = otelschema.Outcome(enums[0])
		e.ChangeClass = otelschema.ChangeClass(enums[1])
		e.RepairAction = otelschema.RepairAction(enums[2])
		e.RepairResult = otelschema.RepairResult(enums[3])
		e.Approval = otelschema.Approval(enums[4])
		e.Privilege = otelschema.Privilege(enums[5])
		e.RefreshResult = otelschema.RefreshResult(enums[6])
		e.SideEffectStarted = enums[7]&flagSideEffect != 0
		e.RepairAutomatic = enums[7]&flagRepairAutomatic != 0
	}
	for _, p := range []*int64{&e.ExternalRequests, &e.RetryAttempt, &e.RepairDurationMs, &e.SessionAgeS, &e.NotificationLagMs, &e.AdapterWindowEnd} {
		*p = r.varint("integer field")
	}
	n := r.uvarint("attribute count")
	if r.err != nil {
		return
	}
	if n > uint64(len(r.b)/2) || n > math.MaxInt32 {
		r.fail("attributes")
		return
	}
	if n > 0 {
		e.Attributes = make(map[string]string, n)
		for range n {
			k := r.str("attribute key")
			e.Attributes[k] = r.str("attribute value")
		}
	}
}
