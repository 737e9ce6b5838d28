package otelschema_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// simNow is the clock of the decoders of simulated requests: the end of
// the simulated span.
var simNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// simRequests encodes events of the drift simulator into OTLP/protobuf
// requests as bench/requests.go does: one resource and one scope per
// request, batch records each. With mutate, a seeded share of the records
// is altered the ways SDKs and hostile clients get records wrong.
func simRequests(t testing.TB, events, batch int, seed uint64, mutate bool) ([][]byte, int) {
	t.Helper()
	cfg := simulate.DefaultConfig()
	cfg.Seed, cfg.Events = seed, int64(events)
	cfg.Start = simNow.Add(-cfg.Span)
	gen, err := simulate.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 42))
	type pending struct {
		ld  plog.Logs
		lrs plog.LogRecordSlice
	}
	byService := map[string]*pending{}
	var reqs [][]byte
	flush := func(p *pending) {
		b, err := plogotlp.NewExportRequestFromLogs(p.ld).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, b)
	}
	var r simulate.Record
	for gen.Next(&r) {
		e := &r.Event
		key := e.Service + "\x00" + e.ServiceVersion + "\x00" + e.ServiceInstance
		p := byService[key]
		if p == nil {
			p = &pending{ld: plog.NewLogs()}
			rl := p.ld.ResourceLogs().AppendEmpty()
			otelschema.EncodeResource(e, rl.Resource())
			rl.Resource().Attributes().PutStr("host.name", "node-3")
			if mutate && rng.IntN(40) == 0 {
				rl.Resource().Attributes().PutInt(otelschema.AttrServiceVersion, 3)
			}
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(simulate.ScopeName)
			p.lrs = sl.LogRecords()
			byService[key] = p
		}
		lr := p.lrs.AppendEmpty()
		otelschema.EncodeLogRecord(e, lr)
		if mutate {
			mutateRecord(rng, lr)
		}
		if p.lrs.Len() == batch {
			flush(p)
			delete(byService, key)
		}
	}
	for _, p := range byService {
		flush(p)
	}
	return reqs, events
}

// mutateRecord alters about one record in four.
func mutateRecord(rng *rand.Rand, lr plog.LogRecord) {
	a := lr.Attributes()
	switch rng.IntN(48) {
	case 0:
		a.PutStr(otelschema.AttrOutcome, "sideways")
	case 1:
		a.Remove(otelschema.AttrToolName)
	case 2:
		a.PutStr(otelschema.AttrRetryAttempt, "x")
	case 3:
		a.PutStr(otelschema.AttrSideEffectStarted, "maybe")
	case 4:
		a.PutStr(otelschema.AttrEventName, lr.EventName())
		lr.SetEventName("")
	case 5:
		a.PutStr(otelschema.AttrOtelEventName, lr.EventName())
		a.PutInt(otelschema.AttrEventName, 1)
		lr.SetEventName("")
	case 6:
		lr.SetEventName("dev.mcpdrift.nope")
	case 7:
		lr.SetEventName("")
		lr.Body().SetStr("GET /healthz 200")
	case 8:
		lr.Body().SetStr(fmt.Sprint("drift body ", rng.Uint64()))
	case 9:
		lr.SetObservedTimestamp(lr.Timestamp())
		lr.SetTimestamp(0)
	case 10:
		lr.SetTimestamp(pcommon.NewTimestampFromTime(simNow.Add(-400 * 24 * time.Hour)))
	case 11:
		a.PutStr("k\xff", "v")
	case 12:
		for i := range 300 {
			a.PutInt(fmt.Sprint("x.", i), int64(i))
		}
	case 13:
		m := a.PutEmptyMap("x.map")
		m.PutStr("b", "1")
		m.PutDouble("a", 1.5)
		s := a.PutEmptySlice("x.slice")
		s.AppendEmpty().SetStr("<>")
		s.AppendEmpty().SetEmptyBytes().FromRaw([]byte{0, 0xff})
		s.AppendEmpty()
		a.PutDouble("x.double", rng.Float64()*1e22)
		a.PutEmptyBytes("x.bytes").FromRaw([]byte("raw"))
		a.PutBool("x.bool", true)
		a.PutEmpty("x.empty")
	case 14:
		a.PutDouble(otelschema.AttrExternalRequests, 2)
		a.PutStr(otelschema.AttrSessionAgeS, "17")
		a.PutInt(otelschema.AttrRequestID, rng.Int64())
		a.PutStr(otelschema.AttrAdapterWindowEnd, "2026-07-01T00:00:00Z")
	case 15:
		a.PutEmptyMap(otelschema.AttrMethodName).PutStr("a", "b")
	case 16:
		a.PutStr(otelschema.AttrServiceName, "from-the-record")
	case 17:
		a.PutStr(otelschema.AttrArgsRaw, strings.Repeat("a", 300<<10))
	case 18:
		lr.SetTraceID(pcommon.TraceID{1, 2, 3})
		lr.SetSpanID(pcommon.SpanID{4})
	case 19:
		a.PutInt(otelschema.AttrRetryAttempt, -rng.Int64N(1<<40)-1)
	}
}

