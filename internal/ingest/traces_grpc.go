package ingest

import (
	"context"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// grpcTraces serves the OTLP/gRPC TraceService, as grpcLogs serves the
// LogsService.
type grpcTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s *Server
}

// Export implements ptraceotlp.GRPCServer.
func (g *grpcTraces) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s := g.s
	s.stats.requests.Add(1)
	res, err := s.ingestTraces(ctx, req.Traces())
	if err != nil {
		return ptraceotlp.NewExportResponse(), s.grpcStatus(ctx, err)
	}
	return tracesResponse(res), nil
}

// tracesResponse is the answer to a traces export whose events are stored:
// a partial success when spans were rejected.
func tracesResponse(res otelschema.Result) ptraceotlp.ExportResponse {
	resp := ptraceotlp.NewExportResponse()
	if res.Rejected > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedSpans(int64(res.Rejected))
		ps.SetErrorMessage(res.Message())
	}
	return resp
}
