package otelschema

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

// CompareDecoders decodes the protobuf bytes b with DecodeLogsProto, and
// with plogotlp then DecodeLogs, and fails t unless both give the same
// events and Result, or both refuse b. It reports whether pdata accepted
// b. (Exported for the tests of otelschema_test.)
func CompareDecoders(t testing.TB, d *Decoder, b []byte) bool {
	t.Helper()
	if d.Now == nil {
		// Both decode at the same time.
		now, clocked := time.Now(), *d
		clocked.Now = func() time.Time { return now }
		d = &clocked
	}
	sentinel := Event{Tool: "sentinel", Attributes: map[string]string{"k": "v"}}
	got, gotRes, err := d.DecodeLogsProto(b, []Event{sentinel})
	req := plogotlp.NewExportRequest()
	if perr := req.UnmarshalProto(b); perr != nil {
		if err == nil {
			t.Fatalf("pdata refuses the %d bytes (%v), DecodeLogsProto accepts them: %+v", len(b), perr, gotRes)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], sentinel) || !reflect.DeepEqual(gotRes, Result{}) {
			t.Fatalf("refused, DecodeLogsProto still returns %d events and %+v", len(got), gotRes)
		}
		return false
	}
	if err != nil {
		t.Fatalf("DecodeLogsProto refuses %d bytes that pdata accepts: %v", len(b), err)
	}
	want, wantRes := d.DecodeLogs(req.Logs(), []Event{sentinel})
	if !reflect.DeepEqual(gotRes, wantRes) {
		t.Fatalf("results differ:\nDecodeLogsProto: %s\nDecodeLogs:      %s", describeResult(gotRes), describeResult(wantRes))
	}
	if len(got) != len(want) {
		t.Fatalf("DecodeLogsProto gives %d events, DecodeLogs %d", len(got)-1, len(want)-1)
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("event %d differs:\nDecodeLogsProto: %+v\nDecodeLogs:      %+v", i-1, got[i], want[i])
		}
	}
	return true
}

func describeResult(r Result) string {
	return fmt.Sprintf("%+v, by reason %v, %q", r, r.ByReason, r.Message())
}

// checkWire checks that DecodeLogsProto decodes the protobuf encoding of
// ld as DecodeLogs decodes ld.
func checkWire(t testing.TB, d *Decoder, ld plog.Logs) {
	t.Helper()
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if !CompareDecoders(t, d, b) {
		t.Fatal("pdata refuses its own encoding")
	}
}

// fuzzDecoders are the decoders the fuzz targets compare: the ingester's
// limits, tight ones that most records break, and none.
func fuzzDecoders() []*Decoder {
	return []*Decoder{
		testDecoder(),
		{Limits: Limits{MaxAttributes: 8, MaxValueBytes: 16, MaxArgsBytes: 32, MaxPast: 1, MaxFuture: 1}, Now: testDecoder().Now},
		{Now: testDecoder().Now},
	}
}

// pb builds protobuf messages field by field.
type pb []byte

// Each appends to a copy of m, so that messages built from the same one
// do not share bytes.
func (m pb) bytes(n protowire.Number, b []byte) pb {
	return protowire.AppendBytes(protowire.AppendTag(slices.Clip(m), n, protowire.BytesType), b)
}
func (m pb) str(n protowire.Number, s string) pb { return m.bytes(n, []byte(s)) }
func (m pb) varint(n protowire.Number, v uint64) pb {
	return protowire.AppendVarint(protowire.AppendTag(slices.Clip(m), n, protowire.VarintType), v)
}
func (m pb) fixed64(n protowire.Number, v uint64) pb {
	return protowire.AppendFixed64(protowire.AppendTag(slices.Clip(m), n, protowire.Fixed64Type), v)
}
func (m pb) raw(b ...byte) pb { return append(slices.Clip(m), b...) }

// Wire builders of the OTLP messages DecodeLogsProto reads.
func kvOf(k string, v pb) pb { return pb(nil).str(1, k).bytes(2, v) }
func strVal(s string) pb     { return pb(nil).str(1, s) }
func kvStr(k, v string) pb   { return kvOf(k, strVal(v)) }
func attrs(n protowire.Number, kvs ...pb) pb {
	var m pb
	for _, kv := range kvs {
		m = m.bytes(n, kv)
	}
	return m
}