func simDecoders() []*otelschema.Decoder {
	now := func() time.Time { return simNow }
	return []*otelschema.Decoder{
		{Limits: otelschema.DefaultLimits(), Now: now},
		{Limits: otelschema.Limits{MaxAttributes: 12, MaxValueBytes: 24, MaxArgsBytes: 64, MaxPast: time.Hour, MaxFuture: time.Minute}, Now: now},
		{Now: now},
	}
}

// TestDecodeLogsProtoSimulated compares both decoders on realistic
// requests, as generated and mutated.
func TestDecodeLogsProtoSimulated(t *testing.T) {
	var mutated otelschema.Result // with the default limits
	for seed := uint64(1); seed <= 3; seed++ {
		for _, mutate := range []bool{false, true} {
			reqs, _ := simRequests(t, 4000, 100, seed, mutate)
			for i, d := range simDecoders() {
				for _, b := range reqs {
					if !otelschema.CompareDecoders(t, d, b) {
						t.Fatal("pdata refuses its own encoding")
					}
					if _, res, _ := d.DecodeLogsProto(b, nil); mutate && i == 0 {
						mutated.Accepted += res.Accepted
						mutated.Ignored += res.Ignored
						for j, n := range res.ByReason {
							mutated.ByReason[j] += n
						}
					}
				}
			}
		}
	}
	// The mutations reach every rule.
	if mutated.Accepted == 0 || mutated.Ignored == 0 {
		t.Errorf("mutated requests: %+v", mutated)
	}
	for i, reason := range otelschema.Reasons {
		if mutated.ByReason[i] == 0 {
			t.Errorf("no mutated record rejected for %v", reason)
		}
	}
}

// BenchmarkDecodeLogsProto decodes the simulator's requests of 500
// records, as `go run ./bench` sends them, with pdata then DecodeLogs (the
// path of JSON requests, and of protobuf ones before DecodeLogsProto) and
// with DecodeLogsProto. It reports the process CPU (getrusage: the
// garbage collector included) and the allocations per event.
func BenchmarkDecodeLogsProto(b *testing.B) {
	reqs, total := simRequests(b, 20000, 500, 1, false)
	d := &otelschema.Decoder{Limits: otelschema.DefaultLimits(), Now: func() time.Time { return simNow }}
	for _, tc := range []struct {
		name   string
		decode func(b []byte, dst []otelschema.Event) ([]otelschema.Event, otelschema.Result, error)
	}{
		{"pdata+DecodeLogs", func(b []byte, dst []otelschema.Event) ([]otelschema.Event, otelschema.Result, error) {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				return dst, otelschema.Result{}, err
			}
			events, res := d.DecodeLogs(req.Logs(), dst)
			return events, res, nil
		}},
		{"DecodeLogsProto", d.DecodeLogsProto},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var events []otelschema.Event
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			cpu0 := processCPU()
			for b.Loop() {
				for _, req := range reqs {
					var res otelschema.Result
					var err error
					if events, res, err = tc.decode(req, events[:0]); err != nil || res.Accepted != len(events) {
						b.Fatalf("%+v, %v", res, err)
					}
				}
			}
			cpu := processCPU() - cpu0
			runtime.ReadMemStats(&ms1)
			n := float64(b.N * total)
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/n, "cpu-µs/event")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/event")
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/n, "B/event")
			b.ReportMetric(n/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// processCPU returns the CPU time of the process so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
