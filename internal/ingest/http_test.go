package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/store"
)

// encoding is the media type of a test's request body, and of the answer
// it expects; "" is none.
type encoding string

const (
	encodingProto encoding = receiver.MediaProto
	encodingJSON  encoding = receiver.MediaJSON
)

func (e encoding) mediaType() string { return string(e) }

// encode returns the request of d in enc.
func encode(t testing.TB, enc encoding, d drift) []byte {
	t.Helper()
	req := plogotlp.NewExportRequestFromLogs(d.logs())
	var (
		b   []byte
		err error
	)
	if enc == encodingJSON {
		b, err = req.MarshalJSON()
	} else {
		b, err = req.MarshalProto()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// httpAnswer is a decoded OTLP/HTTP answer.
type httpAnswer struct {
	status     int
	header     http.Header
	rejected   int64  // partial_success.rejected_log_records, on 200
	message    string // partial_success.error_message on 200, Status.message otherwise
	statusCode codes.Code
}

// do sends an OTLP/HTTP request and decodes the answer in enc, failing the
// test when the answer does not follow the OTLP specification: the encoding
// of the request, an ExportLogsServiceResponse on success, a google.rpc.Status
// otherwise.
func do(t testing.TB, method, url, contentType, contentEncoding string, enc encoding, body io.Reader) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if contentEncoding != "" {
		req.Header.Set("Content-Encoding", contentEncoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := httpAnswer{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode == http.StatusMethodNotAllowed || enc == "" {
		a.message = string(raw)
		return a
	}
	if got := resp.Header.Get("Content-Type"); got != enc.mediaType() {
		t.Fatalf("answer %d has Content-Type %q, want %q; body %q", resp.StatusCode, got, enc.mediaType(), raw)
	}
	if resp.StatusCode == http.StatusOK {
		r := plogotlp.NewExportResponse()
		if enc == encodingJSON {
			err = r.UnmarshalJSON(raw)
		} else {
			err = r.UnmarshalProto(raw)
		}
		if err != nil {
			t.Fatalf("cannot decode response %q: %v", raw, err)
		}
		a.rejected = r.PartialSuccess().RejectedLogRecords()
		a.message = r.PartialSuccess().ErrorMessage()
		return a
	}
	var st statuspb.Status
	if enc == encodingJSON {
		err = protojson.Unmarshal(raw, &st)
	} else {
		err = proto.Unmarshal(raw, &st)
	}
	if err != nil {
		t.Fatalf("cannot decode Status of answer %d %q: %v", resp.StatusCode, raw, err)
	}
	a.statusCode, a.message = codes.Code(st.Code), st.Message
	return a
}

// hideLength hides the length of r, so that the request is sent chunked.
func hideLength(b []byte) io.Reader { return io.MultiReader(bytes.NewReader(b)) }

func TestHTTPLogs(t *testing.T) {
	const limit = 64 << 10
	cfg := testConfig()
	cfg.MaxRequestBytes = limit
	w := &sink{}
	s := newServer(t, cfg, w, true)
	url := "http://" + s.HTTPAddr().String() + receiver.PathLogs

	random := make([]byte, limit+1)
	_, _ = rand.Read(random)
	bomb := gzipped(t, make([]byte, 10<<20)) // 10 MiB of zeros in about 10 KiB

	for _, enc := range []encoding{encodingProto, encodingJSON} {
		mt := enc.mediaType()
		garbage := []byte("\xff\xff\xff\xff")
		if enc == encodingJSON {
			garbage = []byte(`{"resourceLogs": [{`)
		}
		for _, tc := range []struct {
			name        string
			method      string
			contentType string
			encoding    string
			body        []byte
			chunked     bool
			// want
			status   int
			code     codes.Code // of the Status body, when not 200
			stored   int        // events stored by this request
			rejected int64
			msg      string // the message contains it
		}{
			{name: "valid", body: encode(t, enc, drift{valid: 5}), status: 200, stored: 5},
			{name: "valid chunked", body: encode(t, enc, drift{valid: 2}), chunked: true, status: 200, stored: 2},
			{name: "content type with parameters", contentType: mt + "; charset=utf-8", body: encode(t, enc, drift{valid: 1}), status: 200, stored: 1},
			{name: "partial success", body: encode(t, enc, drift{valid: 3, unknown: 1, noTool: 1, other: 2}), status: 200, stored: 3, rejected: 2, msg: "sideways"},
			{name: "only other logs", body: encode(t, enc, drift{other: 3}), status: 200},
			{name: "empty request", body: encode(t, enc, drift{}), status: 200},
			{name: "gzip", encoding: "gzip", body: gzipped(t, encode(t, enc, drift{valid: 4, unknown: 1})), status: 200, stored: 4, rejected: 1},
			{name: "gzip chunked", encoding: "gzip", chunked: true, body: gzipped(t, encode(t, enc, drift{valid: 1})), status: 200, stored: 1},
			{name: "identity encoding", encoding: "identity", body: encode(t, enc, drift{valid: 1}), status: 200, stored: 1},
			{name: "wrong content encoding", encoding: "br", body: encode(t, enc, drift{valid: 1}), status: 415, code: codes.InvalidArgument, msg: `"br"`},
			{name: "oversize", body: random, status: 413, code: codes.InvalidArgument, msg: "limit"},
			{name: "oversize chunked", body: random, chunked: true, status: 413, code: codes.InvalidArgument, msg: "limit"},
			{name: "oversize gzip", encoding: "gzip", body: gzipped(t, random), status: 413, code: codes.InvalidArgument, msg: "limit"},
			{name: "gzip bomb", encoding: "gzip", body: bomb, status: 413, code: codes.InvalidArgument, msg: "decompressed"},
			{name: "gzip bomb chunked", encoding: "gzip", body: bomb, chunked: true, status: 413, code: codes.InvalidArgument, msg: "decompressed"},
			{name: "malformed", body: garbage, status: 400, code: codes.InvalidArgument, msg: "cannot decode request of"},
			{name: "not gzip", encoding: "gzip", body: encode(t, enc, drift{valid: 1}), status: 400, code: codes.InvalidArgument, msg: "gzip"},
			{name: "truncated gzip", encoding: "gzip", body: gzipped(t, encode(t, enc, drift{valid: 1}))[:20], status: 400, code: codes.InvalidArgument, msg: "gzip"},
		} {
			t.Run(fmt.Sprintf("%s/%s", mt, tc.name), func(t *testing.T) {
				ct := tc.contentType
				if ct == "" {
					ct = mt
				}
				var body io.Reader = bytes.NewReader(tc.body)
				if tc.chunked {
					body = hideLength(tc.body)
				}
				before := w.total()
				a := do(t, http.MethodPost, url, ct, tc.encoding, enc, body)
				if a.status != tc.status {
					t.Fatalf("status %d (%s), want %d", a.status, a.message, tc.status)
				}
				if tc.status != 200 && a.statusCode != tc.code {
					t.Errorf("Status code %s, want %s", a.statusCode, tc.code)
				}
				if a.rejected != tc.rejected {
					t.Errorf("rejected %d, want %d (%s)", a.rejected, tc.rejected, a.message)
				}
				if !strings.Contains(a.message, tc.msg) {
					t.Errorf("message %q does not contain %q", a.message, tc.msg)
				}
				if tc.status == 200 && tc.rejected == 0 && a.message != "" {
					t.Errorf("message %q without rejections", a.message)
				}
				if got := w.total() - before; got != tc.stored {
					t.Errorf("%d events stored, want %d", got, tc.stored)
				}
			})
		}
	}

	t.Run("wrong content type", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "", "application/protobuf", "application/x-protobuf;;"} {
			a := do(t, http.MethodPost, url, ct, "", "", bytes.NewReader(encode(t, encodingProto, drift{valid: 1})))
			if a.status != http.StatusUnsupportedMediaType {
				t.Errorf("Content-Type %q: status %d, want 415", ct, a.status)
			}
		}
	})
	t.Run("wrong method", func(t *testing.T) {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
			a := do(t, m, url, encodingProto.mediaType(), "", encodingProto, nil)
			if a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != http.MethodPost {
				t.Errorf("%s: status %d, Allow %q; want 405, POST", m, a.status, a.header.Get("Allow"))
			}
		}
	})
	t.Run("other paths", func(t *testing.T) {
		a := do(t, http.MethodPost, "http://"+s.HTTPAddr().String()+"/v1/metrics", encodingProto.mediaType(), "", "", nil)
		if a.status != http.StatusNotFound {
			t.Errorf("status %d, want 404", a.status)
		}
	})

	st := s.Stats()
	if st.Refused.TooLarge != 10 || st.Refused.Malformed != 6 || st.Refused.MediaType != 2+4 || st.Refused.Method != 3 {
		t.Errorf("refusals %+v", st.Refused)
	}
	if st.Rejected != 6 || st.Records == 0 || st.Accepted == 0 || st.EventsStored != uint64(w.total()) {
		t.Errorf("stats %+v, stored %d", st, w.total())
	}
}

// TestHTTPStoreErrors checks how store failures and overload are answered.
func TestHTTPStoreErrors(t *testing.T) {
	errDown := errors.New("connection refused")
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		code       codes.Code
		retryAfter string
	}{
		{"retryable", errDown, 503, codes.Unavailable, "2"},
		{"permanent, data at fault", fmt.Errorf("%w: cannot parse", store.ErrPermanent), 400, codes.InvalidArgument, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RetryAfter = 1500 * time.Millisecond
			s := newServer(t, cfg, &sink{fail: func(store.Batch) error { return tc.err }}, true)
			for _, enc := range []encoding{encodingProto, encodingJSON} {
				a := do(t, http.MethodPost, "http://"+s.HTTPAddr().String()+receiver.PathLogs, enc.mediaType(), "", enc, bytes.NewReader(encode(t, enc, drift{valid: 1})))
				if a.status != tc.status || a.statusCode != tc.code || a.header.Get("Retry-After") != tc.retryAfter {
					t.Errorf("%s: status %d code %s Retry-After %q (%s); want %d %s %q", enc.mediaType(), a.status, a.statusCode, a.header.Get("Retry-After"), a.message, tc.status, tc.code, tc.retryAfter)
				}
			}
		})
	}

	t.Run("overloaded", func(t *testing.T) {
		cfg := testConfig()
		cfg.BatchMaxEvents = 2
		cfg.MaxPendingEvents = 2
		w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 10)}
		s := newServer(t, cfg, w, true)
		url := "http://" + s.HTTPAddr().String() + receiver.PathLogs
		first := make(chan httpAnswer, 1)
		go func() {
			first <- do(t, http.MethodPost, url, receiver.MediaProto, "", encodingProto, bytes.NewReader(encode(t, encodingProto, drift{valid: 2})))
		}()
		<-w.entered // the first request's batch is being written, and blocks
		a := do(t, http.MethodPost, url, receiver.MediaProto, "", encodingProto, bytes.NewReader(encode(t, encodingProto, drift{valid: 1})))
		if a.status != 503 || a.statusCode != codes.Unavailable || a.header.Get("Retry-After") != "1" {
			t.Errorf("status %d code %s Retry-After %q (%s); want 503 Unavailable 1", a.status, a.statusCode, a.header.Get("Retry-After"), a.message)
		}
		close(w.gate)
		if a := <-first; a.status != 200 {
			t.Errorf("first request: status %d (%s)", a.status, a.message)
		}
		if got := s.Stats().Refused.Overloaded; got != 1 {
			t.Errorf("%d overload refusals counted, want 1", got)
		}
	})
}

// TestShutdownFinishesRequests checks that Shutdown lets a request waiting
// for its batch finish, and that it is acknowledged.
func TestShutdownFinishesRequests(t *testing.T) {
	cfg := testConfig()
	cfg.BatchMaxDelay = time.Hour
	w := &sink{}
	s, err := New(cfg, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan httpAnswer, 1)
	go func() {
		done <- do(t, http.MethodPost, "http://"+s.HTTPAddr().String()+receiver.PathLogs, receiver.MediaProto, "", encodingProto, bytes.NewReader(encode(t, encodingProto, drift{valid: 3})))
	}()
	for s.tenants.def.b.Pending() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.status != 200 {
		t.Fatalf("in-flight request: status %d (%s)", a.status, a.message)
	}
	if w.total() != 3 {
		t.Fatalf("%d events stored, want 3", w.total())
	}
	if err := s.Start(context.Background()); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("Start after Shutdown: %v", err)
	}
}
