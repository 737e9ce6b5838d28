package otelschema

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// testNow is the clock of every test decoder.
var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// testTime is the default timestamp of test records: a minute before testNow.
var testTime = testNow.Add(-time.Minute)

func testDecoder() *Decoder {
	return &Decoder{Limits: DefaultLimits(), Now: func() time.Time { return testNow }}
}

// kv is one attribute; lists of them keep their order, unlike maps.
type kv struct {
	k string
	v any // string, int, int64, float64, bool, []byte, map[string]any, []any or nil
}

func putAll(t testing.TB, m pcommon.Map, attrs []kv) {
	t.Helper()
	for _, a := range attrs {
		if err := m.PutEmpty(a.k).FromRaw(a.v); err != nil {
			t.Fatalf("cannot put %s: %v", a.k, err)
		}
	}
}

// testResource is the resource of test requests.
var testResource = []kv{
	{AttrServiceName, "billing-mcp"},
	{AttrServiceVersion, "1.4.2"},
	{AttrServiceInstanceID, "pod-7"},
	{AttrServiceNamespace, "payments"},
	{AttrEnvironment, "production"},
}

// callAttrs returns the attributes of a valid call record.
func callAttrs(extra ...kv) []kv {
	return append([]kv{
		{AttrToolName, "create_invoice"},
		{AttrOutcome, "normalized"},
	}, extra...)
}

// logsWith builds a request of one resource and one scope holding one
// record per attribute list, each named name at testTime.
func logsWith(t testing.TB, resource []kv, name string, records ...[]kv) plog.Logs {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	putAll(t, rl.Resource().Attributes(), resource)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("github.com/mcpdrift/mcpdrift/otelschema/mcpgo")
	for _, attrs := range records {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(name)
		lr.SetTimestamp(pcommon.NewTimestampFromTime(testTime))
		putAll(t, lr.Attributes(), attrs)
	}
	return ld
}

// decodeOne decodes a request expected to hold one record and returns the
// event, or the rejection, and the result; DecodeLogsProto must decode its
// protobuf encoding alike.
func decodeOne(t testing.TB, d *Decoder, ld plog.Logs) (Event, error, Result) {
	t.Helper()
	checkWire(t, d, ld)
	events, res := d.DecodeLogs(ld, nil)
	if n := res.Accepted + res.Rejected + res.Ignored; n != 1 {
		t.Fatalf("result counts %d records, want 1: %+v", n, res)
	}
	if len(events) != res.Accepted {
		t.Fatalf("%d events for %d accepted", len(events), res.Accepted)
	}
	var err error
	if len(res.Errors) > 0 {
		err = res.Errors[0]
	}
	if res.Rejected != len(res.Errors) {
		t.Fatalf("%d rejected, %d errors", res.Rejected, len(res.Errors))
	}
	if len(events) == 1 {
		return events[0], nil, res
	}
	return Event{}, err, res
}
