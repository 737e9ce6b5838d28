package otelschema

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// checkKeyValueFast checks readKeyValueFast against readKeyValue on b: when
// it takes b, it reads what readKeyValue reads, and readKeyValue finds no
// error; when it does not, it leaves kv as it was. It reports whether the
// fast path took b.
func checkKeyValueFast(t *testing.T, b []byte) bool {
	t.Helper()
	before := wireAttr{key: []byte("before"), val: wireValue{typ: 9, num: 7}}
	fast := before
	took := readKeyValueFast(b, &fast)
	var slow wireAttr
	err := readKeyValue(b, 0, &slow)
	if !took {
		if !reflect.DeepEqual(fast, before) {
			t.Fatalf("% x: declined, kv changed to %+v", b, fast)
		}
		return false
	}
	if err != nil {
		t.Fatalf("% x: fast path reads %+v, readKeyValue refuses: %v", b, fast, err)
	}
	if string(fast.key) != string(slow.key) || fast.val.typ != slow.val.typ ||
		string(fast.val.raw) != string(slow.val.raw) || fast.val.num != slow.val.num {
		t.Fatalf("% x: fast path reads %+v, readKeyValue %+v", b, fast, slow)
	}
	return true
}

func TestReadKeyValueFast(t *testing.T) {
	double := pb(nil).fixed64(4, math.Float64bits(1.5))
	valueFirst := func(k string, v pb) pb { return pb(nil).bytes(2, v).str(1, k) }
	for _, tc := range []struct {
		name string
		kv   pb
		fast bool
	}{
		{"string", kvStr("dev.mcpdrift.outcome", "current"), true},
		{"value first, as pdata writes", valueFirst("dev.mcpdrift.outcome", strVal("current")), true},
		{"empty key", kvStr("", "v"), true},
		{"empty string", kvStr("k", ""), true},
		{"int", kvOf("k", pb(nil).varint(3, 1<<40)), true},
		{"negative int", kvOf("k", pb(nil).varint(3, math.MaxUint64)), true},
		{"bool true", kvOf("k", pb(nil).varint(2, 1)), true},
		{"bool of 2", kvOf("k", pb(nil).varint(2, 2)), true},
		{"bool false", valueFirst("k", pb(nil).varint(2, 0)), true},
		{"double", kvOf("k", double), true},
		{"string of 125 bytes", kvStr("k", strings.Repeat("v", 125)), true},
		{"key of 127 bytes", kvStr(strings.Repeat("k", 127), "v"), true},
		// Declined: readKeyValue reads them, or refuses them.
		{"value of 128 bytes", kvStr("k", strings.Repeat("v", 126)), false},
		{"string of 128 bytes", kvStr("k", strings.Repeat("v", 128)), false},
		{"key of 128 bytes", kvStr(strings.Repeat("k", 128), "v"), false},
		{"empty", nil, false},
		{"key only", pb(nil).str(1, "k"), false},
		{"value only", pb(nil).bytes(2, strVal("v")), false},
		{"empty value", kvOf("k", nil), false},
		{"key twice", kvStr("k", "v").str(1, "j"), false},
		{"value twice", pb(nil).bytes(2, strVal("a")).bytes(2, strVal("b")), false},
		{"key strindex", kvStr("k", "v").varint(3, 1), false},
		{"unknown field", kvStr("k", "v").varint(9, 1), false},
		{"trailing byte", kvStr("k", "v").raw(0), false},
		{"truncated", kvStr("k", "v")[:5], false},
		{"two string fields", kvOf("k", strVal("a").str(1, "b")), false},
		{"string then int", kvOf("k", strVal("a").varint(3, 1)), false},
		{"bytes", kvOf("k", pb(nil).str(7, "raw")), false},
		{"array", kvOf("k", pb(nil).bytes(5, pb(nil).bytes(1, strVal("x")))), false},
		{"map", kvOf("k", pb(nil).bytes(6, nil)), false},
		{"strindex", kvOf("k", pb(nil).varint(8, 1)), false},
		{"int truncated", kvOf("k", pb(nil).raw(3<<3, 0x80)), false},
		{"int with a trailing byte", kvOf("k", pb(nil).varint(3, 1).raw(0)), false},
		{"int of 11 bytes", kvOf("k", pb(nil).raw(3<<3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1)), false},
		{"double truncated", kvOf("k", double[:8]), false},
		{"double as varint", kvOf("k", pb(nil).varint(4, 1)), false},
		{"string as varint", kvOf("k", pb(nil).varint(1, 1)), false},
		{"key as varint", pb(nil).varint(1, 1).bytes(2, strVal("v")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkKeyValueFast(t, tc.kv); got != tc.fast {
				t.Errorf("% x: fast path taken %v, want %v", []byte(tc.kv), got, tc.fast)
			}
		})
	}
}

// FuzzReadKeyValueFast checks readKeyValueFast against readKeyValue.
func FuzzReadKeyValueFast(f *testing.F) {
	f.Add([]byte(kvStr("dev.mcpdrift.outcome", "current")))
	f.Add([]byte(pb(nil).bytes(2, pb(nil).varint(3, 7)).str(1, "k")))
	f.Add([]byte(kvOf("k", pb(nil).fixed64(4, 1))))
	f.Add([]byte(kvOf("k", pb(nil).varint(2, 1))))
	f.Fuzz(func(t *testing.T, b []byte) { checkKeyValueFast(t, b) })
}