// wireCall is a valid call record's fields, at testTime.
func wireCall() pb {
	return pb(nil).fixed64(1, uint64(testTime.UnixNano())).str(12, "dev.mcpdrift.call").
		bytes(6, kvStr(AttrToolName, "pay")).bytes(6, kvStr(AttrOutcome, "current"))
}

// wireRequest is a request of one resource of attributes res, and one
// scope holding records.
func wireRequest(res pb, records ...pb) pb {
	sl := attrs(2, records...)
	return pb(nil).bytes(1, pb(nil).bytes(1, res).bytes(2, sl))
}

func TestDecodeLogsProtoWire(t *testing.T) {
	svc := attrs(1, kvStr(AttrServiceName, "svc"))
	ts := uint64(testTime.UnixNano())
	deep := func(levels int) pb { // arrays nested levels deep, as a call's extra attribute
		v := strVal("x")
		for range levels {
			v = pb(nil).bytes(5, pb(nil).bytes(1, v))
		}
		return wireRequest(svc, wireCall().bytes(6, kvOf("deep", v)))
	}
	for _, tc := range []struct {
		name  string
		b     pb
		check func(t *testing.T, events []Event, res Result, err error)
	}{
		{name: "valid", b: wireRequest(svc, wireCall()), check: accepted(1, func(e Event) bool { return e.Service == "svc" && e.Tool == "pay" })},
		{name: "resource after its scopes",
			b:     pb(nil).bytes(1, pb(nil).bytes(2, attrs(2, wireCall())).bytes(1, svc)),
			check: accepted(1, func(e Event) bool { return e.Service == "svc" })},
		{name: "resource in two parts",
			b:     pb(nil).bytes(1, pb(nil).bytes(1, svc).bytes(2, attrs(2, wireCall())).bytes(1, attrs(1, kvStr(AttrServiceVersion, "1.2")))),
			check: accepted(1, func(e Event) bool { return e.Service == "svc" && e.ServiceVersion == "1.2" })},
		{name: "scope after its records, in two parts",
			b: pb(nil).bytes(1, pb(nil).bytes(1, svc).bytes(2, pb(nil).bytes(1, attrs(3, kvStr(AttrClientName, "c"))).
				bytes(2, wireCall()).bytes(1, attrs(3, kvStr(AttrClientVersion, "2"))))),
			check: accepted(1, func(e Event) bool { return e.ClientName == "c" && e.ClientVersion == "2" })},
		{name: "deprecated scope logs alone",
			b:     pb(nil).bytes(1, pb(nil).bytes(1, svc).bytes(1000, attrs(2, wireCall(), wireCall()))),
			check: accepted(2, nil)},
		{name: "deprecated scope logs beside scope logs are dropped",
			b:     pb(nil).bytes(1, pb(nil).bytes(1000, attrs(2, wireCall(), wireCall())).bytes(2, attrs(2, wireCall())).bytes(1000, attrs(2, wireCall()))),
			check: accepted(1, nil)},
		{name: "deprecated scope logs beside scope logs are still checked",
			b:     pb(nil).bytes(1, pb(nil).bytes(2, attrs(2, wireCall())).bytes(1000, attrs(2, pb(nil).bytes(9, []byte{1, 2})))),
			check: refused},
		{name: "repeated scalars: the last wins",
			b: wireRequest(svc, pb(nil).str(12, "dev.mcpdrift.nope").fixed64(1, 1).str(12, "dev.mcpdrift.call").fixed64(1, ts).
				bytes(6, kvStr(AttrToolName, "a")).bytes(6, kvStr(AttrOutcome, "current")).bytes(6, kvStr(AttrToolName, "b"))),
			check: accepted(1, func(e Event) bool { return e.Tool == "b" && e.Time == int64(ts) })},
		{name: "repeated bodies and values merge",
			b: wireRequest(svc, wireCall().bytes(5, strVal("one")).bytes(5, pb(nil).varint(3, 7)).bytes(5, strVal("body")).bytes(5, nil).
				bytes(6, pb(nil).str(1, "k").bytes(2, strVal("v1")).str(1, "key").bytes(2, pb(nil).varint(3, 1).str(1, "v2")).bytes(2, nil))),
			check: accepted(1, func(e Event) bool { return e.Attributes["key"] == "v2" && len(e.Attributes) == 1 })},
		{name: "event name from the first event.name attribute",
			b:     wireRequest(svc, pb(nil).fixed64(1, ts).bytes(6, kvOf(AttrEventName, pb(nil).varint(3, 1))).bytes(6, kvStr(AttrEventName, "dev.mcpdrift.call")).bytes(6, kvStr(AttrOtelEventName, "dev.mcpdrift.adapter"))),
			check: func(t *testing.T, _ []Event, res Result, _ error) { wantRejected(t, res, "dev.mcpdrift.adapter") }},
		{name: "trace id set then emptied", b: wireRequest(svc, wireCall().bytes(9, bytes.Repeat([]byte{1}, 16)).bytes(9, nil).bytes(10, bytes.Repeat([]byte{2}, 8))),
			check: accepted(1, func(e Event) bool { return e.TraceID == [16]byte{} && e.SpanID == [8]byte{2, 2, 2, 2, 2, 2, 2, 2} })},
		{name: "trace id of 15 bytes", b: wireRequest(svc, wireCall().bytes(9, make([]byte, 15))), check: refused},
		{name: "span id of 9 bytes", b: wireRequest(svc, wireCall().bytes(10, make([]byte, 9))), check: refused},
		{name: "10-byte varint, bits past 64 dropped",
			b:     wireRequest(svc, wireCall().bytes(6, kvOf(AttrRetryAttempt, pb(nil).raw(3<<3, 0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7e)))),
			check: accepted(1, func(e Event) bool { return e.RetryAttempt == 2 })},
		{name: "11-byte varint", b: wireRequest(svc, wireCall().bytes(6, kvOf(AttrRetryAttempt, pb(nil).raw(3<<3, 0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0)))), check: refused},
		{name: "field number truncated to 32 bits",
			b:     wireRequest(svc, protowire.AppendBytes(protowire.AppendVarint(pb(nil).fixed64(1, ts), (1<<32+12)<<3|2), []byte("dev.mcpdrift.adapter"))),
			check: func(t *testing.T, _ []Event, res Result, _ error) { wantRejected(t, res, AttrToolName) }},
		{name: "field number 0", b: wireRequest(svc, wireCall().raw(0<<3|0, 1)), check: refused},
		{name: "wire type 7", b: wireRequest(svc, wireCall().raw(14<<3|7, 1)), check: refused},
		{name: "known field of the wrong wire type", b: wireRequest(svc, wireCall().varint(1, 5)), check: refused},
		{name: "unknown fields everywhere",
			b: pb(nil).varint(7, 1).bytes(1, pb(nil).fixed64(9, 1).bytes(1, svc.varint(9, 1)).bytes(2, pb(nil).bytes(2, wireCall().varint(99, 1).
				bytes(6, kvStr("x", "y").varint(9, 3))).raw(15<<3|5, 1, 2, 3, 4))),
			check: accepted(1, nil)},
		{name: "empty group before a field", b: wireRequest(svc, wireCall().raw(13<<3|3, 13<<3|4).varint(2, 9)), check: accepted(1, nil)},
		{name: "empty group at the end", b: wireRequest(svc, wireCall().raw(13<<3|3, 13<<3|4)), check: refused},
		{name: "group with a field", b: wireRequest(svc, wireCall().raw(13<<3|3, 14<<3|0, 1, 13<<3|4).varint(2, 9)), check: refused},
		{name: "end of group alone", b: wireRequest(svc, wireCall().raw(13<<3|4)), check: refused},
		{name: "string table index is an empty value",
			b:     wireRequest(svc, wireCall().bytes(6, kvOf("x", pb(nil).varint(8, 3))).bytes(6, kvOf(AttrErrorCode, pb(nil).str(1, "E").varint(8, 3)))),
			check: func(t *testing.T, _ []Event, res Result, _ error) { wantRejected(t, res, "got empty value") }},
		{name: "maps, slices, bytes and doubles flattened",
			b: wireRequest(svc, wireCall().
				bytes(6, kvOf("m", pb(nil).bytes(6, attrs(1, kvStr("b", "1"), kvOf("a", pb(nil).fixed64(4, 0x3ff8000000000000)), kvStr("b", "2"))))).
				bytes(6, kvOf("s", pb(nil).bytes(5, attrs(1, strVal("<"), pb(nil).bytes(7, []byte{0xff}), pb(nil).bytes(7, nil), nil)))).
				bytes(6, kvOf("e", pb(nil).bytes(7, nil))).bytes(6, kvOf("d", pb(nil).fixed64(4, 0x7ff8000000000001)))),
			check: accepted(1, func(e Event) bool {
				return e.Attributes["m"] == `{"a":1.5,"b":"2"}` && e.Attributes["s"] == `["<","/w==",null,null]` && e.Attributes["d"] == "NaN"
			})},
		{name: "map where a string is wanted", b: wireRequest(svc, wireCall().bytes(6, kvOf(AttrMethodName, pb(nil).bytes(6, attrs(1, kvStr("a", "1"), kvStr("a", "2")))))),
			check: func(t *testing.T, _ []Event, res Result, _ error) { wantRejected(t, res, "map (2 entries)") }},
		{name: "invalid UTF-8", b: wireRequest(svc, wireCall().bytes(6, kvStr("k\xff", "v"))),
			check: func(t *testing.T, _ []Event, res Result, _ error) { wantRejected(t, res, "invalid UTF-8") }},
		{name: "invalid resource attribute rejects the drift records only",
			b: wireRequest(attrs(1, kvOf(AttrServiceName, pb(nil).varint(2, 1))), wireCall(), pb(nil).str(12, "app.log"), wireCall()),
			check: func(t *testing.T, _ []Event, res Result, _ error) {
				wantRejected(t, res, "2 of 3 log records", "resource attributes")
			}},
		{name: "observed time, then now", b: wireRequest(svc, wireCall().fixed64(1, 0).fixed64(11, ts-1), wireCall().fixed64(1, 0)),
			check: func(t *testing.T, events []Event, res Result, _ error) {
				if res.Accepted != 2 || events[1].Time != int64(ts-1) || events[2].Time != testNow.UnixNano() {
					t.Errorf("%+v", res)
				}
			}},
		{name: "49 nested arrays", b: deep(49), check: accepted(1, nil)},
		{name: "50 nested arrays: depth 100", b: deep(50), check: refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !CompareDecoders(t, testDecoder(), tc.b) {
				tc.check(t, nil, Result{}, fmt.Errorf("refused"))
				return
			}
			events, res, err := testDecoder().DecodeLogsProto(tc.b, []Event{{}})
			tc.check(t, events, res, err)
		})
	}
}

