package otelschema

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus in testdata/fuzz")

const seedDir = "testdata/fuzz/FuzzDecodeLogs"

// seedRequest is one request of the seed corpus and what decoding it gives.
type seedRequest struct {
	file                        string
	json                        bool
	logs                        func(t testing.TB) plog.Logs
	accepted, rejected, ignored int
}

// The seed requests are real drift requests kept small: the fuzzer
// minimises every input that finds new coverage, in time quadratic in its
// size (up to a minute per input by default), so kilobyte seeds stall it.

// driftRequest is a valid request: a call, a repair and a foreign record.
func driftRequest(t testing.TB) plog.Logs {
	ld := logsWith(t, []kv{{AttrServiceName, "billing"}}, "dev.mcpdrift.call",
		[]kv{{AttrToolName, "pay"}, {AttrOutcome, "normalized"}, {AttrRequestID, int64(7)}, {AttrSideEffectStarted, "false"}, {AttrRetryAttempt, "1"}})
	sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
	sl.Scope().SetName("")
	lr := sl.LogRecords().AppendEmpty()
	lr.SetEventName("dev.mcpdrift.repair")
	putAll(t, lr.Attributes(), []kv{{AttrRepairAction, "refresh_retry"}, {AttrAdapterWindowEnd, "2026-07-01T00:00:00Z"}, {"x", 1.5}})
	lr = sl.LogRecords().AppendEmpty()
	putAll(t, lr.Attributes(), []kv{{AttrEventName, "app.log"}})
	return ld
}

// badRequest carries rejections of several kinds, and a good record.
func badRequest(t testing.TB) plog.Logs {
	ld := logsWith(t, nil, "dev.mcpdrift.call",
		[]kv{{AttrToolName, "pay"}, {AttrOutcome, "maybe"}},
		[]kv{{AttrOutcome, "current"}},
		[]kv{{AttrToolName, "pay"}, {AttrOutcome, "current"}, {AttrSideEffectStarted, "maybe"}},
		[]kv{{AttrToolName, "pay"}, {AttrOutcome, "current"}},
	)
	sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
	sl.Scope().SetName("")
	sl.LogRecords().AppendEmpty().SetEventName("dev.mcpdrift.nope")
	return ld
}

var seedRequests = []seedRequest{
	{file: "drift_proto", logs: driftRequest, accepted: 2, ignored: 1},
	{file: "drift_json", json: true, logs: driftRequest, accepted: 2, ignored: 1},
	{file: "rejections_proto", logs: badRequest, accepted: 1, rejected: 4},
}

