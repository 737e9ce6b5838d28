package ingest

import (
	"context"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// grpcLogs serves the OTLP/gRPC LogsService. gRPC itself decodes the
// request, decompresses gzip and refuses messages over MaxRequestBytes with
// RESOURCE_EXHAUSTED.
type grpcLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *Server
}

// Export implements plogotlp.GRPCServer.
func (g *grpcLogs) Export(ctx context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	s := g.s
	s.stats.requests.Add(1)
	res, err := s.ingestLogs(ctx, req.Logs())
	if err != nil {
		return plogotlp.NewExportResponse(), s.grpcStatus(ctx, err)
	}
	resp := plogotlp.NewExportResponse()
	if res.Rejected > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedLogRecords(int64(res.Rejected))
		ps.SetErrorMessage(res.Message())
	}
	return resp, nil
}

// grpcStatus turns an ingest error into a gRPC status error; retryable ones
// carry a RetryInfo detail, which OTLP clients honour.
func (s *Server) grpcStatus(ctx context.Context, err error) error {
	rf := s.refuse(ctx, err)
	st := status.New(rf.code, err.Error())
	if rf.retry {
		if d, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(s.cfg.RetryAfter)}); derr == nil {
			st = d
		}
	}
	return st.Err()
}
