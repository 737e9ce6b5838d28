package ingest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/store"
)

// discard is a store.Writer that only counts.
type discard struct{ events atomic.Int64 }

func (d *discard) Write(_ context.Context, b store.Batch) error {
	d.events.Add(int64(len(b.Events)))
	return nil
}

// FuzzHTTPLogs sends random bodies, as protobuf or JSON, raw or gzipped, to
// the OTLP/HTTP handler. Whatever the body, the answer is never a 5xx, and
// the handler does not panic or leave events pending.
func FuzzHTTPLogs(f *testing.F) {
	for _, d := range []drift{{valid: 2}, {valid: 1, unknown: 1, noTool: 1, other: 1}, {}} {
		f.Add(encode(f, encodingProto, d), false, false)
		f.Add(encode(f, encodingJSON, d), true, false)
		f.Add(gzipped(f, encode(f, encodingProto, d)), false, true)
	}
	f.Add([]byte("\x0a\x05\x0a\x03\x0a\x01"), false, false)
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"mcp.drift.call","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"t"}},{"key":"mcp.drift.outcome","value":{"intValue":"3"}}]}]}]}]}`), true, false)
	f.Add(gzipped(f, make([]byte, 2<<20)), false, true)

	cfg := testConfig()
	cfg.MaxRequestBytes = 1 << 20
	// Batches of one event are written at once: no request waits for the
	// batch delay, which would slow fuzzing (and minimising) down.
	cfg.BatchMaxEvents = 1
	s := newServer(f, cfg, &discard{}, false)
	h := s.HTTPHandler()

	f.Fuzz(func(t *testing.T, body []byte, json, gz bool) {
		req := httptest.NewRequest(http.MethodPost, pathLogs, bytes.NewReader(body))
		enc := encodingProto
		if json {
			enc = encodingJSON
		}
		req.Header.Set("Content-Type", enc.mediaType())
		if gz {
			req.Header.Set("Content-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for a %d-byte %s body (gzip %v): %s", rec.Code, len(body), enc.mediaType(), gz, rec.Body.Bytes())
		}
		if got := rec.Header().Get("Content-Type"); got != enc.mediaType() {
			t.Fatalf("answer in %q, want %q", got, enc.mediaType())
		}
		if p := s.tenants.def.b.Pending(); p != 0 {
			t.Fatalf("%d events pending after the request returned", p)
		}
	})
}