// accepted checks that a request decodes into n events that all satisfy
// ok, when set.
func accepted(n int, ok func(Event) bool) func(*testing.T, []Event, Result, error) {
	return func(t *testing.T, events []Event, res Result, err error) {
		t.Helper()
		if err != nil || res.Accepted != n || res.Rejected != 0 {
			t.Fatalf("%v, %s; want %d accepted", err, describeResult(res), n)
		}
		for _, e := range events[1:] {
			if ok != nil && !ok(e) {
				t.Errorf("unexpected event %+v", e)
			}
		}
	}
}

func refused(t *testing.T, _ []Event, res Result, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted: %s", describeResult(res))
	}
}

// wantRejected checks that the Result's message holds every part.
func wantRejected(t *testing.T, res Result, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(res.Message(), p) {
			t.Errorf("message %q does not contain %q", res.Message(), p)
		}
	}
}

// TestDecodeLogsProtoTruncated decodes every prefix of valid requests.
func TestDecodeLogsProtoTruncated(t *testing.T) {
	for _, s := range seedRequests {
		if s.json {
			continue
		}
		b := marshalSeed(t, s)
		accepted := 0
		for i := range len(b) {
			if CompareDecoders(t, testDecoder(), b[:i]) {
				accepted++
			}
		}
		if accepted == 0 {
			t.Errorf("%s: no prefix decodes, not even the empty one", s.file)
		}
	}
}

