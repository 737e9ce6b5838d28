package chwire

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// BenchmarkNativeEncode encodes 100,000 simulator events into a Native
// block, as the embedded store's Write does; ns/event is per event.
func BenchmarkNativeEncode(b *testing.B) {
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var rec simulate.Record
	var events []otelschema.Event
	for len(events) < 100000 && g.Next(&rec) {
		events = append(events, rec.Event)
	}
	var blk NativeBlock
	b.ResetTimer()
	for range b.N {
		blk.Encode("bench", events)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}