func TestConventionKey(t *testing.T) {
	for i := range registry {
		a := &registry[i]
		k, ok := conventionKey([]byte(a.Name))
		if !ok || k.attr != a || k.name != a.Name || k.id != i || k.intern == uninterned[a.Name] {
			t.Errorf("%s: %+v, %v", a.Name, k, ok)
		}
		for _, other := range []string{a.Name[:len(a.Name)-1], a.Name + "x", strings.ToUpper(a.Name)} {
			if k, ok := conventionKey([]byte(other)); ok {
				t.Errorf("%s: %+v", other, k)
			}
		}
	}
	for _, other := range []string{"", "k", "http.route"} {
		if k, ok := conventionKey([]byte(other)); ok {
			t.Errorf("%q: %+v", other, k)
		}
	}
}

// TestDecodeLogsProtoLimitsPerCall decodes the same records with decoders
// of different limits in turn: what a value decoded into under the limits
// of one call does not carry over to the next.
func TestDecodeLogsProtoLimitsPerCall(t *testing.T) {
	tight := &Decoder{Limits: Limits{MaxValueBytes: 8}, Now: testDecoder().Now}
	// Only the session id is over the tight limit.
	attrs := []kv{{AttrToolName, "pay"}, {AttrOutcome, "current"}, {AttrSessionID, "session-0123456789"}}
	ld := logsWith(t, []kv{{AttrServiceName, "svc"}}, "dev.mcpdrift.call", attrs, attrs)
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		d, accepted := testDecoder(), 2
		if i%2 == 1 {
			d, accepted = tight, 0
		}
		CompareDecoders(t, d, b)
		if events, res, err := d.DecodeLogsProto(b, nil); err != nil || res.Accepted != accepted || len(events) != accepted {
			t.Fatalf("call %d: %d events, %+v, %v; want %d accepted", i, len(events), res, err, accepted)
		}
	}
}

// TestDecodeLogsProtoCopies checks that the events' strings survive the
// request's bytes, overwritten, and later calls, which copy their own
// strings after them.
func TestDecodeLogsProtoCopies(t *testing.T) {
	d := testDecoder()
	request := func(i int) []byte {
		var records [][]kv
		for j := range 100 {
			records = append(records, callAttrs(
				kv{AttrRequestID, strings.Repeat("r", i+j%7)},
				kv{AttrArgsRaw, strings.Repeat("a", 10*j)},
				kv{AttrArgsNormalized, strings.Repeat("n", copyMax+j%2)},
				kv{"x.extra", strings.Repeat("x", j)}))
		}
		b, err := plogotlp.NewExportRequestFromLogs(logsWith(t, testResource, "dev.mcpdrift.call", records...)).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var got, want [][]Event
	for i := range 4 {
		b := request(i)
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		w, _ := d.DecodeLogs(req.Logs(), nil)
		g, res, err := d.DecodeLogsProto(b, nil)
		if err != nil || res.Accepted != 100 {
			t.Fatalf("request %d: %+v, %v", i, res, err)
		}
		for j := range b {
			b[j] = 0xff
		}
		got, want = append(got, g), append(want, w)
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("request %d: the events changed after the call", i)
		}
	}
}

// TestDecodeLogsProtoValueCache decodes values that repeat, in turn and
// across attributes, as DecodeLogs does: one valid for an attribute and
// not for another, one valid under a decoder's limits and not under the
// next one's.
func TestDecodeLogsProtoValueCache(t *testing.T) {
	long := "session-0123456789"
	call := func(extra ...kv) []kv { return append([]kv{{AttrToolName, "pay"}, {AttrOutcome, "current"}}, extra...) }
	for _, tc := range []struct {
		name     string
		records  [][]kv
		accepted int // with the default limits
	}{
		{"a tool's value, then a bool's", [][]kv{
			{{AttrToolName, "maybe"}, {AttrOutcome, "current"}},
			call(kv{AttrSideEffectStarted, "maybe"}),
		}, 1},
		{"a bool's value, then a tool's", [][]kv{
			call(kv{AttrSideEffectStarted, "true"}),
			{{AttrToolName, "true"}, {AttrOutcome, "current"}, {AttrSideEffectStarted, "false"}},
			call(kv{AttrSideEffectStarted, "true"}),
		}, 3},
		{"an enum's value, then a string's", [][]kv{
			call(kv{AttrApproval, "session"}),
			call(kv{AttrSessionID, "session"}, kv{AttrApproval, "nope"}),
			call(kv{AttrApproval, "session"}, kv{AttrSessionID, "session"}),
		}, 2},
		{"values in turn", [][]kv{
			call(kv{AttrSessionID, long}), call(kv{AttrSessionID, "s"}),
			call(kv{AttrSessionID, long}), call(kv{AttrSessionID, "s"}),
		}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := plogotlp.NewExportRequestFromLogs(logsWith(t, []kv{{AttrServiceName, "svc"}}, "dev.mcpdrift.call", tc.records...)).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			tight := &Decoder{Limits: Limits{MaxValueBytes: 8}, Now: testDecoder().Now}
			for _, d := range []*Decoder{testDecoder(), tight, testDecoder(), tight} {
				CompareDecoders(t, d, b)
			}
			if _, res, err := testDecoder().DecodeLogsProto(b, nil); err != nil || res.Accepted != tc.accepted {
				t.Errorf("%+v, %v; want %d accepted", res, err, tc.accepted)
			}
		})
	}
}
