package otelschema

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// roundTrip encodes events into one request — one resource per distinct
// resource, as SDKs send them — marshals it to protobuf and back, and
// decodes it with no limits.
func roundTrip(t *testing.T, events []Event) []Event {
	t.Helper()
	ld := plog.NewLogs()
	for i := range events {
		rl := ld.ResourceLogs().AppendEmpty()
		EncodeResource(&events[i], rl.Resource())
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName("github.com/mcpdrift/mcpdrift/otelschema")
		EncodeLogRecord(&events[i], sl.LogRecords().AppendEmpty())
	}
	data, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatalf("cannot marshal request: %v", err)
	}
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(data); err != nil {
		t.Fatalf("cannot unmarshal request of %d bytes: %v", len(data), err)
	}
	var d Decoder
	got, res := d.DecodeLogs(req.Logs(), nil)
	if res.Rejected != 0 || res.Ignored != 0 || res.Accepted != len(events) {
		t.Fatalf("decode: %+v, want %d accepted: %s", res, len(events), res.Message())
	}
	return got
}

// withID returns e with the ID the decoder derives for it (a record
// without a body).
func withID(e Event) Event {
	e.ID = eventID(&e, "")
	return e
}

func checkRoundTrip(t *testing.T, events []Event) {
	t.Helper()
	want := make([]Event, len(events))
	for i, e := range events {
		want[i] = withID(e)
	}
	got := roundTrip(t, events)
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("event %d: decode(encode(e)) differs:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

var (
	testTraceID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	testSpanID  = [8]byte{8, 7, 6, 5, 4, 3, 2, 1}
)

func TestEncodeRoundTrip(t *testing.T) {
	ts := testTime.UnixNano()
	res := Event{
		Service: "billing-mcp", ServiceVersion: "1.4.2", ServiceInstance: "pod-7",
		ServiceNamespace: "payments", Environment: "production",
	}
	with := func(f func(e *Event)) Event {
		e := res
		f(&e)
		return e
	}
	tests := []struct {
		name string
		e    Event
	}{
		{"minimal call, no resource", Event{Name: EventCall, Time: ts, Tool: "create_invoice", Outcome: OutcomeCurrent}},
		{"call with every call field", with(func(e *Event) {
			*e = Event{
				Name: EventCall, Time: ts, TraceID: testTraceID, SpanID: testSpanID,
				Service: e.Service, ServiceVersion: e.ServiceVersion, ServiceInstance: e.ServiceInstance,
				ServiceNamespace: e.ServiceNamespace, Environment: e.Environment,
				Tool: "create_invoice", Method: "tools/call", RequestID: "42", SessionID: "sess-1",
				ProtocolVersion: "2025-06-18", ClientName: "claude-code", ClientVersion: "2.1.0",
				RevisionClient: "r3", RevisionServer: "r5", RevisionValidated: "r4",
				Outcome: OutcomeNormalized, AdapterID: "adapter-r3-r5", ChangeClass: ChangeClassBoundedMigration,
				SideEffectStarted: true, ExternalRequests: 2, ExternalTarget: "stripe",
				ErrorCode: "STALE_TOOL_SCHEMA", RequiredAction: "refresh_tools",
				RetryOf: "41", RetryAttempt: 1, IdempotencyKey: "idem-9",
				Approval: ApprovalPerCall, Privilege: PrivilegeCredentialed, RunID: "run-3", SessionAgeS: 86400,
				ArgsRaw: `{"amount":10}`, ArgsNormalized: `{"amount":10,"currency":"EUR"}`,
			}
		})},
		{"repair", with(func(e *Event) {
			e.Name, e.Time, e.Tool, e.RepairAction = EventRepair, ts, "create_invoice", RepairActionHumanApproval
			e.RepairAutomatic, e.RepairResult, e.RepairDurationMs = true, RepairResultFailure, 1500
		})},
		{"refresh", with(func(e *Event) {
			e.Name, e.Time, e.RevisionBefore, e.RevisionAfter = EventRefresh, ts, "r3", "r5"
			e.RefreshResult, e.NotificationLagMs = RefreshResultOK, 250
		})},
		{"adapter", with(func(e *Event) {
			e.Name, e.Time, e.Tool, e.AdapterID = EventAdapter, ts, "create_invoice", "adapter-r3-r5"
			e.AdapterRevisionFrom, e.AdapterRevisionTo, e.AdapterWindowEnd = "r3", "r5", 1780000000
		})},
		{"contract error", with(func(e *Event) {
			e.Name, e.Time, e.ContractField = EventContractError, ts, "invoice.id"
		})},
		{"large ints", with(func(e *Event) {
			e.Name, e.Time, e.Tool, e.Outcome = EventCall, ts, "t", OutcomeFailed
			e.ExternalRequests, e.SessionAgeS = 1, math.MaxInt64
		})},
		{"extra attributes, a resource key among them", with(func(e *Event) {
			e.Name, e.Time, e.Tool, e.Outcome = EventCall, ts, "t", OutcomeCurrent
			e.Attributes = map[string]string{"http.route": "/mcp", AttrServiceName: "on-the-record", "z": ""}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRoundTrip(t, []Event{tt.e}) })
	}
}

// TestEncodeValues checks what the encoder writes: native types, nothing
// for zero fields, resource attributes only on the resource, and no extra
// attribute that the decoder would read as a convention.
func TestEncodeValues(t *testing.T) {
	e := Event{
		Name: EventCall, Time: 7, Service: "svc", Tool: "t", Outcome: OutcomeRejectedStale,
		SideEffectStarted: true, RetryAttempt: 3, AdapterWindowEnd: 99,
		Attributes: map[string]string{AttrOutcome: "current", AttrEventName: "dev.mcpdrift.refresh", "k": "v"},
	}
	lr := plog.NewLogRecord()
	EncodeLogRecord(&e, lr)
	res := pcommon.NewResource()
	EncodeResource(&e, res)

	if got := lr.EventName(); got != "dev.mcpdrift.call" {
		t.Errorf("EventName = %q", got)
	}
	if got := lr.Timestamp(); got != 7 {
		t.Errorf("Timestamp = %d", got)
	}
	want := map[string]any{
		AttrToolName: "t", AttrOutcome: "rejected_stale", AttrSideEffectStarted: true,
		AttrRetryAttempt: int64(3), AttrAdapterWindowEnd: int64(99), "k": "v",
	}
	if got := lr.Attributes().AsRaw(); !reflect.DeepEqual(got, want) {
		t.Errorf("record attributes:\n got %v\nwant %v", got, want)
	}
	if got := res.Attributes().AsRaw(); !reflect.DeepEqual(got, map[string]any{AttrServiceName: "svc"}) {
		t.Errorf("resource attributes: %v", got)
	}
}

// randString returns a short random UTF-8 string, sometimes with runes
// outside ASCII, never empty.
func randString(r *rand.Rand) string {
	const alphabet = "abcXYZ019 _-./:{}\"\\é漢🙂"
	runes := []rune(alphabet)
	var b strings.Builder
	for n := 1 + r.IntN(12); n > 0; n-- {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// randValue returns a random non-zero value of a's type.
func randValue(r *rand.Rand, a *Attribute) decoded {
	switch a.Type {
	case TypeString:
		return decoded{s: randString(r)}
	case TypeBool:
		return decoded{b: true}
	case TypeEnum:
		return decoded{i: int64(1 + r.IntN(len(a.Values)))}
	}
	for {
		var i int64
		// Counts and durations: never negative.
		switch r.IntN(2) {
		case 0:
			i = int64(r.Uint64() >> 1)
		default:
			i = r.Int64N(1 << 20)
		}
		if i != 0 {
			return decoded{i: i}
		}
	}
}

// randEvent returns a valid random event: every field of the Registry set
// with probability p, the event's required attributes always.
func randEvent(r *rand.Rand, p float64) Event {
	e := Event{
		Name: EventName(1 + r.IntN(len(eventNames)-1)),
		Time: 1 + r.Int64N(math.MaxInt64),
	}
	if r.IntN(2) == 0 {
		for i := range e.TraceID {
			e.TraceID[i] = byte(r.Uint32())
		}
		for i := range e.SpanID {
			e.SpanID[i] = byte(r.Uint32())
		}
	}
	for i := range registry {
		a := &registry[i]
		if a.set != nil && (r.Float64() < p || a.RequiredOn(e.Name)) {
			a.set(&e, randValue(r, a))
		}
	}
	if e.Name == EventAdvertised {
		// A definition must be a JSON object of the event's tool.
		def, _ := json.Marshal(map[string]any{"name": e.Tool, "inputSchema": map[string]any{"type": "object"}})
		e.Definition = string(def)
	}
	if n := r.IntN(4); n > 0 {
		e.Attributes = make(map[string]string, n)
		for range n {
			k := "x." + randString(r)
			if r.IntN(8) == 0 {
				k = AttrServiceVersion // a resource key on the record stays extra
			}
			e.Attributes[k] = randString(r)
		}
	}
	return e
}

// TestEncodeRoundTripRandom checks decode(encode(e)) == e, ID included, for
// random events, and that the random events set every field of Event at
// least once, so that a field the Registry does not cover fails here.
func TestEncodeRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 2000
	events := make([]Event, n)
	for i := range events {
		events[i] = randEvent(r, []float64{0.1, 0.5, 1}[i%3])
	}
	checkRoundTrip(t, events)

	ev := reflect.TypeFor[Event]()
	for f := range ev.NumField() {
		name := ev.Field(f).Name
		if name == "ID" {
			continue // derived by the decoder, compared above
		}
		if name == "ClientView" {
			continue // the span kind sets it, no attribute
		}
		set := false
		for i := range events {
			if !reflect.ValueOf(events[i]).Field(f).IsZero() {
				set = true
				break
			}
		}
		if !set {
			t.Errorf("Event.%s is never set by randEvent: is it missing from the Registry?", name)
		}
	}
}
