package ingest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// mcpSpans describes the spans of a test traces request, in this order.
type mcpSpans struct {
	declared int // SERVER tools/call spans with a declared drift outcome
	invalid  int // SERVER tools/call spans with a JSON-RPC -32602 and no drift attributes
	unknown  int // tools/call spans with an unknown outcome: rejected
	other    int // spans that are not MCP spans: ignored
}

func (m mcpSpans) total() int { return m.declared + m.invalid + m.unknown + m.other }

// traces builds the request described by m.
func (m mcpSpans) traces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(otelschema.AttrServiceName, "weather-mcp")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/modelcontextprotocol/go-sdk")
	start := pcommon.NewTimestampFromTime(time.Now())
	n := 0
	span := func(name string, kind ptrace.SpanKind) pcommon.Map {
		n++
		sp := ss.Spans().AppendEmpty()
		sp.SetName(name)
		sp.SetKind(kind)
		sp.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, byte(n >> 8), byte(n)})
		sp.SetStartTimestamp(start)
		sp.SetEndTimestamp(start + 1000)
		a := sp.Attributes()
		if kind != ptrace.SpanKindInternal {
			a.PutStr(otelschema.AttrMethodName, "tools/call")
			a.PutStr(otelschema.AttrToolName, "get_forecast")
			a.PutStr(otelschema.AttrSessionID, "s-1")
			a.PutStr(otelschema.AttrRequestID, fmt.Sprint(n))
		}
		return a
	}
	for range m.declared {
		a := span("tools/call get_forecast", ptrace.SpanKindServer)
		a.PutStr(otelschema.AttrOutcome, "normalized")
		a.PutStr(otelschema.AttrAdapterID, "forecast-v1-v2")
	}
	for range m.invalid {
		span("tools/call get_forecast", ptrace.SpanKindServer).PutInt(otelschema.SpanAttrRPCStatusCode, -32602)
	}
	for range m.unknown {
		span("tools/call get_forecast", ptrace.SpanKindClient).PutStr(otelschema.AttrOutcome, "sideways")
	}
	for range m.other {
		span("GET /healthz", ptrace.SpanKindInternal)
	}
	return td
}

