package spool

import (
	"encoding/binary"
	"reflect"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// appendPayloadV1 is the version 1 encoding of r.
func appendPayloadV1(b []byte, r *Record) []byte {
	b = append(b, payloadVersionV1)
	b = appendString(b, r.Tenant)
	b = appendString(b, r.Token)
	b = binary.AppendUvarint(b, uint64(len(r.Events)))
	for i := range r.Events {
		b = appendEventV1(b, &r.Events[i])
	}
	return b
}

func appendEventV1(b []byte, e *otelschema.Event) []byte {
	b = binary.LittleEndian.AppendUint64(b, e.ID)
	b = append(b, byte(e.Name))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Time))
	b = append(b, e.TraceID[:]...)
	b = append(b, e.SpanID[:]...)
	for _, s := range []string{
		e.Service, e.ServiceVersion, e.ServiceInstance, e.ServiceNamespace, e.Environment,
		e.Tool, e.Method, e.RequestID, e.SessionID, e.ProtocolVersion, e.ClientName, e.ClientVersion,
		e.RevisionClient, e.RevisionServer, e.RevisionValidated, e.RevisionBefore, e.RevisionAfter,
		e.AdapterID, e.ExternalTarget, e.ErrorCode, e.RequiredAction,
		e.RetryOf, e.IdempotencyKey, e.RunID,
		e.AdapterRevisionFrom, e.AdapterRevisionTo, e.ContractField, e.ArgsRaw, e.ArgsNormalized,
	} {
		b = appendString(b, s)
	}
	b = append(b, byte(e.Outcome), byte(e.ChangeClass), byte(e.RepairAction), byte(e.RepairResult),
		byte(e.Approval), byte(e.Privilege), byte(e.RefreshResult), flags(e))
	for _, v := range []int64{e.ExternalRequests, e.RetryAttempt, e.RepairDurationMs, e.SessionAgeS, e.NotificationLagMs, e.AdapterWindowEnd} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(e.Attributes)))
	if len(e.Attributes) > 0 {
		keys := make([]string, 0, len(e.Attributes))
		for k := range e.Attributes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = appendString(b, k)
			b = appendString(b, e.Attributes[k])
		}
	}
	return b
}

func flags(e *otelschema.Event) byte {
	var f byte
	if e.SideEffectStarted {
		f |= flagSideEffect
	}
	if e.RepairAutomatic {
		f |= flagRepairAutomatic
	}
	return f
}

// TestReadsVersion1: a record a release before the column declaration
// wrote (version 1) replays as the same record.
func TestReadsVersion1(t *testing.T) {
	want := testRecord(3, 4)
	p := appendPayloadV1(nil, &want)
	got, err := decodePayload(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(want)) {
		t.Fatalf("version 1 record decoded as\n%+v\nwant\n%+v", got, want)
	}
}

// TestRecordColumnsChange: a record written with other columns than the
// declaration's — one since removed, one since added, one whose kind
// changed — replays: the known columns filled, the others skipped or left
// zero.
func TestRecordColumnsChange(t *testing.T) {
	b := []byte{payloadVersion}
	b = appendString(b, "acme")
	b = appendString(b, "tok")
	b = binary.AppendUvarint(b, 4)
	for _, c := range []struct {
		name string
		kind store.Kind
	}{{"event_id", store.KindUInt64}, {"removed_since", store.KindString}, {"tool", store.KindString}, {"outcome", store.KindString}} {
		b = appendString(b, c.name)
		b = append(b, byte(c.kind))
	}
	b = binary.AppendUvarint(b, 2)
	for i := range 2 {
		b = binary.LittleEndian.AppendUint64(b, uint64(100+i))
		b = appendString(b, "gone")
		b = appendString(b, "search")
		b = appendString(b, "normalized")
	}
	rec, err := decodePayload(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []otelschema.Event{{ID: 100, Tool: "search"}, {ID: 101, Tool: "search"}}
	if rec.Tenant != "acme" || rec.Token != "tok" || !reflect.DeepEqual(rec.Events, want) {
		t.Fatalf("decoded %+v, want %+v", rec, want)
	}
}
