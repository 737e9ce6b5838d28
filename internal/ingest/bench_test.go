package ingest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// BenchmarkHTTPLogs compares the ingest path without the store — read,
// decode, validate, batch, answer — with a bare pdata decode of the same
// requests, side by side (the design's target: at most 2×).
func BenchmarkHTTPLogs(b *testing.B) {
	d := drift{valid: 450, unknown: 25, other: 25}
	const records = 500
	body := encode(b, encodingProto, d)

	b.Run("pdata", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req := plogotlp.NewExportRequest()
				if err := req.UnmarshalProto(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(b.N)*records/b.Elapsed().Seconds(), "records/s")
	})

	b.Run("ingest", func(b *testing.B) {
		cfg := testConfig()
		// Every request fills a batch: nobody waits for the batch delay.
		cfg.BatchMaxEvents = d.valid
		s := newServer(b, cfg, &discard{}, false)
		h := s.HTTPHandler()
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req := httptest.NewRequest(http.MethodPost, receiver.PathLogs, bytes.NewReader(body))
				req.Header.Set("Content-Type", receiver.MediaProto)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
				}
			}
		})
		b.ReportMetric(float64(b.N)*records/b.Elapsed().Seconds(), "records/s")
	})
}
