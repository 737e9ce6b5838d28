package ingest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/store"
)

// discard is a store.Writer that only counts.
type discard struct{ events atomic.Int64 }

func (d *discard) Write(_ context.Context, b store.Batch) error {
	d.events.Add(int64(len(b.Events)))
	return nil
}

// fuzzCodings are the content codings FuzzHTTPLogs sends, by its coding
// argument modulo their number: none, then every one accepted.
var fuzzCodings = append([]string{""}, receiver.Codings()...)

// fuzzCoding returns the index in fuzzCodings of coding.
func fuzzCoding(coding string) uint8 {
	for i, c := range fuzzCodings {
		if c == coding {
			return uint8(i)
		}
	}
	panic("unknown coding " + coding)
}

// FuzzHTTPLogs sends random bodies, as protobuf or JSON, raw or in any
// content coding accepted, to the OTLP/HTTP handler. Whatever the body, the
// answer is never a 5xx, and the handler does not panic, leave events
// pending or hold bytes of the in-flight budget.
func FuzzHTTPLogs(f *testing.F) {
	for _, d := range []drift{{valid: 2}, {valid: 1, unknown: 1, noTool: 1, other: 1}, {}} {
		f.Add(encode(f, encodingProto, d), false, uint8(0))
		f.Add(encode(f, encodingJSON, d), true, uint8(0))
		for coding, compress := range compressors {
			f.Add(compress(f, encode(f, encodingProto, d)), false, fuzzCoding(coding))
		}
	}
	f.Add([]byte("\x0a\x05\x0a\x03\x0a\x01"), false, uint8(0))
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"mcp.drift.call","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"t"}},{"key":"mcp.drift.outcome","value":{"intValue":"3"}}]}]}]}]}`), true, uint8(0))
	for coding, compress := range compressors {
		f.Add(compress(f, make([]byte, 2<<20)), false, fuzzCoding(coding))
	}
	f.Add(framedSnappy(f, encode(f, encodingProto, drift{valid: 1})), false, fuzzCoding(receiver.CodingSnappy))
	f.Add(snappyBlockClaiming(3<<20), false, fuzzCoding(receiver.CodingSnappy))
	f.Add(zstdFrame(24, 0), false, fuzzCoding(receiver.CodingZstd))

	cfg := testConfig()
	cfg.MaxRequestBytes = 1 << 20
	// Batches of one event are written at once: no request waits for the
	// batch delay, which would slow fuzzing (and minimising) down.
	cfg.BatchMaxEvents = 1
	s := newServer(f, cfg, &discard{}, false)
	h := s.HTTPHandler()

	f.Fuzz(func(t *testing.T, body []byte, json bool, codingIndex uint8) {
		coding := fuzzCodings[int(codingIndex)%len(fuzzCodings)]
		req := httptest.NewRequest(http.MethodPost, receiver.PathLogs, bytes.NewReader(body))
		enc := encodingProto
		if json {
			enc = encodingJSON
		}
		req.Header.Set("Content-Type", enc.mediaType())
		if coding != "" {
			req.Header.Set("Content-Encoding", coding)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for a %d-byte %s body (coding %q): %s", rec.Code, len(body), enc.mediaType(), coding, rec.Body.Bytes())
		}
		if got := rec.Header().Get("Content-Type"); got != enc.mediaType() {
			t.Fatalf("answer in %q, want %q", got, enc.mediaType())
		}
		if p := s.tenants.def.b.Pending(); p != 0 {
			t.Fatalf("%d events pending after the request returned", p)
		}
		if held := s.recv.InflightBytes(); held != 0 {
			t.Fatalf("%d bytes of the in-flight budget held after the request returned", held)
		}
	})
}
