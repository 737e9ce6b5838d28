package receiver

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// grpcTraces serves the OTLP/gRPC TraceService over raw messages, as
// grpcLogs serves the LogsService; the spans are decoded with pdata.
type grpcTraces struct {
	s *Server
}

// export serves one Export call.
func (g *grpcTraces) export(ctx context.Context, req *rawRequest) (rawResponse, error) {
	s := g.s
	release, err := s.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	defer release()
	tr := ptraceotlp.NewExportRequest()
	if err := tr.UnmarshalProto(req.bytes()); err != nil {
		s.stats.refusedMalformed.Add(1)
		return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("cannot decode request of %d bytes: %v", len(req.bytes()), err))
	}
	// pdata copied what it keeps.
	release()
	res, err := s.ingestTraces(ctx, tr.Traces())
	if err != nil {
		return nil, s.grpcStatus(ctx, err)
	}
	return marshalResponse(s, tracesResponse(res))
}
