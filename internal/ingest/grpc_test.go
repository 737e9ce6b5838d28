package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"

	"github.com/mcpdrift/mcpdrift/store"
)

// grpcClient returns an OTLP/gRPC logs client of s, closed at the end of the
// test.
func grpcClient(t *testing.T, s *Server) plogotlp.GRPCClient {
	t.Helper()
	cc, err := grpc.NewClient(s.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return plogotlp.NewGRPCClient(cc)
}

func export(t *testing.T, c plogotlp.GRPCClient, d drift, opts ...grpc.CallOption) (plogotlp.ExportResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Export(ctx, plogotlp.NewExportRequestFromLogs(d.logs()), opts...)
}

// retryDelay returns the RetryInfo delay of a status error, or -1.
func retryDelay(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return -1
}

func TestGRPCLogs(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRequestBytes = 64 << 10
	w := &sink{}
	s := newServer(t, cfg, w, true)
	c := grpcClient(t, s)

	for _, tc := range []struct {
		name     string
		d        drift
		opts     []grpc.CallOption
		stored   int
		rejected int64
		msg      []string
	}{
		{name: "valid", d: drift{valid: 7}, stored: 7},
		{name: "partially invalid", d: drift{valid: 3, unknown: 2, noTool: 1, other: 4}, stored: 3, rejected: 3,
			msg: []string{"3 of 10 log records rejected", "sideways", "gen_ai.tool.name"}},
		{name: "gzip", d: drift{valid: 2, noTool: 1}, opts: []grpc.CallOption{grpc.UseCompressor(gzip.Name)}, stored: 2, rejected: 1},
		{name: "empty", d: drift{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := w.total()
			resp, err := export(t, c, tc.d, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			ps := resp.PartialSuccess()
			if ps.RejectedLogRecords() != tc.rejected {
				t.Errorf("rejected %d, want %d (%s)", ps.RejectedLogRecords(), tc.rejected, ps.ErrorMessage())
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

	t.Run("too large", func(t *testing.T) {
		_, err := export(t, c, drift{valid: 2000})
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("error %v, want ResourceExhausted", err)
		}
		// A gzip bomb: small on the wire, over the limit once decompressed.
		_, err = export(t, c, drift{valid: 2000}, grpc.UseCompressor(gzip.Name))
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("compressed: error %v, want ResourceExhausted", err)
		}
	})
}

func TestGRPCStoreErrors(t *testing.T) {
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
			_, err := export(t, grpcClient(t, s), drift{valid: 1})
			if status.Code(err) != tc.code || retryDelay(err) != tc.retry {
				t.Fatalf("error %v, RetryInfo %s; want %s, %s", err, retryDelay(err), tc.code, tc.retry)
			}
		})
	}
}

func TestGRPCOverloaded(t *testing.T) {
	cfg := testConfig()
	cfg.BatchMaxEvents = 4
	cfg.MaxPendingEvents = 4
	w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 10)}
	s := newServer(t, cfg, w, true)
	c := grpcClient(t, s)

	first := make(chan error, 1)
	go func() {
		_, err := export(t, c, drift{valid: 4})
		first <- err
	}()
	<-w.entered // the store holds the first batch
	_, err := export(t, c, drift{valid: 1})
	if status.Code(err) != codes.Unavailable || retryDelay(err) != cfg.RetryAfter {
		t.Fatalf("error %v, RetryInfo %s; want Unavailable, %s", err, retryDelay(err), cfg.RetryAfter)
	}
	close(w.gate)
	if err := <-first; err != nil {
		t.Fatalf("first export: %v", err)
	}
	if _, err := export(t, c, drift{valid: 1}); err != nil {
		t.Fatalf("export once the store caught up: %v", err)
	}
	if st := s.Stats(); st.Refused.Overloaded != 1 || st.EventsStored != 5 {
		t.Errorf("stats %+v", st)
	}
}
