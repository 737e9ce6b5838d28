package otelschema

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

const benchRecords = 1000

// benchRequest builds a realistic request: one resource, benchRecords call
// records of 20 attributes each, with varied values and types as SDKs and
// telemetrygen send them.
func benchRequest(b *testing.B) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	putAll(b, rl.Resource().Attributes(), append(testResource,
		kv{"telemetry.sdk.name", "opentelemetry"}, kv{"telemetry.sdk.language", "go"}, kv{"host.name", "node-3"}))
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("github.com/mcpdrift/mcpdrift/otelschema/mcpgo")
	outcomes := []string{"current", "current", "current", "normalized", "rejected_stale", "failed"}
	for i := 0; i < benchRecords; i++ {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName("dev.mcpdrift.call")
		lr.SetTimestamp(pcommon.NewTimestampFromTime(testTime.Add(time.Duration(i) * time.Millisecond)))
		lr.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		lr.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 3, 4, 5, 6, 7, 8})
		putAll(b, lr.Attributes(), []kv{
			{AttrToolName, fmt.Sprintf("tool_%d", i%40)},
			{AttrMethodName, "tools/call"},
			{AttrRequestID, int64(i)},
			{AttrSessionID, fmt.Sprintf("sess-%d", i%97)},
			{AttrProtocolVersion, "2025-06-18"},
			{AttrClientName, "claude-code"},
			{AttrClientVersion, "2.1.0"},
			{AttrRevisionClient, fmt.Sprintf("r%d", i%5)},
			{AttrRevisionServer, "r5"},
			{AttrOutcome, outcomes[i%len(outcomes)]},
			{AttrAdapterID, "adapter-r3-r5"},
			{AttrChangeClass, "bounded_migration"},
			{AttrSideEffectStarted, i%2 == 0},
			{AttrExternalRequests, "1"},
			{AttrRetryAttempt, int64(i % 3)},
			{AttrApproval, "session"},
			{AttrPrivilege, "write"},
			{AttrRunID, fmt.Sprintf("run-%d", i%31)},
			{AttrSessionAgeS, int64(3600 + i)},
			{"http.route", "/mcp"},
		})
	}
	data, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func unmarshalBench(b *testing.B, data []byte) plog.Logs {
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(data); err != nil {
		b.Fatal(err)
	}
	return req.Logs()
}

func reportEvents(b *testing.B) {
	b.ReportMetric(float64(b.N*benchRecords)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRecords), "ns/event")
}

// BenchmarkDecodeLogs decodes requests of 1000 call records of 20
// attributes: "decode" is DecodeLogs alone on an unmarshalled request,
// "unmarshal+decode" the whole path from the protobuf bytes. Compare with
// BenchmarkUnmarshalProto, the bare pdata decode of the same bytes.
func BenchmarkDecodeLogs(b *testing.B) {
	data := benchRequest(b)
	d := testDecoder()
	b.Run("decode", func(b *testing.B) {
		ld := unmarshalBench(b, data)
		var events []Event
		b.ReportAllocs()
		for b.Loop() {
			var res Result
			events, res = d.DecodeLogs(ld, events[:0])
			if res.Accepted != benchRecords {
				b.Fatalf("result %+v", res)
			}
		}
		reportEvents(b)
	})
	b.Run("unmarshal+decode", func(b *testing.B) {
		var events []Event
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var res Result
			events, res = d.DecodeLogs(unmarshalBench(b, data), events[:0])
			if res.Accepted != benchRecords {
				b.Fatalf("result %+v", res)
			}
		}
		reportEvents(b)
	})
	b.Run("proto", func(b *testing.B) {
		var events []Event
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var res Result
			var err error
			events, res, err = d.DecodeLogsProto(data, events[:0])
			if err != nil || res.Accepted != benchRecords {
				b.Fatalf("result %+v, %v", res, err)
			}
		}
		reportEvents(b)
	})
}

// BenchmarkUnmarshalProto is the baseline: pdata's decode of the bytes of
// BenchmarkDecodeLogs.
func BenchmarkUnmarshalProto(b *testing.B) {
	data := benchRequest(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		unmarshalBench(b, data)
	}
	reportEvents(b)
}
