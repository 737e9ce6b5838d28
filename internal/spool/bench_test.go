package spool

import (
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// simRecords returns simulator events as the ingester spools them: records
// of 2,000 consecutive events (its default batch).
func simRecords(b *testing.B) []Record {
	b.Helper()
	cfg := simulate.DefaultConfig()
	cfg.Events = 20000
	gen, err := simulate.NewGenerator(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var recs []Record
	cur := Record{Tenant: "acme", Token: "g:tok"}
	for r := range gen.All() {
		cur.Events = append(cur.Events, r.Event)
		if len(cur.Events) == 2000 {
			recs = append(recs, cur)
			cur = Record{Tenant: "acme", Token: "g:tok"}
		}
	}
	if len(recs) == 0 {
		b.Fatal("the simulator made no full record")
	}
	return recs
}

// BenchmarkAppendRecord encodes simulator records; B/event is what the
// spool writes (and fsyncs, and reads back) per event.
func BenchmarkAppendRecord(b *testing.B) {
	recs := simRecords(b)
	var buf []byte
	var bytes, events int
	for b.Loop() {
		for i := range recs {
			buf = appendRecord(buf[:0], &recs[i])
			bytes += len(buf)
			events += len(recs[i].Events)
		}
	}
	b.ReportMetric(float64(bytes)/float64(events), "B/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkDecodePayload decodes them into a reused buffer, as replay does.
func BenchmarkDecodePayload(b *testing.B) {
	recs := simRecords(b)
	var payloads [][]byte
	for i := range recs {
		payloads = append(payloads, appendRecord(nil, &recs[i])[headerSize:])
	}
	var events int
	buf := make([]otelschema.Event, 0, 2000)
	for b.Loop() {
		for _, p := range payloads {
			rec, err := decodePayload(p, buf[:0])
			if err != nil {
				b.Fatal(err)
			}
			buf = rec.Events
			events += len(rec.Events)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkToNative compares two ways from simulator records' payloads
// (10 records of 2,000 events) to one Native block, kept from iteration
// to iteration as the embedded store keeps its own: "decode" decodes each
// payload into a reused []Event and appends them with NativeBlock.Append,
// as replay and the store do today; "transcode" appends each payload with
// Transcoder.AppendPayload. Both call a keep callback per event (dedup's
// place). B/op and allocs/op are per iteration, ns/event per event.
func BenchmarkToNative(b *testing.B) {
	recs := simRecords(b)
	var payloads [][]byte
	for i := range recs {
		payloads = append(payloads, appendRecord(nil, &recs[i])[headerSize:])
	}
	keep := func(id uint64) bool { return id != 0 }
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		var blk chwire.NativeBlock
		var events int
		buf := make([]otelschema.Event, 0, 2000)
		for b.Loop() {
			blk.Reset()
			for _, p := range payloads {
				rec, err := decodePayload(p, buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				buf = rec.Events
				kept := slices.DeleteFunc(rec.Events, func(e otelschema.Event) bool { return !keep(e.ID) })
				blk.Append(rec.Tenant, kept)
				events += len(kept)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	})
	b.Run("transcode", func(b *testing.B) {
		b.ReportAllocs()
		var blk chwire.NativeBlock
		var tr Transcoder
		var events int
		for b.Loop() {
			blk.Reset()
			for _, p := range payloads {
				_, _, n, err := tr.AppendPayload(&blk, p, keep)
				if err != nil {
					b.Fatal(err)
				}
				events += n
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	})
}