// encodeTraces returns the request of m in enc.
func encodeTraces(t testing.TB, enc encoding, m mcpSpans) []byte {
	t.Helper()
	req := ptraceotlp.NewExportRequestFromTraces(m.traces())
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

// postTraces sends an OTLP/HTTP traces request and decodes the answer in
// enc, failing the test when it does not follow the OTLP specification: the
// encoding of the request, an ExportTraceServiceResponse on success, a
// google.rpc.Status otherwise. Its rejected field is the rejected_spans.
func postTraces(t testing.TB, url, contentEncoding string, enc encoding, body io.Reader) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", enc.mediaType())
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
	if got := resp.Header.Get("Content-Type"); got != enc.mediaType() {
		t.Fatalf("answer %d has Content-Type %q, want %q; body %q", resp.StatusCode, got, enc.mediaType(), raw)
	}
	if resp.StatusCode == http.StatusOK {
		r := ptraceotlp.NewExportResponse()
		if enc == encodingJSON {
			err = r.UnmarshalJSON(raw)
		} else {
			err = r.UnmarshalProto(raw)
		}
		if err != nil {
			t.Fatalf("cannot decode response %q: %v", raw, err)
		}
		a.rejected = r.PartialSuccess().RejectedSpans()
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

// storedEvents returns the events written, in order.
func (s *sink) storedEvents() []otelschema.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var events []otelschema.Event
	for _, b := range s.batches {
		events = append(events, b.Events...)
	}
	return events
}

func TestHTTPTraces(t *testing.T) {
	const limit = 64 << 10
	cfg := testConfig()
	cfg.MaxRequestBytes = limit
	w := &sink{}
	s := newServer(t, cfg, w, true)
	url := "http://" + s.HTTPAddr().String() + receiver.PathTraces

	random := make([]byte, limit+1)
	_, _ = rand.Read(random)
	bomb := gzipped(t, make([]byte, 10<<20))

	var sent mcpSpans
	for _, enc := range []encoding{encodingProto, encodingJSON} {
		garbage := []byte("\xff\xff\xff\xff")
		if enc == encodingJSON {
			garbage = []byte(`{"resourceSpans": [{`)
		}
		for _, tc := range []struct {
			name     string
			encoding string
			spans    mcpSpans // sent, when body is nil
			body     []byte
			// want
			status   int
			code     codes.Code
			stored   int
			rejected int64
			msg      []string
		}{
			{name: "valid", spans: mcpSpans{declared: 3, invalid: 2}, status: 200, stored: 5},
			{name: "partial success", spans: mcpSpans{declared: 2, unknown: 2, other: 3}, status: 200, stored: 2, rejected: 2,
				msg: []string{"2 of 7 spans rejected: resource 0, scope 0, span 2: dev.mcpdrift.outcome: unknown value \"sideways\"", "span 3: "}},
			{name: "only other spans", spans: mcpSpans{other: 4}, status: 200},
			{name: "empty request", status: 200},
			{name: "gzip", encoding: "gzip", spans: mcpSpans{invalid: 1, unknown: 1}, status: 200, stored: 1, rejected: 1},
			{name: "wrong content encoding", encoding: "br", spans: mcpSpans{declared: 1}, status: 415, code: codes.InvalidArgument, msg: []string{`"br"`}},
			{name: "oversize", body: random, status: 413, code: codes.InvalidArgument, msg: []string{"limit"}},
			{name: "gzip bomb", encoding: "gzip", body: bomb, status: 413, code: codes.InvalidArgument, msg: []string{"decompressed"}},
			{name: "malformed", body: garbage, status: 400, code: codes.InvalidArgument, msg: []string{"cannot decode request of"}},
		} {
			t.Run(fmt.Sprintf("%s/%s", enc.mediaType(), tc.name), func(t *testing.T) {
				body := tc.body
				if body == nil {
					body = encodeTraces(t, enc, tc.spans)
					if tc.status == 200 {
						sent.declared += tc.spans.declared
						sent.invalid += tc.spans.invalid
						sent.unknown += tc.spans.unknown
						sent.other += tc.spans.other
					}
					if tc.encoding == "gzip" {
						body = gzipped(t, body)
					}
				}
				before := w.total()
				a := postTraces(t, url, tc.encoding, enc, bytes.NewReader(body))
				if a.status != tc.status {
					t.Fatalf("status %d (%s), want %d", a.status, a.message, tc.status)
				}
				if tc.status != 200 && a.statusCode != tc.code {
					t.Errorf("Status code %s, want %s", a.statusCode, tc.code)
				}
				if a.rejected != tc.rejected {
					t.Errorf("rejected %d, want %d (%s)", a.rejected, tc.rejected, a.message)
				}
				for _, m := range tc.msg {
					if !strings.Contains(a.message, m) {
						t.Errorf("message %q does not contain %q", a.message, m)
					}
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

	t.Run("wrong content type and method", func(t *testing.T) {
		a := do(t, http.MethodPost, url, "text/plain", "", "", bytes.NewReader(encodeTraces(t, encodingProto, mcpSpans{declared: 1})))
		if a.status != http.StatusUnsupportedMediaType {
			t.Errorf("status %d, want 415", a.status)
		}
		a = do(t, http.MethodGet, url, receiver.MediaProto, "", encodingProto, nil)
		if a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != http.MethodPost || !strings.Contains(a.message, receiver.PathTraces) {
			t.Errorf("GET: status %d, Allow %q, %q; want 405, POST, naming %s", a.status, a.header.Get("Allow"), a.message, receiver.PathTraces)
		}
	})

	// The spans inferred from the conventions alone are marked so.
	var declared, invalid int
	for _, e := range w.storedEvents() {
		switch {
		case e.Outcome == otelschema.OutcomeNormalized && e.AdapterID == "forecast-v1-v2" && e.Attributes[otelschema.OutcomeInferredAttr] == "":
			declared++
		case e.Outcome == otelschema.OutcomeRejectedInvalid && e.ErrorCode == "-32602" && e.Attributes[otelschema.OutcomeInferredAttr] == "true":
			invalid++
		default:
			t.Errorf("stored %+v", e)
		}
		if e.Name != otelschema.EventCall || e.Tool != "get_forecast" || e.Service != "weather-mcp" || e.SessionID != "s-1" {
			t.Errorf("stored %+v", e)
		}
	}
	if declared != sent.declared || invalid != sent.invalid {
		t.Errorf("stored %d declared and %d inferred calls, want %d and %d", declared, invalid, sent.declared, sent.invalid)
	}

	st := s.Stats()
	want := receiver.Stats{Spans: uint64(sent.total()), SpansAccepted: uint64(sent.declared + sent.invalid),
		SpansRejected: uint64(sent.unknown), SpansIgnored: uint64(sent.other)}
	if st.Spans != want.Spans || st.SpansAccepted != want.SpansAccepted || st.SpansRejected != want.SpansRejected || st.SpansIgnored != want.SpansIgnored {
		t.Errorf("span stats %d/%d/%d/%d, want %d/%d/%d/%d", st.Spans, st.SpansAccepted, st.SpansRejected, st.SpansIgnored,
			want.Spans, want.SpansAccepted, want.SpansRejected, want.SpansIgnored)
	}
	if st.Records != 0 || st.Accepted != 0 || st.EventsStored != uint64(w.total()) {
		t.Errorf("stats %+v, stored %d", st, w.total())
	}
	if st.Refused.TooLarge != 4 || st.Refused.Malformed != 2 || st.Refused.MediaType != 3 || st.Refused.Method != 1 {
		t.Errorf("refusals %+v", st.Refused)
	}
}

// grpcTracesClient returns an OTLP/gRPC traces client of s, closed at the
// end of the test.
func grpcTracesClient(t *testing.T, s *Server) ptraceotlp.GRPCClient {
	t.Helper()
	cc, err := grpc.NewClient(s.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return ptraceotlp.NewGRPCClient(cc)
}

func exportTraces(t *testing.T, c ptraceotlp.GRPCClient, m mcpSpans, opts ...grpc.CallOption) (ptraceotlp.ExportResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Export(ctx, ptraceotlp.NewExportRequestFromTraces(m.traces()), opts...)
}

func TestGRPCTraces(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRequestBytes = 64 << 10
	w := &sink{}
	s := newServer(t, cfg, w, true)
	c := grpcTracesClient(t, s)

	for _, tc := range []struct {
		name     string
		spans    mcpSpans
		opts     []grpc.CallOption
		stored   int
		rejected int64
		msg      []string
	}{
		{name: "valid", spans: mcpSpans{declared: 4, invalid: 3}, stored: 7},
		{name: "partially invalid", spans: mcpSpans{declared: 1, invalid: 1, unknown: 3, other: 5}, stored: 2, rejected: 3,
			msg: []string{"3 of 10 spans rejected", "span 2: dev.mcpdrift.outcome", "sideways"}},
		{name: "gzip", spans: mcpSpans{invalid: 2, unknown: 1}, opts: []grpc.CallOption{grpc.UseCompressor(gzip.Name)}, stored: 2, rejected: 1},
		{name: "empty", spans: mcpSpans{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := w.total()
			resp, err := exportTraces(t, c, tc.spans, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			ps := resp.PartialSuccess()
			if ps.RejectedSpans() != tc.rejected {
				t.Errorf("rejected %d, want %d (%s)", ps.RejectedSpans(), tc.rejected, ps.ErrorMessage())
			}
			for _, m := range tc.msg {
				if !strings.Contains(ps.ErrorMessage(), m) {
					t.Errorf("message %q does not contain %q", ps.ErrorMessage(), m)
				}
			}
			if got := w.total() - before; got != tc.stored {
				t.Errorf("%d events stored, want %d", got, tc.stored)
			}
		})
	}
	if st := s.Stats(); st.Spans != 7+10+3 || st.SpansAccepted != 7+2+2 || st.SpansRejected != 3+1 || st.SpansIgnored != 5 || st.Requests != 4 {
		t.Errorf("stats %+v", st)
	}

	t.Run("too large", func(t *testing.T) {
		_, err := exportTraces(t, c, mcpSpans{declared: 2000}, grpc.UseCompressor(gzip.Name))
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("error %v, want ResourceExhausted", err)
		}
	})
}

func TestGRPCTracesStoreErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		code  codes.Code
		retry time.Duration
	}{
		{"retryable", errors.New("connection refused"), codes.Unavailable, 3 * time.Second},
		{"permanent", fmt.Errorf("%w: cannot parse", store.ErrPermanent), codes.InvalidArgument, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RetryAfter = 3 * time.Second
			s := newServer(t, cfg, &sink{fail: func(store.Batch) error { return tc.err }}, true)
			_, err := exportTraces(t, grpcTracesClient(t, s), mcpSpans{declared: 1})
			if status.Code(err) != tc.code || retryDelay(err) != tc.retry {
				t.Fatalf("error %v, RetryInfo %s; want %s, %s", err, retryDelay(err), tc.code, tc.retry)
			}
			// Over HTTP too, with Retry-After when retryable.
			a := postTraces(t, "http://"+s.HTTPAddr().String()+receiver.PathTraces, "", encodingJSON, bytes.NewReader(encodeTraces(t, encodingJSON, mcpSpans{invalid: 1})))
			if (a.status == 503) != (tc.retry > 0) || (a.header.Get("Retry-After") == "3") != (tc.retry > 0) || a.status == 200 {
				t.Errorf("HTTP: status %d, Retry-After %q (%s)", a.status, a.header.Get("Retry-After"), a.message)
			}
		})
	}
}
