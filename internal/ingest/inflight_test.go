package ingest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// nestedAttrJSON is a logs request in OTLP/JSON with one call record whose
// extra attribute holds arrays nested levels deep.
func nestedAttrJSON(levels int) []byte {
	v := `{"stringValue":"x"}`
	for range levels {
		v = `{"arrayValue":{"values":[` + v + `]}}`
	}
	return []byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"s"}}]},` +
		`"scopeLogs":[{"logRecords":[{"eventName":"mcp.drift.call","attributes":[` +
		`{"key":"gen_ai.tool.name","value":{"stringValue":"t"}},{"key":"mcp.drift.outcome","value":{"stringValue":"current"}},` +
		`{"key":"x.nested","value":` + v + `}]}]}]}]}`)
}

// TestJSONNestingLimit: an OTLP/JSON request nested past maxJSONDepth is
// refused as malformed before pdata decodes it; 49 nested arrays, which
// the protobuf decoder takes, pass.
func TestJSONNestingLimit(t *testing.T) {
	w := &sink{}
	s := newServer(t, testConfig(), w, true)
	post := func(body []byte) (int, string) {
		resp, err := http.Post("http://"+s.HTTPAddr().String()+receiver.PathLogs, receiver.MediaJSON, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(nestedAttrJSON(49)); code != http.StatusOK {
		t.Fatalf("49 nested arrays: %d %s", code, body)
	}
	if code, body := post(nestedAttrJSON(20000)); code != http.StatusBadRequest || !strings.Contains(body, "nested more than 200 levels") {
		t.Fatalf("20000 nested arrays: %d %s", code, body)
	}
	if st := s.Stats(); st.Refused.Malformed != 1 || w.total() != 1 {
		t.Errorf("refused malformed %d, stored %d; want 1 and 1", st.Refused.Malformed, w.total())
	}
}

// TestInflightBudgetHTTP holds one request's body in flight, unread, and
// sends another: it does not fit in the budget and is refused, retryable,
// before its body is read. Once the first is answered, the budget is
// whole again.
func TestInflightBudgetHTTP(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRequestBytes = 1 << 20
	cfg.MaxInflightBytes = 1 << 20
	w := &sink{}
	s := newServer(t, cfg, w, true)
	url := "http://" + s.HTTPAddr().String() + receiver.PathLogs
	body := marshalLogs(t, drift{valid: 3})

	release := holdInflight(t, s, 1<<20, body[:10])

	resp, err := http.Post(url, receiver.MediaProto, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(msg), "in flight") {
		t.Fatalf("second request while the first holds the budget: %d %q, Retry-After %q", resp.StatusCode, msg, resp.Header.Get("Retry-After"))
	}
	if n := s.Stats().Refused.Inflight; n != 1 {
		t.Errorf("refused for the in-flight budget: %d, want 1", n)
	}
	release()
	waitFor(t, "the budget to be whole again", func() bool { return s.recv.InflightBytes() == 0 })
	if code := postProto(t, url, body); code != http.StatusOK {
		t.Fatalf("after the first request ended: %d", code)
	}
}

// holdInflight posts a logs request to s that announces n bytes and sends
// only head, and waits until the receiver holds its bytes of the in-flight
// budget; release ends the request, unanswered.
func holdInflight(t *testing.T, s *Server, n int64, head []byte) (release func()) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest(http.MethodPost, "http://"+s.HTTPAddr().String()+receiver.PathLogs, pr)
		req.Header.Set("Content-Type", receiver.MediaProto)
		req.ContentLength = n
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	if _, err := pw.Write(head); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first body to hold the budget", func() bool { return s.recv.InflightBytes() > 0 })
	return func() {
		pw.CloseWithError(io.ErrUnexpectedEOF)
		<-done
	}
}

// TestInflightBudgetGRPC: while the budget is spent, a gRPC export is
// refused on its headers as RESOURCE_EXHAUSTED with a retry delay.
func TestInflightBudgetGRPC(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRequestBytes = 1 << 20
	cfg.MaxInflightBytes = 1 << 20
	s := newServer(t, cfg, &sink{}, true)
	c := grpcClient(t, s)
	release := holdInflight(t, s, 1<<20, marshalLogs(t, drift{valid: 3})[:10])
	_, err := export(t, c, drift{valid: 2})
	if status.Code(err) != codes.ResourceExhausted || retryDelay(err) <= 0 {
		t.Fatalf("export with the budget spent: %v (retry delay %v), want RESOURCE_EXHAUSTED with RetryInfo", err, retryDelay(err))
	}
	release()
	waitFor(t, "the budget to be whole again", func() bool { return s.recv.InflightBytes() == 0 })
	if _, err := export(t, c, drift{valid: 2}); err != nil {
		t.Fatalf("export once the budget is back: %v", err)
	}
	if used := s.recv.InflightBytes(); used != 0 {
		t.Errorf("%d bytes of the budget still held after the export", used)
	}
}

// TestGRPCMalformedTraces: a traces export that is not a request is
// INVALID_ARGUMENT, counted as malformed, as a logs export is.
func TestGRPCMalformedTraces(t *testing.T) {
	s := newServer(t, testConfig(), &sink{}, true)
	cc, err := grpc.NewClient(s.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, method := range []string{"/opentelemetry.proto.collector.trace.v1.TraceService/Export", "/opentelemetry.proto.collector.logs.v1.LogsService/Export"} {
		var out rawBytes
		err := cc.Invoke(ctx, method, rawBytes{0x0a, 0xff, 0xff}, &out, grpc.ForceCodecV2(rawCodec{}))
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s with a malformed message: %v, want INVALID_ARGUMENT", method, err)
		}
	}
	if n := s.Stats().Refused.Malformed; n != 2 {
		t.Errorf("counted %d malformed requests, want 2", n)
	}
}

// rawBytes is a gRPC message sent and received as its bytes (rawCodec).
type rawBytes []byte

// rawCodec sends a rawBytes's bytes as they are, for a client that
// sends what no encoder would.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(rawBytes))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*rawBytes) = data.Materialize()
	return nil
}

// marshalLogs is the protobuf encoding of d's request.
func marshalLogs(t *testing.T, d drift) []byte {
	t.Helper()
	b, err := plogotlp.NewExportRequestFromLogs(d.logs()).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postProto posts a protobuf logs request and returns the status.
func postProto(t *testing.T, url string, body []byte) int {
	t.Helper()
	resp, err := http.Post(url, receiver.MediaProto, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