// TestDecodeLogsProtoCorpus runs the decoders over every fuzz corpus of
// the OTLP decoders: otelschema's, and the ingester's HTTP bodies.
func TestDecodeLogsProtoCorpus(t *testing.T) {
	var files []string
	for _, glob := range []string{"testdata/fuzz/*/*", "../internal/ingest/testdata/fuzz/FuzzHTTPLogs/*"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 15 {
		t.Fatalf("only %d corpus files", len(files))
	}
	accepted := 0
	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			args := readCorpusFile(t, path)
			b := args[0].([]byte)
			if coding, ok := args[len(args)-1].(uint8); len(args) == 3 && ok && coding != 0 {
				// FuzzHTTPLogs: the body, json, and a content coding (0 for
				// none): the gzipped bodies are decoded, the others (which
				// the ingester's own tests decode) fail here and are
				// skipped.
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					return
				}
				if b, err = io.ReadAll(io.LimitReader(zr, 4<<20)); err != nil {
					return
				}
			}
			for _, d := range fuzzDecoders() {
				if CompareDecoders(t, d, b) {
					accepted++
				}
			}
		})
	}
	if accepted == 0 {
		t.Error("no corpus file is a request")
	}
}

// readCorpusFile reads the values of a `go test fuzz v1` file: []byte and
// bool ones.
func readCorpusFile(t *testing.T, path string) []any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a go test fuzz v1 file", path)
	}
	var args []any
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "[]byte(") && strings.HasSuffix(l, ")"):
			s, err := strconv.Unquote(l[len("[]byte(") : len(l)-1])
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			args = append(args, []byte(s))
		case l == "bool(true)" || l == "bool(false)":
			args = append(args, l == "bool(true)")
		case strings.HasPrefix(l, "uint8(") && strings.HasSuffix(l, ")"):
			n, err := strconv.ParseUint(l[len("uint8("):len(l)-1], 0, 8)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			args = append(args, uint8(n))
		default:
			t.Fatalf("%s: cannot read %.40q", path, l)
		}
	}
	if len(args) == 0 {
		t.Fatalf("%s: no value", path)
	}
	return args
}

