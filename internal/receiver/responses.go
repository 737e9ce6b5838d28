package receiver

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// logsResponse is the answer to a logs export whose events are stored: a
// partial success when records were rejected.
func logsResponse(res otelschema.Result) plogotlp.ExportResponse {
	resp := plogotlp.NewExportResponse()
	if res.Rejected > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedLogRecords(int64(res.Rejected))
		ps.SetErrorMessage(res.Message())
	}
	return resp
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

// marshalResponse encodes the answer to an export whose events are stored.
func marshalResponse(s *Server, resp interface{ MarshalProto() ([]byte, error) }) (rawResponse, error) {
	out, err := resp.MarshalProto()
	if err != nil {
		// The events are stored; the client may retry and send duplicates.
		s.stats.refusedInternal.Add(1)
		return nil, status.Error(codes.Internal, fmt.Sprintf("cannot encode response: %v", err))
	}
	return out, nil
}