func marshalSeed(t testing.TB, s seedRequest) []byte {
	req := plogotlp.NewExportRequestFromLogs(s.logs(t))
	var b []byte
	var err error
	if s.json {
		b, err = req.MarshalJSON()
	} else {
		b, err = req.MarshalProto()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unmarshalSeed reads a file in the `go test fuzz v1` format holding one
// []byte.
func unmarshalSeed(t *testing.T, b []byte) []byte {
	t.Helper()
	s, ok := strings.CutPrefix(string(b), "go test fuzz v1\n")
	if !ok {
		t.Fatal("not a go test fuzz v1 file")
	}
	s = strings.TrimSpace(s)
	s, ok = strings.CutPrefix(s, "[]byte(")
	if !ok || !strings.HasSuffix(s, ")") {
		t.Fatalf("not a []byte value: %.40q", s)
	}
	v, err := strconv.Unquote(strings.TrimSuffix(s, ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(v)
}

// TestFuzzSeeds checks the seed corpus still decodes as it did when it was
// made; -update rewrites it.
func TestFuzzSeeds(t *testing.T) {
	for _, s := range seedRequests {
		t.Run(s.file, func(t *testing.T) {
			path := filepath.Join(seedDir, s.file)
			if *update {
				if err := os.MkdirAll(seedDir, 0o755); err != nil {
					t.Fatal(err)
				}
				data := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", marshalSeed(t, s))
				if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./otelschema -run TestFuzzSeeds -update)", err)
			}
			req := plogotlp.NewExportRequest()
			if s.json {
				err = req.UnmarshalJSON(unmarshalSeed(t, b))
			} else {
				err = req.UnmarshalProto(unmarshalSeed(t, b))
			}
			if err != nil {
				t.Fatal(err)
			}
			_, res := testDecoder().DecodeLogs(req.Logs(), nil)
			if res.Accepted != s.accepted || res.Rejected != s.rejected || res.Ignored != s.ignored {
				t.Errorf("got %+v, want %d accepted, %d rejected, %d ignored", res, s.accepted, s.rejected, s.ignored)
			}
		})
	}
}

func FuzzDecodeLogs(f *testing.F) {
	decoders := []*Decoder{
		testDecoder(),
		{Limits: Limits{MaxAttributes: 8, MaxValueBytes: 16, MaxArgsBytes: 32, MaxPast: 1, MaxFuture: 1}, Now: testDecoder().Now},
		{Now: testDecoder().Now},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, unmarshal := range []func(plogotlp.ExportRequest, []byte) error{
			plogotlp.ExportRequest.UnmarshalProto,
			plogotlp.ExportRequest.UnmarshalJSON,
		} {
			req := plogotlp.NewExportRequest()
			if err := unmarshal(req, data); err != nil {
				continue
			}
			for _, d := range decoders {
				checkDecode(t, d, req.Logs())
			}
		}
	})
}

// checkDecode decodes ld and checks the invariants of DecodeLogs.
func checkDecode(t *testing.T, d *Decoder, ld plog.Logs) {
	sentinel := Event{Tool: "sentinel"}
	events, res := d.DecodeLogs(ld, []Event{sentinel})
	if n := ld.LogRecordCount(); res.Accepted+res.Rejected+res.Ignored != n {
		t.Fatalf("%d accepted + %d rejected + %d ignored != %d records", res.Accepted, res.Rejected, res.Ignored, n)
	}
	if len(events) != 1+res.Accepted || !reflect.DeepEqual(events[0], sentinel) {
		t.Fatalf("%d events for %d accepted, or dst's contents changed", len(events), res.Accepted)
	}
	if len(res.Errors) != min(res.Rejected, MaxErrors) {
		t.Fatalf("%d errors kept for %d rejected", len(res.Errors), res.Rejected)
	}
	if (res.Message() == "") != (res.Rejected == 0) {
		t.Fatalf("message %q for %d rejected", res.Message(), res.Rejected)
	}
	for _, e := range res.Errors {
		if e.Err == nil || e.Error() == "" {
			t.Fatal("empty rejection")
		}
	}
	for _, e := range events[1:] {
		if n, ok := ParseEventName(e.Name.String()); !ok || n != e.Name {
			t.Fatalf("accepted event with invalid name %d", e.Name)
		}
		for _, name := range RequiredAttributes(e.Name) {
			a := attrByName[name]
			if !a.present(&e) {
				t.Fatalf("%s event without %s", e.Name, name)
			}
		}
		if e.Name == EventCall && (e.Tool == "" || e.Outcome == OutcomeUnspecified) {
			t.Fatalf("call event without tool or outcome: %+v", e)
		}
		checkStrings(t, e)
	}
	again, res2 := d.DecodeLogs(ld, nil)
	if len(again) != res.Accepted || res2.Rejected != res.Rejected {
		t.Fatal("decoding twice gives different results")
	}
	for i := range again {
		if again[i].ID != events[i+1].ID {
			t.Fatalf("event %d: IDs %x and %x for the same record", i, again[i].ID, events[i+1].ID)
		}
	}
}

// checkStrings checks that every string of an accepted event is valid UTF-8
// within the limits of the fuzz decoders.
func checkStrings(t *testing.T, e Event) {
	v := reflect.ValueOf(e)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.String && !utf8.ValidString(f.String()) {
			t.Fatalf("Event.%s is not valid UTF-8: %q", v.Type().Field(i).Name, f.String())
		}
	}
	for k, v := range e.Attributes {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			t.Fatalf("attribute %q = %q is not valid UTF-8", k, v)
		}
	}
}