// TestDecodeLogsProtoConcurrent decodes with one Decoder from several
// goroutines, as the ingester does (run it with -race).
func TestDecodeLogsProtoConcurrent(t *testing.T) {
	d := testDecoder()
	var reqs [][]byte
	var want [][]Event
	for i := range 8 {
		b := wireRequest(attrs(1, kvStr(AttrServiceName, fmt.Sprint("svc-", i))),
			wireCall().bytes(6, kvStr("x", strings.Repeat("v", i))), wireCall().bytes(6, kvStr(AttrToolName, fmt.Sprint("tool-", i%3))))
		events, _, err := d.DecodeLogsProto(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		reqs, want = append(reqs, b), append(want, events)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var events []Event
			for i := range 200 {
				k := (g + i) % len(reqs)
				var err error
				if events, _, err = d.DecodeLogsProto(reqs[k], events[:0]); err != nil {
					t.Error(err)
					return
				}
				if !reflect.DeepEqual(events, want[k]) {
					t.Errorf("request %d decodes into %+v, want %+v", k, events, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzDecodeLogsProto checks DecodeLogsProto against pdata's decode and
// DecodeLogs: when pdata's UnmarshalProto accepts the bytes, both give the
// same events and Result; when it refuses them, so does DecodeLogsProto,
// leaving dst as it was, without panicking.
func FuzzDecodeLogsProto(f *testing.F) {
	for _, s := range seedRequests {
		f.Add(marshalSeed(f, s))
	}
	svc := attrs(1, kvStr(AttrServiceName, "svc"))
	f.Add([]byte(pb(nil).bytes(1, pb(nil).bytes(2, attrs(2, wireCall())).bytes(1, svc).bytes(1000, attrs(2, wireCall())))))
	f.Add([]byte(wireRequest(svc, wireCall().bytes(6, kvOf("m", pb(nil).bytes(6, attrs(1, kvStr("a", "1"), kvOf("b", pb(nil).bytes(5, attrs(1, strVal("x")))))))).
		bytes(5, strVal("body")).bytes(9, make([]byte, 16)).raw(13<<3|3, 13<<3|4).varint(2, 9))))
	decoders := fuzzDecoders()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range decoders {
			CompareDecoders(t, d, data)
		}
	})
}
